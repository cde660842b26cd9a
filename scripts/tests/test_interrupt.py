"""Ctrl-C and SIGTERM: the run is marked interrupted, its data is flushed and decodable, no fork survives."""
import json
import os
import subprocess
import time

import pytest

from conftest import decode_hlog, interrupt_run, read_csv, validate


def measuring_fork(out):
    """The run directory once a fork has written its first measured interval."""
    for log in out.glob("queues/*/latency/*.corrected.hlog"):
        if any(line[:1].isdigit() for line in log.read_text().splitlines()):
            time.sleep(1.5)
            return log.parents[1], None
    return None


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


@pytest.mark.parametrize("how", ["sigint", "sigterm"], ids=["ctrl-c to the process group", "sigterm to the run only"])
def test_interrupted_run_is_marked_flushed_and_cleaned_up(tmp_path, how):
    code, err, run_dir, _ = interrupt_run(["queues", "--quick", "--rate", "5000", "--variants", "abq-3,disruptor-1", "--warmup", "1",
                                           "--measure", "20", "--out", str(tmp_path)], lambda: measuring_fork(tmp_path), how, timeout=60)
    assert code == {"sigint": 130, "sigterm": 143}[how], err
    assert "run marked interrupted" in err
    m = check_interrupted(run_dir)
    merged, intervals = decode_hlog(run_dir / "latency/abq-3.fork1.corrected.hlog")
    assert intervals >= 1 and merged.get_total_count() > 0
    time.sleep(0.5)
    assert forks_alive(run_dir) == [], "no fork JVM outlives its run"
    assert not (run_dir / "scratch").exists(), "scratch folder left"
    assert not [l for l in err.splitlines() if l.startswith("\tat ") or "Exception" in l], "no stack trace reaches the terminal"
    assert m["measurement"]["repetitions"] == 1
