"""The messaging study: quick sweeps of every cell (Kafka under each idle-poll policy, Chronicle Queue) with exact
delivery checks in one window per step, verdicts and capacity by rule, real components cleaned up after completion
and interruption, bad options refused before any run folder, and a clear failure for an unreachable cluster."""
import json
import os
import re
import secrets
import signal
import subprocess
import threading
import time

import pytest

from conftest import assert_refused, ROOT, free_port, port_open, assert_failed_run_with_one_line, leftovers, bench, decode_hlog, interrupt_run, manifest, read_csv, run_dir_of, validate, validate_notes
from shared_runs import QUICK as SHARED, shared_quick_run

# the shared run's options for runs of a test's own, which measure something else than what recording costs
QUICK = [a for a in SHARED["messaging"] if a != "--profile"]


def broker_address(m):
    return re.search(r"127\.0\.0\.1:\d+", m["notes"]["kafkaBroker"]).group(0)


CELLS = ["kafka/original", "kafka/park", "kafka/blocking", "chronicle/original"]


@pytest.fixture(scope="module")
def quick_sweep(tmp_path_factory):
    """The session's quick messaging run (every policy), which the notebook's test reads too."""
    return shared_quick_run(tmp_path_factory, "messaging").dir


def latency_files(m, cell, series, timing="corrected"):
    """The hlogs of one latency series of a step, found by the manifest's fields (never by file name)."""
    return [f for f in m["files"] if f["kind"] == "hlog" and f["cell"] == cell and f["series"] == f"{cell}/{series}" and f["timing"] == timing]


def test_every_policy_is_a_cell_and_capacity_follows_the_verdicts(quick_sweep):
    m = manifest(quick_sweep)
    validate(m)
    assert validate_notes(quick_sweep) >= 3, "the notes the notebook reads hold to their declaration"
    assert m["status"] == "complete" and m["mode"] == "sweep" and m["variants"] == CELLS
    assert set(m["notes"]["kafkaPoll"]) == {"original", "park", "blocking"}
    rows = read_csv(quick_sweep / "sweep.csv")
    assert [r["variant"] for r in rows if r["instances"] == "1"] == CELLS, "every cell starts at 1 instance, in order"
    for r in rows:
        assert r["cell"] == f"{r['variant']}/n{r['instances']}" and r["variant"] == f"{r['system']}/{r['policy']}"
    capacity = {r["cell"]: r for r in read_csv(quick_sweep / "capacity.csv")}
    assert list(capacity) == CELLS
    for cell, c in capacity.items():
        steps = [r for r in rows if r["variant"] == cell]
        assert int(c["steps"]) == len(steps) and c["stop_reason"]
        assert c["repetition"] == "1" and c["rate_per_chain"] == "1000" and all(s["rate_per_chain"] == "1000" for s in steps)
        met = [int(s["instances"]) for s in steps if s["verdict"] == "met"]
        if met:
            assert int(c["capacity_instances"]) == max(met), cell
            assert float(c["capacity_msgs_per_s"]) == 1000 * max(met), "capacity in msg/s is chains x rate per chain"
        elif steps[0]["verdict"] == "missed":  # a plain miss at 1: below one chain, never a 0
            assert c["capacity_instances"] == "" and c["first_missed_instances"] == "1" and c["capacity_status"] == "wall", cell
        else:  # not measurable or invalid at 1 instance: never a 0
            assert c["capacity_instances"] == "" and c["capacity_status"] == "not measurable on this host", cell
        if c["capacity_status"] == "wall":  # the bracket closes at the smallest count above the last met that did not meet
            above = [int(s["instances"]) for s in steps if s["verdict"] != "met" and int(s["instances"]) > max(met, default=0)]
            assert int(c["first_missed_instances"]) == min(above) and float(c["first_missed_msgs_per_s"]) == 1000 * min(above), cell


def test_verdicts_follow_the_rule(quick_sweep):
    cores = manifest(quick_sweep)["host"]["logicalCores"]
    for r in read_csv(quick_sweep / "sweep.csv"):
        assert r["duplicates"] == r["out_of_order"] == r["bad_hops"] == "0", r
        assert int(r["lost"]) == int(r["window_sent"]) - int(r["window_delivered"]), r
        held = float(r["achieved_rate"]) >= 0.99 * float(r["target_rate"]) and r["window_sent"] == r["window_expected"]
        valid = held and r["lost"] == "0"
        assert (r["valid"] == "true") == valid and (r["invalid_reason"] == "") == valid, r
        if not valid:
            assert r["verdict"] == "invalid", r
            continue
        p999, saturated = float(r["p99_9_ms"]), float(r["cpu_system_pct"]) >= 0.9 * 100 * cores
        assert (r["saturated"] == "true") == saturated, r
        expected = "met" if p999 <= 100 else "not measurable on this host" if saturated or float(r["steal_pct"]) > 20 else "missed"
        assert r["verdict"] == expected and (r["meets_slo"] == "true") == (expected == "met"), r
        if r["system"] == "chronicle":
            assert int(r["window_expected"]) > 0 and r["window_delivered"] == r["window_expected"], r


def test_one_window_per_step_counts_every_message_intended_in_it(quick_sweep):
    m = manifest(quick_sweep)
    for r in read_csv(quick_sweep / "sweep.csv"):
        (e2e,) = latency_files(m, r["cell"], "e2e")
        (raw,) = latency_files(m, r["cell"], "e2e", "uncorrected")
        (hop1,) = latency_files(m, r["cell"], "hop1")
        assert e2e["fork"] == 1
        # the logs of a step share one window by intended time, as long as --measure
        assert e2e["window"] == raw["window"] == hop1["window"], r["cell"]
        assert abs(e2e["window"]["endMs"] - e2e["window"]["startMs"] - 2000) <= 2
        corrected, _ = decode_hlog(quick_sweep / e2e["path"])
        uncorrected, _ = decode_hlog(quick_sweep / raw["path"])
        first_hop, _ = decode_hlog(quick_sweep / hop1["path"])
        # every message intended in the window and delivered is timed exactly once, however late it arrived
        assert corrected.get_total_count() == uncorrected.get_total_count() == int(r["window_delivered"]), r
        assert first_hop.get_total_count() >= int(r["window_delivered"])
        if corrected.get_total_count():
            p999 = corrected.get_value_at_percentile(99.9) / 1e6
            assert abs(p999 - float(r["p99_9_ms"])) <= 0.01 * p999 + 0.01, (p999, r["p99_9_ms"])
            assert corrected.get_value_at_percentile(99.9) >= uncorrected.get_value_at_percentile(99.9)


def test_warmup_is_recorded_per_step_and_quick_numbers_are_cold(quick_sweep):
    m = manifest(quick_sweep)
    assert m["notes"]["coldWarmup"] is True and "cold" in m["notes"]["coldWarmupReason"]
    started = m["startedAt"]
    rows = read_csv(quick_sweep / "sweep.csv")
    for r in rows:
        # at least --warmup (1 s), at most --warmup-max (3 s), whole seconds of samples
        assert 1 <= float(r["warmup_s"]) <= 3.5, r
        assert int(r["warmup_ended_ms"]) > 0
    assert sorted(m["notes"]["warmupNeverSettled"]) == sorted(r["cell"] for r in rows if r["warmup_settled"] == "false")
    assert all(int(a["warmup_ended_ms"]) < int(b["warmup_ended_ms"]) for a, b in zip(rows, rows[1:])), "steps run one after another"
    assert started


def test_kafka_idle_policies_wait_as_declared_on_an_idle_topic():
    """original's poll(ofNanos(125 us)) becomes a 0 ms timer: its thread never gives up the CPU while idle (it spins).
    park and blocking do. Counted as the thread's voluntary context switches, which a busy machine does not change,
    plus lower bounds on the wait that no machine can beat; no speed target."""
    r = bench("run", "messaging", "--kafka-poll-probe", timeout=300)
    assert r.returncode == 0, r.stderr
    probe = {p["policy"]: p for p in map(json.loads, (l for l in r.stdout.splitlines() if l.startswith("{")))}
    assert set(probe) == {"original", "park", "blocking"}
    assert probe["original"]["voluntarySwitchesPerPoll"] < 0.1, probe["original"]
    assert probe["park"]["voluntarySwitchesPerPoll"] >= 0.5 and probe["park"]["medianPollUs"] >= 125, probe["park"]
    assert probe["blocking"]["voluntarySwitchesPerPoll"] >= 0.5 and probe["blocking"]["medianPollUs"] >= 95_000, probe["blocking"]


def test_cpu_is_measured_per_process(quick_sweep):
    for r in read_csv(quick_sweep / "sweep.csv"):
        assert float(r["cpu_app_pct"]) > 0 and float(r["cpu_system_pct"]) > 0
        assert float(r["cpu_driver_pct"]) > 0
        if r["system"] == "kafka":
            assert float(r["cpu_broker_pct"]) > 0, "the broker is a separate JVM, measured apart"
        else:
            assert r["cpu_broker_pct"] == ""
        if int(r["window_delivered"]) > 0:
            assert float(r["cpu_us_per_msg"]) > 0


def recorded_during(m, window):
    """The JVMs (the manifest's series) whose recordings overlap window."""
    return {p["series"] for p in m["files"] if p["kind"] == "profile" and p["window"]["startMs"] < window["endMs"] and window["startMs"] < p["window"]["endMs"]}


def test_profile_records_every_jvm_under_test_and_measures_its_cost_beside_a_plain_twin(quick_sweep):
    """--profile (the shared run has it): each step's JVM and the broker record their measured windows; what recording
    costs is one chain of the first cell run recorded and plain (after a discarded step that warms its broker),
    compared by CPU per message, and the plain step is in no recording, the broker's included (the run holds
    recordings while it runs)."""
    m = manifest(quick_sweep)
    profiles = [f for f in m["files"] if f["kind"] == "profile"]
    assert {r["cell"] for r in read_csv(quick_sweep / "sweep.csv")} <= {p["series"] for p in profiles}, "every step's JVM recorded itself"
    assert all((quick_sweep / p["path"]).stat().st_size > 0 for p in profiles)
    [cost] = read_csv(quick_sweep / "profiling.csv")
    assert (cost["cell"], cost["pair"], cost["instances"], cost["rate_per_chain"]) == (CELLS[0], "1", "1", "1000")
    a, b = float(cost["profiled_cpu_us_per_msg"]), float(cost["plain_cpu_us_per_msg"])
    assert a > 0 and b > 0 and float(cost["profiled_over_plain"]) == pytest.approx(a / b)
    step = {side: f"{CELLS[0]}/n1/profiling-{side}" for side in ("profiled-p1", "plain-p1", "warmup")}
    window = {side: latency_files(m, s, "e2e")[0]["window"] for side, s in step.items()}
    assert {"kafka-broker", step["profiled-p1"]} <= recorded_during(m, window["profiled-p1"])
    assert recorded_during(m, window["plain-p1"]) == set(), "the plain twin records nothing"
    assert recorded_during(m, window["warmup"]) == set(), "the discarded step that warms the broker first records nothing"
    assert "pair" in m["notes"]["profilingCost"]
    validate_notes(quick_sweep)


def test_the_embedded_brokers_login_is_on_no_command_line_and_in_no_file(tmp_path_factory):
    """The broker asks for SASL/PLAIN with a password made per broker: it reaches the broker and the forks over stdin
    only, so no process's command line and no file of the run holds a JAAS login."""
    run = shared_quick_run(tmp_path_factory, "messaging")
    broker = [c for c in run.cmdlines.values() if "--kafka-broker" in c]
    assert broker, "the run started a broker"
    assert not [c for c in run.cmdlines.values() if "PlainLoginModule" in c or "sasl" in c.lower()]
    assert "SASL/PLAIN with a random password per broker" in manifest(run.dir)["notes"]["kafka"]
    for f in run.dir.rglob("*"):
        assert not f.is_file() or b"PlainLoginModule" not in f.read_bytes(), f


def test_nothing_is_left_after_a_completed_run(quick_sweep):
    m = manifest(quick_sweep)
    assert leftovers(quick_sweep) == []
    assert not (quick_sweep / "scratch").exists(), "broker logs and queue files are removed"
    assert not port_open(broker_address(m)), "the broker's port is released"
    assert "analytics disabled" in m["notes"]["chronicle"]
    assert "-Dchronicle.analytics.disable=true" in m["jvm"]["forkInputArguments"]


BAD_OPTIONS = [
    (["--rate-per-chain", "0"], "--rate-per-chain expects auto or an integer from 1 to 1000000, got '0'"),
    (["--rate-per-chain", "auto", "--systems", "chronicle"], "--rate-per-chain auto calibrates on a Kafka chain"),
    (["--cpus", "broker=0 disk=1"], "--cpus expects groups like 'broker=0 chains=1'"),
    (["--cpus", "chains=1-"], "'1-' for chains is not a CPU list"),
    (["--cpus", "broker=4096"], "broker asks for CPU(s) 4096, but this machine has"),
    (["--chronicle-grid", "10,0"], "--chronicle-grid expects"),
    (["--repetitions", "0"], "--repetitions expects an integer from 1"),
    (["--measure", "0"], "--measure expects a number of seconds >= 0.1"),
    (["--measure", "Infinity"], "--measure expects a number of seconds"),
    (["--max-instances", "2147483648"], "--max-instances expects an integer from 1 to 10000"),
    (["--kafka-poll", "original,spin"], "--kafka-poll expects one or more of original, park, blocking"),
    (["--warmup", "30", "--warmup-max", "10"], "--warmup-max (10 s) must be at least --warmup (30 s)"),
    (["--replication-factor", "3"], "--replication-factor above 1 needs --bootstrap-servers"),
    (["--bootstrap-servers", "kafka1"], "--bootstrap-servers expects host:port"),
    (["--kafka-config", "client.properties"], "--kafka-config is for a cluster of yours (--bootstrap-servers)"),
    (["--bootstrap-servers", "127.0.0.1:9092", "--kafka-config", "/nonexistent/client.properties"], "option --kafka-config: no such file"),
    (["--slo-ms", "1e3"], "--slo-ms expects an integer"),
    (["--budget", "3"], "--budget (3 s) cannot fit one step"),
]


@pytest.mark.parametrize("args, message", BAD_OPTIONS)
def test_bad_options_are_refused_in_one_line(tmp_path_factory, args, message):
    assert_refused("messaging", ["--quick", *args], message, tmp_path_factory, [["--quick", *a] for a, _ in BAD_OPTIONS])


def test_bad_options_are_one_line_and_exit_2_before_any_run_folder(tmp_path):
    args, message = BAD_OPTIONS[0]
    r = bench("run", "messaging", "--quick", "--out", str(tmp_path), *args, timeout=120)
    assert r.returncode == 2, r.stderr
    errors = [l for l in r.stderr.splitlines() if l.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], r.stderr
    assert "Exception" not in r.stderr and "\tat " not in r.stderr
    assert not (tmp_path / "messaging").exists()


def test_calibrated_rate_repeated_searches_and_pinned_processes(tmp_path):
    # one Kafka policy and Chronicle, twice each, at a calibrated rate, the broker on CPU 0 and the chains on CPU 1
    run = run_dir_of(bench("run", "messaging", *QUICK, "--kafka-poll", "blocking", "--rate-per-chain", "auto", "--repetitions", "2",
                           "--cpus", "broker=0 chains=1", "--chronicle-grid", "1,3", "--max-instances", "3", "--out", str(tmp_path), timeout=900))
    m = manifest(run)
    validate(m)
    calibration = read_csv(run / "calibration.csv")
    notes = m["notes"]
    rate = notes["ratePerChain"]
    assert [int(r["rate_per_chain"]) for r in calibration] == notes["calibration"]["tried"]
    assert calibration[0]["rate_per_chain"] == "1000", "the calibration starts at the published rate"
    tried = [int(r["rate_per_chain"]) for r in calibration]
    assert tried == sorted(tried, reverse=True) and len(set(tried)) == len(tried), "each try is lower than the last"
    chosen = [r for r in calibration if r["chosen"] == "true"]
    assert len(chosen) == 1 and int(chosen[0]["rate_per_chain"]) == rate
    if notes["calibration"]["fitted"]:
        assert chosen[0]["fits"] == "true" and float(chosen[0]["cpu_tested_pct"]) <= float(chosen[0]["target_pct"])
        assert all(r["fits"] == "false" for r in calibration[:-1]), "the first rate that fits is chosen"
    capacity = read_csv(run / "capacity.csv")
    assert [(r["cell"], r["repetition"]) for r in capacity] == [
        ("kafka/blocking", "1"), ("chronicle/original", "1"), ("kafka/blocking", "2"), ("chronicle/original", "2")], "repetitions interleave cells"
    assert all(int(r["rate_per_chain"]) == rate for r in capacity)
    for r in read_csv(run / "sweep.csv"):
        suffix = "" if r["repetition"] == "1" else "/r" + r["repetition"]
        assert r["cell"] == f"{r['variant']}/n{r['instances']}{suffix}" and int(r["rate_per_chain"]) == rate
    chronicle_counts = [int(r["instances"]) for r in read_csv(run / "sweep.csv") if r["variant"] == "chronicle/original" and r["repetition"] == "1"]
    assert chronicle_counts[:2] == [1, 3] or chronicle_counts == [1], "Chronicle climbs its grid"
    assert "broker on CPU(s) 0" in notes["placement"] and "chains on CPU(s) 1" in notes["placement"]
    assert notes["kafkaBroker"].endswith("CPUs 0"), "the broker ran on CPU 0 only, as the kernel says"
    assert set(notes["placementSeen"].values()) == {"1"}, notes["placementSeen"]
    assert any(step.startswith("kafka/blocking/n1/calibration-") for step in notes["placementSeen"]), "calibration steps are pinned too"
    assert leftovers(run) == []


def test_one_jvm_per_instance(tmp_path):
    # a huge SLO makes the sweep try both steps whatever this machine's latency is; two new JVMs beside another test
    # may deliver nothing in 3 s (CI: a step rightly invalid, "nothing completed in the window"), so the warm-up rule
    # gets up to 20 s here: it still ends as soon as delivery is steady
    args = QUICK[:]
    args[args.index("--warmup-max") + 1] = "20"
    run = run_dir_of(bench("run", "messaging", *args, "--systems", "chronicle", "--isolation", "jvm", "--slo-ms", "100000",
                           "--out", str(tmp_path)))
    m = manifest(run)
    rows = read_csv(run / "sweep.csv")
    # a saturated machine does not end the search (how many chains fit on this host): both steps run
    assert [r["instances"] for r in rows] == ["1", "2"]
    assert all(r["isolation"] == "jvm" and r["lost"] == "0" for r in rows)
    assert all(int(r["window_sent"]) > 0 for r in rows), [(r["instances"], r["invalid_reason"]) for r in rows]
    logs = latency_files(m, "chronicle/original/n2", "e2e")
    assert sorted(f["fork"] for f in logs) == [1, 2]
    for f in logs:
        merged, _ = decode_hlog(run / f["path"])
        assert merged.get_total_count() > 0
    assert "one JVM per instance" in m["notes"]["isolation"]


def test_interrupted_kafka_run_leaves_no_broker_port_or_files(tmp_path):
    def measuring():
        for log in tmp_path.glob("messaging/*/latency/kafka.blocking.n1.e2e.fork1.corrected.hlog"):
            if any(line[:1].isdigit() for line in log.read_text().splitlines()):
                run_dir = log.parents[1]
                address = broker_address(manifest(run_dir))
                assert port_open(address)
                return run_dir, address
        return None

    code, err, run_dir, address = interrupt_run(["messaging", "--quick", "--systems", "kafka", "--kafka-poll", "blocking", "--warmup", "1", "--measure", "30",
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
    assert_failed_run_with_one_line(r, tmp_path, "messaging", "cannot reach Kafka at 127.0.0.1:1")


def test_a_kafka_config_beyond_access_settings_or_with_a_bad_value_is_refused_in_one_line(tmp_path):
    for text, message in (("acks=all\n", "sets acks; it takes only security.protocol, sasl.* and ssl.* settings (give --acks)"),
                          ("batch.size=1\n", "sets batch.size; it takes only"), ("# nothing\n", "holds no settings"),
                          ("security.protocol=SASL_PLAIN\n", "Invalid value SASL_PLAIN for configuration security.protocol")):
        config = tmp_path / "client.properties"
        config.write_text(text)
        r = bench("run", "messaging", "--quick", "--out", str(tmp_path), "--bootstrap-servers", "127.0.0.1:9092", "--kafka-config", str(config), timeout=120)
        errors = [l for l in r.stderr.splitlines() if l.startswith("error:")]
        assert r.returncode == 2 and len(errors) == 1 and message in errors[0], r.stderr
        assert not (tmp_path / "messaging").exists()


@pytest.fixture
def sasl_cluster(tmp_path):
    """A Kafka cluster of the user's that asks for SASL/PLAIN: the kit's own broker started by hand, as a user would
    start theirs, with a password the test knows (handed over stdin, as a run does). Yields (port, password). A client
    without the login gets nothing from it, which is what keeps another local user off a run's embedded broker."""
    cp = subprocess.run([str(ROOT / "env/setup/jbang"), "info", "classpath", str(ROOT / "scripts/messaging/Messaging.java")],
                        capture_output=True, text=True, timeout=300)
    assert cp.returncode == 0, cp.stderr
    port, password = free_port(), secrets.token_hex(16)
    broker = subprocess.Popen(["java", "-Xmx512m", "-cp", cp.stdout.strip(), "perfkit.harness.process.ChildProcess", "perfkit.messaging.Messaging",
                               "--kafka-broker", str(tmp_path / "cluster/logs"), str(port), str(free_port())],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        broker.stdin.write(json.dumps({"password": password}) + "\n")
        broker.stdin.flush()
        ready = []
        reader = threading.Thread(target=lambda: ready.append(broker.stdout.readline()), daemon=True)
        reader.start()
        reader.join(120)
        assert ready and ready[0].startswith("READY"), "the broker did not start within 120 s"
        # the file its log folder was formatted from holds no login
        formatted = (tmp_path / "cluster/broker.properties").read_text()
        assert password not in formatted and "PlainLoginModule" not in formatted and "SASL_PLAINTEXT" in formatted
        yield port, password
    finally:
        broker.stdin.close()  # EOF stops it, as a run's end does
        try:
            broker.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(broker.pid, signal.SIGKILL)
            broker.wait(10)


def test_a_sasl_cluster_is_measured_with_the_users_client_settings_and_no_secret_is_written(tmp_path, sasl_cluster):
    port, password = sasl_cluster
    run = ["run", "messaging", "--quick", "--systems", "kafka", "--kafka-poll", "blocking", "--max-instances", "1", "--warmup", "1",
           "--warmup-max", "2", "--measure", "1", "--bootstrap-servers", f"127.0.0.1:{port}"]

    def config(name, secret):
        f = tmp_path / name
        f.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain."
                     f'PlainLoginModule required username="perfkit" password="{secret}";\n')
        return f

    # no settings: the cluster takes the connection but never answers; the one line says where the settings go
    r = bench(*run, "--out", str(tmp_path / "none"), timeout=180)
    assert_failed_run_with_one_line(r, tmp_path / "none", "messaging", "give the client settings in --kafka-config")
    # a wrong password is the user's error: one line, exit 2
    r = bench(*run, "--kafka-config", str(config("wrong.properties", "not-" + password)), "--out", str(tmp_path / "wrong"), timeout=180)
    errors = [l for l in r.stderr.splitlines() if l.startswith("error:")]
    assert r.returncode == 2 and len(errors) == 1 and "authentication (SASL or TLS) failed with the settings of --kafka-config" in errors[0], r.stderr
    # the right settings: a complete run that names them, holds no value of a secret, and cleans its topics up
    r = bench(*run, "--kafka-config", str(config("client.properties", password)), "--out", str(tmp_path / "ok"), timeout=300)
    run_dir = run_dir_of(r)
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "complete", m.get("error")
    assert "client settings from --kafka-config: sasl.jaas.config, sasl.mechanism=PLAIN, security.protocol=SASL_PLAINTEXT" in m["notes"]["kafka"]
    assert read_csv(run_dir / "sweep.csv"), "a step was measured"
    for f in run_dir.rglob("*"):
        assert not f.is_file() or password.encode() not in f.read_bytes(), f
