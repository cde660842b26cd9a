"""End to end: ./bench run overhead measures the recording path with JMH and keeps JMH's own JSON beside its tables."""
import json

import pytest

from conftest import bench, manifest, read_csv, run_dir_of, validate


def test_jmh_results_are_kept_as_jmh_json_and_agree_with_the_tables(tmp_path):
    r = bench("run", "overhead", "--forks", "1", "--warmup-iterations", "1", "--iterations", "2", "--iteration-time", "0.2",
              "--out", str(tmp_path), timeout=600)
    assert r.returncode == 0, r.stderr
    run_dir = run_dir_of(r)
    m = manifest(run_dir)
    validate(m)
    assert "jmh.json" in {f["path"] for f in m["files"]}
    results = json.loads((run_dir / "jmh.json").read_text())
    by_name = {x["benchmark"].rsplit(".", 1)[1]: x for x in results}
    assert set(by_name) == {"record", "recordWithClock", "twoHdrRecorders"}
    for name, x in by_name.items():
        assert x["mode"] == "avgt" and x["forks"] == 1 and x["measurementIterations"] == 2
        raw = x["primaryMetric"]["rawData"][0]
        assert x["primaryMetric"]["scoreUnit"] == "ns/op" and len(raw) == 2
        # the same iterations as jmh.csv, read from JMH's own file
        ours = [float(row["ns_per_sample"]) for row in read_csv(run_dir / "jmh.csv") if row["benchmark"] == name]
        # the table keeps 10 significant digits (Table.format); rounding both sides again could split a tie
        assert sorted(ours) == pytest.approx(sorted(raw), rel=1e-9), name
