"""Lists the runs under data/ (user runs and committed reference runs), newest first per study.

`./bench list` runs the janitor first, so a run killed with SIGKILL already shows as `interrupted`. A manifest
still saying `running` whose process is gone (a run from another host, or one the janitor could not fix) shows
as `running?(dead)`. A manifest that cannot be read gets one line saying so; the rest of the listing stands.
"""
import json
import os
import pathlib
import socket
import sys


def alive(pid):
    try:
        os.kill(int(pid), 0)
        return True
    except (OSError, ValueError, TypeError):
        return False


def text(value, default=""):
    return value if isinstance(value, str) else default


def row_of(manifest_path, data):
    where = str(manifest_path.parent.relative_to(data))
    try:
        m = json.loads(manifest_path.read_text())
    except (OSError, ValueError) as e:
        return where, "unreadable", "", f"manifest is not JSON: {type(e).__name__}"
    if not isinstance(m, dict):
        return where, "unreadable", "", f"manifest is {type(m).__name__}, not an object"
    status = text(m.get("status"), "?")
    host = m.get("host") if isinstance(m.get("host"), dict) else {}
    if status == "running" and not (host.get("hostname") == socket.gethostname() and alive(m.get("pid"))):
        status = "running?(dead)"
    flags = ["quick" if m.get("quick") is True else "full"]
    if m.get("valid") is False:
        flags.append("INVALID")
    if text(m.get("tag")):
        flags.append("tag=" + text(m.get("tag")).replace("\n", " ")[:40])
    return where, status, " ".join(flags), text(m.get("startedAt"))


def main(data, outs=()):
    """data/'s runs and references, and the runs in each folder given as --out to earlier runs (<out>/<study>/<id>)."""
    rows = [row_of(p, data) for p in sorted(data.glob("*/*/*/run.json"))]
    for out in outs:
        rows += [(str(p.parent), *row_of(p, out)[1:]) for p in sorted(out.glob("*/*/run.json"))]
    if not rows:
        print(f"No runs under {data}{''.join(' or ' + str(o) for o in outs)} yet: try ./bench run queues --quick")
        return
    print(f"Runs under {data}:")
    width = max(len(r[0]) for r in rows)
    for r in sorted(rows, key=lambda r: r[0], reverse=True):
        print(f"  {r[0]:<{width}}  {r[1]:<15} {r[2]:<12} {r[3]}")


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), [pathlib.Path(a).resolve() for a in sys.argv[2:]])
