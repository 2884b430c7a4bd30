//! none: no prefetching; only demanded blocks are read.

use super::{BlockPresence, DemandAccess, Fetch, FileView, Prefetcher, PrefetcherInfo};

pub const INFO: PrefetcherInfo = PrefetcherInfo {
    name: "none",
    aliases: &["off"],
    summary: "no prefetching",
    build: |_spec, _page| Ok(Box::new(NoPrefetch)),
};

pub struct NoPrefetch;

impl Prefetcher for NoPrefetch {
    fn name(&self) -> String {
        "none".into()
    }
    #[inline]
    fn on_access(&mut self, _a: &DemandAccess, _cache: &dyn BlockPresence, _out: &mut Vec<Fetch>) {}
    fn on_plain_hit(&mut self, _pid: u32, _file: &FileView, _req_pages: u64) -> bool {
        true
    }
}
