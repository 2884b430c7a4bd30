//! Test utilities shared by all policies: run a key sequence, and check the [`Policy`] contract
//! on random workloads.

use super::{Access, Policy};

/// Runs unit-size demand references to `keys` through `get`; returns hit or miss for each.
pub fn run_keys(policy: &mut dyn Policy, keys: &[u64]) -> Vec<bool> {
    keys.iter().enumerate().map(|(i, &k)| policy.get(&Access::unit(k, i as u64))).collect()
}

/// A deterministic pseudo-random key sequence mixing a hot set, a scan and cold keys.
pub fn mixed_keys(n: usize, seed: u64) -> Vec<u64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    (0..n)
        .map(|i| {
            let r = next();
            match r % 4 {
                0 | 1 => r % 50,           // hot set
                2 => 1000 + (i as u64 % 300), // loop larger than small caches
                _ => 10_000 + r % 5000,   // cold
            }
        })
        .collect()
}

/// Checks, for several capacities: never more than capacity; `len`/`occupied`/`contains` agree
/// with hits; `evict` returns cached keys; `remove` forgets; determinism.
pub fn check_contract(make: impl Fn(u64) -> Box<dyn Policy>) {
    for capacity in [1u64, 2, 7, 64, 400] {
        let keys = mixed_keys(5000, capacity);
        let mut p = make(capacity);
        let mut hits = 0u64;
        for (i, &k) in keys.iter().enumerate() {
            let a = Access::unit(k, i as u64);
            let was = p.contains(k);
            let hit = p.get(&a);
            assert_eq!(hit, was, "{}: get({k}) hit={hit} but contains was {was}", p.name());
            hits += hit as u64;
            assert!(p.occupied() <= p.capacity(), "{}: occupied {} > capacity {}", p.name(), p.occupied(), p.capacity());
            assert_eq!(p.occupied(), p.len() as u64, "{}: unit sizes", p.name());
            assert!(p.contains(k), "{}: just-referenced key {k} not cached", p.name());
        }
        // Determinism.
        let mut q = make(capacity);
        let hits2 = keys.iter().enumerate().filter(|(i, &k)| q.get(&Access::unit(k, *i as u64))).count() as u64;
        assert_eq!(hits, hits2, "{}: not deterministic", p.name());
        // Evict everything.
        let mut n = p.len();
        while n > 0 {
            let v = p.evict(&Access::unit(u64::MAX, keys.len() as u64)).expect("evict on non-empty cache");
            assert!(!p.contains(v.key), "{}: evicted key still cached", p.name());
            n -= 1;
            assert_eq!(p.len(), n);
        }
        assert_eq!(p.occupied(), 0);
        // Remove.
        p.get(&Access::unit(5, 0));
        assert!(p.remove(5));
        assert!(!p.contains(5));
        assert!(!p.remove(5));
    }
}
