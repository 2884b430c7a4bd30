//! The resident entries of a list-based policy: key index, slab and occupied size kept together.
//!
//! LRU, FIFO, CLOCK, LFU, SLRU, Belady, SplitLRU and StreamLRU all keep their cached entries the same way: a
//! [`SlotIndex`] from key to slab slot, a [`Slab`] of entries threaded on the policy's own lists,
//! and the sum of the entries' sizes. What differs between them is only which list an entry goes
//! on and which entry is the victim. [`ResidentSet`] owns the three pieces and keeps them
//! consistent: an entry is in the index exactly while its slot is live, and `occupied` is the sum
//! of the live entries' sizes. The lists stay in the policy (one, several, or none for Belady's
//! heap), so each policy still reads as its algorithm: the set is handed the list to link an
//! entry on or to take it from.
//!
//! Policies that keep ghosts (history-only entries) in the same slab, such as ARC, count their
//! sizes per list instead and do not use this set.

use super::list::{List, Slab, Slot};
use super::slots::SlotIndex;
use super::Key;

/// What a [`ResidentSet`] needs to know of an entry.
pub trait ResidentEntry: Copy {
    fn key(&self) -> Key;
    /// Size in the cache's unit, as inserted.
    fn size(&self) -> u64;
}

/// The entry of a policy that keeps nothing but the key and the size.
#[derive(Debug, Clone, Copy)]
pub struct KeySize {
    pub key: Key,
    pub size: u64,
}

impl ResidentEntry for KeySize {
    #[inline]
    fn key(&self) -> Key {
        self.key
    }
    #[inline]
    fn size(&self) -> u64 {
        self.size
    }
}

/// Index + slab + occupied size of a policy's cached entries.
pub struct ResidentSet<E> {
    /// Key to slot; keys live only in the slab entries (see `slots.rs`).
    index: SlotIndex,
    slab: Slab<E>,
    occupied: u64,
}

impl<E: ResidentEntry> Default for ResidentSet<E> {
    fn default() -> Self {
        ResidentSet { index: SlotIndex::new(), slab: Slab::default(), occupied: 0 }
    }
}

impl<E: ResidentEntry> ResidentSet<E> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Number of entries.
    #[inline]
    pub fn len(&self) -> usize {
        self.index.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// Sum of the entries' sizes.
    #[inline]
    pub fn occupied(&self) -> u64 {
        self.occupied
    }

    /// The slot holding `key`.
    #[inline]
    pub fn find(&self, key: Key) -> Option<Slot> {
        self.index.find(key, |s| self.slab.get(s).key())
    }

    #[inline]
    pub fn contains(&self, key: Key) -> bool {
        self.find(key).is_some()
    }

    /// Asks the CPU to start loading the entry of `key`, if cached (see [`Slab::prefetch`]).
    #[inline]
    pub fn prefetch(&self, key: Key) {
        self.slab.prefetch(self.index.find_hint(key));
    }

    /// [`ResidentSet::prefetch`], returning the slot it hinted ([`NIL`](super::list::NIL) for none), for a
    /// later [`Slab::prefetch_neighbours`] (see `cache::get_batch_keeping_slots`).
    #[inline]
    pub fn prefetch_entry(&self, key: Key) -> Slot {
        let s = self.index.find_hint(key);
        self.slab.prefetch(s);
        s
    }

    /// Asks the CPU to start loading the index cell of `key` (cached or not).
    #[inline]
    pub fn prefetch_index(&self, key: Key) {
        self.index.prefetch(key);
    }

    /// Asks the CPU to start loading the list neighbours of `key`'s entry, if cached.
    #[inline]
    pub fn prefetch_neighbours(&self, key: Key) {
        self.slab.prefetch_neighbours(self.index.find_hint(key));
    }

    /// The slab, for reading entries and walking lists.
    #[inline]
    pub fn slab(&self) -> &Slab<E> {
        &self.slab
    }

    #[inline]
    pub fn get(&self, s: Slot) -> &E {
        self.slab.get(s)
    }

    /// The entry at `s`, to update its policy data. Its key and size must not change.
    #[inline]
    pub fn get_mut(&mut self, s: Slot) -> &mut E {
        self.slab.get_mut(s)
    }

    /// Moves `s`, which is on `list`, to its head.
    #[inline]
    pub fn move_to_head(&mut self, list: &mut List, s: Slot) {
        self.slab.move_to_head(list, s);
    }

    /// Unlinks `s` from `list`, to link it on another list with [`ResidentSet::push_head`] (it
    /// stays cached meanwhile).
    #[inline]
    pub fn unlink(&mut self, list: &mut List, s: Slot) {
        self.slab.unlink(list, s);
    }

    /// Links `s`, which is on no list, at the head of `list`.
    #[inline]
    pub fn push_head(&mut self, list: &mut List, s: Slot) {
        self.slab.push_head(list, s);
    }

    /// Links `s`, which is on no list, just after `at` (towards the tail) in `list`.
    #[inline]
    pub fn insert_after(&mut self, list: &mut List, at: Slot, s: Slot) {
        self.slab.insert_after(list, at, s);
    }

    /// Caches `entry`, whose key must not be cached yet, at the head of `list`.
    #[inline]
    pub fn insert_head(&mut self, list: &mut List, entry: E) -> Slot {
        let s = self.slab.alloc(entry);
        self.slab.push_head(list, s);
        self.index_new(entry, s);
        s
    }

    /// Caches `entry`, whose key must not be cached yet, on no list (for policies that order
    /// their entries otherwise).
    #[inline]
    pub fn insert_unlinked(&mut self, entry: E) -> Slot {
        let s = self.slab.alloc(entry);
        self.index_new(entry, s);
        s
    }

    #[inline]
    fn index_new(&mut self, entry: E, s: Slot) {
        let slab = &self.slab;
        self.index.insert(entry.key(), s, |x| slab.get(x).key());
        self.occupied += entry.size();
    }

    /// Forgets the entry at `s`, which is on `list`; returns it.
    #[inline]
    pub fn forget(&mut self, list: &mut List, s: Slot) -> E {
        self.slab.unlink(list, s);
        self.forget_unlinked(s)
    }

    /// Forgets the entry at `s`, which is on no list; returns it.
    #[inline]
    pub fn forget_unlinked(&mut self, s: Slot) -> E {
        let e = *self.slab.get(s);
        let slab = &self.slab;
        self.index.remove(e.key(), |x| slab.get(x).key());
        self.slab.release(s);
        self.occupied -= e.size();
        e
    }

    /// Forgets the entry at the tail (oldest end) of `list`; returns it.
    #[inline]
    pub fn evict_tail(&mut self, list: &mut List) -> Option<E> {
        let s = self.slab.pop_tail(list)?;
        Some(self.forget_unlinked(s))
    }

    /// Forgets `key` if cached, unlinking it from the list `list_of` names for its entry;
    /// returns the entry.
    #[inline]
    pub fn remove<'l>(&mut self, key: Key, list_of: impl FnOnce(&E) -> &'l mut List) -> Option<E> {
        let slab = &self.slab;
        let s = self.index.remove(key, |x| slab.get(x).key())?;
        let e = *self.slab.get(s);
        self.slab.unlink(list_of(&e), s);
        self.slab.release(s);
        self.occupied -= e.size();
        Some(e)
    }

    /// Bytes allocated by the index and the slab.
    pub fn metadata_bytes(&self) -> usize {
        self.index.allocation_size() + self.slab.allocated_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_evict_remove_keep_index_and_size() {
        let mut set = ResidentSet::<KeySize>::new();
        let mut list = List::new();
        for k in 1..=4u64 {
            set.insert_head(&mut list, KeySize { key: k * 1000, size: k });
        }
        assert_eq!((set.len(), set.occupied()), (4, 10));
        assert_eq!(set.evict_tail(&mut list).map(|e| e.key), Some(1000));
        assert!(!set.contains(1000));
        assert_eq!(set.remove(3000, |_| &mut list).map(|e| e.size), Some(3));
        assert!(set.remove(3000, |_| &mut list).is_none());
        assert_eq!(set.slab().iter(&list).map(|(_, e)| e.key).collect::<Vec<_>>(), vec![4000, 2000]);
        assert_eq!((set.len(), set.occupied(), list.len()), (2, 6, 2));
        let s = set.find(4000).unwrap();
        assert_eq!(set.forget(&mut list, s).key, 4000);
        assert_eq!((set.len(), set.occupied(), list.len()), (1, 2, 1));
        let u = set.insert_unlinked(KeySize { key: 7, size: 5 });
        assert_eq!(set.find(7), Some(u));
        assert_eq!(set.forget_unlinked(u).size, 5);
        assert_eq!((set.len(), set.occupied()), (1, 2));
    }
}
