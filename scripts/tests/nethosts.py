"""Test hosts without leaving the machine: network namespaces, each behind a veth pair with a private address, a
hostname of its own and a private sshd, reached through an ssh config the test hands the run (PERFKIT_SSH_CONFIG).

They share this machine's files, users and binaries (PostgreSQL, python3), as hosts set up alike would; what differs
is the network: a part on one of them is reached over its veth link, never over loopback, and what runs there shows
in `ip netns pids`. Everything is created under names carrying the creating process's pid and removed by `remove()`,
even after a failed test; what a killed test process left (namespaces, their sshds, their links and routes, which
would take the new hosts' addresses) is removed before new hosts are made. Needs root and iproute2; `skip_reason()`
says in one line why not.
"""
import os
import pathlib
import re
import shutil
import subprocess
import time

SSHD = "/usr/sbin/sshd"


def skip_reason():
    if os.geteuid() != 0:
        return "test hosts are network namespaces, which need root"
    for tool in ("ip", "unshare", "ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"test hosts need {tool}"
    if not os.path.exists(SSHD):
        return "test hosts need Debian's openssh-server"
    probe = f"pk-probe-{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        return "this machine cannot create network namespaces (ip netns add failed)"
    subprocess.run(["ip", "netns", "delete", probe], capture_output=True)
    return None


class Hosts:
    """Hosts named `names` (also their ssh aliases), numbered into 10.213.<subnet+i>.0/30: .1 here, .2 there. With
    `routed`, they also reach each other through this machine (each has a default route here, and this machine
    forwards between their links, and only those, while they exist), as hosts on one network would."""

    def __init__(self, tmp, names, subnet, routed=False):
        self.tmp, self.names, self.subnet, self.routed = tmp, list(names), subnet, routed
        self.tag = str(os.getpid())  # at most 7 digits: the link's name "pkv<pid><subnet>" stays within 15 characters
        self.ssh_config = tmp / "ssh_config"
        self.address, self.interface = {}, {}

    def ns(self, name):
        return f"pk-{name}-{self.tag}"

    def create(self):
        remove_left_behind()
        for i in range(len(self.names)):
            subnet = f"10.213.{self.subnet + i}.0/30"
            deadline = time.time() + 10  # a deleted namespace's links, and their routes, go a moment later
            while (taken := subprocess.run(["ip", "-4", "route", "show", "root", subnet], capture_output=True, text=True).stdout.strip()) \
                    and time.time() < deadline:
                time.sleep(0.1)
            if taken:
                raise AssertionError(f"the test hosts' subnet {subnet} is already routed here: {taken}")
        os.chmod(self.tmp, 0o700)
        for key in ("host_key", "user_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", key, "-f", str(self.tmp / key)], check=True)
        (self.tmp / "authorized_keys").write_text((self.tmp / "user_key.pub").read_text())
        os.chmod(self.tmp / "authorized_keys", 0o600)
        os.makedirs("/run/sshd", exist_ok=True)
        self.name_service()
        config = []
        for i, name in enumerate(self.names):
            ns, here, there = self.ns(name), f"10.213.{self.subnet + i}.1", f"10.213.{self.subnet + i}.2"
            veth = f"pkv{self.tag}{self.subnet + i}"
            for cmd in (["ip", "netns", "add", ns],
                        ["ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns],
                        ["ip", "addr", "add", f"{here}/30", "dev", veth], ["ip", "link", "set", veth, "up"],
                        ["ip", "-n", ns, "addr", "add", f"{there}/30", "dev", "eth0"],
                        ["ip", "-n", ns, "link", "set", "eth0", "up"], ["ip", "-n", ns, "link", "set", "lo", "up"],
                        *([["ip", "-n", ns, "route", "add", "default", "via", here]] if self.routed else [])):
                subprocess.run(cmd, check=True, capture_output=True)
            if self.routed:
                # forwarding on these links only: the setting goes with them, whatever ends the test
                with open(f"/proc/sys/net/ipv4/conf/{veth}/forwarding", "w") as f:
                    f.write("1")
            (self.tmp / f"sshd_{name}").write_text(f"""Port 22
ListenAddress {there}
HostKey {self.tmp}/host_key
AuthorizedKeysFile {self.tmp}/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
StrictModes no
UsePAM no
PidFile {self.tmp}/sshd_{name}.pid
""")
            # its own UTS namespace: the host's fingerprint says which host it is
            subprocess.run(["ip", "netns", "exec", ns, "unshare", "--uts", "sh", "-c", f"hostname {name} && exec {SSHD} -f {self.tmp}/sshd_{name} -E {self.tmp}/sshd_{name}.log"],
                           check=True, capture_output=True)
            self.address[name], self.interface[name] = there, veth
            config.append(f"Host {name}\n  HostName {there}\n  User root\n")
        config.append(f"Host *\n  IdentityFile {self.tmp}/user_key\n  IdentitiesOnly yes\n  UserKnownHostsFile {self.tmp}/known_hosts\n"
                      "  StrictHostKeyChecking accept-new\n")
        self.ssh_config.write_text("\n".join(config))
        for name in self.names:
            self.wait_for_ssh(name)
        return self

    def name_service(self):
        """Each host's /etc/hosts names every test host, and its resolv.conf asks no server beyond its own loopback
        (`ip netns exec` mounts /etc/netns/<ns>/ over /etc for what starts in it). Hosts on one network resolve each
        other; without this a routed host's lookups go to this machine's name server, which it does not forward to,
        and each waits 10 s for nothing (the Kafka broker's own SASL login to its controller timed out so)."""
        hosts = "127.0.0.1 localhost\n" + "".join(f"10.213.{self.subnet + i}.2 {n}\n" for i, n in enumerate(self.names))
        for name in self.names:
            etc = pathlib.Path("/etc/netns") / self.ns(name)
            etc.mkdir(parents=True, exist_ok=True)
            (etc / "hosts").write_text(hosts)
            (etc / "resolv.conf").write_text("nameserver 127.0.0.1\noptions timeout:1 attempts:1\n")

    def wait_for_ssh(self, name):
        deadline = time.time() + 20
        while True:
            r = subprocess.run(["ssh", "-F", str(self.ssh_config), "-o", "BatchMode=yes", "-o", "ConnectTimeout=2", name, "true"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                return
            if time.time() > deadline:
                break
            time.sleep(0.2)
        route = subprocess.run(["ip", "route", "get", self.address[name]], capture_output=True, text=True).stdout.strip()
        raise AssertionError(f"the test host {name} did not answer over SSH: ssh said {r.stderr.strip()[-300:]!r}; "
                             f"the route there is {route!r}; its sshd logged {(self.tmp / f'sshd_{name}.log').read_text()[-400:]!r}")

    def env(self):
        return {"PERFKIT_SSH_CONFIG": str(self.ssh_config)}

    def processes(self, name):
        """Command lines of what runs in the host's namespace, its sshd listener aside."""
        pids = subprocess.run(["ip", "netns", "pids", self.ns(name)], capture_output=True, text=True).stdout.split()
        out = []
        for pid in pids:
            try:
                cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode(errors="replace").strip()
            except OSError:
                continue
            if not cmd.startswith(f"sshd: {SSHD} -f {self.tmp}") and cmd != f"{SSHD} -f {self.tmp}/sshd_{name} -E {self.tmp}/sshd_{name}.log":
                out.append(f"{pid} {cmd}")
        return out

    def cpu_seconds(self, name):
        """CPU the host's processes used: its sshd listener's own and that of every session it reaped (their children's
        included, as each reaped its own), plus what still runs there. No test waits for these, so no test's CPU has them."""
        tick = os.sysconf("SC_CLK_TCK")

        def ticks(pid, reaped):
            try:
                fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                return 0
            return sum(int(f) for f in fields[11:15 if reaped else 13])  # utime stime (cutime cstime)

        try:
            listener = int((self.tmp / f"sshd_{name}.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return 0.0
        live = subprocess.run(["ip", "netns", "pids", self.ns(name)], capture_output=True, text=True).stdout.split()
        return (ticks(listener, True) + sum(ticks(int(p), False) for p in live if int(p) != listener)) / tick

    def remove(self):
        try:
            from suite import charge_placed_host  # ./bench test loads it as a plugin, with scripts/tests on the path
        except ImportError:
            charge_placed_host = None
        for name in self.names:
            if charge_placed_host:
                charge_placed_host(name, self.cpu_seconds(name))
            remove_namespace(self.ns(name))


def remove_namespace(ns):
    for pid in subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True).stdout.split():
        try:
            os.kill(int(pid), 9)
        except OSError:
            pass
    subprocess.run(["ip", "netns", "delete", ns], capture_output=True)  # the veth pair goes with it, soon after
    shutil.rmtree(pathlib.Path("/etc/netns") / ns, ignore_errors=True)


def remove_left_behind():
    """Test hosts whose creating process is gone (a killed test run): their sshds were daemons and lived on, and their
    links kept their routes, so a new host on the same subnet would be routed to the dead one."""
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout.splitlines()
    for m in (re.match(r"pk-(?:pk-[\w-]+|probe)-(\d+)(?=\s|$)", line) for line in listed):
        if m and not alive(int(m[1])):
            remove_namespace(m[0])


def alive(pid):
    """Whether `pid` is a live Python process (a test run), not a dead one's number taken by something else."""
    try:
        return b"python" in open(f"/proc/{pid}/cmdline", "rb").read()
    except OSError:
        return False
