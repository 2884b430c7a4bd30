//! The shadow page cache: the readahead setting not running, fed the application's reads.
//!
//! A page cache of the real one's policy and size, with its own prefetcher instance, sees every
//! demand read of every block the real page cache sees, in the same order and at the same time,
//! and does with it what the engine's page cache does (`engine::timed::engine::page_cache`): the
//! lookup, the prefetcher's answer from *its* cache (hits, pages in flight, readahead markers,
//! first uses of prefetched pages), the room made by eviction, the demanded page read on a miss
//! and the prefetched pages not cached or in flight. What it reads goes to KDSim's virtual disk
//! ([`VirtualDisk`], its own instance of the real scheduler, timed by the table model), whose
//! completions make the pages present. So the road not taken issues its own requests: other
//! sizes, other blocks, other hits, not copies of the running setting's stream.
//!
//! The requests an application read causes are handed to the virtual disk together when the
//! read's last page has been looked up (the engine's block layer hands the scheduler the runs
//! of one read together, and the scheduler merges them): the pages wanted are sorted and cut
//! into runs of contiguous pages of at most the stack's largest request, each synchronous if it
//! holds a demanded page (the process waits for it), else asynchronous (readahead).
//!
//! The shadow is fed the reads when the real system issues them, but a process cannot issue a
//! read before its previous one completed *in the shadow*: each process's synchronous requests
//! are held until its previous one completed on the virtual disk, and enter it then (or at their
//! real issue, if later), after the disk has taken its next request, as in the real system, where
//! the device starts its next request when one completes, before the process woken by it issues
//! another. Handed a process's whole backlog at once instead, the virtual disk's scheduler served
//! each process's sequential 4 KiB reads back to back and showed no readahead cheaper than it is
//! by a factor of seven (four sequential readers: 1.0 s per window of 1000 reads in the shadow,
//! 7.4 s when no readahead runs for real).
//!
//! Writes are not shown to prefetchers, and the shadow does not see them: it is a read cache.
//! Blocks evicted while their read is in flight stay in flight (a later miss on one waits for
//! that read, as in the engine).

use std::collections::VecDeque;

use crate::cache::{block_key, split_block_key, Access, Key, KeyMap, Origin, Policy};
use crate::kdsim::virtual_disk::{VirtualDisk, VirtualRequest};
use crate::prefetch::{BlockPresence, DemandAccess, Fetch, Prefetcher};
use crate::trace::Op;

const MARKER: u8 = 1;
const PREFETCHED: u8 = 2;

/// A page the shadow wants read, from the application read being looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Wanted {
    block: u64,
    demand: bool,
}

/// What the shadow did, for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct ShadowCounts {
    /// Demand accesses (one per page read by the application) and the hits among them.
    pub accesses: u64,
    pub hits: u64,
    /// Requests handed to the virtual disk, and their pages (demand and readahead).
    pub requests: u64,
    pub blocks_read: u64,
    /// Pages read ahead, and those evicted before any use.
    pub prefetched: u64,
    pub prefetch_wasted: u64,
}

/// The shadow page cache over its virtual disk.
pub struct Shadow {
    policy: Box<dyn Policy>,
    prefetcher: Box<dyn Prefetcher>,
    vd: VirtualDisk,
    /// Marker and prefetched flags of cached pages.
    flags: KeyMap<u8>,
    /// Pages whose read is on the virtual disk, with its request.
    in_flight: KeyMap<u64>,
    /// The virtual disk's requests not completed: first page key, pages, process, synchronous.
    requests: rustc_hash::FxHashMap<u64, (Key, u32, u32, bool)>,
    /// Each process's synchronous requests on the virtual disk and the requests it holds back.
    gates: std::collections::BTreeMap<u32, Gate>,
    /// Application reads waiting for each page in flight.
    waiters: KeyMap<Vec<u64>>,
    /// The pages the application read being looked up wants read, and its process.
    wanted: Vec<Wanted>,
    wanted_pid: u32,
    device: u32,
    max_blocks: u32,
    vtime: u64,
    next_id: u64,
    fetches: Vec<Fetch>,
    side: Vec<crate::cache::Evicted>,
    done: VecDeque<(u64, u64)>,
    counts: ShadowCounts,
}

/// A process's requests on their way to the virtual disk.
#[derive(Debug, Default)]
struct Gate {
    sync_out: u32,
    /// Requests held until the process's synchronous one completes, with their real issue.
    held: VecDeque<(VirtualRequest, u64)>,
}

/// The shadow cache as its prefetcher sees it.
struct Presence<'a> {
    policy: &'a dyn Policy,
    in_flight: &'a KeyMap<u64>,
}

impl BlockPresence for Presence<'_> {
    fn is_cached(&self, device: u32, block: u64) -> bool {
        let k = block_key(device, block);
        self.policy.contains(k) || self.in_flight.contains_key(&k)
    }
    fn in_flight(&self, device: u32, block: u64) -> bool {
        self.in_flight.contains_key(&block_key(device, block))
    }
    fn free_frames(&self) -> u64 {
        self.policy.capacity().saturating_sub(self.policy.occupied())
    }
    fn pinned(&self, device: u32, block: u64) -> bool {
        self.policy.pinned(block_key(device, block))
    }
}

impl Shadow {
    /// A cold shadow: `policy` (empty, the real cache's policy and size), `prefetcher` (the
    /// setting it plays), `vd` (the virtual disk), requests of at most `max_blocks` pages.
    pub fn new(policy: Box<dyn Policy>, prefetcher: Box<dyn Prefetcher>, vd: VirtualDisk, max_blocks: u32) -> Shadow {
        Shadow {
            policy,
            prefetcher,
            vd,
            flags: KeyMap::default(),
            in_flight: KeyMap::default(),
            requests: Default::default(),
            gates: Default::default(),
            waiters: KeyMap::default(),
            wanted: Vec::new(),
            wanted_pid: 0,
            device: 0,
            max_blocks: max_blocks.max(1),
            vtime: 0,
            next_id: 0,
            fetches: Vec::new(),
            side: Vec::new(),
            done: VecDeque::new(),
            counts: ShadowCounts::default(),
        }
    }

    /// The setting played from now on: a fresh prefetcher instance. The cached pages, their
    /// markers and the reads in flight are kept.
    pub fn set_prefetcher(&mut self, p: Box<dyn Prefetcher>) {
        self.prefetcher = p;
    }

    /// Where the trace's files lie, for the prefetcher playing now.
    pub fn set_file_map(&mut self, map: std::sync::Arc<crate::prefetch::file_map::FileMap>) {
        self.prefetcher.set_file_map(map);
    }

    pub fn prefetcher_name(&self) -> String {
        self.prefetcher.name()
    }

    pub fn counts(&self) -> ShadowCounts {
        self.counts
    }

    pub fn vd(&self) -> &VirtualDisk {
        &self.vd
    }

    /// Runs the virtual disk to `now`, one event at a time so that a completion lets its
    /// process's held requests in when it happens; the application reads whose pages became
    /// present, each with the time (one entry per page waited for), are then in
    /// [`Shadow::take_done`].
    pub fn advance(&mut self, now: u64) {
        let mut stuck = None;
        loop {
            let at = self.vd.now();
            let t = match self.vd.next_event_ns() {
                Some(e) if e <= now && e > at => e,
                // A dispatch due now: run just past it (once; a scheduler that will not dispatch
                // waits for an arrival).
                Some(e) if e <= at && at < now && stuck != Some(at) => {
                    stuck = Some(at);
                    at + 1
                }
                _ => break,
            };
            self.vd.advance(t);
            self.collect();
        }
        self.vd.advance(now);
        self.collect();
    }

    fn collect(&mut self) {
        for c in self.vd.take_completed() {
            let Some((first, blocks, pid, sync)) = self.requests.remove(&c.id) else { continue };
            let (dev, block) = split_block_key(first);
            for b in block..block + blocks as u64 {
                let key = block_key(dev, b);
                if self.in_flight.get(&key) == Some(&c.id) {
                    self.in_flight.remove(&key);
                }
                if let Some(ws) = self.waiters.remove(&key) {
                    self.done.extend(ws.into_iter().map(|r| (r, c.finish_ns)));
                }
            }
            if sync {
                if let Some(g) = self.gates.get_mut(&pid) {
                    g.sync_out -= 1;
                }
                self.release(pid, c.finish_ns);
            }
        }
    }

    /// Lets `pid`'s held requests in, up to the next synchronous one that must wait, at `finish`
    /// (its previous synchronous request's completion) or their real issue if later.
    fn release(&mut self, pid: u32, finish: u64) {
        loop {
            let Some(g) = self.gates.get_mut(&pid) else { return };
            let Some(&(req, issued)) = g.held.front() else { return };
            if req.sync && g.sync_out > 0 {
                return;
            }
            g.held.pop_front();
            g.sync_out += req.sync as u32;
            self.enter(req, issued.max(finish));
        }
    }

    /// A request enters the virtual disk at `at` (at the earliest its time now); one due at an
    /// instant at which the disk has a dispatch due comes after that dispatch.
    fn enter(&mut self, req: VirtualRequest, at: u64) {
        let now = self.vd.now();
        if at <= now && self.vd.next_event_ns() == Some(now) {
            self.vd.advance(now + 1);
        }
        let at = at.max(self.vd.now());
        self.vd.submit(req, at);
    }

    /// Application reads (by the caller's number) one of whose pages became present, and when.
    pub fn take_done(&mut self) -> Option<(u64, u64)> {
        self.done.pop_front()
    }

    /// One demand read of one page, as the real page cache saw it (`a`: only its page, file,
    /// request size, process and time are taken; hit, flight and marker are the shadow's own),
    /// for application read `read`. Whether the read waits for this page (it will be reported
    /// by [`Shadow::take_done`]).
    pub fn access(&mut self, a: &DemandAccess, read: u64) -> bool {
        if !self.wanted.is_empty() && self.wanted_pid != a.pid {
            self.submit(a.time_ns);
        }
        self.wanted_pid = a.pid;
        self.device = a.device;
        let key = block_key(a.device, a.block);
        self.vtime += 1;
        let acc = Access { key, size: 1, op: Some(Op::Read), pid: a.pid, time_ns: a.time_ns, vtime: self.vtime, next_access: u64::MAX, origin: Origin::Demand };
        let hit = self.policy.find(&acc);
        self.drain_side();
        let flags = if hit { self.flags.remove(&key).unwrap_or(0) } else { 0 };
        let in_flight = self.in_flight.contains_key(&key);
        self.counts.accesses += 1;
        self.counts.hits += hit as u64;
        let access = DemandAccess { hit, in_flight, marker: flags & MARKER != 0, prefetch_hit: flags & PREFETCHED != 0, ..*a };
        self.fetches.clear();
        let presence = Presence { policy: &*self.policy, in_flight: &self.in_flight };
        self.prefetcher.on_access(&access, &presence, &mut self.fetches);
        let mut fetched_now = false;
        if !hit {
            self.make_room(&acc);
            self.policy.insert(&acc);
            self.drain_side();
            if !in_flight {
                self.wanted.push(Wanted { block: a.block, demand: true });
                fetched_now = true;
            }
        }
        let waits = !hit || in_flight;
        if waits {
            self.waiters.entry(key).or_default().push(read);
        }
        let fetches = std::mem::take(&mut self.fetches);
        for f in &fetches {
            self.prefetch(f, key, fetched_now, a);
        }
        self.fetches = fetches;
        if a.req_pages <= 1 {
            self.submit(a.time_ns);
        }
        waits
    }

    /// The pages of one fetch not cached nor in flight are cached and wanted.
    fn prefetch(&mut self, f: &Fetch, demand_key: Key, demand_fetched_now: bool, a: &DemandAccess) {
        for i in 0..f.blocks {
            let block = f.block + i as u64;
            let key = block_key(f.device, block);
            let is_marker = f.marker == Some(block);
            if key == demand_key {
                if is_marker && demand_fetched_now {
                    *self.flags.entry(key).or_default() |= MARKER;
                }
                continue;
            }
            if self.policy.contains(key) || self.in_flight.contains_key(&key) {
                continue;
            }
            self.vtime += 1;
            let acc = Access { key, size: 1, op: Some(Op::Read), pid: a.pid, time_ns: a.time_ns, vtime: self.vtime, next_access: u64::MAX, origin: Origin::Prefetch { set: 0, index: i, len: f.blocks } };
            self.make_room(&acc);
            self.policy.insert(&acc);
            self.drain_side();
            self.flags.insert(key, PREFETCHED | if is_marker { MARKER } else { 0 });
            self.counts.prefetched += 1;
            // Marked in flight now, so that a later fetch of the same read skips it.
            self.in_flight.insert(key, u64::MAX);
            self.wanted.push(Wanted { block, demand: false });
        }
    }

    fn make_room(&mut self, acc: &Access) {
        while self.policy.occupied() + 1 > self.policy.capacity() {
            match self.policy.evict(acc) {
                Some(ev) => self.evicted(ev.key),
                None => break,
            }
        }
        self.drain_side();
    }

    fn drain_side(&mut self) {
        if !self.policy.has_side_evictions() {
            return;
        }
        let mut side = std::mem::take(&mut self.side);
        self.policy.drain_side_evictions(&mut side);
        for ev in side.drain(..) {
            self.evicted(ev.key);
        }
        self.side = side;
    }

    fn evicted(&mut self, key: Key) {
        if self.flags.remove(&key).is_some_and(|f| f & PREFETCHED != 0) {
            self.counts.prefetch_wasted += 1;
        }
    }

    /// Hands the virtual disk the wanted pages as runs of contiguous pages.
    fn submit(&mut self, now: u64) {
        if self.wanted.is_empty() {
            return;
        }
        let mut wanted = std::mem::take(&mut self.wanted);
        wanted.sort_unstable();
        let mut i = 0;
        while i < wanted.len() {
            let start = wanted[i].block;
            let mut j = i + 1;
            while j < wanted.len() && wanted[j].block == start + (j - i) as u64 && (j - i) < self.max_blocks as usize {
                j += 1;
            }
            let run = &wanted[i..j];
            let id = self.next_id;
            self.next_id += 1;
            let blocks = run.len() as u32;
            for w in run {
                self.in_flight.insert(block_key(self.device, w.block), id);
            }
            let (pid, sync) = (self.wanted_pid, run.iter().any(|w| w.demand));
            self.requests.insert(id, (block_key(self.device, start), blocks, pid, sync));
            self.counts.requests += 1;
            self.counts.blocks_read += blocks as u64;
            let req = VirtualRequest { id, pid, op: Op::Read, block: start, blocks, sync, issued_behind: None, issued_queued: None, awaits_real: false };
            let g = self.gates.entry(pid).or_default();
            if !g.held.is_empty() || (sync && g.sync_out > 0) {
                g.held.push_back((req, now));
            } else {
                g.sync_out += sync as u32;
                self.enter(req, now);
            }
            i = j;
        }
        wanted.clear();
        self.wanted = wanted;
    }
}
