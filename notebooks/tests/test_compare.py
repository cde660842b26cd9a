"""The compare notebook on two real groups: quick queues runs whose forks ran on two different JDKs (--java),
or, on a machine with one JDK, under two collectors (--fork-jvm-args). Executed headlessly, published,
and rendered in headless Chromium."""
import json
import os
import pathlib
import re
import shutil
import subprocess

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
SECOND_JDK = pathlib.Path("/usr/lib/jvm/temurin-25-jdk-amd64")


def bench(*args, env=None, timeout=900):
    return subprocess.run([str(ROOT / "bench"), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env=dict(os.environ, **(env or {})))


def outputs(nb, mime):
    return [o["data"][mime] for c in nb.cells if c.cell_type == "code" for o in c.outputs if mime in o.get("data", {})]


@pytest.fixture(scope="module")
def compared(tmp_path_factory):
    """Two groups of one quick run each (3 forks, so the Welch test can speak), the notebook executed on them."""
    tmp = tmp_path_factory.mktemp("compare")
    runs = tmp / "runs"
    if (SECOND_JDK / "bin/java").exists():
        sides = {"a": [], "b": ["--java", str(SECOND_JDK)]}
    else:
        sides = {"a": ["--fork-jvm-args", "-XX:+UseSerialGC"], "b": ["--fork-jvm-args", "-XX:+UseParallelGC"]}
    ids = {}
    for tag, extra in sides.items():
        r = bench("run", "queues", "--quick", "--variants", "abq-1", "--forks", "3", "--warmup", "0.5", "--measure", "1",
                  "--tag", tag, "--out", str(runs), *extra, timeout=600)
        assert r.returncode == 0, r.stderr[-3000:]
        ids[tag] = pathlib.Path(r.stdout.strip().splitlines()[-1]).name
    executed = tmp / "executed"
    r = bench("notebooks", "--runs", str(runs), "--out", str(executed), str(ROOT / "notebooks/compare.ipynb"),
              env={"PERFKIT_COMPARE": "queues: tag=a vs tag=b"})
    assert r.returncode == 0, r.stderr[-4000:]
    nb = nbformat.read(executed / "compare.ipynb", as_version=4)
    for i, cell in enumerate(nb.cells, start=1):
        assert not [o for o in cell.get("outputs", []) if o.output_type == "error"], f"cell {i} failed"
    return tmp, executed, nb, ids, sides


def test_the_fingerprint_diff_names_the_one_factor_that_differs(compared):
    _, _, nb, _, sides = compared
    text = "\n".join(outputs(nb, "text/markdown"))
    if "--java" in sides["b"]:
        assert re.search(r"\| JVM \(forks\) \|[^|]*(same as run|17\.)[^|]*\|[^|]*25\.", text), "the forks' JDK, side by side"
        assert "Only **JVM** differs" in text, text[:3000]
    else:
        assert "UseParallelGC" in text and "Only **JVM flags** differs" in text
    assert "Warning" not in text


def test_every_cell_gets_an_interval_and_a_verdict_the_forks_support(compared):
    _, _, nb, _, _ = compared
    text = "\n".join(outputs(nb, "text/markdown"))
    rows = [l for l in text.splitlines() if l.startswith("| abq-1 | tag=b |")]
    assert len(rows) == 1, text[:3000]
    ratio, low, high, interval = [c.strip() for c in rows[0].split("|")[3:7]]
    assert interval == "95% t" and float(low.replace(",", "")) <= float(ratio.replace(",", "")) <= float(high.replace(",", ""))
    assert re.search(r"(cannot be told apart|faster than|slower than)[^|]*p = ", rows[0]), rows[0]
    assert outputs(nb, "image/svg+xml"), "the per-cell figure"
    assert "No group has latency logs" in text, "throughput runs record no latency, and the notebook says so"


def test_the_post_names_the_compared_runs_and_renders(compared, tmp_path):
    _, executed, _, ids, sides = compared
    site = tmp_path / "site"
    r = bench("publish", "--from", str(executed), "--out", str(site))
    assert r.returncode == 0, r.stderr
    md = (site / "compare/index.md").read_text()
    block = md[4:md.index("\n---\n", 4)]
    fm = {k: json.loads(v) for k, v in (line.split(": ", 1) for line in block.splitlines())}
    assert sorted(fm["runs"]) == sorted(ids.values())
    if "--java" in sides["b"]:
        assert re.search(r"(^|, )25\.", fm["jdk"]) and re.search(r"(^|, )17\.", fm["jdk"]), fm["jdk"]
    assert "PERFKIT_COMPARE" not in md and "%use" not in md, "parameter and set-up cells stay out of the post"
    html = (site / "compare/index.html").read_text()
    assert "<script" not in html.lower()
    figures = sorted(p.name for p in (site / "compare/figures").iterdir())
    assert figures == ["compare-cells.svg"]
    if not (shutil.which("chromium") and shutil.which("chromedriver")):
        pytest.skip("headless Chromium not installed (./bench test installs it)")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", f"--user-data-dir={tmp_path / 'chromium'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    try:
        driver.get((site / "compare/index.html").as_uri())
        images = driver.execute_script("return Array.from(document.images).map(i => ({src: i.src, natural: i.naturalWidth,"
                                       " width: i.getBoundingClientRect().width, height: i.getBoundingClientRect().height}))")
        svgs = [i for i in images if i["src"].endswith(".svg")]
        assert svgs and all(i["natural"] > 0 and i["width"] > 0 and i["height"] > 0 for i in svgs), images
        assert all(i in driver.page_source for i in ids.values()), "the runs are named on the page"
    finally:
        driver.quit()
