"""iostack.run: the timed stack from Python."""

import json

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
