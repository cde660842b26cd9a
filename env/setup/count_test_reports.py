"""Prints one closing line, 'total: N passed, N failed', over every JUnit XML report in a folder.

Both Maven Surefire and pytest (--junitxml) write this format, so one count covers the whole suite.
Exits 1 when there is no report at all: a suite that ran nothing has not passed.
"""
import pathlib
import sys
import xml.etree.ElementTree as ET

passed = failed = skipped = 0
reports = sorted(pathlib.Path(sys.argv[1]).rglob("*.xml"))
for report in reports:
    root = ET.parse(report).getroot()
    for suite in [root] if root.tag == "testsuite" else root.iter("testsuite"):
        tests, skips = int(suite.get("tests", 0)), int(suite.get("skipped", 0))
        bad = int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        passed += tests - skips - bad
        failed += bad
        skipped += skips
line = f"total: {passed} passed, {failed} failed"
print(line + (f", {skipped} skipped" if skipped else ""))
sys.exit(0 if reports and passed + failed > 0 else 1)
