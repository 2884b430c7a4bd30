"""iostack.run: the timed stack from Python."""

import json
import subprocess
import sys

import pytest

import iostack


def _trace(tmp_path):
    p = tmp_path / "t.csv"
    lines = ["time_ns,pid,op,offset,length,device,file,file_offset,file_size"]
    for i in range(64):
        lines.append(f"{i * 1000},1,R,{(1000 + i) * 4096},4096,0,,,")
    p.write_text("\n".join(lines) + "\n")
    return p


def test_run_reports_and_echoes_config(tmp_path):
    t = _trace(tmp_path)
    r = iostack.run(t, policy="lru", cache=256, prefetch="linux", sched="cscan", device="fixed:9.5ms")
    for key in ("config", "elapsed_ns", "device_busy_ns", "device_requests", "hit_ratio"):
        assert key in r
    assert r["config"]["cache"] == "256"
    assert r["front"]["requests"] == 64
    # A sequential read with readahead needs far fewer device requests than blocks.
    assert r["device_requests"] < 20
    # The echoed config re-runs to the same result.
    again = iostack.run(t, config=r)
    assert again == r


def test_dump_and_errors(tmp_path):
    t = _trace(tmp_path)
    out = tmp_path / "dev.csv"
    r = iostack.run(t, cache=16, device="fixed:1ms", prefetch="none", dump={"device": out})
    assert out.read_text().count("\n") == r["device_requests"] + 1
    try:
        iostack.run(t, policy="nosuch")
    except ValueError as e:
        assert "nosuch" in str(e)
    else:
        raise AssertionError("unknown policy accepted")
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps(r))
    assert iostack.run(t, config=cfg)["config"] == r["config"]


def test_bad_traces_and_dumps_raise_value_errors(tmp_path):
    t = _trace(tmp_path)
    bad = tmp_path / "bad.csv"
    text = t.read_text().splitlines()
    text[6] = "5000,1,R,12x,4096,0,,,"
    bad.write_text("\n".join(text) + "\n")
    out = tmp_path / "x.csv"
    # The message names the file, line and field; nothing is written.
    with pytest.raises(ValueError, match=r"bad\.csv: line 7: field `offset`"):
        iostack.run(bad, cache=16, dump={"device": out})
    assert not out.exists()
    with pytest.raises(ValueError, match="front, cache, sched, device"):
        iostack.run(t, cache=16, dump={"disk": out})
    with pytest.raises(ValueError, match="trace being read"):
        iostack.run(t, cache=16, dump={"device": t})
    with pytest.raises(FileNotFoundError):
        iostack.run(tmp_path / "missing.csv", cache=16)
    assert not out.exists()


def _two_device_trace(tmp_path):
    lines = ["time_ns,pid,op,offset,length,device,file,file_offset,file_size"]
    for i in range(30):
        lines.append(f"{i * 100000},1,R,{i * 40960},4096,0,,,")
        if i < 20:
            lines.append(f"{i * 100000},2,R,{i * 40960},4096,1,,,")
    p = tmp_path / "two.csv"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize("device", [{0: "fixed:1ms", 1: "fixed:10ms"}, "0=fixed:1ms,1=fixed:10ms"])
def test_run_with_a_device_per_device_id(tmp_path, device):
    r = iostack.run(_two_device_trace(tmp_path), prefetch="none", sched="noop", device=device, locality=False)
    assert r["config"]["device"] == "0=fixed:1ms,1=fixed:10ms"
    devs = {d["id"]: d for d in r["devices"]}
    assert (devs[0]["requests"], devs[0]["busy_ns"]) == (30, 30 * 1_000_000)
    assert (devs[1]["requests"], devs[1]["busy_ns"]) == (20, 20 * 10_000_000)
    assert r["device_busy_ns"] == 30 * 1_000_000 + 20 * 10_000_000
    procs = {p["pid"]: p for p in r["processes"]}
    assert procs[1]["device_requests"] == 30 and procs[2]["device_max_response_ns"] == 10_000_000


def test_run_device_map_errors(tmp_path):
    t = _two_device_trace(tmp_path)
    with pytest.raises(ValueError, match="device id 1"):
        iostack.run(t, device={0: "fixed:1ms"}, locality=False)
    with pytest.raises(ValueError, match="not a device id"):
        iostack.run(t, device={"a": "fixed:1ms"}, locality=False)


def test_run_warns_when_processes_do_not_interleave(tmp_path):
    # Process 2's requests come after all of process 1's, at times going back to 0.
    lines = ["time_ns,pid,op,offset,length,device,file,file_offset,file_size"]
    lines += [f"{i * 1000000},1,R,{i * 40960},4096,0,,," for i in range(50)]
    lines += [f"{i * 1000000},2,R,{(1000 + i) * 40960},4096,0,,," for i in range(50)]
    t = tmp_path / "seq.csv"
    t.write_text("\n".join(lines) + "\n")
    with pytest.warns(iostack.timed.TraceOrderWarning, match="trace time goes backwards"):
        r = iostack.run(t, device="fixed:1ms", locality=False)
    assert len(r["warnings"]) == 1


def test_redcap_from_python(tmp_path):
    # 64 sequential 4 KiB reads of blocks 1000..1063: three segments of 32 blocks, three misses.
    t = _trace(tmp_path)
    r = iostack.run(t, cache=8, prefetch="none", sched="noop", max_request="128KiB", locality=False, redcap="on")
    assert r["redcap"]["requests"] == 64
    assert r["redcap"]["misses"] == 3
    assert r["redcap"]["hits"] == 61
    assert r["config"]["redcap"] == "on"
    assert "redcap" not in iostack.run(t, cache=8, locality=False)
    with pytest.raises(ValueError):
        iostack.run(t, cache=8, redcap="size=3")


def test_ada_from_python(tmp_path):
    t = _trace(tmp_path)
    r = iostack.run(t, cache=8, prefetch="none", sched="noop", max_request="128KiB", locality=False, redcap="on", ada="window=16")
    assert r["ada"]["window"] == 16
    assert r["ada"]["reads"] == 64
    assert 0.0 <= r["ada"]["activation_share"] <= 1.0
    assert all(s["state"] in ("active", "inactive") for s in r["ada"]["switches"])
    assert len(r["ada"]["windows"]) == 4
    assert r["config"]["ada"] == "window=16"
    with pytest.raises(ValueError, match="redcap"):
        iostack.run(t, cache=8, locality=False, ada="on")
    with pytest.raises(ValueError, match="cadence"):
        iostack.run(t, cache=8, locality=False, redcap="on", ada="cadence=daily")


def test_sched_select_from_python(tmp_path):
    """`iostack.run(sched_select=...)` gives the command line's report and refuses bad specs."""
    t = tmp_path / "ior.csv"
    subprocess.run([sys.executable, "-m", "iostack.cli", "gen", "ior", "--processes", "4", "--param", "file_size=4MiB", "-o", str(t)],
                   check=True, capture_output=True)
    opts = dict(prefetch="none", cache=8, max_request="128KiB", locality=False)
    r = iostack.run(t, sched_select="deadline,cfq,window=100", **opts)
    s = r["sched_select"]
    assert s["window"] == 100 and s["reads"] == 256 and s["checks"] == 2
    assert [x["spec"] for x in s["schedulers"]] == ["deadline", "cfq"]
    assert r["config"]["sched_select"] == "deadline,cfq,window=100"
    cli = subprocess.run(
        [sys.executable, "-m", "iostack.cli", "run", str(t), "--prefetch", "none", "--cache", "8", "--max-request", "128KiB",
         "--no-locality", "--sched-select", "deadline,cfq,window=100", "--json"],
        capture_output=True, text=True, check=True,
    )
    assert json.loads(cli.stdout)["sched_select"] == s
    assert "sched_select" not in iostack.run(t, **opts)
    with pytest.raises(ValueError, match="two schedulers"):
        iostack.run(t, sched_select="cfq", **opts)


def test_prefetch_select_from_python(tmp_path):
    """`iostack.run(prefetch_select=...)` gives the command line's report and refuses bad specs."""
    t = tmp_path / "ior.csv"
    table = tmp_path / "table.json"
    for args in (["gen", "ior", "--processes", "4", "--param", "file_size=4MiB", "-o", str(t)],
                 ["kdsim", "train", "--device", "hdd:st3400620as", "--samples", "8", "--output", str(table)]):
        subprocess.run([sys.executable, "-m", "iostack.cli", *args], check=True, capture_output=True)
    spec = f"none,linux,window=50,table={table}"
    opts = dict(cache="4MiB", locality=False)
    r = iostack.run(t, prefetch_select=spec, **opts)
    s = r["prefetch_select"]
    assert s["window"] == 50 and s["checks"] > 0
    assert [x["spec"] for x in s["prefetchers"]] == ["none", "linux"]
    assert s["switches"][0]["prefetch"] == "linux"
    assert r["config"]["prefetch_select"] == spec
    cli = subprocess.run(
        [sys.executable, "-m", "iostack.cli", "run", str(t), "--cache", "4MiB", "--no-locality", "--prefetch-select", spec, "--json"],
        capture_output=True, text=True, check=True,
    )
    assert json.loads(cli.stdout)["prefetch_select"] == s
    assert "prefetch_select" not in iostack.run(t, **opts)
    with pytest.raises(ValueError, match="table"):
        iostack.run(t, prefetch_select="none,linux", **opts)


def test_preload_caches_blocks_before_the_run(tmp_path):
    """``preload`` from Python: the preloaded blocks hit, the rest miss, and a bad value is a
    ``ValueError`` naming the option."""
    t = tmp_path / "t.csv"
    lines = ["time_ns,pid,op,offset,length,device,file,file_offset,file_size"]
    lines += [f"{i * 1000},1,R,{b * 4096},4096,0,,," for i, b in enumerate([0, 1, 2, 0, 1])]
    t.write_text("\n".join(lines) + "\n")
    stack = dict(cache=4, prefetch="none", device="fixed:1ms", sched="noop", locality=False)
    cold = iostack.run(t, **stack)
    warm = iostack.run(t, preload="0-1", **stack)
    assert (cold["device_requests"], cold["hit_ratio"]) == (3, 0.4)
    assert (warm["device_requests"], warm["hit_ratio"]) == (1, 0.8)
    assert warm["config"]["preload"] == "0-1"
    with pytest.raises(ValueError, match="preload"):
        iostack.run(t, preload="1-0", **stack)


def test_cpus_share_the_think_time(tmp_path):
    """``cpus`` from Python: two processes computing 30 ms each between cached blocks take 30 ms
    side by side and 60 ms on one CPU, with each one's CPU time and wait; 0 is a ``ValueError``."""
    t = tmp_path / "t.csv"
    lines = ["time_ns,pid,op,offset,length,device,file,file_offset,file_size"]
    for i in range(4):
        lines += [f"{i * 10_000_000},1,R,{i * 4096},4096,0,,,", f"{i * 10_000_000},2,R,{(100 + i) * 4096},4096,0,,,"]
    t.write_text("\n".join(lines) + "\n")
    stack = dict(cache=64, prefetch="none", device="fixed:1ms", sched="noop", think="trace", preload="0-3,100-103", locality=False)
    own = iostack.run(t, **stack)
    one = iostack.run(t, cpus=1, **stack)
    assert own["elapsed_ns"] == 30_000_000 and "cpu" not in own
    assert one["elapsed_ns"] == 60_000_000
    assert one["config"]["cpus"] == 1
    assert [(p["cpu_ns"], p["cpu_wait_ns"]) for p in one["processes"]] == [(30_000_000, 20_000_000), (30_000_000, 30_000_000)]
    assert one["cpu"]["busy_ns"] == 60_000_000 and one["cpu"]["quantum_ns"] == 100_000_000
    with pytest.raises(ValueError, match="cpus"):
        iostack.run(t, cpus=0, **stack)
