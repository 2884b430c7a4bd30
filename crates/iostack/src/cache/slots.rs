//! Compact building blocks for list-based policies: an index from key to slab slot that stores
//! only the slot (and a hash tag), and a size word with a few tag bits.
//!
//! A `KeyMap<Slot>` stores every key twice (once in the map, once in the slab entry, which needs
//! it to find the map entry again on eviction) and pads each bucket to 16 bytes. [`SlotIndex`]
//! stores a 4-byte slot and a 4-byte hash per cell and compares keys through the slab only when
//! the hash matches: a hit reads the slab entry the caller touches anyway to relink it, a miss
//! almost never reads the slab, and a cached object costs about 24 bytes of slab node plus 11 to
//! 21 bytes of index (8-byte cells, load 3/8 to 3/4) instead of 40 to 60.

use super::huge_pages::HugePageArray;
use super::list::Slot;
use super::Key;

/// Fibonacci hashing: the high 32 bits of `key * 2^64/phi`. Every bit of the key reaches the
/// high bits of the product, so offsets that are multiples of a page size (whose low bits are
/// all zero) spread as well as any others. A table of 2^b cells takes the top b bits as the
/// home cell and keeps all 32 bits beside the slot as a tag.
#[inline(always)]
pub(crate) fn hash32(key: Key) -> u32 {
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 32) as u32
}

/// One cell of an [`OpenTable`].
pub(crate) trait Cell: Copy {
    /// A free cell.
    fn empty() -> Self;
    fn is_empty(&self) -> bool;
    /// [`hash32`] of the cell's key: where it lives, so the table can move and rehash cells
    /// without asking the caller for their keys.
    fn hash(&self) -> u32;
}

/// Open-addressing table with linear probing, the core of [`SlotIndex`] and of the stack-distance
/// key table (`metrics::stack_distance`).
///
/// Why not a general hash map: a lookup of a cold key costs one cache miss on its cell, and a
/// simulator can hide it by prefetching the cell a few references ahead, which needs the cell's
/// address before the lookup ([`OpenTable::prefetch`]); hashbrown exposes no such thing.
/// Linear probing keeps a key's probe sequence in one or two cache lines, and removal shifts
/// later cells of the run back (no tombstones, so lookups never slow down as keys churn).
/// The load factor stays at most 3/4. Large tables live on huge pages ([`HugePageArray`]):
/// a lookup of a cold key then waits for its cell only, not for a page-table walk too.
#[derive(Clone)]
pub(crate) struct OpenTable<C> {
    cells: HugePageArray<C>,
    /// 32 - log2(cells.len()): the home cell is the top bits of the 32-bit hash.
    shift: u32,
    len: usize,
}

const MIN_BITS: u32 = 6;

impl<C: Cell> Default for OpenTable<C> {
    fn default() -> Self {
        Self::with_bits(MIN_BITS)
    }
}

impl<C: Cell> OpenTable<C> {
    pub(crate) fn with_bits(bits: u32) -> Self {
        debug_assert!((MIN_BITS..=32).contains(&bits));
        OpenTable { cells: HugePageArray::filled(1 << bits, C::empty()), shift: 32 - bits, len: 0 }
    }

    #[inline(always)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn mask(&self) -> usize {
        self.cells.len() - 1
    }

    #[inline(always)]
    fn home(&self, h: u32) -> usize {
        // `shift` is 32 only for a 1-cell table, which `with_bits` never makes.
        (h >> self.shift) as usize
    }

    /// Hints the CPU to load the home cell of hash `h` (no effect on contents).
    #[inline(always)]
    pub(crate) fn prefetch(&self, h: u32) {
        #[cfg(target_arch = "x86_64")]
        {
            let p = self.cells.as_ptr().wrapping_add(self.home(h)) as *const i8;
            // SAFETY: prefetching is a hint; it never faults, and `home` is within the table.
            unsafe { core::arch::x86_64::_mm_prefetch(p, core::arch::x86_64::_MM_HINT_T0) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = h;
    }

    /// Hints the CPU to load the last byte of the home cell of hash `h` (for cells that may
    /// span two cache lines).
    #[inline(always)]
    pub(crate) fn prefetch_end(&self, h: u32) {
        #[cfg(target_arch = "x86_64")]
        {
            let p = (self.cells.as_ptr().wrapping_add(self.home(h)) as *const i8).wrapping_add(std::mem::size_of::<C>() - 1);
            // SAFETY: prefetching is a hint; it never faults, and `home` is within the table.
            unsafe { core::arch::x86_64::_mm_prefetch(p, core::arch::x86_64::_MM_HINT_T0) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = h;
    }

    /// The position of the cell of hash `h` that `is_key` accepts. `is_key` is asked only about
    /// cells whose stored hash is `h`.
    #[inline(always)]
    pub(crate) fn find(&self, h: u32, is_key: impl Fn(&C) -> bool) -> Option<usize> {
        let mask = self.mask();
        let mut i = self.home(h);
        loop {
            let c = &self.cells[i];
            if c.is_empty() {
                return None;
            }
            if c.hash() == h && is_key(c) {
                return Some(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// The first free cell on the probe path of hash `h`, growing first if the table is full
    /// enough; the caller fills it with [`OpenTable::fill`] (a key it knows is absent).
    #[inline(always)]
    pub(crate) fn vacant(&mut self, h: u32) -> usize {
        if (self.len + 1) * 4 > self.cells.len() * 3 {
            self.grow();
        }
        let mask = self.mask();
        let mut i = self.home(h);
        while !self.cells[i].is_empty() {
            i = (i + 1) & mask;
        }
        i
    }

    /// Fills the free cell `i` returned by [`OpenTable::vacant`].
    #[inline(always)]
    pub(crate) fn fill(&mut self, i: usize, c: C) {
        debug_assert!(self.cells[i].is_empty() && !c.is_empty());
        self.cells[i] = c;
        self.len += 1;
    }

    /// Empties cell `i`, moving later cells of its run back so that every key stays reachable
    /// from its home cell without passing a free cell.
    #[inline]
    pub(crate) fn remove_at(&mut self, mut i: usize) -> C {
        let mask = self.mask();
        let removed = self.cells[i];
        let mut j = i;
        loop {
            j = (j + 1) & mask;
            let c = self.cells[j];
            if c.is_empty() {
                break;
            }
            // `c` may move back to `i` unless its home lies cyclically in (i, j].
            let from_home = j.wrapping_sub(self.home(c.hash())) & mask;
            if from_home >= (j.wrapping_sub(i) & mask) {
                self.cells[i] = c;
                i = j;
            }
        }
        self.cells[i] = C::empty();
        self.len -= 1;
        removed
    }

    #[inline(always)]
    pub(crate) fn cell(&self, i: usize) -> &C {
        &self.cells[i]
    }

    #[inline(always)]
    pub(crate) fn cell_mut(&mut self, i: usize) -> &mut C {
        &mut self.cells[i]
    }

    /// The occupied cells, in table order.
    pub(crate) fn cells(&self) -> impl Iterator<Item = &C> {
        self.cells.iter().filter(|c| !c.is_empty())
    }

    /// The occupied cells, in table order.
    pub(crate) fn cells_mut(&mut self) -> impl Iterator<Item = &mut C> {
        self.cells.iter_mut().filter(|c| !c.is_empty())
    }

    /// Bytes allocated for the cells.
    pub(crate) fn allocation_size(&self) -> usize {
        self.cells.bytes()
    }

    /// Doubles the table in place. The cell array is extended (a large one by remapping its
    /// pages, not copying them: see [`HugePageArray`]; so only the new half is touched for the
    /// first time, where a fresh array would fault and clear the old size again at every
    /// doubling), then every cell is placed again, in table order, at the first cell from its
    /// new home that is free, its own, or holds a cell not yet placed (the two swap, and the
    /// other is placed next). Placed cells never move again, so every cell between a key's home
    /// and its cell holds a placed key, which is all a lookup needs.
    #[cold]
    fn grow(&mut self) {
        assert!(self.shift > 0, "hash table full (2^32 cells)");
        let old = self.cells.len();
        let n = old * 2;
        self.cells.grow(n, C::empty());
        self.shift -= 1;
        let mask = n - 1;
        // One bit per cell of the old half: it holds a cell not yet placed.
        let mut pending = vec![0u64; old.div_ceil(64)];
        for (i, c) in self.cells[..old].iter().enumerate() {
            if !c.is_empty() {
                pending[i / 64] |= 1 << (i % 64);
            }
        }
        let is_pending = |pending: &[u64], i: usize| i < old && (pending[i / 64] >> (i % 64)) & 1 != 0;
        for i in 0..old {
            while is_pending(&pending, i) {
                let mut j = self.home(self.cells[i].hash());
                while j != i && !self.cells[j].is_empty() && !is_pending(&pending, j) {
                    j = (j + 1) & mask;
                }
                if j == i {
                    pending[i / 64] &= !(1 << (i % 64));
                } else if self.cells[j].is_empty() {
                    self.cells[j] = self.cells[i];
                    self.cells[i] = C::empty();
                    pending[i / 64] &= !(1 << (i % 64));
                } else {
                    // Cell i's key takes j; j's, not yet placed, waits in i.
                    self.cells.swap(i, j);
                    pending[j / 64] &= !(1 << (j % 64));
                }
            }
        }
    }
}

/// A [`SlotIndex`] cell: the slot and the full 32-bit hash of its key, so that a probe reads the
/// slab (for the key) only when the hash matches, which for a present key is almost always the
/// right cell and for an absent key almost never happens.
#[derive(Clone, Copy)]
pub(crate) struct SlotCell {
    hash: u32,
    slot: Slot,
}

impl Cell for SlotCell {
    #[inline(always)]
    fn empty() -> Self {
        SlotCell { hash: 0, slot: Slot::MAX }
    }
    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.slot == Slot::MAX
    }
    #[inline(always)]
    fn hash(&self) -> u32 {
        self.hash
    }
}

/// Key-to-slot index; the key of a slot is read back through a `key_of` closure (the slab).
/// Cells are 8 bytes (slot and hash), eight to a cache line.
#[derive(Default)]
pub struct SlotIndex {
    table: OpenTable<SlotCell>,
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
        self.table.len() == 0
    }

    /// The slot holding `key`.
    #[inline]
    pub fn find(&self, key: Key, key_of: impl Fn(Slot) -> Key) -> Option<Slot> {
        let h = hash32(key);
        self.table.find(h, |c| key_of(c.slot) == key).map(|i| self.table.cell(i).slot)
    }

    /// The slot `key` probably has, for prefetch hints (`Slot::MAX` for none): of the first two
    /// cells on its probe path, the first whose 32-bit hash matches, without reading the slab to
    /// compare keys. Comparing would be a demand load of the very entry the hint is meant to
    /// start loading, and would stall there; a false match (another key with the same 32-bit
    /// hash) only costs a useless prefetch. The two cells are chosen between by selects, not
    /// branches: where a key sits on its path is a coin toss that a branch would mispredict,
    /// and a key further along (rare) is simply not hinted.
    #[inline]
    pub fn find_hint(&self, key: Key) -> Slot {
        let h = hash32(key);
        let t = &self.table;
        let i = t.home(h);
        let (first, second) = (*t.cell(i), *t.cell((i + 1) & t.mask()));
        let later = if second.hash == h { second.slot } else { Slot::MAX };
        if first.hash == h {
            first.slot
        } else {
            later
        }
    }

    /// Hints the CPU to load the cell where a lookup of `key` starts (no effect on contents).
    #[inline]
    pub fn prefetch(&self, key: Key) {
        self.table.prefetch(hash32(key));
    }

    /// Records that `slot` holds `key`, which must not be indexed yet.
    #[inline]
    pub fn insert(&mut self, key: Key, slot: Slot, key_of: impl Fn(Slot) -> Key) {
        debug_assert!(slot != Slot::MAX);
        debug_assert!(self.find(key, &key_of).is_none(), "key {key} indexed twice");
        let h = hash32(key);
        let i = self.table.vacant(h);
        self.table.fill(i, SlotCell { hash: h, slot });
    }

    /// The cell and the slot holding `key`. The cell stays valid until the next insert or
    /// removal, for [`SlotIndex::remove_cell`] (which then needs no second probe).
    #[inline]
    pub fn find_cell(&self, key: Key, key_of: impl Fn(Slot) -> Key) -> Option<(usize, Slot)> {
        let h = hash32(key);
        self.table.find(h, |c| key_of(c.slot) == key).map(|i| (i, self.table.cell(i).slot))
    }

    /// Forgets the key of `cell`, as found by [`SlotIndex::find_cell`] since the last insert
    /// or removal; returns its slot.
    #[inline]
    pub fn remove_cell(&mut self, cell: usize) -> Slot {
        self.table.remove_at(cell).slot
    }

    /// Forgets `key`; returns its slot. Call before the slot is released or reused.
    #[inline]
    pub fn remove(&mut self, key: Key, key_of: impl Fn(Slot) -> Key) -> Option<Slot> {
        let h = hash32(key);
        let i = self.table.find(h, |c| key_of(c.slot) == key)?;
        Some(self.table.remove_at(i).slot)
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

    /// A cell whose hash is given, to place keys anywhere in the table.
    #[derive(Clone, Copy, PartialEq, Debug)]
    struct Raw {
        hash: u32,
        id: u32,
    }
    impl Cell for Raw {
        fn empty() -> Self {
            Raw { hash: 0, id: u32::MAX }
        }
        fn is_empty(&self) -> bool {
            self.id == u32::MAX
        }
        fn hash(&self) -> u32 {
            self.hash
        }
    }

    /// Growth in place keeps every key reachable: runs that wrap around the end of the table,
    /// runs crowded on a few homes, and keys spread evenly, through nine doublings; after each,
    /// every cell between a key's home and its cell is occupied and every key is found.
    #[test]
    fn growth_in_place_keeps_every_key_reachable() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let mut table: OpenTable<Raw> = OpenTable::with_bits(MIN_BITS);
        let mut cells = Vec::new();
        let mut size = table.cells.len();
        for id in 0..20_000u32 {
            let hash = match id % 4 {
                0 => u32::MAX - rng.gen_range(0..1u32 << 20), // the last home cells: wrapping runs
                1 => rng.gen_range(0..8u32) << 24,            // crowded homes
                _ => rng.gen(),
            };
            let i = table.vacant(hash);
            table.fill(i, Raw { hash, id });
            cells.push(Raw { hash, id });
            if table.cells.len() != size {
                size = table.cells.len();
                let mask = size - 1;
                for (pos, c) in table.cells.iter().enumerate().filter(|(_, c)| !c.is_empty()) {
                    let mut j = table.home(c.hash);
                    while j != pos {
                        assert!(!table.cells[j].is_empty(), "a free cell between the home and the cell of {c:?}");
                        j = (j + 1) & mask;
                    }
                }
                for c in &cells {
                    assert_eq!(table.find(c.hash, |x| x.id == c.id).map(|i| table.cells[i]), Some(*c));
                }
            }
        }
        assert_eq!(table.len(), 20_000);
        assert!(table.cells.len() >= 1 << 15);
    }

    /// Inserts and removals (which shift cells back) against a HashSet, through several growths,
    /// with keys crowded into few home cells (multiples of 2^40 hash close together).
    #[test]
    fn index_agrees_with_a_set_under_churn() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let mut keys: Vec<Key> = Vec::new();
        let mut free: Vec<Slot> = Vec::new();
        let mut idx = SlotIndex::new();
        let mut set = std::collections::HashMap::new();
        for step in 0..200_000u64 {
            let key: Key = if step % 3 == 0 { rng.gen_range(0..64u64) << 40 } else { rng.gen_range(0..5000u64) };
            let found = idx.find(key, |x| keys[x as usize]);
            assert_eq!(found, set.get(&key).copied(), "step {step}");
            match found {
                Some(s) => {
                    assert_eq!(idx.remove(key, |x| keys[x as usize]), Some(s));
                    set.remove(&key);
                    free.push(s);
                }
                None => {
                    let s = match free.pop() {
                        Some(s) => {
                            keys[s as usize] = key;
                            s
                        }
                        None => {
                            keys.push(key);
                            (keys.len() - 1) as Slot
                        }
                    };
                    idx.insert(key, s, |x| keys[x as usize]);
                    set.insert(key, s);
                }
            }
            assert_eq!(idx.len(), set.len());
        }
        for (&k, &s) in &set {
            assert_eq!(idx.find(k, |x| keys[x as usize]), Some(s));
        }
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
