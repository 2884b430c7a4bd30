//! The queue every scheduler keeps: merging of adjacent requests, and the questions schedulers
//! ask of it (oldest, lowest, first at or after a position, last before one).
//!
//! A request is merged with a queued one when they touch (one ends where the other starts), go
//! the same direction on the same device, and the merged request stays within the maximum size:
//! a back merge extends a queued request at its end, a front merge at its start, and a request
//! that bridges two queued ones joins all three (as Linux's elevator merge and its follow-up
//! merge do). A merged request keeps the earliest arrival of its parts, is synchronous if any
//! part is, and takes the most urgent cause (demand, then prefetch, then write-back); it keeps
//! the process of the request it grew from. A queue built per process ([`RequestQueue::with_limits`]
//! with [`super::MergeScope::Process`]) merges only requests of the same process, as Linux's CFQ
//! does (a bio merges only into a request of its own process's queue).
//!
//! Every queued request carries a sequence number: its own arrival rank, or for a merged request
//! the smallest of its parts', so that "oldest" means "whose earliest part came first". Disk
//! order is (device, first block, sequence number), a total order, so every question has exactly
//! one answer and the result is deterministic.
//!
//! Two representations, chosen by size:
//!
//! - Small (up to `LINEAR_MAX` requests, nearly always: a closed-loop replay keeps one request
//!   per waiting process, plus prefetch and write-back): the requests themselves lie in one
//!   vector, in insertion order, and every question is a scan of it. A handle is a position in
//!   that vector; removal shifts the later ones down, so the order is kept. With one request
//!   queued, which is the usual state when requests leave one at a time, each question is a
//!   single comparison (or none) and removal a pop.
//! - Indexed (beyond `LINEAR_MAX`, until the queue empties again): requests live in slots
//!   reused through a free list, a handle is a slot number, and B-trees by disk order and by
//!   arrival, plus hash maps of start and end blocks for merging, answer the questions in
//!   O(log n). The maps keep one request per block: should requests of one direction overlap,
//!   the first indexed keeps the block (the small mode's scans also take the first queued),
//!   and the block is forgotten when that request leaves.
//!
//! Handles are valid until the queue next changes (an `add` or a `remove`): schedulers ask, then
//! remove the one request they chose.

use std::collections::BTreeMap;

use super::{Cause, IoRequest};
use crate::trace::Op;

/// (device, write, block, owner): the owner is the process when merging per process, else 0.
type EdgeMap = hashbrown::HashMap<(u32, bool, u64, u32), u32, rustc_hash::FxBuildHasher>;

/// Up to this many queued requests, questions scan a small vector (faster than tree and hash
/// indexes for the few requests a closed-loop replay keeps queued); beyond it, the indexes are
/// built and kept until the queue empties.
const LINEAR_MAX: usize = 32;

#[derive(Debug, Clone, Copy)]
struct Entry {
    req: IoRequest,
    seq: u64,
}

impl Entry {
    /// Disk order.
    #[inline]
    fn pos(&self) -> (u32, u64, u64) {
        (self.req.device, self.req.block, self.seq)
    }
}

/// Queued requests with merging, answering questions by position and arrival.
#[derive(Debug)]
pub struct RequestQueue {
    max_blocks: u32,
    /// Merge only requests of the same process.
    per_process: bool,
    /// The process of a queued request that the last `add` absorbed whole (a bridging merge).
    absorbed: Option<u32>,
    /// Requests queued (after merging).
    len: usize,
    /// Which representation holds them: `big` (indexed) or `small`; the other is empty.
    indexed: bool,
    /// Small mode: the queued requests, in insertion order.
    small: Vec<Entry>,
    /// Indexed mode: the queued requests in slots, with the indexes.
    big: Indexed,
    next_seq: u64,
    merges: u64,
}

/// Handle of a queued request: valid until the queue next changes.
pub type Id = u32;

/// The indexed representation (slots, disk-order and arrival B-trees, start and end maps).
#[derive(Debug, Default)]
struct Indexed {
    slots: Vec<Option<Entry>>,
    free: Vec<u32>,
    by_pos: BTreeMap<(u32, u64, u64), u32>,
    by_arrival: BTreeMap<u64, u32>,
    starts: EdgeMap,
    ends: EdgeMap,
}

// The indexed mode's operations stay out of line, so that the small mode's paths, inlined into
// the schedulers, stay short.
impl Indexed {
    fn entry(&self, id: Id) -> &Entry {
        self.slots[id as usize].as_ref().expect("live queue entry")
    }

    #[inline(never)]
    fn insert(&mut self, e: Entry, per_process: bool) -> Id {
        let id = match self.free.pop() {
            Some(id) => {
                self.slots[id as usize] = Some(e);
                id
            }
            None => {
                self.slots.push(Some(e));
                (self.slots.len() - 1) as u32
            }
        };
        let (r, w, o) = (&e.req, e.req.op.is_write(), owner(&e.req, per_process));
        self.by_pos.insert(e.pos(), id);
        self.by_arrival.insert(e.seq, id);
        // With several requests starting (or ending) at one block, the first queued keeps it.
        self.starts.entry((r.device, w, r.block, o)).or_insert(id);
        self.ends.entry((r.device, w, r.end(), o)).or_insert(id);
        id
    }

    #[inline(never)]
    fn take(&mut self, id: Id, per_process: bool) -> Entry {
        let e = self.slots[id as usize].take().expect("live queue entry");
        self.free.push(id);
        let (r, w, o) = (&e.req, e.req.op.is_write(), owner(&e.req, per_process));
        self.by_pos.remove(&e.pos());
        self.by_arrival.remove(&e.seq);
        if self.starts.get(&(r.device, w, r.block, o)) == Some(&id) {
            self.starts.remove(&(r.device, w, r.block, o));
        }
        if self.ends.get(&(r.device, w, r.end(), o)) == Some(&id) {
            self.ends.remove(&(r.device, w, r.end(), o));
        }
        e
    }

    /// Empties the representation (for the return to small mode).
    #[inline(never)]
    fn clear(&mut self) {
        self.slots.clear();
        self.free.clear();
        self.by_pos.clear();
        self.by_arrival.clear();
        self.starts.clear();
        self.ends.clear();
    }

    #[inline(never)]
    fn oldest(&self) -> Option<Id> {
        self.by_arrival.values().next().copied()
    }

    #[inline(never)]
    fn at_or_after(&self, device: u32, block: u64) -> Option<Id> {
        self.by_pos.range((device, block, 0)..).next().map(|(_, &id)| id)
    }

    #[inline(never)]
    fn before(&self, device: u32, block: u64) -> Option<Id> {
        self.by_pos.range(..(device, block, 0)).next_back().map(|(_, &id)| id)
    }

    #[inline(never)]
    fn lowest(&self) -> Option<Id> {
        self.by_pos.values().next().copied()
    }
}

/// The merge-map owner of a request: its process when merging per process, else 0 (everyone).
#[inline]
fn owner(r: &IoRequest, per_process: bool) -> u32 {
    if per_process {
        r.pid
    } else {
        0
    }
}

fn urgency(c: Cause) -> u8 {
    match c {
        Cause::Demand => 2,
        Cause::Prefetch => 1,
        Cause::Writeback => 0,
    }
}

impl RequestQueue {
    /// A queue merging requests of any process up to `max_blocks`.
    pub fn new(max_blocks: u32) -> Self {
        RequestQueue {
            max_blocks: max_blocks.max(1),
            per_process: false,
            absorbed: None,
            len: 0,
            indexed: false,
            small: Vec::with_capacity(LINEAR_MAX),
            big: Indexed::default(),
            next_seq: 0,
            merges: 0,
        }
    }

    /// A queue for a scheduler built with `limits` (merged size and merge scope).
    pub fn with_limits(limits: &super::SchedLimits) -> Self {
        let mut q = RequestQueue::new(limits.max_blocks);
        q.per_process = limits.merge == super::MergeScope::Process;
        q
    }

    /// Whether requests of different processes may merge.
    pub fn per_process(&self) -> bool {
        self.per_process
    }

    /// The process of a queued request that the last `add` absorbed whole (a new request that
    /// bridged two queued ones: the queue shrank by one), once; `None` otherwise. For schedulers
    /// that count queued requests per process.
    pub fn take_absorbed(&mut self) -> Option<u32> {
        self.absorbed.take()
    }

    /// Whether some queued request satisfies `f` (a scan of the queue).
    pub fn any(&self, f: impl Fn(&IoRequest) -> bool) -> bool {
        if self.indexed {
            self.big.slots.iter().flatten().any(|e| f(&e.req))
        } else {
            self.small.iter().any(|e| f(&e.req))
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    #[inline]
    pub fn merges(&self) -> u64 {
        self.merges
    }

    #[inline]
    fn entry(&self, id: Id) -> &Entry {
        if self.indexed {
            self.big.entry(id)
        } else {
            &self.small[id as usize]
        }
    }

    #[inline]
    pub fn get(&self, id: Id) -> &IoRequest {
        &self.entry(id).req
    }

    /// Whether queued `e` may merge with a request of process `pid`.
    #[inline]
    fn same_owner(&self, e: &Entry, pid: u32) -> bool {
        !self.per_process || e.req.pid == pid
    }

    /// A queued request of this device, direction (and process, when merging per process)
    /// ending at `block`.
    fn ending_at(&self, device: u32, op: Op, block: u64, pid: u32) -> Option<Id> {
        if self.indexed {
            let o = if self.per_process { pid } else { 0 };
            return self.big.ends.get(&(device, op.is_write(), block, o)).copied();
        }
        let r = self.small.iter().position(|e| {
            e.req.device == device && e.req.op == op && e.req.end() == block && self.same_owner(e, pid)
        });
        r.map(|i| i as Id)
    }

    /// A queued request of this device, direction (and process, when merging per process)
    /// starting at `block`.
    fn starting_at(&self, device: u32, op: Op, block: u64, pid: u32) -> Option<Id> {
        if self.indexed {
            let o = if self.per_process { pid } else { 0 };
            return self.big.starts.get(&(device, op.is_write(), block, o)).copied();
        }
        let r = self.small.iter().position(|e| {
            e.req.device == device && e.req.op == op && e.req.block == block && self.same_owner(e, pid)
        });
        r.map(|i| i as Id)
    }

    /// Adds `req`, merging it if possible; returns the id holding it.
    #[inline]
    pub fn add(&mut self, req: IoRequest) -> Id {
        let seq = self.next_seq;
        self.next_seq += 1;
        if self.len == 0 {
            // Nothing to merge with, and an empty queue is in small mode (the common case when
            // requests leave one at a time).
            self.small.push(Entry { req, seq });
            self.len = 1;
            return 0;
        }
        self.add_merging(req, seq)
    }

    fn add_merging(&mut self, req: IoRequest, seq: u64) -> Id {
        let max = self.max_blocks as u64;
        let fits = move |a: u32, b: u32| a as u64 + b as u64 <= max;
        // Back merge: a queued request ends where this one starts.
        if let Some(id) = self.ending_at(req.device, req.op, req.block, req.pid) {
            if fits(self.get(id).blocks, req.blocks) {
                let (mut r, mut s) = self.take(id);
                absorb(&mut r, &req);
                r.blocks += req.blocks;
                self.merges += 1;
                // The merged request may now touch the next one.
                if let Some(next) = self.starting_at(r.device, r.op, r.end(), r.pid) {
                    if fits(r.blocks, self.get(next).blocks) {
                        let (n, ns) = self.take(next);
                        self.absorbed = Some(n.pid);
                        absorb(&mut r, &n);
                        r.blocks += n.blocks;
                        s = s.min(ns);
                        self.merges += 1;
                    }
                }
                return self.insert(r, s);
            }
        }
        // Front merge: a queued request starts where this one ends.
        if let Some(id) = self.starting_at(req.device, req.op, req.end(), req.pid) {
            if fits(self.get(id).blocks, req.blocks) {
                let (mut r, s) = self.take(id);
                absorb(&mut r, &req);
                r.block = req.block;
                r.blocks += req.blocks;
                self.merges += 1;
                return self.insert(r, s);
            }
        }
        self.insert(req, seq)
    }

    /// Queues `req` under `seq`: its own sequence number, or for a merged request the smallest
    /// of its parts', so that arrival order is the order of the earliest part.
    #[inline]
    fn insert(&mut self, req: IoRequest, seq: u64) -> Id {
        let e = Entry { req, seq };
        self.len += 1;
        if self.indexed {
            self.big.insert(e, self.per_process)
        } else if self.small.len() < LINEAR_MAX {
            self.small.push(e);
            (self.small.len() - 1) as Id
        } else {
            self.grow(e)
        }
    }

    /// Too many for scans: moves the queue to the indexes, in arrival order.
    #[cold]
    fn grow(&mut self, e: Entry) -> Id {
        let new_seq = e.seq;
        self.indexed = true;
        self.small.push(e);
        self.small.sort_unstable_by_key(|e| e.seq);
        let mut new_id = 0;
        for e in self.small.drain(..) {
            let id = self.big.insert(e, self.per_process);
            if e.seq == new_seq {
                new_id = id;
            }
        }
        new_id
    }

    /// Removes every queued request, oldest first (the order `oldest` would give them in); the
    /// merge count stays.
    pub fn take_all(&mut self) -> Vec<IoRequest> {
        let mut out = Vec::with_capacity(self.len);
        while let Some(id) = self.oldest() {
            out.push(self.remove(id));
        }
        out
    }

    /// Removes a queued request and returns it.
    #[inline]
    pub fn remove(&mut self, id: Id) -> IoRequest {
        self.take(id).0
    }

    #[inline]
    fn take(&mut self, id: Id) -> (IoRequest, u64) {
        self.len -= 1;
        let e = if self.indexed {
            let e = self.big.take(id, self.per_process);
            if self.len == 0 {
                // Back to small mode.
                self.big.clear();
                self.indexed = false;
            }
            e
        } else if id as usize + 1 == self.small.len() {
            // The newest (with one request queued, the only one): nothing to shift.
            self.small.pop().expect("live queue entry")
        } else {
            self.remove_shifting(id)
        };
        (e.req, e.seq)
    }

    /// Small mode: removes the entry at `id`, shifting the later ones down to keep their order.
    #[inline(never)]
    fn remove_shifting(&mut self, id: Id) -> Entry {
        self.small.remove(id as usize)
    }

    /// The queued request minimising `key` among those `accept` takes (small mode). Keys are
    /// distinct (they end with the sequence number), so the answer is unique.
    #[inline]
    fn scan_min<K: Ord>(&self, accept: impl Fn(&Entry) -> bool, key: impl Fn(&Entry) -> K) -> Option<Id> {
        match self.small.as_slice() {
            [] => None,
            // One request: the answer whatever the key.
            [only] => accept(only).then_some(0),
            entries => min_of(entries, accept, key),
        }
    }

    /// The oldest request (earliest arrival).
    #[inline]
    pub fn oldest(&self) -> Option<Id> {
        if self.indexed {
            return self.big.oldest();
        }
        self.scan_min(|_| true, |e| e.seq)
    }

    /// The first request at or after (`device`, `block`) in disk order.
    #[inline]
    pub fn at_or_after(&self, device: u32, block: u64) -> Option<Id> {
        if self.indexed {
            return self.big.at_or_after(device, block);
        }
        self.scan_min(|e| (e.req.device, e.req.block) >= (device, block), |e| e.pos())
    }

    /// The last request before (`device`, `block`) in disk order.
    #[inline]
    pub fn before(&self, device: u32, block: u64) -> Option<Id> {
        if self.indexed {
            return self.big.before(device, block);
        }
        self.scan_min(|e| (e.req.device, e.req.block) < (device, block), |e| std::cmp::Reverse(e.pos()))
    }

    /// The request lowest in disk order.
    #[inline]
    pub fn lowest(&self) -> Option<Id> {
        if self.indexed {
            return self.big.lowest();
        }
        self.scan_min(|_| true, |e| e.pos())
    }
}

/// The position of the entry minimising `key` among those `accept` takes.
#[inline(never)]
fn min_of<K: Ord>(entries: &[Entry], accept: impl Fn(&Entry) -> bool, key: impl Fn(&Entry) -> K) -> Option<Id> {
    let mut best: Option<(usize, K)> = None;
    for (i, e) in entries.iter().enumerate() {
        if accept(e) {
            let k = key(e);
            if best.as_ref().map_or(true, |(_, b)| k < *b) {
                best = Some((i, k));
            }
        }
    }
    best.map(|(i, _)| i as Id)
}

/// Merges `part`'s arrival, synchrony and cause into `into` (the blocks are the caller's).
fn absorb(into: &mut IoRequest, part: &IoRequest) {
    into.sync |= part.sync;
    into.arrival_ns = into.arrival_ns.min(part.arrival_ns);
    if urgency(part.cause) > urgency(into.cause) {
        into.cause = part.cause;
    }
}

/// A position to measure seek distance from: the end of the last dispatched request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Head {
    pub device: u32,
    pub block: u64,
}

impl Head {
    pub fn after(r: &IoRequest) -> Head {
        Head { device: r.device, block: r.end() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Op;

    fn req(block: u64, blocks: u32, op: Op, t: u64) -> IoRequest {
        IoRequest { op, device: 0, block, blocks, sync: false, cause: Cause::Prefetch, arrival_ns: t, pid: 0 }
    }

    #[test]
    fn merges_back_front_and_bridging() {
        let mut q = RequestQueue::new(16);
        q.add(req(10, 2, Op::Read, 0));
        q.add(req(12, 2, Op::Read, 1)); // back merge
        assert_eq!(q.len(), 1);
        q.add(req(8, 2, Op::Read, 2)); // front merge
        q.add(req(16, 2, Op::Read, 3));
        q.add(req(14, 2, Op::Read, 4)); // bridges [8,14) and [16,18)
        assert_eq!(q.len(), 1);
        assert_eq!(q.merges(), 4);
        let id = q.oldest().unwrap();
        assert_eq!((q.get(id).block, q.get(id).blocks, q.get(id).arrival_ns), (8, 10, 0));
        // Different direction or over the size limit: no merge.
        q.add(req(18, 1, Op::Write, 5));
        q.add(req(18, 7, Op::Read, 6));
        assert_eq!(q.len(), 3);
    }

    #[test]
    fn small_and_indexed_modes_agree() {
        // The same operations with more than LINEAR_MAX requests queued (indexed) and fewer.
        for n in [8u64, 100] {
            let mut q = RequestQueue::new(4);
            for i in 0..n {
                q.add(req((i * 7919) % 1000 * 10, 1, if i % 3 == 0 { Op::Write } else { Op::Read }, i));
            }
            assert_eq!(q.len() as u64, n);
            let mut order = Vec::new();
            let mut head = 0;
            while let Some(id) = q.at_or_after(0, head).or_else(|| q.lowest()) {
                let r = q.remove(id);
                head = r.end();
                order.push(r.block);
            }
            let mut sorted = order.clone();
            sorted.sort();
            assert_eq!(order, sorted, "C-SCAN order from 0 is ascending");
            assert!(q.is_empty() && q.oldest().is_none());
        }
    }

    /// A plain model of the queue: one list in insertion order, scanned in full for every
    /// question, with the same merge rules. When several queued requests end (or start) at the
    /// block a new one touches, it merges with the first queued; the small mode does the same,
    /// while the indexed mode keeps one per block in its maps, so overlapping requests are only
    /// compared with the small mode.
    struct Model {
        max_blocks: u32,
        per_process: bool,
        /// The process of the request the last add absorbed whole.
        absorbed: Option<u32>,
        reqs: Vec<(IoRequest, u64)>,
        next_seq: u64,
        merges: u64,
    }

    impl Model {
        fn find(&self, f: impl Fn(&IoRequest) -> bool) -> Option<usize> {
            self.reqs.iter().position(|(r, _)| f(r))
        }

        /// The candidate `i` if merging `blocks` into it stays within the maximum size: the
        /// first queued request touching the new one is the only candidate on that side.
        fn fitting(&self, i: Option<usize>, blocks: u32) -> Option<usize> {
            i.filter(|&i| self.reqs[i].0.blocks + blocks <= self.max_blocks)
        }

        /// Adds `req` and returns the queued request holding it.
        fn add(&mut self, req: IoRequest) -> IoRequest {
            let seq = self.next_seq;
            self.next_seq += 1;
            let per_process = self.per_process;
            let same = |r: &IoRequest| r.device == req.device && r.op == req.op && (!per_process || r.pid == req.pid);
            self.absorbed = None;
            let merged = if let Some(i) = self.fitting(self.find(|r| same(r) && r.end() == req.block), req.blocks) {
                let (mut m, mut s) = self.reqs.remove(i);
                absorb(&mut m, &req);
                m.blocks += req.blocks;
                self.merges += 1;
                if let Some(j) = self.fitting(self.find(|r| same(r) && r.block == m.end()), m.blocks) {
                    let (n, ns) = self.reqs.remove(j);
                    self.absorbed = Some(n.pid);
                    absorb(&mut m, &n);
                    m.blocks += n.blocks;
                    s = s.min(ns);
                    self.merges += 1;
                }
                (m, s)
            } else if let Some(i) = self.fitting(self.find(|r| same(r) && r.block == req.end()), req.blocks) {
                let (mut m, s) = self.reqs.remove(i);
                absorb(&mut m, &req);
                m.block = req.block;
                m.blocks += req.blocks;
                self.merges += 1;
                (m, s)
            } else {
                (req, seq)
            };
            self.reqs.push(merged);
            merged.0
        }

        fn min_by<K: Ord>(
            &self,
            accept: impl Fn(&IoRequest) -> bool,
            key: impl Fn(&IoRequest, u64) -> K,
        ) -> Option<usize> {
            (0..self.reqs.len())
                .filter(|&i| accept(&self.reqs[i].0))
                .min_by_key(|&i| key(&self.reqs[i].0, self.reqs[i].1))
        }
    }

    /// Random adds, questions and removals against the model, the queue filling up to
    /// `fill_to` requests (never more) and draining to empty over and over; `overlap`: whether requests of
    /// one device and direction may overlap queued ones. Returns how many adds found the queue
    /// in small and in indexed mode, and how many times it left the indexed mode.
    /// `per_process`: requests of processes 0 and 1 merge only with their own process's.
    fn run_against_model(seed: u64, fill_to: usize, overlap: bool, per_process: bool) -> (u32, u32, u32) {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let mut q = RequestQueue::new(8);
        q.per_process = per_process;
        let mut m = Model { max_blocks: 8, per_process, absorbed: None, reqs: Vec::new(), next_seq: 0, merges: 0 };
        let (mut indexed_adds, mut small_adds, mut emptied_from_indexed) = (0u32, 0u32, 0u32);
        let mut was_indexed = false;
        let mut filling = true;
        for step in 0..200_000u64 {
            // Alternate filling (to `fill_to` requests) and draining (to empty).
            if filling && q.len() >= fill_to {
                filling = false;
            } else if !filling && q.is_empty() {
                filling = true;
            }
            if q.len() < fill_to && rng.gen_bool(if filling { 0.75 } else { 0.25 }) {
                let op = if rng.gen_bool(0.3) { Op::Write } else { Op::Read };
                let device = rng.gen_range(0..2u32);
                let block = rng.gen_range(0..300u64);
                let blocks = rng.gen_range(1..=4u32);
                let cause = [Cause::Demand, Cause::Prefetch, Cause::Writeback][rng.gen_range(0..3)];
                let pid = rng.gen_range(0..2u32);
                let r = IoRequest { op, device, block, blocks, sync: rng.gen_bool(0.5), cause, arrival_ns: step, pid };
                let overlaps = m.reqs.iter().any(|(x, _)| {
                    x.device == device && x.op == op && (!per_process || x.pid == pid) && x.block < r.end() && r.block < x.end()
                });
                if overlaps && !overlap {
                    continue;
                }
                if q.indexed {
                    indexed_adds += 1;
                } else {
                    small_adds += 1;
                }
                let id = q.add(r);
                assert_eq!(*q.get(id), m.add(r), "step {step}: the request holding the new one");
                assert_eq!(q.take_absorbed(), m.absorbed, "step {step}: the request absorbed whole");
            } else {
                let (device, block) = (rng.gen_range(0..2u32), rng.gen_range(0..300u64));
                let at = |x: &IoRequest| (x.device, x.block);
                let (got, want) = match rng.gen_range(0..4) {
                    0 => (q.oldest(), m.min_by(|_| true, |_, s| s)),
                    1 => (q.lowest(), m.min_by(|_| true, |x, s| (x.device, x.block, s))),
                    2 => (
                        q.at_or_after(device, block),
                        m.min_by(|x| at(x) >= (device, block), |x, s| (x.device, x.block, s)),
                    ),
                    _ => (
                        q.before(device, block),
                        m.min_by(|x| at(x) < (device, block), |x, s| std::cmp::Reverse((x.device, x.block, s))),
                    ),
                };
                match (got, want) {
                    (None, None) => {}
                    (Some(id), Some(i)) => {
                        assert_eq!(*q.get(id), m.reqs[i].0, "step {step}: the answer");
                        assert_eq!(q.remove(id), m.reqs.remove(i).0, "step {step}: the removed request");
                    }
                    _ => panic!("step {step}: {got:?} from the queue, {want:?} from the model"),
                }
            }
            assert_eq!((q.len(), q.merges()), (m.reqs.len(), m.merges), "step {step}");
            if was_indexed && q.is_empty() {
                emptied_from_indexed += 1;
            }
            was_indexed = q.indexed;
            assert!(q.len() <= LINEAR_MAX || q.indexed, "step {step}: too many to scan");
            assert!(!q.is_empty() || !q.indexed, "step {step}: empty, back to small mode");
        }
        assert!(m.merges > 1000, "merges: {}", m.merges);
        (small_adds, indexed_adds, emptied_from_indexed)
    }

    /// Both modes: the queue grows past `LINEAR_MAX` (indexed) and drains to empty (small
    /// again) many times over.
    #[test]
    fn agrees_with_a_plain_model_in_both_modes() {
        for per_process in [false, true] {
            let (small_adds, indexed_adds, left_indexed) = run_against_model(5, 60, false, per_process);
            assert!(small_adds > 10_000 && indexed_adds > 10_000, "both modes used: {small_adds} {indexed_adds}");
            assert!(left_indexed > 50, "indexed mode left {left_indexed} times");
        }
    }

    /// Merging per process: a request of another process touching a queued one stays apart.
    #[test]
    fn per_process_merges_only_own_requests() {
        let mut q = RequestQueue::new(16);
        q.per_process = true;
        let mut a = req(10, 2, Op::Read, 0);
        a.pid = 1;
        let mut b = req(12, 2, Op::Read, 1);
        b.pid = 2;
        q.add(a);
        q.add(b);
        assert_eq!((q.len(), q.merges()), (2, 0));
        let mut c = req(14, 2, Op::Read, 2);
        c.pid = 2;
        q.add(c);
        assert_eq!((q.len(), q.merges()), (2, 1));
    }

    /// Small mode with overlapping requests: which one a new request merges with depends on
    /// the queue keeping insertion order through removals.
    #[test]
    fn small_mode_keeps_insertion_order() {
        for per_process in [false, true] {
            let (_, indexed_adds, _) = run_against_model(6, LINEAR_MAX, true, per_process);
            assert_eq!(indexed_adds, 0);
        }
    }
}
