"""The target side of remote runs (./bench run|collect|list --on): piped by env/setup/remote.py into `python3 -` on the
target, so it needs no copy there, with one agent-* command and the kit's folder. It keeps the target's jobs under
dir/.perfkit-remote/ and answers with JSON or plain lines on stdout. Only the standard library, and nothing in it
reads credentials.
"""
import hashlib
import json
import os
import pathlib
import re
import signal
import subprocess
import sys
import tarfile
import time

JOBS = ".perfkit-remote"           # per-run job folders on the target: pid, out, err, rc, dir
SHIPPED = ".perfkit-shipped.json"  # what the last ship wrote on the target: path -> content hash

def file_hash(path):
    if path.is_symlink():
        return "link:" + os.readlink(path)
    h = hashlib.sha256(path.read_bytes()).hexdigest()
    return ("x:" if os.access(path, os.X_OK) else "f:") + h


def agent_hashes(d):
    d = pathlib.Path(d)
    try:
        shipped = json.loads((d / SHIPPED).read_text())
    except (OSError, ValueError):
        shipped = {}
    out = {}
    for n in shipped:  # re-hash: a file edited on the target is sent again
        p = d / n
        out[n] = file_hash(p) if (p.is_file() or p.is_symlink()) else None
    sys.stdout.write(json.dumps(out))


def agent_apply(d, *gone):
    d = pathlib.Path(d)
    incoming = d / JOBS / "incoming.tar"
    for n in gone:
        p = d / n
        if p.is_file() or p.is_symlink():
            p.unlink()
    with tarfile.open(incoming) as tar:
        for m in tar.getmembers():  # a symlink or file replaced by the other kind: clear the way first
            p = d / m.name
            if (p.is_symlink() or p.exists()) and not p.is_dir():
                p.unlink()
        extract_kit(tar, d)
    incoming.unlink()


def extract_kit(tar, d):
    try:
        tar.extractall(d, filter="tar")
    except TypeError:
        tar.extractall(d)


def job_dir(d, job):
    if not re.fullmatch(r"[0-9A-Za-z-]+", job):
        raise SystemExit(f"bad job name {job}")
    return pathlib.Path(d) / JOBS / job


def agent_start(d, job, *bench_args):
    """Starts ./bench run detached: its own session (so its process group can be signalled as one), no
    terminal, output to files. Prints the group id and returns at once."""
    jd = job_dir(d, job)
    jd.mkdir(parents=True)
    if not os.access(pathlib.Path(d) / "bench", os.X_OK):
        raise SystemExit(f"no ./bench in {d}")
    if os.fork() > 0:
        deadline = time.time() + 30
        while not (jd / "pid").exists():
            if time.time() > deadline:
                raise SystemExit("the run's supervisor did not start")
            time.sleep(0.05)
        print((jd / "pid").read_text().strip())
        return
    os.setsid()
    os.chdir(d)
    null = os.open(os.devnull, os.O_RDONLY)
    out = os.open(jd / "out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(jd / "err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    for src, fd in ((null, 0), (out, 1), (err, 2)):
        os.dup2(src, fd)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # inherited: no hangup ends the run
    # A group-wide SIGINT/SIGTERM is for the run, which handles it; this supervisor only waits and records.
    signal.signal(signal.SIGINT, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: None)
    write_atomic(jd / "pid", str(os.getpid()))
    env = dict(os.environ, PERFKIT_TTY="0")
    try:
        child = subprocess.Popen(["./bench", "run", *bench_args], env=env)
        rc = child.wait()
        rc = 128 - rc if rc < 0 else rc
    except OSError as e:
        os.write(2, f"bench: cannot start ./bench: {e}\n".encode())
        rc = 2
    write_atomic(jd / "dir", run_dir_of(d, jd))
    write_atomic(jd / "rc", str(rc))
    os._exit(0)


def run_dir_of(d, jd):
    """The run folder this job wrote: the last stdout line of a complete run, else the path its end message names."""
    out = (jd / "out").read_text(errors="replace").strip().splitlines()
    candidates = out[-1:] + re.findall(r"run marked (?:failed|interrupted):? ([^\s)]+)", (jd / "err").read_text(errors="replace"))[::-1]
    for c in candidates:
        p = pathlib.Path(d) / c
        if (p / "run.json").is_file():
            return str(p.resolve())
    return ""


def write_atomic(path, text):
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def agent_follow(d, job, offset):
    """Copies the job's stderr from offset to stdout until the job has ended and all of it is out."""
    jd = job_dir(d, job)
    offset = int(offset)
    pid = int((jd / "pid").read_text())
    with open(jd / "err", "rb") as f:
        f.seek(offset)
        while True:
            done = (jd / "rc").exists() or not alive(pid)
            chunk = f.read(65536)
            if chunk:
                sys.stdout.buffer.write(chunk)
                sys.stdout.flush()
                continue
            if done:
                return
            time.sleep(0.2)


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def agent_stop(d, job):
    """Ctrl-C for the remote run: SIGINT to its process group, as a terminal sends it."""
    pid = int((job_dir(d, job) / "pid").read_text())
    try:
        os.killpg(pid, signal.SIGINT)
    except ProcessLookupError:
        pass


def agent_result(d, job):
    jd = job_dir(d, job)
    read = lambda n: (jd / n).read_text().strip() if (jd / n).exists() else None
    rc = read("rc")
    print(json.dumps({"rc": int(rc) if rc is not None else None, "dir": read("dir") or None}))


def agent_runs(d):
    """Every run folder on the target: under dir/data/runs, and wherever a job's --out put one."""
    d = pathlib.Path(d)
    if not d.is_dir():
        print("null")  # the caller says it in one line
        return
    dirs = {p.parent for p in (d / "data/runs").glob("*/*/run.json")}
    for f in (d / JOBS).glob("*/dir"):
        text = f.read_text().strip()
        if text and (pathlib.Path(text) / "run.json").is_file():
            dirs.add(pathlib.Path(text))
    runs = []
    for p in sorted(dirs):
        try:
            status = json.loads((p / "run.json").read_text()).get("status")
        except (OSError, ValueError, AttributeError):
            status = "unreadable"
        runs.append({"study": p.parent.name, "runId": p.name, "status": status, "path": str(p.resolve())})
    print(json.dumps(runs))


AGENTS = {"agent-hashes": agent_hashes, "agent-apply": agent_apply, "agent-start": agent_start,
          "agent-follow": agent_follow, "agent-stop": agent_stop, "agent-result": agent_result,
          "agent-runs": agent_runs}


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in AGENTS:
        raise SystemExit("usage: remote_agent.py agent-<command> <kit dir> [arguments]")
    AGENTS[sys.argv[1]](*sys.argv[2:])
