//! pmlast: prefetch on miss and on a hit to the last cached block of a stream, of degree N
//! (Split paper, `papers/003_0e822c5faac48388.txt`, Section 2, the "second technique", and the
//! technique of all its Section 5 experiments).
//!
//! "Prefetches 2 blocks on miss, and prefetches 2 blocks on hit of only the last cached block of
//! the corresponding stream": a demand miss of block b fetches b+1..b+N; a demand hit of b
//! fetches b+1..b+N only when b+1 is not cached, that is when b was the stream's last cached
//! block; any other hit fetches nothing (in the paper's example, request 1a finds 1b cached and
//! prefetches nothing; request 2b, the last cached block of stream 2, brings 2c and 2d). Blocks
//! already cached are skipped by the engine. Fetches stop at the end of the file when its size
//! is known. Default degree 2 (the paper's).

use super::MAX_DEGREE;
use super::{next_blocks, BlockPresence, DemandAccess, Fetch, Prefetcher, PrefetcherInfo};

pub const INFO: PrefetcherInfo = PrefetcherInfo {
    name: "pmlast",
    aliases: &["prefetch-miss-last-hit"],
    summary: "prefetch on miss and on a hit to a stream's last cached block: b+1..b+N (pmlast:N, default 2)",
    build: |spec, _page| Ok(Box::new(PrefetchMissOrLastHit { degree: spec.u64("degree", 2, 1, MAX_DEGREE)? })),
};

pub struct PrefetchMissOrLastHit {
    pub degree: u64,
}

impl Prefetcher for PrefetchMissOrLastHit {
    fn name(&self) -> String {
        format!("pmlast:degree={}", self.degree)
    }
    #[inline]
    fn on_access(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        if !a.hit || !cache.is_cached(a.device, a.block + 1) {
            next_blocks(a, self.degree, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefetch::FileView;

    struct Cached(Vec<u64>);
    impl BlockPresence for Cached {
        fn is_cached(&self, _device: u32, block: u64) -> bool {
            self.0.contains(&block)
        }
    }

    fn access(block: u64, hit: bool) -> DemandAccess {
        DemandAccess {
            device: 0,
            block,
            file: FileView { id: 0, is_device: true, index: block, size_pages: u64::MAX },
            req_pages: 1,
            hit,
            in_flight: false,
            marker: false,
            prefetch_hit: hit,
            pid: 0,
            time_ns: 0,
        }
    }

    #[test]
    fn miss_and_last_hit_prefetch_other_hits_do_not() {
        let mut p = crate::prefetch::build("pmlast", 4096).unwrap();
        let mut out = Vec::new();
        p.on_access(&access(10, false), &Cached(vec![]), &mut out);
        assert_eq!(out, vec![Fetch { device: 0, block: 11, blocks: 2, marker: None }]);
        out.clear();
        // Hit on 11 with 12 cached: nothing.
        p.on_access(&access(11, true), &Cached(vec![11, 12]), &mut out);
        assert!(out.is_empty());
        // Hit on 12, the last cached block: 13, 14.
        p.on_access(&access(12, true), &Cached(vec![12]), &mut out);
        assert_eq!(out, vec![Fetch { device: 0, block: 13, blocks: 2, marker: None }]);
        assert_eq!(p.name(), "pmlast:degree=2");
    }
}
