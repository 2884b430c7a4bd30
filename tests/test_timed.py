"""iostack.run: the timed stack from Python."""

import json

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
