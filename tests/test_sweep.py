"""Experiments (iostack sweep / iostack.sweep), tabular output and grids from Python."""

import json
import os
import subprocess
import sys

import pandas as pd
import pytest

import iostack

GEN = "gen:zipf:alpha=1,objects=3000,requests=40000,seed=3"
EXPERIMENT = f"""
[experiment]
kind = "sim"
traces = ["{GEN}", "gen:uniform:objects=800,requests=20000,seed=4"]
cache_size = ["1%", "10%", 100]
[base]
unit_size = true
[axes]
policy = ["lru", "arc", "s3fifo"]
"""


def cli(*args):
    code = "import sys, iostack._core as c; sys.exit(c.main(['iostack', *sys.argv[1:]]))"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True)


@pytest.fixture
def experiment(tmp_path):
    p = tmp_path / "exp.toml"
    p.write_text(EXPERIMENT)
    return p


def test_sweep_rows_follow_the_grid(experiment):
    df = iostack.sweep(experiment)
    assert len(df) == 2 * 3 * 3
    assert list(df.columns[:4]) == ["trace", "policy", "cache_size_spec", "format"]
    assert list(df["cache_size_spec"][:3]) == ["1%", "10%", "100"]
    # 10% of the zipf trace's footprint, truncated as libCacheSim does.
    first = df.iloc[1]
    assert first["cache_size"] == int(first["footprint"] * 0.1)
    assert df.attrs["experiment"]["points"] == 18
    # Same rows again (deterministic), and from keywords.
    again = iostack.sweep(traces=[GEN, "gen:uniform:objects=800,requests=20000,seed=4"], base={"unit_size": True},
                          axes={"policy": ["lru", "arc", "s3fifo"]}, cache_size=["1%", "10%", 100])
    pd.testing.assert_frame_equal(df, again)


def test_failed_runs_are_recorded_and_reported(experiment, tmp_path):
    experiment.write_text(EXPERIMENT.replace('"s3fifo"]', '"s3fifo", "nosuch"]'))
    out = tmp_path / "r.csv"
    p = cli("sweep", experiment, "--output", out)
    assert p.returncode == 1
    assert "6 of 24 runs failed" in p.stderr and "unknown policy `nosuch`" in p.stderr
    df = pd.read_csv(out)
    assert len(df) == 24 and df["error"].notna().sum() == 6
    with pytest.warns(RuntimeWarning, match="6 of 24 runs failed"):
        iostack.sweep(experiment)


def test_an_interrupted_sweep_resumes_to_the_same_table(experiment, tmp_path):
    whole, cut = tmp_path / "whole.jsonl", tmp_path / "cut.jsonl"
    assert cli("sweep", experiment, "-o", whole, "--quiet").returncode == 0
    lines = whole.read_text().splitlines(keepends=True)
    # As a kill leaves it: some rows written, the last one cut short.
    cut.write_text("".join(lines[:7]) + lines[7][:20])
    p = cli("sweep", experiment, "-o", cut, "--resume")
    assert p.returncode == 0, p.stderr
    assert "(11 run now, 7 already in the output)" in p.stderr
    assert cut.read_bytes() == whole.read_bytes()


@pytest.mark.parametrize("ext", ["csv", "parquet", "json", "jsonl"])
def test_every_output_format_reads_back(tmp_path, ext):
    out = tmp_path / f"sim.{ext}"
    trace = tmp_path / "t.oracleGeneral.bin"
    assert cli("gen", "zipf", "--objects", "1000", "--requests", "20000", "--output", trace).returncode == 0
    p = cli("sim", trace, "-p", "lru,arc", "-c", "1%,100", "--unit-size", "-o", out)
    assert p.returncode == 0, p.stderr
    read = {"csv": pd.read_csv, "parquet": pd.read_parquet, "json": pd.read_json, "jsonl": lambda f: pd.read_json(f, lines=True)}[ext]
    df = read(out)
    expect = pd.DataFrame(json.loads(cli("sim", trace, "-p", "lru,arc", "-c", "1%,100", "--unit-size", "--json").stdout))
    assert list(df["policy"]) == ["lru", "lru", "arc", "arc"]
    assert [str(s) for s in df["cache_size_spec"]] == ["1%", "100", "1%", "100"]
    assert list(df["cache_size"]) == list(expect["cache_size"])
    assert list(df["miss_ratio"]) == pytest.approx(list(expect["miss_ratio"]), rel=1e-12)
    assert not [f for f in os.listdir(tmp_path) if f.endswith(".tmp")]
    # run and analyze write one row each.
    run_out = tmp_path / f"run.{ext}"
    assert cli("run", trace, "--cache", "5%", "--no-locality", "-o", run_out).returncode == 0
    r = read(run_out)
    assert len(r) == 1 and r["elapsed_ns"][0] > 0 and "response.p99_ns" in r.columns and r["cache_size_spec"][0] == "5%"
    an = tmp_path / f"an.{ext}"
    assert cli("analyze", trace, "-o", an).returncode == 0
    assert read(an)["requests"][0] == 20000


def test_bad_output_extension_fails_before_running(tmp_path):
    p = cli("sim", tmp_path / "missing.csv", "-p", "lru", "-c", "10", "-o", tmp_path / "x.txt")
    assert p.returncode == 1 and "--output" in p.stderr and ".parquet" in p.stderr
    assert not (tmp_path / "x.txt").exists()


def test_run_takes_lists_and_returns_a_frame(shared):
    path = shared("traces", "msr_cambridge", "msr-cambridge1-sample.csv")
    df = iostack.run(path, policy=["lru", "arc"], cache_size=["1%", "10%"], locality=False)
    assert len(df) == 4 and list(df["policy"]) == ["lru", "lru", "arc", "arc"]
    one = iostack.run(path, policy="arc", cache="10%", locality=False)
    row = df.iloc[3]
    assert row["elapsed_ns"] == one["elapsed_ns"] and row["cache_size"] == one["resolved"]["cache_blocks"]
    assert row["response.p99_ns"] == one["response"]["p99_ns"]


def test_polars_frames():
    pl = pytest.importorskip("polars", reason="polars is not installed")
    df = iostack.sweep(traces=[GEN], axes={"policy": ["lru", "arc"]}, base={"unit_size": True}, cache_size=["1%"], frame="polars")
    assert isinstance(df, pl.DataFrame) and df.height == 2


def _ray():
    """The ray module, or the test skipped with the reason printed."""
    try:
        import ray
    except ImportError:
        print("skipping: ray cannot be imported (pip install 'iostack[ray]')")
        pytest.skip("ray cannot be imported")
    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    return ray


def test_ray_backend_matches_local(experiment):
    ray = _ray()
    local = iostack.sweep(experiment)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = iostack.sweep(experiment, backend="ray")
    finally:
        ray.shutdown()
    pd.testing.assert_frame_equal(local, remote)


def test_ray_object_store_shipping_matches_local(tmp_path):
    ray = _ray()
    # Trace files (one compressed), which the workers get from the object store, not the path.
    r = cli("gen", "zipf", "--requests", "20000", "--objects", "2000", "--seed", "5", "-o", tmp_path / "a.csv")
    assert r.returncode == 0, r.stderr
    r = cli("gen", "uniform", "--requests", "10000", "--objects", "900", "--seed", "6", "-o", tmp_path / "b.bin")
    assert r.returncode == 0, r.stderr
    exp = tmp_path / "exp.toml"
    exp.write_text('[experiment]\nkind = "sim"\ntraces = ["*.csv", "*.bin"]\ncache_size = ["1%", "10%"]\n'
                   '[base]\nunit_size = true\n[axes]\npolicy = ["lru", "arc"]\n')
    local = iostack.sweep(exp)
    assert len(local) == 8 and "error" not in local.columns
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        remote = iostack.sweep(exp, backend="ray", ship="store")
    finally:
        ray.shutdown()
    pd.testing.assert_frame_equal(local, remote)
    with pytest.raises(ValueError, match="ship"):
        iostack.sweep(exp, backend="ray", ship="nfs")


def test_a_shipped_task_reads_the_bytes_it_is_given(tmp_path):
    from iostack.experiment import _run_shipped_task
    from iostack import _core

    r = cli("gen", "zipf", "--requests", "5000", "--objects", "500", "--seed", "5", "-o", tmp_path / "a.csv")
    assert r.returncode == 0, r.stderr
    point = {"index": 0, "label": [["trace", "a.csv"], ["policy", "lru"], ["cache_size_spec", "50"]],
             "options": {"unit_size": True, "policy": "lru", "cache_size": 50}}
    task = {"kind": "sim", "trace": {"source": "file", "path": str(tmp_path / "a.csv"), "name": "a.csv"}, "points": [point]}
    direct = json.loads(_core.sweep_task(json.dumps(task), 1))
    # The path on the worker does not exist: only the shipped bytes can give the same rows.
    task["trace"]["path"] = "/nonexistent/a.csv"
    shipped = json.loads(_run_shipped_task(json.dumps(task), (tmp_path / "a.csv").read_bytes(), "a.csv"))
    assert shipped == direct and "error" not in direct[0][1]
def test_rows_are_identical_at_any_job_count_backend_and_as_single_calls(tmp_path):
    """The same grid through `iostack sweep` with 1 and 3 local workers, through the Ray backend
    (when ray is installed), and as single `iostack.simulate` / `iostack.run` calls: identical
    result rows."""
    trace = tmp_path / "z.csv"
    p = cli("gen", "zipf", "--objects", "3000", "--requests", "30000", "--seed", "5", "-o", trace)
    assert p.returncode == 0, p.stderr
    grids = {
        "sim": dict(kind="sim", base={"unit_size": True}, axes={"policy": ["lru", "arc", "s3fifo", "lirs"]}, cache_size=[50, 500]),
        "run": dict(kind="run", base={"think": "0", "locality": True}, axes={"policy": ["lru", "arc"]}, cache_size=["256KiB", "4MiB"]),
    }
    for kind, grid in grids.items():
        one = iostack.sweep(traces=[trace], jobs=1, **grid)
        several = iostack.sweep(traces=[trace], jobs=3, **grid)
        pd.testing.assert_frame_equal(one, several, obj=f"{kind}: 1 and 3 workers")
        again = iostack.sweep(traces=[trace], jobs=3, **grid)
        pd.testing.assert_frame_equal(several, again, obj=f"{kind}: two runs")
        try:
            import ray
        except ImportError:
            print("ray cannot be imported: the Ray backend is compared in test_ray_backend_matches_local when it is")
        else:
            os.environ.setdefault("RAY_AUTH_MODE", "disabled")
            ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
            try:
                remote = iostack.sweep(traces=[trace], backend="ray", **grid)
            finally:
                ray.shutdown()
            pd.testing.assert_frame_equal(one, remote, obj=f"{kind}: local and Ray")
        if kind == "sim":
            # One call over the whole grid, its policies on 1 and on 3 threads.
            policies, sizes = grid["axes"]["policy"], grid["cache_size"]
            by_threads = [iostack.simulate(trace, policy=policies, cache_size=sizes, unit_size=True, threads=t) for t in (1, 3)]
            pd.testing.assert_frame_equal(by_threads[0], by_threads[1], obj="simulate on 1 and 3 threads")
        # Each row as a single call.
        for _, row in one.iterrows():
            if kind == "sim":
                single = iostack.simulate(trace, policy=row["policy"], cache_size=int(row["cache_size"]), unit_size=True, threads=1)
                for col in ("requests", "hits", "miss_ratio"):
                    assert single[col] == row[col], (row["policy"], row["cache_size"], col)
            else:
                single = iostack.run(trace, policy=row["policy"], cache=row["cache_size_spec"], think="0", locality=True)
                flat = pd.json_normalize(single, sep=".").iloc[0]
                compared = [c for c in one.columns if c in flat.index and pd.api.types.is_scalar(flat[c]) and not c.endswith("_s") and "wall" not in c and c != "trace"]
                assert len(compared) > 5, compared
                for col in compared:
                    assert flat[col] == row[col] or (pd.isna(flat[col]) and pd.isna(row[col])), (row["policy"], row["cache_size_spec"], col, flat[col], row[col])
