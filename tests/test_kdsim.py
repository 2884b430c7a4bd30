"""iostack.kdsim_train and iostack.kdsim_accuracy: KDSim's table and virtual disk from Python."""

import json
import subprocess
import sys

import pandas as pd
import pytest

import iostack


def _trace(tmp_path, n=600):
    """Scattered 4 KiB and 8 KiB reads on the first GiB, a cycle of 50 repeated."""
    p = tmp_path / "t.csv"
    lines = ["time_ns,pid,op,offset,length,device,file,file_offset,file_size"]
    x = 12345
    cycle = []
    for _ in range(50):
        x ^= (x << 13) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 7
        x ^= (x << 17) & 0xFFFFFFFFFFFFFFFF
        cycle.append(((x >> 8) % (1 << 17) * 4096, 4096 * (1 + x % 2)))
    for i in range(n):
        off, length = cycle[i % 50]
        lines.append(f"0,1,R,{off},{length},0,,,")
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.fixture(scope="module")
def ssd_table(tmp_path_factory):
    out = tmp_path_factory.mktemp("kdsim") / "ssd.json"
    summary = iostack.kdsim_train("ssd:x25m", out, samples=2, seed=3)
    return out, summary


def test_train_writes_a_loadable_table(ssd_table):
    out, s = ssd_table
    assert s["output"] == str(out)
    assert s["columns"] == 168 and s["values_per_cell"] == 64
    assert s["cells"] == 2 * 32 * 168 and s["unreachable"] == 0
    assert s["requests"] == 2 * s["cells"]
    table = json.loads(out.read_text())
    assert table["capacity_bytes"] == s["capacity_bytes"]
    assert len(table["read"]) == 32 and len(table["write"]) == 32


def test_train_is_deterministic_per_seed(tmp_path):
    a, b, c = tmp_path / "a.json", tmp_path / "b.json", tmp_path / "c.json"
    iostack.kdsim_train("fixed:1ms", a, samples=1, seed=1, capacity="1GiB")
    iostack.kdsim_train("fixed:1ms", b, samples=1, seed=1, capacity="1GiB")
    assert a.read_text() == b.read_text()
    iostack.kdsim_train("hdd:st3400620as,capacity=2GiB", c, samples=1, seed=2)
    assert json.loads(c.read_text())["capacity_bytes"] == 2 << 30


def test_accuracy_matches_the_cli(tmp_path, ssd_table):
    table, _ = ssd_table
    t = _trace(tmp_path)
    r = iostack.kdsim_accuracy(t, "ssd:x25m", table=table, window=100, cache_size=16, prefetch="none")
    w = r["windows"]
    assert isinstance(w, pd.DataFrame)
    assert list(w.columns) == ["start", "requests", "vd_ms", "rd_ms", "diff_pct"]
    assert len(w) == 6 and list(w["start"]) == [0, 100, 200, 300, 400, 500]
    assert r["requests"] == 600 and r["window"] == 100
    assert r["mean_abs_diff_pct"] == pytest.approx(w["diff_pct"].abs().mean())
    # The same numbers as `iostack kdsim accuracy --json`.
    cli = subprocess.run(
        [sys.executable, "-m", "iostack.cli", "kdsim", "accuracy", str(t), "--device", "ssd:x25m", "--table", str(table),
         "--window", "100", "--cache", "16", "--prefetch", "none", "--json"],
        capture_output=True, text=True, check=True,
    )
    c = json.loads(cli.stdout)
    assert c["windows"] == w.to_dict("records")
    assert {k: v for k, v in c.items() if k != "windows"} == {k: v for k, v in r.items() if k != "windows"}


def test_accuracy_learns_a_table_device_exactly(tmp_path):
    """D-K4 from Python: a virtual disk learning on line from an empty table matches a table
    device exactly once every cell the trace uses has been seen."""
    dev = tmp_path / "dev.json"
    iostack.kdsim_train("fixed:2ms", dev, samples=1, capacity="1GiB")
    t = _trace(tmp_path)
    saved = tmp_path / "learned.json"
    r = iostack.kdsim_accuracy(t, f"table:{dev}", window=100, cache_size=16, prefetch="none", save_table=saved)
    assert (r["windows"]["diff_pct"].iloc[1:] == 0).all()
    assert r["table"] is None and r["trained_cells"] > 0
    assert json.loads(saved.read_text())["capacity_bytes"] == 1 << 30
    blind = iostack.kdsim_accuracy(t, f"table:{dev}", table=dev, window=100, cache_size=16, prefetch="none", size_blind=True)
    assert blind["size_blind"] is True and blind["mean_abs_diff_pct"] == 0


def test_errors(tmp_path, ssd_table):
    table, _ = ssd_table
    t = _trace(tmp_path, n=10)
    with pytest.raises(FileNotFoundError):
        iostack.kdsim_accuracy(tmp_path / "none.csv", "ssd:x25m")
    with pytest.raises(FileNotFoundError):
        iostack.kdsim_accuracy(t, "ssd:x25m", table=tmp_path / "none.json")
    with pytest.raises(ValueError, match="bytes"):
        # A table for another capacity.
        iostack.kdsim_accuracy(t, "hdd:st3400620as", table=table)
    bad = tmp_path / "bad.json"
    bad.write_text('{"capacity_bytes": 1073741824, "values_per_cell": 64, "read": [[-2]], "write": []}')
    with pytest.raises(ValueError, match="bad.json"):
        iostack.kdsim_accuracy(t, "ssd:x25m", table=bad)
    with pytest.raises(ValueError, match="window"):
        iostack.kdsim_accuracy(t, "ssd:x25m", window=0)
    with pytest.raises(ValueError):
        iostack.kdsim_accuracy(t, "nosuch:disk")
    with pytest.raises(ValueError, match="frame"):
        iostack.kdsim_accuracy(t, "ssd:x25m", frame="excel")
    with pytest.raises(ValueError, match="samples"):
        iostack.kdsim_train("ssd:x25m", tmp_path / "x.json", samples=-1)
    with pytest.raises(ValueError, match="capacity"):
        iostack.kdsim_train("fixed:1ms", tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_accuracy_with_redcap_matches_the_cli(tmp_path, ssd_table):
    """`kdsim_accuracy(redcap=...)`: REDCAP always on in front of both disks, as `--redcap`."""
    table, _ = ssd_table
    t = _trace(tmp_path)
    r = iostack.kdsim_accuracy(t, "ssd:x25m", table=table, window=100, cache_size=16, prefetch="none", redcap="on")
    assert r["redcap"] is not None and r["redcap"]["requests"] > 0
    assert iostack.kdsim_accuracy(t, "ssd:x25m", table=table, window=100, cache_size=16, prefetch="none")["redcap"] is None
    cli = subprocess.run(
        [sys.executable, "-m", "iostack.cli", "kdsim", "accuracy", str(t), "--device", "ssd:x25m", "--table", str(table),
         "--window", "100", "--cache", "16", "--prefetch", "none", "--redcap", "on", "--json"],
        capture_output=True, text=True, check=True,
    )
    c = json.loads(cli.stdout)
    assert c["windows"] == r["windows"].to_dict("records")
    assert c["redcap"] == r["redcap"]
