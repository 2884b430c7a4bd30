//! LRU-SP's rules (D-L1, `specs/acfs.md` §4, from the paper's l.405-435), its criteria against
//! global LRU (D-L2) and each mechanism shown necessary.

use super::*;
use crate::cache::lru::Lru;
use proptest::prelude::*;

/// One reference by `pid` to `key` (the key is also its own file, block 0).
fn get(p: &mut dyn Policy, pid: u32, key: Key) -> bool {
    p.next_file(Some(FileBlock { file: key, block: 0 }));
    p.get(&Access { pid, ..Access::unit(key, 0) })
}

fn set_policy(p: &mut dyn Policy, pid: u32, policy: LevelPolicy) {
    p.control(&CacheControl::SetPolicy { pid, prio: 0, policy });
}

fn temp(p: &mut dyn Policy, pid: u32, key: Key, prio: i32) {
    p.control(&CacheControl::SetTempPri { pid, file: key, first: 0, last: 0, prio });
}

const A: Key = 1;
const B: Key = 2;
const C: Key = 3;
const P: Key = 4;
const W: Key = 10;
const V: Key = 11;
const X: Key = 12;
const Y: Key = 13;
const Z: Key = 14;

#[test]
fn owner_choice_swaps_and_builds_a_placeholder() {
    let mut p = LruSp::new(4, true, true);
    set_policy(&mut p, 1, LevelPolicy::Mru);
    for (pid, k) in [(1, A), (2, W), (1, B), (2, V)] {
        get(&mut p, pid, k);
    }
    assert_eq!(p.global_order(), vec![A, W, B, V]);
    // The LRU end A belongs to process 1, which gives up its most recent block, B: A takes B's
    // place and a placeholder for B points to A.
    assert!(!get(&mut p, 2, Y));
    assert!(!p.contains(B));
    assert_eq!(p.global_order(), vec![W, A, V, Y]);
    assert_eq!(p.placeholder(B), Some(A));
    assert_eq!(p.stats().swaps, 1);
    // Process 1 misses on B: the placeholder makes A the candidate, not the LRU end W.
    assert!(!get(&mut p, 1, B));
    assert!(!p.contains(A) && p.contains(W));
    assert_eq!(p.stats().placeholders_used, 1);
    assert_eq!(p.placeholder(B), None);
}

#[test]
fn a_hit_deletes_the_placeholders_pointing_to_the_block() {
    let mut p = LruSp::new(4, true, true);
    set_policy(&mut p, 1, LevelPolicy::Mru);
    for (pid, k) in [(1, A), (2, W), (1, B), (2, V), (2, Y)] {
        get(&mut p, pid, k);
    }
    assert_eq!(p.placeholder(B), Some(A));
    assert!(get(&mut p, 1, A));
    assert_eq!(p.placeholder(B), None);
}

#[test]
fn a_swap_redirects_placeholders_to_the_block_kept() {
    let mut p = LruSp::new(5, true, true);
    set_policy(&mut p, 1, LevelPolicy::Lru);
    for (pid, k) in [(1, C), (2, X), (1, A), (1, P), (2, V)] {
        get(&mut p, pid, k);
    }
    // C at the LRU end; process 1 gives up P (lowest priority) instead: P -> C.
    temp(&mut p, 1, P, -2);
    get(&mut p, 2, Y);
    assert_eq!(p.placeholder(P), Some(C));
    assert_eq!(p.global_order(), vec![X, A, C, V, Y]);
    get(&mut p, 2, X);
    assert_eq!(p.global_order(), vec![A, C, V, Y, X]);
    // A at the LRU end; process 1 gives up C: A takes C's place, and P's placeholder follows.
    temp(&mut p, 1, C, -3);
    get(&mut p, 2, Z);
    assert!(!p.contains(C));
    assert_eq!(p.placeholder(P), Some(A));
    assert_eq!(p.placeholder(C), Some(A));
}

#[test]
fn a_placeholder_dies_with_its_block_when_no_swap_moves_it() {
    let mut p = LruSp::new(4, true, true);
    set_policy(&mut p, 1, LevelPolicy::Mru);
    for (pid, k) in [(1, A), (2, W), (1, B), (2, V), (2, Y)] {
        get(&mut p, pid, k);
    }
    assert_eq!(p.placeholder(B), Some(A));
    // W is the LRU end and oblivious: replaced. Then A (process 1's only block) is the LRU end
    // and its owner's choice: replaced without a swap, so B's placeholder goes with it (J2).
    get(&mut p, 2, X);
    get(&mut p, 2, Z);
    assert!(!p.contains(A));
    assert_eq!(p.placeholder(B), None);
}

#[test]
fn unowned_blocks_are_replaced_at_the_lru_end() {
    let mut p = LruSp::new(3, true, true);
    set_policy(&mut p, 1, LevelPolicy::Mru);
    get(&mut p, 1, C);
    assert_eq!(p.owner(C), Some(1));
    // Referenced by a second live process: shared, unowned.
    get(&mut p, 2, C);
    assert_eq!(p.owner(C), None);
    get(&mut p, 1, A);
    get(&mut p, 1, B);
    // The LRU end C is unowned: replaced, although process 1 (MRU) would give up B.
    get(&mut p, 2, Y);
    assert!(!p.contains(C) && p.contains(A) && p.contains(B));
    assert_eq!(p.stats().swaps, 0);
}

#[test]
fn an_exited_process_leaves_unowned_blocks() {
    let mut p = LruSp::new(3, true, true);
    set_policy(&mut p, 1, LevelPolicy::Mru);
    for (pid, k) in [(1, A), (1, B), (2, X)] {
        get(&mut p, pid, k);
    }
    p.process_exit(1);
    assert_eq!(p.owner(A), None);
    get(&mut p, 2, Y);
    assert!(!p.contains(A) && p.contains(B));
}

#[test]
fn priorities_pick_the_pool_and_levels_the_end() {
    let mut p = LruSp::new(4, true, true);
    // Files 1 and 2 at priority 1 (MRU), file 3 at 0 (LRU): the victim comes from level 0.
    p.control(&CacheControl::SetPolicy { pid: 1, prio: 1, policy: LevelPolicy::Mru });
    p.control(&CacheControl::SetPriority { pid: 1, file: A, prio: 1 });
    p.control(&CacheControl::SetPriority { pid: 1, file: B, prio: 1 });
    for k in [A, C, B, P] {
        get(&mut p, 1, k);
    }
    get(&mut p, 1, X);
    assert!(!p.contains(C), "level 0 (C, P) gives up its LRU block C");
    get(&mut p, 1, Y);
    assert!(!p.contains(P) && p.contains(X), "then P, level 0's least recent");
    // X and Y move to level 1 (MRU), entering at its LRU end, which delays their replacement:
    // level 0 is empty, and level 1 gives up its most recently used block, B.
    p.control(&CacheControl::SetPriority { pid: 1, file: X, prio: 1 });
    p.control(&CacheControl::SetPriority { pid: 1, file: Y, prio: 1 });
    let before: Vec<Key> = p.global_order();
    get(&mut p, 1, Z);
    let gone: Vec<Key> = before.into_iter().filter(|k| !p.contains(*k)).collect();
    assert_eq!(gone, vec![B]);
}

#[test]
fn mru_loop_exact() {
    // D-C1: a cyclic scan of N blocks R times in a cache of C < N: LRU misses N*R, MRU
    // N + (R-1)(N-C).
    let (n, c, r) = (1000u64, 256u64, 8u64);
    let mut lru = LruSp::new(c, true, true);
    let mut mru = LruSp::new(c, true, true);
    set_policy(&mut mru, 1, LevelPolicy::Mru);
    let (mut ml, mut mm) = (0, 0);
    for _ in 0..r {
        for k in 0..n {
            ml += !get(&mut lru, 1, k) as u64;
            mm += !get(&mut mru, 1, k) as u64;
        }
    }
    assert_eq!(ml, 8000);
    assert_eq!(mm, 6208);
    assert_eq!(mm, n + (r - 1) * (n - c));
}

#[test]
fn calls_off_leaves_every_process_lru() {
    // The MRU loop again, its caching call ignored: LRU's N*R misses, as global LRU.
    let mut p = crate::cache::build("lrusp:calls=off", 256).unwrap();
    set_policy(p.as_mut(), 1, LevelPolicy::Mru);
    let misses: u64 = (0..4).flat_map(|_| 0..1000u64).map(|k| !get(p.as_mut(), 1, k) as u64).sum();
    assert_eq!(misses, 4000);
}

/// What a process does with its cache in the criteria tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Oblivious,
    Lru,
    Mru,
    /// Optimal replacement of its own blocks: each cached block's temporary priority is minus
    /// the position of its next reference (l.562-565), set before every reference.
    Smart,
}

/// Misses of processes 1..=3 running `refs` (pid, block) through `p`; keys are (pid, block).
fn misses(p: &mut dyn Policy, refs: &[(u32, u64)], roles: [Role; 3]) -> [u64; 3] {
    let key = |pid: u32, b: u64| (pid as u64) * 1000 + b;
    for (i, role) in roles.iter().enumerate() {
        let pid = i as u32 + 1;
        match role {
            Role::Lru => set_policy(p, pid, LevelPolicy::Lru),
            Role::Mru | Role::Smart => set_policy(p, pid, LevelPolicy::Mru),
            Role::Oblivious => {}
        }
    }
    let mut out = [0; 3];
    for (i, &(pid, b)) in refs.iter().enumerate() {
        for smart in (1..=3u32).filter(|&q| roles[q as usize - 1] == Role::Smart) {
            let mut seen = std::collections::HashSet::new();
            for &(q, c) in refs.iter().filter(|&&(q, _)| q == smart) {
                let k = key(q, c);
                if seen.insert(k) && p.contains(k) {
                    let next = refs[i..].iter().position(|&r| r == (q, c)).map_or(i32::MIN / 2, |d| -(d as i32));
                    temp(p, smart, k, next);
                }
            }
        }
        out[pid as usize - 1] += !get(p, pid, key(pid, b)) as u64;
    }
    out
}

fn lru_misses(cap: u64, refs: &[(u32, u64)]) -> [u64; 3] {
    misses(&mut Lru::new(cap), refs, [Role::Oblivious; 3])
}

fn interleaving() -> impl Strategy<Value = (u64, Vec<(u32, u64)>)> {
    (3u64..=6, 2u64..=8, 2u64..=8, 2u64..=8).prop_flat_map(|(k, u1, u2, u3)| {
        let one = move |pid: u32, u: u64| (Just(pid), 0..u);
        (Just(k), proptest::collection::vec(prop_oneof![one(1, u1), one(2, u2), one(3, u3)], 1..80))
    })
}

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![Just(Role::Oblivious), Just(Role::Lru), Just(Role::Mru)]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// (i) and (ii): an oblivious process never suffers more misses than under global LRU,
    /// whatever the other two do with their caches.
    #[test]
    fn oblivious_process_no_worse_than_global_lru((k, refs) in interleaving(), r2 in role(), r3 in role()) {
        let base = lru_misses(k, &refs);
        let got = misses(&mut LruSp::new(k, true, true), &refs, [Role::Oblivious, r2, r3]);
        prop_assert!(got[0] <= base[0], "lrusp {:?} lru {:?}", got, base);
    }

    /// (iii): a smart process (optimal replacement of its own blocks) makes nobody, itself
    /// included, suffer more misses than under global LRU.
    #[test]
    fn smart_process_hurts_nobody((k, refs) in interleaving()) {
        let base = lru_misses(k, &refs);
        let got = misses(&mut LruSp::new(k, true, true), &refs, [Role::Smart, Role::Oblivious, Role::Oblivious]);
        for i in 0..3 {
            prop_assert!(got[i] <= base[i], "process {}: lrusp {:?} lru {:?}", i + 1, got, base);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// (ii) beside (iii): a foolish process (MRU or LRU on its own blocks, whatever its pattern)
    /// makes neither a smart process nor an oblivious one suffer more misses than under global
    /// LRU.
    #[test]
    fn foolish_process_hurts_neither_a_smart_nor_an_oblivious_one((k, refs) in interleaving(), fool in prop_oneof![Just(Role::Lru), Just(Role::Mru)]) {
        let base = lru_misses(k, &refs);
        let got = misses(&mut LruSp::new(k, true, true), &refs, [Role::Smart, fool, Role::Oblivious]);
        prop_assert!(got[0] <= base[0] && got[2] <= base[2], "lrusp {:?} lru {:?}", got, base);
    }
}

/// Random interleavings from a fixed seed, for the searches below.
fn random_cases(n: usize) -> Vec<(u64, Vec<(u32, u64)>)> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_pcg::Pcg64::seed_from_u64(13);
    (0..n)
        .map(|_| {
            let k = rng.gen_range(3..=6);
            let u = [rng.gen_range(2..=8), rng.gen_range(2..=8), rng.gen_range(2..=8)];
            let len = rng.gen_range(10..80);
            let refs = (0..len)
                .map(|_| {
                    let pid = rng.gen_range(1..=3u32);
                    (pid, rng.gen_range(0..u[pid as usize - 1]))
                })
                .collect();
            (k, refs)
        })
        .collect()
}

/// Over seeded random cases, with process 1 in `roles[0]`: asserts that full LRU-SP never gives
/// process 1 more misses than global LRU, and counts the cases where LRU-SP with `swap` and
/// `placeholders` as given does.
fn cases_worse_than_lru(roles: [Role; 3], swap: bool, placeholders: bool) -> u32 {
    let mut worse = 0;
    for (k, refs) in random_cases(3000) {
        let base = lru_misses(k, &refs);
        let on = misses(&mut LruSp::new(k, true, true), &refs, roles);
        assert!(on[0] <= base[0], "{refs:?}");
        let off = misses(&mut LruSp::new(k, swap, placeholders), &refs, roles);
        worse += (off[0] > base[0]) as u32;
    }
    worse
}

#[test]
fn without_placeholders_a_foolish_process_hurts_an_oblivious_one() {
    // Beside a foolish (MRU) process, an oblivious one misses more than under global LRU in
    // some cases once placeholders are off; with them on it never does.
    let found = cases_worse_than_lru([Role::Oblivious, Role::Mru, Role::Oblivious], true, false);
    assert!(found > 0, "placeholders off never hurt the oblivious process");
}

#[test]
fn without_swapping_a_smart_process_loses_its_advantage() {
    // With swapping off, the candidate stays at the LRU end and its owner is asked again and
    // again: a smart process ends with more misses than under global LRU in some cases.
    let found = cases_worse_than_lru([Role::Smart, Role::Oblivious, Role::Oblivious], false, true);
    assert!(found > 0, "swapping off never cost the smart process its advantage");
}
