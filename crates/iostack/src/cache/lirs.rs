//! LIRS: Low Inter-reference Recency Set replacement.
//!
//! Jiang and Zhang, "LIRS: An Efficient Low Inter-reference Recency Set Replacement Policy to
//! Improve Buffer Cache Performance", SIGMETRICS 2002, §3. Blocks are ranked by their
//! inter-reference recency (IRR: how many other blocks were referenced between their last two
//! references) rather than by recency alone. The cache holds two kinds of blocks:
//!
//! - LIR blocks (low IRR), at most `C − |HIR|` of them, always resident;
//! - HIR blocks (high IRR), of which only `hir` of the cache (1 % by default, the paper's
//!   recommendation) are resident, kept in the FIFO-like stack Q; the rest of the HIR blocks that
//!   the cache still remembers are non-resident: metadata only.
//!
//! Stack S is an LRU stack of LIR blocks and of HIR blocks (resident or not) more recent than the
//! least recent LIR block; "stack pruning" removes HIR entries from S's bottom so that the bottom
//! is always an LIR block. On a reference:
//! - to an LIR block: hit; move it to S's top and prune;
//! - to a resident HIR block in S: hit; it becomes LIR (its IRR is lower than the bottom LIR
//!   block's recency); the bottom LIR block becomes a resident HIR block at Q's top;
//! - to a resident HIR block not in S: hit; it goes to S's top and Q's top, staying HIR;
//! - to a non-resident HIR block in S (a miss): the block becomes LIR and the bottom LIR block is
//!   demoted to Q, the oldest resident HIR block leaving the cache to make room;
//! - to a block unknown to S: a miss; it becomes LIR while the LIR set is not full, else a
//!   resident HIR block (the oldest one in Q is evicted).
//!
//! Non-resident entries in S are bounded: whenever S holds more than twice the cache in sizes,
//! the oldest non-resident entries (a third list, NH, in the order they became non-resident) are
//! dropped from S, as libCacheSim does.
//!
//! This module reproduces libCacheSim's `LIRS.c` (0.3.5) exactly on caches of at least 100 units,
//! including these specifics of that implementation:
//! - |HIR| = max(1, ⌊C·hir⌋) and |LIR| = C − |HIR|, in object sizes;
//! - a hit on a resident HIR block that is only in Q first demotes bottom LIR blocks while the LIR
//!   set is full (it does not grow the LIR set), so such a hit pushes the oldest resident HIR block
//!   out of the cache: a hit that evicts (handed over through [`Policy::drain_side_evictions`],
//!   like the extra blocks one `evict` call may drop when it demotes several LIR blocks);
//! - a demoted LIR block larger than |HIR| leaves the cache instead of entering Q;
//! - a new object larger than |HIR| is not cached.
//!
//! Deviations, only for caches so small that libCacheSim's bookkeeping breaks down: when |HIR| is
//! one unit (caches under 200 units), a hit on the only block in Q can make libCacheSim evict that
//! very block and then keep it in S as "resident" without counting it; iostack re-admits it as a
//! resident HIR block instead. When an object cannot be LIR at all (|LIR| smaller than it, e.g. a
//! one-unit cache) it stays HIR instead of being refused.
//!
//! Data layout: one record per remembered block (key, size, status and its positions in S, Q and
//! NH) in a slab, found through one key map; S, Q and NH are three index lists over the records.
//! Every operation is O(1) amortized (pruning removes each S entry at most once).

use super::list::{List, Slab, Slot, NIL};
use super::{Access, Evicted, Key, KeyMap, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "lirs",
    aliases: &[],
    summary: "LIRS: low inter-reference recency set (Jiang and Zhang, SIGMETRICS'02)",
    build: |capacity, params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> {
        let hir = params.f64_in("hir", 0.01, 0.0, 1.0)?;
        if !(hir > 0.0 && hir < 1.0) {
            return Err(ConfigError::new("lirs.hir", format!("the resident HIR share must be in (0, 1), got {hir}")));
        }
        Ok(Box::new(Lirs::new(capacity, hir)))
    },
};

/// What the cache remembers of one block.
#[derive(Debug, Clone, Copy)]
struct Record {
    key: Key,
    size: u64,
    lir: bool,
    resident: bool,
    /// Positions in S, Q and NH (`NIL` when not on that list).
    s: Slot,
    q: Slot,
    nh: Slot,
}

pub struct Lirs {
    capacity: u64,
    lir_limit: u64,
    hir_limit: u64,
    lir_bytes: u64,
    hir_bytes: u64,
    /// Sum of the sizes of all entries of S (resident or not), bounded by 2·C.
    s_bytes: u64,
    residents: usize,
    map: KeyMap<u32>,
    recs: Slab<Record>,
    s_nodes: Slab<u32>,
    s: List,
    q_nodes: Slab<u32>,
    q: List,
    nh_nodes: Slab<u32>,
    nh: List,
    /// Blocks that left the cache and were not handed over yet: [`Policy::evict`] returns the
    /// last one it caused, the others (including every block a hit pushed out) are side
    /// evictions for [`Policy::drain_side_evictions`].
    dropped: Vec<Evicted>,
}

impl Lirs {
    /// `hir` is the fraction of `capacity` given to resident HIR blocks.
    pub fn new(capacity: u64, hir: f64) -> Self {
        let hir_limit = ((hir * capacity as f64) as u64).max(1).min(capacity);
        Lirs {
            capacity,
            lir_limit: capacity - hir_limit,
            hir_limit,
            lir_bytes: 0,
            hir_bytes: 0,
            s_bytes: 0,
            residents: 0,
            map: KeyMap::default(),
            recs: Slab::default(),
            s_nodes: Slab::default(),
            s: List::new(),
            q_nodes: Slab::default(),
            q: List::new(),
            nh_nodes: Slab::default(),
            nh: List::new(),
            dropped: Vec::new(),
        }
    }

    /// Keys of S (with 'L' for LIR, 'H' for resident HIR, 'N' for non-resident) and of Q, top first.
    pub fn stacks(&self) -> (Vec<(Key, char)>, Vec<Key>) {
        let s = self
            .s_nodes
            .iter(&self.s)
            .map(|(_, &r)| {
                let r = self.recs.get(r);
                (r.key, if r.lir { 'L' } else if r.resident { 'H' } else { 'N' })
            })
            .collect();
        let q = self.q_nodes.iter(&self.q).map(|(_, &r)| self.recs.get(r).key).collect();
        (s, q)
    }

    fn rec(&self, r: u32) -> &Record {
        self.recs.get(r)
    }

    fn s_push_top(&mut self, r: u32) {
        let n = self.s_nodes.alloc(r);
        self.s_nodes.push_head(&mut self.s, n);
        let rec = self.recs.get_mut(r);
        rec.s = n;
        self.s_bytes += rec.size;
    }

    fn s_unlink(&mut self, r: u32) {
        let rec = self.recs.get_mut(r);
        let n = std::mem::replace(&mut rec.s, NIL);
        self.s_bytes -= rec.size;
        self.s_nodes.unlink(&mut self.s, n);
        self.s_nodes.release(n);
    }

    fn q_push_top(&mut self, r: u32) {
        let n = self.q_nodes.alloc(r);
        self.q_nodes.push_head(&mut self.q, n);
        self.recs.get_mut(r).q = n;
    }

    fn q_unlink(&mut self, r: u32) {
        let n = std::mem::replace(&mut self.recs.get_mut(r).q, NIL);
        self.q_nodes.unlink(&mut self.q, n);
        self.q_nodes.release(n);
    }

    fn nh_push_top(&mut self, r: u32) {
        let n = self.nh_nodes.alloc(r);
        self.nh_nodes.push_head(&mut self.nh, n);
        self.recs.get_mut(r).nh = n;
    }

    fn nh_unlink(&mut self, r: u32) {
        let n = std::mem::replace(&mut self.recs.get_mut(r).nh, NIL);
        if n != NIL {
            self.nh_nodes.unlink(&mut self.nh, n);
            self.nh_nodes.release(n);
        }
    }

    /// Forgets a record that is on neither S nor Q.
    fn release_if_unlisted(&mut self, r: u32) {
        let rec = *self.rec(r);
        if rec.s == NIL && rec.q == NIL {
            debug_assert!(rec.nh == NIL);
            self.map.remove(&rec.key);
            self.recs.release(r);
        }
    }

    fn new_record(&mut self, key: Key, size: u64, lir: bool) -> u32 {
        let r = self.recs.alloc(Record { key, size, lir, resident: true, s: NIL, q: NIL, nh: NIL });
        self.map.insert(key, r);
        self.residents += 1;
        r
    }

    /// Stack pruning: drops HIR entries from S's bottom until an LIR block is there (the top
    /// entry always stays).
    fn prune(&mut self) {
        while let Some(t) = self.s.tail() {
            if Some(t) == self.s.head() {
                break;
            }
            let r = *self.s_nodes.get(t);
            if self.rec(r).lir {
                break;
            }
            if !self.rec(r).resident {
                self.nh_unlink(r);
            }
            self.s_unlink(r);
            self.release_if_unlisted(r);
        }
    }

    /// The oldest resident HIR block leaves the cache; S keeps it as non-resident.
    fn evict_hir(&mut self) -> bool {
        let Some(n) = self.q.tail() else { return false };
        let r = *self.q_nodes.get(n);
        self.q_unlink(r);
        let rec = self.recs.get_mut(r);
        rec.resident = false;
        let (key, size) = (rec.key, rec.size);
        self.hir_bytes -= size;
        self.residents -= 1;
        self.dropped.push(Evicted { key, size });
        if self.rec(r).s != NIL {
            self.nh_push_top(r);
        } else {
            self.release_if_unlisted(r);
        }
        true
    }

    /// The bottom LIR block of S becomes a resident HIR block at Q's top (making room in Q), or
    /// leaves the cache if it is larger than Q; then S is pruned. False if S has no LIR block.
    fn evict_lir(&mut self) -> bool {
        self.prune();
        let Some(t) = self.s.tail() else { return false };
        let r = *self.s_nodes.get(t);
        if !self.rec(r).lir {
            return false;
        }
        let size = self.rec(r).size;
        self.lir_bytes -= size;
        self.s_unlink(r);
        self.recs.get_mut(r).lir = false;
        if size <= self.hir_limit {
            while self.hir_bytes + size > self.hir_limit {
                if !self.evict_hir() {
                    break;
                }
            }
            self.q_push_top(r);
            self.hir_bytes += size;
        } else {
            let key = self.rec(r).key;
            self.recs.get_mut(r).resident = false;
            self.residents -= 1;
            self.dropped.push(Evicted { key, size });
            self.release_if_unlisted(r);
        }
        self.prune();
        true
    }

    /// Demotes bottom LIR blocks until `size` more fits in the LIR set.
    fn make_lir_room(&mut self, size: u64) {
        while self.lir_bytes + size > self.lir_limit {
            if !self.evict_lir() {
                break;
            }
        }
    }

    /// Bounds S: drops the oldest non-resident entries while S holds more than 2·C.
    fn limit_stack(&mut self) {
        while self.s_bytes > 2 * self.capacity {
            let Some(n) = self.nh.tail() else { break };
            let r = *self.nh_nodes.get(n);
            self.nh_unlink(r);
            self.s_unlink(r);
            self.release_if_unlisted(r);
        }
    }

    /// The record of `key` if it is a non-resident HIR block in S.
    fn nonresident_in_s(&self, key: Key) -> Option<u32> {
        let &r = self.map.get(&key)?;
        let rec = self.rec(r);
        (!rec.resident && rec.s != NIL).then_some(r)
    }

    /// libCacheSim's `can_insert` for a miss: whether the object may be cached, after the room
    /// making that LIRS does there (demoting LIR blocks for a returning non-resident block,
    /// evicting HIR blocks for a new one when both sets are full).
    fn prepare_miss(&mut self, key: Key, size: u64) -> bool {
        if size > self.capacity {
            return false;
        }
        if let Some(r) = self.nonresident_in_s(key) {
            // The block comes back with the size it was remembered with (as in libCacheSim).
            let size = self.rec(r).size;
            if size <= self.lir_limit {
                self.make_lir_room(size);
            }
            self.nh_unlink(r);
            return true;
        }
        if size > self.hir_limit {
            return false;
        }
        if self.lir_bytes + size > self.lir_limit && self.hir_bytes + size > self.hir_limit {
            while self.hir_bytes + size > self.hir_limit {
                if !self.evict_hir() {
                    break;
                }
            }
        }
        true
    }

    /// One step of libCacheSim's `evict` for a miss on `key`. Returns whether anything changed.
    fn evict_step(&mut self, key: Key, size: u64) -> bool {
        if self.nonresident_in_s(key).is_some() {
            let mut changed = false;
            while self.hir_bytes >= self.hir_limit {
                if !self.evict_hir() {
                    break;
                }
                changed = true;
            }
            return self.evict_lir() || changed;
        }
        if !self.map.contains_key(&key) && self.lir_bytes + size > self.lir_limit && self.hir_bytes + size > self.hir_limit {
            return self.evict_hir();
        }
        false
    }

    /// Evicts something, whatever the reference: the oldest resident HIR block, else the bottom
    /// LIR block (demoted, then evicted).
    fn evict_any(&mut self) -> bool {
        if self.evict_hir() {
            return true;
        }
        if self.evict_lir() {
            return self.evict_hir();
        }
        false
    }

    fn hit_hir_in_s(&mut self, r: u32) {
        let size = self.rec(r).size;
        if size > self.lir_limit {
            // Cannot be LIR (tiny cache): stays a resident HIR block, refreshed in Q.
            if self.rec(r).q != NIL {
                self.q_unlink(r);
            }
            self.q_push_top(r);
            return;
        }
        if self.rec(r).q != NIL {
            self.q_unlink(r);
            self.hir_bytes -= size;
        }
        self.make_lir_room(size);
        self.recs.get_mut(r).lir = true;
        self.lir_bytes += size;
    }

    fn hit_hir_in_q(&mut self, r: u32) {
        let (key, size) = (self.rec(r).key, self.rec(r).size);
        let dropped_before = self.dropped.len();
        self.make_lir_room(size);
        match self.map.get(&key) {
            Some(&r) if self.rec(r).resident => self.s_push_top(r),
            _ => {
                // Only with a one-unit Q: making room pushed this very block out. Re-admit it; it
                // never left the cache as far as the caller can tell, so it is no side eviction.
                if let Some(i) = self.dropped[dropped_before..].iter().position(|v| v.key == key) {
                    self.dropped.remove(dropped_before + i);
                }
                while self.hir_bytes + size > self.hir_limit {
                    if !self.evict_hir() {
                        break;
                    }
                }
                let r = match self.map.get(&key) {
                    Some(&r) => {
                        self.nh_unlink(r);
                        self.recs.get_mut(r).resident = true;
                        self.residents += 1;
                        r
                    }
                    None => self.new_record(key, size, false),
                };
                if self.rec(r).s != NIL {
                    self.s_unlink(r);
                }
                self.s_push_top(r);
                self.q_push_top(r);
                self.hir_bytes += size;
            }
        }
    }
}

impl Policy for Lirs {
    fn name(&self) -> &str {
        "lirs"
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn occupied(&self) -> u64 {
        self.lir_bytes + self.hir_bytes
    }
    fn len(&self) -> usize {
        self.residents
    }
    fn contains(&self, key: Key) -> bool {
        self.map.get(&key).is_some_and(|&r| self.rec(r).resident)
    }

    /// Note: a hit on a resident HIR block that is only in Q may evict a block (see the module
    /// notes); this is libCacheSim's behaviour and part of what the reference numbers measure.
    fn find(&mut self, a: &Access) -> bool {
        let Some(&r) = self.map.get(&a.key) else { return false };
        let rec = *self.rec(r);
        if rec.s != NIL {
            self.s_nodes.move_to_head(&mut self.s, rec.s);
        }
        if rec.q != NIL {
            self.q_nodes.move_to_head(&mut self.q, rec.q);
        }
        if rec.lir {
            self.prune();
            true
        } else if !rec.resident {
            false
        } else if rec.s != NIL {
            self.hit_hir_in_s(r);
            true
        } else {
            self.hit_hir_in_q(r);
            true
        }
    }

    fn get(&mut self, a: &Access) -> bool {
        let hit = self.find(a);
        if !hit && self.prepare_miss(a.key, a.size) {
            while self.occupied() + a.size > self.capacity {
                if !self.evict_step(a.key, a.size) && !self.evict_any() {
                    break;
                }
            }
            self.insert(a);
        }
        self.limit_stack();
        // `get` hands nothing over (see the trait).
        self.dropped.clear();
        hit
    }

    fn insert(&mut self, a: &Access) {
        if let Some(r) = self.nonresident_in_s(a.key) {
            self.nh_unlink(r);
            let rec = self.recs.get_mut(r);
            rec.resident = true;
            let size = rec.size;
            self.residents += 1;
            if size <= self.lir_limit {
                rec.lir = true;
                self.lir_bytes += size;
            } else {
                self.q_push_top(r);
                self.hir_bytes += size;
            }
            return;
        }
        let lir = self.lir_bytes + a.size <= self.lir_limit;
        let r = self.new_record(a.key, a.size, lir);
        self.s_push_top(r);
        if lir {
            self.lir_bytes += a.size;
        } else {
            self.q_push_top(r);
            self.hir_bytes += a.size;
        }
    }

    fn evict(&mut self, a: &Access) -> Option<Evicted> {
        let before = self.dropped.len();
        self.evict_step(a.key, a.size);
        if self.dropped.len() == before {
            self.evict_any();
        }
        // The last block this call dropped is the victim; any earlier ones are side evictions.
        if self.dropped.len() > before {
            self.dropped.pop()
        } else {
            None
        }
    }

    fn remove(&mut self, key: Key) -> bool {
        let Some(&r) = self.map.get(&key) else { return false };
        let rec = *self.rec(r);
        if rec.q != NIL {
            self.q_unlink(r);
        }
        self.nh_unlink(r);
        if rec.s != NIL {
            self.s_unlink(r);
        }
        if rec.resident {
            if rec.lir {
                self.lir_bytes -= rec.size;
            } else {
                self.hir_bytes -= rec.size;
            }
            self.residents -= 1;
        }
        self.map.remove(&key);
        self.recs.release(r);
        if rec.lir {
            self.prune();
        }
        rec.resident
    }

    fn has_side_evictions(&self) -> bool {
        true
    }

    fn drain_side_evictions(&mut self, out: &mut Vec<Evicted>) {
        out.append(&mut self.dropped);
    }

    fn metadata_bytes(&self) -> usize {
        self.dropped.capacity() * std::mem::size_of::<Evicted>()
            + self.map.allocation_size()
            + self.recs.allocated_bytes()
            + self.s_nodes.allocated_bytes()
            + self.q_nodes.allocated_bytes()
            + self.nh_nodes.allocated_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil;

    fn hits(p: &mut dyn Policy, keys: &[u64]) -> String {
        testutil::run_keys(p, keys).iter().map(|&h| if h { 'H' } else { '.' }).collect()
    }

    /// Hit patterns produced by libCacheSim 0.3.5 (`lcs.LIRS(c)`) on this sequence.
    #[test]
    fn matches_libcachesim_small_sequence() {
        let keys = [1, 2, 1, 3, 1, 2, 4, 5, 1, 1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 1, 2, 3, 14, 15, 1, 16, 17, 18, 19, 2, 3];
        for (c, want) in [
            (2, "..H.H...HH..........H....H......"),
            (3, "..H.HH..HHH.........HH...H....H."),
            (5, "..H.HH..HHHH........HHH..H....HH"),
            (10, "..H.HH..HHHH........HHH..H....HH"),
        ] {
            let mut p = Lirs::new(c, 0.01);
            assert_eq!(hits(&mut p, &keys), want, "capacity {c}");
        }
    }

    /// A loop slightly larger than the cache defeats LRU (no hits at all) but not LIRS, whose
    /// LIR set keeps most of the loop (the paper's §1 motivation).
    #[test]
    fn keeps_a_loop_larger_than_the_cache() {
        let keys: Vec<u64> = (0..10).flat_map(|_| 0..150u64).collect();
        let mut lru = crate::cache::lru::Lru::new(100);
        assert_eq!(testutil::run_keys(&mut lru, &keys).iter().filter(|&&h| h).count(), 0);
        let mut p = Lirs::new(100, 0.01);
        let hits = testutil::run_keys(&mut p, &keys);
        let last_pass = hits[9 * 150..].iter().filter(|&&h| h).count();
        assert!(last_pass >= 95, "LIRS hits {last_pass} of 150 in the last pass");
    }

    /// A non-resident HIR block referenced again while in S becomes LIR at S's top.
    #[test]
    fn nonresident_block_in_s_becomes_lir() {
        let mut p = Lirs::new(200, 0.01); // |LIR| 198, |HIR| 2
        let keys: Vec<u64> = (0..198).chain([1000, 1001, 1002, 1003]).collect();
        testutil::run_keys(&mut p, &keys);
        // 1000 and 1001 were resident HIR blocks pushed out by 1002 and 1003.
        assert!(!p.contains(1000) && !p.contains(1001));
        let (s, q) = p.stacks();
        assert_eq!(q, vec![1003, 1002]);
        assert!(s.contains(&(1000, 'N')));
        assert!(!p.get(&Access::unit(1000, 202)));
        let (s, q) = p.stacks();
        assert_eq!(s[0], (1000, 'L'));
        // Block 0, the bottom LIR block, was demoted to a resident HIR block in Q.
        assert_eq!(q, vec![0, 1003]);
        assert_eq!(p.occupied(), 200);
        // A hit on 0, resident HIR and only in Q, demotes the bottom LIR block (1) into the full
        // Q, which pushes the oldest resident HIR block (1003) out: a hit that evicts, handed over.
        let mut out = Vec::new();
        assert!(p.find(&Access::unit(0, 203)));
        p.drain_side_evictions(&mut out);
        assert_eq!(out, vec![Evicted { key: 1003, size: 1 }]);
        assert_eq!(p.stacks().1, vec![1, 0]);
        assert!(!p.contains(1003) && p.contains(0) && p.contains(1));
        assert_eq!(p.len(), 199);
    }

    #[test]
    fn stack_is_bounded() {
        let mut p = Lirs::new(50, 0.1);
        let keys: Vec<u64> = (0..20_000).map(|i| if i % 3 == 0 { i % 40 } else { 1000 + i }).collect();
        testutil::run_keys(&mut p, &keys);
        assert!(p.s_bytes <= 2 * 50 + 1);
        assert!(p.map.len() <= 2 * 50 + p.q.len() + 1);
    }

    #[test]
    fn params_are_parsed() {
        assert!(crate::cache::build("lirs:hir=0.05", 100).is_ok());
        assert!(crate::cache::build("lirs:hir=1", 100).is_err());
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| Box::new(Lirs::new(c, 0.01)));
    }
}
