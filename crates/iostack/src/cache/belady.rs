//! Belady's OPT (MIN): evict the entry whose next reference is farthest in the future
//! (Belady, IBM Systems Journal 1966).
//!
//! With unit sizes this is the optimal offline policy: no policy misses less on the same
//! reference stream at the same capacity. It needs the future, so the engine computes, in a
//! pre-pass over the trace (`engine::future::next_use_positions`), the position of the next
//! reference to the same key and hands it over in [`Access::next_access`] (`u64::MAX` when there
//! is none); [`Policy::needs_future`] asks for it.
//!
//! The entries sit in a binary max-heap on their next-reference position, with each entry's
//! heap position stored in it, so that a hit (which moves the entry's next reference later) and
//! an eviction are O(log n) with no allocation.
//!
//! libCacheSim semantics reproduced (`Belady.c`): every missed object is inserted, also one
//! that is never referenced again and also when its next reference is farther than that of
//! every cached entry (the insertion then costs the eviction of the entry referenced farthest
//! in the future, which MIN proper would not do: it would bypass the object); entries never
//! referenced again go first, in no particular order; a hit keeps the inserted size. With
//! sizes, this is not optimal (the size-aware problem is NP-hard); libCacheSim's `BeladySize`
//! is a different policy.

use super::list::Slot;
use super::resident::{ResidentEntry, ResidentSet};
use super::{Access, Evicted, Key, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "belady",
    aliases: &["opt", "min"],
    summary: "Belady's OPT: evict the entry referenced farthest in the future (needs a pre-pass)",
    build: |capacity, _params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> { Ok(Box::new(Belady::new(capacity))) },
};

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Key,
    size: u64,
    /// Position of the next reference (`u64::MAX`: none).
    next: u64,
    /// Position in the heap.
    pos: u32,
}

impl ResidentEntry for Entry {
    #[inline]
    fn key(&self) -> Key {
        self.key
    }
    #[inline]
    fn size(&self) -> u64 {
        self.size
    }
}

pub struct Belady {
    capacity: u64,
    /// The entries are on no list: the heap orders them.
    resident: ResidentSet<Entry>,
    /// Max-heap of slots on `next`.
    heap: Vec<Slot>,
}

impl Belady {
    pub fn new(capacity: u64) -> Self {
        Belady { capacity, resident: ResidentSet::new(), heap: Vec::new() }
    }

    #[inline]
    fn next_of(&self, i: usize) -> u64 {
        self.resident.get(self.heap[i]).next
    }

    #[inline]
    fn place(&mut self, i: usize, s: Slot) {
        self.heap[i] = s;
        self.resident.get_mut(s).pos = i as u32;
    }

    fn sift_up(&mut self, mut i: usize) {
        let s = self.heap[i];
        let v = self.resident.get(s).next;
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.next_of(parent) >= v {
                break;
            }
            let p = self.heap[parent];
            self.place(i, p);
            i = parent;
        }
        self.place(i, s);
    }

    fn sift_down(&mut self, mut i: usize) {
        let n = self.heap.len();
        let s = self.heap[i];
        let v = self.resident.get(s).next;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.next_of(r) > self.next_of(l) { r } else { l };
            if self.next_of(c) <= v {
                break;
            }
            let cs = self.heap[c];
            self.place(i, cs);
            i = c;
        }
        self.place(i, s);
    }

    /// Takes the entry at heap position `i` out of the heap.
    fn heap_remove(&mut self, i: usize) {
        let last = self.heap.pop().expect("heap not empty");
        if i < self.heap.len() {
            self.place(i, last);
            self.sift_down(i);
            self.sift_up(self.resident.get(last).pos as usize);
        }
    }

    fn forget(&mut self, s: Slot) -> Entry {
        self.heap_remove(self.resident.get(s).pos as usize);
        self.resident.forget_unlinked(s)
    }
}

impl Policy for Belady {
    fn name(&self) -> &str {
        "belady"
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn occupied(&self) -> u64 {
        self.resident.occupied()
    }
    fn len(&self) -> usize {
        self.resident.len()
    }
    fn contains(&self, key: Key) -> bool {
        self.resident.contains(key)
    }

    fn find(&mut self, a: &Access) -> bool {
        let Some(s) = self.resident.find(a.key) else { return false };
        let e = self.resident.get_mut(s);
        let old = e.next;
        e.next = a.next_access;
        let pos = e.pos as usize;
        if a.next_access > old {
            self.sift_up(pos);
        } else {
            self.sift_down(pos);
        }
        true
    }

    fn insert(&mut self, a: &Access) {
        let pos = self.heap.len() as u32;
        let s = self.resident.insert_unlinked(Entry { key: a.key, size: a.size, next: a.next_access, pos });
        self.heap.push(s);
        self.sift_up(pos as usize);
    }

    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        let s = *self.heap.first()?;
        let e = self.forget(s);
        Some(Evicted { key: e.key, size: e.size })
    }

    fn remove(&mut self, key: Key) -> bool {
        match self.resident.find(key) {
            Some(s) => {
                self.forget(s);
                true
            }
            None => false,
        }
    }

    fn needs_future(&self) -> bool {
        true
    }

    fn metadata_bytes(&self) -> usize {
        self.resident.metadata_bytes() + self.heap.capacity() * std::mem::size_of::<Slot>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil;

    #[test]
    fn evicts_farthest_next_use() {
        let mut b = Belady::new(2);
        let keys = [1, 2, 3, 1, 2, 3, 1];
        let hits = testutil::run_keys_future(&mut b, &keys);
        // 1 2 miss; 3: 1 is next used at 3, 2 at 4: evict 2; 1 hits; 2: 3 next at 5, 1 at 6:
        // evict 1; 3 hits; 1 misses.
        assert_eq!(hits, vec![false, false, false, true, false, true, false]);
    }

    #[test]
    fn never_worse_than_lru_on_mixed_keys() {
        for cap in [3u64, 20, 100] {
            let keys = testutil::mixed_keys(4000, cap);
            let opt = testutil::run_keys_future(&mut Belady::new(cap), &keys).iter().filter(|h| **h).count();
            let lru = testutil::run_keys(&mut crate::cache::lru::Lru::new(cap), &keys).iter().filter(|h| **h).count();
            assert!(opt >= lru, "cap {cap}: OPT {opt} hits < LRU {lru}");
        }
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| Box::new(Belady::new(c)));
    }
}
