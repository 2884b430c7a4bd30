//! FIFO: evict the entry that was inserted first.
//!
//! One queue in insertion order; a hit changes nothing, a miss inserts at the head, the victim is
//! the tail. FIFO is the baseline that CLOCK, S3-FIFO and the segmented FIFOs refine: it needs no
//! work on a hit, which is why hardware and lock-free caches use it, and it is not a stack
//! algorithm (Belady's anomaly: a larger FIFO cache can miss more).
//!
//! libCacheSim semantics reproduced (`FIFO.c`): an object keeps the size it was inserted with
//! when a later reference gives another size; an object larger than the cache is not inserted.

use super::list::List;
use super::resident::{KeySize, ResidentSet};
use super::{Access, Evicted, Key, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "fifo",
    aliases: &[],
    summary: "first in, first out",
    build: |capacity, _params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> { Ok(Box::new(Fifo::new(capacity))) },
};

pub struct Fifo {
    capacity: u64,
    resident: ResidentSet<KeySize>,
    /// Head: newest; tail: the next victim.
    queue: List,
}

impl Fifo {
    pub fn new(capacity: u64) -> Self {
        Fifo { capacity, resident: ResidentSet::new(), queue: List::new() }
    }

    /// Keys from newest to oldest.
    pub fn keys(&self) -> impl Iterator<Item = Key> + '_ {
        self.resident.slab().iter(&self.queue).map(|(_, e)| e.key)
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
        self.resident.occupied()
    }
    fn len(&self) -> usize {
        self.resident.len()
    }
    fn contains(&self, key: Key) -> bool {
        self.resident.contains(key)
    }

    #[inline]
    fn find(&mut self, a: &Access) -> bool {
        self.contains(a.key)
    }

    #[inline]
    fn insert(&mut self, a: &Access) {
        self.resident.insert_head(&mut self.queue, KeySize { key: a.key, size: a.size });
    }

    #[inline]
    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        let e = self.resident.evict_tail(&mut self.queue)?;
        Some(Evicted { key: e.key, size: e.size })
    }

    fn remove(&mut self, key: Key) -> bool {
        let queue = &mut self.queue;
        self.resident.remove(key, |_| queue).is_some()
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
