//! ca: ACFS's controlled-aggressive prefetching, the prefetch control module (PCM) of Cao,
//! Felten, Karlin and Li, "Implementation and performance of integrated application-controlled
//! file caching, prefetching, and disk scheduling" (ACM TOCS; `papers/002_a9d62adcdacf8768.txt`,
//! §2.1.2-2.1.3, §2.2 and §4.3; readings J3-J6 of `specs/acfs.md`).
//!
//! The theory (l.196-201): fetch the next missing block as soon as the disk is idle and a
//! cached block will be used after it, replacing optimally. The prototype (l.680-728) keeps,
//! for each process that gave a list of its future accesses (hints `file_list` and
//! `block_list`, at most 5000 entries, l.698-700):
//!
//! - the `accessList`, expanded here to single blocks;
//! - the `cursor`, the last list position matched. Each access is compared with the next two
//!   list entries (l.717-720; J4): a match at the first moves the cursor there; a match at the
//!   second also passes over one entry, which is *skipped* (pretended to have happened); no
//!   match is *unpredicted* and leaves the cursor. The run report gives the three counts per
//!   process (`hints`: `matched`, `unpredicted`, `skipped`);
//! - `nextHole`, the first list block after the cursor neither cached nor being read;
//! - `freeBlocks`, the process's cached blocks whose next access in the list comes after
//!   `nextHole` or never, plus the cache's empty frames (J3);
//! - `pCount`, its prefetches not yet completed.
//!
//! A batch starts when the cursor has advanced since the last batch, freeBlocks is at least
//! `trigger_min` (4) and pCount is 0 (l.721-728); it then fetches nextHole, advances it, and
//! goes on while it has fetched fewer than `b` blocks (B, 16, l.312-331) and freeBlocks is
//! above `loop_gt` (4): each fetch takes one empty frame or one free block (J3 keeps both
//! thresholds literal). The batch goes out sorted by block number (the prototype sorts its
//! batch because the Ultrix driver is FCFS, l.729-737); with `b=1` there is no scheduling
//! (l.1002-1003), and `sort=off` issues each batch in list order (not the paper's: it separates
//! what issuing B prefetches at once does from what sorting them does). Besides the access that moved the cursor, a batch may start when the
//! process's last prefetch completes (the disk fell idle for it, [`Prefetcher::on_complete`]).
//!
//! In the theoretical model a reference's block is in use for its time unit and cannot be
//! replaced; the timed engine has no such unit unless the policy pins it
//! (`lrusp:pin_current=on`, J8). Pinned blocks ([`BlockPresence::pinned`]) are then neither
//! free blocks nor victims, so that a batch never replaces a block needed before its fetch.
//!
//! Victims (l.752-769): LRU-SP picks the process that gives up a frame, and that process's
//! manager must choose among the blocks used after nextHole. The prefetcher steers it through
//! temporary priorities ([`CacheActions::controls`]): when a batch starts, the process's cached
//! blocks needed before the last hole it fetched, and each block it fetches, get the highest
//! temporary priority, which lasts until the block is next referenced (§4.1), so that the
//! manager's lowest pool holds only blocks used later, chosen by the application's own
//! priorities and policies. This needs an application-controlled policy (`lrusp`) and the
//! process's hints table (which makes it a managing process); under another policy the
//! victims are the policy's.
//!
//! Imperfect lists (§2.1.3, l.236-251):
//! - after an unpredicted access that missed, no prefetch is issued until its demand read
//!   completes;
//! - a skipped block that the list does not name again is flushed if it was prefetched and is
//!   still cached (a false prefetch holds its frame only until its predicted access has passed,
//!   l.461-475), and otherwise given the lowest temporary priority;
//! - a list is dropped when more than half of the process's last `window` (32) accesses were
//!   unpredicted (J5: the paper gives no threshold); the process is then oblivious.
//!
//! Processes without a list, or whose list was dropped, get the baseline's sequential
//! one-block lookahead (`obl:seq`, J6); `oblivious=none` gives them nothing.

use std::collections::BTreeMap;

use rustc_hash::{FxHashMap, FxHashSet};

use super::obl::OblSeq;
use super::{BlockPresence, CacheActions, Completion, DemandAccess, Fetch, ListBlock, ListCounts, Prefetcher, PrefetcherInfo};
use crate::cache::{block_key, CacheControl, FileBlock, Key};

pub const INFO: PrefetcherInfo = PrefetcherInfo {
    name: "ca",
    aliases: &["controlled-aggressive", "acfs"],
    summary: "ACFS controlled-aggressive prefetching from the applications' access lists (hints), batches of b=16 sorted by block; obl:seq for processes without a list",
    build: |spec, _page| {
        let b = spec.u64("b", 16, 1, super::MAX_DEGREE)? as usize;
        let trigger_min = spec.u64("trigger_min", 4, 0, u32::MAX as u64)?;
        let loop_gt = spec.u64("loop_gt", 4, 0, u32::MAX as u64)?;
        let window = spec.u64("window", 32, 0, 64)? as u32;
        let oblivious = spec.choice("oblivious", "seq", &["seq", "none"])? == "seq";
        let sort = spec.choice("sort", "on", &["on", "off"])? == "on";
        Ok(Box::new(ControlledAggressive::new(Params { b, trigger_min, loop_gt, window, oblivious, sort })))
    },
};

/// The parameters (spec keys `b`, `trigger_min`, `loop_gt`, `window`, `oblivious`, `sort`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Params {
    pub b: usize,
    pub trigger_min: u64,
    pub loop_gt: u64,
    /// Accesses over which a list's unpredicted share is judged (0: never drop).
    pub window: u32,
    pub oblivious: bool,
    /// Each batch goes out sorted by block number (the scheduling of l.312-319); off, in list
    /// order, which separates the effect of issuing B prefetches at once from that of sorting.
    pub sort: bool,
}

impl Default for Params {
    fn default() -> Self {
        Params { b: 16, trigger_min: 4, loop_gt: 4, window: 32, oblivious: true, sort: true }
    }
}

/// Temporary priority of blocks the process needs before the next hole (kept over any pool).
const PROTECT: i32 = i32::MAX;
/// Temporary priority of skipped blocks the list does not name again (replaced first).
const LOWEST: i32 = i32::MIN;

/// One process's prefetch object (l.680-709).
#[derive(Default)]
struct Proc {
    list: Vec<ListBlock>,
    keys: Vec<Key>,
    /// The list positions of each block, ascending.
    positions: FxHashMap<Key, Vec<u32>>,
    /// List entries consumed: the cursor is at `pos - 1`.
    pos: usize,
    advanced: bool,
    /// Prefetches issued and not completed (pCount).
    outstanding: FxHashSet<Key>,
    /// An unpredicted demand miss whose read has not completed.
    blocking: Option<Key>,
    /// Blocks the process referenced or prefetched: where its free blocks are looked for.
    touched: FxHashSet<Key>,
    /// Blocks it prefetched and has not referenced since.
    prefetched: FxHashSet<Key>,
    /// The last `window` accesses, 1 for unpredicted (newest in bit 0), and how many there were.
    recent: u64,
    seen: u32,
    counts: ListCounts,
}

impl Proc {
    fn new(list: Vec<ListBlock>) -> Proc {
        let keys: Vec<Key> = list.iter().map(|l| block_key(l.device, l.block)).collect();
        let mut positions: FxHashMap<Key, Vec<u32>> = FxHashMap::default();
        for (i, &k) in keys.iter().enumerate() {
            positions.entry(k).or_default().push(i as u32);
        }
        Proc { list, keys, positions, ..Default::default() }
    }

    /// The first list position at or after `from` naming `key`; `usize::MAX` when none.
    fn next_use(&self, key: Key, from: usize) -> usize {
        let Some(ps) = self.positions.get(&key) else { return usize::MAX };
        let i = ps.partition_point(|&p| (p as usize) < from);
        ps.get(i).map_or(usize::MAX, |&p| p as usize)
    }

    /// Matches an access to `key` against the next two entries (J4): `Some(k)` for a match k
    /// entries on (1 or 2), `None` for an unpredicted access.
    fn advance(&mut self, key: Key) -> Option<usize> {
        let k = (1..=2).find(|&k| self.keys.get(self.pos + k - 1) == Some(&key))?;
        self.pos += k;
        Some(k)
    }

    fn active(&self) -> bool {
        !self.counts.dropped && !self.list.is_empty()
    }
}

/// Controlled-aggressive prefetching with per-process access lists.
pub struct ControlledAggressive {
    p: Params,
    procs: FxHashMap<u32, Proc>,
    /// Outstanding prefetches, to the process that issued each.
    owner: FxHashMap<Key, u32>,
    /// Files of blocks in the lists, for the policy.
    files: FxHashMap<Key, FileBlock>,
    /// Blocks of the batch being issued: they get the protecting priority once cached.
    batch_blocks: FxHashSet<Key>,
    actions: CacheActions,
    fallback: OblSeq,
}

impl ControlledAggressive {
    pub fn new(p: Params) -> ControlledAggressive {
        ControlledAggressive {
            p,
            procs: FxHashMap::default(),
            owner: FxHashMap::default(),
            files: FxHashMap::default(),
            batch_blocks: FxHashSet::default(),
            actions: CacheActions::default(),
            fallback: OblSeq::default(),
        }
    }

    /// Counts of process `pid`'s list, if it has one.
    pub fn counts(&self, pid: u32) -> Option<ListCounts> {
        self.procs.get(&pid).map(|p| p.counts)
    }

    fn control(&mut self, pid: u32, key: Key, prio: i32) {
        if let Some(&f) = self.files.get(&key) {
            self.actions.controls.push(CacheControl::SetTempPri { pid, file: f.file, first: f.block, last: f.block, prio });
        }
    }

    /// Process `pid` accessed `key`: the cursor, skipped entries and the bogus-list check.
    fn see(&mut self, pid: u32, key: Key, missed: bool) {
        let window = self.p.window;
        let Some(pr) = self.procs.get_mut(&pid) else { return };
        if !pr.active() {
            return;
        }
        pr.touched.insert(key);
        pr.prefetched.remove(&key);
        let before = pr.pos;
        let matched = pr.advance(key);
        let mut skipped_keys = Vec::new();
        match matched {
            Some(k) => {
                pr.counts.matched += 1;
                pr.advanced = true;
                for i in before..before + k - 1 {
                    pr.counts.skipped += 1;
                    let s = pr.keys[i];
                    if pr.next_use(s, pr.pos) == usize::MAX {
                        skipped_keys.push((s, pr.prefetched.remove(&s)));
                    }
                }
            }
            None => {
                pr.counts.unpredicted += 1;
                if missed {
                    pr.blocking = Some(key);
                }
            }
        }
        if window > 0 {
            pr.recent = (pr.recent << 1) | matched.is_none() as u64;
            pr.seen = (pr.seen + 1).min(window);
            let mask = if window == 64 { u64::MAX } else { (1u64 << window) - 1 };
            if pr.seen == window && (pr.recent & mask).count_ones() * 2 > window {
                pr.counts.dropped = true;
            }
        }
        for (s, was_prefetched) in skipped_keys {
            if was_prefetched {
                let (d, b) = crate::cache::split_block_key(s);
                self.actions.flush.push((d, b));
                if let Some(pr) = self.procs.get_mut(&pid) {
                    pr.counts.flushed += 1;
                }
            } else {
                self.control(pid, s, LOWEST);
            }
        }
    }

    /// Starts a batch for `pid` if the trigger holds (l.721-728); `current` is a block being
    /// demanded now (not yet in flight), never fetched as a prefetch.
    fn trigger(&mut self, pid: u32, cache: &dyn BlockPresence, current: Option<Key>, out: &mut Vec<Fetch>) {
        let p = self.p;
        let Some(pr) = self.procs.get_mut(&pid) else { return };
        if !pr.active() || !pr.advanced || !pr.outstanding.is_empty() {
            return;
        }
        if let Some(k) = pr.blocking {
            let (d, b) = crate::cache::split_block_key(k);
            if Some(k) == current || cache.in_flight(d, b) {
                return;
            }
            pr.blocking = None;
        }
        let missing = |pr: &Proc, i: usize, issued: &FxHashSet<Key>| {
            let k = pr.keys[i];
            let (d, b) = crate::cache::split_block_key(k);
            Some(k) != current && !issued.contains(&k) && !cache.is_cached(d, b)
        };
        let mut issued: FxHashSet<Key> = FxHashSet::default();
        let Some(mut hole) = (pr.pos..pr.keys.len()).find(|&i| missing(pr, i, &issued)) else { return };
        // The next uses of the process's cached blocks, sorted: free blocks are those whose
        // next use is after the hole (J3).
        pr.touched.retain(|&k| {
            let (d, b) = crate::cache::split_block_key(k);
            cache.is_cached(d, b)
        });
        // A block the policy pins (in use, `lrusp:pin_current=on`) can be replaced by none of
        // the batch's fetches: it is not free, and needs no protecting.
        let mut uses: Vec<(usize, Key)> = pr
            .touched
            .iter()
            .filter(|&&k| {
                let (d, b) = crate::cache::split_block_key(k);
                !cache.pinned(d, b)
            })
            .map(|&k| (pr.next_use(k, pr.pos), k))
            .collect();
        uses.sort_unstable();
        let mut empty = cache.free_frames();
        let mut taken = 0u64;
        let free = |hole: usize, empty: u64, taken: u64| {
            let after = (uses.len() - uses.partition_point(|&(u, _)| u <= hole)) as u64;
            (empty + after).saturating_sub(taken)
        };
        if free(hole, empty, taken) < p.trigger_min {
            return;
        }
        pr.advanced = false;
        let mut batch: Vec<usize> = Vec::with_capacity(p.b);
        while batch.len() < p.b && free(hole, empty, taken) > p.loop_gt {
            batch.push(hole);
            issued.insert(pr.keys[hole]);
            if empty > 0 {
                empty -= 1;
            } else {
                taken += 1;
            }
            match (hole + 1..pr.keys.len()).find(|&i| missing(pr, i, &issued)) {
                Some(h) => hole = h,
                None => break,
            }
        }
        if batch.is_empty() {
            return;
        }
        // Keep what is needed before the last block fetched: the victims come from later.
        let last = *batch.last().expect("a batch");
        let protect: Vec<Key> = uses.iter().take_while(|&&(u, _)| u <= last).map(|&(_, k)| k).collect();
        pr.counts.batches += 1;
        pr.counts.prefetched += batch.len() as u64;
        let mut blocks: Vec<ListBlock> = batch.iter().map(|&i| pr.list[i]).collect();
        if p.sort {
            blocks.sort_unstable_by_key(|l| (l.device, l.block));
        }
        for l in &blocks {
            let k = block_key(l.device, l.block);
            pr.outstanding.insert(k);
            pr.prefetched.insert(k);
            pr.touched.insert(k);
            self.owner.insert(k, pid);
            self.batch_blocks.insert(k);
            out.push(Fetch { device: l.device, block: l.block, blocks: 1, marker: None });
        }
        for k in protect {
            self.control(pid, k, PROTECT);
        }
    }
}

impl Prefetcher for ControlledAggressive {
    fn name(&self) -> String {
        let p = self.p;
        let d = Params::default();
        let mut s = format!("ca:b={}", p.b);
        if p.trigger_min != d.trigger_min || p.loop_gt != d.loop_gt {
            s += &format!(",trigger_min={},loop_gt={}", p.trigger_min, p.loop_gt);
        }
        if p.window != d.window {
            s += &format!(",window={}", p.window);
        }
        if !p.oblivious {
            s += ",oblivious=none";
        }
        if !p.sort {
            s += ",sort=off";
        }
        s
    }

    fn on_access(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        let key = block_key(a.device, a.block);
        if self.procs.get(&a.pid).is_some_and(|p| p.active()) {
            let missed = !a.hit;
            self.see(a.pid, key, missed);
            if self.procs.get(&a.pid).is_some_and(|p| p.active()) {
                self.trigger(a.pid, cache, missed.then_some(key), out);
                return;
            }
        }
        if self.p.oblivious {
            self.fallback.on_access(a, cache, out);
        }
    }

    fn on_complete(&mut self, done: &Completion, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        if done.op.is_write() {
            return;
        }
        let mut idle = Vec::new();
        for b in done.block..done.block + done.blocks as u64 {
            let k = block_key(done.device, b);
            if let Some(pid) = self.owner.remove(&k) {
                if let Some(pr) = self.procs.get_mut(&pid) {
                    pr.outstanding.remove(&k);
                    if pr.outstanding.is_empty() {
                        idle.push(pid);
                    }
                }
            }
            for pr in self.procs.values_mut() {
                if pr.blocking == Some(k) {
                    pr.blocking = None;
                    pr.advanced = true;
                }
            }
        }
        if done.pid != u32::MAX && self.procs.get(&done.pid).is_some_and(|p| p.blocking.is_none() && p.advanced) {
            idle.push(done.pid);
        }
        idle.sort_unstable();
        idle.dedup();
        for pid in idle {
            self.trigger(pid, cache, None, out);
        }
    }

    fn file_of(&mut self, device: u32, block: u64) -> Option<FileBlock> {
        let k = block_key(device, block);
        if self.batch_blocks.remove(&k) {
            if let Some(&pid) = self.owner.get(&k) {
                self.control(pid, k, PROTECT);
            }
        }
        self.files.get(&k).copied().or_else(|| self.fallback.file_of(device, block))
    }

    /// The oblivious processes' one-block lookahead fetches a file's next block where it lies.
    fn wants_file_map(&self) -> bool {
        self.p.oblivious
    }

    fn set_file_map(&mut self, map: std::sync::Arc<super::file_map::FileMap>) {
        self.fallback.set_file_map(map);
    }

    fn acts_on_cache(&self) -> bool {
        true
    }

    fn cache_actions(&mut self, out: &mut CacheActions) {
        out.controls.append(&mut self.actions.controls);
        out.flush.append(&mut self.actions.flush);
    }

    fn wants_lists(&self) -> bool {
        true
    }

    fn set_lists(&mut self, lists: BTreeMap<u32, Vec<ListBlock>>) {
        for (pid, list) in lists {
            for l in &list {
                self.files.insert(block_key(l.device, l.block), l.file);
            }
            self.procs.insert(pid, Proc::new(list));
        }
    }

    fn list_counts(&self) -> Vec<(u32, ListCounts)> {
        let mut v: Vec<(u32, ListCounts)> = self.procs.iter().map(|(&p, pr)| (p, pr.counts)).collect();
        v.sort_unstable_by_key(|&(p, _)| p);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefetch::FileView;

    /// Nothing cached, nothing in flight, `free` empty frames.
    struct Empty {
        free: u64,
    }
    impl BlockPresence for Empty {
        fn is_cached(&self, _d: u32, _b: u64) -> bool {
            false
        }
        fn free_frames(&self) -> u64 {
            self.free
        }
    }

    fn list(blocks: &[u64]) -> Vec<ListBlock> {
        blocks.iter().map(|&b| ListBlock { device: 0, block: b, file: FileBlock { file: 1, block: b } }).collect()
    }

    fn access(pid: u32, block: u64, hit: bool) -> DemandAccess {
        DemandAccess {
            device: 0,
            block,
            file: FileView { id: 1, is_device: false, index: block, size_pages: u64::MAX },
            req_pages: 1,
            hit,
            in_flight: false,
            marker: false,
            prefetch_hit: false,
            pid,
            time_ns: 0,
        }
    }

    #[test]
    fn cursor_matches_two_ahead() {
        // D-P1: list [1..6], accesses [1, 2, 4, 5, 9, 6]: 5 matched, 3 skipped, 9 unpredicted.
        let mut ca = ControlledAggressive::new(Params { trigger_min: u64::MAX, ..Params::default() });
        ca.set_lists(BTreeMap::from([(1, list(&[1, 2, 3, 4, 5, 6]))]));
        let mut out = Vec::new();
        let mut positions = Vec::new();
        for b in [1, 2, 4, 5, 9, 6] {
            ca.on_access(&access(1, b, true), &Empty { free: 0 }, &mut out);
            positions.push(ca.procs[&1].pos);
        }
        let c = ca.counts(1).unwrap();
        assert_eq!((c.matched, c.unpredicted, c.skipped), (5, 1, 1));
        assert_eq!(positions, [1, 2, 4, 5, 5, 6], "the cursor passes over 3 and stays at 9");
        assert!(out.is_empty());
        // 3 was not prefetched and is not named again: it gets the lowest priority.
        let mut acts = CacheActions::default();
        ca.cache_actions(&mut acts);
        assert_eq!(acts.controls, [CacheControl::SetTempPri { pid: 1, file: 1, first: 3, last: 3, prio: LOWEST }]);
    }

    #[test]
    fn a_skipped_prefetch_is_flushed_and_a_skipped_block_named_again_is_kept() {
        // J4 (l.245-249, l.461-475): block 3 was prefetched, and the accesses pass over it.
        let mut ca = ControlledAggressive::new(Params::default());
        ca.set_lists(BTreeMap::from([(1, list(&[1, 2, 3, 4, 5, 6]))]));
        let mut out = Vec::new();
        ca.on_access(&access(1, 1, false), &Empty { free: 100 }, &mut out);
        assert!(out.iter().any(|f| f.block == 3), "{out:?}");
        for b in [2, 4] {
            ca.on_access(&access(1, b, true), &Empty { free: 100 }, &mut Vec::new());
        }
        let mut acts = CacheActions::default();
        ca.cache_actions(&mut acts);
        assert_eq!(acts.flush, [(0, 3)]);
        assert!(!acts.controls.iter().any(|c| matches!(c, CacheControl::SetTempPri { first: 3, .. })), "{:?}", acts.controls);
        assert_eq!((ca.counts(1).unwrap().skipped, ca.counts(1).unwrap().flushed), (1, 1));
        // The list names 3 again later: skipping it now neither flushes it nor lowers it.
        let mut again = ControlledAggressive::new(Params::default());
        again.set_lists(BTreeMap::from([(1, list(&[1, 2, 3, 4, 5, 3]))]));
        again.on_access(&access(1, 1, false), &Empty { free: 100 }, &mut Vec::new());
        for b in [2, 4] {
            again.on_access(&access(1, b, true), &Empty { free: 100 }, &mut Vec::new());
        }
        let mut acts = CacheActions::default();
        again.cache_actions(&mut acts);
        assert!(acts.flush.is_empty(), "{:?}", acts.flush);
        assert!(!acts.controls.iter().any(|c| matches!(c, CacheControl::SetTempPri { first: 3, prio: LOWEST, .. })), "{:?}", acts.controls);
        assert_eq!(again.counts(1).unwrap().skipped, 1);
    }

    #[test]
    fn batches_follow_the_trigger_and_loop_rules() {
        // An empty cache of 10 frames: the first access starts a batch, which keeps 4 frames
        // in reserve (freeBlocks > 4 to go on) and is sorted by block.
        let mut ca = ControlledAggressive::new(Params::default());
        ca.set_lists(BTreeMap::from([(1, list(&[50, 9, 40, 8, 30, 7, 20, 6]))]));
        let mut out = Vec::new();
        ca.on_access(&access(1, 50, false), &Empty { free: 10 }, &mut out);
        let blocks: Vec<u64> = out.iter().map(|f| f.block).collect();
        assert_eq!(blocks, [7, 8, 9, 20, 30, 40], "6 of 10 frames, sorted");
        // sort=off: the same batch in list order.
        let mut listed = ControlledAggressive::new(Params { sort: false, ..Params::default() });
        listed.set_lists(BTreeMap::from([(1, list(&[50, 9, 40, 8, 30, 7, 20, 6]))]));
        let mut unsorted = Vec::new();
        listed.on_access(&access(1, 50, false), &Empty { free: 10 }, &mut unsorted);
        assert_eq!(unsorted.iter().map(|f| f.block).collect::<Vec<_>>(), [9, 40, 8, 30, 7, 20]);
        assert_eq!(listed.name(), "ca:b=16,sort=off");
        // pCount > 0: no new batch until they complete.
        out.clear();
        ca.on_access(&access(1, 9, true), &Empty { free: 4 }, &mut out);
        assert!(out.is_empty());
        // B = 1: one block per batch.
        let mut one = ControlledAggressive::new(Params { b: 1, ..Params::default() });
        one.set_lists(BTreeMap::from([(1, list(&[1, 2, 3, 4]))]));
        let mut out = Vec::new();
        one.on_access(&access(1, 1, false), &Empty { free: 10 }, &mut out);
        assert_eq!(out.len(), 1);
        // Too few free blocks: no batch.
        let mut few = ControlledAggressive::new(Params::default());
        few.set_lists(BTreeMap::from([(1, list(&[1, 2, 3, 4]))]));
        let mut out = Vec::new();
        few.on_access(&access(1, 1, false), &Empty { free: 3 }, &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn an_unpredicted_miss_holds_prefetching_and_a_bogus_list_is_dropped() {
        let mut ca = ControlledAggressive::new(Params::default());
        ca.set_lists(BTreeMap::from([(1, list(&(100..200).collect::<Vec<_>>()))]));
        let mut out = Vec::new();
        // An unpredicted miss first: the list's next access cannot start a batch while it is
        // outstanding (the double says nothing completes... until `on_complete`).
        struct Busy;
        impl BlockPresence for Busy {
            fn is_cached(&self, _d: u32, _b: u64) -> bool {
                false
            }
            fn in_flight(&self, _d: u32, b: u64) -> bool {
                b == 7
            }
            fn free_frames(&self) -> u64 {
                100
            }
        }
        ca.on_access(&access(1, 7, false), &Busy, &mut out);
        ca.on_access(&access(1, 100, false), &Busy, &mut out);
        assert!(out.is_empty(), "{out:?}");
        let done = Completion { op: crate::trace::Op::Read, device: 0, block: 7, blocks: 1, cause: crate::sched::Cause::Demand, pid: 1, by_device: true, time_ns: 0 };
        ca.on_complete(&done, &Empty { free: 100 }, &mut out);
        assert_eq!(out.len(), 16, "the demand read completed: a full batch");
        // 17 unpredicted accesses out of the last 32: the list is dropped, and the process
        // gets sequential one-block lookahead.
        let mut bogus = ControlledAggressive::new(Params::default());
        bogus.set_lists(BTreeMap::from([(1, list(&(100..200).collect::<Vec<_>>()))]));
        for i in 0..32u64 {
            let b = if i < 15 { 100 + i } else { 1000 + i };
            bogus.on_access(&access(1, b, true), &Empty { free: 0 }, &mut Vec::new());
        }
        assert!(bogus.counts(1).unwrap().dropped);
        let mut out = Vec::new();
        bogus.on_access(&access(1, 1032, true), &Empty { free: 0 }, &mut out);
        assert_eq!(out.iter().map(|f| f.block).collect::<Vec<_>>(), [1033]);
    }
}
