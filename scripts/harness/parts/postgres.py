"""A private PostgreSQL cluster as a part of a run, on a host of its own (--place db=user@host).

The run starts it over SSH as a short bootstrap (RemotePart.BOOTSTRAP) that reads one JSON line from stdin: this
file's text after host.py's, the per-run password and the server settings. So the host needs only python3, util-linux's
setpriv and the PostgreSQL server binaries, never a copy of the kit, and no secret is on any command line or in any
file that outlives initdb. It answers on stdout, one line each:
  ready {"address", "port", "server", "folder", "host": {fingerprint}}   once the server accepts connections
  sample {"epochMs", "partCpuS", "stat": [cpu fields of /proc/stat]}     every 0.5 s after that (the server's CPU)
  ok                                                                     to {"check": true}: the host can run it
  error <one line>                                                       and it exits 3
Its life line to the run is host.py's. When it ends, the server stops (fast shutdown, then SIGKILL after 20 s) and
its folder goes. initdb and the server get a signal from the kernel if this agent is killed outright (setpriv
--pdeathsig); the folder such an agent leaves is removed by the next agent that starts on the host (own_folder()).
"""
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import time

# host.py's names (say, fail, stop, state, serve, ...) come before this text: the run sends both as one program
FOLDER_PREFIX = "perfkit-part-pg-"


def server_in(folder):
    return os.access(os.path.join(folder, "postgres"), os.X_OK) and os.access(os.path.join(folder, "initdb"), os.X_OK)


def binaries():
    """The server's bin folder, or None, found as PrivatePostgres.binaries() finds it: PERFKIT_PG_BINDIR, then
    pg_config --bindir, then the newest under Debian's /usr/lib/postgresql."""
    given = os.environ.get("PERFKIT_PG_BINDIR", "").strip()
    if given:
        return given if server_in(given) else None
    try:
        configured = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        configured = ""
    if configured and server_in(configured):
        return configured
    base = "/usr/lib/postgresql"
    found = [os.path.join(base, v, "bin") for v in (os.listdir(base) if os.path.isdir(base) else [])]
    return max(filter(server_in, found), key=lambda b: int(re.sub(r"\D", "0", os.path.basename(os.path.dirname(b))) or 0), default=None)


def problem():
    """What keeps this host from running the part, in one line; None when it can."""
    host = socket.gethostname()
    if binaries() is None:
        return f"PostgreSQL server binaries not found on {host} (PERFKIT_PG_BINDIR, pg_config --bindir, /usr/lib/postgresql/*/bin)"
    if not os.path.exists("/usr/bin/setpriv"):
        return f"{host} lacks /usr/bin/setpriv (util-linux), which ties the server to its agent"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return f"{host} has no user postgres to run the server as (logged in as root, which PostgreSQL refuses)"
    if ssh_addresses() is None:
        return "not started over SSH: SSH_CONNECTION is not set"
    return None


def main(message):
    trouble = problem()
    if trouble:
        return fail(trouble)
    if message.get("check"):
        say("ok", "")
        return 0
    bin_dir = binaries()
    client, address = ssh_addresses()   # the run's address as this host sees it, and the address it reached us on
    as_root = os.geteuid() == 0
    folder = own_folder(FOLDER_PREFIX)
    state["folder"] = folder
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
    # only the run's own address and its other parts' hosts may connect, and only with the password
    with open(os.path.join(data, "pg_hba.conf"), "w") as f:
        f.write("local all all scram-sha-256\n")
        for a in [client, *message.get("admit", [])]:
            f.write(f"host all all {a}/{128 if ':' in a else 32} scram-sha-256\n")
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
        sample(server.pid)
    return 0


def ready(data):
    try:
        with open(os.path.join(data, "postmaster.pid")) as f:
            lines = f.read().splitlines()
        return len(lines) >= 8 and lines[7].strip() == "ready"
    except OSError:
        return False


def cleanup():
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


serve(main, cleanup, globals()["MESSAGE"])  # MESSAGE: given by the bootstrap
