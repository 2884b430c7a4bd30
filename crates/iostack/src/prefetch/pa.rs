//! pa: prefetch always, of degree N (Split paper, §2, "Sequential prefetch").
//!
//! "The basic PA technique generates prefetch requests whenever a user request arrives at the
//! cache": on every demand access to block b, hit or miss, the blocks b+1..b+N that are not
//! already cached are fetched. The paper's first example (degree 2) is exactly this: request 1
//! brings 1a and 1b; request 1a then brings only 1c, since 1b is cached. (The Linux/BSD variant
//! with a trigger block is the `linux` prefetcher.) Fetches stop at the end of the file when its
//! size is known. Default degree 1.

use super::MAX_DEGREE;
use super::{next_blocks, BlockPresence, DemandAccess, Fetch, Prefetcher, PrefetcherInfo};

pub const INFO: PrefetcherInfo = PrefetcherInfo {
    name: "pa",
    aliases: &["prefetch-always"],
    summary: "prefetch always: every access to b fetches b+1..b+N (pa:N, default 1)",
    build: |spec, _page| Ok(Box::new(PrefetchAlways { degree: spec.u64("degree", 1, 1, MAX_DEGREE)? })),
};

pub struct PrefetchAlways {
    pub degree: u64,
}

impl Prefetcher for PrefetchAlways {
    fn name(&self) -> String {
        format!("pa:degree={}", self.degree)
    }
    #[inline]
    fn on_access(&mut self, a: &DemandAccess, _cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        next_blocks(a, self.degree, out);
    }
}
