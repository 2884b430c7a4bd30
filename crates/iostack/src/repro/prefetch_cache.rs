//! The prefetch-cache model of Varki, Hubbe and Merchant ("Significance of replacement queue in
//! sequential prefetching", `papers/003_0e822c5faac48388.txt`) and its two sequential prefetch
//! techniques (Section 2).
//!
//! The model: every user request is for one block; a request that finds its block in the cache
//! is a (prefetch) hit and the block then leaves the prefetch cache, "since it is now referenced"
//! (Section 3.1, Table 3); a request that misses is served from disk and its block is not cached.
//! The prefetch technique then decides which blocks ahead of the request to load:
//!
//! - [`Technique::Always`] (the first technique of Section 2): after every request, the next x
//!   blocks contiguous to it are in the cache; only those missing are loaded.
//! - [`Technique::MissOrLastHit`] (the second technique, used in Section 5's experiments):
//!   load the next x blocks on a miss, and on a hit of the last cached block of the stream (the
//!   block after it is not cached); otherwise load nothing.
//!
//! A prefetch loads its blocks as one prefetch set; each block carries its position in the
//! window of x blocks ahead of the request (`Origin::Prefetch::index`, counting blocks that were
//! already cached) and the window's length x, which is what SplitLRU places by. Blocks are handed
//! to the policy from the last to the first, so that under LRU the set's first block is the most
//! recent, as the LRU queue of Table 1 shows (2a above 2b, and 2b ejected before 2a at request 3).
//!
//! The techniques are offered here as the paper's model; the timed stack's prefetchers sit
//! behind its own prefetcher interface.

use crate::cache::{Access, Key, Origin, Policy};

/// A sequential prefetch technique of Section 2.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "technique", rename_all = "snake_case")]
pub enum Technique {
    /// Prefetch so that the next `x` blocks after every request are cached.
    Always { x: u32 },
    /// Prefetch the next `x` blocks on a miss and on a hit to the last cached block of a stream.
    MissOrLastHit { x: u32 },
}

impl Technique {
    pub fn x(&self) -> u32 {
        match *self {
            Technique::Always { x } | Technique::MissOrLastHit { x } => x,
        }
    }
}

/// What happened at one request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Step {
    pub key: Key,
    pub hit: bool,
    /// Blocks loaded by the prefetch, in window order.
    pub loaded: Vec<Key>,
    /// Blocks the policy ejected to make room, in order.
    pub ejected: Vec<Key>,
}

/// Runs the prefetch-cache model over `requests`; `observe` sees the policy after each request.
/// Returns the hits.
pub fn run<P: Policy + ?Sized>(
    policy: &mut P,
    requests: &[Key],
    technique: Technique,
    mut observe: impl FnMut(&Step, &P),
) -> u64 {
    let x = technique.x() as u64;
    let mut hits = 0;
    let mut set = 0u32;
    let mut step = Step::default();
    for (t, &key) in requests.iter().enumerate() {
        step.key = key;
        step.loaded.clear();
        step.ejected.clear();
        let demand = Access { key, size: 1, vtime: t as u64, next_access: u64::MAX, ..Default::default() };
        step.hit = policy.find(&demand);
        if step.hit {
            hits += 1;
            policy.remove(key);
        }
        let prefetch = match technique {
            Technique::Always { .. } => true,
            Technique::MissOrLastHit { .. } => !step.hit || !policy.contains(key + 1),
        };
        if prefetch {
            set = set.wrapping_add(1);
            for index in (0..x).rev() {
                let k = key + 1 + index;
                if policy.contains(k) || policy.capacity() == 0 {
                    continue;
                }
                let a = Access {
                    key: k,
                    size: 1,
                    vtime: t as u64,
                    next_access: u64::MAX,
                    origin: Origin::Prefetch { set, index: index as u32, len: x as u32 },
                    ..Default::default()
                };
                while policy.occupied() + 1 > policy.capacity() {
                    match policy.evict(&a) {
                        Some(v) => step.ejected.push(v.key),
                        None => break,
                    }
                }
                policy.insert(&a);
                step.loaded.push(k);
            }
            step.loaded.reverse();
        }
        observe(&step, policy);
    }
    hits
}
