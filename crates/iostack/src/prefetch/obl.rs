//! obl: one-block lookahead (Smith, "Cache memories", 1982).
//!
//! On every demand access to block b (hit or miss), fetch block b+1 if it is not cached. The
//! simplest sequential prefetcher: a sequential stream is always one block ahead, a random one
//! wastes one block per access. Fetches stop at the end of the file when its size is known.

use super::{next_blocks, BlockPresence, DemandAccess, Fetch, Prefetcher, PrefetcherInfo};

pub const INFO: PrefetcherInfo = PrefetcherInfo {
    name: "obl",
    aliases: &["one-block-lookahead"],
    summary: "one-block lookahead: every access to b fetches b+1",
    build: |_spec, _page| Ok(Box::new(Obl)),
};

pub struct Obl;

impl Prefetcher for Obl {
    fn name(&self) -> String {
        "obl".into()
    }
    #[inline]
    fn on_access(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        if !cache.is_cached(a.device, a.block + 1) {
            next_blocks(a, 1, out);
        }
    }
}
