//! FIFO: evict the entry that was inserted first.
//!
//! One queue in insertion order; a hit changes nothing, a miss inserts at the head, the victim is
//! the tail. FIFO is the baseline that CLOCK, S3-FIFO and the segmented FIFOs refine: it needs no
//! work on a hit, which is why hardware and lock-free caches use it, and it is not a stack
//! algorithm (Belady's anomaly: a larger FIFO cache can miss more).
//!
//! libCacheSim semantics reproduced (`FIFO.c`): an object keeps the size it was inserted with
//! when a later reference gives another size; an object larger than the cache is not inserted.

use super::list::{List, Slab};
use super::slots::SlotIndex;
use super::{Access, Evicted, Key, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "fifo",
    aliases: &[],
    summary: "first in, first out",
    build: |capacity, _params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> { Ok(Box::new(Fifo::new(capacity))) },
};

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Key,
    size: u64,
}

pub struct Fifo {
    capacity: u64,
    occupied: u64,
    index: SlotIndex,
    slab: Slab<Entry>,
    queue: List,
}

impl Fifo {
    pub fn new(capacity: u64) -> Self {
        Fifo { capacity, occupied: 0, index: SlotIndex::new(), slab: Slab::default(), queue: List::new() }
    }

    /// Keys from newest to oldest.
    pub fn keys(&self) -> impl Iterator<Item = Key> + '_ {
        self.slab.iter(&self.queue).map(|(_, e)| e.key)
    }
}

impl Policy for Fifo {
    fn name(&self) -> &str {
        "fifo"
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

    #[inline]
    fn find(&mut self, a: &Access) -> bool {
        self.contains(a.key)
    }

    #[inline]
    fn insert(&mut self, a: &Access) {
        let s = self.slab.alloc(Entry { key: a.key, size: a.size });
        self.slab.push_head(&mut self.queue, s);
        let slab = &self.slab;
        self.index.insert(a.key, s, |x| slab.get(x).key);
        self.occupied += a.size;
    }

    #[inline]
    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        let s = self.slab.pop_tail(&mut self.queue)?;
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
                self.slab.unlink(&mut self.queue, s);
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
    fn evicts_first_inserted() {
        let mut f = Fifo::new(3);
        let hits = testutil::run_keys(&mut f, &[1, 2, 3, 1, 4, 1, 2]);
        // 1 2 3 miss; 1 hits but stays oldest; 4 evicts 1; 1 misses and evicts 2; 2 misses.
        assert_eq!(hits, vec![false, false, false, true, false, false, false]);
        assert_eq!(f.keys().collect::<Vec<_>>(), vec![2, 1, 4]);
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| Box::new(Fifo::new(c)));
    }
}
