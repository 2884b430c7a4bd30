"""Arguments the Python API must refuse with a ValueError naming them, and inputs that once gave
silent wrong answers (device ids that share low bits)."""

import math

import numpy as np
import pandas as pd
import pytest

import iostack


def _frame(**cols):
    base = {"offset": [0, 4096, 8192]}
    base.update(cols)
    return base


@pytest.mark.parametrize(
    "trace, words",
    [
        (_frame(pid=[0, 2**40, 1]), ["pid", "above"]),
        (_frame(device=[0, 2**32, 1]), ["device", "above"]),
        (_frame(op=[0.0, math.nan, 1.0]), ["op", "row 1"]),
        ({"offset": [True, False, True]}, ["offset", "booleans"]),
        ({"offset": 5}, ["offset", "scalar"]),
        ({"offset": np.zeros((2, 2), dtype=np.uint64)}, ["offset", "2-D"]),
        ({"offset": [0.5, 1.0]}, ["offset", "whole"]),
        ({"offset": [-1, 1]}, ["offset", "negative"]),
        ({"offset": [1e30]}, ["offset", "above"]),
        ({"offset": ["a", "b"]}, ["offset", "numbers"]),
        (_frame(length=[1, 2]), ["length"]),
        (np.zeros((3, 2)), ["trace"]),
        (42, ["trace"]),
    ],
)
def test_bad_in_memory_traces_name_the_field(trace, words):
    with pytest.raises(ValueError) as e:
        iostack.simulate(trace, policy="lru", cache_size=10, unit_size=True)
    for w in words:
        assert w in str(e.value), str(e.value)


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"unit_size": "no"}, "unit_size"),
        ({"unit_size": 1}, "unit_size"),
        ({"skip_invalid": "yes"}, "skip_invalid"),
        ({"page_size": True}, "page_size"),
        ({"page_size": 4096.5}, "page_size"),
        ({"page_size": 0}, "page_size"),
        ({"threads": -1}, "threads"),
        ({"mode": 3}, "mode"),
        ({"cache_size": True}, "cache_size"),
        ({"cache_size": -5}, "cache_size"),
        ({"policy": 7}, "policy"),
    ],
)
def test_bad_simulate_arguments_name_themselves(kwargs, name):
    args = {"policy": "lru", "cache_size": 10, "unit_size": True}
    args.update(kwargs)
    with pytest.raises(ValueError) as e:
        iostack.simulate({"offset": [0, 1, 2]}, **args)
    assert name in str(e.value), str(e.value)


def test_locality_takes_a_boolean(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("offset\n0\n4096\n")
    with pytest.raises(ValueError, match="locality"):
        iostack.run(p, locality="no")
    with pytest.raises(ValueError, match="skip_invalid"):
        iostack.run(p, skip_invalid="no")
    with pytest.raises(ValueError, match="skip_invalid"):
        iostack.analyze(p, skip_invalid="no")
    with pytest.raises(ValueError, match="trace"):
        iostack.run(12)
    assert iostack.run(p, locality=False)["locality"] is None


def test_devices_sharing_low_bits_stay_apart():
    t = {"offset": [0, 0, 0, 0], "device": np.array([0, 65536, 131072, 0], dtype=np.uint64)}
    for mode in ({"mode": "block"}, {"unit_size": True}):
        r = iostack.simulate(t, policy="lru", cache_size=10, **mode)
        assert r["hits"] == 1, (mode, r)


def test_non_utf8_arguments_are_errors_not_tracebacks(tmp_path, capfd):
    from iostack import _core

    name = b"\xfftrace".decode("utf-8", "surrogateescape")
    assert _core.main(["iostack", "sim", name, "-p", "lru", "-c", "1"]) == 1
    assert "No such file" in capfd.readouterr().err
    p = tmp_path / "t.csv"
    p.write_text("offset\n0\n")
    policy = b"l\xffru".decode("utf-8", "surrogateescape")
    assert _core.main(["iostack", "sim", str(p), "-p", policy, "-c", "1"]) == 2
    assert "invalid UTF-8" in capfd.readouterr().err


_EXTREMES = ["0", "1", "4294967296", "18446744073709551615", "-1", "1e308", "nan", ""]
_POLICY_KEYS = {
    "slru": ["segments"], "clock": ["bits"], "s3fifo": ["small", "ghost", "threshold"], "lirs": ["hir"],
    "2q": ["kin", "kout"], "linux": ["ratio", "page", "shadows"], "splitlru": ["up", "down"],
    "dulo": ["bank", "evict", "corr", "distance", "seq_max", "table_kib"],
}
_COMPONENTS = [("prefetch", "pm:{}"), ("prefetch", "pa:{}"), ("prefetch", "linux:max={}"), ("sched", "batch:{}"),
               ("sched", "deadline:fifo_batch={}"), ("device", "fixed:{}ms"), ("device", "hdd:st3400620as,zones={}"),
               ("device", "hdd:st3400620as,rpm={}"), ("device", "ssd:x25m,channels={}"), ("think", "{}s"),
               ("flush_interval", "{}"), ("queue_depth", "{}"), ("cache", "{}")]


def test_parameters_at_their_extremes_raise_value_error_not_panic(tmp_path):
    # A Rust panic would surface as pyo3_runtime.PanicException, which is not an Exception:
    # it would escape the `except ValueError` below and fail the test.
    trace = {"offset": [i * 4096 for i in range(50)] * 2, "length": [4096] * 100}
    for policy, keys in _POLICY_KEYS.items():
        for key in keys:
            for v in _EXTREMES:
                for mode in ({"mode": "block"}, {"unit_size": True}):
                    try:
                        iostack.simulate(trace, policy=f"{policy}:{key}={v}", cache_size=8, **mode)
                    except ValueError:
                        pass
    p = tmp_path / "t.csv"
    p.write_text("offset,length\n" + "".join(f"{i * 4096},4096\n" for i in range(50)))
    for field, spec in _COMPONENTS:
        for v in _EXTREMES:
            value = spec.format(v)
            if field == "queue_depth":
                try:
                    value = int(v)
                except ValueError:
                    continue
            try:
                iostack.run(p, locality=False, **{field: value})
            except ValueError:
                pass


@pytest.mark.parametrize("sig, code", [("SIGINT", 130), ("SIGTERM", 143)])
def test_console_command_stops_on_signals_without_traceback(tmp_path, sig, code):
    import os
    import signal
    import subprocess
    import sys
    import time

    script = ("import sys\nfrom iostack.cli import main\n"
              "sys.argv = ['iostack', 'gen', 'zipf', '--objects', '1000000', '--requests', '1000000000', '-o', 'big.csv.gz']\n"
              "main()\n")
    p = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while not list(tmp_path.iterdir()) and time.time() < deadline:
        time.sleep(0.05)
    assert list(tmp_path.iterdir()), "the output was never started"
    sent = time.time()
    os.kill(p.pid, getattr(signal, sig))
    _, err = p.communicate(timeout=30)
    assert time.time() - sent < 1.0
    assert p.returncode == code, err
    assert b"Traceback" not in err, err
    assert list(tmp_path.iterdir()) == []


def _columns():
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    dtypes = st.sampled_from(["u8", "i8", "f8", "u4", "i4", "bool", "U3", "O"])
    return st.fixed_dictionaries(
        {"offset": hnp.arrays(dtypes, st.integers(0, 6))},
        optional={name: hnp.arrays(dtypes, st.integers(0, 6)) for name in ("length", "time_ns", "op", "pid", "device")},
    )


def test_in_memory_rows_get_the_readers_checks():
    # A terabyte-long row (found by the random test below) made block-mode runs walk billions
    # of pages; the readers refuse it, and so must in-memory columns, naming the row.
    with pytest.raises(ValueError, match=r"row 1: column `length`.*4 GiB"):
        iostack.simulate({"offset": [0, 4096], "length": [4096, 1 << 44]}, policy="lru", cache_size=4, mode="block")
    with pytest.raises(ValueError, match=r"row 0: column `offset`.*2\^64"):
        iostack.simulate({"offset": [2**64 - 100], "length": [4096]}, policy="lru", cache_size=4, mode="block")


def test_random_in_memory_traces_give_a_result_or_a_value_error():
    from hypothesis import HealthCheck, given, settings

    @settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_columns())
    def check(cols):
        for mode in ({"mode": "block"}, {"unit_size": True}):
            try:
                r = iostack.simulate(cols, policy=["lru", "dulo"], cache_size=4, **mode)
            except ValueError:
                continue
            assert len(r) == 2

    check()


def test_random_run_options_give_a_result_or_a_value_error(tmp_path):
    from hypothesis import given, settings, strategies as st

    p = tmp_path / "t.csv"
    p.write_text("offset,length\n" + "".join(f"{i * 4096},4096\n" for i in range(20)))
    values = st.one_of(st.integers(-2, 2**65), st.floats(allow_nan=True), st.text(max_size=8), st.booleans(), st.none())

    @settings(max_examples=200, deadline=None)
    @given(st.dictionaries(st.sampled_from(["cache", "page_size", "queue_depth", "think", "prefetch", "sched",
                                            "device", "seed", "max_request", "flush_interval"]), values, max_size=3))
    def check(opts):
        try:
            iostack.run(p, locality=False, **opts)
        except ValueError:
            pass

    check()
