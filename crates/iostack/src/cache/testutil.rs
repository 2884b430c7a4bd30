//! Test utilities shared by all policies: run a key sequence, and check the [`Policy`] contract
//! on random workloads.

use super::{Access, Evicted, Key, KeyMap, Policy};
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

/// Checks, for several capacities: a caller can track residency ([`track_residency`]); never
/// more than capacity; `len`/`occupied`/`contains` agree with hits; `evict` returns cached keys;
/// `remove` forgets; determinism.
pub fn check_contract(make: impl Fn(u64) -> Box<dyn Policy>) {
    check_contract_with(&[1, 2, 7, 64, 400], make)
}

/// [`check_contract`] at the given capacities.
pub fn check_contract_with(capacities: &[u64], make: impl Fn(u64) -> Box<dyn Policy>) {
    for &capacity in capacities {
        let mut tracked = make(capacity);
        track_residency(&mut *tracked, &residency_workload(4000, capacity, 1));
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

/// One step of a workload that [`track_residency`] replays.
#[derive(Debug, Clone, Copy)]
pub enum Step {
    /// A reference to `key` of `size`: `find`, and on a miss `evict` as needed and `insert`.
    Ref { key: Key, size: u64 },
    /// `remove(key)`.
    Remove { key: Key },
}

/// A deterministic workload for [`track_residency`]: the references of [`mixed_keys`], sizes
/// drawn from `1..=max_size` (one per key), and a `remove` of a key seen earlier every 50 steps
/// or so.
pub fn residency_workload(n: usize, seed: u64, max_size: u64) -> Vec<Step> {
    let keys = mixed_keys(n, seed);
    let mut x = seed.wrapping_mul(0xD1B5_4A32_D192_ED03) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    // A key keeps one size, as in a trace of objects.
    let size_of = |k: u64| if max_size <= 1 { 1 } else { 1 + k.wrapping_mul(0x9E37_79B9_7F4A_7C15) % max_size };
    let mut steps = Vec::with_capacity(n + n / 40);
    for (i, &key) in keys.iter().enumerate() {
        if i > 0 && next() % 50 == 0 {
            steps.push(Step::Remove { key: keys[(next() % i as u64) as usize] });
        }
        steps.push(Step::Ref { key, size: size_of(key) });
    }
    steps
}

/// Replays `steps` as a caller that tracks residency does (a timed engine with write-back or
/// prefetch accounting): `find`; on a miss, `evict` until the object fits, then `insert`; and
/// after every `find`, `evict` and `insert`, [`Policy::drain_side_evictions`]. The caller's
/// resident set is what it inserted minus what `evict` returned, `remove` forgot and the drains
/// handed over; after every call it must be exactly the policy's: `contains` for every tracked
/// key, `len` and `occupied` equal to the tracked count and sizes. Also checks that `find` hits
/// exactly the tracked keys and that nothing is handed over twice or without being cached.
pub fn track_residency(p: &mut dyn Policy, steps: &[Step]) {
    let name = p.name().to_string();
    let keys: Vec<u64> = steps.iter().map(|s| match *s { Step::Ref { key, .. } | Step::Remove { key } => key }).collect();
    let next = next_use_positions(&keys);
    let mut resident: KeyMap<u64> = KeyMap::default();
    let mut drained: Vec<Evicted> = Vec::new();

    fn forget(name: &str, resident: &mut KeyMap<u64>, v: Evicted, how: &str, i: usize) {
        match resident.remove(&v.key) {
            Some(size) => assert_eq!(size, v.size, "{name}: step {i}: {how} {} with size {} inserted with {size}", v.key, v.size),
            None => panic!("{name}: step {i}: {how} {}, which the caller does not hold", v.key),
        }
    }
    let mut drain = |p: &mut dyn Policy, resident: &mut KeyMap<u64>, i: usize, after: &str| {
        drained.clear();
        p.drain_side_evictions(&mut drained);
        assert!(drained.is_empty() || p.has_side_evictions(), "{name}: step {i}: side evictions from a policy that says it has none");
        for &v in &drained {
            forget(&name, resident, v, &format!("{after} side-evicted"), i);
        }
    };
    let check = |p: &dyn Policy, resident: &KeyMap<u64>, i: usize, after: &str| {
        for &k in resident.keys() {
            assert!(p.contains(k), "{name}: step {i}: after {after}, {k} was dropped without being reported");
        }
        assert_eq!(p.len(), resident.len(), "{name}: step {i}: after {after}, len() differs from the caller's resident set");
        let bytes: u64 = resident.values().sum();
        assert_eq!(p.occupied(), bytes, "{name}: step {i}: after {after}, occupied() differs from the caller's resident set");
    };

    for (i, step) in steps.iter().enumerate() {
        match *step {
            Step::Remove { key } => {
                let was = resident.remove(&key).is_some();
                assert_eq!(p.remove(key), was, "{name}: step {i}: remove({key})");
                drain(p, &mut resident, i, "remove");
                check(p, &resident, i, "remove");
            }
            Step::Ref { key, size } => {
                let a = Access { key, size, vtime: i as u64, next_access: next[i], ..Default::default() };
                let was = resident.contains_key(&key);
                let hit = p.find(&a);
                assert_eq!(hit, was, "{name}: step {i}: find({key}) hit={hit} but the caller holds it: {was}");
                drain(p, &mut resident, i, "find");
                check(p, &resident, i, "find");
                if hit || size > p.capacity() {
                    continue;
                }
                while p.occupied() + size > p.capacity() {
                    let Some(v) = p.evict(&a) else { break };
                    forget(&name, &mut resident, v, "evict returned", i);
                    assert!(!p.contains(v.key), "{name}: step {i}: evicted {} still cached", v.key);
                    drain(p, &mut resident, i, "evict");
                    check(p, &resident, i, "evict");
                }
                if p.occupied() + size <= p.capacity() {
                    p.insert(&a);
                    resident.insert(key, size);
                    drain(p, &mut resident, i, "insert");
                    check(p, &resident, i, "insert");
                }
            }
        }
    }
}
