"""End to end: ./bench run queues writes a run directory that follows the run format."""
import re
import subprocess

import pytest

from conftest import assert_refused, run_once, ROOT, bench, decode_hlog, hdr_jar, manifest, read_csv, run_dir_of, validate

JBANG = ROOT / "env/setup/jbang"

VARIANTS = ["abq-1", "abq-3", "abq-5", "disruptor-1", "disruptor-shard-3", "disruptor-shard-5",
            "disruptor-work-3", "disruptor-work-5"]
QUICK_STRATEGIES = ["blocking", "yielding"]
CELLS = [v if v.startswith("abq") else f"{v}/{s}" for v in VARIANTS for s in ([""] if v.startswith("abq") else QUICK_STRATEGIES)]


def test_manifest_validates_and_says_what_ran(tiny_queues_run):
    m = manifest(tiny_queues_run)
    validate(m)
    assert m["status"] == "complete" and m["error"] is None and m["endedAt"]
    assert m["study"] == "queues" and m["runId"] == tiny_queues_run.name and m["tag"] == "e2e"
    assert m["mode"] == "throughput"
    assert m["variants"] == CELLS
    assert m["params"]["measure"] == "1" and m["params"]["forks"] == "1" and m["quick"] is True
    assert m["measurement"] == {"warmupSeconds": 0.5, "measureSeconds": 1.0, "repetitions": 1,
                                "repetitionKind": "jvm-fork", "warmupExcluded": True}
    assert m["host"]["logicalCores"] >= 1 and m["jvm"]["version"].startswith("17")
    assert "-Xmx512m" in m["jvm"]["forkInputArguments"]
    assert "allocates one event object per put" in m["notes"]["abqProducer"]
    # the sharded design is named for what it is, beside the true work-sharing one
    assert "sharded broadcast" in m["notes"]["disruptor-shard-N"]
    assert "shared counter" in m["notes"]["disruptor-work-N"]
    assert not any("fair" in str(v) for v in m["notes"].values())
    assert "busy-spin" in m["notes"]["waitStrategies"], "the quick run says which strategy it leaves out"
    # where the run was, kept once it ended: every cell's fork counted, nothing left to wait for
    assert m["progress"]["unit"] == "cell" and m["progress"]["done"] == m["progress"]["total"] == len(CELLS)
    assert m["progress"]["endsAt"] is None


def test_every_listed_file_exists_and_every_file_is_listed(tiny_queues_run):
    m = manifest(tiny_queues_run)
    listed = {f["path"] for f in m["files"]}
    on_disk = {str(p.relative_to(tiny_queues_run)) for p in tiny_queues_run.rglob("*") if p.is_file()} - {"run.json"}
    assert listed == on_disk
    assert {"throughput.csv", "consumers.csv", "timeseries.csv"} <= listed


def test_the_wait_strategy_is_a_factor_of_every_disruptor_variant(tiny_queues_run):
    rows = read_csv(tiny_queues_run / "throughput.csv")
    assert [r["cell"] for r in rows] == CELLS
    for r in rows:
        if r["variant"].startswith("abq"):
            assert r["cell"] == r["variant"] and r["wait_strategy"] == ""
        else:
            assert r["cell"] == f'{r["variant"]}/{r["wait_strategy"]}' and r["wait_strategy"] in QUICK_STRATEGIES
    for v in VARIANTS[3:]:
        assert {r["wait_strategy"] for r in rows if r["variant"] == v} == set(QUICK_STRATEGIES), v


def test_throughput_is_positive_per_cell(tiny_queues_run):
    for r in read_csv(tiny_queues_run / "throughput.csv"):
        assert float(r["events_per_s"]) > 10_000, r
        assert abs(float(r["events_per_s"]) - int(r["events"]) / float(r["seconds"])) < 1
        assert 0.9 < float(r["seconds"]) < 2.0


def test_every_event_is_consumed_exactly_once_and_per_consumer_counts_add_up(tiny_queues_run):
    assert manifest(tiny_queues_run)["valid"], manifest(tiny_queues_run)["invalidReasons"]
    consumers = read_csv(tiny_queues_run / "consumers.csv")
    for row in read_csv(tiny_queues_run / "throughput.csv"):
        mine = [c for c in consumers if c["cell"] == row["cell"]]
        assert len(mine) == int(row["consumers"]) == int(row["variant"].rsplit("-", 1)[1])
        assert sum(int(c["events"]) for c in mine) == int(row["events"])
        assert row["exactly_once"] == "true", row
        assert sum(int(c["events_total"]) for c in mine) == int(row["consumed_total"]) == int(row["produced_total"]) > int(row["events"])


@pytest.fixture(scope="module")
def tiny_ring_run(tmp_path_factory):
    """Work-sharing and sharded consumers on a 4-slot ring: the producer wraps constantly, so a wrong gate loses or repeats events."""
    return run_once(tmp_path_factory, "queues", "--quick", "--variants", "disruptor-work-3,disruptor-work-5,disruptor-shard-3",
                    "--wait-strategy", "blocking,busy-spin", "--capacity", "4", "--warmup", "0.2", "--measure", "0.5")


def test_work_sharing_delivers_every_event_exactly_once(tiny_ring_run):
    m = manifest(tiny_ring_run)
    assert m["valid"], m["invalidReasons"]
    consumers = read_csv(tiny_ring_run / "consumers.csv")
    rows = read_csv(tiny_ring_run / "throughput.csv")
    assert {r["cell"] for r in rows} == {f"{v}/{s}" for v in ("disruptor-work-3", "disruptor-work-5", "disruptor-shard-3")
                                         for s in ("blocking", "busy-spin")}
    for row in rows:
        totals = [int(c["events_total"]) for c in consumers if c["cell"] == row["cell"]]
        assert sum(totals) == int(row["produced_total"]) == int(row["consumed_total"]) > 0, row
        assert row["exactly_once"] == "true", row
        if row["variant"].startswith("disruptor-shard"):
            # sharded by sequence: each handler's share is fixed, whoever is faster
            assert max(totals) - min(totals) <= 1, totals
        else:
            assert sum(1 for t in totals if t > 0) >= 2, f"work is shared, not taken by one consumer: {totals}"


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
    # with a 1 s window the first per-second rate may only land in the drain that follows it
    rates = [r for r in rows if r["phase"] in ("measure", "drain") and r["metric"] == "events_per_s"]
    assert rates and all(float(r["value"]) >= 0 for r in rates)
    assert {r["series"] for r in rows if r["series"].startswith("proc:")} >= {"proc:queues", "proc:abq-1/fork1",
                                                                             "proc:disruptor-work-3/yielding/fork1"}
    # every fork reports the CPU time of its JIT and its GC time, as the servers under test do, so its warmth can be judged
    jit = {r["series"] for r in rows if r["metric"] == "jit_ms_per_s"}
    assert jit and all(s.startswith("jvm:") and s.endswith("/fork1") for s in jit), jit
    assert all(float(r["value"]) >= 0 for r in rows if r["metric"] in ("jit_ms_per_s", "gc_ms_per_s"))


@pytest.fixture(scope="module")
def fixed_rate_run(tmp_path_factory):
    # 2_000: Cli normalises the underscore once, so the forks read the same number
    return run_once(tmp_path_factory, "queues", "--quick", "--rate", "2_000", "--variants", "abq-3,disruptor-1", "--wait-strategy", "yielding",
                    "--warmup", "0.5", "--measure", "2")


def test_fixed_rate_run_is_invalid_exactly_when_the_producer_fell_behind(fixed_rate_run):
    m = manifest(fixed_rate_run)
    validate(m)
    assert m["mode"] == "fixed-rate" and m["params"]["rate"] == "2000"
    rows = read_csv(fixed_rate_run / "throughput.csv")
    assert [r["cell"] for r in rows] == ["abq-3", "disruptor-1/yielding"]
    expected = []
    for r in rows:
        # a late producer catches up in bursts, so a window may also see more than the target
        assert 1000 < float(r["achieved_rate"]) < 4000, r
        if float(r["achieved_rate"]) < 0.99 * 2000:
            expected.append(f'{r["cell"]} fork 1: producer held only')
        if r["exactly_once"] != "true":
            expected.append(f'{r["cell"]} fork 1: consumers took')
        if r["latency_samples"] != r["scheduled_in_window"]:
            expected.append(f'{r["cell"]} fork 1: ')
    assert m["valid"] == (not expected), m["invalidReasons"]
    assert len(m["invalidReasons"]) == len(expected)
    for prefix, reason in zip(expected, m["invalidReasons"]):
        assert reason.startswith(prefix), (prefix, reason)


def files_of(m, series, timing="corrected"):
    (f,) = [f for f in m["files"] if f["kind"] == "hlog" and f["series"] == series and f["timing"] == timing]
    return f


def test_hlogs_decode_and_corrected_dominates_uncorrected(fixed_rate_run):
    m = manifest(fixed_rate_run)
    for row in read_csv(fixed_rate_run / "throughput.csv"):
        cell = row["cell"]
        c_file, u_file = files_of(m, cell), files_of(m, cell, "uncorrected")
        assert c_file["cell"] == cell and c_file["fork"] == 1
        corrected, n_c = decode_hlog(fixed_rate_run / c_file["path"])
        uncorrected, n_u = decode_hlog(fixed_rate_run / u_file["path"])
        assert n_c >= 2 and n_u == n_c
        # every event scheduled in the 2 s window at 2000/s is one sample, however late it arrived
        assert corrected.get_total_count() == int(row["latency_samples"])
        assert int(row["scheduled_in_window"]) == 4000
        assert corrected.get_total_count() == uncorrected.get_total_count()
        for p in (50, 90, 99, 99.9, 100):
            assert corrected.get_value_at_percentile(p) >= uncorrected.get_value_at_percentile(p)


def test_lateness_is_its_own_series_sharing_the_window(fixed_rate_run):
    m = manifest(fixed_rate_run)
    for row in read_csv(fixed_rate_run / "throughput.csv"):
        cell = row["cell"]
        e2e, late = files_of(m, cell), files_of(m, f"{cell}/lateness")
        assert late["cell"] == cell and files_of(m, f"{cell}/lateness", "uncorrected")
        assert late["window"] == e2e["window"], "one window by intended time for all logs of a step"
        assert e2e["window"]["endMs"] - e2e["window"]["startMs"] == pytest.approx(2000, abs=1)
        lateness, _ = decode_hlog(fixed_rate_run / late["path"])
        delivered, _ = decode_hlog(fixed_rate_run / e2e["path"])
        assert lateness.get_total_count() == delivered.get_total_count()
        # per event, sent - intended <= consumed - intended, so every percentile of lateness is at most e2e's
        for p in (50, 90, 99, 100):
            assert lateness.get_value_at_percentile(p) <= delivered.get_value_at_percentile(p)


def test_every_one_consumer_cell_is_calibrated_against_the_minimal_program(tiny_queues_run):
    """The issue's check, in every run: each 1P1C cell's fork beside a minimal program of the same topology."""
    m = manifest(tiny_queues_run)
    assert "Minimal1P1C.java" in m["notes"]["calibration"]
    rows = read_csv(tiny_queues_run / "calibration.csv")
    assert [r["cell"] for r in rows] == ["abq-1", "disruptor-1/blocking", "disruptor-1/yielding"]
    harness = {(r["cell"], r["fork"]): float(r["events_per_s"]) for r in read_csv(tiny_queues_run / "throughput.csv")}
    for r in rows:
        assert float(r["minimal_events_per_s"]) > 10_000, r
        assert r["minimal_exactly_once"] == "true", r
        assert float(r["harness_events_per_s"]) == harness[(r["cell"], r["fork"])], "the same fork as throughput.csv"
        # each value is written to 10 significant digits, so the ratio agrees to about 1e-9 of itself
        assert float(r["harness_over_minimal"]) == pytest.approx(float(r["harness_events_per_s"]) / float(r["minimal_events_per_s"]), rel=1e-8)
    logs = {f["path"] for f in m["files"] if f["kind"] == "log"}
    assert "logs/minimal.disruptor-1.yielding.fork1.log" in logs, logs


def test_forks_and_minimal_program_tenure_the_queue_before_they_measure(tmp_path):
    """Both sides collect once before any thread starts, so a queue's array is old in both (a young one skips G1's
    card-marking barrier until a collection promotes it, which moved abq-1's harness/minimal from 1.0 to 0.7)."""
    logs = tmp_path / "gc"
    logs.mkdir()
    r = bench("run", "queues", "--variants", "abq-1", "--quick", "--warmup", "0.2", "--measure", "0.3", "--out", str(tmp_path),
              "--fork-jvm-args", f"-Xms64m -Xmx64m -Xlog:gc:file={logs}/gc-%p.log")
    run_dir_of(r)
    texts = [f.read_text() for f in logs.glob("gc-*.log")]
    assert len(texts) == 2, "the fork and the minimal program each log"
    for text in texts:
        assert "Pause Full (System.gc())" in text, text


def test_profile_records_each_fork_over_its_measured_window_only(tmp_path):
    """--profile: each fork JVM records itself with JFR from the moment it measures until it stops measuring, its
    recording names the cell and fork it measured, and each fork has a plain twin that records nothing, so the run
    says what recording cost."""
    r = bench("run", "queues", "--variants", "abq-1", "--quick", "--warmup", "1", "--measure", "1", "--calibration", "off", "--profile",
              "--out", str(tmp_path))
    run = run_dir_of(r)
    m = manifest(run)
    validate(m)
    assert m["params"]["profile"] == "true"
    forks = read_csv(run / "throughput.csv")
    profiles = [f for f in m["files"] if f["kind"] == "profile"]
    assert len(profiles) == len(forks) >= 1, "one recording per fork, each fork measured once"
    for f in profiles:
        data = (run / f["path"]).read_bytes()
        assert data[:4] == b"FLR\0", "a JDK Flight Recorder file"
        assert f["series"].startswith("abq-1/fork") and f["cell"] == "abq-1" and f["fork"] >= 1
        length = f["window"]["endMs"] - f["window"]["startMs"]
        assert 500 <= length < 1900, f"the measured second, not the warm-up before it: {length} ms"
    cost = read_csv(run / "profiling.csv")
    assert [r["fork"] for r in cost] == [r["fork"] for r in forks], "a plain twin beside every profiled fork"
    assert all(float(r["plain_events_per_s"]) > 0 and r["profiled_events_per_s"] == t["events_per_s"] for r, t in zip(cost, forks))
    assert not any(f["series"].endswith("/plain") for f in profiles), "the twin records nothing"


def test_the_minimal_program_alone_counts_every_event(tmp_path):
    """Minimal1P1C runs by hand too, as a user would check a figure: one line, every event drained."""
    for transport, strategy in (("disruptor", "yielding"), ("abq", "-")):
        r = subprocess.run([str(JBANG), "--quiet", str(ROOT / "scripts/queues/Minimal1P1C.java"), transport, strategy, "0.2", "0.5", "1024"],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        fields = dict(kv.split("=") for kv in r.stdout.split())
        assert float(fields["events_per_s"]) > 10_000 and int(fields["produced"]) == int(fields["consumed"]) > 0, r.stdout
    bad = subprocess.run([str(JBANG), "--quiet", str(ROOT / "scripts/queues/Minimal1P1C.java"), "disruptor"], capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2 and bad.stderr.startswith("usage: Minimal1P1C"), bad.stderr


def test_calibration_off_and_fixed_rate_runs_write_none(fixed_rate_run):
    assert not (fixed_rate_run / "calibration.csv").exists()


def test_throughput_mode_writes_no_latency_logs(tiny_queues_run):
    assert not [f for f in manifest(tiny_queues_run)["files"] if f["kind"] == "hlog"]


def test_every_fork_keeps_a_gc_log(tiny_queues_run):
    """Unified GC logging (-Xlog:gc) for every JVM under test, listed under its JVM's name: a reader sees each pause."""
    m = manifest(tiny_queues_run)
    forks = {f"{r['cell']}/fork{r['fork']}" for r in read_csv(tiny_queues_run / "throughput.csv")}
    logs = {f["series"]: f["path"] for f in m["files"] if f["kind"] == "log" and f["path"].startswith("logs/gc/")}
    assert forks <= set(logs), f"a GC log per fork: {sorted(forks - set(logs))} have none"
    text = (tiny_queues_run / logs[sorted(forks)[0]]).read_text()
    assert re.search(r"\[gc\s*\] GC\(\d+\) Pause", text), text[:2000]


def test_hlogs_decode_with_hdrhistograms_own_log_processor(fixed_rate_run):
    log = fixed_rate_run / files_of(manifest(fixed_rate_run), "disruptor-1/yielding")["path"]
    r = subprocess.run(["java", "-cp", str(hdr_jar()), "org.HdrHistogram.HistogramLogProcessor", "-i", str(log)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    total = int(r.stdout.split("Total count    =")[1].split("]")[0])
    expected, _ = decode_hlog(log)
    assert total == expected.get_total_count() > 0


BAD_OPTIONS = [
    (["--capacity", "2147483648"], "--capacity"),   # overflowed an int in the fork
    (["--capacity", "1"], "--capacity"),
    (["--measure", "0"], "--measure"),              # a "complete" run with an empty window
    (["--measure", "Infinity"], "--measure"),       # never ends
    (["--measure", "NaN"], "--measure"),
    (["--warmup", "-1"], "--warmup"),
    (["--rate", "-5"], "--rate"),
    (["--rate", "1e9"], "--rate"),
    (["--forks", "0"], "--forks"),
    (["--wait-strategy", "yielding,spin"], "--wait-strategy"),
    (["--variants", "disruptor-3"], "--variants"),
    (["--keep-warmup"], "--keep-warmup"),           # latency is only recorded at a fixed rate
]


@pytest.mark.parametrize("args, needle", BAD_OPTIONS)
def test_bad_input_is_refused_in_one_line(tmp_path_factory, args, needle):
    assert_refused("queues", ["--quick", *args], needle, tmp_path_factory, [["--quick", *a] for a, _ in BAD_OPTIONS])


def test_bad_input_is_one_line_and_exit_2_before_any_run_folder(tmp_path):
    args, needle = BAD_OPTIONS[0]
    r = bench("run", "queues", "--quick", *args, "--out", str(tmp_path))
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    lines = [l for l in r.stderr.splitlines() if l.strip() and not l.startswith("[jbang]")]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], r.stderr
    assert "Exception" not in r.stderr and "\tat " not in r.stderr
    assert not list(tmp_path.glob("queues/*")), "no run folder for a typo"


def test_a_fork_that_cannot_start_fails_the_run_with_a_reason(tmp_path):
    r = bench("run", "queues", "--quick", "--variants", "abq-1", "--fork-jvm-args", "-Xmx1k", "--out", str(tmp_path))
    assert r.returncode == 1
    assert "run marked failed" in r.stderr
    (run_dir,) = list(tmp_path.glob("queues/*"))
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "failed" and "exited with code" in m["error"]
    assert (run_dir / "error.txt").exists()
