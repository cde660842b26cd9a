"""Runs a study on a target host over SSH and brings its run home (./bench run|demo|list --on, ./bench collect).

Local side (called by ./bench):
  remote.py run <study> --on user@host[:dir] [--into DIR] [study options]
  remote.py collect user@host[:dir] [--into DIR]
  remote.py list user@host[:dir]

It uses the system's OpenSSH client with the user's own config, keys and agent, never a password
(BatchMode=yes). PERFKIT_SSH_CONFIG=<file> adds `-F <file>`. The kit goes to `dir` (default ~/perfkit)
as the tracked and not-ignored files of this checkout, uncommitted edits included; a per-file content
hash means a second run ships only what changed. The target needs a POSIX shell, tar, python3 and
JDK 17+ (its ./bench says so in one line when one is missing).

The run starts detached on the target (its own session, output to files under dir/.perfkit-remote/),
so a dropped connection does not stop it: `./bench collect` fetches it later. Ctrl-C here sends SIGINT
to the remote run's process group, as a terminal would; the run flushes its data, marks itself
interrupted, and is still brought home.

Target side: env/setup/remote_agent.py, piped into `python3 -` (so it needs no copy on the target), with
one of its agent-* commands. Nothing in either reads credentials.
"""
import io
import json
import os
import pathlib
import re
import shlex
import signal
import subprocess
import sys
import tarfile
import time

from remote_agent import JOBS, SHIPPED, file_hash

def self_path():
    return pathlib.Path(__file__).resolve()


def kit_root():
    return self_path().parents[2]


KIT_STATE = ".perfkit-kit.json"    # the local checkout's commit and dirty flag (the target has no .git)
CONNECT_TIMEOUT_S = 10             # unreachable host: fail within this, plus the short commands' timeouts
SHORT_TIMEOUT_S = 120              # any single short remote command (hashes, upload, listing)
RECONNECTS = 6                     # while following a run: attempts after a dropped connection
RECONNECT_PAUSE_S = 5


class Fail(Exception):
    """One line for the user, and the exit code (2: bad input, unreachable target, missing prerequisite)."""
    def __init__(self, message, code=2):
        super().__init__(message)
        self.code = code


def say(msg):
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


# ---- target ----------------------------------------------------------------------------------------

class Target:
    """user@host[:dir]; the dir is on the target, relative to the remote home unless absolute."""
    def __init__(self, spec):
        if not spec or spec.startswith("-") or any(c.isspace() for c in spec):
            raise Fail(f"bad target '{spec}': expected user@host[:dir]")
        m = re.fullmatch(r"((?:[^@:/\[\]]+@)?(?:\[[0-9A-Fa-f:.]+\]|[^@:/\[\]]+))(?::(.*))?", spec)
        if not m:
            raise Fail(f"bad target '{spec}': expected user@host[:dir]")
        self.dest = m.group(1).replace("[", "").replace("]", "") if m.group(1).count(":") else m.group(1)
        self.label = m.group(1)  # what run.json records as collectedFrom: user@host, nothing else
        self.dir = m.group(2) or "~/perfkit"
        if "\0" in self.dir or "\n" in self.dir:
            raise Fail(f"bad target directory '{self.dir}'")

    def shell_dir(self):
        """The dir as a word for the remote shell: ~ expands to the remote $HOME, the rest is quoted."""
        d = self.dir
        if d == "~":
            return '"$HOME"'
        if d.startswith("~/"):
            return '"$HOME"/' + shlex.quote(d[2:])
        return shlex.quote(d)

    def __str__(self):
        return f"{self.label}:{self.dir}"


def ssh_base():
    cmd = ["ssh", "-o", "BatchMode=yes", "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
           "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", "-o", "LogLevel=ERROR"]
    config = os.environ.get("PERFKIT_SSH_CONFIG")
    if config:
        if not os.path.isfile(config):
            raise Fail(f"PERFKIT_SSH_CONFIG={config}: no such file")
        cmd += ["-F", config]
    return cmd


def ssh(target, command, stdin=None, timeout=SHORT_TIMEOUT_S, what="command"):
    """Runs one shell command on the target; returns its stdout bytes. A failure becomes one line."""
    argv = ssh_base() + ["--", target.dest, command]
    try:
        # own session: a Ctrl-C here reaches this script only, which then stops the remote run on purpose
        p = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout, start_new_session=True)
    except FileNotFoundError:
        raise Fail("no ssh client found: install OpenSSH (Debian: apt-get install openssh-client)")
    except subprocess.TimeoutExpired:
        raise Fail(f"{target.label}: no answer within {timeout} s ({what})")
    if p.returncode == 255:
        raise Fail(f"cannot reach {target.label}: {last_line(p.stderr) or 'ssh failed'}")
    if p.returncode != 0:
        err = last_line(p.stderr)
        if p.returncode == 127 and "python3" in err:
            raise Fail(f"{target.label} has no python3 (the launcher needs it there too)")
        raise Fail(f"{target.label}: {what} failed: {err or 'exit code %d' % p.returncode}", 2)
    return p.stdout


def agent(target, *args, timeout=SHORT_TIMEOUT_S, what="command"):
    """Runs an agent-* command of remote_agent.py on the target, the program itself piped into `python3 -`."""
    command = "python3 - " + " ".join([shlex.quote(args[0]), target.shell_dir()] + [shlex.quote(a) for a in args[1:]])
    return ssh(target, command, stdin=agent_program(), timeout=timeout, what=what)


def agent_program():
    """The target side's source, piped into `python3 -` for each agent-* command."""
    return (self_path().parent / "remote_agent.py").read_bytes()


def last_line(b):
    lines = [l for l in b.decode(errors="replace").splitlines() if l.strip()]
    return lines[-1].strip() if lines else ""


# ---- shipping the kit ------------------------------------------------------------------------------

def kit_files():
    """The checkout's files as git sees them: tracked ones (with their working-tree content) plus new ones that
    are not ignored, so data/runs, .venv, .cache and build never travel."""
    try:
        out = subprocess.run(["git", "-C", str(kit_root()), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, check=True).stdout
        names = [n for n in out.decode().split("\0") if n]
    except (OSError, subprocess.CalledProcessError):
        raise Fail(f"{kit_root()} is not a git checkout: --on ships the kit's tracked files (clone it with git)")
    return sorted(n for n in set(names) if (kit_root() / n).is_file() or (kit_root() / n).is_symlink())


def kit_state():
    def git(*a):
        p = subprocess.run(["git", "-C", str(kit_root()), *a], capture_output=True, text=True)
        return p.stdout.strip() if p.returncode == 0 else None
    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--untracked-files=no")
    return {"commit": commit, "dirty": None if status is None else bool(status)}


def ship(target):
    """Brings the target's copy of the kit up to date; returns how many files were sent."""
    names = kit_files()
    local = {n: file_hash(kit_root() / n) for n in names}
    remote = json.loads(agent(target, "agent-hashes", what="reading the kit there") or b"{}")
    send = [n for n in names if remote.get(n) != local[n]]
    gone = [n for n in remote if n not in local]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for n in send:
            tar.add(str(kit_root() / n), arcname=n, recursive=False)
        for name, content in ((SHIPPED, json.dumps(local, indent=0)), (KIT_STATE, json.dumps(kit_state()))):
            data = content.encode()
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), int(time.time()), 0o644
            tar.addfile(info, io.BytesIO(data))
    ssh(target, f"mkdir -p {target.shell_dir()}/{JOBS} && cat > {target.shell_dir()}/{JOBS}/incoming.tar",
        stdin=buf.getvalue(), what="sending the kit")
    agent(target, "agent-apply", *gone, what="unpacking the kit")
    say(f"kit shipped to {target}: {len(send)} of {len(names)} files changed, {len(gone)} removed")
    return len(send)


# ---- running -----------------------------------------------------------------------------------------

def split_args(argv, options):
    """Takes the named launcher options (--on X, --into X, --on=X) out of a study's arguments."""
    found, rest, i = {}, [], 0
    while i < len(argv):
        a = argv[i]
        name = next((o for o in options if a == o or a.startswith(o + "=")), None)
        if name is None:
            rest.append(a)
            i += 1
            continue
        if name in found:
            raise Fail(f"{name} given twice: give it once")
        if a == name:
            if i + 1 >= len(argv):
                raise Fail(f"{name} needs a value")
            found[name] = argv[i + 1]
            i += 2
        else:
            found[name] = a[len(name) + 1:]
            i += 1
    return found, rest


def local_runs_root(into):
    root = pathlib.Path(into) if into else kit_root() / "data/runs"
    if root.exists() and not root.is_dir():
        raise Fail(f"--into {into}: not a folder")
    return root


class Interrupted(Exception):
    pass


def cmd_run(argv):
    opts, rest = split_args(argv, ["--on", "--into"])
    if not rest or rest[0].startswith("-"):
        raise Fail("usage: ./bench run <study> --on user@host[:dir] [--into DIR] [options]")
    target = Target(opts["--on"])
    into = local_runs_root(opts.get("--into"))
    if any(a in ("-h", "--help") for a in rest[1:]):
        require_kit(target, f"./bench run {rest[0]} --on {target} (without --help) ships it")
        os.execvp("ssh", ssh_base() + ["--", target.dest, f"cd {target.shell_dir()} && ./bench run " + " ".join(map(shlex.quote, rest))])
    ship(target)
    job = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime()) + "-" + os.urandom(3).hex()
    pid = agent(target, "agent-start", job, *rest, what="starting the run").decode().strip()
    say(f"started on {target.label} (job {job}, process group {pid}); Ctrl-C stops it, a dropped connection does not")
    interrupted = False

    def on_term(*_):
        raise Interrupted()
    signal.signal(signal.SIGTERM, on_term)
    offset = 0
    while True:
        try:
            offset = follow(target, job, offset)
            break
        except (KeyboardInterrupt, Interrupted):
            if interrupted:  # a second Ctrl-C: stop waiting; the run finishes stopping on its own
                raise Fail(f"stopped waiting; the run on {target.label} is being interrupted: "
                           f"./bench collect {target} fetches it", 130)
            interrupted = True
            say(f"interrupting the run on {target.label}")
            agent(target, "agent-stop", job, what="stopping the run")
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    state = json.loads(agent(target, "agent-result", job, what="reading the run's result"))
    rc = state.get("rc")
    rc = 1 if rc is None else rc
    if not state.get("dir"):
        # no run folder (a bad option, no JDK there): the target's one line has already been shown above
        return rc if rc != 0 else 1
    local = fetch(target, state["dir"], into)
    print(local, flush=True)
    return rc


def follow(target, job, offset):
    """Streams the remote run's stderr from offset until the run ends; reconnects after a dropped connection."""
    tries = 0
    while True:
        argv = ssh_base() + ["--", target.dest, "python3 - agent-follow " + " ".join([target.shell_dir(), shlex.quote(job), str(offset)])]
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            p.stdin.write(agent_program())
            p.stdin.close()
            while True:
                chunk = p.stdout.read1(65536)
                if not chunk:
                    break
                offset += len(chunk)
                tries = 0
                sys.stderr.buffer.write(chunk)
                sys.stderr.flush()
            rc = p.wait()
        except BaseException:
            p.kill()
            p.wait()
            raise
        if rc == 0:
            return offset
        err = last_line(p.stderr.read())
        if rc != 255:
            raise Fail(f"{target.label}: following the run failed: {err or 'exit code %d' % rc}")
        tries += 1
        if tries > RECONNECTS:
            raise Fail(f"lost the connection to {target.label} ({err or 'ssh failed'}); the run goes on there: "
                       f"./bench collect {target} fetches it when it has ended")
        say(f"connection to {target.label} lost ({err or 'ssh failed'}); reconnecting ({tries}/{RECONNECTS})")
        time.sleep(RECONNECT_PAUSE_S)


def fetch(target, remote_dir, into):
    """Copies one finished run folder home unchanged, adding only collectedFrom to its run.json."""
    rd = pathlib.PurePosixPath(remote_dir)
    study, run_id = rd.parent.name, rd.name
    data = ssh(target, f"cd {shlex.quote(str(rd.parent))} && tar -cf - {shlex.quote(run_id)}", timeout=600,
               what=f"copying run {run_id}")
    dest = into / study / run_id
    tmp = into / study / f".{run_id}.collecting"
    if tmp.exists():
        remove_tree(tmp)
    tmp.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        extract(tar, tmp)
    mark_collected(tmp / run_id / "run.json", target.label)
    if dest.exists():
        remove_tree(dest)
    (tmp / run_id).rename(dest)
    tmp.rmdir()
    return dest


def mark_collected(path, label):
    """Adds "collectedFrom" as the manifest's last field, leaving every other byte as the target wrote it."""
    text = path.read_text()
    before = json.loads(text)
    if "collectedFrom" in before:
        return
    end = text.rstrip().rfind("}")
    body = text[:end].rstrip()
    sep = "" if body.endswith("{") else ","
    new = f'{body}{sep}\n  "collectedFrom" : {json.dumps(label)}\n}}\n'
    assert json.loads(new) == dict(before, collectedFrom=label)
    path.write_text(new)


def extract(tar, dest):
    try:
        tar.extractall(dest, filter="data")
    except TypeError:  # Python before 3.11.4: check the names ourselves
        for m in tar.getmembers():
            if m.name.startswith("/") or ".." in pathlib.PurePosixPath(m.name).parts or not (m.isfile() or m.isdir()):
                raise Fail(f"unexpected entry in a run folder: {m.name}")
        tar.extractall(dest)


def remove_tree(path):
    import shutil
    shutil.rmtree(path)


def cmd_collect(argv):
    opts, rest = split_args(argv, ["--into"])
    if len(rest) != 1:
        raise Fail("usage: ./bench collect user@host[:dir] [--into DIR]")
    target = Target(rest[0])
    into = local_runs_root(opts.get("--into"))
    listing = json.loads(agent(target, "agent-runs", what="listing the runs there"))
    if listing is None:
        raise Fail(f"no folder {target.dir} on {target.label}: nothing to collect (is the path right?)")
    runs = listing
    fetched = skipped = 0
    for r in runs:
        if (into / r["study"] / r["runId"]).exists():
            continue
        if r["status"] == "running":
            say(f"{r['study']}/{r['runId']} is still running there: left for a later collect")
            skipped += 1
            continue
        print(fetch(target, r["path"], into), flush=True)
        fetched += 1
    say(f"collected {fetched} new run(s) from {target} into {into}" + (f"; {skipped} still running" if skipped else ""))
    return 0


def require_kit(target, hint):
    """One line and exit 2 when the target's folder holds no kit (yet), rather than the remote shell's own words."""
    if ssh(target, f"if test -x {target.shell_dir()}/bench; then echo yes; fi", what="looking for the kit").strip() != b"yes":
        raise Fail(f"no kit in {target} yet: {hint}")


def cmd_list(argv):
    if len(argv) != 1:
        raise Fail("usage: ./bench list --on user@host[:dir]")
    target = Target(argv[0])
    require_kit(target, f"./bench run <study> --on {target} ships it")
    p = subprocess.run(ssh_base() + ["--", target.dest, f"cd {target.shell_dir()} && ./bench list"])
    return p.returncode


def main(argv):
    commands = {"run": cmd_run, "collect": cmd_collect, "list": cmd_list}
    if not argv or argv[0] not in commands:
        raise Fail("usage: remote.py run|collect|list ...")
    return commands[argv[0]](argv[1:])


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except Fail as e:
        print(f"bench: {e}", file=sys.stderr)
        sys.exit(e.code)
    except KeyboardInterrupt:
        print("bench: interrupted", file=sys.stderr)
        sys.exit(130)
