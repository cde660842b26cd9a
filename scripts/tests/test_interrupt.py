"""Ctrl-C and SIGTERM: the run is marked interrupted, its data is flushed and decodable, no fork survives."""
import json
import os
import signal
import subprocess
import time

import pytest

from conftest import ROOT, decode_hlog, read_csv, validate


def start_run(out):
    return subprocess.Popen([str(ROOT / "bench"), "run", "queues", "--quick", "--rate", "5000", "--variants", "abq-3,disruptor-1",
                             "--warmup", "1", "--measure", "20", "--out", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def wait_for_measuring_fork(out, timeout=60):
    """Waits until a fork has written its first measured interval; returns the run directory."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for log in out.glob("queues/*/latency/*.corrected.hlog"):
            if any(line[:1].isdigit() for line in log.read_text().splitlines()):
                return log.parents[1]
        time.sleep(0.5)
    pytest.fail("no fork started measuring in time")


def forks_alive(run_dir):
    out = subprocess.run(["pgrep", "-f", str(run_dir)], capture_output=True, text=True).stdout.split()
    return [p for p in out if int(p) != os.getpid()]


def check_interrupted(run_dir):
    m = json.loads((run_dir / "run.json").read_text())
    validate(m)
    assert m["status"] == "interrupted" and m["error"] and m["endedAt"]
    for f in m["files"]:
        assert (run_dir / f["path"]).exists(), f
    hlogs = [run_dir / f["path"] for f in m["files"] if f["kind"] == "hlog"]
    assert hlogs, "the interrupted fork's latency logs are listed"
    for h in hlogs:
        decode_hlog(h)
    assert read_csv(run_dir / "timeseries.csv"), "time series flushed"
    return m


@pytest.mark.parametrize("how", ["ctrl-c to the process group", "sigterm to the run only"])
def test_interrupted_run_is_marked_flushed_and_cleaned_up(tmp_path, how):
    proc = start_run(tmp_path)
    try:
        run_dir = wait_for_measuring_fork(tmp_path)
        time.sleep(1.5)
        if how.startswith("ctrl-c"):
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode in (130, 143), err
    assert "run marked interrupted" in err
    m = check_interrupted(run_dir)
    merged, intervals = decode_hlog(run_dir / "latency/abq-3.fork1.corrected.hlog")
    assert intervals >= 1 and merged.get_total_count() > 0
    time.sleep(0.5)
    assert forks_alive(run_dir) == [], "no fork JVM outlives its run"
    assert m["measurement"]["repetitions"] == 1
