"""The messaging study: quick sweeps of both systems with exact delivery checks, real components
cleaned up after completion and interruption, and a clear failure for an unreachable cluster."""
import json
import os
import re
import socket
import subprocess
import time

import pytest

from conftest import bench, decode_hlog, interrupt_run, manifest, read_csv, run_dir_of, validate

QUICK = ["--quick", "--warmup", "1", "--measure", "2", "--drain-timeout", "10"]


def leftovers(run_dir):
    """Processes still running from this run (forks or the broker carry the run directory on their command line)."""
    out = subprocess.run(["pgrep", "-f", str(run_dir)], capture_output=True, text=True).stdout.split()
    return [p for p in out if int(p) != os.getpid()]


def port_open(address):
    host, port = address.rsplit(":", 1)
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((host, int(port))) == 0


def broker_address(m):
    return re.search(r"127\.0\.0\.1:\d+", m["notes"]["kafkaBroker"]).group(0)


@pytest.fixture(scope="module")
def quick_sweep(tmp_path_factory):
    out = tmp_path_factory.mktemp("messaging")
    return run_dir_of(bench("run", "messaging", *QUICK, "--out", str(out), timeout=600))


def test_quick_sweep_covers_both_systems(quick_sweep):
    m = manifest(quick_sweep)
    validate(m)
    assert m["status"] == "complete" and m["variants"] == ["kafka", "chronicle"]
    rows = read_csv(quick_sweep / "sweep.csv")
    assert {r["system"] for r in rows} == {"kafka", "chronicle"}
    chronicle = [int(r["instances"]) for r in rows if r["system"] == "chronicle"]
    assert chronicle[0] == 1 and max(chronicle) <= 2
    capacity = {r["system"]: r for r in read_csv(quick_sweep / "capacity.csv")}
    assert set(capacity) == {"kafka", "chronicle"}
    for system, r in capacity.items():
        steps = [row for row in rows if row["system"] == system]
        met = [int(s["instances"]) for s in steps if s["meets_slo"] == "true"]
        assert int(r["capacity_instances"]) == (max(met) if met else 0), system
        assert r["stop_reason"]


def test_every_message_arrives_exactly_once_in_order(quick_sweep):
    for r in read_csv(quick_sweep / "sweep.csv"):
        assert int(r["sent"]) > 0 and int(r["sent"]) == int(r["received"]), r
        assert r["lost"] == r["duplicates"] == r["out_of_order"] == r["bad_hops"] == "0", r
        target = int(r["target_rate"])
        assert 0.5 * target < float(r["achieved_rate"]) < 2 * target  # a late driver catches up (open model)
        # a step is valid exactly when the driver held its rate (and nothing was lost, which is checked above)
        held = float(r["achieved_rate"]) >= 0.99 * target
        assert (r["valid"] == "true") == held, r
        assert (r["invalid_reason"] == "") == held, r
        assert r["meets_slo"] == "false" or (held and float(r["p99_9_ms"]) <= 100), r


def test_latency_logs_decode_and_match_the_table(quick_sweep):
    rows = read_csv(quick_sweep / "sweep.csv")
    for r in rows:
        name = f"latency/{r['system']}-n{r['instances']}"
        corrected, intervals = decode_hlog(quick_sweep / f"{name}-e2e.fork1.corrected.hlog")
        uncorrected, _ = decode_hlog(quick_sweep / f"{name}-e2e.fork1.uncorrected.hlog")
        hop1, _ = decode_hlog(quick_sweep / f"{name}-hop1.fork1.corrected.hlog")
        assert intervals >= 2 and corrected.get_total_count() == uncorrected.get_total_count() > 0
        # only the measurement window is timed; a backlog from warm-up may drain into it, the drain phase does not
        assert corrected.get_total_count() <= int(r["received"])
        assert hop1.get_total_count() > 0
        p999 = corrected.get_value_at_percentile(99.9) / 1e6
        assert abs(p999 - float(r["p99_9_ms"])) <= 0.01 * p999 + 0.01, (p999, r["p99_9_ms"])
        assert corrected.get_value_at_percentile(99.9) >= uncorrected.get_value_at_percentile(99.9)


def test_cpu_is_measured_per_process(quick_sweep):
    for r in read_csv(quick_sweep / "sweep.csv"):
        assert float(r["cpu_app_pct"]) > 0 and float(r["cpu_system_pct"]) > 0
        assert float(r["cpu_driver_pct"]) > 0
        if r["system"] == "kafka":
            assert float(r["cpu_broker_pct"]) > 0, "the broker is a separate JVM, measured apart"
        else:
            assert r["cpu_broker_pct"] == ""


def test_nothing_is_left_after_a_completed_run(quick_sweep):
    m = manifest(quick_sweep)
    assert leftovers(quick_sweep) == []
    assert not (quick_sweep / "scratch").exists(), "broker logs and queue files are removed"
    assert not port_open(broker_address(m)), "the broker's port is released"
    assert "analytics disabled" in m["notes"]["chronicle"]
    assert "-Dchronicle.analytics.disable=true" in m["jvm"]["forkInputArguments"]


def test_one_jvm_per_instance(tmp_path):
    # a huge SLO makes the sweep try both steps whatever this machine's latency is
    run = run_dir_of(bench("run", "messaging", *QUICK, "--systems", "chronicle", "--isolation", "jvm", "--slo-ms", "100000",
                           "--out", str(tmp_path)))
    rows = read_csv(run / "sweep.csv")
    assert [r["instances"] for r in rows] == ["1", "2"]
    assert all(r["isolation"] == "jvm" and r["lost"] == "0" for r in rows)
    for fork in (1, 2):
        merged, _ = decode_hlog(run / f"latency/chronicle-n2-e2e.fork{fork}.corrected.hlog")
        assert merged.get_total_count() > 0
    assert "one JVM per instance" in manifest(run)["notes"]["isolation"]


def test_interrupted_kafka_run_leaves_no_broker_port_or_files(tmp_path):
    def measuring():
        for log in tmp_path.glob("messaging/*/latency/kafka-n1-e2e.fork1.corrected.hlog"):
            if any(line[:1].isdigit() for line in log.read_text().splitlines()):
                run_dir = log.parents[1]
                address = broker_address(manifest(run_dir))
                assert port_open(address)
                return run_dir, address
        return None

    code, err, run_dir, address = interrupt_run(["messaging", "--quick", "--systems", "kafka", "--warmup", "1", "--measure", "30",
                                                 "--out", str(tmp_path)], measuring)
    assert code == 130, err
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "interrupted"
    time.sleep(1)
    assert leftovers(run_dir) == []
    assert not port_open(address)
    assert not (run_dir / "scratch").exists()
    for f in m["files"]:
        if f["kind"] == "hlog":
            decode_hlog(run_dir / f["path"])


def test_unreachable_cluster_fails_fast_with_one_line(tmp_path):
    started = time.time()
    r = bench("run", "messaging", "--quick", "--systems", "kafka", "--bootstrap-servers", "127.0.0.1:1", "--out", str(tmp_path), timeout=120)
    assert time.time() - started < 60
    assert r.returncode == 1
    errors = [l for l in r.stderr.splitlines() if l.startswith("error:")]
    assert len(errors) == 1 and "cannot reach Kafka at 127.0.0.1:1" in errors[0], r.stderr
    assert not [l for l in r.stderr.splitlines() if "Exception" in l or l.startswith("\tat ")], r.stderr
    (run_dir,) = list(tmp_path.glob("messaging/*"))
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "failed" and "cannot reach Kafka" in m["error"]
