"""The web-reactive study: a quick sweep of both stacks (two N values of the closed model, two open-model rates)
with exact request counts, every hlog decoded, the load driver's YAML kept with Hyperfoil's pitfalls handled,
thread pools read from the running apps, nothing left running after completion or Ctrl-C, and bad input refused."""
import csv
import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import assert_refused, run_once, port_open, bench, decode_hlog, free_port, interrupt_run, leftovers, manifest, read_csv, run_dir_of, validate, validate_load_results, validate_notes

USERS = [10, 50]
RATES = [100, 200]
STEP_SECONDS = 1  # at the 100 ms delay: 1-call cells repeat 10 times (--step-seconds), 2-call cells 5 (--repeats)
REPEATS = {1: 10, 2: 5}
CELLS = ["mvc/1call", "mvc/2call", "webflux/1call", "webflux/2call"]
QUICK = ["--quick", "--variants", "mvc,webflux", "--users", ",".join(map(str, USERS)), "--rates", ",".join(map(str, RATES)),
         "--warmup", "2", "--measure", "2", "--server-warmup-max", "3", "--step-seconds", str(STEP_SECONDS)]  # a quick warm-up never settles (its JIT window is 10 s)


def peer_rows(run_dir, tool):
    return [r for r in read_csv(run_dir / "peers.csv") if r["tool"] == tool]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    return run_once(tmp_path_factory, "web-reactive", *QUICK, timeout=1500)


def test_quick_sweep_has_every_cell_and_exact_closed_counts(quick_run):
    m = manifest(quick_run)
    validate(m)
    assert m["status"] == "complete" and m["mode"] == "sweep" and m["variants"] == CELLS
    rows = read_csv(quick_run / "closed.csv")
    assert sorted((r["cell"], int(r["users"])) for r in rows) == sorted((c, n) for c in CELLS for n in USERS)
    for r in rows:
        # the siege shape: every one of the N users made exactly R requests, all answered
        assert int(r["repeats"]) == REPEATS[int(r["calls"])], "a step lasts --step-seconds at least, and never repeats under --repeats"
        assert int(r["requests"]) == int(r["users"]) * int(r["repeats"]) == int(r["expected_requests"]), r
        assert int(r["responses"]) == int(r["requests"]) and r["errors"] == "0", r
        assert r["cell"] == f"{r['stack']}/{r['calls']}call" and r["valid"] == "true", r
        # each step says how busy its servers' JIT was, and whether steal made it the host's number
        assert r["warm"] == str(not (r["jit_ms_per_s"] and float(r["jit_ms_per_s"]) > 50)).lower(), r
        assert r["verdict"] == ("not measurable on this host" if float(r["steal_pct"]) > 20 else "measured"), r
    open_rows = read_csv(quick_run / "open.csv")
    assert sorted((r["cell"], float(r["rate_rps"])) for r in open_rows) == sorted((c, float(x)) for c in CELLS for x in RATES)
    capacity = {r["cell"]: r for r in read_csv(quick_run / "capacity.csv")}
    assert list(capacity) == CELLS


def test_open_verdicts_and_capacity_follow_the_rule(quick_run):
    assert validate_notes(quick_run) >= 2, "the notes the notebook reads hold to their declaration"
    rows = read_csv(quick_run / "open.csv")
    measure = float(manifest(quick_run)["params"]["measure"])
    for r in rows:
        within = float(r["p99_ms"]) <= float(r["slo_ms"]) if r["p99_ms"] else None
        # fewer requests than the schedule (beyond noise), a wait for a connection, or a lateness p99 above 10% of the SLO
        expected = float(r["rate_rps"]) * measure
        behind = (float(r["blocked_ms"]) > 0 or int(r["requests"]) < min(0.99 * expected, expected - 4 * expected ** 0.5)
                  or float(r["lateness_p99_ms"]) > 0.1 * float(r["slo_ms"]))
        if r["verdict"] == "met":
            # met: p99 within the SLO, every request sent on time, none failed
            assert within and not behind and r["errors"] == "0" and r["valid"] == "true", r
        elif r["verdict"] == "invalid":
            # a driver that fell behind proves nothing when the requests it did send were fast enough
            assert r["valid"] == "false" and (within is None or within), r
            assert behind or "in second" in r["invalid_reason"] or "nothing completed" in r["invalid_reason"], r
        else:
            # missed (or not measurable on a saturated host): slow even without the requests the driver could not send, or failed
            assert r["verdict"] in ("missed", "not measurable on this host") and r["valid"] == "true", r
            assert within is False or r["errors"] != "0", r
    for c in read_csv(quick_run / "capacity.csv"):
        steps = sorted((r for r in rows if r["cell"] == c["cell"]), key=lambda r: float(r["rate_rps"]))
        rate = lambda s: int(float(s["rate_rps"]))
        # the bracket on the rates tried: below the first plain miss, the highest rate met; a step that could not be
        # judged (driver behind, not measurable) says nothing, so it ends the bracket only above the last rate met
        miss = next((s for s in steps if s["verdict"] == "missed"), None)
        below = steps if miss is None else steps[:steps.index(miss)]
        met = max((rate(s) for s in below if s["verdict"] == "met"), default=None)
        unjudged = next((s for s in below if s["verdict"] != "met" and (met is None or rate(s) > met)), None)
        first = unjudged or miss
        assert c["last_met_rps"] == ("" if met is None else str(met)), (c, steps)
        assert c["first_missed_rps"] == ("" if first is None else str(rate(first))), (c, steps)
        assert c["status"] == ("wall" if unjudged is None and miss is not None
                               else "not measurable on this host" if met is None and first is not None else "lower bound"), (c, steps)


def test_open_steps_are_timed_from_their_schedule_beside_the_drivers_lateness(quick_run):
    m = manifest(quick_run)
    by_series = {}
    for f in m["files"]:
        if f["kind"] == "hlog":
            by_series.setdefault(f["series"], []).append(f)
    for r in read_csv(quick_run / "open.csv"):
        rate = int(float(r["rate_rps"]))
        lateness = by_series[f"{r['cell']}/r{rate}/driver-lateness"]
        assert len(lateness) == 1 and lateness[0]["timing"] == "corrected", lateness
        late, _ = decode_hlog(quick_run / lateness[0]["path"])
        files = {f["timing"]: f for f in by_series[f"{r['cell']}/r{rate}"]}
        corrected, _ = decode_hlog(quick_run / files["corrected"]["path"])
        uncorrected, _ = decode_hlog(quick_run / files["uncorrected"]["path"])
        assert late.get_total_count() == corrected.get_total_count() > 0, "a lateness and a scheduled-start latency per request"
        # the table's p99 is the log's, to within one request's rank: HdrHistogram's Java and Python round the rank of
        # a percentile differently, and on a busy machine two neighbouring latenesses can lie a few percent apart
        one_rank = 100.0 / late.get_total_count()
        low, high = (late.get_value_at_percentile(p) / 1e6 for p in (99 - one_rank, min(100.0, 99 + one_rank)))
        assert 0.99 * low - 0.01 <= float(r["lateness_p99_ms"]) <= 1.01 * high + 0.01, (low, r["lateness_p99_ms"], high)
        # a request is never answered before it was due: from the scheduled start is never faster than from the send
        assert corrected.get_value_at_percentile(50) >= uncorrected.get_value_at_percentile(50), r
        assert int(r["driver_threads"]) >= 1 and int(r["connections"]) > 16


def test_every_server_is_warmed_up_by_rule_before_it_is_measured(quick_run):
    m = manifest(quick_run)
    warmups = m["notes"]["serverWarmup"]
    assert sorted(w["label"] for w in warmups) == ["mvc", "webflux"], "one warm-up per app and fork, before any measurement"
    for w in warmups:
        assert w["seconds"] <= float(m["params"]["server-warmup-max"]) + 2
        assert w["settled"] == w["reason"].startswith("every JIT"), w
        assert set(w["jitMsPerSAtEnd"]) == {f"{w['label']}/fork1", "backend"}, w
        assert sorted(w["endpoints"]) == ["/users/42?calls=1", "/users/42?calls=2"], "every endpoint the app is measured on"
    assert m["notes"]["jdks"]["apps"].split()[0] != "", "the JDK of the apps is recorded"
    # the time series says when the servers warmed up, and when the driver warmed up, measured and drained
    phases = {r["phase"] for r in read_csv(quick_run / "timeseries.csv")}
    assert {"warmup", "measure"} <= phases, phases


def test_every_hlog_decodes_and_holds_its_step(quick_run):
    m = manifest(quick_run)
    closed = {(r["cell"], r["users"]): r for r in read_csv(quick_run / "closed.csv")}
    hlogs = [f for f in m["files"] if f["kind"] == "hlog"]
    # every hlog is described; the driver's saturation runs beside wrk (when installed) are series of their own
    assert all(f["series"] and f["cell"] in CELLS and f["timing"] for f in hlogs), hlogs
    saturation = [f for f in hlogs if f["series"].endswith("/saturation")]
    assert len(saturation) == (2 * len(peer_rows(quick_run, "wrk")) if (quick_run / "peers.csv").exists() else 0)
    hlogs = [f for f in hlogs if f not in saturation and not f["series"].endswith("/driver-lateness")]
    assert len(hlogs) == 2 * len(CELLS) * (len(USERS) + len(RATES))
    for f in hlogs:
        merged, intervals = decode_hlog(quick_run / f["path"])
        assert intervals == 1 and f["window"]["endMs"] >= f["window"]["startMs"] and f["fork"] == 1
        step = f["series"].split("/")[-1]
        assert f["series"] == f"{f['cell']}/{step}"
        if step.startswith("n"):
            assert merged.get_total_count() == int(closed[(f["cell"], step[1:])]["responses"]) == int(step[1:]) * REPEATS[int(f["cell"][-5])]


def test_driver_yaml_is_kept_and_avoids_hyperfoils_pitfalls(quick_run):
    assert validate_load_results(quick_run) > 0, "each driver result holds to its declaration"
    m = manifest(quick_run)
    yamls = [f["path"] for f in m["files"] if f["path"].endswith(".yaml")]
    assert yamls
    for path in yamls:
        text = (quick_run / path).read_text()
        assert "cache-control: no-store" in text and "connection: close" not in text.lower()
        assert "stopOnInvalid: false" in text, "a user goes on after an error answer, as siege's do"
        connections = int(text.split("sharedConnections:")[1].split()[0])
        users = [int(line.split(":")[1]) for line in text.splitlines() if line.strip().startswith("users:")]
        sessions = [int(line.split(":")[1]) for line in text.splitlines() if line.strip().startswith("maxSessions:")]
        assert connections >= max(users + sessions), "as many connections as the largest concurrency"
        name = os.path.basename(path)
        if ".closed." in name:  # the sweep
            assert f"repeats: {REPEATS[1 if '1call' in name else 2]}" in text and "atOnce:" in text
        elif ".r" in name:  # an open step: a rising warm-up, then the fixed schedule the driver times requests against
            assert "increasingRate:" in text and "constantRate:" in text and "variance: false" in text and "variance: true" not in text
    for result in (quick_run / "load").glob("*.result.json"):
        phases = json.loads(result.read_text())["phases"]
        closed = [p for p in phases if any(part[:1] == "n" and part[1:].isdigit() for part in p["name"].split("."))]
        assert all(p["blockedTimeNs"] == 0 for p in closed), "closed steps never wait for a connection"


def test_thread_pools_come_from_the_running_apps(quick_run):
    apps = manifest(quick_run)["notes"]["apps"]
    assert apps["mvc"]["requestThreadsMax"] == 200, "Tomcat's default pool"
    assert apps["webflux"]["ioWorkerCount"] == max(os.cpu_count(), 4), "Reactor Netty's default event loops"
    assert apps["webflux"]["threadGroups"].get("reactor-http-epoll-#", apps["webflux"]["threadGroups"].get("reactor-http-nio-#")) >= 1
    # the JDK client's idle pool reached the running MVC app bounded like WebFlux's (unbounded, it filled a heap)
    assert f'idle at most {apps["webflux"]["clientConnectionsMax"]}, closed after 30 s' in apps["mvc"]["clientConnectionsMax"]


def test_external_service_delay_is_checked_at_its_busiest_step(quick_run):
    m = manifest(quick_run)
    peak = m["notes"]["backendAtPeak"]
    assert peak["delayMs"] == 100 and peak["p50Ms"] > 0
    assert peak["honoured"] == (abs(peak["p50Ms"] - 100) <= 2)
    assert peak["honoured"] or any("external service" in r for r in m["invalidReasons"])
    closed = read_csv(quick_run / "closed.csv")
    assert all(float(r["backend_p50_ms"]) >= 100 for r in closed), "the service never answers before its delay"
    assert all(int(r["backend_calls"]) == int(r["responses"]) * int(r["calls"]) for r in closed), "each request made `calls` calls"


def test_cpu_is_measured_per_process(quick_run):
    for r in read_csv(quick_run / "closed.csv") + read_csv(quick_run / "open.csv"):
        for col in ("cpu_app_pct", "cpu_backend_pct", "cpu_driver_pct", "cpu_system_pct"):
            assert float(r[col]) >= 0, (col, r)
    series = {line.split(",")[3] for line in (quick_run / "timeseries.csv").read_text().splitlines()[1:]}
    assert {"proc:backend", "proc:mvc/fork1", "proc:webflux/fork1", "proc:load-driver", "system"} <= series


def test_siege_and_wrk_run_beside_the_driver_when_installed(quick_run):
    import shutil
    m = manifest(quick_run)
    if not shutil.which("siege") or not shutil.which("wrk"):
        assert "not installed" in m["notes"]["peers"]
        return
    rows = read_csv(quick_run / "peers.csv")
    for cell in ("mvc/1call", "webflux/1call"):
        siege = [r for r in rows if r["cell"] == cell and r["tool"] == "siege"]
        assert sorted(int(r["users"]) for r in siege) == USERS, "the original's command at a few N"
        for r in siege:
            # siege -b -c N -r R: N users x R requests, the same count the driver's closed step makes
            repeats = REPEATS[int(cell[-5])]
            assert int(r["requests"]) + int(r["failed"]) == int(r["users"]) * repeats, r
            assert r["command"] == f"siege -b -c {r['users']} -r {repeats} <url>"
        (wrk,) = [r for r in rows if r["cell"] == cell and r["tool"] == "wrk"]
        assert int(wrk["users"]) == max(USERS) and float(wrk["throughput_rps"]) > 0
        assert abs(float(wrk["driver_ratio"]) - float(wrk["driver_throughput_rps"]) / float(wrk["throughput_rps"])) < 1e-3
        assert ("meets its goal" in wrk["note"]) == (float(wrk["driver_ratio"]) >= 0.8)


def test_every_service_reports_its_jit_and_gc_time(quick_run):
    """A step measured while C2 still compiles is not steady state: each service JVM's compilation and collection
    time per second is in the time series beside its CPU."""
    rows = read_csv(quick_run / "timeseries.csv")
    for service in ("backend", "mvc/fork1", "webflux/fork1"):
        for metric in ("jit_ms_per_s", "gc_ms_per_s"):
            values = [float(r["value"]) for r in rows if r["series"] == f"jvm:{service}" and r["metric"] == metric]
            assert values and min(values) >= 0, (service, metric)
        jit = [float(r["value"]) for r in rows if r["series"] == f"jvm:{service}" and r["metric"] == "jit_ms_per_s"]
        assert sum(jit) > 0, f"{service} compiled nothing while it served load?"


def test_the_run_names_no_folder_of_this_machine(quick_run):
    """Runs are shared and published: the manifest's file list and the load logs carry no absolute paths (siege's
    config reads relative to the run; the driver's SLF4J no longer lists local jars); --profile's recordings are
    checked in test_profile_records_the_servers_and_measures_its_cost_at_a_rate_the_cell_met."""
    files = json.dumps(manifest(quick_run)["files"])
    assert str(quick_run) not in files and os.path.expanduser("~") + "/" not in files
    for log in (quick_run / "load").glob("*.log"):
        text = log.read_text()
        assert "SLF4J" not in text and os.path.expanduser("~/.m2") not in text, log.name


def test_notebook_runs_against_the_fresh_quick_run(quick_run, tmp_path):
    import nbformat
    r = bench("notebooks", "--runs", str(quick_run.parent), "--out", str(tmp_path), "notebooks/web-reactive.ipynb", timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    nb = nbformat.read(tmp_path / "web-reactive.ipynb", as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if o.output_type == "error"]
    runs = [json.loads(o["data"]["text/x-perfkit-runs"]) for o in outputs if "text/x-perfkit-runs" in o.get("data", {})]
    assert runs[0]["runIds"] == [quick_run.name] and runs[0]["reference"] is False
    captions = [o["data"]["text/plain"] for o in outputs if "image/svg+xml" in o.get("data", {})]
    text = "\n".join(o["data"]["text/markdown"] for o in outputs if "text/markdown" in o.get("data", {}))
    # a quick run's apps may still compile in every step: then the post says so instead of plotting
    warm = [r for r in read_csv(quick_run / "closed.csv") if r["valid"] == "true" and r["warm"] == "true" and r["verdict"] == "measured"]
    for caption in ("Mean response time against concurrent users", "Throughput against concurrent users"):
        assert any(c.startswith(caption) for c in captions) == bool(warm), (caption, captions)
    assert ("so there is nothing to plot" in text) == (not warm)
    assert "The original's claim" in text and "cost per million requests" in text


def test_the_post_says_so_when_no_closed_step_was_warm(quick_run, tmp_path):
    import nbformat
    cold = tmp_path / "runs" / quick_run.name
    shutil.copytree(quick_run, cold)
    rows = read_csv(cold / "closed.csv")
    for r in rows:
        r["warm"] = "false"
    with open(cold / "closed.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    r = bench("notebooks", "--runs", str(cold.parent), "--out", str(tmp_path / "out"), "notebooks/web-reactive.ipynb", timeout=900)
    assert r.returncode == 0, r.stderr[-4000:]
    nb = nbformat.read(tmp_path / "out" / "web-reactive.ipynb", as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.outputs]
    assert not [o for o in outputs if "image/svg+xml" in o.get("data", {}) and "concurrent users" in o["data"]["text/plain"]]
    text = "\n".join(o["data"]["text/markdown"] for o in outputs if "text/markdown" in o.get("data", {}))
    assert text.count("was measured on warm servers without heavy steal, so there is nothing to plot") == 1, text
    assert f"{len(rows)} step(s) measured while a server's JIT still compiled are left out" in text
    assert "no measured closed-model step" in text and "**cannot tell here**" in text


@pytest.mark.alone  # the cost is measured at a rate the cell met: beside another test on 2 cores it may meet none (then "not measured")
def test_profile_records_the_servers_and_measures_its_cost_at_a_rate_the_cell_met(tmp_path):
    """--profile, in a run of one cell: the app and the external service record each measured window; what recording
    costs is the cell's open step at half the highest rate it met, run recorded and plain, compared by the servers'
    CPU per 1000 requests; the plain step is in no recording, and no recording names a folder of this machine (no
    recording's destination, JVM command line, system property or environment)."""
    # a wide SLO: the cost is measured at a rate the cell met, and a slow CI host must not leave it none to meet
    run = run_dir_of(bench("run", "web-reactive", "--quick", "--variants", "mvc", "--calls", "1", "--users", "10", "--rates", "60,120",
                           "--slo-ms", "2000", "--warmup", "2", "--measure", "2", "--server-warmup-max", "3", "--step-seconds", "1",
                           "--peers", "off", "--profile", "--out", str(tmp_path), timeout=600))
    m = manifest(run)
    assert (run / "profiling.csv").is_file(), m["notes"].get("profilingCost")
    [cost] = read_csv(run / "profiling.csv")
    capacity = {(r["cell"], r["fork"]): r for r in read_csv(run / "capacity.csv")}
    met = capacity[(cost["cell"], "1")]["last_met_rps"]
    assert cost["cell"] == "mvc/1call" and met and float(cost["rate_rps"]) == max(1, int(float(met)) // 2) and cost["pair"] == "1"
    a, b = float(cost["profiled_cpu_ms_per_1k"]), float(cost["plain_cpu_ms_per_1k"])
    assert a > 0 and b > 0 and float(cost["profiled_over_plain"]) == pytest.approx(a / b)
    rate = cost["rate_rps"].removesuffix(".0")
    window = {side: next(f["window"] for f in m["files"] if f["kind"] == "hlog" and f["series"] == f"mvc/1call/r{rate}/{side}-p1")
              for side in ("profiled", "plain")}
    recorded = {side: {p["series"] for p in m["files"] if p["kind"] == "profile" and p["window"]["startMs"] < w["endMs"] and w["startMs"] < p["window"]["endMs"]}
                for side, w in window.items()}
    assert {"mvc/fork1", "backend"} <= recorded["profiled"], f"the measured app and the external service recorded it: {recorded}"
    assert recorded["plain"] == set(), "the plain twin records nothing"
    recordings = list((run / "profiles").glob("*.jfr"))
    assert len(recordings) >= 2 * len([r for r in read_csv(run / "open.csv")]), "each open step's window, by both servers"
    for f in recordings:
        data = f.read_bytes()
        assert str(run).encode() not in data and os.path.expanduser("~/.m2").encode() not in data, f.name


def test_nothing_is_left_after_a_completed_run(quick_run):
    m = manifest(quick_run)
    assert leftovers(quick_run) == []
    assert m["notes"]["ports"] and not [p for p in m["notes"]["ports"].values() if port_open(p)]


def test_interrupted_run_leaves_no_process_or_port(tmp_path):
    def measuring():
        for run_dir in tmp_path.glob("web-reactive/*"):
            try:
                ports = manifest(run_dir).get("notes", {}).get("ports", {})
            except (OSError, ValueError):
                continue  # the manifest is not written yet (or is being replaced)
            if list(run_dir.glob("load/*.yaml")) and "mvc/fork1" in ports and leftovers(run_dir):
                return run_dir, ports
        return None

    code, err, run_dir, ports = interrupt_run(["web-reactive", "--quick", "--variants", "mvc", "--calls", "1", "--users", "1000",
                                               "--backend-delay-ms", "1000", "--models", "closed", "--out", str(tmp_path)], measuring, timeout=600)
    assert code == 130, err
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "interrupted"
    time.sleep(1)
    assert leftovers(run_dir) == []
    assert not [p for p in ports.values() if port_open(p)]


def test_target_url_loads_a_users_own_server(tmp_path):
    import http.server
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as a real deployment would
        driven = 0  # requests from the load driver; the reachability check and the warm-up use the JDK's client
        warmup = 0
        lock = threading.Lock()

        def do_GET(self):
            from_jdk = self.headers.get("user-agent", "").startswith("Java")
            with Handler.lock:
                if from_jdk:
                    Handler.warmup += 1
                else:
                    Handler.driven += 1
                hit = 0 if from_jdk else Handler.driven
            # every third driven request fails, as an overloaded server sheds load: the run must count those as errors
            body = b'{"ok":true}'
            self.send_response(503 if hit and hit % 3 == 0 else 200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/users/7?calls=1"
        run = run_dir_of(bench("run", "web-reactive", "--quick", "--target-url", url, "--models", "closed", "--users", "3,4", "--repeats", "2",
                               "--warmup", "0", "--peers", "off", "--out", str(tmp_path), timeout=600))
    finally:
        server.shutdown()
    m = manifest(run)
    validate(m)
    assert m["variants"] == ["target"] and "mvcVirtualSkipped" not in m["notes"]
    rows = read_csv(run / "closed.csv")
    # driven requests 1-6 are the 3 users x 2 (3 and 6 fail), 7-14 the 4 users x 2 (9 and 12 fail)
    assert [(r["cell"], r["users"], r["requests"], r["errors"]) for r in rows] == [("target", "3", "6", "2"), ("target", "4", "8", "2")]
    assert Handler.driven == 6 + 8, "every measured request reached the user's server"
    # the user's server is warmed by the throughput rule before it is measured; its JIT cannot be seen from here
    (warm,) = m["notes"]["serverWarmup"]
    assert warm["label"] == "target" and Handler.warmup > 1
    assert "backendAtPeak" not in m["notes"]


def test_unreachable_target_is_refused_before_any_run_folder(tmp_path):
    r = bench("run", "web-reactive", "--quick", "--target-url", "http://127.0.0.1:1/users/1", "--out", str(tmp_path), timeout=300)
    assert r.returncode == 2, r.stderr
    assert r.stderr.strip().splitlines() == ["error: web-reactive: option --target-url http://127.0.0.1:1/users/1 is unreachable: connection refused"]
    assert not (tmp_path / "web-reactive").exists()


BAD_OPTIONS = [
    (["--variants", "mvc,struts"], "--variants expects one or more of mvc, webflux, mvc-virtual"),
    (["--calls", "0"], "--calls expects"),
    (["--users", "10,x"], "--users expects"),
    (["--rates", "0"], "--rates expects rates in (0, 10000000]"),
    (["--target-url", "ftp://example.org/"], "--target-url expects an http://"),
    (["--measure", "0"], "--measure expects a number of seconds >= 0.1"),
    (["--app-jvm-args", "Xmx1g"], "--app-jvm-args expects JVM options that each start with '-'"),
    (["--rate-step", "500", "--max-rate", "100"], "--max-rate must be at least --rate-step"),
    (["--step-seconds", "-1"], "--step-seconds"),
]


@pytest.mark.parametrize("args, message", BAD_OPTIONS)
def test_bad_options_are_refused_in_one_line(tmp_path_factory, args, message):
    assert_refused("web-reactive", ["--quick", *args], message, tmp_path_factory, [["--quick", *a] for a, _ in BAD_OPTIONS])


def test_bad_options_are_one_line_and_exit_2_before_any_run_folder(tmp_path):
    args, message = BAD_OPTIONS[0]
    r = bench("run", "web-reactive", "--quick", "--out", str(tmp_path), *args, timeout=120)
    assert r.returncode == 2, r.stderr
    errors = [l for l in r.stderr.splitlines() if l.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], r.stderr
    assert "Exception" not in r.stderr and "\tat " not in r.stderr
    assert not (tmp_path / "web-reactive").exists()


# ---- the driver at a high rate: a stock nginx, as a user would try it ---------------------------------------------

@pytest.fixture
def nginx(tmp_path):
    """Debian's nginx with 1 worker serving a static file on a free loopback port (./bench setup installs it as root)."""
    import shutil as sh
    if not sh.which("nginx") and not os.path.exists("/usr/sbin/nginx"):
        pytest.skip("nginx not installed (./bench setup installs it as root)")
    port = free_port()
    (tmp_path / "html").mkdir()
    (tmp_path / "logs").mkdir()
    (tmp_path / "html/x.html").write_text("x" * 600)
    # the worker runs as another user unless told otherwise; as root, this one reads the test's private folder as root
    user = "user root root;\n" if os.geteuid() == 0 else ""
    (tmp_path / "nginx.conf").write_text(user + f"""worker_processes 1;
daemon off;
pid {tmp_path}/nginx.pid;
error_log {tmp_path}/logs/error.log warn;
events {{ worker_connections 4096; }}
http {{
  access_log off;
  keepalive_requests 1000000;
  keepalive_timeout 600s;
  server {{ listen 127.0.0.1:{port}; root {tmp_path}/html; }}
}}
""")
    proc = subprocess.Popen(["/usr/sbin/nginx", "-c", str(tmp_path / "nginx.conf"), "-p", str(tmp_path)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if port_open(port):
                break
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/x.html"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def high_rate_for_this_host(url):
    """20,000 req/s, or less where this host's nginx cannot carry it beside a driver: a third of what wrk reads, to 1,000s.
    The same VM gave 134-153k req/s with wrk on one day and 25-27k on another; a fixed rate would test the host, not the
    driver. Without wrk, 20,000 as the issue asked."""
    import shutil as sh
    if not sh.which("wrk"):
        return 20_000
    out = subprocess.run(["wrk", "-t1", "-c50", "-d3s", url], capture_output=True, text=True, timeout=60).stdout
    rps = float(next(l.split()[1] for l in out.splitlines() if l.startswith("Requests/sec:")))
    return int(min(20_000, max(2_000, rps / 3 // 1000 * 1000)))


@pytest.mark.alone  # the driver's lateness at this rate is what a second test on 2 cores would change
def test_the_open_model_holds_20000_requests_per_second_against_nginx(tmp_path, nginx):
    """The issue's reproduction: a fast target at 20,000 req/s (less on a host whose nginx is slower, see above).
    Connections follow the latency the target shows (not the rate alone), the driver's heap follows its connections, its
    lateness stays small, and the step is valid. The driver's own JVM warms up at the rate for 20 s first: at this rate a
    JVM still compiling runs late on 2 cores."""
    rate = high_rate_for_this_host(nginx)
    # the high rate alone: each open step is a driver JVM of its own, so a lower step first would warm nothing (the
    # quick runs' open steps check low rates)
    r = bench("run", "web-reactive", "--target-url", nginx, "--models", "open", "--rates", str(rate), "--forks", "1",
              "--warmup", "20", "--measure", "10", "--server-warmup-max", "20", "--peers", "off", "--out", str(tmp_path / "runs"), timeout=600)
    run_dir = run_dir_of(r)
    rows = {int(float(row["rate_rps"])): row for row in read_csv(run_dir / "open.csv")}
    assert list(rows) == [rate]
    top = rows[rate]
    assert top["valid"] == "true" and top["verdict"] == "met", (rate, top)
    assert int(top["connections"]) <= 1000, "not one connection per request per second"
    assert float(top["lateness_p99_ms"]) < 20, top
    assert float(top["achieved_rps"]) >= 0.95 * rate
    m = manifest(run_dir)
    series = {f["series"] for f in m["files"] if f["kind"] == "hlog"}
    assert f"target/r{rate}/driver-lateness" in series, series
    late, _ = decode_hlog(run_dir / f"latency/target.r{rate}.fork1.lateness.hlog")
    corrected, _ = decode_hlog(run_dir / f"latency/target.r{rate}.fork1.corrected.hlog")
    uncorrected, _ = decode_hlog(run_dir / f"latency/target.r{rate}.fork1.uncorrected.hlog")
    assert late.get_total_count() == corrected.get_total_count() >= 9.95 * rate, "every request has its lateness and its corrected latency"
    # the scheduler's millisecond tick alone makes requests late: from the scheduled start is never faster than Hyperfoil's own
    assert corrected.get_value_at_percentile(50) > uncorrected.get_value_at_percentile(50)
    assert "threads: " in (run_dir / f"load/target.r{rate}.fork1.yaml").read_text()
