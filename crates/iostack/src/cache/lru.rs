//! LRU: evict the least recently used entry.
//!
//! One recency list; a hit moves the entry to the head, a miss inserts at the head, the victim is
//! the tail. This is the reference point of every other policy and the stack whose depths define
//! stack distance (Mattson et al., 1970).

use super::list::List;
use super::resident::{KeySize, ResidentSet};
use super::{Access, Evicted, Key, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "lru",
    aliases: &[],
    summary: "least recently used",
    build: |capacity, _params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> { Ok(Box::new(Lru::new(capacity))) },
};

pub struct Lru {
    capacity: u64,
    resident: ResidentSet<KeySize>,
    /// Head: most recently used; tail: the next victim.
    list: List,
}

impl Lru {
    pub fn new(capacity: u64) -> Self {
        Lru { capacity, resident: ResidentSet::new(), list: List::new() }
    }

    /// Keys from most to least recently used.
    pub fn keys(&self) -> impl Iterator<Item = Key> + '_ {
        self.resident.slab().iter(&self.list).map(|(_, e)| e.key)
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
        self.resident.occupied()
    }
    fn len(&self) -> usize {
        self.resident.len()
    }
    fn contains(&self, key: Key) -> bool {
        self.resident.contains(key)
    }

    #[inline]
    fn prefetch(&self, key: Key) {
        self.resident.prefetch(key);
    }

    #[inline]
    fn prefetch_index(&self, key: Key) {
        self.resident.prefetch_index(key);
    }

    #[inline]
    fn prefetch_neighbours(&self, key: Key) {
        self.resident.prefetch_neighbours(key);
    }

    /// A hit moves the entry to the head. The entry keeps the size it was inserted with, as in
    /// libCacheSim, even if this reference gives another size.
    #[inline(always)]
    fn find(&mut self, a: &Access) -> bool {
        match self.resident.find(a.key) {
            Some(s) => {
                self.resident.move_to_head(&mut self.list, s);
                true
            }
            None => false,
        }
    }

    #[inline]
    fn insert(&mut self, a: &Access) {
        self.resident.insert_head(&mut self.list, KeySize { key: a.key, size: a.size });
    }

    /// The default `get`, with `find` inlined into it.
    #[inline(always)]
    fn get(&mut self, a: &Access) -> bool {
        super::reference(self, a, |p, a| p.insert(a))
    }

    fn get_batch(&mut self, batch: &[Access], hits: &mut [bool]) {
        super::get_batch_keeping_slots(
            self,
            batch,
            hits,
            |p, key| p.resident.prefetch_index(key),
            |p, key| p.resident.prefetch_entry(key),
            |p, s| p.resident.slab().prefetch_neighbours(s),
        );
    }

    #[inline]
    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        let victim = self.list.tail()?;
        // The next eviction unlinks the new tail, writing to the node before it, which is
        // cold (least recently used); start loading it now, and the index cell of the new tail
        // that the next eviction removes. (The victim and the new tail are read by this
        // eviction's unlink anyway.)
        let slab = self.resident.slab();
        if let Some(t) = slab.prev(victim) {
            self.resident.prefetch_index(slab.get(t).key);
            if let Some(p) = slab.prev(t) {
                slab.prefetch(p);
            }
        }
        let e = self.resident.forget(&mut self.list, victim);
        Some(Evicted { key: e.key, size: e.size })
    }

    fn remove(&mut self, key: Key) -> bool {
        let list = &mut self.list;
        self.resident.remove(key, |_| list).is_some()
    }

    fn metadata_bytes(&self) -> usize {
        self.resident.metadata_bytes()
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
