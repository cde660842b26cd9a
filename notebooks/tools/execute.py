"""Executes notebooks headlessly with the Kotlin kernel and writes the executed copies.

Usage: python execute.py OUT_DIR NOTEBOOK...

Every notebook runs with the notebooks folder as its working directory, so `%use @file[kit/perfkit.json]`
resolves. Run selection reaches the notebooks through the environment (PERFKIT_RUNS). On the first
failing cell it prints the notebook, the cell number and the kernel's error, and exits 1.
"""
import pathlib
import sys
import time

import nbclient
import nbformat
from nbclient.exceptions import CellExecutionError

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1]


def execute(path: pathlib.Path, out_dir: pathlib.Path) -> bool:
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        nb, kernel_name="kotlin", timeout=600, startup_timeout=300,
        resources={"metadata": {"path": str(NOTEBOOKS)}})
    started = time.time()
    try:
        client.execute()
    except CellExecutionError as e:
        failing = next((i for i, c in enumerate(nb.cells)
                        if any(o.get("output_type") == "error" for o in c.get("outputs", []))), None)
        where = f"cell {failing + 1}" if failing is not None else "a cell"
        error = next((o for o in nb.cells[failing].outputs if o.get("output_type") == "error"), {}) if failing is not None else {}
        message = (error.get("evalue") or str(e)).strip().splitlines()[0] if (error.get("evalue") or str(e)).strip() else "error"
        print(f"notebook {path.name} failed in {where}: {error.get('ename', 'error')}: {message}", file=sys.stderr)
        print(str(e)[-4000:], file=sys.stderr)
        nbformat.write(nb, out_dir / path.name)  # keep the partial copy for inspection
        return False
    nbformat.write(nb, out_dir / path.name)
    print(f"[notebooks] {path.name}: {len(nb.cells)} cells in {time.time() - started:.0f} s -> {out_dir / path.name}", file=sys.stderr)
    return True


def main() -> int:
    out_dir = pathlib.Path(sys.argv[1])
    out_dir.mkdir(parents=True, exist_ok=True)
    ok = True
    for name in sys.argv[2:]:
        ok = execute(pathlib.Path(name).resolve(), out_dir) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
