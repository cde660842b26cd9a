"""Two tests at a time: what the suite needs when ./bench test runs it on two pytest-xdist workers.

./bench test loads this module as a plugin (`-p parallel`, scripts/tests on PYTHONPATH), so its hooks wrap every
test of both trees. Outside xdist (a plain `pytest`, one test at a time) none of this does anything.

- A test marked `alone` has the machine to itself: it measures something a second test on 2 cores would change (a
  driver's lateness at 20,000 req/s), or it counts things machine-wide that another test's run also makes (shared
  memory segments). It waits until the other worker's test ends, and the other worker waits for it. The hook wraps a
  test's whole protocol, so the module and session fixtures set up for it (a shared run) are inside the lock too.
- A shared run (shared_runs.py) is made once per session, not once per worker: the first worker to ask makes it,
  holding a file lock; the other waits on that lock and then reads what was recorded.
"""
import contextlib
import fcntl
import os

import pytest


def workers_share(tmp_path_factory):
    """The folder every worker of this xdist session shares, or None outside xdist. Each worker's base temp is
    <session base>/popen-gwN, so their parent is the session's: shared, and new each session."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    return tmp_path_factory.getbasetemp().parent


def pytest_configure(config):
    config.addinivalue_line("markers", "alone: no other test runs beside this one (see scripts/tests/parallel.py)")


@contextlib.contextmanager
def file_lock(path, mode=fcntl.LOCK_EX):
    with open(path, "a+") as f:
        fcntl.flock(f, mode)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    base = workers_share(item.config._tmp_path_factory)  # what the tmp_path_factory fixture hands out
    if base is None:
        yield
        return
    gate, machine = base / "machine.gate", base / "machine.lock"
    if item.get_closest_marker("alone"):
        # the gate, held while waiting, stops the other worker from starting its next test meanwhile
        with file_lock(gate), file_lock(machine):
            yield
    else:
        with file_lock(gate, fcntl.LOCK_SH):
            pass  # wait while an `alone` test waits or runs
        with file_lock(machine, fcntl.LOCK_SH):
            yield


