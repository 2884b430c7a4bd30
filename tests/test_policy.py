"""Replacement policies written in Python (iostack.Policy) in simulate and run."""

import importlib.util
import pathlib

import numpy as np
import pytest

import iostack

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _example():
    spec = importlib.util.spec_from_file_location("python_lru", ROOT / "examples" / "python_lru.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


PyLRU = _example().PyLRU


def _zipf(n=20_000, objects=3_000, seed=3):
    return _example().zipf_trace(n=n, objects=objects, seed=seed)


def test_example_lru_matches_builtin_on_a_shared_trace(shared):
    trace = shared("traces", "cloudphysics", "cloudPhysicsIO.vscsi")
    mine = iostack.simulate(trace, policy=PyLRU, cache_size=[489, 2448], unit_size=True)
    ref = iostack.simulate(trace, policy="lru", cache_size=[489, 2448], unit_size=True)
    assert list(mine["policy"]) == ["PyLRU", "PyLRU"]
    assert (mine["hits"] == ref["hits"]).all()
    assert (mine["miss_ratio"] == ref["miss_ratio"]).all()
    assert (mine["byte_miss_ratio"] == ref["byte_miss_ratio"]).all()


@pytest.mark.parametrize("mode,kw", [("object", {"unit_size": False}), ("block", {"page_size": 4096})])
def test_example_lru_matches_builtin_sized_and_block(mode, kw):
    t = _zipf()
    t["length"] = (np.arange(len(t["offset"])) % 7 + 1).astype(np.uint64) * 4096
    sizes = [2 ** 20, 8 * 2 ** 20] if mode == "object" else [300, 1500]
    mine = iostack.simulate(t, policy=[PyLRU, "lru"], cache_size=sizes, mode=mode, **kw)
    a, b = mine[mine.policy == "PyLRU"], mine[mine.policy == "lru"]
    assert a["hits"].tolist() == b["hits"].tolist()
    assert a["byte_miss_ratio"].tolist() == b["byte_miss_ratio"].tolist()
    if mode == "block":
        assert a["block_hits"].tolist() == b["block_hits"].tolist()


def test_one_instance_per_run_with_its_capacity_and_access_fields():
    seen = []

    class Recorder(PyLRU):
        name = "recorder"

        def __init__(self, capacity):
            super().__init__(capacity)
            seen.append(capacity)
            self.first = None

        def find(self, access):
            if self.first is None:
                self.first = access
            return super().find(access)

    t = {"offset": np.array([5, 6, 5], dtype=np.uint64), "length": np.array([512, 512, 512], dtype=np.uint64),
         "time_ns": np.array([10, 20, 30], dtype=np.uint64), "op": np.array(["R", "W", "R"]),
         "pid": np.array([7, 7, 8], dtype=np.uint32)}
    df = iostack.simulate(t, policy=Recorder, cache_size=[1, 2, 3], unit_size=True)
    assert seen == [1, 2, 3]
    assert df["policy"].tolist() == ["recorder"] * 3
    assert df["hits"].tolist() == [0, 1, 1]


def test_access_carries_what_a_rust_policy_sees():
    got, reprs = [], []

    class Spy(PyLRU):
        def find(self, access):
            reprs.append(repr(access))
            got.append((access.key, access.size, access.pid, access.op, access.time_ns, access.vtime, access.origin,
                        access.next_access))
            return super().find(access)

    t = {"offset": np.array([5, 6], dtype=np.uint64), "length": np.array([512, 100], dtype=np.uint64),
         "time_ns": np.array([10, 20], dtype=np.uint64), "op": np.array(["R", "W"]), "pid": np.array([7, 8], dtype=np.uint32)}
    iostack.simulate(t, policy=Spy, cache_size=10_000)
    assert got == [(5, 512, 7, "R", 10, 0, "demand", None), (6, 100, 8, "W", 20, 1, "demand", None)]
    assert reprs[0] == "Access(key=5, size=512, pid=7, op='R', time_ns=10, vtime=0, origin='demand')"


class PyBelady(iostack.Policy):
    """Belady's OPT: evict the entry whose next reference is furthest away."""

    needs_future = True

    def __init__(self, capacity):
        super().__init__(capacity)
        self.next = {}

    def find(self, access):
        if access.key in self.next:
            self.next[access.key] = access.next_access if access.next_access is not None else float("inf")
            return True
        return False

    def insert(self, access):
        self.next[access.key] = access.next_access if access.next_access is not None else float("inf")

    def evict(self, access):
        key = max(self.next, key=lambda k: (self.next[k], k))
        del self.next[key]
        return key


def test_needs_future_gives_next_access():
    t = _zipf(n=3000, objects=400)
    mine = iostack.simulate(t, policy=PyBelady, cache_size=[20, 100], unit_size=True)
    lru = iostack.simulate(t, policy="lru", cache_size=[20, 100], unit_size=True)
    # OPT never misses more than LRU, and here by a wide margin.
    assert (mine["miss_ratio"] < lru["miss_ratio"] - 0.02).all()


def _broken(**methods):
    return type("Broken", (PyLRU,), methods)


@pytest.mark.parametrize(
    "methods,text",
    [
        ({"evict": lambda self, a: 10 ** 9}, "evict() returned key 1000000000, which it does not hold"),
        ({"evict": lambda self, a: None}, "evict() returned None"),
        ({"evict": lambda self, a: "k"}, "evict() returned 'k', not a key"),
        ({"find": lambda self, a: True}, "find() reported a hit on key"),
        ({"find": lambda self, a: None}, "find() returned None"),
        ({"find": lambda self, a: False}, "find() reported a miss on key"),
    ],
)
def test_contract_breaches_raise_value_error(methods, text):
    t = _zipf(n=2000, objects=300)
    with pytest.raises(ValueError, match="policy Broken broke the policy contract at reference") as e:
        iostack.simulate(t, policy=_broken(**methods), cache_size=50, unit_size=True)
    assert text in str(e.value)


def test_policy_exceptions_propagate_and_bad_arguments_are_clear():
    class Boom(PyLRU):
        def evict(self, access):
            raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        iostack.simulate(_zipf(n=2000), policy=Boom, cache_size=10, unit_size=True)
    with pytest.raises(NotImplementedError, match="find"):
        iostack.simulate(_zipf(n=100), policy=type("Empty", (iostack.Policy,), {}), cache_size=10, unit_size=True)
    with pytest.raises(ValueError, match="not an instance"):
        iostack.simulate(_zipf(n=100), policy=PyLRU(10), cache_size=10, unit_size=True)
    with pytest.raises(ValueError, match="not a subclass of iostack.Policy"):
        iostack.simulate(_zipf(n=100), policy=dict, cache_size=10, unit_size=True)
    with pytest.raises(ValueError, match="at least 1"):
        iostack.simulate(_zipf(n=100), policy=PyLRU, cache_size=0, unit_size=True)


def _timed_trace(tmp_path):
    p = tmp_path / "t.csv"
    rng = np.random.default_rng(5)
    lines = ["time_ns,pid,op,offset,length,device,file,file_offset,file_size"]
    for i in range(3000):
        block = int(rng.zipf(1.3)) % 2000 if i % 3 else 5000 + i
        op = "W" if i % 11 == 0 else "R"
        lines.append(f"{i * 100000},{1 + i % 2},{op},{block * 4096},{4096 * (1 + i % 3)},0,,,")
    p.write_text("\n".join(lines) + "\n")
    return p


def test_run_with_python_lru_matches_builtin(tmp_path):
    t = _timed_trace(tmp_path)
    opts = dict(cache=256, prefetch="linux", sched="cscan", device="hdd:st3400620as")
    mine = iostack.run(t, policy=PyLRU, **opts)
    ref = iostack.run(t, policy="lru", **opts)
    assert mine["config"]["policy"] == "PyLRU"
    for key in ("elapsed_ns", "device_busy_ns", "device_requests", "hit_ratio"):
        assert mine[key] == ref[key], key
    assert mine["cache"] == ref["cache"]


def test_run_reports_a_breach(tmp_path):
    with pytest.raises(ValueError, match="evict\\(\\) returned key"):
        iostack.run(_timed_trace(tmp_path), policy=_broken(evict=lambda self, a: 10 ** 9), cache=64, device="fixed:1ms")
