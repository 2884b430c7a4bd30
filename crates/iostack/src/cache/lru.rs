//! LRU: evict the least recently used entry.
//!
//! One recency list; a hit moves the entry to the head, a miss inserts at the head, the victim is
//! the tail. This is the reference point of every other policy and the stack whose depths define
//! stack distance (Mattson et al., 1970).

use super::list::{List, Slab};
use super::slots::SlotIndex;
use super::{Access, Evicted, Key, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "lru",
    aliases: &[],
    summary: "least recently used",
    build: |capacity, _params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> { Ok(Box::new(Lru::new(capacity))) },
};

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Key,
    size: u64,
}

pub struct Lru {
    capacity: u64,
    occupied: u64,
    /// Key to slot; keys live only in the slab entries (see `slots.rs`).
    index: SlotIndex,
    slab: Slab<Entry>,
    list: List,
}

impl Lru {
    pub fn new(capacity: u64) -> Self {
        Lru { capacity, occupied: 0, index: SlotIndex::new(), slab: Slab::default(), list: List::new() }
    }

    /// Keys from most to least recently used.
    pub fn keys(&self) -> impl Iterator<Item = Key> + '_ {
        self.slab.iter(&self.list).map(|(_, e)| e.key)
    }
}

impl Policy for Lru {
    fn name(&self) -> &str {
        "lru"
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn occupied(&self) -> u64 {
        self.occupied
    }
    fn len(&self) -> usize {
        self.index.len()
    }
    fn contains(&self, key: Key) -> bool {
        self.index.find(key, |s| self.slab.get(s).key).is_some()
    }

    /// A hit moves the entry to the head. The entry keeps the size it was inserted with, as in
    /// libCacheSim, even if this reference gives another size.
    #[inline]
    fn prefetch(&self, key: Key) {
        let slab = &self.slab;
        if let Some(s) = self.index.find(key, |s| slab.get(s).key) {
            slab.prefetch(s);
        }
    }

    #[inline]
    fn prefetch_index(&self, key: Key) {
        self.index.prefetch(key);
    }

    #[inline]
    fn prefetch_neighbours(&self, key: Key) {
        let slab = &self.slab;
        if let Some(s) = self.index.find(key, |s| slab.get(s).key) {
            slab.prefetch_neighbours(s);
        }
    }

    #[inline]
    fn find(&mut self, a: &Access) -> bool {
        let slab = &self.slab;
        match self.index.find(a.key, |s| slab.get(s).key) {
            Some(s) => {
                self.slab.move_to_head(&mut self.list, s);
                true
            }
            None => false,
        }
    }

    #[inline]
    fn insert(&mut self, a: &Access) {
        let s = self.slab.alloc(Entry { key: a.key, size: a.size });
        self.slab.push_head(&mut self.list, s);
        let slab = &self.slab;
        self.index.insert(a.key, s, |x| slab.get(x).key);
        self.occupied += a.size;
    }

    #[inline]
    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        let s = self.slab.pop_tail(&mut self.list)?;
        // The next eviction unlinks the new tail, writing to the node before it, which is
        // cold (least recently used); start loading it now, and the index cell of the new tail
        // (whose node the previous eviction loaded) that the next eviction removes.
        if let Some(t) = self.list.tail() {
            self.index.prefetch(self.slab.get(t).key);
            if let Some(p) = self.slab.prev(t) {
                self.slab.prefetch(p);
            }
        }
        let e = *self.slab.get(s);
        let slab = &self.slab;
        self.index.remove(e.key, |x| slab.get(x).key);
        self.slab.release(s);
        self.occupied -= e.size;
        Some(Evicted { key: e.key, size: e.size })
    }

    fn remove(&mut self, key: Key) -> bool {
        let slab = &self.slab;
        match self.index.remove(key, |x| slab.get(x).key) {
            Some(s) => {
                self.slab.unlink(&mut self.list, s);
                self.occupied -= self.slab.get(s).size;
                self.slab.release(s);
                true
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
    fn evicts_least_recent() {
        let mut lru = Lru::new(3);
        let hits = testutil::run_keys(&mut lru, &[1, 2, 3, 1, 4, 2, 1]);
        // 1 2 3 miss; 1 hit; 4 evicts 2; 2 misses and evicts 3; 1 hits.
        assert_eq!(hits, vec![false, false, false, true, false, false, true]);
        assert_eq!(lru.keys().collect::<Vec<_>>(), vec![1, 2, 4]);
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| Box::new(Lru::new(c)));
    }
}
