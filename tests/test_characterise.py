"""Trace characterisation in iostack.analyze / iostack analyze --json: popularity and its Zipf
fit, one-hit wonders, inter-arrival and reuse times, timelines and processes."""

import json
import subprocess
import sys

import numpy as np
import pytest

import iostack


def _gen_zipf(tmp_path, alpha, objects=5000, requests=200_000):
    out = tmp_path / f"zipf{alpha}.csv"
    subprocess.run([sys.executable, "-m", "iostack.cli", "gen", "zipf", "--alpha", str(alpha), "--objects", str(objects),
                    "--requests", str(requests), "--seed", "3", "--output", str(out)], check=True, capture_output=True)
    return out


@pytest.mark.parametrize("alpha", [0.8, 1.0])
def test_zipf_alpha_of_a_generated_trace(tmp_path, alpha):
    t = _gen_zipf(tmp_path, alpha)
    a = iostack.analyze(t, mode="object")
    s = a.summary.iloc[0]
    assert abs(s.zipf_alpha - alpha) < 0.05, s.zipf_alpha
    assert s.zipf_r2 > 0.97
    # The same key in the command's JSON.
    out = subprocess.run([sys.executable, "-m", "iostack.cli", "analyze", str(t), "--mode", "object", "--json"],
                         check=True, capture_output=True, text=True).stdout
    assert json.loads(out)["popularity"]["zipf_alpha"] == pytest.approx(s.zipf_alpha)
    # The rank-frequency curve decreases and starts at the most popular object.
    assert a.popularity["rank"].iloc[0] == 1 and a.popularity["count"].iloc[0] == s.max_count
    assert a.popularity["count"].is_monotonic_increasing is False
    assert (np.diff(a.popularity["count"]) <= 0).all()


def test_characterisation_of_a_known_trace(tmp_path):
    # 40 requests, one every 2 ms: keys 0..9 twice over by pid 1, then 20 one-hit keys by pid 2.
    rows = ["time_ns,pid,op,offset,length,device,file,file_offset,file_size"]
    for i in range(40):
        key, pid = (i % 10, 1) if i < 20 else (100 + i, 2)
        op = "W" if i % 4 == 0 else "R"
        rows.append(f"{i * 2_000_000},{pid},{op},{key * 4096},4096,0,,,")
    p = tmp_path / "t.csv"
    p.write_text("\n".join(rows) + "\n")
    a = iostack.analyze(p)
    s = a.summary.iloc[0]
    assert (s.one_hit_wonders, s.max_count) == (20, 2)
    assert s.one_hit_wonder_ratio == pytest.approx(20 / 30)
    assert s.inter_arrival_median_ns == pytest.approx(2e6, rel=0.01)
    assert s.reuse_time_median_ns == pytest.approx(20e6, rel=0.01)
    assert s.read_byte_fraction == pytest.approx(30 / 40)
    assert a.processes["pid"].tolist() == [1, 2]
    assert a.processes["requests"].tolist() == [20, 20]
    tl = a.timeline
    assert tl["requests"].sum() == 40
    assert tl["footprint_units"].iloc[-1] == 30
    # One request per 2 ms is 500 per second in every interval, the partial last one included.
    assert np.allclose(tl["request_rate"], 500.0)
    assert a.timeline_by_request["requests"].sum() == 40
    kinds = set(a.histograms["distance"])
    assert {"inter_arrival_ns", "reuse_time_ns"} <= kinds
