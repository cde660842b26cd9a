"""End to end: ./bench run queues writes a run directory that follows the run format."""
import subprocess

import pytest

from conftest import bench, decode_hlog, hdr_jar, manifest, read_csv, run_dir_of, validate

VARIANTS = ["abq-1", "abq-3", "abq-5", "disruptor-1", "disruptor-3", "disruptor-5"]


def test_manifest_validates_and_says_what_ran(tiny_queues_run):
    m = manifest(tiny_queues_run)
    validate(m)
    assert m["status"] == "complete" and m["error"] is None and m["endedAt"]
    assert m["study"] == "queues" and m["runId"] == tiny_queues_run.name and m["tag"] == "e2e"
    assert m["variants"] == VARIANTS
    assert m["params"]["measure"] == "1" and m["params"]["forks"] == "1" and m["quick"] is True
    assert m["measurement"] == {"warmupSeconds": 0.5, "measureSeconds": 1.0, "repetitions": 1,
                                "repetitionKind": "jvm-fork", "warmupExcluded": True}
    assert m["host"]["logicalCores"] >= 1 and m["jvm"]["version"].startswith("17")
    assert "-Xmx512m" in m["jvm"]["forkInputArguments"]
    assert "allocates one event object per put" in m["notes"]["abqProducer"]


def test_every_listed_file_exists_and_every_file_is_listed(tiny_queues_run):
    m = manifest(tiny_queues_run)
    listed = {f["path"] for f in m["files"]}
    on_disk = {str(p.relative_to(tiny_queues_run)) for p in tiny_queues_run.rglob("*") if p.is_file()} - {"run.json"}
    assert listed == on_disk
    assert {"throughput.csv", "consumers.csv", "timeseries.csv"} <= listed


def test_throughput_is_positive_and_complete_per_variant(tiny_queues_run):
    rows = read_csv(tiny_queues_run / "throughput.csv")
    assert sorted(r["variant"] for r in rows) == sorted(VARIANTS)
    for r in rows:
        assert float(r["events_per_s"]) > 10_000, r
        assert abs(float(r["events_per_s"]) - int(r["events"]) / float(r["seconds"])) < 1
        assert 0.9 < float(r["seconds"]) < 2.0


def test_per_consumer_counts_add_up(tiny_queues_run):
    events = {r["variant"]: int(r["events"]) for r in read_csv(tiny_queues_run / "throughput.csv")}
    consumers = read_csv(tiny_queues_run / "consumers.csv")
    for variant, total in events.items():
        mine = [int(c["events"]) for c in consumers if c["variant"] == variant]
        assert len(mine) == int(variant.split("-")[1])
        assert sum(mine) == total


def test_disruptor_producer_does_not_allocate_per_event(tiny_queues_run):
    for r in read_csv(tiny_queues_run / "throughput.csv"):
        bytes_per_event = float(r["producer_bytes_per_event"])
        if r["variant"].startswith("disruptor"):
            assert bytes_per_event < 0.01, r
        else:  # the original's queue path wraps every value in a new object
            assert bytes_per_event >= 16, r


def test_timeseries_has_throughput_and_cpu(tiny_queues_run):
    rows = read_csv(tiny_queues_run / "timeseries.csv")
    metrics = {(r["series"].split(":")[0] if r["series"].startswith("proc:") else r["series"], r["metric"]) for r in rows}
    assert ("system", "cpu_pct") in metrics and ("system", "steal_pct") in metrics
    assert ("proc", "cpu_pct") in metrics
    measured = [r for r in rows if r["phase"] == "measure" and r["metric"] == "events_per_s"]
    assert measured and all(float(r["value"]) >= 0 for r in measured)
    assert {r["series"] for r in rows if r["series"].startswith("proc:")} >= {"proc:queues", "proc:abq-1/fork1"}


@pytest.fixture(scope="module")
def fixed_rate_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("rate")
    return run_dir_of(bench("run", "queues", "--quick", "--rate", "2000", "--variants", "abq-3,disruptor-1",
                            "--warmup", "0.5", "--measure", "2", "--out", str(out)))


def test_fixed_rate_run_is_invalid_exactly_when_the_producer_fell_behind(fixed_rate_run):
    m = manifest(fixed_rate_run)
    validate(m)
    assert m["notes"]["mode"] == "fixed-rate"
    rows = read_csv(fixed_rate_run / "throughput.csv")
    behind = [r["variant"] for r in rows if float(r["achieved_rate"]) < 0.99 * 2000]
    for r in rows:
        # a late producer catches up in bursts, so a window may also see more than the target
        assert 1000 < float(r["achieved_rate"]) < 4000, r
    assert m["valid"] == (not behind), m["invalidReasons"]
    assert len(m["invalidReasons"]) == len(behind)
    for variant, reason in zip(behind, m["invalidReasons"]):
        assert reason.startswith(variant) and "producer held only" in reason


def test_hlogs_decode_and_corrected_dominates_uncorrected(fixed_rate_run):
    for variant in ("abq-3", "disruptor-1"):
        corrected, n_c = decode_hlog(fixed_rate_run / f"latency/{variant}.fork1.corrected.hlog")
        uncorrected, n_u = decode_hlog(fixed_rate_run / f"latency/{variant}.fork1.uncorrected.hlog")
        assert n_c >= 2 and n_u == n_c
        # one sample per event consumed in the 2 s window at 2000/s (a late producer shifts a few in or out)
        assert 2000 < corrected.get_total_count() < 8000
        assert corrected.get_total_count() == uncorrected.get_total_count()
        for p in (50, 90, 99, 99.9, 100):
            assert corrected.get_value_at_percentile(p) >= uncorrected.get_value_at_percentile(p)


def test_hlogs_decode_with_hdrhistograms_own_log_processor(fixed_rate_run):
    log = fixed_rate_run / "latency/disruptor-1.fork1.corrected.hlog"
    r = subprocess.run(["java", "-cp", str(hdr_jar()), "org.HdrHistogram.HistogramLogProcessor", "-i", str(log)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    total = int(r.stdout.split("Total count    =")[1].split("]")[0])
    expected, _ = decode_hlog(log)
    assert total == expected.get_total_count() > 0


def test_a_fork_that_cannot_start_fails_the_run_with_a_reason(tmp_path):
    r = bench("run", "queues", "--quick", "--variants", "abq-1", "--fork-jvm-args", "-Xmx1k", "--out", str(tmp_path))
    assert r.returncode == 1
    assert "run marked failed" in r.stderr
    (run_dir,) = list(tmp_path.glob("queues/*"))
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "failed" and "exited with code" in m["error"]
    assert (run_dir / "error.txt").exists()
