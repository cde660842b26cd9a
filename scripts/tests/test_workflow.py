"""The workflow study on a real PostgreSQL: each job type drains exactly, two engines share the backlog
under the global lock, bad input fails cleanly, and no database or engine outlives a run."""
import glob
import json
import subprocess
import time

import pytest

from conftest import bench, decode_hlog, interrupt_run, manifest, read_csv, run_dir_of, validate

QUICK = ["--quick", "--jobs", "300", "--acquire-sizes", "32"]


def our_postgres_processes():
    return subprocess.run(["pgrep", "-f", "perfkit-pg-"], capture_output=True, text=True).stdout.split()


def assert_nothing_left(run_dir):
    assert our_postgres_processes() == [], "the private PostgreSQL cluster is stopped"
    assert glob.glob("/tmp/perfkit-pg-*") == [], "its data folder is removed"
    assert subprocess.run(["pgrep", "-f", str(run_dir)], capture_output=True, text=True).stdout.split() == []
    assert not (run_dir / "scratch").exists()


@pytest.fixture(scope="module")
def each_job_type(tmp_path_factory):
    out = tmp_path_factory.mktemp("workflow")
    return run_dir_of(bench("run", "workflow", *QUICK, "--instances", "1", "--locks", "off", "--out", str(out), timeout=900))


def test_each_job_type_drains_exactly_once(each_job_type):
    m = manifest(each_job_type)
    validate(m)
    assert m["status"] == "complete" and m["variants"] == ["fixed", "timer", "noop"]
    assert "private PostgreSQL cluster" in m["notes"]["database"]
    assert "dropped ACT_IDX_RU_ACTI_END" in m["notes"]["indexFix"]
    rows = read_csv(each_job_type / "throughput.csv")
    assert [r["job_type"] for r in rows] == ["fixed", "timer", "noop"]
    for r in rows:
        assert r["valid"] == "true", r["invalid_reason"]
        assert r["succeeded"] == r["jobs"] == r["at_wait_state"] == "300"
        assert r["left"] == r["dead_letters"] == r["failed"] == "0"
        assert float(r["jobs_per_s"]) > 0 and float(r["drain_seconds"]) > 0
    fixed = rows[0]
    assert float(fixed["theoretical_max_per_s"]) == 32 * 1000 / 100  # 1 instance x 32 threads x 10 jobs/s
    assert 0 < float(fixed["pct_of_max"]) == pytest.approx(100 * float(fixed["jobs_per_s"]) / 320, rel=1e-6)


def test_latency_logs_hold_every_job(each_job_type):
    for r in read_csv(each_job_type / "throughput.csv"):
        name = f"latency/{r['job_type']}-k1-a32-lockoff-r1.fork1"
        merged, intervals = decode_hlog(each_job_type / f"{name}.corrected.hlog")
        assert intervals >= 1 and merged.get_total_count() == 300


def test_database_and_engines_are_gone_after_the_run(each_job_type):
    assert_nothing_left(each_job_type)
    rows = read_csv(each_job_type / "engines.csv")
    assert len(rows) == 3 and all(int(r["succeeded"]) == 300 for r in rows)


def test_two_engines_share_the_backlog_with_the_lock_on(tmp_path):
    run = run_dir_of(bench("run", "workflow", *QUICK, "--job-types", "noop", "--instances", "2", "--locks", "on",
                           "--out", str(tmp_path), timeout=600))
    (row,) = read_csv(run / "throughput.csv")
    assert row["valid"] == "true" and row["lock"] == "on" and row["instances"] == "2", row
    engines = read_csv(run / "engines.csv")
    assert len(engines) == 2 and sum(int(e["succeeded"]) for e in engines) == 300
    assert_nothing_left(run)


def one_error_line(result):
    errors = [l for l in result.stderr.splitlines() if l.startswith("error:")]
    assert len(errors) == 1, result.stderr
    assert "Exception" not in result.stderr and "\tat " not in result.stderr
    return errors[0]


def test_unknown_job_type_fails_the_run_with_one_line(tmp_path):
    r = bench("run", "workflow", "--quick", "--job-types", "noop,bogus", "--out", str(tmp_path))
    assert r.returncode == 2
    assert "unknown job type 'bogus'" in one_error_line(r)
    (run_dir,) = list(tmp_path.glob("workflow/*"))
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "failed" and "bogus" in m["error"]


def test_unreachable_database_fails_fast_and_keeps_the_password_out(tmp_path):
    r = bench("run", "workflow", "--quick", "--jdbc-url", "jdbc:postgresql://bench:hunter2@127.0.0.1:1/flow",
              "--jdbc-password", "hunter2", "--out", str(tmp_path), timeout=120)
    assert r.returncode == 1
    assert "cannot connect to jdbc:postgresql://bench:***@127.0.0.1:1/flow" in one_error_line(r)
    (run_dir,) = list(tmp_path.glob("workflow/*"))
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "failed"
    assert "hunter2" not in json.dumps(m)


def test_h2_refuses_more_than_one_engine(tmp_path):
    r = bench("run", "workflow", "--quick", "--database", "h2", "--instances", "2", "--out", str(tmp_path))
    assert r.returncode == 2 and "H2 supports one engine instance" in one_error_line(r)


def test_interrupted_run_stops_the_database_and_engines(tmp_path):
    def draining():
        for ts in tmp_path.glob("workflow/*/timeseries.csv"):
            if ",execute," in ts.read_text():
                assert our_postgres_processes(), "the cluster runs during the drain"
                return ts.parent, None
        return None

    code, err, run_dir, _ = interrupt_run(["workflow", "--quick", "--jobs", "3000", "--job-types", "fixed", "--threads", "4",
                                           "--out", str(tmp_path)], draining, timeout=180)
    assert code == 130, err
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "interrupted"
    time.sleep(1)
    assert_nothing_left(run_dir)
