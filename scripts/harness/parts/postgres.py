"""A private PostgreSQL cluster as a part of a run, on a host of its own (--place db=user@host).

The run starts it over SSH as a short bootstrap (RemotePostgres.BOOTSTRAP) that reads one JSON line from stdin:
this file's text, the per-run password and the server settings. So the host needs only python3, util-linux's
setpriv and the PostgreSQL server binaries, never a copy of the kit, and no secret is on any command line or in any
file that outlives initdb. It answers on stdout, one line each:
  ready {"address", "port", "server", "folder", "host": {fingerprint}}   once the server accepts connections
  sample {"epochMs", "dbCpuS", "stat": [cpu fields of /proc/stat]}       every 0.5 s after that
  ok                                                                     to {"check": true}: the host can run it
  error <one line>                                                       and it exits 3
Its stdin stays open for the run's life, and the run writes a line to it every few seconds. EOF (the run stopped
it, the run died, the SSH session closed), HEARTBEAT_S without a line (a link that dropped without closing), SIGHUP,
SIGTERM or SIGPIPE stop the server (fast shutdown, then SIGKILL after 20 s) and remove its folder. initdb and the
server get a signal from the kernel if this agent is killed outright (setpriv --pdeathsig); the folder such an
agent leaves is removed by the next agent that starts on the host (sweep()).
"""
import json
import os
import platform
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

FOLDER_PREFIX = "perfkit-part-pg-"
OWNER_FILE = "owner"                 # "<agent pid> <its start time in clock ticks>": a folder whose agent is gone is stale
HEARTBEAT_S = 30                     # the run writes a line every 2 s


def say(kind, payload):
    try:
        sys.stdout.write(f"{kind} {payload if isinstance(payload, str) else json.dumps(payload)}\n")
        sys.stdout.flush()
    except (BrokenPipeError, OSError):
        stop.set()


def binaries():
    """The newest installed server's bin folder, or None (as PrivatePostgres.binaries())."""
    base = "/usr/lib/postgresql"
    found = [os.path.join(base, v, "bin") for v in (os.listdir(base) if os.path.isdir(base) else [])]
    found = [b for b in found if os.access(os.path.join(b, "postgres"), os.X_OK) and os.access(os.path.join(b, "initdb"), os.X_OK)]
    return max(found, key=lambda b: int(re.sub(r"\D", "0", os.path.basename(os.path.dirname(b))) or 0), default=None)


def fingerprint():
    def read(path):
        try:
            with open(path) as f:
                return f.read()
        except OSError:
            return ""
    model = next((line.split(":", 1)[1].strip() for line in read("/proc/cpuinfo").splitlines() if line.startswith("model name")), "unknown")
    mem = next((int(re.sub(r"\D", "", line)) * 1024 for line in read("/proc/meminfo").splitlines() if line.startswith("MemTotal:")), None)
    release = dict(re.findall(r'^(\w+)="?([^"\n]*)"?$', read("/etc/os-release"), re.M))
    return {"hostname": socket.gethostname(), "cpuModel": model, "logicalCores": len(os.sched_getaffinity(0)),
            "memoryBytes": mem, "os": f"Linux {release.get('PRETTY_NAME', '')}".strip(), "kernel": platform.release(),
            "arch": platform.machine()}


def tree_cpu_seconds(root_pid):
    """CPU of the postmaster and everything below it (live backends, and reaped ones through cutime/cstime)."""
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


def start_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def sweep():
    """Folders of agents that were killed outright (their server stopped by its parent-death signal): removed."""
    base = tempfile.gettempdir()
    for name in os.listdir(base):
        folder = os.path.join(base, name)
        if not name.startswith(FOLDER_PREFIX) or not os.path.isdir(folder):
            continue
        try:
            with open(os.path.join(folder, OWNER_FILE)) as f:
                pid, ticks = (int(x) for x in f.read().split())
        except (OSError, ValueError):
            continue   # not written yet, or not ours to judge
        if start_ticks(pid) != ticks:
            shutil.rmtree(folder, ignore_errors=True)


def problem():
    """What keeps this host from running the part, in one line; None when it can."""
    host = socket.gethostname()
    if binaries() is None:
        return f"PostgreSQL server binaries not found under /usr/lib/postgresql on {host}"
    if not os.path.exists("/usr/bin/setpriv"):
        return f"{host} lacks /usr/bin/setpriv (util-linux), which ties the server to its agent"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return f"{host} has no user postgres to run the server as (logged in as root, which PostgreSQL refuses)"
    if len(os.environ.get("SSH_CONNECTION", "").split()) != 4:
        return "not started over SSH: SSH_CONNECTION is not set"
    return None


def main(message):
    trouble = problem()
    if trouble:
        return fail(trouble)
    if message.get("check"):
        say("ok", "")
        return 0
    sweep()
    bin_dir = binaries()
    ssh = os.environ["SSH_CONNECTION"].split()
    client, address = ssh[0], ssh[2]   # the run's address as this host sees it, and the address it reached us on
    as_root = os.geteuid() == 0
    folder = tempfile.mkdtemp(prefix=FOLDER_PREFIX)
    state["folder"] = folder
    with open(os.path.join(folder, OWNER_FILE), "w") as f:
        f.write(f"{os.getpid()} {start_ticks(os.getpid())}\n")
    data = os.path.join(folder, "data")
    drop = ["/usr/bin/setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups"] if as_root else ["/usr/bin/setpriv"]
    if as_root:
        pg = pwd.getpwnam("postgres")
        os.chown(folder, pg.pw_uid, pg.pw_gid)
    pwfile = os.path.join(folder, "pwfile")
    with os.fdopen(os.open(pwfile, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
        f.write(message["password"] + "\n")
    if as_root:
        os.chown(pwfile, pg.pw_uid, pg.pw_gid)
    try:
        done = subprocess.run(drop + ["--pdeathsig", "KILL", "--", os.path.join(bin_dir, "initdb"), "-D", data, "-U", "postgres", "--auth=scram-sha-256",
                              f"--pwfile={pwfile}", "-E", "UTF8", "--no-locale", "--no-sync"], capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(pwfile)
    if done.returncode != 0:
        return fail("initdb failed: " + " ".join((done.stdout + done.stderr).split())[-300:])
    if stop.is_set():
        return 0   # the run ended while initdb ran
    # only the run's own address may connect, and only with the password
    with open(os.path.join(data, "pg_hba.conf"), "w") as f:
        f.write(f"local all all scram-sha-256\nhost all all {client}/{128 if ':' in client else 32} scram-sha-256\n")
    with socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET) as s:
        s.bind((address, 0))
        port = s.getsockname()[1]
    command = drop + ["--pdeathsig", "INT", "--", os.path.join(bin_dir, "postgres"), "-D", data, "-p", str(port), "-k", folder,
                      "-c", f"listen_addresses={address}", "-c", "max_connections=400", "-c", "unix_socket_permissions=0700"]
    for name, value in message.get("settings", {}).items():
        command += ["-c", f"{name}={value}"]
    log = open(os.path.join(folder, "server.log"), "w")
    server = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    state["server"] = server
    deadline = time.monotonic() + 60
    while not ready(data):
        if server.poll() is not None or time.monotonic() > deadline or stop.is_set():
            with open(os.path.join(folder, "server.log")) as f:
                return fail("PostgreSQL did not start: " + " ".join(f.read().split())[-300:])
        time.sleep(0.05)
    version = subprocess.run([os.path.join(bin_dir, "postgres"), "--version"], capture_output=True, text=True).stdout.strip()
    say("ready", {"address": address, "port": port, "folder": folder, "host": fingerprint(),
                  "server": version.replace("postgres (PostgreSQL) ", "PostgreSQL ")})
    while not stop.wait(0.5):
        say("sample", {"epochMs": int(time.time() * 1000), "dbCpuS": tree_cpu_seconds(server.pid), "stat": host_stat()})
    return 0


def ready(data):
    try:
        with open(os.path.join(data, "postmaster.pid")) as f:
            lines = f.read().splitlines()
        return len(lines) >= 8 and lines[7].strip() == "ready"
    except OSError:
        return False


def fail(line):
    say("error", line)
    return 3


def cleanup():
    with cleaning:   # the main thread and the heartbeat's watch may both get here
        server = state.get("server")
        if server is not None and server.poll() is None:
            server.send_signal(signal.SIGINT)   # fast shutdown
            try:
                server.wait(20)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
        if state.get("folder"):
            shutil.rmtree(state["folder"], ignore_errors=True)


def watch_stdin():
    """The run's life line: its end, however it comes, is EOF here."""
    try:
        while sys.stdin.readline():
            state["heard"] = time.monotonic()
    except (OSError, ValueError):
        pass
    stop.set()


def watch_heartbeat():
    """A link that dropped without closing the session: no line comes, and a write here may block for good, so this
    thread tidies up and ends the agent itself."""
    while not stop.wait(1.0):
        if time.monotonic() - state["heard"] > HEARTBEAT_S:
            stop.set()
            cleanup()
            os._exit(0)


stop = threading.Event()
cleaning = threading.Lock()
state = {"heard": time.monotonic()}
for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGPIPE, signal.SIGINT):
    signal.signal(sig, lambda *_: stop.set())
threading.Thread(target=watch_stdin, daemon=True).start()
threading.Thread(target=watch_heartbeat, daemon=True).start()
try:
    code = main(globals()["MESSAGE"])  # given by the bootstrap
finally:
    cleanup()
sys.exit(code)
