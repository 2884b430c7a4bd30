//! The DULO stack: staging section (correlation buffer + sequencing bank) over an eviction section
//! of sequences ordered by GreedyDual-Size H values. See the module documentation of
//! [`super`] for the algorithm; this file is its data structure.
//!
//! Blocks live in one slab. The correlation buffer and the sequencing bank are lists through it;
//! each sequence of the eviction section owns a list of its blocks in ascending LBN order, and the
//! sequences sit in an indexed binary min-heap on (H, admission order), so the bottom of the
//! eviction section is the heap's root and a sequence whose H changes (a GreedyDual-Size hit)
//! moves in O(log n). The paper merge-sorts each refill's sorted sequence list into the sorted
//! eviction section (Section 3.4); a heap gives the same eviction order.

use super::block_table::{BlockTable, Stamps};
use crate::cache::list::{List, Slab, Slot};
use crate::cache::{split_block_key, Key};
use std::hash::BuildHasher;

/// What a hit does (Section 3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitMode {
    /// The paper's implementation: a hit only sets the block's referenced bit; a referenced
    /// block reaching the bottom of the eviction section goes back to the top of the stack
    /// (the staging section) with its bit cleared, as in CLOCK.
    Clock,
    /// Strict GreedyDual-Size: a hit restores its sequence's H to L + 1/size (Table I); a hit in
    /// the staging section moves the block to the top of the stack, as LRU would.
    Gds,
    /// Hits change nothing here; the owner (the Linux two-list variant) handles them.
    Passive,
}

/// Parameters of the stack, in blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StackConfig {
    /// BANK-MAX: the sequencing bank is sequenced when it holds this many blocks.
    pub bank_max: usize,
    /// Minimal size of the eviction section; the staging section's correlation buffer holds
    /// the blocks beyond `evict_min + bank_max`.
    pub evict_min: usize,
    /// Rule 1: the largest LBN distance between consecutive blocks of a sequence.
    pub distance: u64,
    /// Rule 4: the largest sequence.
    pub seq_max: usize,
    pub hits: HitMode,
    /// Block-table memory (bytes) above which old subtrees are reclaimed; 0 = never.
    pub table_limit: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Corr,
    Bank,
    Evict,
}

#[derive(Debug, Clone, Copy)]
struct Block {
    key: Key,
    size: u64,
    stamps: Stamps,
    place: Place,
    /// The sequence holding it (eviction section only).
    seq: u32,
    referenced: bool,
}

struct Sequence {
    h: f64,
    order: u64,
    blocks: List,
    heap_pos: u32,
}

/// A heap entry: a sequence and a copy of its ordering key (H, admission order); `order` is
/// unique, so the order is total and the heap's shape is independent of how keys are stored.
#[derive(Debug, Clone, Copy)]
struct HeapEntry {
    h: f64,
    order: u64,
    seq: u32,
}

impl HeapEntry {
    #[inline]
    fn lt(&self, other: &HeapEntry) -> bool {
        self.h.total_cmp(&other.h).then(self.order.cmp(&other.order)).is_lt()
    }
}

#[inline]
fn hash_key(key: Key) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(key)
}

/// Counters the stack keeps about itself.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct StackStats {
    /// Times the sequencing bank was sequenced into the eviction section.
    pub refills: u64,
    pub sequences_formed: u64,
    pub blocks_sequenced: u64,
    /// Sequences formed with one block.
    pub single_block_sequences: u64,
    /// Referenced blocks sent back to the staging section (CLOCK form).
    pub second_chances: u64,
    /// Block-table reclamations and nodes they freed.
    pub table_reclaims: u64,
    pub table_nodes_freed: u64,
}

pub struct DuloStack {
    cfg: StackConfig,
    /// Key to slot. The table stores only the slot (4 bytes) and compares keys through the block
    /// slab, which a lookup of a present key reads anyway; a lookup of an absent key (every miss)
    /// almost always stops at the table's one-byte control tags and reads nothing else.
    map: hashbrown::HashTable<Slot>,
    blocks: Slab<Block>,
    corr: List,
    bank: List,
    seqs: Vec<Sequence>,
    free_seqs: Vec<u32>,
    /// The eviction section's sequences as a min-heap on (H, order), keys held inline so that
    /// sifting compares heap entries without visiting the sequences themselves.
    heap: Vec<HeapEntry>,
    evict_blocks: usize,
    /// GreedyDual-Size inflation value L.
    inflation: f64,
    /// Disk access clock: ticks once per block fetched.
    clock: u64,
    table: BlockTable,
    next_order: u64,
    scratch: Vec<(Key, Slot)>,
    occupied: u64,
    pub stats: StackStats,
}

impl DuloStack {
    pub fn new(cfg: StackConfig) -> Self {
        assert!(cfg.bank_max >= 1 && cfg.seq_max >= 1);
        DuloStack {
            cfg,
            map: hashbrown::HashTable::new(),
            blocks: Slab::default(),
            corr: List::new(),
            bank: List::new(),
            seqs: Vec::new(),
            free_seqs: Vec::new(),
            heap: Vec::new(),
            evict_blocks: 0,
            inflation: 0.0,
            clock: 0,
            table: BlockTable::new(),
            next_order: 0,
            scratch: Vec::new(),
            occupied: 0,
            stats: StackStats::default(),
        }
    }

    pub fn config(&self) -> &StackConfig {
        &self.cfg
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn occupied(&self) -> u64 {
        self.occupied
    }
    pub fn contains(&self, key: Key) -> bool {
        self.find(key).is_some()
    }

    #[inline]
    fn find(&self, key: Key) -> Option<Slot> {
        let blocks = &self.blocks;
        self.map.find(hash_key(key), |&s| blocks.get(s).key == key).copied()
    }

    /// Removes `key` from the index; returns its slot.
    #[inline]
    fn unindex(&mut self, key: Key) -> Option<Slot> {
        let blocks = &self.blocks;
        match self.map.find_entry(hash_key(key), |&s| blocks.get(s).key == key) {
            Ok(e) => Some(e.remove().0),
            Err(_) => None,
        }
    }
    /// The inflation value L.
    pub fn inflation(&self) -> f64 {
        self.inflation
    }
    /// The disk access clock.
    pub fn clock(&self) -> u64 {
        self.clock
    }
    pub fn table(&self) -> &BlockTable {
        &self.table
    }
    /// Blocks in (correlation buffer, sequencing bank, eviction section).
    pub fn section_sizes(&self) -> (usize, usize, usize) {
        (self.corr.len(), self.bank.len(), self.evict_blocks)
    }
    /// The fetch timestamps of a cached block.
    pub fn stamps(&self, key: Key) -> Option<Stamps> {
        self.find(key).map(|s| self.blocks.get(s).stamps)
    }

    /// The eviction section from bottom (next victim) to top: each sequence's H and its keys
    /// in LBN order. For inspection and tests; allocates.
    pub fn eviction_order(&self) -> Vec<(f64, Vec<Key>)> {
        let mut seqs: Vec<u32> = self.heap.iter().map(|e| e.seq).collect();
        seqs.sort_by(|&a, &b| self.cmp_seq(a, b));
        seqs.iter()
            .map(|&s| (self.seqs[s as usize].h, self.blocks.iter(&self.seqs[s as usize].blocks).map(|(_, b)| b.key).collect()))
            .collect()
    }

    /// Keys of the staging section from its top (correlation buffer head) down.
    pub fn staging_keys(&self) -> Vec<Key> {
        self.blocks.iter(&self.corr).chain(self.blocks.iter(&self.bank)).map(|(_, b)| b.key).collect()
    }

    /// A block fetched from disk enters the top of the stack: the disk access clock ticks and the
    /// block table records the fetch (Section 3.2).
    pub fn insert_fetched(&mut self, key: Key, size: u64) {
        let stamps = self.record_fetch(key);
        self.admit(key, size, stamps, false);
    }

    /// Ticks the disk access clock for a fetch of `key` and records it in the block table;
    /// returns the block's stamps (for an owner that places the block itself).
    pub fn record_fetch(&mut self, key: Key) -> Stamps {
        self.clock += 1;
        if self.clock as u32 == 0 {
            self.clock += 1; // 0 means "no timestamp" in the table
        }
        let (device, lbn) = split_block_key(key);
        let stamps = self.table.record(device, lbn, self.clock as u32);
        self.maybe_reclaim();
        stamps
    }

    /// The stamps the block table holds for `key`.
    pub fn table_stamps(&self, key: Key) -> Stamps {
        let (device, lbn) = split_block_key(key);
        self.table.lookup(device, lbn)
    }

    /// Resets the block-table entry of `key` (its data is gone).
    pub fn forget_history(&mut self, key: Key) {
        let (device, lbn) = split_block_key(key);
        self.table.reset(device, lbn);
    }

    /// A block that was cached elsewhere (the Linux active list) enters the top of the stack
    /// with the timestamps it was fetched with; the clock does not tick (nothing was fetched).
    pub fn insert_returning(&mut self, key: Key, size: u64, stamps: Stamps) {
        self.admit(key, size, stamps, false);
    }

    fn admit(&mut self, key: Key, size: u64, stamps: Stamps, referenced: bool) {
        debug_assert!(!self.contains(key));
        let s = self.blocks.alloc(Block { key, size, stamps, place: Place::Corr, seq: u32::MAX, referenced });
        self.blocks.push_head(&mut self.corr, s);
        let blocks = &self.blocks;
        self.map.insert_unique(hash_key(key), s, |&x| hash_key(blocks.get(x).key));
        self.occupied += size;
        self.flow();
    }

    fn maybe_reclaim(&mut self) {
        if self.cfg.table_limit == 0 || self.table.bytes_in_use() <= self.cfg.table_limit {
            return;
        }
        // Drop history older than a window of fetches, halving the window until the table fits
        // or the window reaches the stack itself (younger history belongs to cached blocks'
        // neighbours and is what sequencing needs).
        let now = self.clock as u32;
        let floor = (self.map.len() as u64).max(1);
        let mut window = floor.saturating_mul(8).min(u32::MAX as u64 / 2);
        self.stats.table_reclaims += 1;
        loop {
            self.stats.table_nodes_freed += self.table.reclaim(now.wrapping_sub(window as u32)) as u64;
            if self.table.bytes_in_use() <= self.cfg.table_limit || window <= floor {
                break;
            }
            window = (window / 2).max(floor);
        }
    }

    /// The stack's fixed total size means one block leaves the staging section for every block
    /// that leaves the eviction section (Section 3.1): the bottom of the correlation buffer moves
    /// into the sequencing bank while the eviction section and the bank together are below
    /// `evict_min + bank_max`. A full bank is sequenced into the eviction section.
    fn flow(&mut self) {
        while self.evict_blocks + self.bank.len() < self.cfg.evict_min + self.cfg.bank_max {
            let Some(s) = self.blocks.pop_tail(&mut self.corr) else { break };
            self.blocks.get_mut(s).place = Place::Bank;
            self.blocks.push_head(&mut self.bank, s);
            if self.bank.len() >= self.cfg.bank_max {
                self.refill();
            }
        }
        if self.bank.len() >= self.cfg.bank_max {
            self.refill();
        }
    }

    /// Section 3.3: sorts the bank on LBN and cuts it into sequences; each gets
    /// H = L + 1/size (Section 3.4) and joins the eviction section.
    fn refill(&mut self) {
        if self.bank.is_empty() {
            return;
        }
        self.stats.refills += 1;
        self.scratch.clear();
        // Oldest first: blocks fetched in LBN order (a scan) then arrive already sorted, which
        // the sort recognises in one pass. Keys are unique, so the sorted order does not depend
        // on the order they are collected in.
        let mut cur = self.bank.tail();
        while let Some(s) = cur {
            cur = self.blocks.prev(s);
            self.scratch.push((self.blocks.get(s).key, s));
        }
        self.bank = List::new(); // every block is relinked into a sequence below
        self.scratch.sort_unstable_by_key(|&(k, _)| k);
        let mut seq = u32::MAX;
        let mut last = Stamps::default();
        let mut last_key = 0;
        for i in 0..self.scratch.len() {
            let (key, slot) = self.scratch[i];
            let stamps = self.blocks.get(slot).stamps;
            let join = seq != u32::MAX
                && self.seqs[seq as usize].blocks.len() < self.cfg.seq_max
                && self.coalesces(last_key, last, key, stamps);
            if !join {
                if seq != u32::MAX {
                    self.admit_sequence(seq);
                }
                seq = self.new_sequence();
            }
            let b = self.blocks.get_mut(slot);
            b.place = Place::Evict;
            b.seq = seq;
            let mut list = self.seqs[seq as usize].blocks;
            self.blocks.push_tail(&mut list, slot);
            self.seqs[seq as usize].blocks = list;
            self.evict_blocks += 1;
            last = stamps;
            last_key = key;
        }
        self.admit_sequence(seq);
        self.stats.blocks_sequenced += self.scratch.len() as u64;
    }

    /// Whether block `b` (next in LBN order) extends the sequence ending with block `a`
    /// (the four rules of Section 3.3; rule 4, the size limit, is checked by the caller).
    fn coalesces(&self, a_key: Key, a: Stamps, b_key: Key, b: Stamps) -> bool {
        let (da, la) = split_block_key(a_key);
        let (db, lb) = split_block_key(b_key);
        // Rule 1: close on disk (same device, within the distance threshold).
        if da != db || lb - la > self.cfg.distance {
            return false;
        }
        // Rule 2: B fetched right after A.
        if a.recent == 0 || b.recent != a.recent.wrapping_add(1) {
            return false;
        }
        // Rule 3: the previous fetches were continuous too, or neither block has one.
        match (a.previous, b.previous) {
            (0, 0) => true,
            (0, _) | (_, 0) => false,
            (pa, pb) => pb == pa.wrapping_add(1),
        }
    }

    fn new_sequence(&mut self) -> u32 {
        let seq = Sequence { h: 0.0, order: 0, blocks: List::new(), heap_pos: u32::MAX };
        match self.free_seqs.pop() {
            Some(i) => {
                self.seqs[i as usize] = seq;
                i
            }
            None => {
                self.seqs.push(seq);
                (self.seqs.len() - 1) as u32
            }
        }
    }

    fn admit_sequence(&mut self, seq: u32) {
        let size = self.seqs[seq as usize].blocks.len();
        self.stats.sequences_formed += 1;
        if size == 1 {
            self.stats.single_block_sequences += 1;
        }
        self.set_h(seq, size);
        let pos = self.heap.len();
        let s = &self.seqs[seq as usize];
        self.heap.push(HeapEntry { h: s.h, order: s.order, seq });
        self.sift_up(pos);
    }

    /// H(s) = L + 1/size(s); a later admission breaks ties (evicted after earlier ones).
    fn set_h(&mut self, seq: u32, size: usize) {
        let s = &mut self.seqs[seq as usize];
        s.h = self.inflation + 1.0 / size as f64;
        s.order = self.next_order;
        self.next_order += 1;
    }

    /// Chooses the victim: the next block of the bottom sequence of the eviction section
    /// (refilling it from the staging section first if it is empty). L becomes the victim
    /// sequence's H.
    pub fn evict(&mut self) -> Option<(Key, u64)> {
        loop {
            if self.heap.is_empty() {
                if self.map.is_empty() {
                    return None;
                }
                // Nothing sequenced yet (cold start, or a section too small): sequence what the
                // staging section holds at its bottom, up to a bank's worth.
                while self.bank.len() < self.cfg.bank_max {
                    let Some(s) = self.blocks.pop_tail(&mut self.corr) else { break };
                    self.blocks.get_mut(s).place = Place::Bank;
                    self.blocks.push_head(&mut self.bank, s);
                }
                self.refill();
                debug_assert!(!self.heap.is_empty());
            }
            let seq = self.heap[0].seq;
            let slot = self.seqs[seq as usize].blocks.head().expect("sequences are never empty");
            self.unlink_from_sequence(slot);
            if self.cfg.hits == HitMode::Clock && self.blocks.get(slot).referenced {
                // Second chance: back to the top of the stack, young status revoked.
                self.stats.second_chances += 1;
                let b = self.blocks.get_mut(slot);
                b.referenced = false;
                b.place = Place::Corr;
                b.seq = u32::MAX;
                self.blocks.push_head(&mut self.corr, slot);
                self.flow();
                continue;
            }
            self.inflation = self.seqs[seq as usize].h;
            let b = *self.blocks.get(slot);
            self.unindex(b.key);
            self.blocks.release(slot);
            self.occupied -= b.size;
            return Some((b.key, b.size));
        }
    }

    /// Unlinks a block of the eviction section from its sequence (dropping the sequence if it
    /// was the last block).
    fn unlink_from_sequence(&mut self, slot: Slot) {
        let seq = self.blocks.get(slot).seq;
        let mut list = self.seqs[seq as usize].blocks;
        self.blocks.unlink(&mut list, slot);
        self.seqs[seq as usize].blocks = list;
        self.evict_blocks -= 1;
        if list.is_empty() {
            self.heap_remove(self.seqs[seq as usize].heap_pos as usize);
            self.free_seqs.push(seq);
        }
    }

    /// A reference to a cached block; returns false if it is not cached.
    pub fn hit(&mut self, key: Key) -> bool {
        let Some(slot) = self.find(key) else { return false };
        match self.cfg.hits {
            HitMode::Clock => self.blocks.get_mut(slot).referenced = true,
            HitMode::Passive => {}
            HitMode::Gds => {
                let b = *self.blocks.get(slot);
                match b.place {
                    Place::Evict => {
                        let size = self.seqs[b.seq as usize].blocks.len();
                        self.set_h(b.seq, size);
                        let pos = self.seqs[b.seq as usize].heap_pos as usize;
                        let s = &self.seqs[b.seq as usize];
                        self.heap[pos].h = s.h;
                        self.heap[pos].order = s.order;
                        self.sift_down(pos);
                        self.sift_up(self.seqs[b.seq as usize].heap_pos as usize);
                    }
                    Place::Corr => self.blocks.move_to_head(&mut self.corr, slot),
                    Place::Bank => {}
                }
            }
        }
        true
    }

    /// The referenced bit of a cached block (for the owner's own hit logic).
    pub fn referenced_mut(&mut self, key: Key) -> Option<&mut bool> {
        let slot = self.find(key)?;
        Some(&mut self.blocks.get_mut(slot).referenced)
    }

    /// Takes a block out of the stack, keeping its block-table history; returns its size and
    /// stamps.
    pub fn take(&mut self, key: Key) -> Option<(u64, Stamps)> {
        let slot = self.unindex(key)?;
        let b = *self.blocks.get(slot);
        match b.place {
            Place::Corr => self.blocks.unlink(&mut self.corr, slot),
            Place::Bank => self.blocks.unlink(&mut self.bank, slot),
            Place::Evict => self.unlink_from_sequence(slot),
        }
        self.blocks.release(slot);
        self.occupied -= b.size;
        // The stack shrank: the staging section may owe the eviction section blocks.
        self.flow();
        Some((b.size, b.stamps))
    }

    /// Forgets a block and resets its block-table entry (its data is gone).
    pub fn remove(&mut self, key: Key) -> bool {
        if self.take(key).is_none() {
            return false;
        }
        let (device, lbn) = split_block_key(key);
        self.table.reset(device, lbn);
        true
    }

    pub fn metadata_bytes(&self) -> usize {
        self.map.allocation_size()
            + self.blocks.allocated_bytes()
            + self.seqs.capacity() * std::mem::size_of::<Sequence>()
            + self.free_seqs.capacity() * 4
            + self.heap.capacity() * std::mem::size_of::<HeapEntry>()
            + self.scratch.capacity() * std::mem::size_of::<(Key, Slot)>()
            + self.table.allocated_bytes()
    }

    // Indexed binary min-heap on (H, order).

    fn cmp_seq(&self, a: u32, b: u32) -> std::cmp::Ordering {
        let (x, y) = (&self.seqs[a as usize], &self.seqs[b as usize]);
        x.h.total_cmp(&y.h).then(x.order.cmp(&y.order))
    }

    /// Writes `e` at heap position `i` and tells its sequence where it is.
    #[inline]
    fn heap_set(&mut self, i: usize, e: HeapEntry) {
        self.heap[i] = e;
        self.seqs[e.seq as usize].heap_pos = i as u32;
    }

    /// Moves the entry at `i` up to its place: parents larger than it move down into the hole,
    /// and it is written once where the hole stops.
    fn sift_up(&mut self, mut i: usize) {
        let e = self.heap[i];
        while i > 0 {
            let p = (i - 1) / 2;
            let parent = self.heap[p];
            if !e.lt(&parent) {
                break;
            }
            self.heap_set(i, parent);
            i = p;
        }
        self.heap_set(i, e);
    }

    /// Moves the entry at `i` down to its place, the smaller child rising into the hole.
    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let e = self.heap[i];
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.heap[r].lt(&self.heap[l]) { r } else { l };
            let child = self.heap[c];
            if !child.lt(&e) {
                break;
            }
            self.heap_set(i, child);
            i = c;
        }
        self.heap_set(i, e);
    }

    fn heap_remove(&mut self, pos: usize) {
        let removed = self.heap[pos].seq;
        let last = self.heap.pop().expect("removing from a non-empty heap");
        self.seqs[removed as usize].heap_pos = u32::MAX;
        if pos < self.heap.len() {
            self.heap[pos] = last;
            self.sift_down(pos);
            let at = self.seqs[last.seq as usize].heap_pos as usize;
            self.sift_up(at);
        }
    }
}
