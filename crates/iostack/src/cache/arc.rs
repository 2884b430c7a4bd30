//! ARC: Adaptive Replacement Cache (Megiddo and Modha, FAST 2003, Fig. 4).
//!
//! ARC keeps two LRU lists of cached entries, T1 (seen once recently) and T2 (seen at least
//! twice), and two ghost lists of keys recently evicted from them, B1 and B2, with
//! |T1| + |B1| <= c and |T1| + |T2| + |B1| + |B2| <= 2c. A target size p for T1 adapts: a
//! reference that finds its key in B1 means T1 was too small, so p grows by max(|B2|/|B1|, 1);
//! one in B2 shrinks p by max(|B1|/|B2|, 1). REPLACE evicts the LRU entry of T1 into B1 when
//! |T1| > p (or |T1| = p and the reference was a B2 ghost hit), else the LRU of T2 into B2.
//! A hit in T1 or T2 moves the entry to the MRU end of T2; a ghost hit brings the entry back
//! into T2; a complete miss goes to T1 after case IV of the paper trims the ghost lists.
//!
//! libCacheSim semantics reproduced (`ARC.c`), which matter in sized mode and at the edges:
//! - all list sizes are in the cache's unit (bytes in sized mode), and p is a floating-point
//!   number (`delta` is a float ratio of ghost sizes, not rounded);
//! - a ghost hit updates p and drops the ghost entry at once; REPLACE runs only if room has to be
//!   made (the paper calls it unconditionally, which only differs before the cache first fills);
//!   the entry then goes to the head of T2;
//! - case IV: if |T1| + |B1| + size > c, drop the LRU ghost of B1 and REPLACE if B1 is not
//!   empty, else evict the LRU of T1 with no ghost; otherwise, if all four lists hold 2c or more,
//!   drop the LRU ghost of B2 (when there is one) and REPLACE;
//! - REPLACE takes from T1 when T2 is empty, whatever p says;
//! - hits keep the inserted size; an object larger than the cache is not inserted, but a ghost
//!   hit on it still adapts p and drops the ghost;
//! - "the reference was a B2 ghost hit" is remembered from the last lookup that found its key
//!   (cached or ghost), as libCacheSim does.
//!
//! Entries and ghosts share one slab and one index (a ghost costs as much as an entry).

use super::list::{List, Slab, Slot};
use super::slots::{SizeTag, SlotIndex};
use super::{Access, Evicted, Key, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "arc",
    aliases: &[],
    summary: "Adaptive Replacement Cache (Megiddo & Modha, FAST'03)",
    build: |capacity, _params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> { Ok(Box::new(Arc::new(capacity))) },
};

const T1: u8 = 0;
const B1: u8 = 1;
const T2: u8 = 2;
const B2: u8 = 3;

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Key,
    /// Size, with the list (T1, B1, T2, B2) as tag.
    word: SizeTag,
}

pub struct Arc {
    capacity: u64,
    index: SlotIndex,
    slab: Slab<Entry>,
    /// T1, B1, T2, B2, indexed by the tag constants.
    lists: [List; 4],
    /// Sizes of the four lists.
    sizes: [u64; 4],
    /// Target size of T1.
    p: f64,
    /// Whether the last lookup that found its key found it in B1 / in B2.
    last_in_b1: bool,
    last_in_b2: bool,
    /// `vtime + 1` of the reference that hit a ghost, until its insertion; 0 for none.
    ghost_hit_at: u64,
}

impl Arc {
    pub fn new(capacity: u64) -> Self {
        Arc {
            capacity,
            index: SlotIndex::new(),
            slab: Slab::default(),
            lists: [List::new(); 4],
            sizes: [0; 4],
            p: 0.0,
            last_in_b1: false,
            last_in_b2: false,
            ghost_hit_at: 0,
        }
    }

    /// The target size of T1.
    pub fn p(&self) -> f64 {
        self.p
    }

    /// Sizes of T1, B1, T2, B2.
    pub fn list_sizes(&self) -> [u64; 4] {
        self.sizes
    }

    /// Keys of T1, B1, T2 or B2 (0..4), MRU first.
    pub fn list_keys(&self, list: usize) -> Vec<Key> {
        self.slab.iter(&self.lists[list]).map(|(_, e)| e.key).collect()
    }

    #[inline]
    fn lookup(&self, key: Key) -> Option<Slot> {
        self.index.find(key, |s| self.slab.get(s).key)
    }

    /// Whether the reference at hand hit a ghost (and so goes to T2 and evicts by REPLACE).
    #[inline]
    fn ghost_hit_now(&self, a: &Access) -> bool {
        self.ghost_hit_at == a.vtime + 1 && (self.last_in_b1 || self.last_in_b2)
    }

    /// Moves slot `s` from the list it is on to the head of `to`. (Tags are masked to 0..4
    /// where they index the lists, which spares the bounds checks.)
    #[inline(always)]
    fn relist(&mut self, s: Slot, to: u8) {
        let e = self.slab.get_mut(s);
        let from = e.word.tag();
        if from == to {
            // A hit in T2, the most common reference: sizes do not change.
            self.slab.move_to_head(&mut self.lists[(to & 3) as usize], s);
            return;
        }
        let size = e.word.size();
        e.word.set_tag(to);
        self.slab.unlink(&mut self.lists[(from & 3) as usize], s);
        self.slab.push_head(&mut self.lists[(to & 3) as usize], s);
        self.sizes[(from & 3) as usize] -= size;
        self.sizes[(to & 3) as usize] += size;
    }

    /// Unlinks and forgets slot `s` (an entry or a ghost); returns it.
    #[inline(always)]
    fn forget(&mut self, s: Slot) -> Entry {
        let e = self.unlink_forgotten(s);
        let slab = &self.slab;
        self.index.remove(e.key, |x| slab.get(x).key);
        self.slab.release(s);
        e
    }

    /// `forget` of slot `s`, whose index cell the caller has just found.
    #[inline]
    fn forget_cell(&mut self, s: Slot, cell: usize) {
        self.unlink_forgotten(s);
        self.index.remove_cell(cell);
        self.slab.release(s);
    }

    /// The list and size bookkeeping of forgetting `s`.
    #[inline(always)]
    fn unlink_forgotten(&mut self, s: Slot) -> Entry {
        let e = *self.slab.get(s);
        let l = e.word.tag() as usize;
        self.slab.unlink(&mut self.lists[l], s);
        self.sizes[l] -= e.word.size();
        e
    }

    /// Caches `a.key`, which is neither cached nor a ghost, in T2 after a ghost hit, else in T1.
    #[inline(always)]
    fn insert_absent(&mut self, a: &Access) {
        let list = if self.ghost_hit_now(a) {
            self.last_in_b1 = false;
            self.last_in_b2 = false;
            self.ghost_hit_at = 0;
            T2
        } else {
            T1
        };
        let s = self.slab.alloc(Entry { key: a.key, word: SizeTag::new(a.size, list) });
        self.slab.push_head(&mut self.lists[list as usize], s);
        self.sizes[list as usize] += a.size;
        let slab = &self.slab;
        self.index.insert(a.key, s, |x| slab.get(x).key);
    }

    /// Drops the LRU ghost of `list` (B1 or B2).
    #[inline(always)]
    fn drop_ghost(&mut self, list: u8) {
        if let Some(s) = self.lists[list as usize].tail() {
            self.forget(s);
            self.prefetch_tail(list, true);
        }
    }

    /// Hints what the next eviction from `list` touches: the node before its LRU entry and,
    /// for a ghost list (whose LRU entry is forgotten), that entry's index cell. The LRU node
    /// itself was hinted by the previous call, so reading its key does not stall.
    #[inline]
    fn prefetch_tail(&self, list: u8, index: bool) {
        if let Some(t) = self.lists[list as usize].tail() {
            if index {
                self.index.prefetch(self.slab.get(t).key);
            }
            if let Some(p) = self.slab.prev(t) {
                self.slab.prefetch(p);
            }
        }
    }

    /// REPLACE: demote the LRU of T1 to B1 or the LRU of T2 to B2.
    #[inline(always)]
    fn replace(&mut self) -> Option<Evicted> {
        let t1 = self.sizes[T1 as usize];
        let t1f = t1 as f64;
        let from_t1 = (t1 > 0 && (t1f > self.p || (t1f == self.p && self.last_in_b2))) || self.sizes[T2 as usize] == 0;
        let (from, other) = if from_t1 { (T1, T2) } else { (T2, T1) };
        // libCacheSim assumes the chosen list is not empty; fall back to the other one.
        let s = self.lists[from as usize].tail().or(self.lists[other as usize].tail())?;
        self.replace_slot(s)
    }

    /// Moves resident slot `s` to the ghost list that shadows its list.
    #[inline(always)]
    fn replace_slot(&mut self, s: Slot) -> Option<Evicted> {
        let e = *self.slab.get(s);
        let ghost = if e.word.tag() == T1 { B1 } else { B2 };
        self.relist(s, ghost);
        self.prefetch_tail(e.word.tag(), false);
        Some(Evicted { key: e.key, size: e.word.size() })
    }
}

impl Policy for Arc {
    fn name(&self) -> &str {
        "arc"
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn occupied(&self) -> u64 {
        self.sizes[T1 as usize] + self.sizes[T2 as usize]
    }
    fn len(&self) -> usize {
        self.lists[T1 as usize].len() + self.lists[T2 as usize].len()
    }
    fn contains(&self, key: Key) -> bool {
        match self.lookup(key) {
            Some(s) => {
                let t = self.slab.get(s).word.tag();
                t == T1 || t == T2
            }
            None => false,
        }
    }

    #[inline]
    fn prefetch(&self, key: Key) {
        self.slab.prefetch(self.index.find_hint(key));
    }

    #[inline]
    fn prefetch_index(&self, key: Key) {
        self.index.prefetch(key);
    }

    #[inline]
    fn prefetch_neighbours(&self, key: Key) {
        self.slab.prefetch_neighbours(self.index.find_hint(key));
    }

    #[inline(always)]
    fn find(&mut self, a: &Access) -> bool {
        let slab = &self.slab;
        let (cell, s) = match self.index.find_cell(a.key, |x| slab.get(x).key) {
            Some(found) => found,
            None => return false,
        };
        self.last_in_b1 = false;
        self.last_in_b2 = false;
        match self.slab.get(s).word.tag() {
            T1 | T2 => {
                self.relist(s, T2);
                true
            }
            B1 => {
                // Case II: T1 was too small.
                self.last_in_b1 = true;
                self.ghost_hit_at = a.vtime + 1;
                let (b1, b2) = (self.sizes[B1 as usize] as f64, self.sizes[B2 as usize] as f64);
                let delta = (b2 / b1).max(1.0);
                self.p = (self.p + delta).min(self.capacity as f64);
                self.forget_cell(s, cell);
                false
            }
            _ => {
                // Case III: T2 was too small.
                self.last_in_b2 = true;
                self.ghost_hit_at = a.vtime + 1;
                let (b1, b2) = (self.sizes[B1 as usize] as f64, self.sizes[B2 as usize] as f64);
                let delta = (b1 / b2).max(1.0);
                self.p = (self.p - delta).max(0.0);
                self.forget_cell(s, cell);
                false
            }
        }
    }

    fn insert(&mut self, a: &Access) {
        // A key inserted without a `find` first (a prefetch) may still have a ghost: drop it,
        // so the index never holds the key twice. (`get` always finds first, which drops it.)
        if let Some(s) = self.lookup(a.key) {
            debug_assert!(matches!(self.slab.get(s).word.tag(), B1 | B2), "insert of a cached key");
            self.forget(s);
        }
        self.insert_absent(a);
    }

    /// `find`, then on a miss `evict` and `insert` as the default does, without `insert`'s
    /// second lookup for a ghost: `find` has just dropped any ghost of the key.
    #[inline(always)]
    fn get(&mut self, a: &Access) -> bool {
        super::reference(self, a, Self::insert_absent)
    }

    #[inline]
    fn get_batch(&mut self, batch: &[Access], hits: &mut [bool]) {
        super::get_batch_keeping_slots(
            self,
            batch,
            hits,
            |p, key| p.index.prefetch(key),
            |p, key| {
                let s = p.index.find_hint(key);
                p.slab.prefetch(s);
                s
            },
            |p, s| p.slab.prefetch_neighbours(s),
        );
    }

    #[inline(always)]
    fn evict(&mut self, a: &Access) -> Option<Evicted> {
        if self.lists[T1 as usize].is_empty() && self.lists[T2 as usize].is_empty() {
            return None;
        }
        if self.ghost_hit_now(a) {
            return self.replace();
        }
        // Case IV: a miss in all four lists.
        let c = self.capacity;
        let [t1, b1, t2, b2] = self.sizes;
        if t1 + b1 + a.size > c {
            if b1 > 0 {
                self.drop_ghost(B1);
                self.replace()
            } else {
                // T1 alone fills the cache: evict its LRU without keeping a ghost.
                match self.lists[T1 as usize].tail() {
                    Some(s) => {
                        let e = self.forget(s);
                        Some(Evicted { key: e.key, size: e.word.size() })
                    }
                    None => self.replace(),
                }
            }
        } else {
            if t1 + b1 + t2 + b2 >= 2 * c && b2 > 0 {
                self.drop_ghost(B2);
            }
            self.replace()
        }
    }

    fn remove(&mut self, key: Key) -> bool {
        match self.lookup(key) {
            Some(s) => {
                let e = self.forget(s);
                let t = e.word.tag();
                t == T1 || t == T2
            }
            None => false,
        }
    }

    fn metadata_bytes(&self) -> usize {
        self.index.allocation_size() + self.slab.allocated_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil;

    #[test]
    fn second_reference_promotes_to_t2() {
        let mut arc = Arc::new(4);
        testutil::run_keys(&mut arc, &[1, 2, 3, 1]);
        assert_eq!(arc.list_keys(T1 as usize), vec![3, 2]);
        assert_eq!(arc.list_keys(T2 as usize), vec![1]);
    }

    #[test]
    fn ghost_hit_in_b1_grows_p_and_returns_to_t2() {
        let mut arc = Arc::new(2);
        // 1 2 fill T1; 3: T1+B1+1 > 2 and B1 empty: evict 1 with no ghost. 1 is gone entirely.
        testutil::run_keys(&mut arc, &[1, 2, 3]);
        assert_eq!(arc.list_keys(T1 as usize), vec![3, 2]);
        assert!(arc.list_keys(B1 as usize).is_empty());
        // 2 hits: T2 = [2]. 4: T1+B1+1 = 2 <= 2, lists hold 3 < 4: REPLACE; T1 = 1 > p = 0:
        // 3 goes to B1.
        testutil::run_keys(&mut arc, &[2, 4]);
        assert_eq!(arc.list_keys(B1 as usize), vec![3]);
        // 3 hits B1: p = 0 + max(0/1, 1) = 1. REPLACE: T1 = 1 is not > p, so T2's LRU (2) goes
        // to B2, and 3 comes back into T2.
        let hit = arc.get(&Access::unit(3, 10));
        assert!(!hit);
        assert_eq!(arc.p(), 1.0);
        assert_eq!(arc.list_keys(T2 as usize), vec![3]);
        assert_eq!(arc.list_keys(B2 as usize), vec![2]);
        assert_eq!(arc.list_keys(T1 as usize), vec![4]);
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| Box::new(Arc::new(c)));
    }
}
