"""The workflow study on a real PostgreSQL: each job type drains exactly once, completions are counted as committed
in the database, database CPU is measured, bad input fails before a run folder exists, secrets stay out of command
lines and files, and no database, schema or engine outlives a run."""
import math
import glob
import json
import pathlib
import re
import subprocess
import time

import pytest

from conftest import assert_refused, port_open, bench, decode_hlog, descendants, interrupt_run, manifest, perfkit_schemas, read_csv, run_dir_of, validate, validate_notes
from shared_runs import shared_quick_run

QUICK = ["--quick", "--jobs", "300", "--calibration-jobs", "300", "--acquire-sizes", "32"]


def cluster_port(run_dir):
    return int(re.search(r"127\.0\.0\.1:(\d+)", manifest(run_dir)["notes"]["database"]).group(1))


def assert_nothing_left(run_dir):
    """Scoped to this run: other runs on a shared machine may have clusters of their own."""
    m = manifest(run_dir)
    assert not port_open(cluster_port(run_dir)), "the run's private PostgreSQL cluster is stopped"
    for owner in glob.glob("/tmp/perfkit-pg-*/owner"):
        try:
            text = pathlib.Path(owner).read_text()
        except OSError:
            continue  # another run's folder, going away
        assert text.split()[:1] != [str(m["pid"])], f"the run's cluster folder is removed: {owner}"
    assert subprocess.run(["pgrep", "-f", str(run_dir)], capture_output=True, text=True).stdout.split() == []
    assert not (run_dir / "scratch").exists()


@pytest.fixture(scope="module")
def each_job_type(tmp_path_factory):
    """One quick run of every job type at the default --threads auto, so the calibration drain runs too."""
    return shared_quick_run(tmp_path_factory, "workflow").dir


def test_each_job_type_commits_every_job_exactly_once(each_job_type):
    m = manifest(each_job_type)
    validate(m)
    assert validate_notes(each_job_type) >= 3, "the notes the notebook and the kit read hold to their declaration"
    assert m["status"] == "complete" and m["mode"] == "drain" and m["variants"] == ["fixed", "timer", "noop"]
    assert "private PostgreSQL cluster" in m["notes"]["database"]
    assert re.fullmatch(r"PostgreSQL \d+\.\d+ .+", m["notes"]["postgresqlServer"]), "the server's own version, for the post"
    assert "dropped ACT_IDX_RU_ACTI_END" in m["notes"]["indexFix"]
    rows = read_csv(each_job_type / "throughput.csv")
    assert [r["job_type"] for r in rows] == ["fixed", "timer", "noop"]
    for r in rows:
        assert r["valid"] == "true", r["invalid_reason"]
        assert r["committed"] == r["commit_events"] == r["wait_arrivals"] == r["at_wait_state"] == r["jobs"], r
        assert r["left"] == r["dead_letters"] == r["failed"] == "0"
    assert rows[0]["body_runs"] == rows[0]["jobs"] and rows[1]["body_runs"] == rows[2]["body_runs"] == ""
    assert all(r["lock_poll_ms"] == "" for r in rows), "the lock's poll plays no part with the lock off"


def test_threads_come_from_the_calibration_rule(each_job_type):
    cal = manifest(each_job_type)["notes"]["calibration"]
    (row,) = read_csv(each_job_type / "calibration.csv")
    assert row["valid"] == "true" and row["job_type"] == "noop" and int(row["threads"]) == cal["calibrationThreads"]
    rate = float(row["steady_jobs_per_s"] or row["jobs_per_s"])
    assert cal["noopJobsPerS"] == pytest.approx(rate, rel=1e-6)
    assert cal["threads"] == max(1, int(rate * cal["jobMs"] / 1000 * cal["headroom"]))
    fixed = read_csv(each_job_type / "throughput.csv")[0]
    assert int(fixed["threads"]) == cal["threads"]
    # --queue-size auto: 64 places per thread, the original's 8192 for 128 threads
    assert int(fixed["queue_size"]) == 64 * cal["threads"] and int(row["queue_size"]) == 64 * cal["calibrationThreads"]
    assert float(fixed["theoretical_max_per_s"]) == cal["threads"] * 1000 / 100
    # --min-drain 2: each backlog lasts 2 s at the rate expected of it, --jobs 300 at least
    expected = {"fixed": float(fixed["theoretical_max_per_s"]), "timer": cal["noopJobsPerS"], "noop": cal["noopJobsPerS"]}
    for r in read_csv(each_job_type / "throughput.csv"):
        assert int(r["jobs"]) == max(300, math.ceil(min(expected[r["job_type"]], cal["noopJobsPerS"]) * 2)), r
    assert float(fixed["pct_of_max"]) == pytest.approx(100 * float(fixed["jobs_per_s"]) / float(fixed["theoretical_max_per_s"]), rel=1e-6)
    assert fixed["bottleneck"].split(":")[0] in ("cpu", "database-locks", "executor-threads", "acquisition")


def test_completions_are_counted_committed_in_the_database(each_job_type):
    m = manifest(each_job_type)
    assert "ACT_RU_JOB" in m["notes"]["completions"]
    ts = (each_job_type / "timeseries.csv").read_text()
    for r in read_csv(each_job_type / "throughput.csv"):
        assert r["drain_end_source"] == "database", "the drain ends at the poll that finds the backlog gone"
        assert float(r["jobs_per_s"]) * float(r["drain_seconds"]) == pytest.approx(int(r["committed"]), rel=1e-3)
    assert ",db:perfkit_" in ts, "the monitor's committed count is in the time series"


def test_database_cpu_is_measured_and_plausible(each_job_type):
    rows = read_csv(each_job_type / "throughput.csv") + read_csv(each_job_type / "calibration.csv")
    for r in rows:
        db, engines, system = float(r["cpu_db_pct"]), float(r["cpu_engines_pct"]), float(r["cpu_system_pct"])
        assert 0 < db < system, r
        assert engines + db <= system + 15, "engines and database cannot use more than the machine (15 points of sampling slack)"
        assert int(r["cores"]) * 100 + 5 >= system
    ts = read_csv(each_job_type / "timeseries.csv")
    assert any(t["series"] == "proc:postgres" and float(t["value"]) > 0 for t in ts), "database CPU per second, backends included"


def test_latency_logs_exclude_warm_up_as_the_manifest_says(each_job_type):
    m = manifest(each_job_type)
    assert m["measurement"]["warmupExcluded"] is True and m["measurement"]["warmupSeconds"] == 1
    rows = {r["cell"]: r for r in read_csv(each_job_type / "throughput.csv")}
    logs = [f for f in m["files"] if f["kind"] == "hlog" and f["timing"] == "corrected" and f["cell"] in rows]
    assert {f["cell"] for f in logs} == set(rows)
    for f in logs:
        merged, intervals = decode_hlog(each_job_type / f["path"])
        row = rows[f["cell"]]
        assert 0 < merged.get_total_count() == int(row["latency_samples"]) <= int(row["jobs"]), row
        assert f["window"] and f["window"]["endMs"] > f["window"]["startMs"], "each log says when measuring began"
    # jobs committed in the warm-up second are left out. Which cell commits in it depends on how soon its engine's
    # first acquisition lands (a fixed cell on a loaded box may commit none), so one cell showing it is the check
    assert any(int(r["latency_samples"]) < int(r["jobs"]) for r in rows.values()), rows


def test_database_and_engines_are_gone_after_the_run(each_job_type):
    assert_nothing_left(each_job_type)
    rows = read_csv(each_job_type / "engines.csv")
    jobs = {r["cell"]: r["jobs"] for r in read_csv(each_job_type / "throughput.csv")}
    assert len(rows) == 3 and all(e["commit_events"] == jobs[e["cell"]] for e in rows)


def test_two_engines_share_the_backlog_with_the_lock_on_at_each_poll(tmp_path):
    """... and, with --profile, every engine records its drain, and what recording costs is the calibration's no-op
    drain run recorded and plain, whose plain engine records nothing."""
    run = run_dir_of(bench("run", "workflow", *QUICK, "--job-types", "noop", "--threads", "8", "--instances", "2", "--locks", "on",
                           "--lock-poll-ms", "100,500", "--queue-size", "100", "--profile", "--out", str(tmp_path), timeout=600))
    m = manifest(run)
    [cost] = read_csv(run / "profiling.csv")
    assert cost["cell"] == "noop-k1-a32-lockoff" and cost["pair"] == "1"
    a, b = float(cost["profiled_jobs_per_s"]), float(cost["plain_jobs_per_s"])
    assert a > 0 and b > 0 and float(cost["profiled_over_plain"]) == pytest.approx(a / b)
    profiled = [(f["cell"], f["series"]) for f in m["files"] if f["kind"] == "profile"]
    assert len([c for c, _ in profiled if c in {r["cell"] for r in read_csv(run / "throughput.csv")}]) == 4, "each cell's two engines recorded their drain"
    assert f"profiling-{cost['cell']}-profiled-p1" in {c for c, _ in profiled} and not [c for c, _ in profiled if c and "-plain-" in c], profiled
    rows = read_csv(run / "throughput.csv")
    # the poll is a factor: one lock-on cell per value, each named and recorded apart
    assert sorted(r["lock_poll_ms"] for r in rows) == ["100", "500"], rows
    assert len({r["cell"] for r in rows}) == 2
    assert all(r["valid"] == "true" and r["lock"] == "on" and r["instances"] == "2" and r["queue_size"] == "100" for r in rows), rows
    engines = read_csv(run / "engines.csv")
    assert len(engines) == 4
    for row in rows:
        assert sum(int(e["commit_events"]) for e in engines if e["cell"] == row["cell"]) == 300
    assert not (run / "calibration.csv").exists(), "an explicit --threads needs no calibration"
    assert_nothing_left(run)


def one_error_line(result):
    errors = [l for l in result.stderr.splitlines() if l.startswith("error:")]
    assert len(errors) == 1, result.stderr
    assert "\tat " not in result.stderr and "Caused by" not in result.stderr, "no stack trace"
    return errors[0]


BAD_OPTIONS = [
    (["--job-types", "noop,bogus"], "--job-types"),
    (["--jobs", "0"], "--jobs"),
    (["--jobs", "1.5"], "--jobs"),
    (["--instances", "1,x"], "--instances"),
    (["--acquire-sizes", "0"], "--acquire-sizes"),
    (["--locks", "maybe"], "--locks"),
    (["--lock-poll-ms", "0"], "--lock-poll-ms"),
    (["--lock-poll-ms", "100,x"], "--lock-poll-ms"),
    (["--threads", "many"], "--threads"),
    (["--threads", "0"], "--threads"),
    (["--headroom", "101"], "--headroom"),
    (["--calibration-jobs", "5"], "--calibration-jobs"),
    (["--queue-size", "0"], "--queue-size"),
    (["--queue-size", "big"], "--queue-size"),
    (["--job-ms", "0"], "--job-ms"),
    (["--repetitions", "0"], "--repetitions"),
    (["--warmup", "-1"], "--warmup"),
    (["--max-drain", "0"], "--max-drain"),
    (["--warmup", "10", "--max-drain", "5"], "--warmup must be shorter"),
    (["--database", "mysql"], "--database"),
    (["--database", "h2", "--instances", "2"], "H2 supports one engine instance"),
    (["--database", "h2", "--jdbc-url", "jdbc:postgresql://127.0.0.1:1/x"], "exclude each other"),
    (["--jdbc-url", "postgres://127.0.0.1/x"], "--jdbc-url"),
    (["--jdbc-password-file", "/nonexistent/pw"], "--jdbc-password-file"),
    (["--index-fix", "maybe"], "--index-fix"),
    (["--fork-jvm-args", "Xmx1g"], "--fork-jvm-args"),
]


def test_a_typo_is_one_line_exit_2_and_no_run_folder(tmp_path):
    args, expected = BAD_OPTIONS[0]
    r = bench("run", "workflow", "--quick", *args, "--out", str(tmp_path), timeout=120)
    assert r.returncode == 2, r.stderr
    assert expected in one_error_line(r)
    assert not (tmp_path / "workflow").exists() or not any((tmp_path / "workflow").iterdir()), "no run folder is left behind"


@pytest.mark.parametrize("args,expected", BAD_OPTIONS, ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_a_typo_in_any_option_is_refused_in_one_line(tmp_path_factory, args, expected):
    assert_refused("workflow", ["--quick", *args], expected, tmp_path_factory, [["--quick", *a] for a, _ in BAD_OPTIONS])


def test_unreachable_database_is_refused_before_the_run_and_keeps_the_password_out(tmp_path):
    r = bench("run", "workflow", "--quick", "--jdbc-url", "jdbc:postgresql://bench:hunter2@127.0.0.1:1/flow",
              "--out", str(tmp_path), timeout=120)
    assert r.returncode == 2
    line = one_error_line(r)
    assert "cannot connect to jdbc:postgresql://127.0.0.1:1/flow" in line
    assert "hunter2" not in r.stderr + r.stdout
    assert not (tmp_path / "workflow").exists() or not any((tmp_path / "workflow").iterdir())


def test_a_completed_run_on_a_users_database_leaves_no_schema(tmp_path, users_database, monkeypatch):
    db = users_database
    monkeypatch.setenv("PERFKIT_JDBC_PASSWORD", db["password"])
    run = run_dir_of(bench("run", "workflow", "--quick", "--jobs", "300", "--job-types", "noop", "--threads", "4", "--instances", "1",
                           "--locks", "off", "--acquire-sizes", "200", "--repetitions", "2", "--jdbc-url", db["url"], "--out", str(tmp_path)))
    m = manifest(run)
    rows = read_csv(run / "throughput.csv")
    assert m["status"] == "complete" and len(rows) == 2, "two cells, each in a schema of its own"
    assert all(r["queue_size"] == "400" for r in rows), "--queue-size auto: 64 a thread, yet twice the largest acquire size"
    assert perfkit_schemas(db) == [], "each cell drops its schema when it ends"


def test_users_database_keeps_its_password_secret_and_loses_the_schema_on_ctrl_c(tmp_path, users_database, monkeypatch):
    db = users_database
    monkeypatch.setenv("PERFKIT_JDBC_PASSWORD", db["password"])
    seen = {"processes": 0}

    def draining():
        for ts in tmp_path.glob("workflow/*/timeseries.csv"):
            if ",execute," in ts.read_text() and perfkit_schemas(db):
                run_pid = json.loads((ts.parent / "run.json").read_text())["pid"]
                for pid in [run_pid, *descendants(run_pid)]:
                    try:
                        cmdline = pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
                    except OSError:
                        continue
                    seen["processes"] += 1
                    assert db["password"].encode() not in cmdline, f"password in the command line of {pid}"
                return ts.parent, None
        return None

    code, err, run_dir, _ = interrupt_run(["workflow", "--quick", "--jobs", "3000", "--job-types", "fixed", "--threads", "4",
                                           "--jdbc-url", db["url"], "--out", str(tmp_path)], draining, timeout=300)
    assert code == 130, err
    assert seen["processes"] >= 2, "the run's JVM and at least one engine were checked"
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "interrupted" and m["notes"]["database"] == "user database " + db["url"]
    assert perfkit_schemas(db) == [], "the run's schema is dropped on Ctrl-C"
    for f in run_dir.rglob("*"):
        if f.is_file():
            assert db["password"].encode() not in f.read_bytes(), f"password in {f}"
    assert db["password"] not in err


def test_interrupted_run_stops_the_private_database_and_engines(tmp_path):
    def draining():
        for ts in tmp_path.glob("workflow/*/timeseries.csv"):
            if ",execute," in ts.read_text():
                assert port_open(cluster_port(ts.parent)), "the cluster runs during the drain"
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
