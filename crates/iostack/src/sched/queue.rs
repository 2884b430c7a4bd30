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
use crate::trace::Op;

type EdgeMap = hashbrown::HashMap<(u32, bool, u64), u32, rustc_hash::FxBuildHasher>;

#[derive(Debug, Clone, Copy)]
struct Entry {
    req: IoRequest,
    seq: u64,
}

/// Queued requests with merging and position/arrival indexes.
#[derive(Debug)]
pub struct RequestQueue {
    max_blocks: u32,
    slots: Vec<Option<Entry>>,
    free: Vec<u32>,
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
            by_pos: BTreeMap::new(),
            by_arrival: BTreeMap::new(),
            starts: EdgeMap::default(),
            ends: EdgeMap::default(),
            next_seq: 0,
            merges: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.by_arrival.len()
    }
    pub fn is_empty(&self) -> bool {
        self.by_arrival.is_empty()
    }
    pub fn merges(&self) -> u64 {
        self.merges
    }

    pub fn get(&self, id: Id) -> &IoRequest {
        &self.slots[id as usize].as_ref().expect("live queue entry").req
    }

    /// Adds `req`, merging it if possible; returns the id holding it.
    pub fn add(&mut self, req: IoRequest) -> Id {
        let w = req.op.is_write();
        let seq = self.next_seq;
        self.next_seq += 1;
        // Back merge: a queued request ends where this one starts.
        if let Some(&id) = self.ends.get(&(req.device, w, req.block)) {
            if self.get(id).blocks as u64 + req.blocks as u64 <= self.max_blocks as u64 {
                let (mut r, mut s) = self.take(id);
                self.absorb(&mut r, &req);
                r.blocks += req.blocks;
                self.merges += 1;
                // The merged request may now touch the next one.
                if let Some(&next) = self.starts.get(&(r.device, w, r.end())) {
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
        if let Some(&id) = self.starts.get(&(req.device, w, req.end())) {
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
        let w = req.op.is_write();
        self.by_pos.insert((req.device, req.block, seq), id);
        self.by_arrival.insert(seq, id);
        self.starts.entry((req.device, w, req.block)).or_insert(id);
        self.ends.entry((req.device, w, req.end())).or_insert(id);
        id
    }

    /// Removes a queued request and returns it.
    pub fn remove(&mut self, id: Id) -> IoRequest {
        self.take(id).0
    }

    fn take(&mut self, id: Id) -> (IoRequest, u64) {
        let e = self.slots[id as usize].take().expect("live queue entry");
        self.free.push(id);
        let r = e.req;
        let w = r.op.is_write();
        self.by_pos.remove(&(r.device, r.block, e.seq));
        self.by_arrival.remove(&e.seq);
        if self.starts.get(&(r.device, w, r.block)) == Some(&id) {
            self.starts.remove(&(r.device, w, r.block));
        }
        if self.ends.get(&(r.device, w, r.end())) == Some(&id) {
            self.ends.remove(&(r.device, w, r.end()));
        }
        (r, e.seq)
    }

    /// The oldest request (earliest arrival).
    pub fn oldest(&self) -> Option<Id> {
        self.by_arrival.values().next().copied()
    }

    /// The first request at or after (`device`, `block`) in disk order.
    pub fn at_or_after(&self, device: u32, block: u64) -> Option<Id> {
        self.by_pos.range((device, block, 0)..).next().map(|(_, &id)| id)
    }

    /// The last request before (`device`, `block`) in disk order.
    pub fn before(&self, device: u32, block: u64) -> Option<Id> {
        self.by_pos.range(..(device, block, 0)).next_back().map(|(_, &id)| id)
    }

    /// The request lowest in disk order.
    pub fn lowest(&self) -> Option<Id> {
        self.by_pos.values().next().copied()
    }

    /// Ids in arrival order.
    pub fn arrival_order(&self) -> impl Iterator<Item = Id> + '_ {
        self.by_arrival.values().copied()
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

/// The op of a request as an index (0 read, 1 write).
pub fn op_index(op: Op) -> usize {
    op as usize
}
