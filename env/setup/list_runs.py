"""Lists the runs under data/ (user runs and committed reference runs), newest first per study.

A manifest still saying 'running' whose process is gone is shown as 'running?(dead)': the run was killed
with SIGKILL or the machine went down, so nothing could mark it.
"""
import json
import os
import pathlib
import socket
import sys

data = pathlib.Path(sys.argv[1])


def alive(pid):
    try:
        os.kill(int(pid), 0)
        return True
    except (OSError, ValueError, TypeError):
        return False


rows = []
for manifest in sorted(data.glob("*/*/*/run.json")):
    try:
        m = json.loads(manifest.read_text())
    except (OSError, ValueError) as e:
        rows.append((str(manifest.parent.relative_to(data)), "", "", f"unreadable manifest: {e}"))
        continue
    status = m.get("status", "?")
    if status == "running" and not (m.get("host", {}).get("hostname") == socket.gethostname() and alive(m.get("pid"))):
        status = "running?(dead)"
    flags = ["quick" if m.get("quick") else "full"]
    if not m.get("valid", True):
        flags.append("INVALID")
    if m.get("tag"):
        flags.append("tag=" + m["tag"])
    rows.append((str(manifest.parent.relative_to(data)), status, " ".join(flags), m.get("startedAt", "")))

if not rows:
    print(f"No runs under {data} yet: try ./bench run queues --quick")
else:
    print(f"Runs under {data}:")
    width = max(len(r[0]) for r in rows)
    for r in sorted(rows, key=lambda r: r[0], reverse=True):
        print(f"  {r[0]:<{width}}  {r[1]:<15} {r[2]:<12} {r[3]}")
