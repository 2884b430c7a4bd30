"""Messages that say what is going on: Python errors in Python's words, warnings for a cache
smaller than every object and for a scheduler that has nothing to reorder, sim's --mapping."""

import subprocess
import sys
import warnings

import pytest

import iostack


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "iostack.cli", *map(str, args)], capture_output=True, text=True)


def _csv(tmp_path, n=200, pids=1):
    p = tmp_path / f"t{pids}.csv"
    rows = ["time_ns,pid,op,offset,length,device,file,file_offset,file_size"]
    for i in range(n):
        rows.append(f"{i * 1_000_000},{1 + i % pids},R,{(i * 7 % 50) * 4096},8192,0,,,")
    p.write_text("\n".join(rows) + "\n")
    return p


@pytest.mark.parametrize("call,start", [
    (lambda t: iostack.analyze(t, mode="nope"), "mode: invalid value 'nope' (possible values: block, object, file)"),
    (lambda t: iostack.analyze(t, page_size="abc"), "page_size: `abc` is not a size"),
    (lambda t: iostack.simulate(t, policy="nosuch"), "policy: unknown policy `nosuch`"),
    (lambda t: iostack.run(t, cache="1x"), "cache: unknown unit `x`"),
    (lambda t: iostack.run(t, sched="nosuch"), "sched: unknown scheduler `nosuch`"),
])
def test_python_errors_speak_python(tmp_path, call, start):
    with pytest.raises(ValueError) as e:
        call(_csv(tmp_path))
    msg = str(e.value)
    assert msg.startswith(start), msg
    assert "--" not in msg and "help" not in msg


def test_cache_smaller_than_every_object_warns(tmp_path):
    t = _csv(tmp_path)
    with pytest.warns(UserWarning, match="smaller than every object"):
        r = iostack.simulate(t, policy="lru", cache_size=4096)
    assert r["miss_ratio"] == 1.0 and r["requests_larger_than_cache"] == r["requests"] == 200
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = iostack.simulate(t, policy="lru", cache_size="1MiB")
    assert r["requests_larger_than_cache"] == 0 and r["miss_ratio"] < 1
    out = _cli("sim", t, "--policy", "lru", "--cache", "4096")
    assert out.returncode == 0 and "warning: lru at 4096 bytes: the cache is smaller than every object" in out.stderr


def test_scheduler_that_cannot_matter_is_said_once(tmp_path):
    t = _csv(tmp_path)
    opts = dict(cache="64KiB", prefetch="none", write_policy="through", device="hdd:st3400620as")
    with pytest.warns(UserWarning, match="`cscan` has nothing to reorder"):
        a = iostack.run(t, sched="cscan", **opts)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b = iostack.run(t, sched="noop", **opts)
        two = iostack.run(_csv(tmp_path, pids=2), sched="cscan", **opts)  # two processes: no note
        iostack.run(t, sched="cscan", **{**opts, "prefetch": "linux"})  # prefetches give it work
    assert a["elapsed_ns"] == b["elapsed_ns"]
    assert "notes" not in two
    out = _cli("run", t, "--sched", "cscan", "--cache", "64KiB", "--prefetch", "none", "--write-policy", "through")
    assert out.returncode == 0 and out.stderr.count("note: closed-loop replay of a single process") == 1


def test_sim_reads_generic_csv_with_mapping(tmp_path):
    p = tmp_path / "g.txt"
    p.write_text("".join(f"{i},R,{(i % 13) * 4096},4096\n" for i in range(100)))
    out = _cli("sim", p, "--format", "generic-csv", "--mapping", "time=0,op=1,offset=2,length=3", "--policy", "lru",
               "--cache", "5", "--unit-size", "--json")
    assert out.returncode == 0, out.stderr
    r = iostack.simulate(p, format="generic-csv", mapping="time=0,op=1,offset=2,length=3", policy="lru", cache_size=5,
                         unit_size=True)
    assert r["requests"] == 100 and '"requests": 100' in out.stdout
    with pytest.raises(ValueError, match="mapping"):
        iostack.simulate(p, format="generic-csv", policy="lru", cache_size=5, unit_size=True)
