"""Shared helpers: run ./bench as a user would, find runs, read the run format."""
import csv
import json
import os
import pathlib
import signal
import subprocess
import secrets
import shutil
import tempfile
import time

import jsonschema
import pytest

# one definition for both test trees; importing them here keeps `from conftest import ...` working
from support import descendants, free_port, listening_ports, listening_sockets, port_open, processes  # noqa: F401
from shared_runs import shared_quick_run

ROOT = pathlib.Path(__file__).resolve().parents[2]

# The Ctrl-C tests send SIGINT as a terminal does to its foreground job. A suite started in the background of a
# non-interactive shell (`./bench test &`) inherits SIGINT ignored, and so would every run it starts (a JVM keeps
# an ignored SIGINT ignored): give it back its default so the runs see Ctrl-C the way a user's terminal sends it.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config):
    # ./bench test runs the suite on two xdist workers with scripts/tests/suite.py as a plugin (-p suite)
    config.addinivalue_line("markers", "alone: no other test runs beside this one (see scripts/tests/suite.py)")


SCHEMA = json.loads((ROOT / "data/schema/run.schema.json").read_text())
HDR_JAR_GLOB = ".m2/repository/org/hdrhistogram/HdrHistogram/2.2.2/HdrHistogram-2.2.2.jar"


def bench(*args, timeout=600, env=None, **kw):
    """Runs ./bench with the given arguments; returns the CompletedProcess (text mode)."""
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([str(ROOT / "bench"), *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=full_env, **kw)


def run_dir_of(result):
    """A completed run prints its directory as the last line of stdout."""
    assert result.returncode == 0, f"run failed ({result.returncode}):\n{result.stderr[-3000:]}"
    path = pathlib.Path(result.stdout.strip().splitlines()[-1])
    assert path.is_dir(), path
    return path


def run_once(tmp_path_factory, study, *args, timeout=900):
    """One completed run of study with args, in a folder of its own: what a module's shared-run fixture returns."""
    out = tmp_path_factory.mktemp(study)
    return run_dir_of(bench("run", study, *args, "--out", str(out), timeout=timeout))


_refusals = {}


def refusal(study, args, tmp_path_factory, cases):
    """The one error line study's option table and rules give args (None when they accept them), checked in one JVM
    for all of a module's cases (`--perfkit-check-options`, harness Study): a refusal is a parse, and 130 JVMs
    that only refuse an option cost minutes. One end-to-end case per study still checks exit 2 and the folder."""
    key = (study, tuple(tuple(c) for c in cases))
    if key not in _refusals:
        f = tmp_path_factory.mktemp("refusals") / f"{study}.json"
        f.write_text(json.dumps([list(c) for c in cases]))
        r = bench("run", study, "--perfkit-check-options", str(f), timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        answers = [json.loads(line)["error"] for line in r.stdout.splitlines() if line.startswith("{")]
        assert len(answers) == len(cases), r.stdout[-3000:]
        _refusals[key] = dict(zip(key[1], answers))
    return _refusals[key][tuple(args)]


def assert_refused(study, args, needle, tmp_path_factory, cases):
    """args are refused with one `error:` line holding needle (see refusal; cases: the module's argument lists)."""
    error = refusal(study, args, tmp_path_factory, cases)
    assert error and error.startswith("error: ") and needle in error and "\n" not in error, (args, error)


def manifest(run_dir):
    return json.loads((run_dir / "run.json").read_text())


def validate(m):
    jsonschema.Draft202012Validator(SCHEMA, format_checker=jsonschema.FormatChecker()).validate(m)


LOAD_RESULT_SCHEMA = json.loads((ROOT / "data/schema/load-result.schema.json").read_text())


def validate_load_results(run_dir):
    """Every load/*.result.json the run lists holds to data/schema/load-result.schema.json; returns how many there were."""
    paths = [f["path"] for f in manifest(run_dir)["files"] if f["path"].endswith(".result.json")]
    validator = jsonschema.Draft202012Validator(LOAD_RESULT_SCHEMA)
    for path in paths:
        errors = sorted(validator.iter_errors(json.loads((run_dir / path).read_text())), key=lambda e: list(e.path))
        assert not errors, f"{path}: {errors[0].message} at {list(errors[0].path)}"
    return len(paths)


NOTE_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "object": dict, "array": list}


def validate_notes(run_dir):
    """The manifest notes a notebook or the kit reads hold to their declaration in data/schema/tables/<study>.json: each
    present (not null) has its declared type, and so does each declared field of it. Returns how many were checked."""
    m = manifest(run_dir)
    declared = json.loads((ROOT / "data/schema/tables" / f"{m['study']}.json").read_text()).get("notes", {})
    checked = 0
    for key, spec in declared.items():
        value = m["notes"].get(key)
        if value is None:
            continue
        kind = NOTE_TYPES[spec["type"]]
        assert isinstance(value, kind) and not (spec["type"] in ("integer", "number") and isinstance(value, bool)), \
            f"notes.{key} is declared {spec['type']}, not {type(value).__name__}"
        for field, fspec in spec.get("properties", {}).items():
            if value.get(field) is not None:
                assert isinstance(value[field], NOTE_TYPES[fspec["type"]]), f"notes.{key}.{field} is declared {fspec['type']}"
        checked += 1
    return checked


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def hdr_jar():
    jar = pathlib.Path.home() / HDR_JAR_GLOB
    assert jar.exists(), f"HdrHistogram jar not in the Maven cache: {jar}"
    return jar


def decode_hlog(path):
    """Decodes an interval log with the hdrhistogram package; returns the merged histogram and interval count."""
    from hdrh.histogram import HdrHistogram
    from hdrh.log import HistogramLogReader
    total = HdrHistogram(1, 24 * 3600 * 10**9, 3)
    reader = HistogramLogReader(str(path), total)
    intervals = 0
    while True:
        h = reader.get_next_interval_histogram()
        if h is None:
            break
        add_histogram(total, h)
        intervals += 1
    return total, intervals


def add_histogram(total, h):
    """total.add(h), as the hdrhistogram package computes it, without its slow path. An interval the Java side wrote
    from an auto-resizing histogram has a smaller range than total, and the package then adds it one index at a
    time in Python (a minute for the workflow reference's 758 logs). With the same lowest value and precision the
    indexes of the smaller range are the first ones of the larger (only the number of buckets differs), so the
    package's own C routine adds them as it does for equal shapes."""
    from ctypes import addressof
    from pyhdrh import add_array  # what HdrHistogram.add calls for two histograms of one shape
    if (h.lowest_trackable_value, h.significant_figures, h.word_size) != (total.lowest_trackable_value, total.significant_figures, total.word_size) \
            or h.counts_len > total.counts_len:
        total.add(h)
        return
    add_array(addressof(total.counts), addressof(h.counts), h.counts_len, h.word_size)
    if h.total_count:
        total.total_count += h.total_count
        total.max_value = max(total.max_value, h.get_max_value())
        total.min_value = min(total.min_value, h.get_min_value())
    total.start_time_stamp_msec = min(total.start_time_stamp_msec, h.start_time_stamp_msec)
    total.end_time_stamp_msec = max(total.end_time_stamp_msec, h.end_time_stamp_msec)


@pytest.fixture(scope="session")
def tiny_queues_run(tmp_path_factory):
    """The session's quick queues run with tiny windows, shared by the end-to-end checks and the notebooks' tests."""
    return shared_quick_run(tmp_path_factory, "queues").dir


def interrupt_run(args, ready, how="sigint", timeout=120):
    """Starts ./bench run ARGS in its own process group, waits until ready() returns the run directory,
    then sends Ctrl-C to the group (or SIGTERM to the run alone). Returns (exit code, stderr, run dir, ready's extra)."""
    proc = subprocess.Popen([str(ROOT / "bench"), "run", *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        deadline = time.time() + timeout
        while time.time() < deadline:
            found = ready()
            if found:
                break
            if proc.poll() is not None:
                pytest.fail(f"run {args[0]} ended (exit {proc.returncode}) before the point to interrupt it: {proc.stderr.read()[-1500:]}")
            time.sleep(0.5)
        else:
            pytest.fail(f"run {args[0]} never reached the point to interrupt it")
        run_dir, extra = found
        if how == "sigint":
            os.killpg(proc.pid, signal.SIGINT)
        else:
            os.kill(proc.pid, signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, err, run_dir, extra


def assert_failed_run_with_one_line(result, out, study, needle):
    """A run that could not reach what it needs: exit 1, one `error:` line naming it, no stack trace, and a
    failed manifest that validates and says why. Returns the manifest."""
    assert result.returncode == 1, (result.returncode, result.stderr)
    errors = [l for l in result.stderr.splitlines() if l.startswith("error:")]
    assert len(errors) == 1 and needle in errors[0], result.stderr
    assert not [l for l in result.stderr.splitlines() if "Exception" in l or l.startswith("\tat ")], result.stderr
    (run_dir,) = list(out.glob(f"{study}/*"))
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "failed" and needle in m["error"]
    return m


def leftovers(run_dir):
    """Processes of a run still alive: its forks, services and drivers carry the run directory on their command line."""
    out = subprocess.run(["pgrep", "-f", str(run_dir)], capture_output=True, text=True).stdout.split()
    return [p for p in out if int(p) != os.getpid()]


PG_BIN = pathlib.Path("/usr/lib/postgresql/15/bin")


# ---- a user's own database: a throwaway PostgreSQL started here, with a password ------------------------------


@pytest.fixture(scope="session")
def users_database():
    """A PostgreSQL server standing in for the user's own, with scram-sha-256 and a random password: one for the
    session, since every test that uses it checks it leaves no schema of its own (or anyone's) behind."""
    if not (PG_BIN / "initdb").exists():
        pytest.skip("PostgreSQL server binaries not installed")
    root = pathlib.Path(tempfile.mkdtemp(prefix="perfkit-userdb-"))  # directly in /tmp: user postgres must reach it
    password, port = "pk-" + secrets.token_hex(12), free_port()
    as_postgres = ["setpriv", "--reuid=postgres", "--regid=postgres", "--init-groups", "--"] if os.geteuid() == 0 else []
    (root / "pw").write_text(password + "\n")
    if as_postgres:
        shutil.chown(root, "postgres", "postgres")
        shutil.chown(root / "pw", "postgres", "postgres")
    os.chmod(root, 0o700)
    subprocess.run([*as_postgres, str(PG_BIN / "initdb"), "-D", str(root / "data"), "-U", "postgres", "--auth=scram-sha-256",
                    f"--pwfile={root / 'pw'}", "--no-sync", "-E", "UTF8", "--no-locale"], check=True, capture_output=True)
    (root / "pw").unlink()
    server = subprocess.Popen([*as_postgres, str(PG_BIN / "postgres"), "-D", str(root / "data"), "-p", str(port), "-k", str(root),
                               "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=100"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if subprocess.run([str(PG_BIN / "pg_isready"), "-h", "127.0.0.1", "-p", str(port)], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        yield {"url": f"jdbc:postgresql://127.0.0.1:{port}/postgres", "port": port, "password": password}
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
        shutil.rmtree(root, ignore_errors=True)


def perfkit_schemas(db):
    out = subprocess.run([str(PG_BIN / "psql"), "-h", "127.0.0.1", "-p", str(db["port"]), "-U", "postgres", "-d", "postgres", "-Atc",
                          "select schema_name from information_schema.schemata where schema_name like 'perfkit_%'"],
                         capture_output=True, text=True, env=dict(os.environ, PGPASSWORD=db["password"]), check=True)
    return out.stdout.split()


