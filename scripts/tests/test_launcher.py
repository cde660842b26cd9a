"""The launcher's contract: clear one-line errors with exit code 2, help, and the study list."""
import json
import re
import os
import shutil
import subprocess
import sys
import time

import pytest

from conftest import assert_refused, ROOT, bench


def assert_one_line_error(result, *needles):
    assert result.returncode == 2, (result.returncode, result.stderr)
    lines = [l for l in result.stderr.splitlines() if l.strip() and not l.startswith("[jbang]")]
    assert len(lines) == 1, result.stderr
    assert "Exception" not in result.stderr and "\tat " not in result.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def test_help_lists_commands():
    r = bench("--help")
    assert r.returncode == 0
    for cmd in ("demo", "run", "list", "test", "setup"):
        assert cmd in r.stdout


def test_unknown_command():
    assert_one_line_error(bench("frobnicate"), "unknown command 'frobnicate'")


def test_unknown_study():
    assert_one_line_error(bench("run", "nosuch"), "unknown study 'nosuch'", "queues")


def test_unknown_option():
    assert_one_line_error(bench("run", "queues", "--bogus", "1"), "unknown option --bogus")


def test_malformed_option_values():
    assert_one_line_error(bench("run", "queues", "--forks", "zero"), "--forks", "'zero'")
    assert_one_line_error(bench("run", "queues", "--variants", "abq-1,abq-9"), "--variants", "abq-9")
    assert_one_line_error(bench("run", "queues", "--measure"), "--measure needs a value")


def test_bad_options_create_no_run(tmp_path):
    bench("run", "queues", "--forks", "0", "--out", str(tmp_path))
    assert not any(tmp_path.rglob("run.json"))


def test_study_help_shows_options_and_defaults():
    r = bench("run", "queues", "--help")
    assert r.returncode == 0, r.stderr
    for opt in ("--variants", "--forks", "--warmup", "--measure", "--rate", "--quick", "--out", "default: 3; with --quick: 1"):
        assert opt in r.stdout
    r = bench("run", "overhead", "--help")
    assert r.returncode == 0 and "--iterations" in r.stdout


def test_list_shows_studies_and_runs():
    r = bench("list")
    assert r.returncode == 0, r.stderr
    assert "== queues" in r.stdout and "== overhead" in r.stdout
    assert "reference/queues/" in r.stdout


def running_run(out, run_id):
    """A run under out/queues/ still going (its pid is this test's, alive, on this host), at cell 5 of 12; returns
    (its folder, when its progress says it ends)."""
    import datetime
    import socket
    run = out / "queues" / run_id
    run.mkdir(parents=True)
    ends = datetime.datetime.now().astimezone() + datetime.timedelta(minutes=42)
    (run / "run.json").write_text(json.dumps({
        "study": "queues", "runId": run.name, "status": "running", "startedAt": "2026-01-01T00:00:00Z", "endedAt": None,
        "pid": os.getpid(), "host": {"hostname": socket.gethostname()}, "quick": False, "tag": "", "params": {"forks": "3"},
        "progress": {"unit": "cell", "done": 4, "total": 12, "updatedAt": "2026-01-01T00:10:00Z",
                     "endsAt": ends.astimezone(datetime.timezone.utc).isoformat().replace("+00:00", "Z")},
        "files": [{"path": "throughput.csv", "kind": "table"}]}))
    return run, ends


def test_show_says_where_a_run_still_going_is_and_when_it_should_end(tmp_path):
    run, ends = running_run(tmp_path, "20260101T000000Z-h-aaaaaa")
    r = bench("show", str(run))
    assert r.returncode == 0, r.stderr
    assert "queues run 20260101T000000Z-h-aaaaaa: running" in r.stdout
    assert f"now: cell 5 of 12, should end about {ends:%H:%M}" in r.stdout and "files: 1 table" in r.stdout
    assert_one_line_error(bench("show", "20990101T000000Z-nosuch-000000"), "show: no run 20990101T000000Z-nosuch-000000 under data/")


def tool_dir(tmp_path, *tools):
    """A PATH with only the named tools, to play a machine without a JDK."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for t in tools:
        # python3 on PATH may be a version-manager shim; the interpreter running the tests is real
        os.symlink(sys.executable if t == "python3" else shutil.which(t), bin_dir / t)
    return str(bin_dir)


def test_missing_jdk(tmp_path):
    path = tool_dir(tmp_path, "bash", "dirname", "python3", "awk", "cut", "tr", "cksum", "cat")
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = path
    r = subprocess.run([str(ROOT / "bench"), "run", "queues", "--quick"], capture_output=True, text=True, env=env, timeout=60)
    assert_one_line_error(r, "no JDK found")


def test_too_old_jdk(tmp_path):
    fake_home = tmp_path / "jdk11"
    (fake_home / "bin").mkdir(parents=True)
    java = fake_home / "bin" / "java"
    java.write_text('#!/bin/sh\necho \'openjdk version "11.0.2" 2019-01-15\' >&2\n')
    java.chmod(0o755)
    r = bench("run", "queues", env={"JAVA_HOME": str(fake_home)})
    assert_one_line_error(r, "JDK 17 or newer is required", "11.0.2")


def test_catalog_has_one_runnable_script_per_study():
    import json
    aliases = json.loads((ROOT / "jbang-catalog.json").read_text())["aliases"]
    assert {"queues", "overhead"} <= set(aliases)
    for name, alias in aliases.items():
        script = ROOT / alias["script-ref"]
        assert script.is_file(), name
        assert alias["description"], name
        # every package of the shared harness but the HTTP studies' own (docs/new-study.md, "The script's head")
        packages = sorted(p.name for p in (ROOT / "scripts/harness/src/perfkit/harness").iterdir() if p.is_dir() and p.name != "http")
        sources = " ".join(re.findall(r"^//SOURCES (.+)$", script.read_text(), re.M)).split()
        assert all(f"../harness/src/perfkit/harness/{p}/*.java" in sources for p in packages), f"{name} uses the shared harness"
        assert os.access(script, os.X_OK), f"{name}: its shebang works only when the script is executable"


def test_a_script_runs_directly_for_a_user_with_jbang_on_the_path(tmp_path):
    """What the shebang promises: `./scripts/queues/Queues.java --help` in a shell, with any jbang on PATH (here the kit's)."""
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin/jbang").write_text(f'#!/bin/sh\nexec "{ROOT / "env/setup/jbang"}" "$@"\n')
    (tmp_path / "bin/jbang").chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    r = subprocess.run(["bash", "-c", "./scripts/queues/Queues.java --help"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "--forks" in r.stdout and "JVM forks (repetitions) per cell" in r.stdout


def test_demo_runs_every_study():
    import json
    aliases = json.loads((ROOT / "jbang-catalog.json").read_text())["aliases"]
    demo = (ROOT / "bench").read_text().split("DEMO_RUNS=(")[1].split(")")[0]
    for name in aliases:
        assert f'"{name} --quick' in demo, f"./bench demo does not run {name}"


# Every bad input the hardening review found, through the real launcher: one line, exit 2, no run folder.
BAD_INPUTS = [
    (["queues", "--capacity", "2147483648"], "--capacity"),
    (["queues", "--measure", "Infinity"], "--measure"),
    (["queues", "--measure", "0"], "--measure"),
    (["queues", "--warmup", "-1"], "--warmup"),
    (["queues", "--rate", "1__000"], "--rate"),
    (["queues", "--forks", "zero"], "--forks"),
    (["queues", "--variants", "abq-1,abq-9"], "--variants"),
    (["overhead", "--iterations", "0"], "--iterations"),
    (["messaging", "--instances", "0"], "--instances"),
    (["workflow", "--job-types", "fixed,slow"], "--job-types"),
    (["queues", "--forks", "1", "--forks", "2"], "--forks is given twice"),
    (["queues", "--tag", "line1\n\n[click me](https://example.invalid/x)\n# injected heading"], "--tag expects one line of text"),
    (["queues", "--tag", "a\x1b[31mred"], "--tag expects one line of text"),
]


@pytest.mark.parametrize("args,needle", BAD_INPUTS, ids=[" ".join(a) for a, _ in BAD_INPUTS])
def test_bad_input_is_refused_in_one_line(tmp_path_factory, args, needle):
    # each study's cases in one JVM (conftest.refusal); the two below go through the launcher end to end
    study = args[0]
    assert_refused(study, args[1:], needle, tmp_path_factory, [a[1:] for a, _ in BAD_INPUTS if a[0] == study])


@pytest.mark.parametrize("args,needle", [BAD_INPUTS[0], BAD_INPUTS[-2]], ids=["capacity", "tag"])
def test_bad_input_is_one_line_and_leaves_no_run(tmp_path, args, needle):
    r = bench("run", *args, "--out", str(tmp_path / "runs"))
    assert_one_line_error(r, needle)
    assert not any(tmp_path.rglob("run.json"))


LAUNCHER_REPEATS = [
    (["notebooks", "--runs", "reference", "--runs=latest"], "notebooks: --runs given twice"),
    (["notebooks", "--out", "a", "--out", "b"], "notebooks: --out given twice"),
    (["publish", "--from", "a", "--from", "b"], "publish: --from given twice"),
    (["publish", "--out", "a", "--out", "b"], "publish: --out given twice"),
    (["run", "queues", "--quick", "--on", "me@a", "--on=me@b"], "--on is given twice"),
]


@pytest.mark.parametrize("args,needle", LAUNCHER_REPEATS, ids=[" ".join(a) for a, _ in LAUNCHER_REPEATS])
def test_a_launcher_option_given_twice_is_refused_before_anything_runs(tmp_path, args, needle):
    """The launcher's own options, like a study's: the last one never wins silently."""
    r = bench(*args)
    assert_one_line_error(r, needle)


def test_out_must_be_a_folder_that_can_be_made(tmp_path):
    a_file = tmp_path / "file"
    a_file.write_text("x")
    assert_one_line_error(bench("run", "queues", "--out", str(a_file)), "--out", "it is a file")
    assert_one_line_error(bench("run", "queues", "--out", str(a_file / "below")), "--out", "is not a folder")
    assert a_file.read_text() == "x", "nothing is lost"


def test_underscores_in_numbers_reach_the_forks_normalised(tmp_path):
    r = bench("run", "queues", "--quick", "--variants", "abq-1", "--warmup", "0.2", "--measure", "0.5",
              "--rate", "1_000", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    m = json.loads(next(tmp_path.rglob("run.json")).read_text())
    assert m["params"]["rate"] == "1000" and m["status"] == "complete"


def test_a_jdk_from_the_environment_is_checked_like_one_given_as_an_option(tmp_path):
    r = bench("run", "queues", "--quick", "--out", str(tmp_path), env={"PERFKIT_JAVA": "/bin/true"})
    assert_one_line_error(r, "$PERFKIT_JAVA", "--java", "not a working java")
    assert not any(tmp_path.rglob("run.json"))


# ---- the launch cache ------------------------------------------------------------------------------------

HELLO = """///usr/bin/env jbang "$0" "$@" ; exit $?
//JAVA 17+
public class Hello {
    public static void main(String[] args) { System.out.println("%s " + String.join("|", args)); }
}
"""


def test_the_launch_cache_serves_unchanged_scripts_and_misses_after_any_edit(tmp_path):
    """env/setup/jbang keeps JBang's answer for the kit's own scripts: an unchanged script starts without JBang (a
    JBang that cannot start proves it), its arguments arrive intact, and an edit, or a jar gone from the classpath,
    makes JBang resolve it again. A script outside the kit's scripts/ is never cached."""
    kit = tmp_path / "kit"
    (kit / "env/setup").mkdir(parents=True)
    shutil.copy(ROOT / "env/setup/jbang", kit / "env/setup/jbang")
    (kit / ".cache/jbang").mkdir(parents=True)
    os.symlink(ROOT / ".cache/jbang/lib", kit / ".cache/jbang/lib")
    script = kit / "scripts/hello/Hello.java"
    script.parent.mkdir(parents=True)
    script.write_text(HELLO % "one")
    env = dict(os.environ, JBANG_DIR=str(tmp_path / "jbang-home"))
    no_jbang = dict(env, JBANG_JAVA_OPTIONS="-XX:+NoSuchOption")  # the JBang JVM cannot start with it

    def launch(*args, environment=env):
        return subprocess.run([str(kit / "env/setup/jbang"), "--quiet", *args], capture_output=True, text=True, timeout=300, env=environment)

    assert launch(str(script), "a", "b c").stdout == "one a|b c\n"
    assert launch(str(script), "x y", "$HOME", environment=no_jbang).stdout == "one x y|$HOME\n", "a hit starts no JBang"
    script.write_text(HELLO % "two")
    assert launch(str(script), environment=no_jbang).returncode != 0, "an edit is a miss"
    assert launch(str(script), "b").stdout == "two b\n"
    (run_entry,) = (kit / ".cache/jbang/launch").glob("*.run")  # the entry for the older source is gone
    jar = next(p for p in run_entry.read_text().split("-classpath ", 1)[1].split()[0].strip("'").split(":") if p.endswith("Hello.jar"))
    os.remove(jar)
    assert launch(str(script), "c").stdout == "two c\n", "a jar gone from the classpath is resolved again"
    script.write_text(HELLO % "three")
    both = [subprocess.Popen([str(kit / "env/setup/jbang"), "--quiet", str(script), str(i)], stdout=subprocess.PIPE, text=True, env=env)
            for i in (1, 2)]
    assert [p.communicate(timeout=300)[0] for p in both] == ["three 1\n", "three 2\n"], "two misses at once: one resolves, both run"

    classpath = launch("info", "classpath", str(script)).stdout.strip()
    assert classpath.endswith("Hello.jar") and launch("info", "classpath", str(script), environment=no_jbang).stdout.strip() == classpath
    assert launch("build", str(script), environment=no_jbang).returncode == 0, "a cached classpath means built"

    elsewhere = tmp_path / "Hello.java"
    elsewhere.write_text(HELLO % "out")
    assert launch(str(elsewhere)).stdout == "out \n"
    assert launch(str(elsewhere), environment=no_jbang).returncode != 0, "only the kit's own scripts are cached"


# ---- a full disk ------------------------------------------------------------------------------------------

@pytest.fixture
def small_disk(tmp_path):
    """A tmpfs of 64 MB as the runs' --out (root only: it mounts)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root")
    mnt = tmp_path / "small"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mnt)], capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def test_a_disk_without_room_for_a_run_is_refused_before_it_starts(small_disk):
    r = bench("run", "queues", "--quick", "--out", str(small_disk))
    assert_one_line_error(r, "MB free under", "PERFKIT_MIN_FREE_MB")
    assert not any(small_disk.rglob("run.json"))


def test_a_disk_that_fills_during_a_run_fails_it_in_one_line_and_records_why(small_disk):
    proc = subprocess.Popen([str(ROOT / "bench"), "run", "queues", "--quick", "--variants", "abq-1,abq-3,abq-5", "--warmup", "1",
                             "--measure", "3", "--out", str(small_disk)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, PERFKIT_MIN_FREE_MB="1"))
    try:
        deadline = time.time() + 180
        while not list(small_disk.glob("queues/*/run.json")):
            assert proc.poll() is None and time.time() < deadline, proc.communicate()[1]
            time.sleep(0.2)
        subprocess.run(["dd", "if=/dev/zero", f"of={small_disk / 'filler'}", "bs=1M"], capture_output=True)  # until it is full
        out, err = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err
    errors = [l for l in err.splitlines() if l.startswith("error:")]
    assert len(errors) == 1 and "No space left on device" in errors[0], err
    assert "\tat " not in err and "Exception" not in err, err
    (run_dir,) = [p.parent for p in small_disk.glob("queues/*/run.json")]
    m = json.loads((run_dir / "run.json").read_text())
    assert m["status"] == "failed" and "No space left on device" in m["error"], m["status"]
    assert not (run_dir / "scratch").exists() and not (run_dir / ".live.json").exists()
    assert subprocess.run(["pgrep", "-f", str(run_dir)], capture_output=True).stdout.strip() == b"", "no fork is left"


def test_bench_list_sweeps_the_out_folders_it_is_given(tmp_path):
    """A run under an --out folder, left at running by a dead process: ./bench list --out DIR marks it; and one still
    going keeps running, with where it is and when it should end."""
    dead = subprocess.Popen(["true"])
    dead.wait()
    run = tmp_path / "queues" / f"20200101T000000Z-{os.uname().nodename.lower()[:24]}-abcdef"
    (run / "scratch").mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"status": "running", "pid": dead.pid, "host": {"hostname": os.uname().nodename}, "files": []}))
    going, ends = running_run(tmp_path, "20260101T000000Z-h-bbbbbb")
    r = bench("list", "--out", str(tmp_path))
    assert r.returncode == 0, r.stderr
    line = next(l for l in r.stdout.splitlines() if going.name in l)
    assert "running " in line and f"cell 5 of 12, should end about {ends:%H:%M}" in line, line
    line = next(l for l in r.stdout.splitlines() if run.name in l)
    assert "interrupted" in line, line
    assert json.loads((run / "run.json").read_text())["status"] == "interrupted"
    assert not (run / "scratch").exists()
