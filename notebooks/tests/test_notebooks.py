"""Notebooks and the published site: headless execution, re-runs against new data, and a static blog
checked down to rendered SVG sizes in headless Chromium."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


def bench(*args, timeout=900):
    return subprocess.run([str(ROOT / "bench"), *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def executed_ok(path):
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells, start=1):
        if cell.cell_type != "code":
            continue
        assert cell.execution_count is not None, f"{path.name} cell {i} did not run"
        errors = [o for o in cell.outputs if o.output_type == "error"]
        assert not errors, f"{path.name} cell {i}: {errors[0].get('evalue')}"
    return nb


def outputs(nb, mime):
    return [o["data"][mime] for c in nb.cells if c.cell_type == "code" for o in c.outputs if mime in o.get("data", {})]


def test_committed_notebooks_are_stripped_and_described():
    assert {p.stem for p in NOTEBOOKS} >= {"queues", "messaging", "workflow", "harness"}
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert nb.metadata["kernelspec"]["name"] == "kotlin"
        meta = nb.metadata["perfkit"]
        assert meta["slug"] and meta["title"] and meta["summary"] and meta["tags"]
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(not c.outputs and c.execution_count is None for c in code), f"{path.name} has outputs: strip them"
        assert code[0].source == "%use @file[kit/perfkit.json]" and "setup" in code[0].metadata["tags"]
        assert "parameters" in code[1].metadata["tags"] and "PERFKIT_RUNS" in code[1].source
        assert 8 <= len(nb.cells) <= 30, "a notebook is a short story"


@pytest.fixture(scope="module")
def executed_reference(tmp_path_factory):
    out = tmp_path_factory.mktemp("executed")
    r = bench("notebooks", "--runs", "reference", "--out", str(out))
    assert r.returncode == 0, r.stderr[-4000:]
    return out


def test_every_notebook_runs_against_the_reference_data(executed_reference):
    for path in NOTEBOOKS:
        nb = executed_ok(executed_reference / path.name)
        assert outputs(nb, "image/svg+xml"), f"{path.name} draws no figure"
        runs = json.loads(outputs(nb, "text/x-perfkit-runs")[0])
        assert runs["reference"] is True and runs["runIds"]
        for run_id in runs["runIds"]:
            assert list((ROOT / "data/reference").glob(f"*/{run_id}/run.json")), run_id


def test_queues_notebook_shows_published_numbers_and_latency(executed_reference):
    nb = executed_ok(executed_reference / "queues.ipynb")
    text = "\n".join(outputs(nb, "text/markdown"))
    assert "original write-up (4-core laptop) | 3.4" in text, "published ratio beside ours"
    assert "this study:" in text
    assert "| corrected |" in text and "| uncorrected |" in text, "latency from the fixed-rate reference run"
    assert re.search(r"cannot be told apart|faster than|slower than", text), "a conclusion that follows the intervals"


def test_a_new_run_shows_up_with_no_edits(tmp_path):
    run = bench("run", "queues", "--quick", "--warmup", "0.5", "--measure", "1", "--tag", "notebook-rerun-test", timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    run_dir = pathlib.Path(run.stdout.strip().splitlines()[-1])
    try:
        r = bench("notebooks", "--out", str(tmp_path), str(ROOT / "notebooks/queues.ipynb"))
        assert r.returncode == 0, r.stderr[-4000:]
        nb = executed_ok(tmp_path / "queues.ipynb")
        runs = json.loads(outputs(nb, "text/x-perfkit-runs")[0])
        assert run_dir.name in runs["runIds"] and runs["reference"] is False
        assert "notebook-rerun-test" in "\n".join(outputs(nb, "text/markdown"))
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def test_a_bad_selection_fails_with_the_kits_message(tmp_path):
    r = bench("notebooks", "--runs", "no-such-run", "--out", str(tmp_path), str(ROOT / "notebooks/queues.ipynb"))
    assert r.returncode == 1
    assert "queues.ipynb failed in cell" in r.stderr
    assert "no run id, folder or keyword 'no-such-run'" in r.stderr


def test_notebooks_command_rejects_bad_options():
    r = bench("notebooks", "--frobnicate")
    assert r.returncode == 2 and r.stderr.strip() == "bench: notebooks: unknown option --frobnicate (options: --runs, --out)"


# ---- the published site -----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def site(executed_reference, tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    r = bench("publish", "--from", str(executed_reference), "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == str(out / "index.html")
    return out


def front_matter(md_file):
    text = md_file.read_text()
    assert text.startswith("---\n")
    block = text[4:text.index("\n---\n", 4)]
    return {k: json.loads(v) for k, v in (line.split(": ", 1) for line in block.splitlines())}


def test_every_post_has_front_matter(site):
    for path in NOTEBOOKS:
        fm = front_matter(site / path.stem / "index.md")
        assert fm["title"] and fm["summary"] and fm["tags"] and fm["host"] and fm["runs"]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", fm["date"])


def test_figures_exist_are_valid_svg_and_have_stable_names(site):
    names = sorted(p.name for p in (site / "queues/figures").iterdir())
    assert names == ["cpu.svg", "disruptor-ratio.svg", "latency-spectrum.svg", "throughput.svg"]
    assert sorted(p.name for p in (site / "messaging/figures").iterdir()) == ["cpu.svg", "latency-percentiles.svg", "latency-wall.svg"]
    assert sorted(p.name for p in (site / "workflow/figures").iterdir()) == ["jobs-over-time.svg", "throughput.svg"]
    for svg in site.rglob("*.svg"):
        root = ET.parse(svg).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg", svg
        assert float(root.get("width")) > 0 and float(root.get("height")) > 0
    for md in site.rglob("index.md"):
        for ref in re.findall(r"\]\(([^)]+)\)", md.read_text()):
            assert (md.parent / ref).exists(), f"{md}: broken link {ref}"


def test_no_page_needs_a_script_or_the_network(site):
    for f in [*site.rglob("*.html"), *site.rglob("*.svg"), *site.rglob("*.md")]:
        text = f.read_text()
        assert "<script" not in text.lower(), f
        assert not re.search(r"(src|href)=\"(https?:)?//", text), f"{f} loads something from the network"


def test_parameter_and_setup_cells_are_hidden(site):
    post = (site / "queues/index.md").read_text()
    assert "%use" not in post and "PERFKIT_RUNS" not in post
    assert "| variant | metric | value | note |" in post, "tables published as Markdown"


def test_chromium_renders_the_svg_figures(site, tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={tmp_path / 'chromium'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    try:
        for page, expected in (("index.html", len(NOTEBOOKS)), ("queues/index.html", 4)):
            driver.get((site / page).as_uri())
            images = driver.execute_script(
                "return Array.from(document.images).map(i => ({src: i.src, complete: i.complete, natural: i.naturalWidth,"
                " width: i.getBoundingClientRect().width, height: i.getBoundingClientRect().height}))")
            svgs = [i for i in images if i["src"].endswith(".svg")]
            assert len(svgs) >= expected, (page, images)
            for i in svgs:
                assert i["complete"] and i["natural"] > 0 and i["width"] > 0 and i["height"] > 0, i
    finally:
        driver.quit()


def execute_against_fresh_run(tmp_path, study, *run_args):
    """A quick run into a folder of its own, then the study's notebook pointed at that folder."""
    runs = tmp_path / "runs"
    run = bench("run", study, "--quick", *run_args, "--out", str(runs), timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    run_dir = pathlib.Path(run.stdout.strip().splitlines()[-1])
    out = tmp_path / "executed"
    r = bench("notebooks", "--runs", str(runs / study), "--out", str(out), str(ROOT / f"notebooks/{study}.ipynb"))
    assert r.returncode == 0, r.stderr[-4000:]
    nb = executed_ok(out / f"{study}.ipynb")
    assert json.loads(outputs(nb, "text/x-perfkit-runs")[0])["runIds"] == [run_dir.name]
    return nb


def test_messaging_notebook_reads_a_fresh_quick_run(tmp_path):
    nb = execute_against_fresh_run(tmp_path, "messaging", "--warmup", "1", "--measure", "2")
    text = "\n".join(outputs(nb, "text/markdown"))
    assert "| original write-up (7 isolated Ryzen cores) | 1 | 500 | about 400x |" in text
    assert "cost per million messages at SLO" in text
    assert len(outputs(nb, "image/svg+xml")) == 3


def test_workflow_notebook_reads_a_fresh_quick_run(tmp_path):
    nb = execute_against_fresh_run(tmp_path, "workflow", "--jobs", "300", "--job-types", "fixed,noop")
    text = "\n".join(outputs(nb, "text/markdown"))
    assert "dropped ACT_IDX_RU_ACTI_END" in text and "| original write-up | fixed | 4,000 |" in text
    assert "Every cell passed its checks" in text
