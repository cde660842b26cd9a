"""Prints where the pytest suite's CPU went, per test file, from the `cpu_s` property scripts/tests/suite.py gives
every test in the JUnit XML (its own CPU and that of the processes it started and waited for), with each shared run
(shared_runs.py) on a line of its own rather than charged to the test that asked for it first.

On two cores the suite cannot take less wall time than half its CPU time: the lines at the top of this list are
where a faster suite has to come from. A placed test host's processes (nethosts.py), which no test waits for, are
counted from their sshd when the host is removed, on a line of their own. Not counted: what a kill test leaves
behind, if anything (the kill tests fail then).

Part of the gap between the wall time and half the CPU: the seconds a worker waited for the machine before a test
began (`waited_s`: for the other worker's test to end before an `alone` one, or for an `alone` one to end), summed,
with the tests that waited longest. The other worker ran meanwhile, so the wall time grows by about half of it; the
rest of the gap is idle time inside tests (a warm-up, a kill's wait, a shared run another worker is making) and the
tail where one worker has finished.
"""
import collections
import sys
import xml.etree.ElementTree as ET

by_file = collections.Counter()
shared = {}
hosts = collections.Counter()  # placed test hosts' processes, under their own sshds
waited = {}  # file::test -> seconds its worker waited for the machine before it began
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    for prop in case.iter("property"):
        name, value = prop.get("name"), prop.get("value")
        if name == "cpu_s":
            by_file[case.get("classname", "?").rsplit(".", 1)[-1]] += float(value)
        elif name.startswith("shared_run:"):
            cpu, wall = (float(v) for v in value.split(","))
            shared[name.split(":", 1)[1]] = (cpu, wall)
        elif name.startswith("placed_host:"):
            hosts[name.split(":", 1)[1]] += float(value)
        elif name == "waited_s":
            waited[case.get("classname", "?").rsplit(".", 1)[-1] + "::" + case.get("name", "?")] = float(value)
if by_file or shared:
    total = sum(by_file.values()) + sum(cpu for cpu, _ in shared.values()) + sum(hosts.values())
    lines = [(f"shared {study} run", cpu) for study, (cpu, _) in shared.items()] + list(by_file.items())
    if hosts:
        lines.append(("placed test hosts", sum(hosts.values())))
    top = ", ".join(f"{name} {seconds / 60:.1f}" for name, seconds in sorted(lines, key=lambda l: -l[1])[:10])
    print(f"pytest CPU: {total / 60:.1f} min in all (on 2 cores no less than {total / 120:.1f} min of wall time); in min: {top}")
    if hosts:
        print("placed test hosts (processes under their own sshds, no test's child): " + ", ".join(
            f"{name} {cpu / 60:.1f} min" for name, cpu in sorted(hosts.items())))
    if shared:
        print("shared runs (made once, read by many tests): " + ", ".join(
            f"{study} {cpu / 60:.1f} min CPU in {wall / 60:.1f} min" for study, (cpu, wall) in sorted(shared.items())))
if waited:
    longest = ", ".join(f"{name} {seconds:.0f} s" for name, seconds in sorted(waited.items(), key=lambda w: -w[1])[:3] if seconds >= 1)
    print(f"waiting for the machine (before or behind an `alone` test): {sum(waited.values()) / 60:.1f} min of worker time; "
          f"longest: {longest or 'none over a second'}")
