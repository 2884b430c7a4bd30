//! pm: prefetch on miss, of degree N (Split paper, §2, "Sequential prefetch").
//!
//! "The PM technique generates synchronous prefetch requests for blocks contiguous to the
//! missed block whenever a user request misses in the cache": on a demand miss of block b, the
//! blocks b+1..b+N are fetched, except those already cached ("If a future stream block is
//! already in the cache, both PM and PA do not fetch it again"). The prefetch is issued with the
//! miss, so the scheduler merges it with the demand read into one disk request (the paper's
//! "PM piggybacks prefetch requests onto missed requests"). Hits never prefetch. Fetches stop at
//! the end of the file when its size is known. Default degree 1 (the paper's PM example).

use super::MAX_DEGREE;
use super::{next_blocks, BlockPresence, DemandAccess, Fetch, FileView, Prefetcher, PrefetcherInfo};

pub const INFO: PrefetcherInfo = PrefetcherInfo {
    name: "pm",
    aliases: &["prefetch-on-miss"],
    summary: "prefetch on miss: a miss of b fetches b+1..b+N (pm:N, default 1)",
    build: |spec, _page| Ok(Box::new(PrefetchOnMiss { degree: spec.u64("degree", 1, 1, MAX_DEGREE)? })),
};

pub struct PrefetchOnMiss {
    pub degree: u64,
}

impl Prefetcher for PrefetchOnMiss {
    fn name(&self) -> String {
        format!("pm:degree={}", self.degree)
    }
    #[inline]
    fn on_access(&mut self, a: &DemandAccess, _cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        if !a.hit {
            next_blocks(a, self.degree, out);
        }
    }
    /// Hits prefetch nothing.
    fn on_plain_hit(&mut self, _pid: u32, _file: &FileView, _req_pages: u64) -> bool {
        true
    }
}
