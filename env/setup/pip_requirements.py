"""Prints the pip packages listed under '- pip:' in environment.yml, one per line.

environment.yml is the single list of Python packages: conda reads it directly (for python and a JDK), and
./bench feeds this output to pip. A tiny reader keeps the bootstrap free of PyYAML.
"""
import sys

in_pip, pip_indent = False, 0
for raw in open(sys.argv[1], encoding="utf-8"):
    line = raw.split("#", 1)[0].rstrip()
    if not line.strip():
        continue
    indent = len(line) - len(line.lstrip())
    item = line.strip()
    if item in ("- pip:", "-  pip:"):
        in_pip, pip_indent = True, indent
        continue
    if in_pip:
        if indent <= pip_indent:
            in_pip = False
        elif item.startswith("- "):
            print(item[2:].strip().strip("'\""))
