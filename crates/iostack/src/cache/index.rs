//! A key index that stores only slot numbers.
//!
//! A list-based policy keeps each entry's key in its [`Slab`] node already. A `KeyMap<Slot>`
//! would store the key a second time, padded to 16 bytes per bucket; [`SlotIndex`] stores just
//! the 4-byte slot and compares keys by looking at the node. With hashbrown's one control byte,
//! that is 5 bytes per bucket instead of 17, which matters twice: metadata per cached object
//! drops by about 20 bytes, and the smaller table stays in the CPU caches, so lookups miss less.
//! A probe only touches a node when the 7-bit hash tag in the control byte already matches, so
//! the extra indirection costs almost nothing on misses, and on hits the node is about to be
//! touched anyway (to move it in its list).

use hashbrown::HashTable;

use super::list::{Slab, Slot};
use super::Key;

/// Entries that know their own key.
pub trait Keyed {
    fn key(&self) -> Key;
}

/// Maps keys to the slots of a [`Slab`] whose entries hold the keys.
#[derive(Debug, Clone, Default)]
pub struct SlotIndex {
    table: HashTable<Slot>,
}

#[inline(always)]
fn hash(key: Key) -> u64 {
    // Fx-style multiplicative hash; the high bits feed hashbrown's tag, so fold them down too.
    let h = key.wrapping_mul(0xf135_7aea_2e62_a9c5);
    h.rotate_left(26) ^ h
}

impl SlotIndex {
    pub fn with_capacity(n: usize) -> Self {
        SlotIndex { table: HashTable::with_capacity(n) }
    }

    pub fn len(&self) -> usize {
        self.table.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// The slot holding `key`.
    #[inline]
    pub fn get<T: Keyed>(&self, slab: &Slab<T>, key: Key) -> Option<Slot> {
        self.table.find(hash(key), |&s| slab.get(s).key() == key).copied()
    }

    /// Records that `key` is in slot `s` (the key must not be indexed yet).
    #[inline]
    pub fn insert<T: Keyed>(&mut self, slab: &Slab<T>, key: Key, s: Slot) {
        self.table.insert_unique(hash(key), s, |&o| hash(slab.get(o).key()));
    }

    /// Forgets `key`; returns its slot if it was indexed.
    #[inline]
    pub fn remove<T: Keyed>(&mut self, slab: &Slab<T>, key: Key) -> Option<Slot> {
        match self.table.find_entry(hash(key), |&s| slab.get(s).key() == key) {
            Ok(e) => Some(e.remove().0),
            Err(_) => None,
        }
    }

    /// Bytes allocated by the table.
    pub fn allocated_bytes(&self) -> usize {
        self.table.allocation_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Keyed for u64 {
        fn key(&self) -> Key {
            *self
        }
    }

    #[test]
    fn insert_find_remove() {
        let mut slab: Slab<u64> = Slab::default();
        let mut ix = SlotIndex::default();
        let slots: Vec<Slot> = (0..10_000u64)
            .map(|k| {
                let s = slab.alloc(k * 7919);
                ix.insert(&slab, k * 7919, s);
                s
            })
            .collect();
        for (k, &s) in slots.iter().enumerate() {
            assert_eq!(ix.get(&slab, k as u64 * 7919), Some(s));
        }
        assert_eq!(ix.get(&slab, 1), None);
        assert_eq!(ix.remove(&slab, 7919), Some(slots[1]));
        assert_eq!(ix.remove(&slab, 7919), None);
        assert_eq!(ix.get(&slab, 7919), None);
        assert_eq!(ix.len(), 9_999);
        assert!(ix.allocated_bytes() < 10_000 * 9, "5 bytes per bucket, at most 7/8 full");
    }
}
