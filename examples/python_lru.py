"""LRU written in Python, run by iostack's engines, compared with the built-in LRU.

    python examples/python_lru.py [TRACE]

With no trace, a generated Zipf workload is used. The two columns agree to every digit: the
Python class makes the same decisions as `iostack sim --policy lru`.
"""

from __future__ import annotations

import sys
from collections import OrderedDict

import numpy as np

import iostack


class PyLRU(iostack.Policy):
    """Least recently used: an ordered dict from key to nothing, most recent at the end."""

    def __init__(self, capacity):
        super().__init__(capacity)
        self.entries = OrderedDict()

    def find(self, access):
        if access.key in self.entries:
            self.entries.move_to_end(access.key)
            return True
        return False

    def insert(self, access):
        self.entries[access.key] = None

    def evict(self, access):
        key, _ = self.entries.popitem(last=False)
        return key

    def remove(self, key):
        self.entries.pop(key, None)


def zipf_trace(n=50_000, objects=5_000, alpha=0.9, seed=1):
    """Requests over `objects` keys with Zipf(alpha) popularity, as a dict of arrays."""
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, objects + 1) ** alpha
    keys = rng.choice(objects, size=n, p=p / p.sum())
    return {"offset": keys.astype(np.uint64), "length": np.full(n, 4096, dtype=np.uint64)}


def main(argv):
    trace = argv[1] if len(argv) > 1 else zipf_trace()
    sizes = [100, 500, 2000]
    mine = iostack.simulate(trace, policy=PyLRU, cache_size=sizes, unit_size=True)
    ref = iostack.simulate(trace, policy="lru", cache_size=sizes, unit_size=True)
    print(f"{'cache_size':>10}  {'PyLRU':>10}  {'lru':>10}")
    for a, b in zip(mine.itertuples(), ref.itertuples()):
        print(f"{a.cache_size:>10}  {a.miss_ratio:>10.6f}  {b.miss_ratio:>10.6f}")
    same = (mine["hits"].to_numpy() == ref["hits"].to_numpy()).all()
    print("identical" if same else "DIFFERENT")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
