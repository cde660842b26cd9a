"""Installs the kit's Kotlin kernel spec, named `kotlin` like the package's, into KERNELS_DIR/kotlin.

Usage: python install.py KERNELS_DIR LOGBACK_XML [CLASS_ARCHIVE]

The kotlin-jupyter-kernel package's jar_args.json has "debuggerPort": "generate", so every kernel opens an
unauthenticated JDWP port (127.0.0.1:1044) through which any local user can run code as the notebook user,
and prints "Listening for transport dt_socket". Ours is the same spec with the debugger port removed, started
through launch.py, which binds the kernel's sockets to the connection file's loopback address instead of every
interface. The launcher puts KERNELS_DIR's parent first on JUPYTER_PATH so Lab and headless runs both pick it.
With CLASS_ARCHIVE, and once that file exists (./bench makes it when the kernel first resolves the kit: execute.py
--resolve-kit --class-archive), kernels map the classes they load at start-up from it (a dynamic CDS archive of the
Kotlin compiler and the kernel) instead of parsing and verifying them again. A JVM that cannot use it (another JDK,
another classpath) says so in its log and starts without it.
Idempotent: files are rewritten only when their content changes.
"""
import importlib.util
import json
import pathlib
import shlex
import sys

import run_kotlin_kernel.run_kernel as run_kernel


def write_if_changed(path: pathlib.Path, text: str) -> None:
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def lets_plot_js() -> dict:
    """Lets-Plot's JavaScript, as the PyPI `lets-plot` package (environment.yml) ships it, when it is installed."""
    spec = importlib.util.find_spec("lets_plot")
    if spec is None or not spec.submodule_search_locations:
        return {}
    js = pathlib.Path(list(spec.submodule_search_locations)[0]) / "package_data" / "lets-plot.min.js"
    return {"PERFKIT_LETS_PLOT_JS": str(js)} if js.is_file() else {}


def main() -> int:
    kernels, logback = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]).resolve()
    archive = pathlib.Path(sys.argv[3]).resolve() if len(sys.argv) > 3 else None
    package = pathlib.Path(run_kernel.module_install_path())
    jar_args = json.loads((package / "config" / "jar_args.json").read_text())
    jar_args["debuggerPort"] = None  # no JDWP agent, no -debugPort
    target = kernels / "kotlin"
    target.mkdir(parents=True, exist_ok=True)
    write_if_changed(target / "jar_args.json", json.dumps(jar_args, indent=2) + "\n")
    spec = {
        "display_name": "Kotlin (perfkit)",
        "language": "kotlin",
        "interrupt_mode": "message",
        # launch.py: the package's launcher with the sockets on the connection file's address (see launch.py)
        "argv": ["python", str(pathlib.Path(__file__).resolve().parent / "launch.py"), "{connection_file}", str(target / "jar_args.json")],
        # - the kernel logs DEBUG to stderr from its bundled logback config; ours says WARN;
        # - C1 only: a notebook's kernel lives for a minute, and C2 compiling the Kotlin compiler cost about
        #   half of its CPU (kernel CPU for a small notebook: 25.8 s with C2, 12.0 s without; measured on a
        #   loaded 2-vCPU machine, so read the ratio, not the numbers). Long computations in Lab run slower.
        # - PERFKIT_LETS_PLOT_JS: the lab's interactive figures (the kit's Lab.kt), from the `lets-plot` wheel
        # - the class archive: a kernel's start-up CPU is mostly loading the compiler's classes (see the docstring)
        # (the launcher splits these options as a shell does: quoted, a path may hold spaces)
        "env": {"KOTLIN_JUPYTER_KERNEL_EXTRA_JVM_OPTS": shlex.join([f"-Dlogback.configurationFile={logback}", "-XX:TieredStopAtLevel=1"]
                + ([f"-XX:SharedArchiveFile={archive}"] if archive and archive.is_file() else [])),
                **lets_plot_js()},
        "metadata": {"perfkit": "no debugger port, sockets on loopback; see env/kernel/install.py"},
    }
    write_if_changed(target / "kernel.json", json.dumps(spec, indent=2) + "\n")
    for logo in package.parent.joinpath("..", "..", "..", "share", "jupyter", "kernels", "kotlin").glob("logo-*.png"):
        if not (target / logo.name).exists():
            (target / logo.name).write_bytes(logo.read_bytes())
    return 0


if __name__ == "__main__":
    sys.exit(main())
