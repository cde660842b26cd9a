"""Parts of a run on other hosts (--place part=user@host), over test hosts that are network namespaces with a private
sshd each (nethosts.py): the part is reached across a veth link, never loopback; the manifest records the host, the
round trip and the clocks; and nothing of the part is left on its host after the run ends or is killed."""
import glob
import http.server
import json
import os
import signal
import subprocess
import threading
import time

import pytest

from conftest import ROOT, bench, decode_hlog, manifest, read_csv, run_dir_of, validate, validate_load_results
from nethosts import Hosts, skip_reason

NO_HOSTS = skip_reason()
pytestmark = pytest.mark.skipif(NO_HOSTS is not None, reason=NO_HOSTS or "")

DRAIN = ["--quick", "--job-types", "noop", "--threads", "8", "--instances", "1", "--locks", "off", "--acquire-sizes", "32"]
PART_FOLDERS = "/tmp/perfkit-part-pg-*"
FOLDERS_BEFORE_PLACED_RUN = set()


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    h = Hosts(tmp_path_factory.mktemp("hosts"), ["pk-db"], subnet=40)
    try:
        yield h.create()
    finally:
        h.remove()


def one_error_line(result):
    errors = [l for l in result.stderr.splitlines() if l.startswith("error:")]
    assert len(errors) == 1, result.stderr
    assert "\tat " not in result.stderr and "Caused by" not in result.stderr, "no stack trace"
    return errors[0]


def part_folders():
    return set(glob.glob(PART_FOLDERS))


def assert_nothing_left_on(hosts, name, before, seconds=30):
    """No process of the run in the host's namespace, and no part folder beyond those there before the test."""
    deadline = time.time() + seconds
    while time.time() < deadline and (hosts.processes(name) or part_folders() - before):
        time.sleep(0.5)
    assert hosts.processes(name) == [], f"nothing of the run runs on {name}"
    assert part_folders() - before == set(), "the part's folder is gone from its host"


def start_long_drain(hosts, out):
    """A workflow run that drains long enough to be cut short, with its database on pk-db; returns (process, run dir)
    once the database runs there."""
    proc = subprocess.Popen([str(ROOT / "bench"), "run", "workflow", *DRAIN, "--jobs", "200000", "--place", "db=pk-db", "--out", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=dict(os.environ, **hosts.env()))
    deadline = time.time() + 180
    while time.time() < deadline:
        runs = list(out.glob("workflow/*/run.json"))
        if runs and "placement" in json.loads(runs[0].read_text() or "{}") and any("postgres" in p for p in hosts.processes("pk-db")):
            return proc, runs[0].parent
        if proc.poll() is not None:
            pytest.fail(proc.stderr.read()[-2000:])
        time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGKILL)
    pytest.fail("the database never started on its host")


@pytest.fixture(scope="module")
def placed_db_run(hosts, tmp_path_factory):
    """A workflow run whose private PostgreSQL ran on the test host pk-db; the part folders there before it, too."""
    out = tmp_path_factory.mktemp("placed")
    FOLDERS_BEFORE_PLACED_RUN.update(part_folders())
    return run_dir_of(bench("run", "workflow", *DRAIN, "--jobs", "300", "--repetitions", "2", "--place", "db=pk-db", "--out", str(out),
                            env=hosts.env(), timeout=600))


def test_hosts_a_killed_test_run_left_behind_are_cleared_before_new_ones_are_made(tmp_path):
    """A SIGKILLed test process leaves its namespaces, their daemon sshds and their links' routes; new hosts on the same
    subnet would be routed to the dead ones (CI failed so after a session's killed run), so they are removed first."""
    (tmp_path / "old").mkdir()
    maker = subprocess.Popen(["python3", "-c", f"import nethosts, pathlib, time; nethosts.Hosts(pathlib.Path({str(tmp_path / 'old')!r}), "
                              "['pk-old'], subnet=50).create(); print('made', flush=True); time.sleep(600)"],
                             cwd=ROOT / "scripts/tests", stdout=subprocess.PIPE, text=True)
    try:
        assert maker.stdout.readline().strip() == "made"
    finally:
        maker.kill()
        maker.wait()
    left = f"pk-pk-old-{maker.pid}"
    assert left in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert subprocess.run(["ip", "netns", "pids", left], capture_output=True, text=True).stdout.split(), "its sshd lived on"
    new = Hosts(tmp_path / "new", ["pk-old"], subnet=50)
    (tmp_path / "new").mkdir()
    try:
        new.create()  # answers over SSH: the route to 10.213.50.0/30 is the new link's
        assert left not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert not glob.glob(f"/etc/netns/{left}")
    finally:
        new.remove()


def test_a_workflow_run_places_its_database_on_another_host(hosts, placed_db_run):
    run = placed_db_run
    m = manifest(run)
    validate(m)
    assert m["status"] == "complete" and m["params"]["place"] == "db=pk-db"
    (part,) = m["placement"]
    address = hosts.address["pk-db"]
    assert (part["part"], part["host"], part["address"]) == ("db", "pk-db", address)
    assert part["fingerprint"]["hostname"] == "pk-db", "the fingerprint is the part host's own"
    assert part["service"].startswith("PostgreSQL ")
    assert part["rttMs"]["samples"] == 20 and 0 < part["rttMs"]["min"] <= part["rttMs"]["median"]
    assert part["link"]["interface"] == hosts.interface["pk-db"], "reached across the host's veth link"
    assert part["link"]["speedMbps"] == int(open(f"/sys/class/net/{hosts.interface['pk-db']}/speed").read()), "the kernel's figure for it"
    for when in ("start", "end"):
        clock = part["clock"][when]
        # one kernel clock behind both: the offset is within the measurement's own uncertainty, plus a little
        assert abs(clock["offsetMs"]) <= clock["uncertaintyMs"] + 1.0, clock
    assert part["leftBehind"] is False
    assert f"{address}:" in m["notes"]["database"], "the engines reached the database across the link"
    rows = read_csv(run / "throughput.csv")
    assert len(rows) == 2 and all(r["valid"] == "true" for r in rows)
    for r in rows:
        assert float(r["cpu_db_pct"]) > 0, "the database's CPU, from its own host"
        # the database's CPU is its host's, not this one's
        assert abs(float(r["cpu_other_pct"]) - (float(r["cpu_system_pct"]) - float(r["cpu_engines_pct"]))) < 1e-6
    series = {(r["series"], r["metric"]) for r in read_csv(run / "timeseries.csv")}
    assert {("host:db", "cpu_pct"), ("host:db", "steal_pct"), ("proc:postgres@db", "cpu_pct")} <= series, "the part's host, second by second"
    assert max(float(r["value"]) for r in read_csv(run / "timeseries.csv") if r["series"] == "proc:postgres@db") > 0
    assert_nothing_left_on(hosts, "pk-db", FOLDERS_BEFORE_PLACED_RUN, seconds=5)


def test_the_post_names_the_topology(placed_db_run, tmp_path):
    r = bench("notebooks", "notebooks/workflow.ipynb", "--runs", str(placed_db_run.parent.parent), "--out", str(tmp_path), timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    text = "".join("".join(o.get("data", {}).get("text/markdown", [])) for c in json.loads((tmp_path / "workflow.ipynb").read_text())["cells"]
                   for o in c.get("outputs", []))
    assert "placed elsewhere: db on pk-db (pk-db, " in text and "round trip" in text and "its clock" in text


def test_a_killed_run_leaves_nothing_on_the_db_host(hosts, tmp_path):
    """SIGKILL for the run's JVM and the watchdog of its SSH session at once: the ssh client dies with its watchdog
    (parent-death signal), the session closes, and the part's agent stops the server and removes its folder."""
    before = part_folders()
    proc, run_dir = start_long_drain(hosts, tmp_path)
    try:
        time.sleep(2)  # into the generate phase
        m = manifest(run_dir)
        ssh = subprocess.run(["pgrep", "-f", "^ssh .*pk-db"], capture_output=True, text=True).stdout.split()
        assert ssh, "the part's ssh client runs here"
        watchdogs = {int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1]) for p in ssh}
        for pid in [m["pid"], *watchdogs]:
            os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert_nothing_left_on(hosts, "pk-db", before)
        deadline = time.time() + 30
        while time.time() < deadline and manifest(run_dir)["status"] == "running":
            time.sleep(0.5)
        assert manifest(run_dir)["status"] == "interrupted", "the reaper marks the run"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def test_a_link_that_drops_without_closing_stops_the_part_on_its_own(hosts, tmp_path):
    """The link goes down mid-run: no FIN ever reaches the host, so only the run's missing heartbeat tells the agent
    that the run is gone. It stops the server and removes its folder, while the run here is still stuck."""
    before = part_folders()
    proc, run_dir = start_long_drain(hosts, tmp_path)
    link = hosts.interface["pk-db"]
    try:
        subprocess.run(["ip", "link", "set", link, "down"], check=True)
        deadline = time.time() + 90
        while time.time() < deadline and (any("postgres" in p for p in hosts.processes("pk-db")) or part_folders() - before):
            time.sleep(1)
        assert not any("postgres" in p for p in hosts.processes("pk-db")), "the server stopped without its run"
        assert part_folders() - before == set(), "and its folder went"
    finally:
        subprocess.run(["ip", "link", "set", link, "up"], check=True)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        hosts.wait_for_ssh("pk-db")


def test_an_unreachable_host_or_a_bad_placement_fails_in_one_line_before_anything_starts(hosts, tmp_path):
    config = tmp_path / "ssh_config"
    # a host whose address answers but whose SSH port is closed, before the test hosts' own entries
    config.write_text(f"Host pk-closed\n  HostName {hosts.address['pk-db']}\n  Port 1\n\n" + hosts.ssh_config.read_text())
    out = tmp_path / "runs"
    r = bench("run", "workflow", *DRAIN, "--place", "db=pk-closed", "--out", str(out), env={"PERFKIT_SSH_CONFIG": str(config)}, timeout=120)
    assert r.returncode == 2, r.stderr
    assert "cannot reach pk-closed over SSH" in one_error_line(r)
    for place, expected in [("app=pk-db", "a part among db"), ("db=-oProxyCommand=x", "not a host"), ("db=pk-db,db=pk-db", "placed twice")]:
        r = bench("run", "workflow", *DRAIN, "--place", place, "--out", str(out), env=hosts.env(), timeout=120)
        assert r.returncode == 2 and expected in one_error_line(r), (place, r.stderr)
    r = bench("run", "workflow", *DRAIN, "--database", "h2", "--place", "db=pk-db", "--out", str(out), env=hosts.env(), timeout=120)
    assert r.returncode == 2 and "--place db needs --database postgres" in one_error_line(r)
    assert not out.exists() or not any(out.rglob("run.json")), "no run folder"
    assert hosts.processes("pk-db") == []


def test_a_three_tier_run_places_its_databases_on_another_host(hosts, tmp_path):
    """--place db=pk-db,cassandra=pk-db: each PostgreSQL inserts cell and each chain fork starts its cluster on pk-db,
    and the embedded Cassandra node starts there under the part's agent, picks its ports there and binds that host's
    address, the run's password reaching it on stdin. The writers here insert across the link, every acknowledged row
    is counted, each database's CPU comes from its host, and nothing of either stays there."""
    before, jvms_before = part_folders(), jvm_folders()
    run = run_dir_of(bench("run", "three-tier", "--quick", "--server-warmup-max", "2", "--rounds", "inserts,chain", "--stores", "postgres,cassandra",
                           "--durability", "relaxed", "--forks", "1", "--chains", "sync", "--measure", "2", "--warmup", "1", "--open-rates", "0.5",
                           "--place", "db=pk-db,cassandra=pk-db", "--out", str(tmp_path), env=hosts.env(), timeout=900))
    m = manifest(run)
    validate(m)
    assert m["status"] == "complete", m.get("error")
    clusters = [p for p in m["placement"] if p["part"] == "db"]
    assert len(clusters) == 2, "one cluster for the PostgreSQL inserts cell, one for the chain's fork"
    assert all(p["address"] == hosts.address["pk-db"] and p["leftBehind"] is False for p in clusters)
    (node,) = [p for p in m["placement"] if p["part"] == "cassandra"]
    assert (node["host"], node["address"], node["fingerprint"]["hostname"]) == ("pk-db", hosts.address["pk-db"], "pk-db")
    assert node["service"].startswith("Cassandra 5.0.9 (relaxed-fork1)") and node["leftBehind"] is False
    rows = {r["store"]: r for r in read_csv(run / "inserts.csv")}
    assert set(rows) == {"postgres", "cassandra"}
    for row in rows.values():
        assert row["valid"] == "true" and float(row["cpu_db_pct"]) > 0, ("each database's CPU, from its own host", row)
    assert int(rows["cassandra"]["rows_counted"]) == int(rows["cassandra"]["acknowledged"]) > 0
    assert "on pk-db" in rows["cassandra"]["settings"] and hosts.address["pk-db"] in rows["cassandra"]["settings"], "the writers reached it across the link"
    assert hosts.address["pk-db"] in m["notes"]["inserts"]["postgres"] or "pk-db" in m["notes"]["inserts"]["postgres"]
    assert all(r["valid"] == "true" for r in read_csv(run / "chain.csv"))
    series = {(r["series"], r["metric"]) for r in read_csv(run / "timeseries.csv")}
    assert ("proc:cassandra@cassandra", "cpu_pct") in series and ("host:cassandra", "cpu_pct") in series
    assert_nothing_left_on(hosts, "pk-db", before, seconds=10)
    deadline = time.time() + 10
    while time.time() < deadline and (hosts.processes("pk-db") or jvm_folders() - jvms_before):
        time.sleep(0.5)
    assert hosts.processes("pk-db") == [] and jvm_folders() - jvms_before == set()


# ---- JVM parts: web-reactive's load driver, app and external service on three hosts ------------------------------

JVM_FOLDERS = "/tmp/perfkit-part-jvm-*"
# a test checks where parts ran, not a settled JIT: the servers' warm-up by rule is cut at 2 s (quick mode's is 10 s)
WEB = ["--quick", "--variants", "webflux", "--calls", "1", "--forks", "1", "--peers", "off", "--server-warmup-max", "2"]


def jvm_folders():
    return set(glob.glob(JVM_FOLDERS))


@pytest.fixture(scope="module")
def lan(tmp_path_factory):
    """Three hosts that reach each other (the driver loads the app, which calls the external service, each across two links)."""
    h = Hosts(tmp_path_factory.mktemp("lan"), ["pk-drv", "pk-app", "pk-be"], subnet=44, routed=True)
    try:
        yield h.create()
    finally:
        h.remove()


def assert_no_jvm_left(lan, before, seconds=30):
    deadline = time.time() + seconds
    while time.time() < deadline and (any(lan.processes(h) for h in lan.names) or jvm_folders() - before):
        time.sleep(0.5)
    assert all(lan.processes(h) == [] for h in lan.names), "nothing of the run runs on any of its hosts"
    assert jvm_folders() - before == set(), "the parts' folders are gone from their hosts"


PLACE_ALL = "driver=pk-drv,app=pk-app,backend=pk-be"


JVM_FOLDERS_BEFORE_SPREAD_RUN = set()


@pytest.fixture(scope="module")
def spread_run(lan, tmp_path_factory):
    """A web-reactive run with its load driver, app and external service on three test hosts."""
    JVM_FOLDERS_BEFORE_SPREAD_RUN.update(jvm_folders())
    return run_dir_of(bench("run", "web-reactive", *WEB, "--models", "closed,open", "--rates", "50", "--measure", "2", "--users", "10",
                            "--place", PLACE_ALL, "--out", str(tmp_path_factory.mktemp("spread")), env=lan.env(), timeout=900))


@pytest.mark.alone  # makes spread_run, whose open step must find the driver on time: a second test on 2 cores makes it late
def test_a_web_reactive_run_spreads_over_three_hosts(lan, spread_run):
    """The driver on pk-drv, the app on pk-app, the external service on pk-be: each server binds its host's address,
    the driver loads the app and the app calls the service across the links, each part's CPU comes from its own host,
    and the driver's results and hlogs come back into the run."""
    run = spread_run
    m = manifest(run)
    validate(m)
    assert m["status"] == "complete", m.get("error")
    parts = {}
    for p in m["placement"]:
        parts.setdefault(p["part"], []).append(p)
    assert set(parts) == {"driver", "app", "backend"}
    assert len(parts["driver"]) == 2, "one entry per driver run: the closed sweep, the open step"
    assert all(p["service"].startswith("load driver ") and p["leftBehind"] is False for p in parts["driver"])
    parts = {k: v[0] for k, v in parts.items()}
    for part, host in (("driver", "pk-drv"), ("app", "pk-app"), ("backend", "pk-be")):
        p = parts[part]
        assert (p["host"], p["address"], p["fingerprint"]["hostname"]) == (host, lan.address[host], host)
        assert p["link"]["interface"] == lan.interface[host] and p["rttMs"]["samples"] == 20
        assert p["leftBehind"] is False
    assert parts["app"]["service"].startswith("webflux/fork1 (")
    assert m["notes"]["ports"], "each service announced its port"
    rows = read_csv(run / "closed.csv")
    assert rows and all(r["valid"] == "true" for r in rows)
    for r in rows + read_csv(run / "open.csv"):
        assert float(r["cpu_app_pct"]) > 0 and float(r["cpu_backend_pct"]) > 0 and float(r["cpu_driver_pct"]) > 0, "each part's CPU, from its own host"
        assert float(r["backend_p50_ms"]) >= 100, "the external service answered across the links after its delay"
        assert float(r["p50_ms"]) >= 100, "the driver timed the requests across the links"
    (step,) = read_csv(run / "open.csv")
    assert step["valid"] == "true", step["invalid_reason"]
    assert validate_load_results(run) == 2, "the results that came back, amended here, hold to their schema"
    phase = json.loads((run / "load/webflux.1call.r50.fork1.result.json").read_text())["phases"][-1]
    assert "driverStartMs" in phase and phase["cpuPct"]["app"] > 0, "its own clock's edges kept; the placed parts' CPU in the file"
    hlogs = {f["path"] for f in m["files"] if f["path"].endswith(".hlog")}
    assert any(h.endswith(".corrected.hlog") for h in hlogs) and all((run / h).stat().st_size > 0 for h in hlogs), "the driver's hlogs came back"
    assert "off: the load driver ran on pk-drv" in m["notes"]["peers"]
    series = {(r["series"], r["metric"]) for r in read_csv(run / "timeseries.csv")}
    assert {("host:app", "cpu_pct"), ("host:backend", "steal_pct"), ("host:driver", "cpu_pct"), ("proc:webflux/fork1@app", "cpu_pct"),
            ("proc:load-driver@driver", "cpu_pct"), ("jvm:webflux/fork1", "jit_ms_per_s")} <= series
    warm = m["notes"]["serverWarmup"]
    assert warm, "the app was warmed up by rule from its JIT reports, re-timed here"
    assert_no_jvm_left(lan, JVM_FOLDERS_BEFORE_SPREAD_RUN, seconds=10)


def test_the_web_reactive_post_names_its_three_hosts(spread_run, tmp_path):
    r = bench("notebooks", "notebooks/web-reactive.ipynb", "--runs", str(spread_run.parent.parent), "--out", str(tmp_path), timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    text = "".join("".join(o.get("data", {}).get("text/markdown", [])) for c in json.loads((tmp_path / "web-reactive.ipynb").read_text())["cells"]
                   for o in c.get("outputs", []))
    for part, host in (("driver", "pk-drv"), ("app", "pk-app"), ("backend", "pk-be")):
        assert f"{part} on {host} ({host}, " in text, part
    assert "times every request on its own host's clock" in text


def test_two_driver_hosts_share_the_load_and_their_results_add_up_exactly(lan, tmp_path):
    """--place driver=pk-drv+pk-be: each driver runs half of every rate and of the users, and the run keeps one result
    and one set of hlogs per step, their merge: counts and histograms added, so the closed counts stay exact."""
    before = jvm_folders()
    run = run_dir_of(bench("run", "web-reactive", *WEB, "--models", "closed,open", "--rates", "100", "--measure", "2", "--users", "5",
                           "--place", "driver=pk-drv+pk-be,app=pk-app,backend=pk-be", "--out", str(tmp_path), env=lan.env(), timeout=900))
    m = manifest(run)
    validate(m)
    assert m["status"] == "complete", m.get("error")
    drivers = {(p["part"], p["host"]) for p in m["placement"] if p["part"].startswith("driver")}
    assert drivers == {("driver", "pk-drv"), ("driver2", "pk-be")}, drivers
    (closed,) = read_csv(run / "closed.csv")
    assert closed["users"] == "5" and closed["valid"] == "true", closed
    assert int(closed["requests"]) == int(closed["expected_requests"]) == int(closed["responses"]), "3 users on one host and 2 on the other, every request counted"
    assert validate_load_results(run) == 6, "the two merged results and each host's own, all to the schema"
    stem = "load/webflux.1call.r100.fork1"
    merged = json.loads((run / f"{stem}.result.json").read_text())
    assert [d["host"] for d in merged["drivers"]] == ["pk-drv", "pk-be"]
    own = [json.loads((run / f"{stem}.d{i}.result.json").read_text()) for i in (1, 2)]
    name = "webflux.1call.r100.fork1"
    phase = next(p for p in merged["phases"] if p["name"] == name)
    shares = [next(p for p in o["phases"] if p["name"] == name) for o in own]
    assert phase["requests"] == sum(s["requests"] for s in shares) and all(s["requests"] > 0 for s in shares)
    for i in (1, 2):
        measured = (run / f"{stem}.d{i}.yaml").read_text().split(f"- {name}:\n", 1)[1]
        assert measured.split("\n- ", 1)[0].count("usersPerSec: 50.0\n") == 1 and "duration: 2000ms" in measured, "half of 100 req/s on each host, 2 s"
    (step,) = read_csv(run / "open.csv")
    if abs(phase["requests"] - 200) > 4:
        # a saturated box may leave the driver short of its schedule (out of sessions while the app is slow): only
        # where the run shows it fell behind, and never as a met step
        behind = phase["sessionLimitExceeded"] or phase["blockedTimeNs"] > 0 or "driver" in step["invalid_reason"] or step["verdict"] == "missed"
        assert phase["requests"] < 200 and behind and not (step["valid"] == "true" and step["meets_slo"] == "true"), (phase, step)
    assert "driverStartMs" not in phase, "the merged hlogs are on this host's clock"
    starts = [p["startMs"] for p in shares]   # each on its own host's clock, which the test hosts share with this machine
    assert max(starts) - min(starts) < 300, f"both hosts measured side by side, not one after the other: {starts}"
    # on a busy 2-core box one host can start late; then the merge must say so (DriverShares: 100 ms or 5% of the phase)
    limit = max(100, 0.05 * (phase["endMs"] - phase["startMs"]))
    assert (phase["error"] is None) == (phase["hostSkewMs"] <= limit), phase
    assert phase["error"] is None or f"started this phase {phase['hostSkewMs']} ms apart" in phase["error"], phase
    assert shares[0]["probes"]["backend"] and shares[1]["probes"] == {}, "only the first asks the service for its figures"
    total, _ = decode_hlog(run / f"latency/{phase['name']}.corrected.hlog")
    assert total.get_total_count() == phase["correctedCount"] == sum(s["correctedCount"] for s in shares), "every response of both hosts in one histogram"
    assert int(step["requests"]) == phase["requests"] and float(step["p50_ms"]) >= 100
    assert "pk-drv + pk-be (each runs an equal share" in m["notes"]["peers"]
    assert_no_jvm_left(lan, before, seconds=10)
    r = bench("run", "web-reactive", *WEB, "--models", "closed", "--users", "1", "--place", "driver=pk-drv+pk-be,app=pk-app,backend=pk-be",
              "--out", str(tmp_path), env=lan.env(), timeout=120)
    assert r.returncode == 2 and "needs at least 2 users in each closed step" in one_error_line(r)


def test_a_killed_run_leaves_no_jvm_on_its_part_hosts(lan, tmp_path):
    """SIGKILL for the run's JVM and for the watchdogs of its SSH sessions at once: each session closes, and each
    agent stops its JVM and removes its folder."""
    before = jvm_folders()
    proc = subprocess.Popen([str(ROOT / "bench"), "run", "web-reactive", *WEB[:-2], "--models", "closed", "--users", "10,20,50,100", "--server-warmup-max", "300",
                             "--place", PLACE_ALL, "--out", str(tmp_path)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True, env=dict(os.environ, **lan.env()))
    try:
        deadline = time.time() + 300
        while time.time() < deadline and not any("java" in p for p in lan.processes("pk-app")):
            if proc.poll() is not None:
                pytest.fail(proc.stderr.read()[-2000:])
            time.sleep(0.5)
        assert any("java" in p for p in lan.processes("pk-be")), "the external service runs on its host"
        (run_json,) = tmp_path.glob("web-reactive/*/run.json")
        ssh = subprocess.run(["pgrep", "-f", "^ssh .*pk-(drv|app|be)"], capture_output=True, text=True).stdout.split()
        watchdogs = {int(open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[1]) for p in ssh}
        for pid in [json.loads(run_json.read_text())["pid"], *watchdogs]:
            os.kill(pid, signal.SIGKILL)
        proc.wait(timeout=30)
        assert_no_jvm_left(lan, before)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def test_a_placed_web_reactive_run_refuses_a_target_url_in_one_line(lan, tmp_path):
    target = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)  # answers 501: reachable
    threading.Thread(target=target.serve_forever, daemon=True).start()
    try:
        r = bench("run", "web-reactive", "--quick", "--target-url", f"http://127.0.0.1:{target.server_port}/x", "--place", "app=pk-app",
                  "--out", str(tmp_path), env=lan.env(), timeout=120)
        on = bench("run", "web-reactive", "--quick", "--target-url", f"http://127.0.0.1:{target.server_port}/x", "--on", "pk-app",
                   "--out", str(tmp_path), env=lan.env(), timeout=120)
    finally:
        target.shutdown()
    assert r.returncode == 2 and "--place (and --on) and --target-url exclude each other" in one_error_line(r), r.stderr
    assert on.returncode == 2 and "--target-url exclude each other" in one_error_line(on), on.stderr
    r = bench("run", "web-reactive", "--quick", "--place", "db=pk-app", "--out", str(tmp_path), env=lan.env(), timeout=120)
    assert r.returncode == 2 and "a part among driver" in one_error_line(r), r.stderr
    r = bench("run", "web-reactive", "--quick", "--place", "driver=pk-drv,app=pk-app", "--out", str(tmp_path), env=lan.env(), timeout=120)
    assert r.returncode == 2 and "--place driver needs app and backend placed too" in one_error_line(r), r.stderr
    assert not any(tmp_path.rglob("run.json")), "no run folder"


def test_workflow_engines_and_their_database_run_on_hosts_of_their_own(lan, tmp_path):
    """--place db=pk-be,engines=pk-app+pk-drv, as the original ran its engines on hosts of their own against RDS: each
    engine is a fork on its host, reaching the cluster across the links (which admits both hosts), its latency logs come
    back into the run, its clock stamps are put on this host's clock, and its CPU is its host's, not this one's."""
    before_jvm, before_db = jvm_folders(), part_folders()
    run = run_dir_of(bench("run", "workflow", *DRAIN[:5], "--instances", "2", "--locks", "off", "--acquire-sizes", "32", "--jobs", "600",
                           "--place", "db=pk-be,engines=pk-app+pk-drv", "--out", str(tmp_path), env=lan.env(), timeout=900))
    m = manifest(run)
    validate(m)
    assert m["status"] == "complete", m.get("error")
    placed = {(p["part"], p["host"], p["fingerprint"]["hostname"]) for p in m["placement"]}
    assert placed == {("db", "pk-be", "pk-be"), ("engines", "pk-app", "pk-app"), ("engines2", "pk-drv", "pk-drv")}, "one entry per part"
    assert all(p["leftBehind"] is False for p in m["placement"])
    engines = [p for p in m["placement"] if p["part"].startswith("engines")]
    assert all("a fork of the run" in p["service"] and p["rttMs"]["samples"] == 20 for p in engines)
    assert "engine i on the i-th host of --place engines" in m["notes"]["engines"] and "pk-app, pk-drv" in m["notes"]["engines"]
    (row,) = read_csv(run / "throughput.csv")
    assert row["valid"] == "true", row["invalid_reason"]
    assert int(row["committed"]) == 600 and float(row["drain_seconds"]) > 0, "the drain's edges, on one clock"
    assert float(row["cpu_engines_pct"]) > 0 and float(row["cpu_db_pct"]) > 0, "the engines' and the database's CPU, each from its own host"
    assert abs(float(row["cpu_other_pct"]) - float(row["cpu_system_pct"])) < 1e-6, "neither is in this host's CPU"
    per_engine = read_csv(run / "engines.csv")
    assert sorted(r["instance"] for r in per_engine) == ["1", "2"] and sum(int(r["commit_events"]) for r in per_engine) == 600
    hlogs = [f for f in m["files"] if f["kind"] == "hlog"]
    assert len(hlogs) == 4, "each engine's corrected and uncorrected log"
    assert sum(decode_hlog(run / f["path"])[0].get_total_count() for f in hlogs if "uncorrected" not in f["path"]) > 0, \
        "the engines' latency logs came back from their hosts"
    assert all((run / f["path"]).is_file() for f in m["files"]), "every file the forks listed is in the run"
    series = {(r["series"], r["metric"]) for r in read_csv(run / "timeseries.csv")}
    cell = row["cell"]
    assert {("host:engines", "cpu_pct"), ("host:engines2", "cpu_pct"), (f"proc:{cell}/engine1@engines", "cpu_pct"),
            (f"proc:{cell}/engine2@engines2", "cpu_pct")} <= series, "each engine's host, second by second"
    assert_no_jvm_left(lan, before_jvm, seconds=10)
    assert part_folders() - before_db == set(), "the database's folder is gone from its host"


def test_workflow_engines_elsewhere_need_a_database_they_can_reach(lan, tmp_path):
    for args, expected in [(["--place", "engines=pk-app"], "--place engines needs the database off loopback too"),
                           (["--database", "h2", "--place", "engines=pk-app"], "--place engines needs --database postgres"),
                           (["--jdbc-url", "jdbc:postgresql://localhost:5432/x", "--place", "engines=pk-app"], "its server on loopback is each engine host's own"),
                           (["--place", "engines=pk-app+pk-app,db=pk-be"], "each host of engines once")]:
        r = bench("run", "workflow", "--quick", *args, "--out", str(tmp_path), env=lan.env(), timeout=120)
        assert r.returncode == 2 and expected in one_error_line(r), (args, r.stderr)
    assert not any(tmp_path.rglob("run.json")), "no run folder"


QUEUES_ON = ["--quick", "--variants", "abq-1,disruptor-1", "--wait-strategy", "yielding", "--forks", "1"]


def test_a_queues_run_on_a_target_runs_every_fork_and_its_minimal_program_there(lan, tmp_path):
    """--on pk-app is --place with every part the run has on pk-app (queues: its forks): each fork and the minimal
    program beside it run there under the part's agent, their results and logs come back, the run stays here, and
    nothing of it is left there. With --profile each fork records itself there, and its recording comes home."""
    before = jvm_folders()
    run = run_dir_of(bench("run", "queues", *QUEUES_ON, "--profile", "--on", "pk-app", "--out", str(tmp_path), env=lan.env(), timeout=600))
    m = manifest(run)
    validate(m)
    assert m["status"] == "complete", m.get("error")
    assert (m["params"]["on"], m["params"]["place"]) == ("pk-app", "forks=pk-app"), "--on wrote the placement it means"
    assert {(p["part"], p["host"], p["fingerprint"]["hostname"]) for p in m["placement"]} == {("forks", "pk-app", "pk-app")}
    assert all(p["leftBehind"] is False for p in m["placement"])
    rows = read_csv(run / "throughput.csv")
    assert sorted(r["cell"] for r in rows) == ["abq-1", "disruptor-1/yielding"]
    assert all(r["exactly_once"] == "true" and float(r["events_per_s"]) > 0 for r in rows)
    calibration = read_csv(run / "calibration.csv")
    assert len(calibration) == 2 and all(float(r["minimal_events_per_s"]) > 0 for r in calibration), "the minimal program ran there too"
    assert all((run / f["path"]).is_file() for f in m["files"]), "every file the run lists is here"
    series = {(r["series"], r["metric"]) for r in read_csv(run / "timeseries.csv")}
    assert {("host:forks", "cpu_pct"), ("host:forks", "steal_pct")} <= series, "the target's CPU, second by second"
    profiles = [f for f in m["files"] if f["kind"] == "profile"]
    assert sorted(f["series"] for f in profiles) == ["abq-1/fork1", "disruptor-1/yielding/fork1"], "one window per fork, recorded there"
    assert all((run / f["path"]).stat().st_size > 0 and f["window"]["endMs"] > f["window"]["startMs"] for f in profiles)
    gc = [f for f in m["files"] if f["path"].startswith("logs/gc/")]
    assert len(gc) >= len(profiles), "each fork kept a GC log there, and it came home"
    assert all("on pk-app" in f["description"] and "[gc" in (run / f["path"]).read_text() for f in gc)
    assert_no_jvm_left(lan, before, seconds=10)


def test_on_and_place_together_put_each_part_where_they_say(lan, tmp_path):
    """--on pk-app --place db=pk-be: the engines on the target, their database where --place says."""
    before_jvm, before_db = jvm_folders(), part_folders()
    run = run_dir_of(bench("run", "workflow", *DRAIN, "--jobs", "300", "--on", "pk-app", "--place", "db=pk-be", "--out", str(tmp_path),
                           env=lan.env(), timeout=900))
    m = manifest(run)
    validate(m)
    assert m["status"] == "complete", m.get("error")
    assert m["params"]["place"] == "db=pk-be,engines=pk-app"
    assert {(p["part"], p["host"]) for p in m["placement"]} == {("db", "pk-be"), ("engines", "pk-app")}
    (row,) = read_csv(run / "throughput.csv")
    assert row["valid"] == "true" and int(row["committed"]) == 300, row["invalid_reason"]
    assert_no_jvm_left(lan, before_jvm, seconds=10)
    assert part_folders() - before_db == set()


def test_a_target_that_cannot_take_the_run_is_one_line_before_anything_starts(lan, tmp_path):
    config = tmp_path / "ssh_config"
    config.write_text(f"Host pk-closed\n  HostName {lan.address['pk-app']}\n  Port 1\n\n" + lan.ssh_config.read_text())
    out = tmp_path / "runs"
    r = bench("run", "queues", *QUEUES_ON, "--on", "pk-closed", "--out", str(out), env={"PERFKIT_SSH_CONFIG": str(config)}, timeout=120)
    assert r.returncode == 2 and "cannot reach pk-closed over SSH" in one_error_line(r), r.stderr
    for study, args, expected in [("queues", ["--on", "-oProxyCommand=x"], "not a host"),
                                  ("workflow", ["--database", "h2", "--on", "pk-app"], "--place engines needs --database postgres"),
                                  ("overhead", ["--on", "pk-app"], "unknown option --on")]:
        r = bench("run", study, "--quick", *args, "--out", str(out), env=lan.env(), timeout=120)
        assert r.returncode == 2 and expected in one_error_line(r), (study, args, r.stderr)
    r = bench("run", "workflow", "--quick", "--database", "h2", "--on", "pk-app", "--out", str(out), env=lan.env(), timeout=120)
    assert "(--on pk-app placed engines=pk-app)" in one_error_line(r), "the refusal says what --on made of the run"
    assert not out.exists() or not any(out.rglob("run.json")), "no run folder"
    assert all(lan.processes(h) == [] for h in lan.names)


JVM_FOLDERS_BEFORE_THREE_TIER_RUN, DB_FOLDERS_BEFORE_THREE_TIER_RUN = set(), set()


@pytest.fixture(scope="module")
def three_tier_spread(lan, tmp_path_factory):
    """One three-tier run over three hosts, both HTTP rounds placed: the templates server on pk-app; the chain's A on
    pk-app, B and C on pk-be; the load driver (both rounds') and the chain's database on pk-drv."""
    JVM_FOLDERS_BEFORE_THREE_TIER_RUN.update(jvm_folders())
    DB_FOLDERS_BEFORE_THREE_TIER_RUN.update(part_folders())
    return run_dir_of(bench("run", "three-tier", "--quick", "--server-warmup-max", "2", "--rounds", "templates,chain", "--engines", "plain",
                            "--chains", "sync", "--forks", "1", "--measure", "2", "--warmup", "1", "--open-rates", "0.5",
                            "--place", "templates=pk-app,driver=pk-drv,a=pk-app,b=pk-be,c=pk-be,db=pk-drv",
                            "--out", str(tmp_path_factory.mktemp("three-tier")), env=lan.env(), timeout=900))


def test_a_three_tier_run_places_its_parts_and_leaves_nothing_on_their_hosts(lan, three_tier_spread):
    m = manifest(three_tier_spread)
    validate(m)
    assert m["status"] == "complete", m.get("error")
    hosts = {(p["part"], p["host"]) for p in m["placement"]}
    assert hosts == {("templates", "pk-app"), ("driver", "pk-drv"), ("a", "pk-app"), ("b", "pk-be"), ("c", "pk-be"), ("db", "pk-drv")}, hosts
    assert all(p["leftBehind"] is False for p in m["placement"])
    assert_no_jvm_left(lan, JVM_FOLDERS_BEFORE_THREE_TIER_RUN, seconds=10)
    assert part_folders() - DB_FOLDERS_BEFORE_THREE_TIER_RUN == set(), "the database's folder is gone from its host"


def test_a_three_tier_chain_spreads_its_tiers_driver_and_database_over_three_hosts(lan, three_tier_spread):
    """A, B and C each on a host, the load driver on a third with the database: the tiers start C first, each calls
    the next across the links, C writes to the placed cluster, and each tier's step CPU comes from its host."""
    m = manifest(three_tier_spread)
    assert "A on pk-app, B on pk-be, C on pk-be" in m["notes"]["chain"]["hosts"]
    (row,) = read_csv(three_tier_spread / "chain.csv")
    assert row["valid"] == "true", row["invalid_reason"]
    steps = [r for r in read_csv(three_tier_spread / "open.csv") if r["round"] == "chain"]
    assert steps, "the chain's open-model steps ran"
    for r in steps:
        # seven JVMs share this machine's 2 cores here, so a step may honestly be invalid (a late driver): its CPU is still there
        assert all(float(r[f"cpu_{t}_pct"]) > 0 for t in "abc"), "each tier's CPU, from its own host"
        assert r["valid"] == "true" or r["invalid_reason"], r


def test_the_templates_server_and_the_driver_run_on_hosts_of_their_own(lan, three_tier_spread):
    """The server renders its pages from its work folder on pk-app, bound to its host's address; the driver on pk-drv
    loads it across the link; the server's CPU per step comes from its host."""
    m = manifest(three_tier_spread)
    server = next(p for p in m["placement"] if p["part"] == "templates")
    assert server["address"] == lan.address["pk-app"]
    assert "on pk-app (placement in the manifest)" in m["notes"]["templates"]["server"]
    assert m["notes"]["templates"]["pages"]["plain"]["bytes"] > 0, "the page rendered there and was fetched from here"
    rows = [r for r in read_csv(three_tier_spread / "saturation.csv") + read_csv(three_tier_spread / "open.csv") if r["cell"] == "templates/plain"]
    assert rows and all(float(r["cpu_app_pct"]) > 0 for r in rows if r["cpu_app_pct"]), "the server's CPU from its host"
    assert any(r["cpu_app_pct"] for r in rows)


def test_a_three_tier_placement_that_would_call_loopback_across_hosts_is_one_line(lan, tmp_path):
    for place, rounds, expected in [("a=pk-app", "chain", "a needs b and c"), ("b=pk-app,c=pk-be", "chain", "--place c needs its database elsewhere"),
                                    ("driver=pk-drv", "chain", "it needs a placed"), ("a=pk-app,b=pk-be,c=pk-be,db=pk-drv", "inserts", "this run does not have"),
                                    ("driver=pk-drv", "templates", "templates placed for the templates round"),
                                    ("templates=pk-app", "chain", "which this run does not have")]:
        r = bench("run", "three-tier", "--quick", "--rounds", rounds, "--place", place, "--out", str(tmp_path), env=lan.env(), timeout=120)
        assert r.returncode == 2 and expected in one_error_line(r), (place, r.stderr)
    assert not any(tmp_path.rglob("run.json")), "no run folder"


def test_messaging_chains_and_their_broker_run_on_hosts_of_their_own(lan, tmp_path):
    """--place broker=pk-be,chains=pk-app: each step's JVM (services and driver) runs on pk-app, reaching the embedded
    broker on pk-be (its ports chosen there) across the links with the run's SASL login; its latency logs come back
    and merge into the step; the step's system CPU is its host's, the broker's its own host's; nothing stays on either
    host. (A broker placed alone is the same path with the chains here.)"""
    before = jvm_folders()
    run = run_dir_of(bench("run", "messaging", "--quick", "--warmup", "1", "--measure", "2", "--drain-timeout", "10", "--systems", "kafka,chronicle",
                           "--kafka-poll", "blocking", "--rate-per-chain", "100", "--max-instances", "2", "--chronicle-grid", "1,2",
                           "--place", "broker=pk-be,chains=pk-app", "--out", str(tmp_path), env=lan.env(), timeout=900))
    m = manifest(run)
    validate(m)
    assert m["status"] == "complete", m.get("error")
    parts = {(p["part"], p["host"], p["fingerprint"]["hostname"]) for p in m["placement"]}
    assert ("chains", "pk-app", "pk-app") in parts and ("broker", "pk-be", "pk-be") in parts
    assert sum(p["part"] == "chains" for p in m["placement"]) == 1, "one entry for the part, not one per step"
    assert all(p["leftBehind"] is False for p in m["placement"])
    (broker,) = [p for p in m["placement"] if p["part"] == "broker"]
    assert broker["address"] == lan.address["pk-be"] and broker["service"].startswith("Kafka broker for kafka/blocking (")
    assert m["notes"]["kafkaBroker"].startswith(f"on pk-be at {lan.address['pk-be']}:")
    assert "pk-app" in m["notes"]["chains"]
    steps = read_csv(run / "sweep.csv")
    assert {r["system"] for r in steps} == {"kafka", "chronicle"}
    for r in steps:
        assert int(r["window_delivered"]) > 0 and int(r["lost"]) == 0 and int(r["duplicates"]) == 0, r
        assert float(r["cpu_app_pct"]) > 0 and float(r["cpu_system_pct"]) > 0, "the chains' CPU and their host's"
    assert all(float(r["cpu_broker_pct"]) > 0 for r in steps if r["system"] == "kafka"), "the broker's CPU, from its own host"
    hlogs = [f for f in m["files"] if f["kind"] == "hlog"]
    assert hlogs and all((run / f["path"]).stat().st_size > 0 for f in hlogs), "each step's latency logs came back from pk-app"
    series = {(r["series"], r["metric"]) for r in read_csv(run / "timeseries.csv")}
    assert ("host:chains", "cpu_pct") in series and any(s.endswith("@chains") for s, _ in series)
    assert ("proc:kafka-broker@broker", "cpu_pct") in series
    # a service stopped with its folder there sends its GC log home first; each step's JVM keeps one too
    gc = [f for f in m["files"] if f["path"].startswith("logs/gc/")]
    assert any("on pk-be" in f["description"] for f in gc) and any("on pk-app" in f["description"] for f in gc), [f["description"] for f in gc]
    assert all("[gc" in (run / f["path"]).read_text() for f in gc)
    assert_no_jvm_left(lan, before, seconds=10)


def test_messaging_chains_elsewhere_need_a_broker_they_can_reach(lan, tmp_path):
    for args, expected in [(["--place", "chains=pk-app"], "--place chains needs the Kafka broker off loopback too"),
                           (["--bootstrap-servers", "localhost:9092", "--place", "chains=pk-app"], "is each chain host's own loopback"),
                           (["--systems", "chronicle", "--place", "chains=pk-app+pk-drv"], "add --isolation jvm")]:
        r = bench("run", "messaging", "--quick", *args, "--out", str(tmp_path), env=lan.env(), timeout=120)
        assert r.returncode == 2 and expected in one_error_line(r), (args, r.stderr)
    assert not any(tmp_path.rglob("run.json")), "no run folder"
