"""The three-tier study's inserts round: PostgreSQL and an embedded Cassandra, each at a strict and a relaxed
durability setting. Every acknowledged insert is a row in the database, the latency logs decode, the settings in
force are in the manifest, no password reaches a command line or a run file, and nothing outlives a run, even an
interrupted one."""
import glob
import json
import os
import pathlib
import re
import socket
import struct
import subprocess
import threading
import time

import pytest

from conftest import (assert_refused, port_open, ROOT, assert_failed_run_with_one_line, bench, decode_hlog, descendants, interrupt_run, leftovers, manifest, perfkit_schemas,
                      read_csv, validate)
from shared_runs import shared_quick_run

# an option is given once (a repeat is refused), so tests that pick their own warm-up or durability start from BASE
BASE = ["--quick", "--rounds", "inserts", "--measure", "2", "--server-warmup-max", "2"]  # behaviour, not a settled JIT: warm-up by rule cut at 2 s
QUICK = [*BASE, "--warmup", "1", "--durability", "strict,relaxed"]
CELLS = ["inserts/postgres/strict", "inserts/postgres/relaxed", "inserts/cassandra/strict", "inserts/cassandra/relaxed"]


def cmdlines(run_pid):
    out = []
    for pid in [run_pid, *descendants(run_pid)]:
        try:
            out.append(pathlib.Path(f"/proc/{pid}/cmdline").read_bytes())
        except OSError:
            pass
    return out


def ports_of(m):
    """The loopback ports the run's databases listened on, as its settings notes name them."""
    return [int(p) for s in m["notes"]["inserts"]["settings"].values() for p in re.findall(r"127\.0\.0\.1:(\d+)", s["source"])]


def assert_nothing_left(run_dir, ports=()):
    m = manifest(run_dir)
    for port in ports:
        assert not port_open(port), f"port {port} of the run's database is closed"
    for owner in glob.glob("/tmp/perfkit-pg-*/owner"):
        try:
            text = pathlib.Path(owner).read_text()
        except OSError:
            continue  # another run's folder, going away
        assert text.split()[:1] != [str(m["pid"])], f"the run's PostgreSQL folder is removed: {owner}"
    assert leftovers(run_dir) == [], "no fork, Cassandra node or watchdog of the run is alive"
    assert not (run_dir / "scratch").exists(), "the scratch folder (Cassandra's data) is removed"


def cql_login(port, user, password):
    """Logs in over CQL native protocol v4 with PLAIN credentials; True on AUTH_SUCCESS, False on an error."""
    def frame(opcode, body):
        return struct.pack(">BBhBi", 4, 0, 0, opcode, len(body)) + body

    def read(s):
        head = b""
        while len(head) < 9:
            head += s.recv(9 - len(head))
        _, _, _, opcode, length = struct.unpack(">BBhBi", head)
        body = b""
        while len(body) < length:
            body += s.recv(length - len(body))
        return opcode, body

    def string(v):
        return struct.pack(">H", len(v)) + v.encode()

    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(frame(0x01, struct.pack(">H", 1) + string("CQL_VERSION") + string("3.0.0")))
        opcode, body = read(s)
        assert opcode == 0x03 and b"PasswordAuthenticator" in body, "the node asks for a password"
        token = b"\0" + user.encode() + b"\0" + password.encode()
        s.sendall(frame(0x0F, struct.pack(">i", len(token)) + token))
        opcode, _ = read(s)
        return opcode == 0x10


# ---- one quick run of every cell ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """The session's quick three-tier run (every round; this module reads its inserts cells)."""
    return shared_quick_run(tmp_path_factory, "three-tier").dir


def test_manifest_validates_with_the_four_cells(quick_run):
    m = manifest(quick_run)
    validate(m)
    assert m["status"] == "complete" and not [r for r in m["invalidReasons"] if r.startswith("inserts/")], m["invalidReasons"]
    assert [v for v in m["variants"] if v.startswith("inserts/")] == CELLS


def test_every_acknowledged_insert_is_a_row_in_both_databases(quick_run):
    rows = read_csv(quick_run / "inserts.csv")
    assert [r["cell"] for r in rows] == CELLS
    for r in rows:
        assert r["valid"] == "true", r["reason"]
        assert int(r["acknowledged"]) > 0 and r["rows_counted"] == r["acknowledged"], r
        assert r["failed_inserts"] == "0"
        assert int(r["inserts"]) <= int(r["acknowledged"]), "the window is part of all acknowledged inserts"
        assert float(r["tps"]) == pytest.approx(int(r["inserts"]) / float(r["window_s"]), rel=1e-6)
        assert 0 < float(r["latency_p50_ms"]) <= float(r["latency_p99_ms"]) <= float(r["latency_max_ms"])
        assert float(r["cpu_db_pct"]) > 0 and float(r["cpu_writers_pct"]) > 0, r


def test_latency_logs_decode_and_hold_the_window(quick_run):
    m = manifest(quick_run)
    rows = {r["cell"]: r for r in read_csv(quick_run / "inserts.csv")}
    logs = [f for f in m["files"] if f["kind"] == "hlog" and f["cell"].startswith("inserts/")]
    assert {f["cell"] for f in logs} == set(CELLS) and len(logs) == 2 * len(CELLS), "corrected and uncorrected per cell"
    for f in logs:
        merged, intervals = decode_hlog(quick_run / f["path"])
        assert intervals >= 1
        assert merged.get_total_count() == int(rows[f["cell"]]["inserts"]), "the log holds exactly the inserts of the window"
        assert f["window"]["endMs"] > f["window"]["startMs"]


def test_durability_settings_are_in_the_manifest(quick_run):
    notes = manifest(quick_run)["notes"]["inserts"]
    s = notes["settings"]
    assert s["inserts/postgres/strict"]["synchronous_commit"] == "on" and s["inserts/postgres/strict"]["fsync"] == "on"
    assert s["inserts/postgres/relaxed"]["synchronous_commit"] == "off"
    for cell in CELLS[:2]:
        assert {"fsync", "synchronous_commit", "wal_sync_method", "full_page_writes", "commit_delay", "shared_buffers"} <= set(s[cell])
    assert s["inserts/cassandra/strict"]["commitlog_sync"] == "batch"
    assert s["inserts/cassandra/relaxed"]["commitlog_sync"] == "periodic"
    assert s["inserts/cassandra/relaxed"]["commitlog_sync_period"] == "10000ms"
    assert "lost writes" in notes["durability"] and "1.28" in notes["original"]
    # both drivers' versions as their jars say, the Cassandra driver's read in its own class loader
    assert re.search(r"PostgreSQL JDBC \d+\.\d+\.\d+ .*Apache Cassandra Java driver \d+\.\d+\.\d+ ", notes["writers"]), notes["writers"]
    by_cell = {r["cell"]: r["settings"] for r in read_csv(quick_run / "inserts.csv")}
    assert "synchronous_commit=off" in by_cell["inserts/postgres/relaxed"] and "commitlog_sync=batch" in by_cell["inserts/cassandra/strict"]


def test_nothing_is_left_after_the_run(quick_run):
    ports = ports_of(manifest(quick_run))
    assert len(ports) == 4, "a private cluster and an embedded node per cell"
    assert_nothing_left(quick_run, ports)


def test_the_default_login_never_works_not_even_at_start_up(tmp_path):
    """A local user racing the node's start-up tries cassandra/cassandra on its native port from the first moment the
    port listens. The node only opens it once the run's password is set, so every attempt is refused."""
    proc = subprocess.Popen([str(ROOT / "bench"), "run", "three-tier", *BASE, "--warmup", "1", "--stores", "cassandra", "--durability", "relaxed",
                             "--out", str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    attempts = []
    try:
        while proc.poll() is None:
            for yaml in tmp_path.glob("three-tier/*/scratch/cassandra-*/cassandra.yaml"):
                try:
                    port = int(re.search(r"native_transport_port: (\d+)", yaml.read_text()).group(1))
                except (OSError, AttributeError):
                    continue
                if port_open(port):
                    try:
                        attempts.append(cql_login(port, "cassandra", "cassandra"))
                    except (OSError, AssertionError):
                        pass  # the node is going away
            time.sleep(0.02)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err[-2000:]
    assert attempts, "the test reached the native port while the node ran"
    assert not any(attempts), f"{sum(attempts)} of {len(attempts)} default logins succeeded"


# ---- interrupts ---------------------------------------------------------------------------------------------------

def test_ctrl_c_during_cassandra_writes_stops_the_node_and_removes_its_data(tmp_path):
    seen = {}

    def writing():
        for ts in tmp_path.glob("three-tier/*/timeseries.csv"):
            if ",warmup,proc:inserts/cassandra/" in ts.read_text() or ",measure,proc:inserts/cassandra/" in ts.read_text():
                run_dir = ts.parent
                (yaml,) = run_dir.glob("scratch/cassandra-*/cassandra.yaml")
                port = int(re.search(r"native_transport_port: (\d+)", yaml.read_text()).group(1))
                assert port_open(port)
                assert not cql_login(port, "cassandra", "cassandra"), "the default superuser password is replaced"
                lines = cmdlines(json.loads((run_dir / "run.json").read_text())["pid"])
                assert len(lines) >= 3, "the run, its Cassandra node and its writers"
                assert not [c for c in lines if b"password" in c.lower()], "no password option on any command line"
                seen["port"] = port
                return run_dir, None
        return None

    code, err, run_dir, _ = interrupt_run(["three-tier", *BASE, "--stores", "cassandra", "--durability", "strict",
                                           "--warmup", "20", "--out", str(tmp_path)], writing, timeout=300)
    assert code == 130, err
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "interrupted"
    time.sleep(1)
    assert_nothing_left(run_dir, [seen["port"]])


def test_ctrl_c_during_postgres_writes_stops_the_cluster(tmp_path):
    def writing():
        for ts in tmp_path.glob("three-tier/*/timeseries.csv"):
            if ",warmup,proc:inserts/postgres/" in ts.read_text():
                return ts.parent, None
        return None

    code, err, run_dir, _ = interrupt_run(["three-tier", *BASE, "--stores", "postgres", "--durability", "strict",
                                           "--warmup", "20", "--out", str(tmp_path)], writing, timeout=180)
    assert code == 130, err
    assert manifest(run_dir)["status"] == "interrupted"
    time.sleep(1)
    assert_nothing_left(run_dir)


# ---- a user's database -------------------------------------------------------------------------------------------

def test_users_postgres_sets_durability_per_session_and_keeps_its_password_secret(tmp_path, users_database):
    db = users_database
    env = dict(os.environ, PERFKIT_JDBC_PASSWORD=db["password"])
    proc = subprocess.Popen([str(ROOT / "bench"), "run", "three-tier", *QUICK, "--stores", "postgres", "--jdbc-url", db["url"],
                             "--out", str(tmp_path)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    checked = 0
    try:
        while proc.poll() is None:  # every process of the run, while it runs
            for ts in tmp_path.glob("three-tier/*/run.json"):
                for line in cmdlines(json.loads(ts.read_text())["pid"]):
                    checked += 1
                    assert db["password"].encode() not in line, "password on a command line"
            time.sleep(0.3)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert checked > 0
    run_dir = pathlib.Path(out.strip().splitlines()[-1])
    m = manifest(run_dir)
    validate(m)
    s = m["notes"]["inserts"]["settings"]
    assert s["inserts/postgres/strict"]["synchronous_commit"] == "on" and s["inserts/postgres/relaxed"]["synchronous_commit"] == "off"
    assert "synchronous_commit set per session" in s["inserts/postgres/relaxed"]["source"]
    for r in read_csv(run_dir / "inserts.csv"):
        assert r["valid"] == "true" and r["rows_counted"] == r["acknowledged"], r
    assert perfkit_schemas(db) == [], "the round's schemas are dropped"
    for f in run_dir.rglob("*"):
        if f.is_file():
            assert db["password"].encode() not in f.read_bytes(), f"password in {f}"
    assert db["password"] not in out + err


# ---- bad input ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("args,needle", [
    # credentials in the URL: the error, the output and the run's files name the database without them
    (["--stores", "postgres", "--jdbc-url", "jdbc:postgresql://bench:hunter2@127.0.0.1:1/nowhere"], "cannot connect to jdbc:postgresql://127.0.0.1:1/nowhere"),
    (["--stores", "cassandra", "--cassandra-contact-points", "127.0.0.1:1"], "cannot connect to Cassandra at 127.0.0.1:1"),
], ids=["postgres", "cassandra"])
def test_unreachable_database_fails_the_run_in_one_line(tmp_path, args, needle):
    r = bench("run", "three-tier", *QUICK, *args, "--out", str(tmp_path), timeout=300)
    m = assert_failed_run_with_one_line(r, tmp_path, "three-tier", needle)
    run_dir = pathlib.Path(glob.glob(str(tmp_path / "three-tier" / "*"))[0])
    assert_nothing_left(run_dir)
    assert m["status"] == "failed"
    assert "hunter2" not in r.stderr + r.stdout
    assert not [f for f in run_dir.rglob("*") if f.is_file() and b"hunter2" in f.read_bytes()]


BAD_OPTIONS = [
    (["--cassandra-contact-points", "localhost"], "--cassandra-contact-points"),
    (["--cassandra-user", "bob"], "need --cassandra-contact-points"),
    (["--cassandra-truststore", "/etc/hostname"], "are for a cluster of yours (--cassandra-contact-points)"),
    (["--cassandra-contact-points", "127.0.0.1:1", "--cassandra-keystore", "/etc/hostname"], "--cassandra-keystore needs --cassandra-truststore"),
    (["--cassandra-contact-points", "127.0.0.1:1", "--cassandra-truststore", "/nonexistent/trust.p12"], "--cassandra-truststore cannot be read"),
    (["--stores", "cassandra", "--place", "db=nowhere"], "this run has neither"),
    (["--place", "db=nowhere", "--jdbc-url", "jdbc:postgresql://127.0.0.1:1/x"], "--place db and --jdbc-url exclude each other"),
    (["--stores", "mysql"], "--stores"),
]


@pytest.mark.parametrize("args,needle", BAD_OPTIONS, ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_bad_options_are_refused_in_one_line(tmp_path_factory, args, needle):
    assert_refused("three-tier", [*QUICK, *args], needle, tmp_path_factory, [[*QUICK, *a] for a, _ in BAD_OPTIONS])


def test_bad_options_are_one_line_and_exit_2(tmp_path):
    args, needle = BAD_OPTIONS[-1]
    r = bench("run", "three-tier", *QUICK, *args, "--out", str(tmp_path), timeout=120)
    assert r.returncode == 2, r.stderr
    errors = [l for l in r.stderr.splitlines() if l.startswith("error:")]
    assert len(errors) == 1 and needle in errors[0], r.stderr


# ---- a user's Cassandra cluster that asks for TLS -----------------------------------------------------------------


def keytool(*args):
    subprocess.run(["keytool", *args], check=True, capture_output=True, timeout=120)


def certificate_authority(folder, name, secret):
    """A self-signed node certificate for 127.0.0.1 in a JKS keystore, and a PKCS12 truststore holding it."""
    folder.mkdir()
    # an IP address only: a client that checked a reverse-DNS name (localhost) instead of the contact point would fail
    keytool("-genkeypair", "-alias", "node", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", f"CN={name}", "-ext",
            "SAN=ip:127.0.0.1", "-validity", "2", "-keystore", str(folder / "node.jks"), "-storetype", "JKS",
            "-storepass", secret, "-keypass", secret)
    keytool("-exportcert", "-alias", "node", "-keystore", str(folder / "node.jks"), "-storepass", secret, "-file", str(folder / "node.crt"))
    keytool("-importcert", "-noprompt", "-alias", "node", "-file", str(folder / "node.crt"), "-keystore", str(folder / "trust.p12"),
            "-storetype", "PKCS12", "-storepass", secret)
    return folder


def embedded_cassandra_jvm_options():
    """The JVM options the kit starts its node with, read from EmbeddedCassandra.java so that there is one list."""
    source = (ROOT / "scripts/three-tier/inserts/EmbeddedCassandra.java").read_text()
    options = []
    for name in ("JDK17_OPTIONS", "GC_OPTIONS"):
        body = re.search(name + r" = List\.of\((.*?)\);", source, re.S).group(1)
        options += re.findall(r'"([^"]+)"', body)
    return [re.search(r'HEAP = "([^"]+)"', source).group(1), *options]


@pytest.fixture
def tls_cassandra(tmp_path):
    """A Cassandra cluster of the user's that takes TLS connections only: the kit's node started by hand with
    client_encryption_options on, a certificate for 127.0.0.1, and a superuser password the test knows. Yields
    (contact point, superuser password, the CA folder, the stores' password)."""
    secret = "store-" + os.urandom(6).hex()
    ca = certificate_authority(tmp_path / "ca", "perfkit-test-node", secret)
    cp = subprocess.run([str(ROOT / "env/setup/jbang"), "info", "classpath", str(ROOT / "scripts/three-tier/cassandra/CassandraNode.java")],
                        capture_output=True, text=True, timeout=600)
    assert cp.returncode == 0, cp.stderr
    node = tmp_path / "node"
    (node / "tmp").mkdir(parents=True)
    # the node's own contract (CassandraNode): a template whose address and ports it fills in, and a logback file
    (node / "logback.xml").write_text('<configuration><root level="WARN"/></configuration>\n')
    (node / "cassandra-template.yaml").write_text(f"""cluster_name: perfkit-tls-test
num_tokens: 1
partitioner: org.apache.cassandra.dht.Murmur3Partitioner
endpoint_snitch: SimpleSnitch
seed_provider:
  - class_name: org.apache.cassandra.locator.SimpleSeedProvider
    parameters:
      - seeds: "%ADDRESS%:%STORAGE_PORT%"
listen_address: %ADDRESS%
rpc_address: %ADDRESS%
storage_port: %STORAGE_PORT%
native_transport_port: %NATIVE_PORT%
start_native_transport: false
authenticator: PasswordAuthenticator
authorizer: AllowAllAuthorizer
role_manager: CassandraRoleManager
credentials_validity: 0ms
commitlog_sync: periodic
commitlog_sync_period: 10000ms
client_encryption_options:
  enabled: true
  optional: false
  keystore: {ca}/node.jks
  keystore_password: {secret}
  require_client_auth: false
""")
    password = "pw-" + os.urandom(12).hex()
    proc = subprocess.Popen(["java", *embedded_cassandra_jvm_options(), "-Dcassandra-foreground=true", f"-Djava.io.tmpdir={node}/tmp",
                             "-Dcassandra.skip_wait_for_gossip_to_settle=0", "-Dcassandra.superuser_setup_delay_ms=0",
                             "-cp", cp.stdout.strip(), "perfkit.threetier.cassandra.CassandraNode", str(node)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        proc.stdin.write(password + "\n")
        proc.stdin.flush()
        seen, started, point = [], threading.Event(), []

        def read():  # all along, so that a full pipe never stalls the node; a silent node still meets the deadline below
            for line in proc.stdout:
                seen.append(line)
                if line.startswith("PERFKIT_CASSANDRA_STARTED "):
                    point.append(line.split()[1])  # where it listens: the address and the native port it picked
                    started.set()
        threading.Thread(target=read, daemon=True).start()
        assert started.wait(240), "the TLS node did not start within 240 s: " + "".join(seen[-20:])
        assert point[0].startswith("127.0.0.1:")
        yield point[0], password, ca, secret
    finally:
        proc.stdin.close()  # EOF stops the node, as a run's end does
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(10)


def test_a_tls_cluster_is_measured_with_its_truststore_and_no_secret_is_written(tmp_path, tls_cassandra, monkeypatch):
    point, password, ca, secret = tls_cassandra
    monkeypatch.setenv("PERFKIT_CASSANDRA_PASSWORD", password)
    run = ["run", "three-tier", *QUICK, "--stores", "cassandra", "--cassandra-contact-points", point, "--cassandra-user", "cassandra"]
    # a store that does not open with its password is the user's error, before any run folder
    r = bench(*run, "--cassandra-truststore", str(ca / "trust.p12"), "--out", str(tmp_path / "nopw"), timeout=120,
              env={"PERFKIT_CASSANDRA_TRUSTSTORE_PASSWORD": "wrong"})
    errors = [l for l in r.stderr.splitlines() if l.startswith("error:")]
    assert r.returncode == 2 and len(errors) == 1 and "--cassandra-truststore cannot be read" in errors[0], r.stderr
    assert not (tmp_path / "nopw").exists() or not any((tmp_path / "nopw").rglob("run.json"))
    # a truststore of another authority: the node's certificate is not trusted, and the run says so in one line
    other = certificate_authority(tmp_path / "other", "someone-else", secret)
    r = bench(*run, "--cassandra-truststore", str(other / "trust.p12"), "--out", str(tmp_path / "untrusted"), timeout=300,
              env={"PERFKIT_CASSANDRA_TRUSTSTORE_PASSWORD": secret})
    m = assert_failed_run_with_one_line(r, tmp_path / "untrusted", "three-tier", "cannot connect to Cassandra at " + point)
    assert "the TLS handshake failed" in m["error"], m["error"]
    # the right authority, but the node reached by a name its certificate does not hold (it names 127.0.0.1 only)
    r = bench(*[a if a != point else point.replace("127.0.0.1", "localhost") for a in run], "--cassandra-truststore", str(ca / "trust.p12"),
              "--out", str(tmp_path / "misnamed"), timeout=300, env={"PERFKIT_CASSANDRA_TRUSTSTORE_PASSWORD": secret})
    m = assert_failed_run_with_one_line(r, tmp_path / "misnamed", "three-tier", "cannot connect to Cassandra at localhost:")
    assert "the TLS handshake failed" in m["error"], m["error"]
    # the right truststore: TLS, a complete run that says so, every insert counted, no secret in any file
    r = bench(*run, "--cassandra-truststore", str(ca / "trust.p12"), "--out", str(tmp_path / "ok"), timeout=600,
              env={"PERFKIT_CASSANDRA_TRUSTSTORE_PASSWORD": secret})
    assert r.returncode == 0, r.stderr[-3000:]
    (run_dir,) = list((tmp_path / "ok" / "three-tier").iterdir())
    m = manifest(run_dir)
    validate(m)
    assert m["status"] == "complete", m.get("error")
    assert "TLS with each node's certificate checked" in m["notes"]["inserts"]["cassandra"]
    rows = [r for r in read_csv(run_dir / "inserts.csv")]
    assert rows and all(int(r["acknowledged"]) > 0 and r["rows_counted"] == r["acknowledged"] for r in rows), rows
    for f in run_dir.rglob("*"):
        assert not f.is_file() or (password.encode() not in f.read_bytes() and secret.encode() not in f.read_bytes()), f
