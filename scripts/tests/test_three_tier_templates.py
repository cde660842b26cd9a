"""The three-tier study's templates round: one quick run (JSP, FreeMarker and plain HTML on one Spring MVC server)
with a valid saturation row per engine, every hlog decoded and matching its step, the three rendered pages the same
modulo whitespace, the server's pool read from the running server, nothing left running after completion or Ctrl-C,
and an unknown engine refused."""
import json
import os
import re
import time
from pathlib import Path

import pytest

from conftest import ROOT, port_open, bench, decode_hlog, interrupt_run, leftovers, manifest, read_csv, validate, validate_load_results
from shared_runs import shared_quick_run

ENGINES = ["jsp", "freemarker", "plain"]
CELLS = [f"templates/{e}" for e in ENGINES]
ITEMS = 10


def collapsed(text):
    return re.sub(r"\s+", " ", text.strip())


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """The session's quick three-tier run (every round; this module reads its templates cells)."""
    return shared_quick_run(tmp_path_factory, "three-tier").dir


def templates_rows(rows):
    return [r for r in rows if r["cell"] in CELLS]


def boot_bom_version():
    return re.search(r"^//DEPS org\.springframework\.boot:spring-boot-dependencies:(\S+)@pom$", (ROOT / "scripts/three-tier/ThreeTier.java").read_text(),
                     re.M).group(1)


def boot_managed(prop):
    """A version Spring Boot's BOM manages, from the BOM JBang resolved for the run (its local Maven repository)."""
    bom = boot_bom_version()
    pom = Path(os.environ.get("JBANG_REPO", Path.home() / ".m2" / "repository")) / \
        f"org/springframework/boot/spring-boot-dependencies/{bom}/spring-boot-dependencies-{bom}.pom"
    return re.search(rf"<{re.escape(prop)}>([^<]+)</{re.escape(prop)}>", pom.read_text()).group(1)


def test_manifest_validates_with_the_three_engines(quick_run):
    m = manifest(quick_run)
    validate(m)
    assert m["status"] == "complete" and [v for v in m["variants"] if v.startswith("templates/")] == CELLS
    assert not [r for r in m["invalidReasons"] if r.startswith("templates fork")], "no page or header differs: " + str(m["invalidReasons"])
    t = m["notes"]["templates"]
    assert t["published"]["shareOfPlain"] == {"jsp": 0.733, "freemarker": 0.967, "plain": 1.0}
    # the version the running engine reports, which is the one the script's Spring Boot BOM manages
    assert set(t["versions"]) >= {"tomcat", "jasper", "freemarker"} and t["versions"]["freemarker"] == boot_managed("freemarker.version")
    assert t["versions"]["springBoot"] == boot_bom_version()
    assert t["versions"]["jasper"] == t["versions"]["tomcat"].rsplit(".", 1)[0], "Jasper matches the Tomcat Spring Boot brings"
    assert t["orderByFork"] == {"1": ",".join(ENGINES)}
    (warmup,) = [w for w in m["notes"]["serverWarmup"] if w["label"] == "templates"]
    assert sorted(warmup["endpoints"]) == sorted(f"/page/{e}" for e in ENGINES), "all engines warm before any is measured"


def test_pool_and_jsp_settings_come_from_the_running_server(quick_run):
    running = manifest(quick_run)["notes"]["templates"]["running"]
    assert running["requestThreadsMax"] == 200, "Tomcat's default pool, shared by the three engines"
    assert running["items"] == ITEMS
    jsp = running["jspServlet"]
    assert jsp["className"] == "org.apache.jasper.servlet.JspServlet"
    assert jsp["initParameters"]["development"] == "false", "no request checks the JSP file"


def test_one_valid_saturation_row_per_engine(quick_run):
    rows = templates_rows(read_csv(quick_run / "saturation.csv"))
    assert sorted(r["cell"] for r in rows) == sorted(CELLS)
    for r in rows:
        assert r["round"] == "templates" and r["variant"] == r["cell"].split("/")[1] and r["fork"] == "1", r
        assert r["valid"] == "true" and r["errors"] == "0" and float(r["throughput_rps"]) > 0 and int(r["responses"]) > 0, r
        assert float(r["cpu_app_pct"]) > 0, "the server's CPU is measured"
    capacity = templates_rows(read_csv(quick_run / "capacity.csv"))
    assert sorted(r["cell"] for r in capacity) == sorted(CELLS)


def test_every_hlog_decodes_and_counts_its_responses(quick_run):
    assert validate_load_results(quick_run) > 0, "each driver result holds to its declaration"
    m = manifest(quick_run)
    saturation = {(r["cell"], r["fork"]): r for r in read_csv(quick_run / "saturation.csv")}
    hlogs = [f for f in m["files"] if f["kind"] == "hlog" and f["cell"] in CELLS]
    assert {f["cell"] for f in hlogs} == set(CELLS)
    # saturation: corrected and uncorrected (the same samples: a closed model has no schedule); an open step: those two
    # and the driver's lateness
    assert len(hlogs) == (2 + 3) * len(CELLS), hlogs
    for f in hlogs:
        merged, intervals = decode_hlog(quick_run / f["path"])
        assert intervals >= 1 and f["fork"] == 1
        if f["series"] == f["cell"] + "/saturation":
            expected = int(saturation[(f["cell"], "1")]["responses"])
        else:
            # an open-model step: the driver's own counts in that phase
            phase, kind = pathlib_stem(f["path"])
            result = json.loads((quick_run / "load" / f"{phase}.result.json").read_text())
            (ph,) = [p for p in result["phases"] if p["name"] == phase]
            expected = {"corrected": ph["correctedCount"], "uncorrected": ph["histogramCount"], "lateness": ph["started"]}[kind]
            assert f["series"].endswith("/driver-lateness") == (kind == "lateness"), f
        assert merged.get_total_count() == expected > 0, f


def pathlib_stem(hlog_path):
    """latency/templates.jsp.r1234.fork1.lateness.hlog -> (templates.jsp.r1234.fork1, lateness)"""
    name = hlog_path.split("/")[-1]
    m = re.fullmatch(r"(.*)\.(corrected|uncorrected|lateness)\.hlog", name)
    return m.group(1), m.group(2)


def test_pages_are_the_same_modulo_whitespace_and_hold_the_items(quick_run):
    m = manifest(quick_run)
    registered = {f["path"] for f in m["files"]}
    pages = {}
    for engine in ENGINES:
        path = f"pages/{engine}.html"
        assert path in registered
        pages[engine] = (quick_run / path).read_text(encoding="utf-8")
    for engine, text in pages.items():
        assert collapsed(text) == collapsed(pages["plain"]), engine
        items = re.findall(r'<li id="item-(\d+)">', text)
        assert items == [str(i) for i in range(1, ITEMS + 1)], engine
        # the model's text needs escaping, and every engine escapes it alike
        assert "Today&#39;s picks: fruit &amp; vegetables" in text and "&lt;fresh&gt; &amp; local" in text and "<fresh>" not in text
    notes = m["notes"]["templates"]
    assert notes["sameModuloWhitespace"] is True
    assert len({notes["pages"][e]["sha256Collapsed"] for e in ENGINES}) == 1
    assert len({(notes["pages"][e]["headers"], notes["pages"][e]["contentType"]) for e in ENGINES}) == 1, "same headers for all three"
    assert notes["pages"]["plain"]["headers"] == "content-length,content-type"


def test_nothing_is_left_after_a_completed_run(quick_run):
    m = manifest(quick_run)
    assert leftovers(quick_run) == []
    assert not (quick_run / "scratch").exists(), "the document root and Tomcat's work folder go with the run"
    assert m["notes"]["ports"] and not [p for p in m["notes"]["ports"].values() if port_open(p)]


def test_interrupted_run_leaves_nothing_and_is_marked_interrupted(tmp_path):
    def measuring():
        for run_dir in tmp_path.glob("three-tier/*"):
            try:
                ports = manifest(run_dir).get("notes", {}).get("ports", {})
            except (OSError, ValueError):
                continue  # the manifest is not written yet (or is being replaced)
            if "templates/fork1" in ports and list(run_dir.glob("load/*.yaml")) and leftovers(run_dir):
                return run_dir, ports
        return None

    code, err, run_dir, ports = interrupt_run(["three-tier", "--quick", "--rounds", "templates", "--engines", "jsp", "--warmup", "30",
                                               "--measure", "30", "--out", str(tmp_path)], measuring, timeout=300)
    assert code == 130, err
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "interrupted"
    time.sleep(1)
    assert leftovers(run_dir) == []
    assert not (run_dir / "scratch").exists()
    assert not [p for p in ports.values() if port_open(p)]


def test_unknown_engine_is_one_line_and_exit_2(tmp_path):
    r = bench("run", "three-tier", "--quick", "--rounds", "templates", "--engines", "velocity", "--out", str(tmp_path), timeout=120)
    assert r.returncode == 2, r.stderr
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and "--engines expects one or more of jsp, freemarker, plain" in lines[0], r.stderr
    assert not (tmp_path / "three-tier").exists()
