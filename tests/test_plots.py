"""Plots: every --plot of the commands and every iostack.plot function writes a PNG that is not
blank."""

import subprocess
import sys

import matplotlib.image
import numpy as np
import pytest

import iostack


def _not_blank(path):
    img = matplotlib.image.imread(str(path))
    assert img.ndim == 3 and img.shape[0] > 200 and img.shape[1] > 300, path
    # A figure with axes, labels and data has many distinct colours, not one.
    assert len(np.unique(img.reshape(-1, img.shape[2])[:, :3], axis=0)) > 20, path


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "iostack.cli", *map(str, args)], capture_output=True, text=True)


def test_analyze_plots(shared, tmp_path):
    trace = shared("traces", "msr_cambridge", "msr-cambridge1-sample.csv")
    r = _cli("analyze", trace, "--plot", tmp_path)
    assert r.returncode == 0, r.stderr
    names = {"mrc", "affinity", "distances", "popularity", "timeline", "distributions", "heatmap", "processes"}
    assert {p.stem for p in tmp_path.glob("*.png")} == names
    for p in tmp_path.glob("*.png"):
        _not_blank(p)


def test_sim_plots_and_output(shared, tmp_path):
    trace = shared("traces", "cloudphysics", "cloudPhysicsIO.vscsi")
    r = _cli("sim", trace, "--policy", "lru,arc", "--cache", "100,489,2448", "--unit-size", "--plot", tmp_path / "p")
    assert r.returncode == 0, r.stderr
    assert "lru" in r.stdout and "0.8380" in r.stdout  # the request miss ratio of lru at 489
    _not_blank(tmp_path / "p" / "mrc.png")
    r = _cli("sim", trace, "--policy", "lru", "--cache", "489", "--unit-size", "--json", "--plot", tmp_path / "q")
    assert r.returncode == 0 and r.stdout.lstrip().startswith("["), r.stderr
    # Errors are the command's, with nothing written.
    r = _cli("sim", trace, "--policy", "nosuch", "--cache", "489", "--plot", tmp_path / "e")
    assert r.returncode != 0 and "nosuch" in r.stderr
    assert not (tmp_path / "e").exists()


def test_run_plots(shared, tmp_path):
    trace = shared("traces", "msr_cambridge", "msr-cambridge1-sample.csv")
    r = _cli("run", trace, "--policy", "lru", "--cache", "16MiB", "--prefetch", "linux", "--device", "hdd:st3400620as", "--plot", tmp_path)
    assert r.returncode == 0, r.stderr
    assert "hit ratio" in r.stdout
    assert {p.stem for p in tmp_path.glob("*.png")} == {"sequences", "response", "affinity", "processes"}
    runs = [iostack.run(trace, policy=p, cache="4MiB", device="hdd:st3400620as", prefetch=f) for p, f in [("lru", "linux"), ("lru", "none")]]
    paths = iostack.plot.write_run(runs, tmp_path / "two")
    assert {p.stem for p in paths} == {"sequences", "response", "affinity", "processes", "stacks"}
    for p in list(tmp_path.glob("*.png")) + paths:
        _not_blank(p)


def test_plot_functions_on_dataframes(tmp_path):
    rng = np.random.default_rng(1)
    t = {"offset": rng.zipf(1.2, 20_000).astype(np.uint64) % 3000, "length": np.full(20_000, 4096, dtype=np.uint64)}
    df = iostack.simulate(t, policy=["lru", "fifo"], cache_size=[10, 100, 1000], unit_size=True)
    ax = iostack.plot.mrc(df, footprint={"<memory>": 3000})
    assert ax.get_xscale() == "log" and ax.get_xlabel() == "cache size (objects)"
    assert [line.get_label() for line in ax.get_lines()][:2] == ["lru", "fifo"]
    paths = iostack.plot.write_sim(df, tmp_path)
    _not_blank(paths[0])


def test_analysis_mrc_stops_at_the_footprint(shared):
    a = iostack.analyze(shared("traces", "msr_cambridge", "msr-cambridge1-sample.csv"), mrc_sizes=[1, 100, 1917, 10_000, 100_000])
    ax = iostack.plot.analysis_mrc(a)
    xs = ax.get_lines()[0].get_xdata()
    assert max(xs) <= a.report["footprint_units"]


def _ada_run(tmp_path):
    """512k-SR over a 64 MiB file on the SSD model with REDCAP under ADA (window 100): REDCAP's
    segment reads cost more than the 4 KiB reads there, so ADA turns it off, on and off again."""
    trace = tmp_path / "sr.bin"
    r = _cli("gen", "stride", "--param", "pattern=512k-sr", "--param", "file_size=64MiB", "-o", trace)
    assert r.returncode == 0, r.stderr
    opts = dict(device="ssd:x25m", sched="noop", prefetch="none", cache="8", max_request="128KiB", redcap="on",
                ada="window=100")
    return trace, opts, iostack.run(trace, locality=False, **opts)


def test_ada_timeline(tmp_path):
    trace, opts, res = _ada_run(tmp_path)
    ada = res["ada"]
    switches = [(s["request"], s["state"]) for s in ada["switches"]]
    assert len(switches) >= 1, ada
    axes = iostack.plot.ada_timeline(res)
    state = next(line for line in axes[0].get_lines() if line.get_gid() == "ada-state")
    xs, ys = state.get_xdata(), state.get_ydata()
    # Starts active at read 0, ends at the last read in the final state, and changes exactly at
    # the switches the report lists, to the state it lists.
    assert (xs[0], ys[0]) == (0, 1) and xs[-1] == ada["reads"]
    drawn = [(xs[i], "active" if ys[i] else "inactive") for i in range(1, len(xs)) if ys[i] != ys[i - 1]]
    assert drawn == switches
    assert ys[-1] == (ada["state"] == "active")
    # The window sums are drawn at each check, on the same axis of reads.
    sums = [line for line in axes[1].get_lines() if len(line.get_xdata()) == len(ada["windows"])]
    assert len(sums) == 2
    assert [round(y, 9) for y in sums[0].get_ydata()] == [round(w["redcap_ms"], 9) for w in ada["windows"]]
    assert [round(y, 9) for y in sums[1].get_ydata()] == [round(w["normal_ms"], 9) for w in ada["windows"]]
    assert axes[1].get_xlabel() == "read requests seen" and "ms per block" in axes[1].get_ylabel()
    # The report (and Jupyter's view of the result) has it too.
    assert "ADA&#x27;s activation timeline" in res._repr_html_()

    # The CLI draws it with the run's other plots; a run without ADA does not.
    args = [f"--{k.replace('_', '-')}={v}" for k, v in opts.items()]
    r = _cli("run", trace, *args, "--no-locality", "--plot", tmp_path / "p")
    assert r.returncode == 0, r.stderr
    _not_blank(tmp_path / "p" / "ada.png")
    assert (tmp_path / "p" / "ada.png").stat().st_size > 20_000
    r = _cli("run", trace, "--device=ssd:x25m", "--no-locality", "--plot", tmp_path / "q")
    assert r.returncode == 0, r.stderr
    assert not (tmp_path / "q" / "ada.png").exists()
