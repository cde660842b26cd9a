"""Starts the Kotlin kernel bound to the address Jupyter chose, never to every interface.

Usage (from kernel.json): python launch.py CONNECTION_FILE JAR_ARGS_FILE

Jupyter writes the kernel's address as `ip` (127.0.0.1 unless the server is told otherwise), but the Kotlin
kernel (0.19) reads `host` and binds its five ZeroMQ sockets to `*` when it is missing: every interface, signed
but open. This adds `host`, equal to `ip`, to the connection file in place (Jupyter deletes the file when the
kernel goes), then runs the package's own launcher.
"""
import json
import os
import sys

from run_kotlin_kernel.run_kernel import run_kernel


def bind_where_jupyter_said(connection_file: str) -> None:
    with open(connection_file) as f:
        info = json.load(f)
    host = info.get("ip") or "127.0.0.1"
    if info.get("host") == host:
        return
    info["host"] = host
    tmp = f"{connection_file}.perfkit-tmp"
    # the file holds the kernel's signing key: owner-only, like the one Jupyter wrote
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(info, f, indent=1)
    os.replace(tmp, connection_file)


def main() -> None:
    connection_file, jar_args = sys.argv[1], sys.argv[2]
    bind_where_jupyter_said(connection_file)
    run_kernel(connection_file, jar_args)


if __name__ == "__main__":
    main()
