"""Notebooks and the published site: headless execution, re-runs against new data, and a static blog
checked down to rendered SVG sizes in headless Chromium."""
import html
import json
import os
import pathlib
import re
import shutil
import queue
import secrets
import subprocess
import sys
import time
import urllib.request
import xml.etree.ElementTree as ET

import nbformat
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts/tests"))
from support import descendants, free_port, listening_ports, listening_sockets  # noqa: E402  (one definition for both test trees)
from shared_runs import shared_quick_run  # noqa: E402  (one quick run per study for both test trees)
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


def parameter_lines(cell):
    """The parameters cell's result (the kit's parameters()): one "NAME = "value" (source)" per parameter, as text."""
    shown = [o["data"]["text/markdown"] for o in cell.outputs if "text/markdown" in o.get("data", {})]
    assert len(shown) == 1, cell.outputs
    return [html.unescape(line.removeprefix("- ")) for line in shown[0].splitlines()]


def outputs(nb, mime):
    return [o["data"][mime] for c in nb.cells if c.cell_type == "code" for o in c.outputs if mime in o.get("data", {})]


def test_committed_notebooks_are_stripped_and_described():
    assert {p.stem for p in NOTEBOOKS} >= {"queues", "messaging", "workflow", "overhead"}
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        assert nb.metadata["kernelspec"]["name"] == "kotlin"
        meta = nb.metadata["perfkit"]
        assert meta["slug"] and meta["title"] and meta["summary"] and meta["tags"]
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(not c.outputs and c.execution_count is None for c in code), f"{path.name} has outputs: strip them"
        assert code[0].source == "%use @file[kit/perfkit.json]" and "setup" in code[0].metadata["tags"]
        assert "parameters" in code[1].metadata["tags"] and "PERFKIT_RUNS" in code[1].source
        assert code[1].source.rstrip().endswith("parameters()"), f"{path.name}: the parameters cell ends by showing what it chose"
        assert 8 <= len(nb.cells) <= 30, "a notebook is a short story"


@pytest.fixture(scope="module")
def reference_execution(tmp_path_factory):
    """Every notebook against the reference runs, once for the module: the folder of executed notebooks, every kernel
    JVM seen while they ran (pid -> command line, listening ports, whether it mapped the class archive), and stderr."""
    out = tmp_path_factory.mktemp("executed")
    proc = subprocess.Popen([str(ROOT / "bench"), "notebooks", "--runs", "reference", "--out", str(out)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = {}
    try:
        deadline = time.time() + 900
        while proc.poll() is None and time.time() < deadline:
            for pid, cmd in kernel_jvms(proc.pid).items():
                try:
                    seen[pid] = (cmd, listening_ports(pid), seen.get(pid, (0, 0, False))[2] or mapped_archive(pid))
                except OSError:
                    pass
            time.sleep(0.5)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0, err[-4000:]
    return out, seen, err


@pytest.fixture(scope="module")
def executed_reference(reference_execution):
    return reference_execution[0]


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
    assert "original write-up (blocking) | 3.4" in text, "published ratio beside ours"
    assert all(f"this study, {strategy}:" in text for strategy in ("blocking", "yielding", "busy-spin")), "the ratio under each wait strategy"
    assert "| corrected |" in text and "| uncorrected |" in text, "latency from the fixed-rate reference run"
    assert re.search(r"cannot be told apart|faster than|slower than", text), "a conclusion that follows the intervals"


def test_web_reactive_post_answers_the_virtual_thread_questions(executed_reference):
    """The reference ran MVC on virtual threads (a JDK 21+ is on every machine of this kind): the post asks two
    questions of it beyond the original, each with a judged answer."""
    nb = executed_ok(executed_reference / "web-reactive.ipynb")
    text = "\n".join(outputs(nb, "text/markdown"))
    assert "| the question | on this host | answer | why |" in text
    for question in ("WebFlux still answers faster than MVC on virtual threads, with 1 call(s)",
                     "MVC on virtual threads does not queue where MVC on its thread pool did, with 2 call(s)"):
        row = next(line for line in text.splitlines() if line.startswith(f"| {question} |"))
        assert re.search(r"\*\*(holds|does not hold|cannot tell here)\*\*", row), row


def test_a_new_run_shows_up_with_no_edits(tmp_path_factory, tmp_path):
    """A run that appears in data/runs (here the session's quick queues run, copied in) is what the notebook reads next."""
    shared = shared_quick_run(tmp_path_factory, "queues").dir
    run_dir = ROOT / "data/runs/queues" / shared.name
    assert not run_dir.exists()
    shutil.copytree(shared, run_dir)
    try:
        r = bench("notebooks", "--out", str(tmp_path), str(ROOT / "notebooks/queues.ipynb"))
        assert r.returncode == 0, r.stderr[-4000:]
        nb = executed_ok(tmp_path / "queues.ipynb")
        runs = json.loads(outputs(nb, "text/x-perfkit-runs")[0])
        assert run_dir.name in runs["runIds"] and runs["reference"] is False
        assert "e2e" in "\n".join(outputs(nb, "text/markdown")), "its tag"
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def test_a_bad_selection_fails_with_the_kits_message(tmp_path):
    r = bench("notebooks", "--runs", "no-such-run", "--out", str(tmp_path), str(ROOT / "notebooks/queues.ipynb"))
    assert r.returncode == 1
    assert re.search(r"^notebook queues.ipynb failed in cell \d+: ", r.stderr, re.M), r.stderr
    assert "no run id, folder or keyword 'no-such-run'" in r.stderr
    failed = [l for l in r.stderr.splitlines() if not l.startswith("[")]
    assert len(failed) == 2 and "full kernel output: " in failed[1], r.stderr
    log = pathlib.Path(re.search(r"full kernel output: (\S+)", r.stderr).group(1))
    assert log.is_file() and log.is_relative_to(ROOT / "build")


def test_notebooks_command_rejects_bad_options(tmp_path):
    r = bench("notebooks", "--frobnicate")
    assert r.returncode == 2
    assert r.stderr.strip() == "bench: notebooks: unknown option --frobnicate (options: --runs, --out, --timings, --bench)"
    (tmp_path / "file").write_text("x")
    r = bench("notebooks", "--out", str(tmp_path / "file"), str(ROOT / "notebooks/overhead.ipynb"))
    assert r.returncode == 2 and r.stderr.strip().splitlines()[-1].endswith("is a file, not a folder"), r.stderr


def test_a_bad_slo_in_the_environment_is_the_users_error_before_any_kernel_starts(tmp_path):
    for value in ("fast", "0", "1_000"):
        r = subprocess.run([str(ROOT / "bench"), "notebooks", "--out", str(tmp_path), str(ROOT / "notebooks/messaging.ipynb")],
                           cwd=ROOT, capture_output=True, text=True, timeout=60, env=dict(os.environ, PERFKIT_SLO_MS=value))
        assert r.returncode == 2 and r.stderr.strip() == (f"bench: notebooks: PERFKIT_SLO_MS: '{value}' is not a positive number of "
                                                          "milliseconds (or \"run\" for the run's own SLO)"), r.stderr
        assert not list(tmp_path.iterdir()), "nothing executed"


# ---- processes: no debugger port, lab as root ---------------------------------------


def kernel_jvms(pid):
    return {p: c for p, c in descendants(pid).items() if "kotlin-jupyter-kernel" in c and "java" in c}


def mapped_archive(pid):
    """True when the JVM pid has the kit's class archive (env/kernel/install.py) mapped: it starts from it."""
    with open(f"/proc/{pid}/maps") as maps:
        return any(line.rstrip().endswith("/kernel-classes.jsa") for line in maps)


def test_the_kernel_opens_no_debugger_port_and_starts_from_the_class_archive(reference_execution):
    out, seen, err = reference_execution
    assert seen, "never saw the kernel's JVM"
    for pid, (cmd, ports, archived) in seen.items():
        assert "jdwp" not in cmd and "-debugPort" not in cmd, cmd
        assert 1044 not in ports, ports
        assert archived, f"the kernel JVM never mapped the class archive ./bench made for it: {cmd}"
    assert "dt_socket" not in err and "Debugger failed" not in err
    nb = executed_ok(out / "overhead.ipynb")
    assert "dt_socket" not in json.dumps(nb.dict())


def api(port, token, method, path, body=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                 data=None if body is None else json.dumps(body).encode(),
                                 headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        text = resp.read().decode()
        return json.loads(text) if text else None


def wait_for_lab(proc, port, token, log, seconds=900):
    """Waits until the lab's REST API answers (a kit rebuild and a cold kernel on a loaded 2-vCPU machine take
    minutes); returns the deadline, which the caller's later waits share."""
    deadline = time.time() + seconds
    while True:
        assert proc.poll() is None, log.read_text()[-3000:]
        try:
            api(port, token, "GET", "/api/status")
            return deadline
        except OSError:
            assert time.time() < deadline, "lab did not start"
            time.sleep(1)


def test_lab_starts_and_runs_a_kotlin_kernel(tmp_path):
    port, token = free_port(), secrets.token_hex(16)
    proc = subprocess.Popen([str(ROOT / "bench"), "lab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
                             f"--IdentityProvider.token={token}"],
                            cwd=ROOT, stdout=(tmp_path / "lab.log").open("w"), stderr=subprocess.STDOUT, text=True,
                            env=dict(os.environ, JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime")))
    try:
        deadline = wait_for_lab(proc, port, token, tmp_path / "lab.log")
        news = api(port, token, "GET", "/lab/api/settings/@jupyterlab/apputils-extension:notification")["schema"]["properties"]
        assert news["fetchNews"]["default"] == "false" and news["checkForUpdates"]["default"] is False, "the lab neither asks for nor fetches news"
        kernel = api(port, token, "POST", "/api/kernels", {"name": "kotlin"})
        # the server reports "starting" until a client talks to the kernel: ask it for its info directly
        from jupyter_client import BlockingKernelClient
        client = BlockingKernelClient(connection_file=str(tmp_path / "runtime" / f"kernel-{kernel['id']}.json"))
        client.load_connection_file()
        client.start_channels()
        try:
            info = None
            while info is None and time.time() < deadline:
                msg_id = client.kernel_info()
                try:
                    reply = client.get_shell_msg(timeout=10)
                    info = reply if reply["parent_header"].get("msg_id") == msg_id else None
                except queue.Empty:
                    pass
            assert info and info["content"]["status"] == "ok", info
            reply = client.execute_interactive("1 + 1", timeout=300, store_history=False, output_hook=lambda msg: None)
            assert reply["content"]["status"] == "ok", reply["content"]
        finally:
            client.stop_channels()
        assert api(port, token, "GET", f"/api/kernels/{kernel['id']}")["execution_state"] in ("idle", "busy")
        jvms = kernel_jvms(proc.pid)
        assert jvms and all("jdwp" not in c for c in jvms.values()), jvms
        sockets = {s for pid in jvms for s in listening_sockets(pid)}
        assert len(sockets) >= 5, f"the kernel's shell, control, stdin, iopub and heartbeat sockets: {sockets}"
        assert all(address.is_loopback for address, _ in sockets), f"the kernel listens beyond loopback: {sockets}"
        api(port, token, "DELETE", f"/api/kernels/{kernel['id']}")
        api(port, token, "POST", "/api/shutdown")
        proc.wait(timeout=60)
    finally:
        left = descendants(proc.pid)
        proc.kill()
        for pid in left:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
    output = (tmp_path / "lab.log").read_text()
    assert proc.returncode == 0, output[-3000:]
    if os.geteuid() == 0:
        assert "running as root (as in most containers): adding --allow-root" in output
    assert not left, f"left running: {left}"


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
        assert fm["description"] == fm["summary"] and fm["categories"], "what Hugo and Quarto read for a listing"
        # dated by its data: the day the newest of its runs ended; lastmod is the day it was published
        ended = [json.loads(m.read_text())["endedAt"][:10] for run_id in fm["runs"]
                 for m in (ROOT / "data/reference").glob(f"*/{run_id}/run.json")]
        assert len(ended) == len(fm["runs"]) and fm["date"] == max(ended), (path.name, fm["date"], ended)
        assert fm["lastmod"] == time.strftime("%Y-%m-%d") >= fm["date"]
        (lead,) = fm["images"]
        assert lead.startswith("figures/") and (site / path.stem / lead).is_file(), "the lead figure, for a listing's card"
    assert "unsafe = true" in (site / "README.md").read_text(), "the site says which setting Hugo needs for raw HTML"


def test_figures_exist_are_valid_svg_and_have_stable_names(site):
    names = sorted(p.name for p in (site / "queues/figures").iterdir())
    assert names == ["cpu.svg", "disruptor-ratio.svg", "latency-spectrum.svg", "throughput.svg"]
    assert sorted(p.name for p in (site / "messaging/figures").iterdir()) == ["cpu.svg", "latency-wall.svg"]
    assert sorted(p.name for p in (site / "workflow/figures").iterdir()) == ["cpu.svg", "jobs-over-time.svg", "throughput.svg"]
    assert sorted(p.name for p in (site / "three-tier/figures").iterdir()) == [
        "chain-spectra.svg", "chain-throughput.svg", "inserts-tps.svg", "templates-throughput.svg"]
    for svg in site.rglob("*.svg"):
        root = ET.parse(svg).getroot()
        assert root.tag == "{http://www.w3.org/2000/svg}svg", svg
        # it scales to the reader's width, keeping its shape: the kit's size becomes the viewBox
        assert root.get("width") == "100%" and root.get("height") is None, svg
        x, y, w, h = map(float, root.get("viewBox").split())
        assert (x, y) == (0, 0) and w > 0 and h > 0, svg
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
    # tables are Markdown with titles for the kit's column names; the run label, the same on every row, is said once
    assert "| variant | wait strategy | n | mean | interval low | interval high | interval | runs pooled |" in html.unescape(post), \
        "tables published as Markdown"
    assert "wait_strategy" not in post.split("<details", 1)[0] and "ci_low" not in post.split("<details", 1)[0]


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    """One headless Chromium for the module's page checks."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--window-size=1280,900", f"--user-data-dir={tmp_path_factory.mktemp('chromium')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)
    yield driver
    driver.quit()


def test_chromium_renders_the_svg_figures(site, chromium):
    for page, expected in (("index.html", len(NOTEBOOKS)), ("queues/index.html", 4)):
        chromium.get((site / page).as_uri())
        images = chromium.execute_script(
            "return Array.from(document.images).map(i => ({src: i.src, complete: i.complete, natural: i.naturalWidth,"
            " width: i.getBoundingClientRect().width, height: i.getBoundingClientRect().height}))")
        svgs = [i for i in images if i["src"].endswith(".svg")]
        assert len(svgs) >= expected, (page, images)
        for i in svgs:
            assert i["complete"] and i["natural"] > 0 and i["width"] > 0 and i["height"] > 0, i


# Every text of a figure (titles, axis titles, tick labels, legends) as drawn, against the figure's own box.
TEXT_OUTSIDE_ITS_SVG = """
const box = document.documentElement.getBoundingClientRect();
return Array.from(document.querySelectorAll('text')).filter(t => t.textContent.trim()).map(t => {
  const r = t.getBoundingClientRect();
  return {text: t.textContent.trim(), left: r.left - box.left, top: r.top - box.top,
          right: r.right - box.left, bottom: r.bottom - box.top};
}).filter(r => r.left < -1 || r.top < -1 || r.right > box.width + 1 || r.bottom > box.height + 1);
"""


def test_no_text_of_a_figure_falls_outside_its_svg(site, chromium):
    clipped = {}
    for svg in sorted(site.rglob("figures/*.svg")):
        chromium.get(svg.as_uri())
        outside = chromium.execute_script(TEXT_OUTSIDE_ITS_SVG)
        if outside:
            clipped[str(svg.relative_to(site))] = outside
    assert not clipped, f"text drawn outside its figure: {clipped}"


# Visible text only: the content of a closed <details> is laid out but hidden (content-visibility), which
# checkVisibility() sees and getClientRects() does not; innerText leaves it out as well.
VISIBLE_KOTLIN = """
const visible = e => e.checkVisibility();
return {
  code: Array.from(document.querySelectorAll('pre code')).filter(visible)
            .map(c => c.textContent).filter(t => /\\b(val|fun|import) |findRuns\\(|%use /.test(t)),
  openDetails: Array.from(document.querySelectorAll('details[open]')).length,
  images: Array.from(document.images).map(i => ({src: i.getAttribute('src'), alt: (i.getAttribute('alt') || '').trim()})),
  firstScreen: document.body.innerText.slice(0, 1500),
};
"""


def test_posts_show_no_code_and_every_figure_is_described(site, chromium):
    for post in sorted(site.glob("*/index.html")):
        chromium.get(post.as_uri())
        seen = chromium.execute_script(VISIBLE_KOTLIN)
        assert not seen["code"], f"{post.parent.name}: Kotlin source shown outside a closed <details>: {seen['code'][0][:200]}"
        assert "findRuns(" not in chromium.execute_script("return document.body.innerText"), post
        assert seen["openDetails"] == 0, post
        folded = chromium.execute_script("return document.querySelectorAll('details.code pre code').length")
        assert folded > 0, f"{post.parent.name}: its code cells are not folded in the page"
        for image in seen["images"]:
            assert image["alt"].startswith("Chart"), f"{post.parent.name}: figure {image['src']} says not what it shows: {image['alt']!r}"
        assert "Scale: reference, " in seen["firstScreen"], f"{post.parent.name}: the scale is not above the fold"
        if post.parent.name in ("compare", "overhead"):
            continue  # neither reproduces an original
        # the first screen (900 px high) says which of the original's claims hold here: counts, then each claim
        glance = chromium.execute_script(
            "const g = document.querySelector('p.glance'); const list = g && g.nextElementSibling;"
            "return g && {top: g.getBoundingClientRect().top, text: g.innerText, items: list ? list.querySelectorAll('li').length : 0,"
            " tables: [...document.querySelectorAll('td strong')].filter(s => /^(holds|does not hold|cannot tell here)$/.test(s.textContent)).length}")
        assert glance and glance["top"] < 900, f"{post.parent.name}: no claims on the first screen: {glance}"
        assert glance["text"].startswith("The original's claims on this host: "), glance
        assert glance["items"] >= 1 and glance["items"] <= glance["tables"], f"{post.parent.name}: {glance}"
    chromium.get((site / "index.html").as_uri())
    listing = chromium.execute_script("return document.body.innerText")
    assert listing.count("reference, ") >= len(NOTEBOOKS), listing
    assert all(i["alt"] for i in chromium.execute_script(VISIBLE_KOTLIN)["images"])


# What a reader on a phone or a desktop would see go wrong: a page wider than the screen, or a figure that did not load
FITS = """
const images = Array.from(document.images);
return {scroll: document.documentElement.scrollWidth, width: window.innerWidth,
        broken: images.filter(i => !i.complete || i.naturalWidth === 0).map(i => i.getAttribute('src')),
        wider: images.filter(i => i.getBoundingClientRect().right > window.innerWidth + 1).map(i => i.getAttribute('src')),
        figures: images.length};
"""


def test_posts_fit_a_phone_and_a_desktop(site, chromium):
    shots = ROOT / "build/test-reports/screenshots"
    shots.mkdir(parents=True, exist_ok=True)
    try:
        for width in (390, 1280):
            chromium.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                     {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
            for post in [site / "index.html", *sorted(site.glob("*/index.html"))]:
                chromium.get(post.as_uri())
                seen = chromium.execute_script(FITS)
                name = post.parent.name if post.parent != site else "index"
                chromium.save_screenshot(str(shots / f"{name}-{width}.png"))
                assert seen["width"] == width, seen
                assert seen["scroll"] <= width, f"{name} at {width} px: the page is {seen['scroll']} px wide"
                assert not seen["broken"] and not seen["wider"], f"{name} at {width} px: {seen}"
                assert seen["figures"] > 0, name
    finally:
        chromium.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_a_post_builds_in_a_real_hugo_site(site, tmp_path):
    """A post copied into a Hugo site as a page bundle, with the one setting the site's README names: its figures,
    its folded code and its claims survive Hugo's renderer."""
    hugo = shutil.which("hugo")
    if not hugo:
        pytest.skip("hugo is not installed (./bench test installs it as root on Debian: apt-get install hugo)")
    blog = tmp_path / "blog"
    shutil.copytree(site / "queues", blog / "content/posts/queues")
    (blog / "layouts/_default").mkdir(parents=True)
    (blog / "layouts/_default/single.html").write_text("<html><body><h1>{{ .Title }}</h1><time>{{ .Date.Format \"2006-01-02\" }}</time>"
                                                        "{{ .Content }}</body></html>")
    (blog / "layouts/_default/list.html").write_text("<html><body>{{ range .Pages }}{{ .Title }}{{ end }}</body></html>")
    (blog / "hugo.toml").write_text('baseURL = "https://example.invalid/"\ntitle = "t"\ndisableKinds = ["taxonomy", "term", "RSS", "sitemap"]\n'
                                   "[markup.goldmark.renderer]\nunsafe = true\n")
    r = subprocess.run([hugo, "--source", str(blog), "--destination", str(tmp_path / "public"), "--quiet"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "public/posts/queues/index.html").read_text()
    fm = front_matter(site / "queues/index.md")
    assert f"<time>{fm['date']}</time>" in page, "Hugo read the front matter's date"
    assert '<details class="code">' in page and 'class="glance"' in page, "the raw HTML is kept"
    assert "raw HTML omitted" not in page
    for name in re.findall(r'src="(figures/[^"]+\.svg)"', page):
        assert (tmp_path / "public/posts/queues" / name).is_file(), name
    assert re.findall(r'src="figures/', page), "the figures are in the page"


def execute_against_fresh_run(tmp_path_factory, tmp_path, study):
    """The session's quick run of study (shared with the study's own tests; alone in its folder), then the study's
    notebook pointed at that folder."""
    run_dir = shared_quick_run(tmp_path_factory, study).dir
    out = tmp_path / "executed"
    r = bench("notebooks", "--runs", str(run_dir.parent), "--out", str(out), str(ROOT / f"notebooks/{study}.ipynb"))
    assert r.returncode == 0, r.stderr[-4000:]
    nb = executed_ok(out / f"{study}.ipynb")
    assert json.loads(outputs(nb, "text/x-perfkit-runs")[0])["runIds"] == [run_dir.name]
    return nb


def test_messaging_notebook_reads_a_fresh_quick_run(tmp_path_factory, tmp_path):
    nb = execute_against_fresh_run(tmp_path_factory, tmp_path, "messaging")
    text = "\n".join(outputs(nb, "text/markdown"))
    assert "| the original's claim | on this host | answer | why |" in text
    assert "Kafka (one broker, acks=1) meets the 100 ms p99.9 with one chain and breaks it at the second" in text
    for policy in ("original", "park", "blocking"):
        assert f"Chronicle Queue carries about 400x the chains Kafka does (its own table gives 500x; Kafka as `kafka/{policy}`)" in text
    assert "| original: Kafka | 1 | 1,000 |" in text, "the original's capacity converts to msg/s at 1000 msg/s per chain"
    assert "| chains | original p50 ms |" in text and "| 500 | 11 | 36 | 96 |" in text, "the original's per-chain tables beside ours"
    assert "cost per million messages" in text and "relative to `kafka/blocking`" in text
    assert "This run: **1000 msg/s per chain**" in text
    # a quick run makes one capacity search per cell: an observation, from which no claim holds or fails
    assert "Only 1 search(es) per cell: a claim needs 3." in text
    assert "**holds**" not in text and "**does not hold**" not in text
    assert len(outputs(nb, "image/svg+xml")) == 2


def test_workflow_notebook_reads_a_fresh_quick_run(tmp_path_factory, tmp_path):
    nb = execute_against_fresh_run(tmp_path_factory, tmp_path, "workflow")
    text = "\n".join(outputs(nb, "text/markdown"))
    assert "dropped ACT_IDX_RU_ACTI_END" in text and "| original write-up | fixed | 4,000 |" in text
    assert "Every cell passed its checks" in text


def test_three_tier_notebook_reads_a_fresh_quick_run(tmp_path_factory, tmp_path):
    nb = execute_against_fresh_run(tmp_path_factory, tmp_path, "three-tier")
    text = "\n".join(outputs(nb, "text/markdown"))
    # each round beside the published numbers, as ratios: the claims always name the published share; the engine table
    # needs warm steps, which a quick run's 10 s warm-up may not give, and then the post says why it is missing
    assert "JSP renders at about 0.733× plain HTML's throughput" in text, "engine shares beside the published ones"
    assert ("| `jsp` |" in text and "| 0.733 |" in text) or "measured while a server's JIT still compiled" in text, \
        "the engine table, or why it cannot be shown"
    assert "| relaxed vs relaxed (matched) |" in text and "1.28×" in text, "Cassandra / PostgreSQL at matched durability"
    assert "commitlog_sync=periodic" in text and "synchronous_commit=off" in text, "the durability settings the databases reported"
    # the chain's ratio beside the published one, or, when every quick chain step ran on a compiling tier, why not
    assert ("async / sync" in text and "about 2.75× the sync chain's throughput" in text) or "The chain round ran, but none of its" in text
    assert "1 fork" in text and "Quick run" in text, "a quick run says what it cannot claim"
    # inserts and the chain's spectra always; the templates and chain throughput figures only from warm steps
    templates_warm = "The templates round ran, but none of its" not in text  # (the page-bytes table names `jsp` either way)
    chain_warm = "The chain round ran, but none of its" not in text
    assert len(outputs(nb, "image/svg+xml")) == 2 + templates_warm + chain_warm


# ---- hostile data: escaped in the kit, sanitised by the publisher ----------------------------------------

PAYLOAD = "<img src=x onerror=alert(1)>"
HOST_PAYLOAD = "<script>alert(2)</script>"


class TagAttributes(__import__("html.parser").parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.bad = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "iframe", "object", "embed"):
            self.bad.append(tag)
        for name, value in attrs:
            if name.startswith("on") or (value or "").strip().lower().startswith("javascript:") or name == "style":
                self.bad.append(f"{tag} {name}={value}")


def assert_site_is_safe(site):
    files = [f for f in site.rglob("*") if f.is_file()]
    assert files
    for f in files:
        text = f.read_text(errors="replace")
        assert PAYLOAD not in text and HOST_PAYLOAD not in text, f"raw payload in {f}"
        assert "<script" not in text.lower(), f
        if f.suffix in (".html", ".svg"):
            parser = TagAttributes()
            parser.feed(text)
            assert not parser.bad, f"{f}: {parser.bad}"


def published_post(tmp_path, nb, slug):
    """Publishes one hand-made executed notebook into tmp_path/site and returns its post's HTML, checked safe."""
    (tmp_path / "in").mkdir()
    nbformat.write(nb, tmp_path / f"in/{slug}.ipynb")
    r = bench("publish", "--from", str(tmp_path / "in"), "--out", str(tmp_path / "site"))
    assert r.returncode == 0, r.stderr
    assert_site_is_safe(tmp_path / "site")
    return (tmp_path / f"site/{slug}/index.html").read_text()


def test_publisher_escapes_and_sanitises_hostile_outputs(tmp_path):
    nb = nbformat.v4.new_notebook(metadata={"perfkit": {"slug": "hostile", "title": "t", "summary": "s", "tags": ["x"]}})
    runs = {"study": "x", "runIds": ["r"], "hosts": [HOST_PAYLOAD], "jdks": [PAYLOAD], "reference": False}
    outputs = [
        nbformat.v4.new_output("display_data", {"text/markdown": f"**{PAYLOAD}** [x](javascript:alert(3))", "text/plain": "x"}),
        nbformat.v4.new_output("display_data", {"text/x-perfkit-runs": json.dumps(runs), "text/markdown": "| a |\n|---|\n| b |"}),
        nbformat.v4.new_output("display_data", {"image/svg+xml": '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>',
                                                "text/plain": PAYLOAD}),
        nbformat.v4.new_output("stream", name="stderr", text=HOST_PAYLOAD),
        nbformat.v4.new_output("execute_result", {"text/plain": PAYLOAD}, execution_count=1),
    ]
    nb.cells = [nbformat.v4.new_markdown_cell("# t"), nbformat.v4.new_code_cell("x", outputs=outputs, execution_count=1)]
    post = published_post(tmp_path, nb, "hostile")
    assert "&lt;img src=x onerror=alert(1)&gt;" in post, "the payload is shown as text"
    assert front_matter(tmp_path / "site/hostile/index.md")["host"] == HOST_PAYLOAD
    # a figure that draws no titles is named by its file, never by its raw text
    assert "![Figure figure-1](figures/figure-1.svg)" in (tmp_path / "site/hostile/index.md").read_text()


def test_a_quick_post_says_it_can_claim_nothing_and_folds_its_code(tmp_path):
    nb = nbformat.v4.new_notebook(metadata={"perfkit": {"slug": "quick", "title": "t", "summary": "s", "tags": ["x"]}})
    runs = {"study": "queues", "runIds": ["r"], "hosts": [HOST_PAYLOAD], "jdks": ["17"], "reference": False,
            "scale": "quick", "forks": 1}
    summary = nbformat.v4.new_output("display_data", {"text/x-perfkit-runs": json.dumps(runs), "text/markdown": "| a |\n|---|\n| b |"})
    shown = nbformat.v4.new_code_cell("println(1 < 2)", execution_count=2)
    shown.metadata["tags"] = ["show-code"]
    nb.cells = [nbformat.v4.new_markdown_cell("# The title\n\nThe intro."),
                nbformat.v4.new_code_cell("val x = 1\n\nval y = x < 2 && true", outputs=[summary], execution_count=1), shown]
    post = published_post(tmp_path, nb, "quick")
    title, scale, intro = post.index("<h1>The title</h1>"), post.index('<p class="scale">'), post.index("The intro.")
    assert title < scale < intro, "the scale line sits right under the title"
    line = post[scale:post.index("</p>", scale)]
    assert "<strong>Scale: quick demo</strong>, 1 fork per cell" in line and "can claim nothing" in line
    assert "<code>./bench run queues</code>" in line and "&lt;script&gt;" in line
    folded = post[post.index('<details class="code">'):post.index("</details>")]
    assert "val y = x &lt; 2 &amp;&amp; true" in folded and "<details open" not in post
    assert '<pre><code class="language-kotlin">println(1 &lt; 2)' in post.split("</details>", 1)[1], "show-code opts a cell in"
    assert post.index("<td>b</td>") < post.index('<details class="code">'), "folded code sits under what it made"
    assert front_matter(tmp_path / "site/quick/index.md")["scale"] == "quick demo"
    assert "(quick demo, 1 fork)" in (tmp_path / "site/index.md").read_text()


# A figure as Lets-Plot draws one: its texts carry these classes
FIGURE_SVG = ('<svg data-perfkit-figure="throughput" xmlns="http://www.w3.org/2000/svg" width="720.0" height="400.0">'
              '<text class="plot-title">Throughput</text><text class="axis-title-y">events per second</text>'
              '<text class="axis-title-x">variant</text><text class="legend-title">wait</text>'
              '<text class="legend-item">blocking</text><text class="legend-item">busy_spin &lt;b&gt;</text></svg>')


def test_the_tags_other_tools_use_and_two_figures_of_one_name(tmp_path):
    nb = nbformat.v4.new_notebook(metadata={"perfkit": {"slug": "tags", "title": "t", "summary": "s", "tags": ["x"]}})
    runs = {"study": "queues", "runIds": ["r"], "hosts": ["h"], "jdks": ["17"], "reference": False, "scale": "full",
            "forks": 3, "ended": "2026-01-02"}

    def cell(source, tags, *outs):
        c = nbformat.v4.new_code_cell(source, outputs=list(outs), execution_count=1)
        c.metadata["tags"] = tags
        return c

    text = lambda t: nbformat.v4.new_output("stream", name="stdout", text=t)
    figure = lambda: nbformat.v4.new_output("display_data", {"image/svg+xml": FIGURE_SVG, "text/x-perfkit-caption": "What it means"})
    nb.cells = [nbformat.v4.new_markdown_cell("# t"),
                cell("val runs = 1", [], nbformat.v4.new_output("display_data", {"text/x-perfkit-runs": json.dumps(runs),
                                                                                  "text/markdown": "runs"})),
                cell("val gone = 1", ["remove-cell"], text("a removed cell's output")),
                cell("val noInput = 1", ["remove-input"], text("an output without its code")),
                cell("val noOutput = 1", ["remove-output"], text("a code without its output")),
                cell("val hidden = 1", ["hide-input"], figure()),
                cell("val again = 1", [], figure())]
    (tmp_path / "in").mkdir()
    nbformat.write(nb, tmp_path / "in/tags.ipynb")
    r = bench("publish", "--from", str(tmp_path / "in"), "--out", str(tmp_path / "site"))
    assert r.returncode == 0, r.stderr
    md = (tmp_path / "site/tags/index.md").read_text()
    assert "removed cell" not in md and "val gone" not in md
    assert "an output without its code" in md and "val noInput" not in md
    assert "val noOutput" in md and "a code without its output" not in md
    assert re.search(r'<details class="code">.*?val hidden = 1.*?</details>', md, re.S), "hide-input folds, as every cell"
    # the second figure of the same name is kept beside the first, and the publisher says so
    assert sorted(p.name for p in (tmp_path / "site/tags/figures").iterdir()) == ["throughput-2.svg", "throughput.svg"]
    assert "cell 7 draws a second figure named 'throughput'; it is figures/throughput-2.svg" in r.stderr
    # the alt text says what the figure shows, from what it draws; the caption under it says what it means
    alt = ("Chart titled Throughput: events per second against variant, one series per wait (blocking, busy\\_spin &lt;b>).")
    assert f"![{alt}](figures/throughput.svg)\n\n*What it means*" in md, md
    fm = front_matter(tmp_path / "site/tags/index.md")
    assert fm["date"] == "2026-01-02" and fm["images"] == ["figures/throughput.svg"]
    assert_site_is_safe(tmp_path / "site")


def test_publish_rejects_a_file_as_out(tmp_path):
    (tmp_path / "file").write_text("x")
    (tmp_path / "executed").mkdir()
    (tmp_path / "executed/x.ipynb").write_text("{}")  # never read: --out is checked first
    r = bench("publish", "--from", str(tmp_path / "executed"), "--out", str(tmp_path / "file"))
    assert r.returncode == 2 and r.stderr.strip() == f"publish: --out {tmp_path / 'file'} is a file, not a folder"
    assert (tmp_path / "file").read_text() == "x"
    r = bench("publish", "--from", str(tmp_path / "file"))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


# Markdown of its own in a tag (the CLI refuses its newlines today; a run made elsewhere may still carry them)
MD_PAYLOAD = "line1\n\n[click me](https://example.invalid/x) | col | <b>bold</b> &amp; `code`\n# injected heading"


def test_a_hostile_tag_and_hostname_never_reach_the_site_as_html(tmp_path):
    runs = tmp_path / "runs"
    for manifest in (ROOT / "data/reference/queues").glob("*/run.json"):
        dest = runs / manifest.parent.name
        shutil.copytree(manifest.parent, dest)
        m = json.loads(manifest.read_text())
        m["tag"], m["host"]["hostname"] = PAYLOAD + " " + MD_PAYLOAD, HOST_PAYLOAD
        (dest / "run.json").write_text(json.dumps(m))
    out = tmp_path / "executed"
    r = bench("notebooks", "--runs", str(runs), "--out", str(out), str(ROOT / "notebooks/queues.ipynb"))
    assert r.returncode == 0, r.stderr[-3000:]
    r = bench("publish", "--from", str(out), "--out", str(tmp_path / "site"))
    assert r.returncode == 0, r.stderr
    post = (tmp_path / "site/queues/index.html").read_text()
    assert "&lt;img src=x onerror=alert(1)&gt;" in post, "the tag is shown, as text"
    assert_site_is_safe(tmp_path / "site")
    assert "example.invalid" in post and 'href="https://example.invalid' not in post, "the tag's link stays text"
    assert post.count("<h1") == 1, "the tag opens no heading"
    assert "<b>bold</b>" not in post and "&lt;b&gt;bold&lt;/b&gt;" in post
    assert "<code>code</code>" not in post, "the tag opens no code span"
    assert "&amp;amp;" in post and "&amp;amp;amp;" not in post, "the tag's literal &amp; is escaped once"
    for table in re.findall(r"<table>.*?</table>", post, re.S):
        widths = {row.count("<td") + row.count("<th") for row in re.findall(r"<tr>.*?</tr>", table, re.S)}
        assert len(widths) == 1, "the tag's | splits no table cell"


# ---- bad runs and failed notebooks ---------------------------------------------------------------------

def test_unreadable_runs_are_skipped_unless_named_and_a_failure_keeps_the_good_copy(tmp_path):
    runs = tmp_path / "runs"
    good = next((ROOT / "data/reference/overhead").iterdir())
    shutil.copytree(good, runs / good.name)
    for name, text in (("20260101T000000Z-x-aaaaaa", "null"), ("20260101T000001Z-x-bbbbbb", '{"host":"x"}'),
                       ("20260101T000002Z-x-cccccc", '{"schemaVersion": 1, "stu')):
        (runs / name).mkdir()
        (runs / name / "run.json").write_text(text)
    # a copy whose table lost a column the notebook reads: damaged, so skipped like an unreadable one
    damaged = runs / "20991231T000000Z-x-dddddd"
    shutil.copytree(good, damaged)
    (damaged / "run.json").write_text((damaged / "run.json").read_text().replace(good.name, damaged.name))
    summary = damaged / "summary.csv"
    summary.write_text(summary.read_text().replace("median_ns", "median"))
    out = tmp_path / "executed"
    r = bench("notebooks", "--runs", str(runs), "--out", str(out), str(ROOT / "notebooks/overhead.ipynb"))
    assert r.returncode == 0, r.stderr[-3000:]
    nb = executed_ok(out / "overhead.ipynb")
    parameters = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert parameter_lines(parameters[0]) == [f'PERFKIT_RUNS = "{runs}" (from the environment: ./bench notebooks)'], "the value that won is said"
    # each skipped run is a line under the runs' table (a cell's result, which the kernel cannot lose as it can printed text)
    (summary,) = [o["data"]["text/markdown"] for c in nb.cells for o in c.get("outputs", []) if "text/x-perfkit-runs" in o.get("data", {})]
    said = [html.unescape(l.removeprefix("- ")) for l in summary.splitlines() if l.startswith("- perfkit: ")]
    assert len(said) == 4 and all(l.startswith("perfkit: skipping an unreadable run: ") for l in said[:3]), said
    assert said[3] == f"perfkit: skipping a damaged run {damaged.name}: table summary.csv has no column 'median_ns'", said
    assert not [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "stream"], "nothing is printed"
    assert json.loads(outputs(nb, "text/x-perfkit-runs")[0])["runIds"] == [good.name]
    good_copy = (out / "overhead.ipynb").read_bytes()

    r = bench("notebooks", "--runs", str(runs / "20260101T000000Z-x-aaaaaa"), "--out", str(out), str(ROOT / "notebooks/overhead.ipynb"))
    assert r.returncode == 1
    lines = [l for l in r.stderr.splitlines() if not l.startswith("[")]
    assert lines[0].startswith("notebook overhead.ipynb failed in cell 4: ") and "corrupt manifest" in lines[0], r.stderr
    assert len(lines) == 2 and "Traceback" not in r.stderr and "\tat " not in r.stderr, r.stderr
    assert (out / "overhead.ipynb").read_bytes() == good_copy, "the last good executed copy is kept"
    assert not list(out.glob(".*.tmp")), "no temp file left"


def test_notebooks_run_side_by_side_and_one_failure_spares_the_others(tmp_path):
    broken = tmp_path / "broken.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('error("boom")')])
    nb.metadata["kernelspec"] = {"name": "kotlin", "display_name": "Kotlin", "language": "kotlin"}
    nbformat.write(nb, broken)
    out = tmp_path / "executed"
    r = bench("notebooks", "--runs", "reference", "--out", str(out), str(broken), str(ROOT / "notebooks/overhead.ipynb"))
    assert r.returncode == 1, r.stderr[-3000:]
    assert "notebook broken.ipynb failed in cell 1: " in r.stderr and "boom" in r.stderr, r.stderr
    executed_ok(out / "overhead.ipynb")
    assert not (out / "broken.ipynb").exists()
    assert "[notebooks] total: 2 notebook(s)" in r.stderr


def test_a_kernel_that_dies_while_starting_is_started_once_more_and_its_output_kept(tmp_path):
    kernels = tmp_path / "jupyter" / "kernels" / "kotlin"
    kernels.mkdir(parents=True)
    real = json.loads((ROOT / ".venv/share/perfkit/jupyter/kernels/kotlin/kernel.json").read_text())
    marker = tmp_path / "started-once"
    flaky = tmp_path / "flaky_launch.py"
    flaky.write_text(
        "import os, pathlib, sys\n"
        f"marker = pathlib.Path({str(marker)!r})\n"
        "if not marker.exists():\n"
        "    marker.write_text('x')\n"
        "    print('first start: dying before kernel_info', file=sys.stderr)\n"
        "    sys.exit(3)\n"
        f"os.execv(sys.executable, [sys.executable, {real['argv'][1]!r}] + sys.argv[1:])\n")
    spec = dict(real, argv=[real["argv"][0], str(flaky)] + real["argv"][2:])
    (kernels / "kernel.json").write_text(json.dumps(spec))
    nb_path = tmp_path / "one.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell('println(6 * 7)')])
    nb.metadata["kernelspec"] = {"name": "kotlin", "display_name": "Kotlin", "language": "kotlin"}
    nbformat.write(nb, nb_path)
    env = dict(os.environ, JUPYTER_PATH=str(tmp_path / "jupyter"))
    r = subprocess.run([str(ROOT / ".venv/bin/python"), str(ROOT / "notebooks/tools/execute.py"), "--log-dir",
                        str(tmp_path / "logs"), str(tmp_path / "out"), str(nb_path)],
                       capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "one.ipynb: the kernel died while starting" in r.stderr and "first start: dying before kernel_info" in r.stderr, r.stderr
    executed = nbformat.read(tmp_path / "out" / "one.ipynb", as_version=4)
    assert executed.cells[0].outputs[0]["text"].strip() == "42"
    assert "first start: dying before kernel_info" in (tmp_path / "logs" / "one.log").read_text()


def test_the_lab_draws_an_interactive_figure_in_chromium(tmp_path, chromium):
    """./bench lab serves a study notebook; Chromium runs all its cells; Lets-Plot's script draws the figures.

    The notebook is a copy in a folder of its own (the lab autosaves), with the kit linked beside it; the runs
    are the kit's (PERFKIT_DATA), so "latest" finds the committed reference runs or newer ones."""
    lab_dir = tmp_path / "lab"
    lab_dir.mkdir()
    nb = nbformat.read(ROOT / "notebooks/queues.ipynb", as_version=4)
    # a bare gggrid value at the end: plots side by side draw interactively too (perfkit.json's renderers)
    nb.cells.append(nbformat.v4.new_code_cell('val xy = mapOf("x" to listOf(1, 2, 3), "y" to listOf(3, 1, 2))\n'
                                              'gggrid(listOf(letsPlot(xy) + geomPoint { x = "x"; y = "y" }, letsPlot(xy) + geomLine { x = "x"; y = "y" }), ncol = 2)'))
    nbformat.write(nb, lab_dir / "queues.ipynb")
    (lab_dir / "kit").symlink_to(ROOT / "notebooks/kit")
    port, token = free_port(), secrets.token_hex(16)
    env = dict(os.environ, JUPYTER_TOKEN=token, PERFKIT_DATA=str(ROOT / "data"), JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"))
    env.pop("PERFKIT_HEADLESS", None)
    proc = subprocess.Popen([str(ROOT / "bench"), "lab", "--no-browser", f"--port={port}", "--ServerApp.ip=127.0.0.1",
                             f"--ServerApp.root_dir={lab_dir}", "--LabApp.expose_app_in_browser=True"],
                            cwd=ROOT, stdout=(tmp_path / "lab.log").open("w"), stderr=subprocess.STDOUT, text=True,
                            env=env, start_new_session=True)
    shot = ROOT / "build" / "test-reports" / "lab-queues.png"
    try:
        wait_for_lab(proc, port, token, tmp_path / "lab.log")
        chromium.get(f"http://127.0.0.1:{port}/lab/tree/queues.ipynb?token={token}")
        wait_for(chromium, "return !!(window.jupyterapp && window.jupyterapp.shell.currentWidget"
                           " && window.jupyterapp.shell.currentWidget.sessionContext"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel"
                           " && window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle')", 300)
        chromium.execute_script("window.jupyterapp.commands.execute('notebook:run-all-cells')")
        # the last cell has run when no cell is queued or running: JupyterLab marks those with [*]
        wait_for(chromium, "const p = document.querySelectorAll('.jp-InputPrompt');"
                           "return p.length > 0 && ![...p].some(e => e.textContent.includes('*'))"
                           " && document.querySelectorAll('.jp-OutputArea-output').length > 5", 600)
        drawn = chromium.execute_script(
            "const outs = [...document.querySelectorAll('.jp-RenderedHTMLCommon')];"
            "return {figures: outs.filter(o => o.querySelector('svg') && !o.querySelector('[id^=perfkit-static-]')).length,"
            " fallbacks: document.querySelectorAll('[id^=perfkit-static-]').length,"
            " errors: document.querySelectorAll('.jp-RenderedText[data-mime-type=\"application/vnd.jupyter.stderr\"]').length}")
        shot.parent.mkdir(parents=True, exist_ok=True)
        chromium.execute_script("const f = document.querySelector('.jp-RenderedHTMLCommon .plt-container');"
                                "if (f) f.scrollIntoView({block: 'center'})")
        chromium.save_screenshot(str(shot))
        assert drawn["figures"] >= 3 and drawn["fallbacks"] == 0, drawn
        assert drawn["errors"] == 0, drawn
        # Lets-Plot's own drawing answers the pointer (its tooltips): the static SVG has no such layer
        assert chromium.execute_script("return document.querySelectorAll('.jp-RenderedHTMLCommon .plt-container').length") >= 3
        last = chromium.execute_script("const cells = document.querySelectorAll('.jp-Notebook .jp-Cell');"
                                       "const c = cells[cells.length - 1];"
                                       "return {drawn: c.querySelectorAll('.plt-container').length, fallback: c.querySelectorAll('[id^=perfkit-static-]').length,"
                                       " errors: c.querySelectorAll('[data-mime-type=\"application/vnd.jupyter.stderr\"]').length}")
        # Lets-Plot draws a grid as a container of containers, one per plot
        assert last["drawn"] >= 1 and last["fallback"] == 0 and last["errors"] == 0, f"the gggrid cell draws interactively: {last}"
        tip = hover_until_a_tooltip(chromium, ".jp-RenderedHTMLCommon .plt-container")
        (shot.parent / "lab-tooltip.txt").write_text(tip)  # what the tooltip said, beside the screenshot
        assert tip, "hovering a drawn figure shows a tooltip with the value under the pointer"
    finally:
        try:
            os.killpg(proc.pid, 15)
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
        except OSError:
            pass  # it had already stopped


def hover_until_a_tooltip(driver, containers):
    """Moves the pointer over each figure in [containers] on a grid until Lets-Plot draws a tooltip: text that appears
    in the figure only while the pointer is over a mark. Returns that new text, or "" when none appeared."""
    from selenium.webdriver.common.action_chains import ActionChains
    count = "return [...document.querySelectorAll(arguments[0])].map(c => c.innerText + '|' + c.textContent)"
    for index in range(driver.execute_script(f"return document.querySelectorAll('{containers}').length")):
        figure = driver.execute_script(f"const f = document.querySelectorAll('{containers}')[{index}];"
                                       "f.scrollIntoView({block: 'center'}); return f")
        box = driver.execute_script("const r = arguments[0].getBoundingClientRect(); return [r.width, r.height]", figure)
        before = driver.execute_script(count, containers)[index]
        for fy in (0.3, 0.45, 0.6, 0.75):
            for fx in (0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85):
                ActionChains(driver).move_to_element_with_offset(figure, int(box[0] * (fx - 0.5)), int(box[1] * (fy - 0.5))).perform()
                time.sleep(0.15)
                now = driver.execute_script(count, containers)[index]
                if now != before:
                    return now.replace(before, "", 1) or now
    return ""


def wait_for(driver, script, seconds):
    deadline = time.time() + seconds
    while not driver.execute_script(script):
        assert time.time() < deadline, f"timed out: {script}"
        time.sleep(1)


def test_use_dataframe_beside_the_kit_adds_no_second_copy_of_its_classes(tmp_path):
    """The kernel resolves DataFrame for the kit (perfkit.json), so `%use dataframe` at the same version adds the
    same jar files, not a second copy. (`%use lets-plot` cannot resolve here: the mirror has no lets-plot-kotlin-kernel.)"""
    copies = ('println(listOf("org/jetbrains/kotlinx/dataframe/DataFrame.class", "org/jetbrains/letsPlot/Figure.class")'
              '.map { Thread.currentThread().contextClassLoader.getResources(it).toList().size })')
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in (
        "%use @file[kit/perfkit.json]", copies, "%use dataframe(0.15.0)", copies, 'dataFrameOf("a")(1, 2).rowsCount()')])
    nb.metadata["kernelspec"] = {"name": "kotlin", "display_name": "Kotlin", "language": "kotlin"}
    nbformat.write(nb, tmp_path / "use.ipynb")
    r = subprocess.run([str(ROOT / ".venv/bin/python"), str(ROOT / "notebooks/tools/execute.py"), "--log-dir",
                        str(tmp_path / "logs"), str(tmp_path / "out"), str(tmp_path / "use.ipynb")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    cells = nbformat.read(tmp_path / "out" / "use.ipynb", as_version=4).cells
    printed = lambda cell: "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream").strip()
    assert printed(cells[1]) == "[1, 1]", "the kit alone: one copy of each"
    assert printed(cells[3]) == "[1, 1]", "after %use dataframe(0.15.0): still one copy of each"


def test_an_slo_parameter_re_reads_the_recorded_searches(tmp_path):
    env = dict(os.environ, PERFKIT_SLO_MS="20")
    r = subprocess.run([str(ROOT / "bench"), "notebooks", "--runs", "reference", "--out", str(tmp_path / "out"),
                        str(ROOT / "notebooks/messaging.ipynb")], cwd=ROOT, capture_output=True, text=True, timeout=900, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    nb = executed_ok(tmp_path / "out" / "messaging.ipynb")
    text = "\n".join(o.get("text", "") + o.get("data", {}).get("text/markdown", "") for c in nb.cells for o in c.get("outputs", []))
    parameters = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert 'PERFKIT_SLO_MS = "20" (from the environment: ./bench notebooks)' in parameter_lines(parameters)
    assert "re-read at p99.9 &lt;= 20 ms from the" in text and "(the run's SLO: 100 ms)" in text
    # a bad value never reaches a kernel: test_a_bad_slo_in_the_environment_is_the_users_error_before_any_kernel_starts
