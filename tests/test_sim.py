"""iostack.simulate, iostack.read_trace and the `iostack sim` command from Python."""

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import iostack
from conftest import SHARED

VSCSI = ("traces", "cloudphysics", "cloudPhysicsIO.vscsi")


def reference_rows(algo):
    path = SHARED / "reference" / "libcachesim.csv"
    if not path.exists():
        return []
    with open(path) as f:
        return [r for r in csv.DictReader(f) if r["algo"] == algo]


@pytest.mark.parametrize("row", reference_rows("LRU"), ids=lambda r: f"{r['trace']}-{r['cache_size']}-{r['unit_size']}")
def test_lru_agrees_with_libcachesim(shared, row):
    path = shared("traces", *row["trace"].split("/"))
    unit = row["unit_size"] == "true"
    r = iostack.simulate(path, policy="lru", cache_size=int(row["cache_size"]), unit_size=unit)
    assert r["miss_ratio"] == pytest.approx(float(row["miss_ratio"]), abs=1e-9)
    assert r["cache_unit"] == ("objects" if unit else "bytes")
    if not unit:
        assert r["byte_miss_ratio"] == pytest.approx(float(row["byte_miss_ratio"]), abs=1e-9)


def test_lists_give_a_dataframe_with_one_row_per_run(shared):
    path = shared(*VSCSI)
    df = iostack.simulate(path, policy=["lru", "fifo", "arc"], cache_size=[489, "2448"], unit_size=True)
    assert isinstance(df, pd.DataFrame)
    assert df.shape[0] == 6
    for col in ["trace", "policy", "cache_size", "mode", "requests", "hits", "miss_ratio", "byte_miss_ratio",
                "page_size", "unit_size", "format", "metadata_bytes_per_object"]:
        assert col in df.columns
    assert list(df["policy"]) == ["lru", "lru", "fifo", "fifo", "arc", "arc"]
    assert list(df["cache_size"]) == [489, 2448] * 3
    assert (df["requests"] == 113872).all()
    assert (df["format"] == "vscsi").all()
    # Each run of the sweep equals the same run alone.
    alone = iostack.simulate(path, policy="fifo", cache_size=2448, unit_size=True)
    assert alone["hits"] == df.iloc[3]["hits"]


def test_block_mode_and_byte_sizes(shared):
    path = shared(*VSCSI)
    r = iostack.simulate(path, policy="lru", cache_size="4MiB", mode="block", page_size=4096)
    assert r["cache_size"] == 1024 and r["cache_unit"] == "blocks"
    assert r["blocks"] >= r["requests"]
    assert 0 < r["block_miss_ratio"] < 1
    n = iostack.simulate(path, policy="lru", cache_size=1024, mode="block")
    assert n["hits"] == r["hits"]


def test_in_memory_traces():
    keys = np.array([1, 2, 3, 1, 4, 2, 1], dtype=np.int64)
    r = iostack.simulate({"offset": keys}, policy="lru", cache_size=3, unit_size=True)
    assert (r["requests"], r["hits"]) == (7, 2)
    df = pd.DataFrame({"offset": keys, "length": 4096, "op": ["R", "W", "R", "R", "W", "R", "R"]})
    assert iostack.simulate(df, policy="lru", cache_size=3, unit_size=True)["hits"] == 2
    assert iostack.simulate(df, policy="lru", cache_size=3 * 4096)["hits"] == 2


def test_read_trace_round_trips_through_simulate(shared):
    path = shared(*VSCSI)
    df = iostack.read_trace(path)
    assert list(df.columns)[:6] == ["time_ns", "offset", "length", "op", "pid", "device"]
    assert len(df) == 113872
    assert set(df["op"].unique()) <= {"R", "W"}
    assert df["time_ns"].iloc[0] == 0 and df["time_ns"].is_monotonic_increasing
    raw = iostack.read_trace(path, as_frame=False)
    assert raw["offset"].dtype == np.uint64 and raw["op"].dtype == np.uint8
    from_file = iostack.simulate(path, policy="arc", cache_size=489, unit_size=True)
    from_frame = iostack.simulate(df, policy="arc", cache_size=489, unit_size=True)
    assert from_file["hits"] == from_frame["hits"]


def test_errors_are_python_exceptions(shared, tmp_path):
    path = shared(*VSCSI)
    with pytest.raises(FileNotFoundError, match="no-such-trace"):
        iostack.simulate(tmp_path / "no-such-trace.csv", policy="lru", cache_size=10)
    with pytest.raises(FileNotFoundError):
        iostack.read_trace(tmp_path / "missing.vscsi")
    with pytest.raises(ValueError, match="unknown policy `nosuch`.*lru"):
        iostack.simulate(path, policy="nosuch", cache_size=10)
    with pytest.raises(ValueError, match="unknown trace format"):
        iostack.simulate(path, policy="lru", cache_size=10, format="nosuch")
    with pytest.raises(ValueError, match="at least 1"):
        iostack.simulate(path, policy="lru", cache_size=0)
    with pytest.raises(ValueError, match="counts objects"):
        iostack.simulate(path, policy="lru", cache_size="64MiB", unit_size=True)
    with pytest.raises(ValueError, match="mode"):
        iostack.simulate(path, policy="lru", cache_size=10, mode="pages")
    bad = tmp_path / "bad.csv"
    bad.write_text("time_ns,offset,length,op\n0,0,4096,R\n1,xyz,4096,R\n")
    with pytest.raises(ValueError, match="bad.csv.*line 3.*offset"):
        iostack.simulate(bad, policy="lru", cache_size=10, format="csv")
    skipped = iostack.simulate(bad, policy="lru", cache_size=10, format="csv", skip_invalid=True)
    assert (skipped["requests"], skipped["skipped"]) == (1, 1)
    empty = tmp_path / "empty.csv"
    empty.write_text("time_ns,offset,length,op\n")
    with pytest.raises(ValueError, match="no requests"):
        iostack.simulate(empty, policy="lru", cache_size=10, format="csv")
    with pytest.raises(ValueError, match="offset"):
        iostack.simulate({"length": [1, 2]}, policy="lru", cache_size=10)
    with pytest.raises(ValueError, match="negative"):
        iostack.simulate({"offset": [1, -2]}, policy="lru", cache_size=10)


def iostack_cmd(*args):
    code = "import sys; from iostack.cli import main; sys.argv = ['iostack', *sys.argv[1:]]; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True)


def test_cli_json(shared):
    path = shared(*VSCSI)
    p = iostack_cmd("sim", str(path), "--policy", "lru,arc", "--cache", "489,2448", "--unit-size", "--json")
    assert p.returncode == 0, p.stderr
    runs = json.loads(p.stdout)
    assert [(r["policy"], r["cache_size"]) for r in runs] == [("lru", 489), ("lru", 2448), ("arc", 489), ("arc", 2448)]
    py = iostack.simulate(path, policy=["lru", "arc"], cache_size=[489, 2448], unit_size=True)
    assert [r["miss_ratio"] for r in runs] == list(py["miss_ratio"])
    assert p.stderr == ""  # no progress bar when stderr is not a terminal


def test_cli_errors_are_one_line(tmp_path):
    p = iostack_cmd("sim", str(tmp_path / "missing.csv"), "--policy", "lru", "--cache", "10")
    assert p.returncode == 1
    assert p.stderr.count("\n") == 1 and "missing.csv" in p.stderr and "panicked" not in p.stderr
    p = iostack_cmd("sim", str(tmp_path / "missing.csv"), "--policy", "nope", "--cache", "10")
    assert p.returncode == 1 and "valid:" in p.stderr


def test_cli_console_script_if_installed(shared):
    path = shared(*VSCSI)
    exe = os.path.join(os.path.dirname(sys.executable), "iostack")
    if not os.path.exists(exe):
        pytest.skip("the iostack console script is not installed beside this Python")
    p = subprocess.run([exe, "sim", str(path), "-p", "lru", "-c", "489", "--unit-size"], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "0.837958" in p.stdout
