"""The quick runs both test trees read, one per study for the whole session.

A study's quick run is most of what its end-to-end tests cost, and the studies' tests (scripts/tests) and the
notebooks' tests (notebooks/tests) used to make one each, with slightly different options. Here each study has one
set of options that serves both; the first test that asks makes the run, and every later one reads the same run
(or sees the same failure). A test that needs other options, or that must watch a run as it goes, still makes its own.
"""
import collections
import json
import pathlib
import subprocess
import threading
import time

import pytest

from suite import charge_shared_run, cpu_seconds, file_lock, workers_share
from support import descendants

ROOT = pathlib.Path(__file__).resolve().parents[2]

# the options of each study's shared quick run: enough cells for every test that reads it, and no more. Messaging's is
# made with --profile, which its tests check; the other studies check it in small runs of their own (recording every
# JVM of three-tier's four chains doubled that run, and a recording that starts with a drain shifts the first commits
# a workflow test reads)
QUICK = {
    # every variant and quick strategy with tiny windows; the notebooks' test of a new run copies it into data/runs
    "queues": ["--quick", "--warmup", "0.5", "--measure", "1", "--tag", "e2e"],
    # the warm-up rule's limit cut to 3 s (quick mode's is 8): a test checks that it is recorded, not that it settled
    "messaging": ["--quick", "--warmup", "1", "--warmup-max", "3", "--measure", "2", "--drain-timeout", "10", "--profile"],
    # --min-drain 2 grows the no-op and timer backlogs above --jobs at the calibrated rate, and leaves the fixed jobs' (20 jobs/s a thread)
    "workflow": ["--quick", "--jobs", "300", "--calibration-jobs", "300", "--acquire-sizes", "32", "--instances", "1", "--locks", "off", "--min-drain", "2"],
    # all three rounds; open steps at half the saturation throughput, so the chain's compare step runs
    # the servers' warm-up by rule is cut at 3 s: a quick run's never settles anyway (its JIT window alone is 10 s)
    "three-tier": ["--quick", "--warmup", "1", "--measure", "2", "--server-warmup-max", "3", "--open-rates", "0.5", "--durability", "strict,relaxed",
                   "--chains", "sync,async,mixed,webflux"],
}

# dir: the run's folder; cmdlines: (pid, command line) -> command line of every process seen in its tree while it ran
SharedRun = collections.namedtuple("SharedRun", "dir cmdlines stderr")
_made = {}


# seconds each run may take: about four times what it took on a clean clone of a 2-core machine on 2026-11-28 (the
# suite prints each shared run's time: queues 0.6 min, messaging 0.9, workflow 0.6, three-tier 3.5), so a hung run
# fails within minutes rather than taking most of CI's 90; three-tier runs three rounds (four chains, two
# durabilities, open steps) in one. With --profile (2026-11-29) messaging measures a pair of steps more: 2.2 min
# beside another shared run on the other worker
TIMEOUT = {"queues": 180, "messaging": 420, "workflow": 180, "three-tier": 900}


def shared_quick_run(tmp_path_factory, study):
    """The session's quick run of study (made on first use) as a SharedRun. The first test to ask sees the failure
    if it fails; every later one fails at once, naming it, instead of making the run again. On two xdist workers
    the run is still made once: the first worker to ask makes it under a file lock, and the other reads its record."""
    if study not in _made:
        base = workers_share(tmp_path_factory)
        if base is None:
            _made[study] = _make(tmp_path_factory, study)
        else:
            record = base / f"shared-run-{study}.json"
            with file_lock(base / f"shared-run-{study}.lock"):
                if not record.exists():
                    _make(tmp_path_factory, study, record)
            _made[study] = _read(record)
    found = _made[study]
    if isinstance(found, str):
        pytest.fail(f"the shared quick {study} run failed in an earlier test: {found}", pytrace=False)
    return found


def _make(tmp_path_factory, study, record=None):
    """Makes the run and returns it; a failure is raised, and kept as text for the tests after. With record, the
    run or the failure is also written there as JSON, for the other worker."""
    try:
        cpu, wall = cpu_seconds(), time.monotonic()
        try:
            made = watched_run(tmp_path_factory.mktemp(study), study, QUICK[study], TIMEOUT[study])
        finally:
            charge_shared_run(study, cpu_seconds() - cpu, time.monotonic() - wall)
        if record:
            record.write_text(json.dumps({"dir": str(made.dir), "cmdlines": [[pid, c] for (pid, c) in made.cmdlines],
                                          "stderr": made.stderr}))
        return made
    except BaseException as e:  # pytest's failures are BaseExceptions
        failure = f"{type(e).__name__}: {str(e)[:3000]}"
        if record:
            record.write_text(json.dumps({"failed": failure}))
        _made[study] = failure
        raise


def _read(record):
    r = json.loads(record.read_text())
    if "failed" in r:
        return r["failed"]
    return SharedRun(pathlib.Path(r["dir"]), {(pid, c): c for pid, c in r["cmdlines"]}, r["stderr"])


def cmdlines_of_tree(pid):
    """pid -> command line of pid and every process under it."""
    out = {}
    for p in [pid, *descendants(pid)]:
        try:
            out[p] = pathlib.Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            pass
    return out


def watched_run(out, study, args, timeout):
    """./bench run study args --out out, its process tree's command lines sampled twice a second while it runs."""
    proc = subprocess.Popen([str(ROOT / "bench"), "run", study, *args, "--out", str(out)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    seen = {}

    def sample():
        while proc.poll() is None:
            for pid, c in cmdlines_of_tree(proc.pid).items():
                if c:  # an exiting process has an empty command line
                    seen[(pid, c)] = c
            time.sleep(0.5)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    sampler.join()
    assert proc.returncode == 0, f"the shared {study} run failed ({proc.returncode}):\n{stderr[-3000:]}"
    run_dir = pathlib.Path(stdout.strip().splitlines()[-1])
    assert run_dir.is_dir(), run_dir
    return SharedRun(run_dir, seen, stderr)
