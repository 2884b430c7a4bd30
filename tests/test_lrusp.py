"""LRU-SP with application hints and per-process results from Python."""

import json
import subprocess
import sys

import numpy as np
import pytest

import iostack


def loop_trace(n=1000, rounds=8):
    """One process scanning n blocks of file 5 `rounds` times (8 KiB blocks)."""
    blocks = np.tile(np.arange(n, dtype=np.uint64), rounds)
    return {
        "offset": blocks * 8192,
        "length": np.full(blocks.shape[0], 8192, dtype=np.uint64),
        "pid": np.ones(blocks.shape[0], dtype=np.uint32),
        "file_id": np.full(blocks.shape[0], 5, dtype=np.int64),
        "file_offset": blocks * 8192,
    }


def test_mru_loop_exact_with_hints_as_python_data():
    t = loop_trace()
    kw = dict(mode="block", page_size=8192, cache_size=256)
    lru = iostack.simulate(t, policy="lru", per_process=True, **kw)
    assert lru["processes"][0]["misses"] == 8000
    mru = iostack.simulate(t, policy="lrusp", hints=[{"pid": 1, "policy": "mru", "file_list": [5]}], **kw)
    assert mru["processes"] == [
        {"pid": 1, "requests": 8000, "hits": 1792, "misses": 6208, "miss_ratio": 6208 / 8000,
         "blocks": 8000, "block_hits": 1792, "block_misses": 6208}
    ]
    # The same from a TOML file and from the oracle.
    oracle = iostack.simulate(t, policy="lrusp", hints="oracle:lookahead=2000", **kw)
    assert oracle["processes"][0]["misses"] <= 6208


def test_hints_file(tmp_path):
    h = tmp_path / "h.toml"
    h.write_text('[[process]]\npid = 1\npolicy = "mru"\n')
    r = iostack.simulate(loop_trace(), policy="lrusp", hints=h, mode="block", page_size=8192, cache_size=256)
    assert r["processes"][0]["misses"] == 6208


@pytest.mark.parametrize(
    "hints, message",
    [
        ([{"pid": 7, "policy": "mru"}], "pid 7 makes no request"),
        ([{"pid": 1, "policy": "clock"}], "policy `clock` is not lru or mru"),
        ([{"pid": 1, "policy": "lru", "files": {9: 1}}], "file 9 appears in no request"),
        ([{"pid": 1, "policy": "lru", "block_list": [[5, 3, 1]]}], "block_list[0]"),
        ([{"pid": 1, "policy": "lru", "file_list": [5] * 5001}], "limit of 5000"),
        (42, "hints: expected"),
    ],
)
def test_bad_hints_raise_value_error(hints, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]").replace("`", "`")):
        iostack.simulate(loop_trace(n=10, rounds=1), policy="lrusp", hints=hints, mode="block", page_size=8192, cache_size=4)


def write_loop_csv(path, n=1000, rounds=8):
    """`loop_trace` as an iostack CSV file (the timed stack reads files)."""
    lines = ["time_ns,offset,length,op,pid,device,file,file_offset,file_size"]
    for i in range(n * rounds):
        b = i % n
        lines.append(f"{i},{b * 8192},8192,R,1,0,5,{b * 8192},")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_run_with_hints_and_per_process(tmp_path):
    t = write_loop_csv(tmp_path / "loop.csv")
    kw = dict(page_size=8192, cache_size=256, prefetch="none", device="fixed:1ms", locality=False)
    lru = iostack.run(t, policy="lru", per_process=True, **kw)
    assert lru["processes"][0]["block_misses"] == 8000
    mru = iostack.run(t, policy="lrusp", hints=[{"pid": 1, "policy": "mru"}], **kw)
    p = mru["processes"][0]
    assert (p["block_misses"], p["misses"], p["device_requests"]) == (6208, 6208, 6208)
    # The hints are echoed in the config, which re-runs as it is.
    assert mru["config"]["hints"] == {"process": [{"pid": 1, "policy": "mru"}]}
    again = iostack.run(t, config=mru)
    assert again["processes"][0]["block_misses"] == 6208
    with pytest.raises(ValueError, match="pid 7 makes no request"):
        iostack.run(t, policy="lrusp", hints=[{"pid": 7, "policy": "mru"}], **kw)


def run_cli(*args):
    """Runs the installed Python entry point of the CLI in a child process."""
    return subprocess.run(
        [sys.executable, "-c", "import sys; from iostack.cli import main; sys.argv[0] = 'iostack'; main()", *args],
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize("preset, policy, prefetch", [("acfs-3", "lrusp:calls=off", "ca:b=16"), ("acfs-6", "lrusp", "ca:b=16")])
def test_preset_keyword_echoes_its_config_and_equals_the_cli(tmp_path, preset, policy, prefetch):
    t = tmp_path / "cs3.csv"
    g = run_cli("gen", "acfs-cs3", "-o", str(t), "--format", "csv", "--interarrival", "2ms", "--param", "patterns=2", "--param", "mb=1")
    assert g.returncode == 0, g.stderr
    hints = tmp_path / "cs3.csv.hints.toml"
    assert hints.exists()
    kw = dict(device="hdd:rz56", cache="512KiB", locality=False)
    r = iostack.run(t, preset=preset, hints=hints, **kw)
    c = r["config"]
    assert (c["policy"], c["prefetch"], c["sched"], c["page_size"], c["max_request"], c["think"]) == (policy, prefetch, "noop", 8192, "8KiB", "trace")
    # A keyword overrides the preset's key (the cache), as a flag does on the command line.
    assert c["cache"] == "512KiB"
    p = run_cli("run", str(t), "--preset", preset, "--hints", str(hints), "--device", "hdd:rz56", "--cache", "512KiB", "--no-locality", "--json")
    assert p.returncode == 0, p.stderr
    cli = json.loads(p.stdout)
    assert cli["config"]["policy"] == policy and cli["config"]["prefetch"] == prefetch
    for key in ("elapsed_ns", "device_requests", "device_busy_ns"):
        assert r[key] == cli[key], key
    assert r["processes"] == cli["processes"]
    assert r["device_requests"] > 0 and r["processes"][0]["hints"]["matched"] > 0
