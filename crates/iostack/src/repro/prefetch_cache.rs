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
//!   blocks contiguous to it are in the cache; only those missing are loaded (and loaded again
//!   if making room for the others evicted them, so that the x blocks really are cached, as
//!   Section 4's analysis assumes).
//! - [`Technique::MissOrLastHit`] (the second technique, used in Section 5's experiments):
//!   load the next x blocks on a miss, and on a hit of the last cached block of the stream (the
//!   block after it is not cached); otherwise load nothing.
//!
//! A prefetch loads its blocks as one prefetch set: the policy first makes room for the whole
//! set (so placing one of its blocks never evicts another), then each block carries its position in the
//! window of x blocks ahead of the request (`Origin::Prefetch::index`, counting blocks that were
//! already cached) and the window's length x, which is what SplitLRU places by. Blocks are handed
//! to the policy from the last to the first, so that under LRU the set's first block is the most
//! recent, as the LRU queue of Table 1 shows (2a above 2b, and 2b ejected before 2a at request 4).
//! Section 4's FIFO argument for Result 3 instead needs a set's blocks to age in stream order;
//! [`SetOrder`] offers both (only LRU is sensitive to it: StreamLRU orders a stream by block
//! number and SplitLRU places by window position).
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

/// The order in which a prefetch set's blocks are handed to the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SetOrder {
    /// Last block first, so an LRU queue has the set's first block at its MRU end (Table 1).
    FirstOnTop,
    /// First block first (stream order), so LRU evicts a set's blocks in stream order (the
    /// FIFO argument behind Result 3).
    StreamOrder,
}

/// Runs the prefetch-cache model over `requests` with Table 1's set order; `observe` sees the
/// policy after each request. Returns the hits.
pub fn run<P: Policy + ?Sized>(policy: &mut P, requests: &[Key], technique: Technique, observe: impl FnMut(&Step, &P)) -> u64 {
    run_ordered(policy, requests, technique, SetOrder::FirstOnTop, observe)
}

/// [`run`] with a choice of set order.
pub fn run_ordered<P: Policy + ?Sized>(
    policy: &mut P,
    requests: &[Key],
    technique: Technique,
    order: SetOrder,
    mut observe: impl FnMut(&Step, &P),
) -> u64 {
    let x = technique.x() as u64;
    let mut hits = 0;
    let mut set = 0u32;
    let mut step = Step::default();
    let mut missing: Vec<u64> = Vec::new();
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
            // The first technique *ensures* the next x blocks are cached: making room may evict
            // some of the window's own older blocks, which are then loaded again.
            let rounds = if matches!(technique, Technique::Always { .. }) { x.max(1) } else { 1 };
            for _ in 0..rounds {
                // The window's missing blocks, as many as the cache can hold, earliest first.
                missing.clear();
                missing.extend((0..x).filter(|&i| !policy.contains(key + 1 + i)).take(policy.capacity() as usize));
                if missing.is_empty() {
                    break;
                }
                // Room for the whole set first, so that placing one of its blocks never evicts
                // another of them.
                let room = Access { key: key + 1, size: 1, vtime: t as u64, next_access: u64::MAX, ..Default::default() };
                while policy.occupied() + missing.len() as u64 > policy.capacity() {
                    match policy.evict(&room) {
                        Some(v) => step.ejected.push(v.key),
                        None => break,
                    }
                }
                for j in 0..missing.len() {
                    let index = match order {
                        SetOrder::FirstOnTop => missing[missing.len() - 1 - j],
                        SetOrder::StreamOrder => missing[j],
                    };
                    let a = Access {
                        key: key + 1 + index,
                        size: 1,
                        vtime: t as u64,
                        next_access: u64::MAX,
                        origin: Origin::Prefetch { set, index: index as u32, len: x as u32 },
                        ..Default::default()
                    };
                    policy.insert(&a);
                }
                step.loaded.extend(missing.iter().map(|&i| key + 1 + i));
            }
        }
        observe(&step, policy);
    }
    hits
}
