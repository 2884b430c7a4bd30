//! Compact building blocks for list-based policies: an index from key to slab slot that stores
//! only the slot, and a size word with a few tag bits.
//!
//! A `KeyMap<Slot>` stores every key twice (once in the map, once in the slab entry, which needs
//! it to find the map entry again on eviction) and pads each bucket to 16 bytes. [`SlotIndex`]
//! stores a 4-byte slot per bucket and compares keys through the slab, whose entry the caller
//! touches anyway to relink it, so the lookup costs no extra cache miss and a cached object costs
//! about 24 bytes of slab node plus 5 to 10 bytes of index instead of 40 to 60.

use super::list::Slot;
use super::Key;
use std::hash::BuildHasher;

#[inline]
fn hash(key: Key) -> u64 {
    rustc_hash::FxBuildHasher.hash_one(key)
}

/// Key-to-slot index; the key of a slot is read back through a `key_of` closure (the slab).
#[derive(Default)]
pub struct SlotIndex {
    table: hashbrown::HashTable<Slot>,
}

impl SlotIndex {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.table.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.table.is_empty()
    }

    /// The slot holding `key`.
    #[inline]
    pub fn find(&self, key: Key, key_of: impl Fn(Slot) -> Key) -> Option<Slot> {
        self.table.find(hash(key), |&s| key_of(s) == key).copied()
    }

    /// Records that `slot` holds `key`, which must not be indexed yet.
    #[inline]
    pub fn insert(&mut self, key: Key, slot: Slot, key_of: impl Fn(Slot) -> Key) {
        self.table.insert_unique(hash(key), slot, |&s| hash(key_of(s)));
    }

    /// Forgets `key`; returns its slot. Call before the slot is released or reused.
    #[inline]
    pub fn remove(&mut self, key: Key, key_of: impl Fn(Slot) -> Key) -> Option<Slot> {
        match self.table.find_entry(hash(key), |&s| key_of(s) == key) {
            Ok(e) => Some(e.remove().0),
            Err(_) => None,
        }
    }

    /// Bytes allocated by the table.
    pub fn allocation_size(&self) -> usize {
        self.table.allocation_size()
    }
}

/// An entry's size (low 56 bits) with an 8-bit tag (which list it is on, a reference bit or
/// counter), so that a slab entry is a key and one word: 24-byte nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SizeTag(u64);

impl SizeTag {
    const SIZE_BITS: u32 = 56;
    const SIZE_MASK: u64 = (1 << Self::SIZE_BITS) - 1;

    /// Sizes of 2^56 bytes (64 PiB) or more do not fit; no cache holds such an object.
    #[inline]
    pub fn new(size: u64, tag: u8) -> Self {
        debug_assert!(size <= Self::SIZE_MASK, "object size {size} does not fit in 56 bits");
        SizeTag((size & Self::SIZE_MASK) | ((tag as u64) << Self::SIZE_BITS))
    }
    #[inline]
    pub fn size(self) -> u64 {
        self.0 & Self::SIZE_MASK
    }
    #[inline]
    pub fn tag(self) -> u8 {
        (self.0 >> Self::SIZE_BITS) as u8
    }
    #[inline]
    pub fn set_tag(&mut self, tag: u8) {
        self.0 = (self.0 & Self::SIZE_MASK) | ((tag as u64) << Self::SIZE_BITS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_finds_inserts_removes() {
        let keys: Vec<Key> = (0..1000u64).map(|i| i * 512).collect();
        let mut idx = SlotIndex::new();
        for (s, &k) in keys.iter().enumerate() {
            idx.insert(k, s as Slot, |x| keys[x as usize]);
        }
        assert_eq!(idx.len(), 1000);
        assert_eq!(idx.find(512 * 7, |x| keys[x as usize]), Some(7));
        assert_eq!(idx.find(513, |x| keys[x as usize]), None);
        assert_eq!(idx.remove(512 * 7, |x| keys[x as usize]), Some(7));
        assert_eq!(idx.find(512 * 7, |x| keys[x as usize]), None);
        assert_eq!(idx.remove(512 * 7, |x| keys[x as usize]), None);
        assert_eq!(idx.len(), 999);
    }

    #[test]
    fn size_tag_packs() {
        let mut w = SizeTag::new(65536, 3);
        assert_eq!((w.size(), w.tag()), (65536, 3));
        w.set_tag(200);
        assert_eq!((w.size(), w.tag()), (65536, 200));
        assert_eq!(std::mem::size_of::<SizeTag>(), 8);
    }
}
