"""The suite's own machinery on two xdist workers (scripts/tests/suite.py, as ./bench test runs it): a test marked
`alone` overlaps no other test, a shared run is made once per session, not once per worker, and each test's CPU,
its children's included, reaches the JUnit XML, with shared runs on lines of their own, and so does the time its
worker waited for the machine; and on one worker the
cheapest files run first and a broken contract, or five failures, stop the session."""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

from conftest import ROOT

ALONE = """
import json, os, time, pytest

def record(name, tmp):
    start = time.time()
    time.sleep(0.6)
    with open(os.path.join(os.environ["SPANS"], f"{name}-{os.getpid()}.json"), "w") as f:
        json.dump([name, start, time.time()], f)

@pytest.mark.alone
def test_alone_one(): record("alone-1", None)

@pytest.mark.alone
def test_alone_two(): record("alone-2", None)
"""

OTHERS = """
import json, os, time

def record(name):
    start = time.time()
    time.sleep(0.4)
    with open(os.path.join(os.environ["SPANS"], f"{name}-{os.getpid()}.json"), "w") as f:
        json.dump([name, start, time.time()], f)

""" + "".join(f"def test_other_{i}(): record('other-{i}')\n" for i in range(5)) + """
def test_busy():  # a second of CPU in a child process
    import subprocess, sys
    subprocess.run([sys.executable, "-c", "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 1: pass"], check=True)
"""

SHARED = """
import os, shared_runs

def fake_run(out, study, args, timeout):
    import subprocess, sys  # a second of CPU in a child, as a real run's JVMs would spend
    subprocess.run([sys.executable, "-c", "import time\\nt = time.process_time()\\nwhile time.process_time() - t < 1: pass"], check=True)
    with open(os.path.join(os.environ["SPANS"], "made"), "a") as f:
        f.write(study + "\\n")
    return shared_runs.SharedRun(out, {(1, "java x"): "java x"}, "stderr of " + study)

shared_runs.watched_run = fake_run

def test_reads_it(tmp_path_factory):
    run = shared_runs.shared_quick_run(tmp_path_factory, "queues")
    assert run.dir.is_dir() and run.cmdlines == {(1, "java x"): "java x"} and run.stderr == "stderr of queues"
"""


def test_alone_tests_overlap_no_other_and_a_shared_run_is_made_once_per_session(tmp_path):
    tests, spans = tmp_path / "tests", tmp_path / "spans"
    tests.mkdir()
    spans.mkdir()
    (tests / "test_alone.py").write_text(ALONE)
    (tests / "test_others.py").write_text(OTHERS)
    for name in ("test_shared_a.py", "test_shared_b.py"):  # two files: one on each worker
        (tests / name).write_text(SHARED)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}  # not this suite's own worker
    env.update(SPANS=str(spans), PYTHONPATH=str(ROOT / "scripts/tests"))
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "suite", "-n", "2", "--dist", "loadfile", "-p", "no:cacheprovider",
                        "-q", "--basetemp", str(tmp_path / "base"), "--junitxml", str(tmp_path / "junit.xml"), str(tests)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert "10 passed" in r.stdout, r.stdout[-2000:]
    recorded = [json.loads(p.read_text()) for p in spans.glob("*.json")]
    assert len({p.name.rsplit("-", 1)[1] for p in spans.glob("*.json")}) == 2, "two workers ran the tests"
    for name, start, end in recorded:
        if name.startswith("alone"):
            beside = [(n, s, e) for n, s, e in recorded if n != name and s < end and e > start]
            assert not beside, f"{name} overlapped {beside}"
    assert (spans / "made").read_text() == "queues\n", "made once for both workers"
    cpu = {f'{case.get("classname")}.{case.get("name")}': float(prop.get("value"))
           for case in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase") for prop in case.iter("property") if prop.get("name") == "cpu_s"}
    assert len(cpu) == 10 and all(v >= 0 for v in cpu.values()), cpu
    waited = [float(prop.get("value")) for case in ET.parse(tmp_path / "junit.xml").getroot().iter("testcase")
              for prop in case.iter("property") if prop.get("name") == "waited_s"]
    assert len(waited) == 10 and all(w >= 0 for w in waited), waited
    assert sum(waited) > 0.1, f"an alone test and the other worker's tests, started together, waited for each other: {waited}"
    assert cpu["tests.test_others.test_busy"] >= 0.9 and cpu["tests.test_others.test_other_0"] < 0.5, cpu
    summary = subprocess.run([sys.executable, str(ROOT / "env/setup/test_cpu.py"), str(tmp_path / "junit.xml")],
                             capture_output=True, text=True, check=True).stdout
    assert summary.startswith("pytest CPU: ") and "test_others " in summary, summary
    # the shared run's second is on a line of its own, not charged to the test that made it
    assert "shared queues run" in summary and "shared runs (made once, read by many tests): queues" in summary, summary
    assert all(v < 0.9 for k, v in cpu.items() if "test_shared" in k), cpu


def test_cheapest_files_run_first_and_a_broken_contract_stops_the_suite(tmp_path):
    tests = tmp_path / "tests"
    tests.mkdir()
    # written in the order a plain pytest would run them: alphabetical
    (tests / "test_kills.py").write_text("def test_kill(): open('ran', 'a').write('kills\\n')\n")
    (tests / "test_queues.py").write_text("def test_run(): open('ran', 'a').write('queues\\n')\n")
    (tests / "test_reference.py").write_text("def test_ok(): open('ran', 'a').write('reference\\n')\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTHONPATH=str(ROOT / "scripts/tests"))
    pytest_cmd = [sys.executable, "-m", "pytest", "-p", "suite", "-p", "no:cacheprovider", "-q", str(tests)]
    r = subprocess.run(pytest_cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and (tmp_path / "ran").read_text().split() == ["reference", "queues", "kills"], r.stdout
    (tmp_path / "ran").unlink()
    (tests / "test_reference.py").write_text("def test_broken(): assert False, 'a declaration broke'\n")
    r = subprocess.run(pytest_cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and not (tmp_path / "ran").exists(), "nothing runs after a broken contract"
    assert "stopping early: a contract test failed (" in r.stdout and "1 failed" in r.stdout.splitlines()[-1], r.stdout[-2000:]
    # several failures anywhere stop it too
    (tests / "test_reference.py").write_text("")
    (tests / "test_queues.py").write_text("".join(f"def test_{i}(): assert False\n" for i in range(8)))
    r = subprocess.run(pytest_cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "stopping early: 5 tests failed" in r.stdout and "5 failed" in r.stdout.splitlines()[-1], r.stdout[-2000:]
    assert not (tmp_path / "ran").exists(), "the kills never ran"
    # on two xdist workers, as ./bench test runs it: the worker that saw it stops, and the controller stops the session
    (tests / "test_reference.py").write_text("def test_broken(): assert False, 'a declaration broke'\n")
    (tests / "test_queues.py").write_text("def test_run(): pass\n")
    r = subprocess.run([*pytest_cmd[:3], "-n", "2", "--dist", "loadfile", *pytest_cmd[3:]], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode != 0 and "stopping early: a contract test failed (" in r.stdout, r.stdout[-2000:]


def test_placed_hosts_cpu_has_a_line_of_its_own(tmp_path):
    """A placed test host's processes (nethosts.py) are no test's children: their CPU comes as a property of its own,
    counted in the total and never inside a file's line."""
    (tmp_path / "junit.xml").write_text("""<testsuites><testsuite name="pytest" tests="2">
<testcase classname="scripts.tests.test_placement" name="a"><properties><property name="cpu_s" value="30"/>
<property name="placed_host:pk-db" value="60.0"/><property name="placed_host:pk-app" value="30.0"/></properties></testcase>
<testcase classname="scripts.tests.test_queues" name="b"><properties><property name="cpu_s" value="60"/></properties></testcase>
</testsuite></testsuites>""")
    out = subprocess.run([sys.executable, str(ROOT / "env/setup/test_cpu.py"), str(tmp_path / "junit.xml")],
                         capture_output=True, text=True, check=True).stdout
    assert out.startswith("pytest CPU: 3.0 min in all") and "placed test hosts 1.5" in out and "test_placement 0.5" in out, out
    assert "placed test hosts (processes under their own sshds, no test's child): pk-app 0.5 min, pk-db 1.0 min" in out, out


def test_the_time_workers_waited_for_the_machine_is_summed_with_the_longest_waits(tmp_path):
    """Beside the CPU, the seconds each test's worker waited for the machine (`waited_s`): summed, the longest named."""
    (tmp_path / "junit.xml").write_text("""<testsuites><testsuite name="pytest" tests="3">
<testcase classname="scripts.tests.test_web_reactive" name="alone_one"><properties><property name="cpu_s" value="60"/>
<property name="waited_s" value="90.0"/></properties></testcase>
<testcase classname="scripts.tests.test_queues" name="b"><properties><property name="cpu_s" value="6"/><property name="waited_s" value="30.0"/></properties></testcase>
<testcase classname="scripts.tests.test_queues" name="c"><properties><property name="cpu_s" value="6"/><property name="waited_s" value="0.2"/></properties></testcase>
</testsuite></testsuites>""")
    out = subprocess.run([sys.executable, str(ROOT / "env/setup/test_cpu.py"), str(tmp_path / "junit.xml")],
                         capture_output=True, text=True, check=True).stdout
    assert ("waiting for the machine (before or behind an `alone` test): 2.0 min of worker time; "
            "longest: test_web_reactive::alone_one 90 s, test_queues::b 30 s\n") in out, out
