"""Lists the runs under data/ (user runs and committed reference runs), newest first per study; with --show, one run.

A run still going says where it is and when it should end (the manifest's progress).

`./bench list` runs the janitor first, so a run killed with SIGKILL already shows as `interrupted`. A manifest
still saying `running` whose process is gone (a run from another host, or one the janitor could not fix) shows
as `running?(dead)`. A manifest that cannot be read gets one line saying so; the rest of the listing stands.
"""
import datetime
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
    where_now = position(m) if status == "running" else ""
    return where, status, " ".join(flags), text(m.get("startedAt")) + (f"  {where_now}" if where_now else "")


def position(m):
    """A run still going: where it is and when it should end, from the manifest's progress ("" without a plan)."""
    p = m.get("progress")
    if not isinstance(p, dict) or not isinstance(p.get("done"), int) or not isinstance(p.get("total"), int):
        return ""
    unit = text(p.get("unit"), "unit")
    line = f"{unit} {min(p['done'] + 1, p['total'])} of {p['total']}"
    ends = text(p.get("endsAt"))
    if ends:
        try:
            at = datetime.datetime.fromisoformat(ends.replace("Z", "+00:00")).astimezone()
            line += f", should end about {at:%H:%M}" + ("" if at.date() == datetime.date.today() else f" on {at:%Y-%m-%d}")
        except ValueError:
            pass
    return line


def show(run_dir):
    """One run in a few lines: what ran, where it is or how it ended, and what it wrote. Exit 2 when it is not a run."""
    manifest = run_dir / "run.json"
    try:
        m = json.loads(manifest.read_text())
    except (OSError, ValueError) as e:
        print(f"bench: show: {run_dir} is not a readable run ({type(e).__name__}: no run.json that is JSON)", file=sys.stderr)
        return 2
    status = text(m.get("status"), "?")
    host = m.get("host") if isinstance(m.get("host"), dict) else {}
    if status == "running" and not (host.get("hostname") == socket.gethostname() and alive(m.get("pid"))):
        status = "running?(dead)"
    print(f"{text(m.get('study'), '?')} run {text(m.get('runId'), run_dir.name)}: {status}"
          + (" (quick)" if m.get("quick") is True else "") + (f", tag {text(m.get('tag'))}" if text(m.get("tag")) else ""))
    print(f"  started {text(m.get('startedAt'))}" + (f", ended {text(m.get('endedAt'))}" if text(m.get("endedAt")) else ""))
    if status == "running" and position(m):
        print(f"  now: {position(m)}")
    if text(m.get("error")):
        print(f"  error: {text(m.get('error'))}")
    if m.get("valid") is False:
        for reason in m.get("invalidReasons") or []:
            print(f"  INVALID: {text(reason)}")
    params = m.get("params") if isinstance(m.get("params"), dict) else {}
    if params:
        print("  options: " + " ".join(f"--{k} {v}" for k, v in params.items() if v not in ("", None, "false")))
    files = [f for f in m.get("files") or [] if isinstance(f, dict)]
    kinds = {}
    for f in files:
        kinds[text(f.get("kind"), "other")] = kinds.get(text(f.get("kind"), "other"), 0) + 1
    print("  files: " + (", ".join(f"{n} {k}" for k, n in sorted(kinds.items())) or "none yet") + f" (in {run_dir})")
    return 0


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
    if sys.argv[1] == "--show":
        sys.exit(show(pathlib.Path(sys.argv[2])))
    main(pathlib.Path(sys.argv[1]), [pathlib.Path(a).resolve() for a in sys.argv[2:]])
