//! The queue every scheduler keeps: merging of adjacent requests, and indexes by disk position
//! and by arrival.
//!
//! A request is merged with a queued one when they touch (one ends where the other starts), go
//! the same direction on the same device, and the merged request stays within the maximum size:
//! a back merge extends a queued request at its end, a front merge at its start, and a request
//! that bridges two queued ones joins all three (as Linux's elevator merge and its follow-up
//! merge do). A merged request keeps the earliest arrival of its parts, is synchronous if any
//! part is, and takes the most urgent cause (demand, then prefetch, then write-back).
//!
//! Indexes: `by_pos` orders requests by (device, first block) for elevators; `by_arrival` by
//! arrival (the sequence number of the earliest part) for FIFO rules. Both are B-trees: queues hold few requests (one per waiting process,
//! plus prefetch and write-back), so O(log n) is cheap and the order is deterministic.

use std::collections::BTreeMap;

use super::{Cause, IoRequest};

type EdgeMap = hashbrown::HashMap<(u32, bool, u64), u32, rustc_hash::FxBuildHasher>;

/// Up to this many queued requests, lookups scan a small vector (faster than tree and hash
/// indexes for the few requests a closed-loop replay keeps queued); beyond it, the indexes are
/// built and kept until the queue empties.
const LINEAR_MAX: usize = 32;

#[derive(Debug, Clone, Copy)]
struct Entry {
    req: IoRequest,
    seq: u64,
}

impl Entry {
    #[inline]
    fn pos(&self) -> (u32, u64, u64) {
        (self.req.device, self.req.block, self.seq)
    }
}

/// Queued requests with merging and position/arrival indexes.
#[derive(Debug)]
pub struct RequestQueue {
    max_blocks: u32,
    slots: Vec<Option<Entry>>,
    free: Vec<u32>,
    /// Live ids while the queue is small (no indexes).
    live: Vec<u32>,
    indexed: bool,
    len: usize,
    by_pos: BTreeMap<(u32, u64, u64), u32>,
    by_arrival: BTreeMap<u64, u32>,
    starts: EdgeMap,
    ends: EdgeMap,
    next_seq: u64,
    merges: u64,
}

/// Handle of a queued request (valid until it is removed).
pub type Id = u32;

fn urgency(c: Cause) -> u8 {
    match c {
        Cause::Demand => 2,
        Cause::Prefetch => 1,
        Cause::Writeback => 0,
    }
}

impl RequestQueue {
    pub fn new(max_blocks: u32) -> Self {
        RequestQueue {
            max_blocks: max_blocks.max(1),
            slots: Vec::new(),
            free: Vec::new(),
            live: Vec::with_capacity(LINEAR_MAX),
            indexed: false,
            len: 0,
            by_pos: BTreeMap::new(),
            by_arrival: BTreeMap::new(),
            starts: EdgeMap::default(),
            ends: EdgeMap::default(),
            next_seq: 0,
            merges: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn merges(&self) -> u64 {
        self.merges
    }

    #[inline]
    fn entry(&self, id: Id) -> &Entry {
        self.slots[id as usize].as_ref().expect("live queue entry")
    }

    pub fn get(&self, id: Id) -> &IoRequest {
        &self.entry(id).req
    }

    /// A queued request of this device and direction ending at `block`.
    fn ending_at(&self, device: u32, w: bool, block: u64) -> Option<Id> {
        if self.indexed {
            return self.ends.get(&(device, w, block)).copied();
        }
        self.live.iter().copied().find(|&id| {
            let r = &self.entry(id).req;
            r.device == device && r.op.is_write() == w && r.end() == block
        })
    }

    /// A queued request of this device and direction starting at `block`.
    fn starting_at(&self, device: u32, w: bool, block: u64) -> Option<Id> {
        if self.indexed {
            return self.starts.get(&(device, w, block)).copied();
        }
        self.live.iter().copied().find(|&id| {
            let r = &self.entry(id).req;
            r.device == device && r.op.is_write() == w && r.block == block
        })
    }

    /// Adds `req`, merging it if possible; returns the id holding it.
    pub fn add(&mut self, req: IoRequest) -> Id {
        let w = req.op.is_write();
        let seq = self.next_seq;
        self.next_seq += 1;
        if self.len == 0 {
            // Nothing to merge with (the common case when requests leave one at a time).
            return self.insert(req, seq);
        }
        // Back merge: a queued request ends where this one starts.
        if let Some(id) = self.ending_at(req.device, w, req.block) {
            if self.get(id).blocks as u64 + req.blocks as u64 <= self.max_blocks as u64 {
                let (mut r, mut s) = self.take(id);
                self.absorb(&mut r, &req);
                r.blocks += req.blocks;
                self.merges += 1;
                // The merged request may now touch the next one.
                if let Some(next) = self.starting_at(r.device, w, r.end()) {
                    if r.blocks as u64 + self.get(next).blocks as u64 <= self.max_blocks as u64 {
                        let (n, ns) = self.take(next);
                        self.absorb(&mut r, &n);
                        r.blocks += n.blocks;
                        s = s.min(ns);
                        self.merges += 1;
                    }
                }
                return self.insert(r, s);
            }
        }
        // Front merge: a queued request starts where this one ends.
        if let Some(id) = self.starting_at(req.device, w, req.end()) {
            if self.get(id).blocks as u64 + req.blocks as u64 <= self.max_blocks as u64 {
                let (mut r, s) = self.take(id);
                self.absorb(&mut r, &req);
                r.block = req.block;
                r.blocks += req.blocks;
                self.merges += 1;
                return self.insert(r, s);
            }
        }
        self.insert(req, seq)
    }

    fn absorb(&self, into: &mut IoRequest, part: &IoRequest) {
        into.sync |= part.sync;
        into.arrival_ns = into.arrival_ns.min(part.arrival_ns);
        if urgency(part.cause) > urgency(into.cause) {
            into.cause = part.cause;
        }
    }

    fn index(&mut self, id: Id) {
        let e = *self.entry(id);
        let w = e.req.op.is_write();
        self.by_pos.insert(e.pos(), id);
        self.by_arrival.insert(e.seq, id);
        self.starts.entry((e.req.device, w, e.req.block)).or_insert(id);
        self.ends.entry((e.req.device, w, e.req.end())).or_insert(id);
    }

    /// Queues `req` under `seq`: its own sequence number, or for a merged request the smallest
    /// of its parts', so that arrival order is the order of the earliest part.
    fn insert(&mut self, req: IoRequest, seq: u64) -> Id {
        let e = Entry { req, seq };
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
        self.len += 1;
        if self.indexed {
            self.index(id);
        } else if self.live.len() < LINEAR_MAX {
            self.live.push(id);
        } else {
            // Too many for scans: build the indexes, in arrival order.
            let mut ids = std::mem::take(&mut self.live);
            ids.push(id);
            ids.sort_by_key(|&i| self.entry(i).seq);
            self.indexed = true;
            for &i in &ids {
                self.index(i);
            }
            ids.clear();
            self.live = ids;
        }
        id
    }

    /// Removes a queued request and returns it.
    pub fn remove(&mut self, id: Id) -> IoRequest {
        self.take(id).0
    }

    fn take(&mut self, id: Id) -> (IoRequest, u64) {
        let e = self.slots[id as usize].take().expect("live queue entry");
        self.free.push(id);
        self.len -= 1;
        let r = e.req;
        if self.indexed {
            let w = r.op.is_write();
            self.by_pos.remove(&e.pos());
            self.by_arrival.remove(&e.seq);
            if self.starts.get(&(r.device, w, r.block)) == Some(&id) {
                self.starts.remove(&(r.device, w, r.block));
            }
            if self.ends.get(&(r.device, w, r.end())) == Some(&id) {
                self.ends.remove(&(r.device, w, r.end()));
            }
            if self.len == 0 {
                self.indexed = false;
                self.by_pos.clear();
                self.by_arrival.clear();
                self.starts.clear();
                self.ends.clear();
            }
        } else {
            let i = self.live.iter().position(|&x| x == id).expect("live id");
            self.live.remove(i);
        }
        (r, e.seq)
    }

    /// The live entry minimising `key` among those `filter` accepts (small-queue mode).
    fn scan_min<K: Ord>(&self, filter: impl Fn(&Entry) -> bool, key: impl Fn(&Entry) -> K) -> Option<Id> {
        self.live.iter().copied().filter(|&id| filter(self.entry(id))).min_by_key(|&id| key(self.entry(id)))
    }

    /// The oldest request (earliest arrival).
    pub fn oldest(&self) -> Option<Id> {
        if self.indexed {
            return self.by_arrival.values().next().copied();
        }
        self.scan_min(|_| true, |e| e.seq)
    }

    /// The first request at or after (`device`, `block`) in disk order.
    pub fn at_or_after(&self, device: u32, block: u64) -> Option<Id> {
        if self.indexed {
            return self.by_pos.range((device, block, 0)..).next().map(|(_, &id)| id);
        }
        self.scan_min(|e| (e.req.device, e.req.block) >= (device, block), |e| e.pos())
    }

    /// The last request before (`device`, `block`) in disk order.
    pub fn before(&self, device: u32, block: u64) -> Option<Id> {
        if self.indexed {
            return self.by_pos.range(..(device, block, 0)).next_back().map(|(_, &id)| id);
        }
        self.scan_min(|e| (e.req.device, e.req.block) < (device, block), |e| std::cmp::Reverse(e.pos()))
    }

    /// The request lowest in disk order.
    pub fn lowest(&self) -> Option<Id> {
        if self.indexed {
            return self.by_pos.values().next().copied();
        }
        self.scan_min(|_| true, |e| e.pos())
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
        IoRequest { op, device: 0, block, blocks, sync: false, cause: Cause::Prefetch, arrival_ns: t }
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
}
