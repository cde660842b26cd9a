"""The committed data: reference runs follow the run format; published numbers are tidy."""

import json
import re

import pytest

from conftest import ROOT, decode_hlog, manifest, read_csv, validate, validate_load_results, validate_notes

REFERENCE = sorted(p.parent for p in (ROOT / "data/reference").glob("*/*/run.json"))


def test_decoding_merges_as_the_hdrhistogram_package_does():
    """decode_hlog adds intervals through add_histogram's shortcut: on the first log of each reference run (auto-resized
    intervals of every study among them) the merge must equal the package's own HdrHistogram.add, value for value."""
    from hdrh.histogram import HdrHistogram
    from hdrh.log import HistogramLogReader
    logs = [min(run.glob("latency/*.hlog")) for run in REFERENCE if any(run.glob("latency/*.hlog"))]
    assert len(logs) >= 5
    for log in logs:
        ours, intervals = decode_hlog(log)
        theirs = HdrHistogram(1, 24 * 3600 * 10**9, 3)
        reader, n = HistogramLogReader(str(log), theirs), 0
        while reader.add_next_interval_histogram(theirs) is not None:
            n += 1
        assert intervals == n and ours.get_total_count() == theirs.get_total_count(), log
        recorded = [[(v.value_iterated_to, v.count_at_value_iterated_to) for v in h.get_recorded_iterator()] for h in (ours, theirs)]
        assert recorded[0] == recorded[1], log
        assert (ours.get_min_value(), ours.get_max_value()) == (theirs.get_min_value(), theirs.get_max_value()), log


def test_there_is_a_queues_reference_run():
    assert any(r.parent.name == "queues" for r in REFERENCE)


@pytest.mark.parametrize("run_dir", REFERENCE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_reference_run_is_complete_valid_and_listed(run_dir):
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "complete", m["status"]
    # a reference keeps what happened: a run is valid, or each reason names one cell that its own table marks invalid
    # (so the post leaves it out and says why), never a reason about the whole run
    invalid_cells = {r["cell"] for f in m["files"] if f["kind"] == "table"
                     for r in read_csv(run_dir / f["path"]) if r.get("valid") == "false"}
    for reason in m["invalidReasons"]:
        assert reason.split(":", 1)[0] in invalid_cells, reason
    assert m["valid"] or m["invalidReasons"]
    for f in m["files"]:
        assert (run_dir / f["path"]).is_file(), f
    # every interval log decodes; one process's log may hold no samples (a workflow engine that ran no job after its
    # warm-up because another engine had acquired the backlog), but every cell's logs together hold some
    samples = {}
    for f in m["files"]:
        if f["kind"] == "hlog":
            merged, intervals = decode_hlog(run_dir / f["path"])
            assert intervals > 0, f["path"]
            samples[f["cell"]] = samples.get(f["cell"], 0) + merged.get_total_count()
    assert all(samples.values()), [cell for cell, n in samples.items() if n == 0]


@pytest.mark.parametrize("run_dir", REFERENCE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_reference_files_stay_light_and_a_compressed_one_is_whole(run_dir):
    """A reference is committed: every file stays under 5 MiB, a long run's time series stored gzip-compressed
    (data/README.md), and a compressed file decompresses to a table with the plain file's header."""
    import gzip
    for f in sorted(p for p in run_dir.rglob("*") if p.is_file()):
        assert f.stat().st_size < 5 * 1024 * 1024, f"{f.relative_to(run_dir)}: {f.stat().st_size} bytes (a table or the time series may be stored as .gz)"
    for f in manifest(run_dir)["files"]:
        if f["path"].endswith(".gz"):
            with gzip.open(run_dir / f["path"], "rt", newline="") as text:
                lines = text.read().splitlines()
            assert len(lines) > 1 and all(line.count(",") == lines[0].count(",") for line in lines), f["path"]
            if f["kind"] == "timeseries":
                assert lines[0] == "epoch_ms,elapsed_s,phase,series,metric,value"


@pytest.mark.parametrize("run_dir", REFERENCE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_reference_tables_have_exactly_the_declared_columns(run_dir):
    """data/schema/tables/<study>.json declares every table a study writes; the kit relies on it to tell a damaged run."""
    import csv
    import json
    declared = json.loads((ROOT / "data/schema/tables" / f"{run_dir.parent.name}.json").read_text())["tables"]
    started = manifest(run_dir)["startedAt"]
    tables = [f["path"] for f in manifest(run_dir)["files"] if f["kind"] == "table"]
    assert tables
    for path in tables:
        assert path in declared, f"{path} is not declared"
        with open(run_dir / path, newline="") as f:
            header = next(csv.reader(f))
        # a column added later ("since") is absent from runs started before it came in
        expected = [c for c, spec in declared[path]["columns"].items() if started >= spec.get("since", "")]
        assert header == expected, path


DECLARATIONS = sorted((ROOT / "data/schema/tables").glob("*.json"))


@pytest.mark.parametrize("declaration", DECLARATIONS, ids=lambda p: p.stem)
def test_every_declared_column_says_its_unit_and_meaning(declaration):
    """A reader of the CSV alone needs each column's unit ("" for words and flags) and what it measures, over which window."""
    import json
    tables = json.loads(declaration.read_text())["tables"]
    missing = [f"{t}:{c}" for t, spec in tables.items() for c, col in spec["columns"].items()
               if "unit" not in col or not col.get("description", "").strip()]
    assert not missing, missing
    numeric_without_unit = [f"{t}:{c}" for t, spec in tables.items() for c, col in spec["columns"].items()
                            if col["type"] == "number" and col["unit"] == ""]
    assert not numeric_without_unit, "a measured number has a unit (\"ratio\" when it has none)"


@pytest.mark.parametrize("declaration", DECLARATIONS, ids=lambda p: p.stem)
def test_every_study_declares_its_compare_headline_on_declared_columns(declaration):
    """The compare notebook reads a study's headline number from its declaration: a table and column that exist (or
    the latency logs' p99), the key columns that name a cell, and which way is better."""
    import json
    doc = json.loads(declaration.read_text())
    rules = doc.get("compare", [])
    assert rules, f"{declaration.stem} declares no compare headline"
    for rule in rules:
        assert set(rule) <= {"mode", "hasRows", "table", "value", "unit", "higherIsBetter", "keys"}, rule
        assert rule["unit"].strip(), rule
        if rule["table"] == "latency logs":
            continue
        columns = doc["tables"][rule["table"]]["columns"]
        assert rule["value"] in columns and columns[rule["value"]]["type"] in ("number", "integer"), rule
        assert all(k in columns for k in rule.get("keys", ["cell"])), rule
        assert rule.get("hasRows", rule["table"]) in doc["tables"], rule
    assert "mode" not in rules[-1] and "hasRows" not in rules[-1], "the last rule applies to any run"
    capacity = doc.get("capacity")
    if capacity:  # the capacity the compare notebook tabulates and prices: a lower end, the last load that met the SLO
        columns = doc["tables"][capacity["table"]]["columns"]
        assert capacity["value"] in columns and columns[capacity["value"]]["type"] in ("number", "integer"), capacity
    assert bool(capacity) == ("capacity.csv" in doc["tables"]), "every study with a capacity table declares which column it is"


def test_every_note_the_notebooks_and_the_kit_read_is_declared():
    """Notes are free prose for people, except the ones a notebook or the kit reads by name: those are declared, so a
    study that renames one fails here rather than in a post."""
    import json
    import re
    kit = ROOT / "notebooks/kit/src/main/kotlin/perfkit/kit"
    # each declared study's notebook and its kit file (three-tier: ThreeTier.kt), so a new study is scanned too
    sources = {d.stem: [f for f in (ROOT / "notebooks" / f"{d.stem}.ipynb", kit / ("".join(w.title() for w in d.stem.split("-")) + ".kt")) if f.exists()]
               for d in DECLARATIONS}
    assert {"messaging", "workflow", "three-tier", "web-reactive", "queues"} <= sources.keys()
    # run.note("x"), notes.path("x"), ["notes"]["x"], ["notes"].path("x"), path("notes").path("x"), ["notes"]?.get("x"), in code or in a notebook's JSON
    read = re.compile(r'(?:\bnote\(|\bnotes\.path\(|\[\\?"notes\\?"\]\??(?:\[|\.path\(|\.get\()|path\(\\?"notes\\?"\)\.path\()\\?"([A-Za-z-]+)\\?"')
    undeclared = {}
    for study, files in sources.items():
        declared = json.loads((ROOT / "data/schema/tables" / f"{study}.json").read_text()).get("notes", {})
        names = {n for f in files for n in read.findall(f.read_text())}
        if study == "web-reactive":  # run.note(it) for each stack, under its results
            names |= {"mvc", "webflux", "mvc-virtual"}
        if study in ("messaging", "workflow", "three-tier", "web-reactive"):
            assert names, f"no note read found for {study}: the pattern no longer matches the notebooks"
        missing = names - declared.keys()
        if missing:
            undeclared[study] = sorted(missing)
    assert not undeclared, undeclared


def test_the_kits_typed_columns_are_the_declared_ones():
    """The notebooks read a table's columns through the kit's typed accessors (row.jobsPerS), generated from the
    declarations: a declaration changed without them fails here, and a notebook reading a dropped column fails to
    compile rather than reading nulls."""
    import subprocess
    import sys
    r = subprocess.run([sys.executable, str(ROOT / "notebooks/kit/columns.py"), "--check"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    columns = (ROOT / "notebooks/kit/src/main/kotlin/perfkit/kit/Columns.kt").read_text()
    assert "val DataRow<*>.jobsPerS: Double? get() = num(opt(\"jobs_per_s\"))" in columns
    assert "val DataRow<*>.valid: Boolean? get()" in columns


def test_no_notebook_value_is_named_like_a_column():
    """Inside a DataFrame lambda (filter, add) a row's column property wins over a notebook value of the same name: a
    `val cell` there would read the row's cell, silently when the types agree. So no notebook declares one."""
    import json
    import re
    properties = set(re.findall(r"val DataRow<\*>\.(\w+):", (ROOT / "notebooks/kit/src/main/kotlin/perfkit/kit/Columns.kt").read_text()))
    clashes = []
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(nb.read_text())["cells"]:
            if cell["cell_type"] != "code":
                continue
            for line in "".join(cell["source"]).splitlines():
                m = re.match(r"(?:val|var|fun)\s+(?:\(([^)]*)\)|([A-Za-z_]\w*))", line)
                names = [n.strip() for n in (m.group(1) or m.group(2)).split(",")] if m else []
                clashes += [f"{nb.name}: {n}" for n in names if n in properties]
    assert properties and not clashes, clashes


@pytest.mark.parametrize("run_dir", REFERENCE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_reference_notes_hold_to_their_declaration(run_dir):
    validate_notes(run_dir)


def test_every_reference_load_driver_result_holds_to_its_declaration():
    """The load driver's results are read by the harness by field name: data/schema/load-result.schema.json declares each."""
    http = [r for r in REFERENCE if r.parent.name in ("web-reactive", "three-tier")]
    assert http and all(validate_load_results(r) > 0 for r in http)


@pytest.mark.parametrize("run_dir", REFERENCE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_reference_values_have_their_declared_types(run_dir):
    """A declared type is what a notebook may parse a column as: every non-empty value must read as that type, and be
    one of the column's declared values when it lists them (a status or verdict's enum)."""
    import csv
    import json
    readers = {"integer": int, "number": float, "boolean": lambda v: {"true": True, "false": False}[v], "string": str}
    declared = json.loads((ROOT / "data/schema/tables" / f"{run_dir.parent.name}.json").read_text())["tables"]
    wrong = {}
    for path in [f["path"] for f in manifest(run_dir)["files"] if f["kind"] == "table"]:
        columns = declared[path]["columns"]
        with open(run_dir / path, newline="") as f:
            for row in csv.DictReader(f):
                for column, value in row.items():
                    kind = columns[column]["type"]
                    try:
                        if value != "":
                            readers[kind](value)
                    except (ValueError, KeyError):
                        wrong.setdefault(f"{path}:{column} ({kind})", value)
                    if value != "" and value not in columns[column].get("enum", [value]):
                        wrong.setdefault(f"{path}:{column} (one of {columns[column]['enum']})", value)
    assert not wrong, wrong


def test_reference_runs_stay_small():
    # a clone stays quick to fetch. The largest reference, three-tier at full scale (3 forks, 42 minutes, a per-second
    # series for each of ~40 processes, a 1 s interval log per fork and step), is about 9 MB; a study that needs more
    # should thin what it keeps rather than raise this
    for study in (ROOT / "data/reference").iterdir():
        size = sum(p.stat().st_size for p in study.rglob("*") if p.is_file())
        assert size < 10_000_000, f"{study.name}: {size} bytes of reference data"


def test_queues_reference_has_repetitions_for_every_cell_and_wait_strategy():
    throughput_runs = [r for r in REFERENCE if r.parent.name == "queues" and manifest(r)["mode"] == "throughput"]
    assert throughput_runs
    rows = read_csv(throughput_runs[-1] / "throughput.csv")
    forks = {}
    for r in rows:
        forks.setdefault(r["cell"], set()).add(r["fork"])
    variants = {"abq-1", "abq-3", "abq-5", "disruptor-1", "disruptor-shard-3", "disruptor-shard-5", "disruptor-work-3", "disruptor-work-5"}
    assert {r["variant"] for r in rows} == variants
    assert {r["wait_strategy"] for r in rows if r["variant"].startswith("disruptor")} == {"blocking", "yielding", "busy-spin"}
    assert all(len(f) >= 3 for f in forks.values()), forks
    # the harness/minimal comparison and the 1P1C claims need intervals over at least 5 forks
    assert all(len(f) >= 5 for cell, f in forks.items() if cell.split("/")[0] in ("abq-1", "disruptor-1")), forks


def test_messaging_reference_runs_kafka_under_every_idle_policy():
    sweeps = [r for r in REFERENCE if r.parent.name == "messaging"]
    assert sweeps
    rows = read_csv(sweeps[-1] / "capacity.csv")
    cells = {row["cell"] for row in rows}
    assert {"kafka/original", "kafka/park", "kafka/blocking", "chronicle/original"} <= cells, cells
    # the original's question asked at this host's scale: a calibrated rate, and capacity bracketed over 3 searches per cell
    m = manifest(sweeps[-1])
    assert m["params"]["rate-per-chain"] == "auto" and m["notes"]["calibration"]["fitted"]
    assert all(int(r["rate_per_chain"]) == m["notes"]["ratePerChain"] for r in rows)
    assert all(sum(r["cell"] == cell for r in rows) >= 3 for cell in cells), rows


def test_web_reactive_reference_sweeps_every_n_with_three_forks():
    (run,) = [r for r in REFERENCE if r.parent.name == "web-reactive"]
    rows = read_csv(run / "closed.csv")
    # the original's graphs, with intervals: every N up to 1000, both stacks, 1 and 2 calls, 3 fresh app JVMs each
    assert {int(r["users"]) for r in rows} == {10, 25, 50, 100, 150, 200, 250, 500, 1000}
    assert {r["cell"] for r in rows} >= {"mvc/1call", "mvc/2call", "webflux/1call", "webflux/2call"}
    assert {r["fork"] for r in rows} == {"1", "2", "3"} and all(r["valid"] == "true" for r in rows)
    assert {r["cell"] for r in read_csv(run / "capacity.csv")} == {r["cell"] for r in rows}
    # each closed step long enough to judge whether its servers were warm over it: the original's 5 requests a user
    # repeated until a user's requests take --step-seconds at the external service's delay
    m = manifest(run)
    step, delay = float(m["params"]["step-seconds"]), float(m["params"]["backend-delay-ms"]) / 1000
    assert step >= 10
    for r in rows:
        assert int(r["repeats"]) * int(r["calls"]) * delay >= step and float(r["seconds"]) >= step, r


def test_three_tier_reference_has_every_round_with_three_forks():
    (run,) = [r for r in REFERENCE if r.parent.name == "three-tier"]
    assert manifest(run)["params"]["rounds"] == "templates,inserts,chain"
    sat = read_csv(run / "saturation.csv")
    # chain/webflux: the matched Spring MVC vs Spring WebFlux chain beside the original's three
    assert {r["cell"] for r in sat} == {"templates/jsp", "templates/freemarker", "templates/plain", "chain/sync", "chain/async", "chain/mixed",
                                        "chain/webflux"}
    inserts = read_csv(run / "inserts.csv")
    assert {r["cell"] for r in inserts} == {f"inserts/{s}/{d}" for s in ("postgres", "cassandra") for d in ("strict", "relaxed")}
    assert all(r["rows_counted"] == r["acknowledged"] for r in inserts)
    assert {r["fork"] for r in sat + inserts} == {"1", "2", "3"}


def test_workflow_reference_sizes_threads_from_a_calibration():
    drains = [r for r in REFERENCE if r.parent.name == "workflow"]
    assert drains
    m = manifest(drains[-1])
    assert m["params"]["threads"] == "auto" and "calibration" in m["notes"]
    # instances (one and more), acquire size and the lock as factors, each configuration drained at least 3 times
    rows = read_csv(drains[-1] / "throughput.csv")
    configs = {}
    for r in rows:
        configs.setdefault((r["job_type"], r["instances"], r["acquire_size"], r["lock"]), set()).add(r["repetition"])
    assert "1" in {c[1] for c in configs} and len({c[1] for c in configs}) >= 2
    assert {c[2] for c in configs} == {"32", "512"} and {c[3] for c in configs} == {"off", "on"}
    assert all(len(reps) >= 3 for reps in configs.values()), configs
    assert "fixed" in {c[0] for c in configs}
    # the queue sized as the original's (64 places per thread) and at least twice the largest acquire size, at least two
    # batches per engine at 4 engines, and drains as long as --min-drain asks: so neither a hoard, a short backlog, an
    # inert acquire size nor an engine's start-up keeps the scaling and lock claims from being judged
    largest = max(int(r["acquire_size"]) for r in rows)
    for r in rows:
        assert int(r["queue_size"]) == max(64 * int(r["threads"]), 2 * largest), r
        assert int(r["jobs"]) >= 2 * 4 * min(int(r["acquire_size"]), int(r["queue_size"])), r
        assert float(r["drain_seconds"]) >= float(m["params"]["min-drain"]), r


def test_published_numbers_are_tidy():
    rows = read_csv(ROOT / "data/published/queues.csv")
    assert rows and set(rows[0]) == {"study", "source", "variant", "metric", "value", "unit", "hardware", "note"}
    for r in rows:
        assert r["study"] == "queues" and float(r["value"]) > 0 and r["unit"] and r["hardware"]
    ours = {"abq-1", "abq-3", "abq-5", "disruptor-1"}
    assert {r["variant"] for r in rows if r["source"] == "original write-up"} == ours


# ---- dependencies: one version of each, wherever it is declared ---------------------------------------------------

# Projects released as one: their artifacts share a version (Jackson 2's annotations drop the patch from 2.20 on)
FAMILIES = {"com.fasterxml.jackson": lambda v: ".".join(v.split(".")[:2]), "org.slf4j": str, "org.apache.kafka": str,
            "org.openjdk.jmh": str, "org.springframework.boot": str, "org.jetbrains.kotlin": str, "org.junit": str}


def declared_dependencies():
    """(group:artifact, version, where) for every //DEPS line, every pom's dependencies, BOMs and plugins, the kernel's
    perfkit.json and the Python pins of environment.yml."""
    found = []
    for f in sorted(ROOT.glob("scripts/**/*.java")):
        if "/target/" in str(f):
            continue
        for line in re.findall(r"^//DEPS (.+)$", f.read_text(), re.M):
            for coordinate in line.split():
                parts = coordinate.split("@")[0].split(":")
                if len(parts) >= 3:
                    found.append((f"{parts[0]}:{parts[1]}", parts[2], f.relative_to(ROOT)))
    for pom in [*ROOT.glob("scripts/*/pom.xml"), ROOT / "notebooks/kit/pom.xml", *ROOT.glob("env/setup/*.pom.xml")]:
        text = pom.read_text()
        properties = dict(re.findall(r"<([\w.-]+)>([^<$]+)</\1>", text.split("<properties>")[1].split("</properties>")[0])) \
            if "<properties>" in text else {}
        for group, artifact, version in re.findall(r"<groupId>([^<]+)</groupId>\s*<artifactId>([^<]+)</artifactId>\s*<version>([^<]+)</version>", text):
            version = re.sub(r"\$\{([^}]+)\}", lambda m: properties.get(m.group(1), m.group(0)), version)
            found.append((f"{group}:{artifact}", version, pom.relative_to(ROOT)))
        # a plugin without a groupId is Maven's own (org.apache.maven.plugins): compiler, surefire, jar, resources
        for block in re.findall(r"<plugin>(.*?)</plugin>", text, re.S):
            bare = re.sub(r"<!--.*?-->", "", block, flags=re.S).strip()
            own = re.match(r"<artifactId>([^<]+)</artifactId>\s*<version>([^<]+)</version>", bare)
            if own and "<groupId>" not in bare.split("<artifactId>")[0]:
                found.append((f"org.apache.maven.plugins:{own.group(1)}", own.group(2), pom.relative_to(ROOT)))
    for coordinate in json.loads((ROOT / "notebooks/kit/perfkit.json").read_text())["dependencies"]:
        parts = coordinate.split(":")
        if len(parts) == 3:
            found.append((f"{parts[0]}:{parts[1]}", parts[2], "notebooks/kit/perfkit.json"))
    for name, version in re.findall(r"^\s*- ([\w.-]+)==([\w.]+)", (ROOT / "environment.yml").read_text(), re.M):
        found.append((f"pypi:{name}", version, "environment.yml"))
    return found


def test_every_dependency_has_one_version_wherever_it_is_declared():
    found = declared_dependencies()
    assert len(found) > 40, "the scan finds the declarations"
    assert {"org.apache.maven.plugins:maven-surefire-plugin", "org.apache.maven.plugins:maven-compiler-plugin"} <= {n for n, _, _ in found}, \
        "Maven's own plugins, declared without a groupId, are scanned too"
    versions = {}
    for name, version, where in found:
        versions.setdefault(name, set()).add((version, str(where)))
    split = {n: sorted(v) for n, v in versions.items() if len({version for version, _ in v}) > 1}
    assert not split, f"declared at more than one version: {split}"
    for prefix, line in FAMILIES.items():
        group = lambda name: name.split(":")[0]
        lines = {(line(version), name) for name, version, _ in found
                 if (group(name) == prefix or group(name).startswith(prefix + ".")) and not name.endswith("-plugin")}
        assert len({l for l, _ in lines}) <= 1, f"{prefix}: one release of the project everywhere: {sorted(lines)}"
    # the lab's JavaScript comes from the PyPI wheel of the same Lets-Plot as the kit's lets-plot-common
    assert {v for n, v, _ in found if n == "pypi:lets-plot"} == {v for n, v, _ in found if n == "org.jetbrains.lets-plot:lets-plot-common"}


def test_a_framework_is_pinned_through_its_bom():
    """A script on Spring Boot imports its BOM and leaves the framework's own artifacts to it, so one line moves the
    framework with everything it manages; a version there would quietly hold one artifact back."""
    on_boot = [f for f in sorted(ROOT.glob("scripts/*/*.java")) if "org.springframework.boot:spring-boot-starter" in f.read_text()]
    assert on_boot, "the scan finds the Spring Boot studies"
    for f in on_boot:
        deps = [c for line in re.findall(r"^//DEPS (.+)$", f.read_text(), re.M) for c in line.split()]
        assert any(c.startswith("org.springframework.boot:spring-boot-dependencies:") and c.endswith("@pom") for c in deps), \
            f"{f.relative_to(ROOT)} imports Spring Boot's BOM"
        pinned = [c for c in deps if c.startswith("org.springframework") and not c.endswith("@pom") and len(c.split(":")) > 2]
        assert not pinned, f"{f.relative_to(ROOT)}: Spring artifacts take their version from the BOM: {pinned}"
        # Netty's BOM first: the first import wins, and Boot's Netty has no native files on the repository served here
        boms = [c.split(":")[1] for c in deps if c.endswith("@pom")]
        assert boms.index("netty-bom") < boms.index("spring-boot-dependencies"), f"{f.relative_to(ROOT)}: netty-bom before Boot's BOM"
    # a library left to the BOM in one script and pinned in another could split unseen: pin it in both
    versioned = {name for name, _, _ in declared_dependencies()}
    for f in on_boot:
        bare = [c for line in re.findall(r"^//DEPS (.+)$", f.read_text(), re.M) for c in line.split() if len(c.split(":")) == 2]
        assert not [c for c in bare if c in versioned], f"{f.relative_to(ROOT)}: pinned elsewhere, so pin it here too: {[c for c in bare if c in versioned]}"
