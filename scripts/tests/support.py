"""What both test trees (scripts/tests and notebooks/tests) ask of this machine: ports and processes, read from
/proc and sockets. One definition each, so a fix to how a leftover is found reaches every test that looks for one."""
import ipaddress
import os
import pathlib
import socket


def port_open(port, host="127.0.0.1"):
    """True when something accepts TCP connections on port (an int, a digit string, or "host:port")."""
    if isinstance(port, str) and ":" in port:
        host, port = port.rsplit(":", 1)
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((host, int(port))) == 0


def free_port():
    """A loopback port no one listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def processes():
    """pid -> (ppid, command line) of every live process."""
    out = {}
    for d in pathlib.Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
                out[int(d.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace"))
            except OSError:
                pass
    return out


def descendants(pid):
    """pid -> command line of every live process under pid, from /proc's parent links."""
    procs, found, todo = processes(), {}, [pid]
    children = {}
    for p, (pp, cmd) in procs.items():
        children.setdefault(pp, []).append(p)
    while todo:
        for p in children.get(todo.pop(), []):
            if p not in found:
                found[p] = procs[p][1]
                todo.append(p)
    return found


def listening_sockets(*pids):
    """(address, port) of every TCP socket these processes listen on; addresses as ipaddress objects."""
    inodes = set()
    for pid in pids:
        try:
            fds = list(pathlib.Path(f"/proc/{pid}/fd").iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = pathlib.Path(table).read_text().splitlines()[1:]
        except OSError:  # a kernel without IPv6 has no tcp6 table
            continue
        for line in lines:
            f = line.split()
            if f[3] == "0A" and f[9] in inodes:  # 0A: LISTEN
                addr, port = f[1].rsplit(":", 1)
                # the kernel prints each 32-bit word of the address in host (little-endian) order
                raw = b"".join(bytes.fromhex(addr[i:i + 8])[::-1] for i in range(0, len(addr), 8))
                address = ipaddress.ip_address(raw)
                found.add((getattr(address, "ipv4_mapped", None) or address, int(port, 16)))
    return found


def listening_ports(*pids):
    """TCP ports these processes listen on."""
    return {port for _, port in listening_sockets(*pids)}
