//! LFU: evict the least frequently used entry.
//!
//! Each cached entry counts its references since it was inserted (1 on insertion; the count is
//! forgotten on eviction, so a returning object starts again at 1). The victim is an entry with
//! the lowest count; among those, the one that reached that count first (FIFO within a
//! frequency, which for frequency 1 is insertion order and above it the order of the last hits).
//!
//! The structure is the O(1) LFU of Shah, Mitra and Matani (2010): a list of frequency buckets in
//! increasing frequency, each holding its entries in the order they arrived at that frequency.
//! A hit moves the entry from bucket f to the bucket f+1 (created next to f if missing), an
//! empty bucket is dropped, and the victim is the oldest entry of the first bucket.
//!
//! libCacheSim semantics reproduced (`LFU.c`): insert with frequency 1 at the newest end of
//! bucket 1, a hit appends to the newest end of bucket f+1, evict the oldest entry of the
//! lowest non-empty bucket; hits keep the inserted size.

use super::list::{List, Slab, Slot};
use super::resident::{ResidentEntry, ResidentSet};
use super::{Access, Evicted, Key, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "lfu",
    aliases: &[],
    summary: "least frequently used (FIFO among equal frequencies)",
    build: |capacity, _params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> { Ok(Box::new(Lfu::new(capacity))) },
};

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Key,
    size: u64,
    bucket: Slot,
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

#[derive(Debug, Clone, Copy)]
struct Bucket {
    freq: u64,
    /// Head: the latest to arrive at this frequency; tail: the next victim.
    entries: List,
}

pub struct Lfu {
    capacity: u64,
    resident: ResidentSet<Entry>,
    buckets: Slab<Bucket>,
    /// Buckets from the lowest frequency (head) to the highest (tail).
    order: List,
}

impl Lfu {
    pub fn new(capacity: u64) -> Self {
        Lfu {
            capacity,
            resident: ResidentSet::new(),
            buckets: Slab::default(),
            order: List::new(),
        }
    }

    /// (frequency, keys from the next victim to the latest arrival) for each bucket, lowest
    /// frequency first.
    pub fn buckets(&self) -> Vec<(u64, Vec<Key>)> {
        self.buckets
            .iter(&self.order)
            .map(|(_, b)| {
                let mut keys: Vec<Key> = self.resident.slab().iter(&b.entries).map(|(_, e)| e.key).collect();
                keys.reverse();
                (b.freq, keys)
            })
            .collect()
    }

    /// Drops bucket `b` if it has no entries left.
    #[inline]
    fn drop_if_empty(&mut self, b: Slot) {
        if self.buckets.get(b).entries.is_empty() {
            self.buckets.unlink(&mut self.order, b);
            self.buckets.release(b);
        }
    }

    fn new_bucket(&mut self, freq: u64) -> Slot {
        self.buckets.alloc(Bucket { freq, entries: List::new() })
    }
}

impl Policy for Lfu {
    fn name(&self) -> &str {
        "lfu"
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
        let b = self.resident.get(s).bucket;
        let freq = self.buckets.get(b).freq + 1;
        let nb = match self.buckets.next(b) {
            Some(n) if self.buckets.get(n).freq == freq => n,
            _ => {
                let n = self.new_bucket(freq);
                self.buckets.insert_after(&mut self.order, b, n);
                n
            }
        };
        self.resident.unlink(&mut self.buckets.get_mut(b).entries, s);
        self.resident.push_head(&mut self.buckets.get_mut(nb).entries, s);
        self.resident.get_mut(s).bucket = nb;
        self.drop_if_empty(b);
        true
    }

    fn insert(&mut self, a: &Access) {
        let b = match self.order.head() {
            Some(h) if self.buckets.get(h).freq == 1 => h,
            _ => {
                let h = self.new_bucket(1);
                self.buckets.push_head(&mut self.order, h);
                h
            }
        };
        self.resident.insert_head(&mut self.buckets.get_mut(b).entries, Entry { key: a.key, size: a.size, bucket: b });
    }

    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        let b = self.order.head()?;
        let e = self.resident.evict_tail(&mut self.buckets.get_mut(b).entries)?;
        self.drop_if_empty(b);
        Some(Evicted { key: e.key, size: e.size })
    }

    fn remove(&mut self, key: Key) -> bool {
        let buckets = &mut self.buckets;
        match self.resident.remove(key, |e| &mut buckets.get_mut(e.bucket).entries) {
            Some(e) => {
                self.drop_if_empty(e.bucket);
                true
            }
            None => false,
        }
    }

    fn metadata_bytes(&self) -> usize {
        self.resident.metadata_bytes() + self.buckets.allocated_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil;

    #[test]
    fn evicts_least_frequent_oldest_first() {
        let mut l = Lfu::new(3);
        // 1 x3, 2 x2, 3 x1, then 4 evicts 3 (lowest frequency).
        let hits = testutil::run_keys(&mut l, &[1, 1, 1, 2, 2, 3, 4]);
        assert_eq!(hits, vec![false, true, true, false, true, false, false]);
        assert!(!l.contains(3));
        assert_eq!(l.buckets(), vec![(1, vec![4]), (2, vec![2]), (3, vec![1])]);
    }

    #[test]
    fn equal_frequencies_evict_first_arrival() {
        let mut l = Lfu::new(3);
        // 1 2 3 inserted; 3 then 1 reach frequency 2, in that order; 4 evicts 2, the only
        // entry left at frequency 1.
        testutil::run_keys(&mut l, &[1, 2, 3, 3, 1, 4]);
        assert!(!l.contains(2));
        assert_eq!(l.buckets(), vec![(1, vec![4]), (2, vec![3, 1])]);
        // Evicting twice takes 4, then 3 (it reached frequency 2 before 1).
        let a = Access::unit(99, 10);
        assert_eq!(l.evict(&a).unwrap().key, 4);
        assert_eq!(l.evict(&a).unwrap().key, 3);
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| Box::new(Lfu::new(c)));
    }
}
