"""Executes notebooks headlessly with the Kotlin kernel and writes the executed copies.

Usage: python execute.py [--log-dir DIR] [--timings] [--jobs N] OUT_DIR NOTEBOOK...
       python execute.py --resolve-kit [--class-archive FILE] [--log-dir DIR]

Every notebook runs with the notebooks folder as its working directory, so `%use @file[kit/perfkit.json]`
resolves. Run selection reaches the notebooks through the environment (PERFKIT_RUNS). An executed copy is
written to a temp file and renamed only on success, so a failed run never replaces the last good copy.
On a failing cell it prints one line (notebook, cell number, the kernel's error) and the path of a log
with the full kernel output, and exits 1. It prints the time per notebook and the total; --timings adds
the kernel start and the slowest cells. Two notebooks run at once (--jobs), each in a kernel of its own.
"""
import argparse
import concurrent.futures
import datetime
import os
import pathlib
import shlex
import sys
import tempfile
import time

import nbclient
import nbformat
import traitlets.config
from nbclient.exceptions import CellExecutionError, DeadKernelError

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[1]
# JVM options the Kotlin kernel's launcher adds to the kernel's own (kotlin_kernel.env_names)
EXTRA_JAVA_OPTS = "KOTLIN_JUPYTER_JAVA_OPTS_EXTRA"
ANSI = __import__("re").compile(r"\x1b\[[0-9;]*m")


def cell_seconds(cell) -> float:
    t = cell.get("metadata", {}).get("execution", {})
    try:
        start = datetime.datetime.fromisoformat(t["iopub.execute_input"].replace("Z", "+00:00"))
        end = datetime.datetime.fromisoformat(t["shell.execute_reply"].replace("Z", "+00:00"))
        return (end - start).total_seconds()
    except (KeyError, ValueError):
        return 0.0


def tree_cpu_seconds(root: int) -> float:
    """CPU time (user + system) of a process and its descendants: the kernel's work, whatever the machine's load."""
    children, cpu = {}, {}
    for d in pathlib.Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                f = (d / "stat").read_text().rsplit(")", 1)[1].split()
                children.setdefault(int(f[1]), []).append(int(d.name))
                cpu[int(d.name)] = (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
            except (OSError, IndexError, ValueError):
                pass
    total, todo = 0.0, [root]
    while todo:
        pid = todo.pop()
        total += cpu.get(pid, 0.0)
        todo += children.get(pid, [])
    return total


class CpuMeter:
    """Kernel CPU seconds per cell (nbclient's on_cell_executed hook), for --timings."""

    def __init__(self, client):
        self.client, self.last, self.per_cell = client, 0.0, {}

    def pid(self):
        process = getattr(getattr(self.client.km, "provisioner", None), "process", None)
        return getattr(process, "pid", None)

    def __call__(self, cell, cell_index, **_):
        pid = self.pid()
        if pid:
            now = tree_cpu_seconds(pid)
            self.per_cell[cell_index + 1] = now - self.last
            self.last = now


def failure(nb, error: Exception):
    """(cell number, one line) for the first cell with an error output."""
    for i, cell in enumerate(nb.cells, start=1):
        for o in cell.get("outputs", []):
            if o.get("output_type") == "error":
                message = next((l for l in ANSI.sub("", o.get("evalue") or "").splitlines() if l.strip()), "")
                return i, f"{o.get('ename') or 'error'}: {message.strip()}"
    lines = [l for l in ANSI.sub("", str(error)).splitlines() if l.strip()]
    return None, (lines[-1].strip() if lines else type(error).__name__)


def write_atomically(nb, target: pathlib.Path) -> None:
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    try:
        nbformat.write(nb, tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def make_client(nb, shutdown_wait: float = None):
    """A client for nb in a kotlin kernel; shutdown_wait: seconds the kernel gets to exit once asked (Jupyter's 5 by default)."""
    config = traitlets.config.Config()
    if shutdown_wait:
        config.KernelManager.shutdown_wait_time = shutdown_wait
    client = nbclient.NotebookClient(
        nb, kernel_name="kotlin", timeout=600, startup_timeout=300,
        resources={"metadata": {"path": str(NOTEBOOKS)}}, config=config)
    client.perfkit_cells_started = False

    def cell_started(**_):
        client.perfkit_cells_started = True
    client.on_cell_start = cell_started
    return client


def run_in_kernel(client, log: pathlib.Path, earlier: str = "") -> None:
    # the kernel's own output (protocol errors, JVM warnings) goes to the log, not the terminal
    with open(log, "w") as kernel_output:
        if earlier:
            kernel_output.write(earlier + "\n---- the first kernel died while starting; the second one's output ----\n")
            kernel_output.flush()
        client.execute(stdout=kernel_output, stderr=kernel_output)


def tail(text: str, lines: int = 5) -> str:
    kept = [l.strip() for l in ANSI.sub("", text).splitlines() if l.strip()][-lines:]
    return " | ".join(kept) if kept else "(none)"


def execute(path: pathlib.Path, out_dir: pathlib.Path, log_dir: pathlib.Path, timings: bool):
    """Runs one notebook; returns its wall time in seconds, or None when it failed."""
    nb = nbformat.read(path, as_version=4)
    client = make_client(nb)
    meter = CpuMeter(client)
    if timings:
        client.on_cell_executed = meter
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / f"{path.stem}.log"
    started = time.time()
    try:
        try:
            run_in_kernel(client, log)
        except (DeadKernelError, RuntimeError) as e:
            if client.perfkit_cells_started:
                raise
            # a kernel that dies before its first reply ran none of the notebook (CI saw one of two kernels
            # started together do so, once): start one more, and keep the first one's output for the record
            first = log.read_text(errors="replace")
            print(f"[notebooks] {path.name}: the kernel died while starting ({ANSI.sub('', str(e)).strip()}); "
                  f"starting another. Its output: {tail(first)}", file=sys.stderr)
            nb = nbformat.read(path, as_version=4)
            client = make_client(nb)
            meter = CpuMeter(client)
            if timings:
                client.on_cell_executed = meter
            run_in_kernel(client, log, earlier=first)
    except (CellExecutionError, DeadKernelError, RuntimeError, TimeoutError) as e:
        cell, line = failure(nb, e)
        partial = log_dir / f"{path.stem}.failed.ipynb"
        with open(log, "a") as out:
            out.write("\n---- the failing cell ----\n" + ANSI.sub("", str(e)) + "\n")
        nbformat.write(nb, partial)
        where = f"cell {cell}" if cell else "the kernel"
        print(f"notebook {path.name} failed in {where}: {line}", file=sys.stderr)
        print(f"  full kernel output: {log} (partial notebook: {partial}); last good copy kept", file=sys.stderr)
        return None
    elapsed = time.time() - started
    write_atomically(nb, out_dir / path.name)
    print(f"[notebooks] {path.name}: {len(nb.cells)} cells in {elapsed:.1f} s -> {out_dir / path.name}", file=sys.stderr)
    if timings:
        cells = sorted(((cell_seconds(c), i) for i, c in enumerate(nb.cells, start=1) if c.cell_type == "code"), reverse=True)
        in_cells = sum(s for s, _ in cells)
        print(f"  kernel start and set-up outside cells: {elapsed - in_cells:.1f} s; in cells: {in_cells:.1f} s; slowest: "
              + ", ".join(f"cell {i} {s:.1f} s" for s, i in cells[:4]), file=sys.stderr)
        if meter.per_cell:
            cpu = sorted(((s, i) for i, s in meter.per_cell.items()), reverse=True)
            print(f"  kernel CPU: {meter.last:.1f} s in all (start-up included); by cell: "
                  + ", ".join(f"cell {i} {s:.1f} s" for s, i in cpu[:5]), file=sys.stderr)
    return elapsed


# What the archive's kernel runs after loading the kit: a table and a figure, as every notebook makes, so that the
# compiler's and the figures' classes are in the archive too. With it the queues notebook took 16% less CPU here
# (median of 5 pairs, whole process), with the kit's loading alone about 15% less on a quieter run.
TRAINING_CELL = """val sample = frameOf(listOf("variant", "events_per_s"), listOf(listOf("a", 1.0), listOf("a", 2.0), listOf("b", 3.0), listOf("b", 5.0)))
val summary = summarize(sample, listOf("variant"), "events_per_s")
figure("archive", "drawn once, for the classes it loads", throughputBars(summary, fill = "variant"))
summary.toMarkdown()"""


def resolve_kit(log_dir: pathlib.Path, archive: pathlib.Path = None) -> int:
    """Loads perfkit.json in one kernel, so DataFrame and Lets-Plot are in the kernel's cache before kernels start
    side by side (./bench does this once per perfkit.json and JDK). With archive, that kernel also writes the classes
    it loaded into a CDS archive as it exits (-XX:ArchiveClassesAtExit), which later kernels map instead of loading
    them again (env/kernel/install.py); a kernel that could not write it leaves none, and kernels start without."""
    cells = ["%use @file[kit/perfkit.json]"] + ([TRAINING_CELL] if archive else [])
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nb.metadata["kernelspec"] = {"name": "kotlin", "display_name": "Kotlin", "language": "kotlin"}
    log_dir.mkdir(parents=True, exist_ok=True)
    log = log_dir / "resolve-kit.log"
    client = make_client(nb, shutdown_wait=120.0 if archive else None)
    client.allow_errors = True  # the kit's cell must pass; the training cell only adds classes to the archive
    saved = os.environ.get(EXTRA_JAVA_OPTS)
    if archive:
        archive.unlink(missing_ok=True)
        # the launcher adds these options to the kernel's (run_kotlin_kernel); writing the archive takes the JVM
        # 10-20 s at exit, and Jupyter signals a kernel that has not stopped after half its wait: two minutes
        # (-Xlog: the JVM lists every class it leaves out, thousands of lines; only its errors reach the log)
        os.environ[EXTRA_JAVA_OPTS] = " ".join(filter(None, [saved, shlex.quote(f"-XX:ArchiveClassesAtExit={archive}"), "-Xlog:cds=error"]))
    try:
        run_in_kernel(client, log)
        cell, line = failure(nb, RuntimeError("no error output"))
        if cell == 1:
            raise RuntimeError(line)
        if cell:
            print(f"[notebooks] the class archive's training cell failed ({line}): the archive holds the kit's loading only", file=sys.stderr)
    except (CellExecutionError, DeadKernelError, RuntimeError, TimeoutError) as e:
        _, line = failure(nb, e)
        print(f"bench: the kernel could not load the kit's libraries: {line} (kernel output: {log})", file=sys.stderr)
        return 1
    finally:
        if saved is None:
            os.environ.pop(EXTRA_JAVA_OPTS, None)
        else:
            os.environ[EXTRA_JAVA_OPTS] = saved
    if archive and not archive.is_file():
        print(f"[notebooks] the kernel left no class archive ({archive.name}; see {log}): kernels start without one", file=sys.stderr)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(prog="execute.py")
    parser.add_argument("--log-dir", type=pathlib.Path, default=NOTEBOOKS.parent / "build" / "logs")
    parser.add_argument("--timings", action="store_true")
    parser.add_argument("--jobs", type=int, default=None, help="notebooks executed at once (default: 2, or 1 on one core)")
    parser.add_argument("--resolve-kit", action="store_true",
                        help="only load the kit in a kernel once, so that the kernel resolves its libraries into its cache")
    parser.add_argument("--class-archive", type=pathlib.Path, default=None,
                        help="with --resolve-kit: the CDS archive that kernel writes as it exits, for later kernels")
    parser.add_argument("out_dir", type=pathlib.Path, nargs="?")
    parser.add_argument("notebooks", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    if args.resolve_kit:
        return resolve_kit(args.log_dir, args.class_archive)
    if args.out_dir is None or not args.notebooks:
        parser.error("give an output folder and at least one notebook")
    out_dir = args.out_dir
    if args.jobs is not None and args.jobs < 1:
        print("bench: notebooks: --jobs must be at least 1", file=sys.stderr)
        return 2
    if out_dir.exists() and not out_dir.is_dir():
        print(f"bench: notebooks: --out {out_dir} is a file, not a folder", file=sys.stderr)
        return 2
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        print(f"bench: notebooks: cannot create --out {out_dir}: {e.strerror or e}", file=sys.stderr)
        return 2
    # the kernels inherit it: a notebook parameter then takes PERFKIT_RUNS and the like from the environment (the kit's param)
    os.environ["PERFKIT_HEADLESS"] = "1"
    started = time.time()
    # kernels spend most of their time starting up, single-threaded: two at a time use both cores of a small host
    jobs = args.jobs if args.jobs is not None else min(2, os.cpu_count() or 1)
    work = [(name.resolve(), out_dir, args.log_dir, args.timings) for name in args.notebooks]
    if jobs == 1 or len(work) == 1:
        ok = all([execute(*w) is not None for w in work])
    else:
        with concurrent.futures.ProcessPoolExecutor(max_workers=jobs) as pool:
            ok = all([elapsed is not None for elapsed in pool.map(execute, *zip(*work))])
    print(f"[notebooks] total: {len(args.notebooks)} notebook(s) in {time.time() - started:.1f} s"
          " (a benchmark, not a check: timings on a shared machine vary)", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
