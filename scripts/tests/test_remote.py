"""./bench run --on, ./bench collect: a real OpenSSH server on 127.0.0.1 plays the target host.

The "remote" is this machine and this user, reached over a private sshd with throwaway keys, and with
another kit directory; the kit is shipped there over SSH as to any host. Being the same user, the target
finds ~/.m2 and ~/.jbang already filled, and the test links the checkout's JBang bootstrap into the remote
kit, so its set-up takes seconds; a real target downloads its own on its first run.
"""
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import time

import pytest

from conftest import ROOT, decode_hlog, free_port, read_csv, validate

SSHD = "/usr/sbin/sshd"
QUICK = ["queues", "--quick", "--variants", "abq-1", "--warmup", "0.5", "--measure", "1"]


def require_sshd():
    """./bench test installs Debian's openssh-server when it runs as root (setup_sshd); elsewhere these tests skip."""
    if not os.path.exists(SSHD):
        pytest.skip("remote tests need Debian's openssh-server (apt-get install openssh-server, as root)")


class Target:
    def __init__(self, tmp, port, user):
        self.tmp, self.port, self.user = tmp, port, user
        self.kit = tmp / "remote-kit"
        self.spec = f"{user}@perfkit-test:{self.kit}"
        self.env = dict(os.environ, PERFKIT_SSH_CONFIG=str(tmp / "ssh_config"))

    def bench(self, *args, timeout=300):
        return subprocess.run([str(ROOT / "bench"), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=self.env)

    def start(self, *args):
        """./bench in its own process group, as from a terminal: Ctrl-C goes to the whole group."""
        return subprocess.Popen([str(ROOT / "bench"), *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, env=self.env, start_new_session=True)

    def runs(self):
        return sorted(p.parent for p in (self.kit / "data/runs").glob("*/*/run.json"))

    def processes(self):
        """Processes on the target side that belong to the remote kit (the run, its forks, its supervisor)."""
        out = subprocess.run(["pgrep", "-f", str(self.kit)], capture_output=True, text=True).stdout.split()
        return [p for p in out if int(p) != os.getpid()]


@pytest.fixture(scope="module")
def target(tmp_path_factory):
    require_sshd()
    tmp = tmp_path_factory.mktemp("ssh")
    os.chmod(tmp, 0o700)
    for key in ("host_key", "user_key", "stranger_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", key, "-f", str(tmp / key)], check=True)
    (tmp / "authorized_keys").write_text((tmp / "user_key.pub").read_text())
    os.chmod(tmp / "authorized_keys", 0o600)
    port, old_jdk_port, closed = free_port(), free_port(), free_port()
    # a second port whose sessions see a JDK 11 (as the launcher tests fake one): a target without JDK 17+
    old_jdk = tmp / "jdk11"
    (old_jdk / "bin").mkdir(parents=True)
    (old_jdk / "bin/java").write_text('#!/bin/sh\necho \'openjdk version "11.0.2" 2019-01-15\' >&2\n')
    os.chmod(old_jdk / "bin/java", 0o755)
    user = subprocess.run(["id", "-un"], capture_output=True, text=True, check=True).stdout.strip()
    (tmp / "sshd_config").write_text(f"""Port {port}
Port {old_jdk_port}
ListenAddress 127.0.0.1
HostKey {tmp}/host_key
PidFile {tmp}/sshd.pid
AuthorizedKeysFile {tmp}/authorized_keys
AuthenticationMethods publickey
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
Match LocalPort {old_jdk_port}
  SetEnv JAVA_HOME={old_jdk}
""")
    host_pub = (tmp / "host_key.pub").read_text().split()
    (tmp / "known_hosts").write_text(f"[127.0.0.1]:{port} {host_pub[0]} {host_pub[1]}\n")
    common = f"""  HostName 127.0.0.1
  IdentitiesOnly yes
  IdentityAgent none
  UserKnownHostsFile {tmp}/known_hosts
  GlobalKnownHostsFile /dev/null
  StrictHostKeyChecking yes
"""
    (tmp / "ssh_config").write_text(
        f"Host perfkit-test\n  Port {port}\n  IdentityFile {tmp}/user_key\n{common}"
        f"Host perfkit-stranger\n  Port {port}\n  IdentityFile {tmp}/stranger_key\n{common}"
        f"Host perfkit-oldjdk\n  Port {old_jdk_port}\n  IdentityFile {tmp}/user_key\n  HostKeyAlias [127.0.0.1]:{port}\n{common}"
        f"Host perfkit-closed\n  Port {closed}\n  IdentityFile {tmp}/user_key\n{common}")
    made_privsep = not os.path.isdir("/run/sshd")
    if made_privsep:
        os.makedirs("/run/sshd", mode=0o755)
    sshd = subprocess.Popen([SSHD, "-D", "-e", "-f", str(tmp / "sshd_config")], stdout=subprocess.DEVNULL, stderr=open(tmp / "sshd.log", "w"))
    deadline = time.time() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert sshd.poll() is None and time.time() < deadline, (tmp / "sshd.log").read_text()
            time.sleep(0.1)
    t = Target(tmp, port, user)
    # the same machine: reuse this checkout's JBang bootstrap (a real target bootstraps its own)
    (t.kit / ".cache").mkdir(parents=True)
    os.symlink(ROOT / ".cache/jbang", t.kit / ".cache/jbang")
    yield t
    sshd.terminate()
    sshd.wait(timeout=10)
    if made_privsep:
        shutil.rmtree("/run/sshd", ignore_errors=True)
    shutil.rmtree(tmp, ignore_errors=True)


def one_line_error(r):
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert r.returncode == 2 and len(lines) == 1, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    return lines[0]


def check_collected(local, target, status):
    m = json.loads((local / "run.json").read_text())
    validate(m)
    assert m["status"] == status and m["collectedFrom"] == f"{target.user}@perfkit-test"
    remote = target.kit / "data/runs" / local.parent.name / local.name
    # unchanged apart from the one added field
    assert json.loads((remote / "run.json").read_text()) == {k: v for k, v in m.items() if k != "collectedFrom"}
    for f in m["files"]:
        assert (local / f["path"]).read_bytes() == (remote / f["path"]).read_bytes(), f["path"]
    return m


def test_quick_run_on_the_target_comes_home_complete(target, tmp_path):
    r = target.bench("run", *QUICK, "--tag", "remote", "--on", target.spec, "--into", str(tmp_path))
    assert r.returncode == 0, r.stderr[-3000:]
    local = pathlib.Path(r.stdout.strip().splitlines()[-1])
    assert local.parent == tmp_path / "queues"
    m = check_collected(local, target, "complete")
    assert m["tag"] == "remote" and m["params"]["variants"] == "abq-1"
    assert [row["cell"] for row in read_csv(local / "throughput.csv")] == ["abq-1"]
    assert "[queues]" in r.stderr, "the run's progress lines stream back"
    assert (target.kit / "scripts/queues/Queues.java").read_bytes() == (ROOT / "scripts/queues/Queues.java").read_bytes()
    assert not (target.kit / "data/runs").exists() or not any((target.kit / "data/runs").glob("*/*/.live.json"))
    assert not (target.kit / ".venv").exists() and not (target.kit / "build").exists(), "only the kit's own files travel"


def shipped_count(stderr):
    (line,) = [l for l in stderr.splitlines() if "kit shipped to" in l]
    return int(re.search(r": (\d+) of \d+ files changed", line).group(1))


def target_error(r):
    """The target's own one line, passed through: everything else is the launcher's [bench] progress."""
    lines = [l for l in r.stderr.splitlines() if l.strip() and not l.startswith("[bench]")]
    assert r.returncode == 2 and len(lines) == 1, (r.returncode, r.stderr)
    return lines[0]


def test_second_ship_sends_only_what_changed_and_target_errors_come_through(target, tmp_path):
    bad = ["run", "queues", "--variants", "nosuch", "--on", target.spec, "--into", str(tmp_path)]
    assert "nosuch" in target_error(target.bench(*bad))  # brings the target up to date
    readme = target.kit / "README.md"
    readme.write_text(readme.read_text() + "\nedited on the target\n")
    r = target.bench(*bad)
    assert shipped_count(r.stderr) == 1, r.stderr
    assert readme.read_bytes() == (ROOT / "README.md").read_bytes()
    assert "nosuch" in target_error(r) and not any(tmp_path.iterdir()), "a bad option leaves nothing to collect"


def test_a_target_without_jdk17_says_so_in_one_line(target, tmp_path):
    r = target.bench("run", *QUICK, "--on", f"{target.user}@perfkit-oldjdk:{target.kit}", "--into", str(tmp_path))
    assert "JDK 17 or newer is required" in target_error(r) and "11.0.2" in r.stderr
    assert shipped_count(r.stderr) == 0 and not any(tmp_path.iterdir())


def test_ctrl_c_interrupts_the_remote_run_and_still_brings_it_home(target, tmp_path):
    before = set(target.runs())
    proc = target.start("run", "queues", "--quick", "--rate", "5000", "--variants", "abq-1", "--warmup", "0.5",
                        "--measure", "60", "--on", target.spec, "--into", str(tmp_path))
    try:
        deadline = time.time() + 120
        while not measuring(set(target.runs()) - before):
            assert proc.poll() is None and time.time() < deadline, proc.communicate()[1][-3000:]
            time.sleep(0.5)
        os.killpg(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err[-3000:]
    local = pathlib.Path(out.strip().splitlines()[-1])
    m = check_collected(local, target, "interrupted")
    hlogs = [local / f["path"] for f in m["files"] if f["kind"] == "hlog"]
    assert hlogs and all(decode_hlog(h)[1] >= 0 for h in hlogs)
    time.sleep(1)
    assert target.processes() == [], "nothing of the run is left on the target"


def measuring(new_runs):
    """A remote run whose fork has written a measured interval."""
    for run in new_runs:
        for log in run.glob("latency/*.corrected.hlog"):
            if any(line[:1].isdigit() for line in log.read_text().splitlines()):
                return True
    return False


def test_a_dropped_connection_leaves_the_run_going_and_collect_fetches_it(target, tmp_path):
    before = set(target.runs())
    proc = target.start("run", *QUICK[:-1], "4", "--on", target.spec, "--into", str(tmp_path))
    deadline = time.time() + 120
    while not (set(target.runs()) - before):
        assert proc.poll() is None and time.time() < deadline, proc.communicate()[1][-3000:]
        time.sleep(0.3)
    # the laptop goes away: the launcher and its ssh connections die at once
    ssh_clients = subprocess.run(["pgrep", "-P", str(proc.pid)], capture_output=True, text=True).stdout.split()
    for pid in [proc.pid, *map(int, ssh_clients)]:
        os.kill(pid, signal.SIGKILL)
    proc.wait()
    (run,) = set(target.runs()) - before
    deadline = time.time() + 120
    while json.loads((run / "run.json").read_text())["status"] == "running":
        assert time.time() < deadline, "the remote run stopped with its connection"
        time.sleep(0.5)
    assert not any(tmp_path.rglob("run.json")), "nothing came home before collect"
    r = target.bench("collect", target.spec, "--into", str(tmp_path))
    assert r.returncode == 0, r.stderr
    local = tmp_path / "queues" / run.name
    assert str(local) in r.stdout.splitlines()
    check_collected(local, target, "complete")
    # every earlier run of this module is fetched too; a second collect finds nothing new
    assert {p.name for p in (tmp_path / "queues").iterdir()} == {p.name for p in target.runs()}
    again = target.bench("collect", target.spec, "--into", str(tmp_path))
    assert again.returncode == 0 and again.stdout.strip() == "" and "collected 0 new" in again.stderr


@pytest.mark.parametrize("host,needle", [("perfkit-closed", "cannot reach"), ("perfkit-stranger", "cannot reach"),
                                         ("-oProxyCommand=false", "bad target")],
                         ids=["closed port", "refused key", "option as host"])
def test_unreachable_target_fails_fast_with_one_line(target, tmp_path, host, needle):
    spec = host if host.startswith("-") else f"{target.user}@{host}:{target.kit}"
    t0 = time.time()
    line = one_line_error(target.bench("run", *QUICK, "--on", spec, "--into", str(tmp_path), timeout=60))
    assert needle in line and time.time() - t0 < 30
    assert not any(tmp_path.iterdir())
    line = one_line_error(target.bench("collect", spec, "--into", str(tmp_path), timeout=60))
    assert needle in line


def test_a_missing_folder_on_the_target_is_one_line(target, tmp_path):
    missing = f"{target.user}@perfkit-test:{target.tmp}/no-such-kit"
    line = one_line_error(target.bench("run", "queues", "--help", "--on", missing))
    assert line.startswith("bench: no kit in ") and "ships it" in line, line
    line = one_line_error(target.bench("collect", missing, "--into", str(tmp_path)))
    assert line == f"bench: no folder {target.tmp}/no-such-kit on {target.user}@perfkit-test: nothing to collect (is the path right?)", line
    assert not any(tmp_path.iterdir())
