"""Kills at random points leave nothing behind: no process, no listening port, no temp folder, no run at `running`.

Each run gets a marker in its environment, which every process it starts inherits (forks, the Kafka broker, the
private PostgreSQL and their watchdogs), so the test finds exactly that run's processes in /proc. Hard kills
(SIGKILL of the run's JVM, with or without its own watchdog) must be cleaned up within 10 s; soft ones (Ctrl-C
to the process group, SIGTERM to the run) before the run exits.
"""
import glob
import json
import os
import random
import signal
import subprocess
import threading
import time
import uuid

import pytest

from conftest import ROOT, bench, listening_ports, validate

MARK = "PERFKIT_TEST_RUN"
RUNS = {
    "queues": ["queues", "--quick", "--variants", "abq-1,disruptor-1", "--warmup", "1", "--measure", "20"],
    "messaging": ["messaging", "--quick", "--systems", "kafka"],
    "workflow": ["workflow", "--quick"],
}
# 16 kills across the three studies: 5 SIGKILLs each of a Kafka and a workflow run, then a mix. Ctrl-C is tested
# where a fork is measuring, by test_interrupt (queues, with SIGTERM), test_messaging and test_workflow.
CASES = ([("messaging", "sigkill")] * 5 + [("workflow", "sigkill")] * 5
         + [("queues", "sigkill"), ("messaging", "sigterm"), ("workflow", "sigterm"), ("messaging", "sigkill+watchdog"),
            ("workflow", "sigkill+watchdog"), ("queues", "sigkill+watchdog")])
SEED = int(os.environ.get("PERFKIT_KILL_SEED", "20261122"))


def running(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
        return stat[stat.rindex(")") + 2] not in "ZX"
    except (OSError, ValueError):
        return False


def marked(token):
    """Pids of live processes whose environment carries the run's marker."""
    found = []
    for d in glob.glob("/proc/[0-9]*"):
        try:
            with open(d + "/environ", "rb") as f:
                if f"{MARK}={token}".encode() in f.read().split(b"\0") and running(int(d[6:])):
                    found.append(int(d[6:]))
        except OSError:
            continue
    return found


def listening():
    rows = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = open(table).read().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            f = line.split()
            if f[3] == "0A":
                rows.append((int(f[1].rsplit(":", 1)[1], 16), f[9]))
    return rows


def pg_dirs():
    return set(glob.glob("/tmp/perfkit-pg-*"))


def left_pg_dirs(before, owners):
    """Private PostgreSQL folders made since before that the run may have left: all new ones but those a live process
    other than the run's owns (another test's run beside this one: ./bench test runs two at a time). A folder not yet
    told who made it counts, as the run may have been killed between making it and writing its owner."""
    left = set()
    for d in pg_dirs() - before:
        try:
            owner = int(open(d + "/owner").read().split()[0])
        except (OSError, ValueError, IndexError):
            left.add(d)
            continue
        if owner in owners or not running(owner):
            left.add(d)
    return left


def wait_for(condition, seconds):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return condition()


@pytest.mark.parametrize("study,how", CASES, ids=[f"{i + 1:02d}-{s}-{h}" for i, (s, h) in enumerate(CASES)])
def test_a_kill_at_a_random_point_leaves_nothing_behind(tmp_path, study, how, request):
    rng = random.Random(f"{SEED}-{request.node.name}")
    delay = rng.uniform(0.5, 12.0)
    token = uuid.uuid4().hex
    pg_before = pg_dirs()
    proc = subprocess.Popen([str(ROOT / "bench"), "run", *RUNS[study], "--out", str(tmp_path)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=dict(os.environ, **{MARK: token}))
    try:
        assert wait_for(lambda: list(tmp_path.glob("*/*/run.json")), 180), "the run never started"
        run_dir = next(tmp_path.glob("*/*/run.json")).parent
        time.sleep(delay)
        pids = marked(token)
        ports = listening_ports(*pids)
        if proc.poll() is not None:
            pytest.skip(f"the run ended by itself within {delay:.1f} s")
        if how.startswith("sigkill"):
            if how == "sigkill+watchdog":  # the run's own watchdog dies too: the janitor must do its work
                for pid in pids:
                    if "--reap" in open(f"/proc/{pid}/cmdline").read():
                        os.kill(pid, signal.SIGKILL)
            os.kill(proc.pid, signal.SIGKILL)
        elif how == "sigint":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=90)
        limit = 10 if how.startswith("sigkill") else 0.5
        assert wait_for(lambda: not marked(token), limit), \
            f"{how} at {delay:.1f} s: left running: {[open(f'/proc/{p}/cmdline').read()[:120] for p in marked(token)]}"
        still = {p for p, _ in listening()} & ports
        assert not still, f"ports still listening: {still}"
        owners = {proc.pid, *pids}  # the run's JVM (bench execs it) makes its clusters
        assert wait_for(lambda: not left_pg_dirs(pg_before, owners), limit), f"temp folders left: {left_pg_dirs(pg_before, owners)}"
        if how != "sigkill+watchdog":
            assert wait_for(lambda: not (run_dir / "scratch").exists(), limit), "scratch folder left"
        if how.startswith("sigkill") and (how == "sigkill+watchdog" or rng.random() < 0.3):
            listed = janitor_list(tmp_path)
            assert run_dir.name in listed and "interrupted" in listed.split(run_dir.name, 1)[1].splitlines()[0], listed
            assert not (run_dir / "scratch").exists()
        m = json.loads((run_dir / "run.json").read_text())
        assert m["status"] == "interrupted", (how, delay, m["status"], m["error"])
        validate(m)
        traces = [l for l in err.splitlines() if l.startswith("\tat ") or "Exception" in l]
        assert not traces, f"{how} at {delay:.1f} s: a stack trace reached the terminal:\n" + "\n".join(traces[:5])
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def shm_segments():
    return set(glob.glob("/dev/shm/PostgreSQL.*"))


def cmdline(pid):
    try:
        return open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def parent(pid):
    try:
        return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def engine_connected(token):
    """A backend serving a client over loopback: the postmaster runs (not initdb) and the engine holds connections.
    Backends are found as children of the run's postmaster: a backend's process title overwrites its environment,
    so it carries no readable mark of its own."""
    postmasters = {p for p in marked(token) if " -D " in cmdline(p) and "initdb" not in cmdline(p)}
    for d in glob.glob("/proc/[0-9]*"):
        pid = int(d[6:])
        if parent(pid) in postmasters and cmdline(pid).startswith("postgres: ") and "127.0.0.1(" in cmdline(pid):
            return True
    return False


# A server's life, and how to tell it has begun: Cassandra once it answers CQL (after its password is set), PostgreSQL
# once the workflow engine is connected to the study's cluster (so the kill lands while the engine holds connections).
SERVER_KILLS = {
    "cassandra": (["three-tier", "--quick", "--rounds", "inserts", "--stores", "cassandra", "--warmup", "2", "--measure", "30"],
                  lambda token, err: "answers CQL" in err),
    "postgres": (["workflow", "--quick"], lambda token, err: engine_connected(token)),
}


@pytest.mark.alone  # counts every cluster folder and shared memory segment on the machine
@pytest.mark.parametrize("server", sorted(SERVER_KILLS))
def test_killing_the_run_with_every_watchdog_during_a_servers_life_leaves_nothing(tmp_path, server):
    """SIGKILL for the run's JVM and every watchdog at once, 1-3 s into a database's life: the database must stop by
    itself (the kernel signals it when its watchdog dies), and the janitor of ./bench list finds the rest by the run's
    mark. 15 s later nothing of the run is alive, no port listens, no cluster folder or shared memory segment is left,
    and the terminal got no stack trace."""
    args, ready = SERVER_KILLS[server]
    token = uuid.uuid4().hex
    pg_before, shm_before = pg_dirs(), shm_segments()
    proc = subprocess.Popen([str(ROOT / "bench"), "run", *args, "--out", str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True, env=dict(os.environ, **{MARK: token}))
    err_lines = []
    reader = threading.Thread(target=lambda: err_lines.extend(iter(proc.stderr.readline, "")), daemon=True)
    reader.start()
    try:
        assert wait_for(lambda: ready(token, "".join(err_lines)) or proc.poll() is not None, 300), "the server never started"
        assert proc.poll() is None, "".join(err_lines)[-2000:]
        time.sleep(random.Random(f"{SEED}-{server}").uniform(1, 3))
        pids = marked(token)
        ports = listening_ports(*pids)
        watchdogs = [p for p in pids if "perfkit.harness.process.Watchdog" in cmdline(p)]
        assert len(watchdogs) >= 2, "the run's reaper and the server's watchdog"
        for pid in [proc.pid, *watchdogs]:
            os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert wait_for(lambda: not marked(token), 15), \
            f"left running: {[cmdline(p)[:120] for p in marked(token)]}"
        # a process that is exiting has no environment left to read, but holds its sockets until its memory is gone
        assert wait_for(lambda: not ({p for p, _ in listening()} & ports), 5), "ports still listening"
        assert wait_for(lambda: not (shm_segments() - shm_before), 5), f"shared memory left: {shm_segments() - shm_before}"
        run_dir = next(tmp_path.glob("*/*/run.json")).parent
        listed = janitor_list(tmp_path)
        assert run_dir.name in listed and "interrupted" in listed.split(run_dir.name, 1)[1].splitlines()[0], listed
        assert not (pg_dirs() - pg_before), f"cluster folders left: {pg_dirs() - pg_before}"
        assert not (run_dir / "scratch").exists()
        reader.join(timeout=20)
        err = "".join(err_lines)
        assert not [l for l in err.splitlines() if l.startswith("\tat ") or "Exception" in l], err[-3000:]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def tomcat_dirs():
    return set(glob.glob("/tmp/tomcat.*")) | set(glob.glob("/tmp/tomcat-docbase.*"))


@pytest.mark.alone  # counts every Tomcat folder in /tmp
def test_killing_a_web_runs_process_group_leaves_no_tomcat_folder(tmp_path):
    """SIGKILL to the whole process group of a web-reactive run while its Spring apps serve: no shutdown hook runs, so
    Tomcat's base and document folders must already live in the run's scratch folder, which the reaper removes."""
    token = uuid.uuid4().hex
    before = tomcat_dirs()
    proc = subprocess.Popen([str(ROOT / "bench"), "run", "web-reactive", "--quick", "--out", str(tmp_path)], cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=dict(os.environ, **{MARK: token}))
    try:
        def serving():
            for m in tmp_path.glob("*/*/run.json"):
                ports = json.loads(m.read_text()).get("notes", {}).get("ports", {})
                if any(name.startswith(("mvc", "webflux")) for name in ports):
                    return True
            return False
        assert wait_for(serving, 300), "the apps never started"
        assert not (tomcat_dirs() - before), "Tomcat keeps its folders under the run's scratch folder, not /tmp"
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert wait_for(lambda: not marked(token), 10), f"left running: {[cmdline(p)[:120] for p in marked(token)]}"
        assert not (tomcat_dirs() - before), f"left: {tomcat_dirs() - before}"
        run_dir = next(tmp_path.glob("*/*/run.json")).parent
        assert wait_for(lambda: not (run_dir / "scratch").exists(), 10)
        assert json.loads((run_dir / "run.json").read_text())["status"] == "interrupted"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def janitor_list(out):
    """What ./bench list does, on this test's runs folder: the janitor, then the listing."""
    script = ROOT / "scripts/queues/Queues.java"
    r = subprocess.run([str(ROOT / "env/setup/jbang"), "--quiet", str(script), "--perfkit-janitor", str(out)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(["python3", str(ROOT / "env/setup/list_runs.py"), str(out.parent)], capture_output=True, text=True)
    return r.stdout


def test_bench_list_runs_the_janitor_on_a_dead_run(tmp_path):
    """The listing itself marks a run whose process and watchdog are gone: here a manifest left at running by a dead pid."""
    data = ROOT / "data/runs/queues"
    data.mkdir(parents=True, exist_ok=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    run = data / f"20200101T000000Z-{os.uname().nodename.lower()[:24]}-{uuid.uuid4().hex[:6]}"
    run.mkdir()
    (run / "scratch").mkdir()
    (run / "run.json").write_text(json.dumps({"status": "running", "pid": dead.pid, "host": {"hostname": os.uname().nodename}, "files": []}))
    try:
        r = bench("list")
        assert r.returncode == 0, r.stderr
        line = next(l for l in r.stdout.splitlines() if run.name in l)
        assert "interrupted" in line, line
        assert not (run / "scratch").exists()
    finally:
        subprocess.run(["rm", "-rf", str(run)])
