//! Test utilities shared by all policies: run a key sequence, and check the [`Policy`] contract
//! on random workloads.

use super::{Access, Policy};
use crate::engine::future::next_use_positions;

/// Runs unit-size demand references to `keys` through `get`; returns hit or miss for each.
/// Fills in [`Access::next_access`] when the policy needs the future.
pub fn run_keys(policy: &mut dyn Policy, keys: &[u64]) -> Vec<bool> {
    if policy.needs_future() {
        return run_keys_future(policy, keys);
    }
    keys.iter().enumerate().map(|(i, &k)| policy.get(&Access::unit(k, i as u64))).collect()
}

/// As [`run_keys`], always with [`Access::next_access`] filled in.
pub fn run_keys_future(policy: &mut dyn Policy, keys: &[u64]) -> Vec<bool> {
    let next = next_use_positions(keys);
    keys.iter()
        .enumerate()
        .map(|(i, &k)| policy.get(&Access { next_access: next[i], ..Access::unit(k, i as u64) }))
        .collect()
}

/// Runs references with sizes (`(key, size)`) through `get`, checking after each that the
/// policy holds no more than its capacity and that `occupied` is the sum of what it holds.
/// Returns the number of hits.
pub fn run_sized_checked(policy: &mut dyn Policy, refs: &[(u64, u64)]) -> u64 {
    let keys: Vec<u64> = refs.iter().map(|r| r.0).collect();
    let next = next_use_positions(&keys);
    let mut hits = 0;
    for (i, &(key, size)) in refs.iter().enumerate() {
        let a = Access { key, size, vtime: i as u64, next_access: next[i], ..Default::default() };
        hits += policy.get(&a) as u64;
        assert!(
            policy.occupied() <= policy.capacity(),
            "{}: occupied {} > capacity {} after reference {i}",
            policy.name(),
            policy.occupied(),
            policy.capacity()
        );
    }
    hits
}

/// Number of hits of `keys` (unit size) through the policy built by `spec` at `capacity`.
pub fn hits_of(spec: &str, capacity: u64, keys: &[u64]) -> usize {
    let mut p = super::build(spec, capacity).expect("valid spec");
    run_keys(&mut *p, keys).iter().filter(|h| **h).count()
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
    check_contract_with(&[1, 2, 7, 64, 400], make)
}

/// [`check_contract`] at the given capacities.
pub fn check_contract_with(capacities: &[u64], make: impl Fn(u64) -> Box<dyn Policy>) {
    for &capacity in capacities {
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
