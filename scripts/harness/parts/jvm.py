"""A JVM of the run (a server of the system under test, or the load driver) as a part on a host of its own
(--place app=user@host).

The run sends host.py's text and this file's over SSH (RemotePart.BOOTSTRAP), so the host needs python3, setpriv and
a java, never a copy of the kit. Three modes, by the first line's JSON:
  {"check": true, "java"}          answers `ok`, or `error <one line>`: what keeps this host from running the part
  {"jars": [{"sha256", "size"}]}   the classpath: answers `need [sha256, ...]` (those not in its cache), reads each
                                   of them from stdin as raw bytes in that order, checks it, and answers `synced`
  {"classpath": [sha256, ...], "java", "jvmArgs", "main", "childProcess", "args", "firstLine", "files", "collect"}
                                   runs java with those jars from the cache (main through perfkit.harness.process.ChildProcess
                                   when childProcess), hands it `firstLine` (its parameters, perhaps a password) on
                                   stdin, and answers:
      started {"address", "sshPort", "pid", "folder", "java", "host": {fingerprint}}
      out <line>                   each line the JVM prints (stdout and stderr)
      sample {"epochMs", "partCpuS", "stat"}   every 0.5 s: the JVM's CPU and the host's /proc/stat
      file {"name", "data"}        when the JVM ends by itself: each file under `collect` (paths in its work folder),
                                   base64; and a file the run asks for with `send-file <name>` (a profile the JVM
                                   wrote at its window's end) once it is whole, or `nofile <name>` after 30 s without it
      exit <code>                  after them
`files` ({name: text}) are written into the work folder first; "{work}" in `args` and `jvmArgs` is that folder.
The JVM binds the address the run reached this host on (PERFKIT_BIND), lives under setpriv --pdeathsig (so it dies
with this agent) and watches this agent as its parent (PERFKIT_PARENT_PID); its temp files are in a folder of this
agent's. When the life line ends (host.py) the JVM's stdin closes and it gets SIGTERM, SIGKILL after 10 s, and the
folder goes. The jar cache (~/.cache/perfkit/jars, by content) stays, as a Maven repository does.
"""
import base64
import hashlib
import os
import select
import shutil
import subprocess
import socket
import threading
import time

# host.py's names (say, fail, stop, state, serve, ...) come before this text: the run sends both as one program
FOLDER_PREFIX = "perfkit-part-jvm-"
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "perfkit", "jars")
STOP_GRACE_S = 10


def problem(message):
    if not os.path.exists("/usr/bin/setpriv"):
        return f"{socket.gethostname()} lacks /usr/bin/setpriv (util-linux), which ties the JVM to its agent"
    if not os.access(message["java"], os.X_OK):
        # never another JDK by accident: the part runs on the one the run would use here
        return f"{socket.gethostname()} has no {message['java']}: a JVM part runs on the same JDK as on the run's host (--java chooses one both have)"
    if ssh_addresses() is None:
        return "not started over SSH: SSH_CONNECTION is not set"
    return None


def sync(jars):
    os.makedirs(CACHE, exist_ok=True)
    for name in os.listdir(CACHE):   # jars half-written by an agent killed outright (an hour old: a home shared between hosts has other pids)
        pid, path = name.rsplit(".", 1)[-1], os.path.join(CACHE, name)
        try:
            if name.startswith(".") and pid.isdigit() and not os.path.exists(f"/proc/{pid}") and time.time() - os.path.getmtime(path) > 3600:
                os.unlink(path)
        except OSError:
            pass   # another agent took it first
    need = [j for j in jars if not os.path.isfile(os.path.join(CACHE, j["sha256"] + ".jar"))]
    say("need", [j["sha256"] for j in need])
    # nothing came after the first line before this answer, so the bytes are all still in the pipe: read it raw, and
    # give up when it stalls as long as a missing heartbeat would end a running part
    for j in need:
        digest, left = hashlib.sha256(), j["size"]
        tmp = os.path.join(CACHE, f".{j['sha256']}.{os.getpid()}")
        try:
            with open(tmp, "wb") as f:
                while left > 0:
                    if stop.is_set() or not select.select([0], [], [], HEARTBEAT_S)[0]:
                        return fail("the run stopped sending the classpath")
                    chunk = os.read(0, min(left, 1 << 20))
                    if not chunk:
                        return fail("the run stopped sending the classpath")
                    digest.update(chunk)
                    f.write(chunk)
                    left -= len(chunk)
            if digest.hexdigest() != j["sha256"]:
                return fail(f"a jar arrived damaged ({j['sha256'][:12]}...)")
            os.replace(tmp, os.path.join(CACHE, j["sha256"] + ".jar"))
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    say("synced", "")
    return 0


def version(java):
    out = subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()
    return out[0].strip() if out else "unknown"


def run(message):
    java = message["java"]
    missing = [s for s in message["classpath"] if not os.path.isfile(os.path.join(CACHE, s + ".jar"))]
    if missing:
        return fail(f"{len(missing)} jars of the classpath are not in {CACHE}")
    _, address = ssh_addresses()
    folder = own_folder(FOLDER_PREFIX)
    state["folder"] = folder
    work = os.path.join(folder, "work")
    os.makedirs(os.path.join(folder, "tmp"))
    os.makedirs(work)
    for name, text in message.get("files", {}).items():
        with open(inside(work, name), "w") as f:
            f.write(text)
    # first, so a -Djava.io.tmpdir of the user's own still wins
    command = ["/usr/bin/setpriv", "--pdeathsig", "KILL", "--", java, "-Djava.io.tmpdir=" + os.path.join(folder, "tmp"),
               *(a.replace("{work}", work) for a in message["jvmArgs"]),
               "-cp", ":".join(os.path.join(CACHE, s + ".jar") for s in message["classpath"]),
               *(["perfkit.harness.process.ChildProcess"] if message.get("childProcess", True) else []), message["main"],
               *(a.replace("{work}", work) for a in message["args"])]
    env = dict(os.environ, PERFKIT_PARENT_PID=str(os.getpid()), PERFKIT_BIND=address)
    jvm = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=folder)
    state["jvm"] = jvm
    relaying = threading.Thread(target=relay, args=(jvm,), daemon=True)
    relaying.start()
    try:
        jvm.stdin.write((message["firstLine"] + "\n").encode())
        jvm.stdin.flush()
    except BrokenPipeError:
        pass   # it ended at once (a bad option, say): its own words come through the relay, then its exit
    state["on_line"] = lambda line: tell(jvm, work, line)
    say("started", {"address": address, "sshPort": int(os.environ["SSH_CONNECTION"].split()[3]), "pid": jvm.pid, "folder": folder,
                    "java": version(java), "host": fingerprint()})
    while not stop.wait(0.5):
        if jvm.poll() is not None:
            relaying.join(30)   # its last lines first
            for name in collected(work, message.get("collect", [])):
                with open(os.path.join(work, name), "rb") as f:
                    say("file", {"name": name, "data": base64.b64encode(f.read()).decode()})
            say("exit", str(jvm.returncode))
            return 0
        sample(jvm.pid)
    return 0


def tell(jvm, work, line):
    """A line the run sends after the start: `to-jvm <text>` puts <text> on the JVM's stdin (a load driver's `go`, a
    profile's start and stop); `send-file <name>` sends a file of its work folder once the JVM has written it."""
    if line.startswith(SEND_FILE):
        threading.Thread(target=send_file, args=(work, line[len(SEND_FILE):]), daemon=True).start()
        return
    if not line.startswith(TO_JVM):
        return
    try:
        # {work} names the work folder, as in the JVM's arguments: a profile's path there, told before the run knew it
        jvm.stdin.write((line[len(TO_JVM):].replace("{work}", work) + "\n").encode())
        jvm.stdin.flush()
    except (OSError, ValueError):
        pass   # it has ended: its exit tells the run


TO_JVM, SEND_FILE = "to-jvm ", "send-file "
FILE_WAIT_S = 30


def send_file(work, name):
    """The file once it is there and has not grown for a second (JFR writes a recording when it stops), or `nofile`
    after FILE_WAIT_S: the JVM could not write it."""
    try:
        path = inside(work, name)
    except ValueError:
        say("nofile", name)
        return
    deadline, sizes = time.monotonic() + FILE_WAIT_S, []
    try:
        while time.monotonic() < deadline and not stop.is_set():
            sizes = (sizes + [os.path.getsize(path) if os.path.isfile(path) else -1])[-3:]
            if len(sizes) == 3 and sizes[0] > 0 and len(set(sizes)) == 1:
                with open(path, "rb") as f:
                    say("file", {"name": name, "data": base64.b64encode(f.read()).decode()})
                return
            time.sleep(0.5)
    except OSError:
        pass   # the part is ending and its folder going: a fork's files went with its exit
    say("nofile", name)


def inside(work, name):
    path = os.path.normpath(os.path.join(work, name))
    if not path.startswith(work + os.sep):
        raise ValueError(f"{name} is outside the work folder")
    return path


def collected(work, names):
    """The files under each of `names` (a file or a folder in the work folder), as paths relative to it."""
    out = []
    for name in names:
        path = inside(work, name)
        if os.path.isfile(path):
            out.append(name)
        for root, _, files in os.walk(path):
            out.extend(os.path.relpath(os.path.join(root, f), work) for f in sorted(files))
    return out


def relay(jvm):
    for line in jvm.stdout:
        # a lone carriage return would end the line on the run's side, and what follows it would read as a line of ours
        say("out", line.decode(errors="replace").rstrip("\n").replace("\r", " "))


def main(message):
    if "jars" in message:
        return sync(message["jars"])
    trouble = problem(message)
    if trouble:
        return fail(trouble)
    if message.get("check"):
        say("ok", "")
        return 0
    listen_now()   # the life line: from here stdin carries only the run's heartbeat
    return run(message)


def cleanup():
    jvm = state.get("jvm")
    if jvm is not None and jvm.poll() is None:
        try:
            jvm.stdin.close()   # ChildProcess takes EOF as the end
        except OSError:
            pass
        jvm.terminate()
        try:
            jvm.wait(STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            jvm.kill()
            jvm.wait()
    if state.get("folder"):
        shutil.rmtree(state["folder"], ignore_errors=True)


serve(main, cleanup, globals()["MESSAGE"], listen=False)  # MESSAGE: given by the bootstrap
