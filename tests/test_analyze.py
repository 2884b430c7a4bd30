"""iostack.analyze, `iostack analyze --json` and `--plot` through the Python entry point."""

import json
import math
import subprocess
import sys

import pytest

import iostack
from iostack import _core

MSR = ("traces", "msr_cambridge", "msr-cambridge1-sample.csv")


def run_cli(*args):
    """Runs the installed Python entry point in a child process."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; from iostack.cli import main; sys.argv[0] = 'iostack'; main()", *args],
        capture_output=True,
        text=True,
    )


def write_csv(path, rows):
    path.write_text("time_ns,op,offset,length\n" + "".join(f"{t},{op},{o},{n}\n" for t, op, o, n in rows))
    return path


def test_paper_block_affinity_example(tmp_path):
    # Section 3: blocks 1..5, 1001..1005 give about 90 % block affinity; 1, 50, ..., 450 about 61 %.
    blocks = [1, 2, 3, 4, 5, 1001, 1002, 1003, 1004, 1005]
    t = write_csv(tmp_path / "a.csv", [(i, "R", b * 4096, 4096) for i, b in enumerate(blocks)])
    a = iostack.analyze(t)
    assert a.summary["block_affinity_mean"][0] == pytest.approx(0.897, abs=0.005)
    assert a.summary["block_distance_mean"][0] == pytest.approx(100.5)
    blocks = [1] + [50 * i for i in range(1, 10)]
    t = write_csv(tmp_path / "b.csv", [(i, "R", b * 4096, 4096) for i, b in enumerate(blocks)])
    assert iostack.analyze(t).summary["block_affinity_mean"][0] == pytest.approx(0.60, abs=0.01)


def test_dataframes_on_a_real_trace(shared):
    a = iostack.analyze(shared(*MSR), mrc_sizes=[1, 16, 256, 4096])
    s = a.summary.iloc[0]
    assert s["requests"] == 1000
    assert 0 < s["stack_affinity_mean"] < 1 and 0 < s["block_affinity_median"] <= 1
    assert list(a.mrc["cache_size"]) == [1, 16, 256, 4096]
    assert (a.mrc["miss_ratio"].diff().dropna() <= 0).all()
    assert set(a.histograms["distance"]) >= {"stack_distance", "block_distance", "reuse_distance", "request_size"}
    assert a.series["requests"].sum() == 1000
    assert a.series.attrs["unit"] == "requests"
    # Byte sizes are converted with the page size.
    b = iostack.analyze(shared(*MSR), mrc_sizes=["64KiB"])
    assert list(b.mrc["cache_size"]) == [16]


def test_json_keys_and_mrc_sizes(shared):
    p = run_cli("analyze", str(shared(*MSR)), "--json", "--mrc-sizes", "10,100,1000", "--mode", "object")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    for k in ("stack_affinity", "block_affinity"):
        assert set(r[k]) == {"mean", "median"}
    assert [m["cache_size"] for m in r["mrc"]] == [10, 100, 1000]
    assert all(set(m) >= {"cache_size", "miss_ratio"} for m in r["mrc"])


def test_empty_trace_has_no_affinity(tmp_path):
    t = write_csv(tmp_path / "empty.csv", [])
    p = run_cli("analyze", str(t), "--json", "--format", "csv")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["stack_affinity"] == {"mean": None, "median": None}
    assert r["block_affinity"] == {"mean": None, "median": None}
    a = iostack.analyze(t, format="csv")
    assert math.isnan(a.summary["stack_affinity_mean"][0])


def test_plot_writes_pngs(shared, tmp_path):
    out = tmp_path / "plots"
    p = run_cli("analyze", str(shared(*MSR)), "--plot", str(out))
    assert p.returncode == 0, p.stderr
    assert "stack affinity" in p.stdout
    for name in ("mrc.png", "affinity.png", "distances.png"):
        f = out / name
        assert f.exists() and f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name


def test_rust_cli_explains_that_plots_need_python(shared, tmp_path):
    code = _core.main(["iostack", "analyze", str(shared(*MSR)), "--plot", str(tmp_path)])
    assert code == 1
    assert not any(tmp_path.iterdir())


def test_errors_are_value_errors(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("time_ns,op,offset,length\n0,R,notanumber,4096\n")
    with pytest.raises(ValueError, match="line 2"):
        iostack.analyze(bad)
    with pytest.raises(ValueError, match="^page_size: "):  # named as the keyword, not the command-line option
        iostack.analyze(bad, page_size="0")
    a = iostack.analyze(bad, skip_invalid=True)
    assert a.summary["skipped_invalid"][0] == 1


@pytest.mark.parametrize(
    "rel",
    [
        ("traces", "cloudphysics", "cloudPhysicsIO.vscsi"),
        ("traces", "msr_cambridge", "msr-cambridge1-sample.csv"),
        ("traces", "umass_spc", "wsrch-small.trace"),
    ],
)
def test_mrc_equals_lru_simulation(shared, rel):
    path = shared(*rel)
    sizes = [1, 10, 100, 1000, 5000, 20000]
    a = iostack.analyze(path, mode="object", mrc_sizes=sizes)
    sim = iostack.simulate(path, policy="lru", cache_size=sizes, mode="object", unit_size=True)
    assert list(a.mrc["miss_ratio"]) == list(sim["miss_ratio"])
    b = iostack.analyze(path, mode="block", page_size=4096, mrc_sizes=sizes)
    sim = iostack.simulate(path, policy="lru", cache_size=sizes, mode="block", page_size=4096)
    assert list(b.mrc["miss_ratio"]) == list(sim["block_miss_ratio"])
    assert list(b.mrc["request_miss_ratio"]) == list(sim["miss_ratio"])


CLOUDPHYSICS = ("traces", "cloudphysics", "cloudPhysicsIO.vscsi")


def test_sampled_mrc(shared):
    path = shared(*CLOUDPHYSICS)
    sizes = [1000, 10000, 50000, 100000, 200000]
    exact = iostack.analyze(path, mrc_sizes=sizes)
    assert exact.summary["mrc_sampling"][0] == "exact"
    # Rate 1 samples every key: the exact curve.
    one = iostack.analyze(path, mrc_sizes=sizes, mrc_sampling=1.0)
    assert list(one.mrc["miss_ratio"]) == list(exact.mrc["miss_ratio"])
    assert one.summary["mrc_sampling"][0] == "rate=1.0,seed=0"
    # The curve alone, sampled: close to the exact curve, reported in the summary and report.
    for spec in (0.1, "size=8192,seed=4"):
        a = iostack.analyze(path, mrc_sizes=sizes, mrc_sampling=spec, mrc_only=True)
        assert a.histograms.empty and "locality" not in a.report
        assert a.summary["references"][0] == exact.summary["references"][0]
        assert 0 < a.summary["mrc_sampling_rate"][0] < 1
        assert a.report["mrc_sampling"]["sampled_references"] < a.report["mrc_sampling"]["references"]
        err = (a.mrc["miss_ratio"] - exact.mrc["miss_ratio"]).abs().max()
        assert err < 0.05, (spec, err)
        assert "miss_ratio" in a._repr_html_()
    assert iostack.analyze(path, mrc_sizes=sizes, mrc_sampling="size=8192,seed=4").summary["mrc_sampling"][0] == "size=8192,seed=4"
    for bad in (0, 2.0, "size=0", True, [0.1], "sometimes"):
        with pytest.raises(ValueError, match="mrc_sampling|--mrc-sampling"):
            iostack.analyze(path, mrc_sampling=bad)
    with pytest.raises(ValueError, match="mrc_only"):
        iostack.analyze(path, mrc_only="yes")
