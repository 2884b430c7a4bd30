"""Results over time (``interval``) and the latency log, from Python and the command line."""

import csv
import json
import subprocess
import sys

import pandas as pd
import pytest

import iostack
from test_plots import _not_blank

MSR = ("traces", "msr_cambridge", "msr-cambridge1-sample.csv")


def cli(*args):
    code = "import sys, iostack._core as c; sys.exit(c.main(['iostack', *sys.argv[1:]]))"
    return subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True)


def test_simulate_interval_counts_add_up_to_the_runs(shared):
    trace = shared(*MSR)
    df = iostack.simulate(trace, policy=["lru", "arc"], cache_size=["1%", "10%"], mode="block", interval="1min")
    results = df.attrs["results"]
    assert len(results) == 4
    for r in results:
        part = df[(df.policy == r["policy"]) & (df.cache_size_spec == r["cache_size_spec"])]
        assert part["requests"].sum() == r["requests"]
        assert part["hits"].sum() == r["hits"]
        assert part["blocks"].sum() == r["blocks"]
        assert (part["unit"] == "ns").all() and (part["width"] == 60_000_000_000).all()
        assert part["start"].is_monotonic_increasing
    # The same runs without an interval give the same totals.
    plain = iostack.simulate(trace, policy=["lru", "arc"], cache_size=["1%", "10%"], mode="block")
    assert list(plain["hits"]) == [r["hits"] for r in results]
    pl = iostack.simulate(trace, policy="lru", cache_size=100, unit_size=True, interval="400req", frame="polars")
    assert pl.shape[0] == 3 and pl["requests"].to_list() == [400, 400, 200]


def test_run_interval_and_latency_log(shared, tmp_path):
    trace = shared(*MSR)
    log = tmp_path / "lat.csv"
    df = iostack.run(trace, cache_size="1MiB", interval="250req", locality=False, latency_log=log)
    (result,) = df.attrs["results"]
    assert list(df["start"]) == [0, 250, 500, 750]
    assert df["requests"].sum() == result["front"]["requests"] == 1000
    assert df["device_busy_ns"].sum() == result["device_busy_ns"]
    assert df["response.count"].sum() == result["response"]["count"]
    assert (df["response.p99_ns"] <= result["response"]["max_ns"]).all()
    rows = list(csv.DictReader(log.open()))
    assert len(rows) == result["device_requests"]
    assert all(int(r["queue_ns"]) <= int(r["dispatch_ns"]) <= int(r["complete_ns"]) for r in rows)
    demand = [r for r in rows if r["cause"] == "demand" and r["op"] == "R"]
    assert len(demand) == result["device_response"]["demand_read"]["count"]
    # Reads and writes apart, and a histogram that holds every response.
    resp = result["response"]
    assert resp["read"]["count"] + resp["write"]["count"] == resp["count"]
    assert sum(n for _, n in resp["histogram"]) == resp["count"]


def test_grids_and_sweeps_carry_the_series(shared, tmp_path):
    trace = shared(*MSR)
    df = iostack.run(trace, cache_size=["1MiB", "4MiB"], interval="500req", locality=False)
    assert len(df) == 4 and set(df["cache_size_spec"]) == {"1MiB", "4MiB"}
    out = tmp_path / "rows.csv"
    rows = iostack.sweep(traces=[trace], kind="sim", base={"mode": "block", "interval": "400req"},
                         axes={"policy": ["lru", "arc"]}, cache_size=["1%"], output=out)
    s = iostack.series(rows)
    assert list(s["policy"]) == ["lru"] * 3 + ["arc"] * 3
    # The series survives the output file.
    back = iostack.series(pd.read_csv(out))
    pd.testing.assert_frame_equal(back[["policy", "start", "hits"]], s[["policy", "start", "hits"]])
    with pytest.raises(ValueError, match="without `interval`"):
        iostack.series(iostack.sweep(traces=[trace], kind="sim", axes={"policy": ["lru"]}, cache_size=[10]))


def test_cli_writes_the_series_beside_the_output(shared, tmp_path):
    trace = shared(*MSR)
    out = tmp_path / "sim.parquet"
    r = cli("sim", trace, "--policy", "lru,arc", "--cache", "1%", "--mode", "block", "--interval", "30s", "--output", out)
    assert r.returncode == 0, r.stderr
    assert "miss ratio per interval of 30 s" in r.stdout
    s = pd.read_parquet(tmp_path / "sim.series.parquet")
    assert set(s["policy"]) == {"lru", "arc"} and (s["unit"] == "ns").all()
    runs = pd.read_parquet(out)
    assert s.groupby("policy")["hits"].sum().to_dict() == runs.set_index("policy")["hits"].to_dict()
    out = tmp_path / "run.jsonl"
    r = cli("run", trace, "--cache", "1MiB", "--no-locality", "--interval", "200req", "--output", out,
            "--latency-log", tmp_path / "lat.csv", "--json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    s = pd.read_json(tmp_path / "run.series.jsonl", lines=True)
    assert list(s["requests"]) == [200] * 5
    assert "response.p99_ns" in s.columns and s["device_requests"].sum() == result["device_requests"]
    assert sum(1 for _ in open(tmp_path / "lat.csv")) == result["device_requests"] + 1
    bad = cli("run", trace, "--interval", "auto")
    assert bad.returncode != 0 and "--interval" in bad.stderr and "Traceback" not in bad.stderr


def _plot_cli(*args):
    return subprocess.run([sys.executable, "-m", "iostack.cli", *map(str, args)], capture_output=True, text=True)


def test_series_and_response_cdf_plots(shared, tmp_path):
    trace = shared(*MSR)
    # iostack run --plot: the response CDF from the histogram, and the series.
    r = _plot_cli("run", trace, "--cache", "4MiB", "--no-locality", "--interval", "100ms", "--plot", tmp_path / "run")
    assert r.returncode == 0, r.stderr
    assert {p.stem for p in (tmp_path / "run").glob("*.png")} == {"sequences", "response", "processes", "series"}
    for p in (tmp_path / "run").glob("*.png"):
        _not_blank(p)
    runs = [iostack.run(trace, policy=p, prefetch=f, cache_size="4MiB", interval="100ms", locality=False).attrs["results"][0]
            for p, f in [("lru", "linux"), ("lru", "none")]]
    ax = iostack.plot.response_cdf(runs)
    # A true CDF: one step per histogram bucket, ending at 1.
    line = ax.get_lines()[0]
    assert len(line.get_xdata()) == len(runs[0]["response"]["histogram"]) + 1 and line.get_ydata()[-1] == 1.0
    axes = iostack.plot.series(runs)
    assert len(axes) == 3 and [l.get_label() for l in axes[0].get_lines()] == ["linux", "none"]
    assert axes[0].get_xlabel() == "virtual time (s)" and axes[1].get_ylabel() == "device busy time (ms)"
    # iostack sim --plot with --interval adds the hit ratio over time.
    r = _plot_cli("sim", trace, "--policy", "lru,arc", "--cache", "1%", "--mode", "block", "--interval", "30s", "--plot", tmp_path / "sim")
    assert r.returncode == 0, r.stderr
    assert {p.stem for p in (tmp_path / "sim").glob("*.png")} == {"mrc", "series"}
    _not_blank(tmp_path / "sim" / "series.png")
    s = iostack.simulate(trace, policy=["lru", "arc"], cache_size="10%", mode="block", interval="200req")
    ax = iostack.plot.series(s)[0]
    assert ax.get_xlabel() == "request index (start of interval)"
    # Each run's line has one step per interval (and the end of the last).
    assert all(len(l.get_xdata()) == 6 for l in ax.get_lines())


def test_report_gathers_the_series(shared, tmp_path):
    trace = shared(*MSR)
    run_json = tmp_path / "run.json"
    r = cli("run", trace, "--cache", "4MiB", "--no-locality", "--interval", "500ms", "--json")
    assert r.returncode == 0, r.stderr
    run_json.write_text(r.stdout)
    rows = tmp_path / "rows.parquet"
    iostack.sweep(traces=[trace], kind="sim", base={"mode": "block", "interval": "250req"}, axes={"policy": ["lru", "arc"]},
                  cache_size=["1%"], output=rows)
    from iostack.report import build_html

    html = build_html([run_json, rows])
    assert "Hit ratio, I/O time and response time over time" in html and "Hit ratio over time" in html
    assert "Response-time CDF" in html and "series.points" not in html.split("<h3>Rows</h3>")[-1]
