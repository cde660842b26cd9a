"""What every part's agent shares: its one-line answers, the host's fingerprint and CPU readings, and the life line to
the run. The run sends this file's text ahead of the part's own (RemotePart.BOOTSTRAP), so an agent is one program
on its host, and the host needs no copy of the kit.

The life line: the agent's stdin stays open for the run's life, and the run writes a line to it every 2 s. EOF (the
run stopped it, the run died, the SSH session closed), HEARTBEAT_S without a line (a link that dropped without
closing), SIGHUP, SIGTERM or SIGINT, or a write to the run that fails, set `stop`; the part's main() then returns and its cleanup runs. If no
line came for HEARTBEAT_S, a write to the run may block for good, so the watch thread runs the cleanup itself.
"""
import json
import os
import platform
import re
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time

HEARTBEAT_S = 30                     # the run writes a line every 2 s
OWNER_FILE = "owner"                 # "<agent pid> <its start time in clock ticks>": a folder whose agent is gone is stale


def say(kind, payload):
    try:
        with saying:
            sys.stdout.write(f"{kind} {payload if isinstance(payload, str) else json.dumps(payload)}\n")
            sys.stdout.flush()
    except (BrokenPipeError, OSError):
        stop.set()


def fail(line):
    say("error", line)
    return 3


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def fingerprint():
    model = next((line.split(":", 1)[1].strip() for line in read("/proc/cpuinfo").splitlines() if line.startswith("model name")), "unknown")
    mem = next((int(re.sub(r"\D", "", line)) * 1024 for line in read("/proc/meminfo").splitlines() if line.startswith("MemTotal:")), None)
    release = dict(re.findall(r'^(\w+)="?([^"\n]*)"?$', read("/etc/os-release"), re.M))
    return {"hostname": socket.gethostname(), "cpuModel": model, "logicalCores": len(os.sched_getaffinity(0)),
            "memoryBytes": mem, "os": f"Linux {release.get('PRETTY_NAME', '')}".strip(), "kernel": platform.release(),
            "arch": platform.machine()}


def ssh_addresses():
    """(the run's address as this host sees it, the address the run reached this host on), or None off SSH."""
    ssh = os.environ.get("SSH_CONNECTION", "").split()
    return (ssh[0], ssh[2]) if len(ssh) == 4 else None


def tree_cpu_seconds(root_pid):
    """CPU of a process and everything below it (live children, and reaped ones through cutime/cstime)."""
    ticks = os.sysconf("SC_CLK_TCK")
    children, stats = {}, {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(d))
        stats[int(d)] = sum(int(x) for x in fields[11:15])
    total, todo = 0, [root_pid]
    while todo:
        pid = todo.pop()
        total += stats.get(pid, 0)
        todo.extend(children.get(pid, []))
    return total / ticks


def host_stat():
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]


def sample(pid):
    """One reading for the run: this host's clock, the part's CPU seconds and /proc/stat's cpu line."""
    say("sample", {"epochMs": int(time.time() * 1000), "partCpuS": tree_cpu_seconds(pid), "stat": host_stat()})


def start_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def own_folder(prefix):
    """A folder of this agent's (in the temp folder, marked with its owner), after removing those of agents killed outright."""
    base = tempfile.gettempdir()
    for name in os.listdir(base):
        folder = os.path.join(base, name)
        if not name.startswith(prefix) or not os.path.isdir(folder):
            continue
        try:
            with open(os.path.join(folder, OWNER_FILE)) as f:
                pid, ticks = (int(x) for x in f.read().split())
        except (OSError, ValueError):
            continue   # not written yet, or not ours to judge
        if start_ticks(pid) != ticks:
            shutil.rmtree(folder, ignore_errors=True)
    folder = tempfile.mkdtemp(prefix=prefix)
    with open(os.path.join(folder, OWNER_FILE), "w") as f:
        f.write(f"{os.getpid()} {start_ticks(os.getpid())}\n")
    return folder


def watch_stdin():
    """The run's life line: its end, however it comes, is EOF here."""
    try:
        for line in iter(sys.stdin.buffer.readline, b""):
            state["heard"] = time.monotonic()
            if line.strip() and "on_line" in state:   # anything but a heartbeat is for the part (jvm.py: its JVM's stdin)
                state["on_line"](line.decode(errors="replace").strip())
    except (OSError, ValueError):
        pass
    stop.set()


def watch_heartbeat(cleanup):
    while not stop.wait(1.0):
        if time.monotonic() - state["heard"] > HEARTBEAT_S:
            stop.set()
            tidy(cleanup)
            os._exit(0)


def tidy(cleanup):
    with cleaning:   # the main thread and the heartbeat's watch may both get here
        cleanup()


def serve(main, cleanup, message, listen=True):
    """Runs the part's main(message) with the life line watched (from the start when `listen`, else from when main calls
    listen_now()), then its cleanup however main ends, and exits with main's code."""
    # not SIGPIPE: Python ignores it, and a write to a child that already ended (a JVM that failed at once) is no reason to stop
    for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    state["cleanup"] = cleanup
    if listen:
        listen_now()
    try:
        code = main(message)
    finally:
        tidy(cleanup)
    sys.exit(code)


def listen_now():
    state["heard"] = time.monotonic()
    threading.Thread(target=watch_stdin, daemon=True).start()
    threading.Thread(target=watch_heartbeat, args=(state["cleanup"],), daemon=True).start()


stop = threading.Event()
cleaning = threading.Lock()
saying = threading.Lock()
state = {"heard": time.monotonic()}
