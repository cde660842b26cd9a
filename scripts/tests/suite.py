"""What ./bench test adds to a pytest session: two tests at a time, and where the CPU went.

./bench test loads this module as a plugin (`-p suite`, scripts/tests on PYTHONPATH), so its hooks wrap every
test of both trees.

Each test's CPU seconds (its own process's and those of the processes it started and waited for: the runs, their
forks and servers) go into the JUnit XML as the test's property `cpu_s`; ./bench test sums them per file. The
seconds its worker waited for the machine before it began (below) go in as `waited_s`. On two
cores the suite cannot take less wall time than half its CPU time, so that is the list to read before a test
is made cheaper.

Two tests at a time, on two pytest-xdist workers (outside xdist none of this does anything):

- A test marked `alone` has the machine to itself: it measures something a second test on 2 cores would change (a
  driver's lateness at 20,000 req/s), or it counts things machine-wide that another test's run also makes (shared
  memory segments). It waits until the other worker's test ends, and the other worker waits for it. The hook wraps a
  test's whole protocol, so the module and session fixtures set up for it (a shared run) are inside the lock too.
- A shared run (shared_runs.py) is made once per session, not once per worker: the first worker to ask makes it,
  holding a file lock; the other waits on that lock and then reads what was recorded.

Cheapest first, and an early stop (docs/tests.md): the files run in TIERS order, the contracts and refusals before
one run of each study, and kills, placement and notebooks last. Once a contract test fails (a file of CONTRACTS), or
FAIL_LIMIT tests have failed, the session stops there: it still ends non-zero, with pytest's closing line and the
reason. On two xdist workers (the default of ./bench test) the order is the same, each worker stops on its own
contract failure or its own five, and the controller then stops the other; pytest-xdist's --maxfail 5 counts both.
"""
import contextlib
import fcntl
import os
import resource
import time

import pytest


def workers_share(tmp_path_factory):
    """The folder every worker of this xdist session shares, or None outside xdist. Each worker's base temp is
    <session base>/popen-gwN, so their parent is the session's: shared, and new each session."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    return tmp_path_factory.getbasetemp().parent


def pytest_configure(config):
    config.addinivalue_line("markers", "alone: no other test runs beside this one (see scripts/tests/suite.py)")


# the files in the order they run; a file not named here runs with the studies. Within a file the order is its own.
TIERS = [
    # contracts: the committed data against its declarations, the launcher's one-line refusals, the suite itself
    ["test_reference.py", "test_launcher.py", "test_suite.py"],
    # one run of each study, and what is asserted of it
    ["test_queues.py", "test_overhead.py", "test_messaging.py", "test_workflow.py", "test_web_reactive.py",
     "test_three_tier_templates.py", "test_three_tier_inserts.py", "test_three_tier_chain.py"],
    # kills and interrupts, other hosts, then the notebooks over everything
    ["test_interrupt.py", "test_kills.py", "test_placement.py"],
    ["test_notebooks.py", "test_compare.py"],
]
CONTRACTS = {"test_reference.py", "test_launcher.py"}
FAIL_LIMIT = 5


def tier_of(filename):
    for i, files in enumerate(TIERS):
        if filename in files:
            return i, files.index(filename)
    return 1, len(TIERS[1])


def pytest_collection_modifyitems(session, config, items):
    # a stable sort by file keeps each file's tests together, so its module fixtures are made once; every xdist
    # worker sorts alike, so they agree on the order, and --dist loadfile hands out whole files in it
    items.sort(key=lambda item: tier_of(item.path.name))


_failures = []
_session = {}


def pytest_sessionstart(session):
    _session["it"] = session


def pytest_runtest_logreport(report):
    # on xdist a worker that stops reports why when it finishes, and the controller then stops the other one; the
    # controller sees the reports too, where setting shouldfail changes nothing (xdist's --maxfail counts there)
    if not report.failed or "it" not in _session:
        return
    _failures.append(report.nodeid)
    session, filename = _session["it"], report.nodeid.split("::")[0].rsplit("/", 1)[-1]
    if filename in CONTRACTS:
        session.shouldfail = f"stopping early: a contract test failed ({report.nodeid}); every later test would test against a broken contract"
    elif len(_failures) >= FAIL_LIMIT:
        session.shouldfail = f"stopping early: {len(_failures)} tests failed ({', '.join(_failures)})"


@contextlib.contextmanager
def file_lock(path, mode=fcntl.LOCK_EX):
    with open(path, "a+") as f:
        fcntl.flock(f, mode)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def cpu_seconds():
    """User and system CPU of this process and of every child it has waited for, so far."""
    me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime


CPU_AT_START = pytest.StashKey[float]()
# seconds a test's worker waited for the machine before the test began: for the other worker's test to end before an
# `alone` one, or for an `alone` one to end; the suite's wall time beyond half its CPU time is largely this
WAITED_S = pytest.StashKey[float]()
# shared runs made during the current test, as (study, CPU seconds, wall seconds): charged to a line of their own,
# not to the test that happened to ask first
_shared_runs = []


def charge_shared_run(study, cpu_s, wall_s):
    _shared_runs.append((study, cpu_s, wall_s))


# CPU of a placed test host's processes (nethosts.py), which no test waits for: reported when the host is removed,
# on a line of its own, and never subtracted from a test's own
_placed_hosts = []


def charge_placed_host(name, cpu_s):
    _placed_hosts.append((name, cpu_s))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    item.stash[CPU_AT_START] = cpu_seconds()
    with machine_shared(item):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    if call.when == "teardown" and CPU_AT_START in item.stash:  # the JUnit XML takes a test's properties from its teardown report
        props = outcome.get_result().user_properties
        shared = sum(cpu for _, cpu, _ in _shared_runs)
        props.append(("cpu_s", round(cpu_seconds() - item.stash[CPU_AT_START] - shared, 1)))
        if WAITED_S in item.stash:  # one worker (--workers 1) has no machine to wait for
            props.append(("waited_s", round(item.stash[WAITED_S], 1)))
        props.extend((f"shared_run:{study}", f"{cpu:.1f},{wall:.1f}") for study, cpu, wall in _shared_runs)
        props.extend((f"placed_host:{name}", f"{cpu:.1f}") for name, cpu in _placed_hosts)
        _shared_runs.clear()
        _placed_hosts.clear()


@contextlib.contextmanager
def machine_shared(item):
    base = workers_share(item.config._tmp_path_factory)  # what the tmp_path_factory fixture hands out
    if base is None:
        yield
        return
    gate, machine = base / "machine.gate", base / "machine.lock"
    asked = time.monotonic()
    if item.get_closest_marker("alone"):
        # the gate, held while waiting, stops the other worker from starting its next test meanwhile
        with file_lock(gate), file_lock(machine):
            item.stash[WAITED_S] = time.monotonic() - asked
            yield
    else:
        with file_lock(gate, fcntl.LOCK_SH):
            pass  # wait while an `alone` test waits or runs
        with file_lock(machine, fcntl.LOCK_SH):
            item.stash[WAITED_S] = time.monotonic() - asked
            yield
