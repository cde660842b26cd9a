"""Prints where the pytest suite's CPU went, per test file, from the `cpu_s` property scripts/tests/suite.py gives
every test in the JUnit XML (its own CPU and that of the processes it started and waited for).

On two cores the suite cannot take less wall time than half its CPU time: the files at the top of this list are
where a faster suite has to come from.
"""
import collections
import sys
import xml.etree.ElementTree as ET

by_file = collections.Counter()
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    for prop in case.iter("property"):
        if prop.get("name") == "cpu_s":
            by_file[case.get("classname", "?").rsplit(".", 1)[-1]] += float(prop.get("value"))
if by_file:
    total = sum(by_file.values())
    top = ", ".join(f"{name} {seconds / 60:.1f}" for name, seconds in by_file.most_common(8))
    print(f"pytest CPU: {total / 60:.1f} min in all (on 2 cores no less than {total / 120:.1f} min of wall time); by file, in min: {top}")
