//! Properties every registered policy must have, checked on random reference strings.
//!
//! They iterate over [`POLICIES`], so a new policy is checked as soon as it is registered.

use proptest::prelude::*;

use super::testutil::{hits_of, run_keys, run_sized_checked};
use super::{build, Access, POLICIES};

/// Random keys over a small universe, so that there are hits at small capacities.
fn keys(universe: u64, max_len: usize) -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(0..universe, 1..max_len)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// LRU is a stack algorithm (Mattson et al., 1970): the cache of size c is always a subset of
    /// the cache of size c + d, so every reference that hits at c hits at c + d.
    #[test]
    fn lru_inclusion(keys in keys(60, 400), c in 1u64..30, d in 1u64..30) {
        let small = run_keys(&mut *build("lru", c).unwrap(), &keys);
        let large = run_keys(&mut *build("lru", c + d).unwrap(), &keys);
        for (i, (s, l)) in small.iter().zip(&large).enumerate() {
            prop_assert!(!s || *l, "reference {i} hits at {c} but misses at {}", c + d);
        }
    }

    /// With unit sizes, Belady's MIN misses no more than any demand-paging policy.
    #[test]
    fn belady_never_worse(keys in keys(50, 500), c in 1u64..40) {
        let opt = hits_of("belady", c, &keys);
        for info in POLICIES {
            // Some policies need a minimum capacity (SLRU: one entry per segment).
            let Ok(mut p) = build(info.name, c) else { continue };
            let hits = run_keys(&mut *p, &keys).iter().filter(|h| **h).count();
            prop_assert!(hits <= opt, "{} hits {hits} > Belady {opt} at capacity {c}", info.name);
        }
    }

    /// No policy ever holds more than its capacity, with unit sizes or with sizes, and what it
    /// reports holding adds up.
    #[test]
    fn never_exceeds_capacity(
        refs in prop::collection::vec((0u64..80, 1u64..60), 1..600),
        c in 16u64..400,
    ) {
        let keys: Vec<u64> = refs.iter().map(|r| r.0).collect();
        for info in POLICIES {
            let Ok(mut p) = build(info.name, c) else { continue };
            run_sized_checked(&mut *p, &refs);
            let mut evicted = 0u64;
            while let Some(v) = p.evict(&Access::unit(u64::MAX, refs.len() as u64)) {
                evicted += v.size;
            }
            prop_assert_eq!(p.occupied(), 0, "{}: occupied after evicting everything", info.name);
            prop_assert!(evicted <= c, "{}: evicted {evicted} > capacity {c}", info.name);

            let mut p = build(info.name, c).unwrap();
            for (i, &k) in keys.iter().enumerate() {
                p.get(&Access::unit(k, i as u64));
                prop_assert!(p.occupied() <= c, "{}: occupied {} > {c}", info.name, p.occupied());
                prop_assert_eq!(p.occupied(), p.len() as u64, "{}: unit sizes", info.name);
            }
        }
    }
}

/// libCacheSim's common semantics, for every registered policy: a hit keeps the size the object
/// was inserted with, and an object larger than the cache is not inserted. (The capacity leaves
/// room for policies that admit only objects that fit a part of the cache: SLRU's segment,
/// LIRS's HIR share, S3-FIFO's small queue.)
#[test]
fn hits_keep_inserted_size_and_oversized_objects_stay_out() {
    for info in POLICIES {
        let mut p = build(info.name, 1000).unwrap();
        let sized = |key, size, vtime| Access { key, size, vtime, ..Default::default() };
        assert!(!p.get(&sized(1, 5, 0)), "{}", info.name);
        assert!(p.get(&sized(1, 9, 1)), "{}: second reference", info.name);
        assert_eq!(p.occupied(), 5, "{}: a hit changed the entry's size", info.name);
        assert!(!p.get(&sized(2, 1001, 2)), "{}", info.name);
        assert!(!p.contains(2), "{}: an object larger than the cache was inserted", info.name);
        assert_eq!(p.occupied(), 5, "{}", info.name);
    }
}
