//! Prefetchers: what the page cache reads ahead of demand.
//!
//! A prefetcher watches the demand stream and asks for blocks to be read asynchronously. It
//! never holds cache space: the engine inserts what it asks for into the cache (with
//! [`crate::cache::Origin::Prefetch`]) and the replacement policy decides how long it stays.
//! One module per prefetcher:
//!
//! - [`none`]: no prefetching.
//! - [`obl`]: one-block lookahead: on every demand access to a file's block, fetch the file's
//!   next block; `obl:seq`, the Ultrix/BSD read-ahead: after K and K+1 of a file, fetch K+2.
//!   The next block is found where the file system put it ([`file_map`]).
//! - [`pm`]: prefetch on miss of degree N (Split paper §2): on a miss of b, fetch b+1..b+N.
//! - [`pa`]: prefetch always of degree N (Split paper §2): on every access to b, fetch
//!   b+1..b+N.
//! - [`linux`]: Linux's on-demand readahead (mm/readahead.c), per file.
//! - [`pmlast`]: prefetch on miss and on a hit to a stream's last cached block (Split paper §2).
//!
//! `pm`, `pa` and `pmlast` fetch the blocks that follow on the device, as the Split paper's
//! storage cache does ("blocks contiguous to the missed block", papers/003 l.77, its streams
//! runs of block numbers, l.55); `linux` works in file pages but places its window's pages
//! as far from the accessed block on the device as they are in the file (a contiguous file),
//! without the map, whose look-ups the default stack's hot path does not pay for.
//!
//! [`select`] is not a prefetcher of its own: it chooses between two of them on line
//! (`--prefetch-select`), KDSim's controller with a shadow page cache playing the other.

use std::sync::Arc;

use crate::error::ConfigError;
use crate::sched::ComponentSpec;
use file_map::FileMap;

/// Largest prefetch degree (blocks per prefetch) of the fixed-degree prefetchers (`pm`, `pa`,
/// `pmlast`): 4096 blocks, 16 MiB of 4 KiB pages, far beyond any studied setting; more makes every
/// miss read gigabytes.
pub const MAX_DEGREE: u64 = 4096;

/// Largest Linux readahead window (`linux:max`, `linux:io`): 64 MiB.
pub const MAX_READAHEAD_BYTES: u64 = 64 << 20;

pub mod ca;
pub mod file_map;
pub mod linux;
pub mod none;
pub mod obl;
pub mod pa;
pub mod pm;
pub mod pmlast;
pub mod readahead;
pub mod select;

/// The file a demand access belongs to, as the prefetcher sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileView {
    /// File identity; for requests without a file, the device id (the device is one file, as
    /// Linux treats a raw block device).
    pub id: u64,
    /// Whether `id` is a device standing for a file.
    pub is_device: bool,
    /// Page index of the accessed block within the file.
    pub index: u64,
    /// File size in pages (from the trace, or inferred from the largest extent accessed;
    /// `u64::MAX` when unknown).
    pub size_pages: u64,
}

/// One demand access to one block, after the cache lookup.
#[derive(Debug, Clone, Copy)]
pub struct DemandAccess {
    pub device: u32,
    /// Disk block (page units).
    pub block: u64,
    pub file: FileView,
    /// Pages of the request from this block to its end (Linux's `req_size` for a miss).
    pub req_pages: u64,
    /// The block was cached (possibly still in flight).
    pub hit: bool,
    /// The block is cached but its read has not completed.
    pub in_flight: bool,
    /// The block carries a readahead marker (Linux `PG_readahead`), which this access clears.
    pub marker: bool,
    /// The block was prefetched and this is its first demand access.
    pub prefetch_hit: bool,
    pub pid: u32,
    pub time_ns: u64,
}

/// An asynchronous fetch a prefetcher asks for: `blocks` blocks from `block` on `device`.
/// Blocks already cached or in flight are skipped by the engine. `marker` names a block of the
/// range to carry a readahead marker (reported back as [`DemandAccess::marker`] on its first
/// demand access).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fetch {
    pub device: u32,
    pub block: u64,
    pub blocks: u32,
    pub marker: Option<u64>,
}

/// Whether blocks are cached, for prefetchers that look (Linux's `page_cache_next_miss`).
pub trait BlockPresence {
    /// Whether `block` of `device` is cached (including in flight).
    fn is_cached(&self, device: u32, block: u64) -> bool;
    /// Whether a read of `block` of `device` has been issued and has not completed (a demand
    /// read or a prefetch, waiting in the scheduler, held by a block stage or in the device).
    /// Such a block may already have been evicted (its read goes on); it is then in flight
    /// and not cached. The engine answers exactly; the default (`false`) is for test doubles.
    fn in_flight(&self, device: u32, block: u64) -> bool {
        let _ = (device, block);
        false
    }
    /// Cache frames no block occupies (capacity minus occupied). The engine answers exactly;
    /// the default (0) is for test doubles.
    fn free_frames(&self) -> u64 {
        0
    }
    /// Whether the cached block is pinned by the policy ([`crate::cache::Policy::pinned`]): no
    /// fetch can replace it now. Default: `false`.
    fn pinned(&self, device: u32, block: u64) -> bool {
        let _ = (device, block);
        false
    }
}

/// What a prefetcher asks of the cache beside fetches (see [`Prefetcher::cache_actions`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CacheActions {
    /// Caching calls made for an application (temporary priorities that steer the policy's
    /// choice of victims), delivered to an application-controlled policy in this order.
    pub controls: Vec<crate::cache::CacheControl>,
    /// Blocks (device, block) to drop from the cache: prefetches found false.
    pub flush: Vec<(u32, u64)>,
}

impl CacheActions {
    pub fn is_empty(&self) -> bool {
        self.controls.is_empty() && self.flush.is_empty()
    }
}

/// A block of an application's access list: where it is on disk and which file block it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListBlock {
    pub device: u32,
    pub block: u64,
    pub file: crate::cache::FileBlock,
}

/// How well a process's access list predicted its accesses (the run report's `hints`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ListCounts {
    /// Accesses matched at one of the next two list entries.
    pub matched: u64,
    /// Accesses matching neither.
    pub unpredicted: u64,
    /// List entries passed over by a match two entries on (pretended to have happened).
    pub skipped: u64,
    /// Prefetch batches started, and the blocks they fetched.
    pub batches: u64,
    pub prefetched: u64,
    /// False prefetches dropped once their predicted access had passed.
    pub flushed: u64,
    /// The list was discarded as too often wrong.
    pub dropped: bool,
}

/// Blocks that became present: a request the device completed, or one a block stage served
/// from its memory (see [`Prefetcher::on_complete`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    pub op: crate::trace::Op,
    pub device: u32,
    /// First block and number of blocks of the completed request (after the scheduler merged
    /// requests, the whole merged range: it may hold blocks of several fetches).
    pub block: u64,
    pub blocks: u32,
    /// The cause, pid and sync flag of the request (of its first part when merged).
    pub cause: crate::sched::Cause,
    pub pid: u32,
    /// Completed by the device (`false`: served by a block stage).
    pub by_device: bool,
    pub time_ns: u64,
}

/// A prefetcher.
///
/// Contract: [`Prefetcher::on_access`] is called for every demand read of every block, in
/// stream order, after the cache lookup (hit or miss, in flight or not, with the block's marker
/// state) and before a missed block is fetched; the blocks of one request come in ascending
/// order. The prefetcher answers by appending fetches to `out` (possibly none); a fetch may
/// include the demanded block itself (Linux's synchronous readahead reads the missed page as
/// part of its window), which the engine then reads as demand. A prefetcher never owns cache
/// space, never evicts, and must be deterministic. Writes are not shown to it.
pub trait Prefetcher: std::any::Any + Send {
    /// Name with parameters, e.g. `pm:degree=4`.
    fn name(&self) -> String;
    /// Sees one demand access; appends the fetches it wants.
    fn on_access(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, out: &mut Vec<Fetch>);
    /// The commonest access, offered first: a hit of process `pid` on `file`'s page, with
    /// `req_pages` pages of the request left, on a block with no marker that is neither in
    /// flight nor a first use of a prefetch. A prefetcher that would fetch nothing for it may
    /// handle it here, exactly as `on_access` would, and answer `true`; `false` (the default)
    /// has the engine call `on_access` with the full access instead. (Building that access
    /// costs more than some prefetchers' whole answer.)
    #[inline]
    fn on_plain_hit(&mut self, pid: u32, file: &FileView, req_pages: u64) -> bool {
        let _ = (pid, file, req_pages);
        false
    }
    /// Blocks became present: `done` completed (reads and writes, whatever caused them). Called
    /// once per completed request, after its blocks stopped being in flight and the references
    /// waiting for them woke (so `cache` already answers `in_flight == false` for them), and
    /// before the device is offered more work. The prefetcher may append fetches to `out`, as in
    /// `on_access`; the engine issues them at once for `done.pid` (asynchronous, cause
    /// prefetch), skipping blocks cached or in flight. For prefetchers that count their fetches
    /// in flight or act when the disk falls idle (ACFS's controlled-aggressive prefetching).
    /// The default does nothing.
    #[inline]
    fn on_complete(&mut self, done: &Completion, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        let _ = (done, cache, out);
    }
    /// The file and file block of `block` of `device`, when the prefetcher knows it (one that
    /// fetches from an application's list of file blocks). The engine asks before inserting a
    /// block this prefetcher fetched into a policy that uses files
    /// ([`crate::cache::Policy::application_controlled`]); `None` (the default) has the engine
    /// place the block beside the demand reference that triggered the fetch.
    fn file_of(&mut self, device: u32, block: u64) -> Option<crate::cache::FileBlock> {
        let _ = (device, block);
        None
    }
    /// Whether the prefetcher asks for [`CacheActions`] or takes access lists: the engine
    /// calls [`Prefetcher::cache_actions`] only for one that answers `true`. Constant for the
    /// prefetcher's life.
    fn acts_on_cache(&self) -> bool {
        false
    }
    /// Hands over (appending to `out`) the cache actions asked for since the last call. The
    /// engine calls it after `on_access`, `on_complete` and each `file_of`, and carries them
    /// out at once: calls go to the policy (if application-controlled), flushed blocks leave
    /// the cache like evicted ones.
    fn cache_actions(&mut self, out: &mut CacheActions) {
        let _ = out;
    }
    /// Whether the prefetcher fetches a file's next logical block and needs to know where the
    /// file system put it: the engine then learns the trace's [`FileMap`] in a pass before the
    /// run (traces that name files only) and hands it over with [`Prefetcher::set_file_map`].
    /// Constant for the prefetcher's life. Default: `false` (no pass, no map).
    fn wants_file_map(&self) -> bool {
        false
    }
    /// Where the trace's files lie, before the run (see [`Prefetcher::wants_file_map`]).
    fn set_file_map(&mut self, map: Arc<FileMap>) {
        let _ = map;
    }
    /// Whether the prefetcher needs the applications' access lists (from hints).
    fn wants_lists(&self) -> bool {
        false
    }
    /// The access list of each process that gave one, before the run.
    fn set_lists(&mut self, lists: std::collections::BTreeMap<u32, Vec<ListBlock>>) {
        let _ = lists;
    }
    /// How each process's list did, by pid (for prefetchers with lists).
    fn list_counts(&self) -> Vec<(u32, ListCounts)> {
        Vec::new()
    }
    /// What the prefetcher reports in the run's result, if anything (the readahead controller's
    /// decisions, [`select`]). Default: nothing.
    fn report(&self) -> Option<serde_json::Value> {
        None
    }
}

/// A prefetcher's entry in the registry.
pub struct PrefetcherInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub build: fn(spec: &mut ComponentSpec, page_size: u64) -> Result<Box<dyn Prefetcher>, ConfigError>,
}

/// Every prefetcher iostack has.
pub static PREFETCHERS: &[PrefetcherInfo] = &[none::INFO, obl::INFO, pm::INFO, pa::INFO, linux::INFO,
    pmlast::INFO, ca::INFO,
];

/// Builds a prefetcher from a spec such as `none`, `obl`, `pm:4`, `pa:degree=8` or
/// `linux:max=128KiB`.
pub fn build(spec: &str, page_size: u64) -> Result<Box<dyn Prefetcher>, ConfigError> {
    let mut spec = ComponentSpec::parse("--prefetch", spec, &[("pm", "degree"), ("pa", "degree"), ("pmlast", "degree"), ("linux", "max"), ("obl", "mode"), ("ca", "b")])?;
    let info = PREFETCHERS
        .iter()
        .find(|p| p.name == spec.name || p.aliases.contains(&spec.name.as_str()))
        .ok_or_else(|| {
            let names: Vec<&str> = PREFETCHERS.iter().map(|p| p.name).collect();
            ConfigError::unknown("--prefetch", "prefetcher", &spec.name, &names)
        })?;
    let p = (info.build)(&mut spec, page_size)?;
    spec.finish()?;
    Ok(p)
}

/// Pages of the accessed block's file after it (`u64::MAX` less its index when the size is
/// unknown).
#[inline]
fn pages_after(a: &DemandAccess) -> u64 {
    a.file.size_pages.saturating_sub(a.file.index + 1)
}

/// The blocks `b+1 ..= b+degree` of the accessed block's device, cut at the end of its file
/// when the file size is known (shared by OBL, PM and PA).
pub(crate) fn next_blocks(a: &DemandAccess, degree: u64, out: &mut Vec<Fetch>) {
    let n = degree.min(pages_after(a)).min(u32::MAX as u64);
    if n > 0 {
        out.push(Fetch { device: a.device, block: a.block + 1, blocks: n as u32, marker: None });
    }
}

/// Where the file's block after the accessed one lies: in the file map when it has the place,
/// else the device block after the accessed one (files without a map, the device standing for a
/// file, blocks the trace never placed); `None` past the end of the file when its size is known.
#[inline]
pub(crate) fn next_in_file(a: &DemandAccess, map: Option<&FileMap>) -> Option<(u32, u64)> {
    if pages_after(a) == 0 {
        return None;
    }
    Some(match map {
        Some(m) if !a.file.is_device => m.next_place(a.file.id, a.file.index, a.device, a.block),
        _ => (a.device, a.block + 1),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks below 600 are cached.
    struct LowCached;
    impl BlockPresence for LowCached {
        fn is_cached(&self, _device: u32, block: u64) -> bool {
            block < 600
        }
    }

    /// Every prefetcher, driven once with every access through `on_access` and once with plain
    /// hits offered to `on_plain_hit` first (as the engine does), fetches the same blocks.
    #[test]
    fn plain_hits_are_answered_as_on_access_would() {
        let mut x = 12345u64;
        let accesses: Vec<DemandAccess> = (0..5000)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                // Runs of sequential pages with random jumps, mixed hits, markers and processes.
                let index = if x >> 60 < 3 { (x >> 20) % 1000 } else { i as u64 % 1000 };
                let hit = (x >> 40) % 3 != 0;
                let marker = hit && (x >> 30) % 7 == 0;
                DemandAccess {
                    device: 0,
                    block: index,
                    file: FileView { id: (x >> 50) % 2, is_device: false, index, size_pages: 1000 },
                    req_pages: 1 + (x >> 10) % 3,
                    hit,
                    in_flight: false,
                    marker,
                    prefetch_hit: false,
                    pid: ((x >> 55) % 2) as u32,
                    time_ns: i as u64,
                }
            })
            .collect();
        for p in PREFETCHERS {
            let (mut full, mut offered) = (build(p.name, 4096).unwrap(), build(p.name, 4096).unwrap());
            for a in &accesses {
                let (mut want, mut got) = (Vec::new(), Vec::new());
                full.on_access(a, &LowCached, &mut want);
                let plain = a.hit && !a.marker && !a.in_flight && !a.prefetch_hit;
                if !(plain && offered.on_plain_hit(a.pid, &a.file, a.req_pages)) {
                    offered.on_access(a, &LowCached, &mut got);
                }
                assert_eq!(got, want, "{}: {a:?}", p.name);
            }
        }
    }
}
