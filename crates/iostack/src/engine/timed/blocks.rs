//! What the engine knows of a block beyond the policy (in flight, prefetched, marked, dirty,
//! who waits for it), kept only for the blocks that have any of it.
//!
//! Most questions the engine asks get "nothing": a hit on a block read long ago, the eviction
//! of a clean block nobody waits for. A small counting filter in front of the map answers
//! those without probing the map: it counts, per slot, the keys in the map hashing to that
//! slot, so a zero count proves absence. The filter is 32 KiB of one-byte counters (it stays in
//! the CPU's first-level cache, where the map would not); a counter that reaches 255 stays
//! there for good (the slot then always means "maybe"), so the filter is never wrong, only less
//! useful when the map holds far more keys than it has slots.

use crate::cache::{Key, KeyMap};

pub(super) const NIL: u32 = u32::MAX;

// Block state flags.
pub(super) const INFLIGHT: u8 = 1; // a read of the block has been issued and has not completed
pub(super) const EVICTED: u8 = 2; // evicted while in flight: not cached, but its read still runs
pub(super) const PREFETCHED: u8 = 4; // prefetched and not yet referenced
pub(super) const MARKER: u8 = 8; // readahead marker
pub(super) const DIRTY: u8 = 16;

#[derive(Debug, Clone, Copy)]
pub(super) struct BlockState {
    pub flags: u8,
    pub read_waiters: u32,
    pub write_waiters: u32,
    pub dirty_since: u64,
    /// The process whose write made the block dirty (the flusher writes it back for it).
    pub dirty_pid: u32,
}

impl BlockState {
    pub const EMPTY: BlockState = BlockState { flags: 0, read_waiters: NIL, write_waiters: NIL, dirty_since: 0, dirty_pid: 0 };
    /// Nothing to know: the entry can go.
    #[inline]
    pub fn idle(&self) -> bool {
        self.flags == 0 && self.read_waiters == NIL && self.write_waiters == NIL
    }
}

const FILTER_BITS: u32 = 15;
const STUCK: u8 = u8::MAX;

pub(super) struct BlockStates {
    map: KeyMap<BlockState>,
    filter: Box<[u8]>,
}

impl Default for BlockStates {
    fn default() -> Self {
        BlockStates { map: KeyMap::default(), filter: vec![0u8; 1 << FILTER_BITS].into_boxed_slice() }
    }
}

impl BlockStates {
    #[inline]
    fn slot(key: Key) -> usize {
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - FILTER_BITS)) as usize
    }

    #[inline]
    fn maybe(&self, key: Key) -> bool {
        self.filter[Self::slot(key)] != 0
    }

    #[inline]
    fn counted_out(&mut self, key: Key) {
        let c = &mut self.filter[Self::slot(key)];
        if *c != STUCK {
            *c -= 1;
        }
    }

    #[inline]
    pub fn get(&self, key: Key) -> Option<&BlockState> {
        if !self.maybe(key) {
            return None;
        }
        self.map.get(&key)
    }

    #[inline]
    pub fn get_mut(&mut self, key: Key) -> Option<&mut BlockState> {
        if !self.maybe(key) {
            return None;
        }
        self.map.get_mut(&key)
    }

    /// The state of `key`, created empty if it has none.
    #[inline]
    pub fn or_empty(&mut self, key: Key) -> &mut BlockState {
        match self.map.entry(key) {
            hashbrown::hash_map::Entry::Occupied(o) => o.into_mut(),
            hashbrown::hash_map::Entry::Vacant(v) => {
                let c = &mut self.filter[Self::slot(key)];
                *c = c.saturating_add(1);
                v.insert(BlockState::EMPTY)
            }
        }
    }

    /// Applies `f` to the state of `key`, if it has one, and drops the state if `f` left it
    /// idle; `None` when `key` has no state.
    #[inline]
    pub fn update<R>(&mut self, key: Key, f: impl FnOnce(&mut BlockState) -> R) -> Option<R> {
        self.update_inlined(key, f)
    }

    /// [`Self::update`], inlined into the caller.
    #[inline(always)]
    fn update_inlined<R>(&mut self, key: Key, f: impl FnOnce(&mut BlockState) -> R) -> Option<R> {
        if !self.maybe(key) {
            return None;
        }
        let hashbrown::hash_map::Entry::Occupied(mut o) = self.map.entry(key) else { return None };
        let r = f(o.get_mut());
        if o.get().idle() {
            o.remove();
            self.counted_out(key);
        }
        Some(r)
    }

    /// The I/O on `key` (a write if `write`, else a read) completed: takes its waiters (NIL
    /// for none) and ends a read's flight, telling whether the block had been evicted during
    /// it; `None` when `key` has no state. Inlined into the device completion, which runs it
    /// for every block of every request.
    #[inline(always)]
    pub fn complete(&mut self, key: Key, write: bool) -> Option<(u32, bool)> {
        self.update_inlined(key, |st| {
            if write {
                (std::mem::replace(&mut st.write_waiters, NIL), false)
            } else {
                let was_evicted = st.flags & EVICTED != 0;
                st.flags &= !(INFLIGHT | EVICTED);
                (std::mem::replace(&mut st.read_waiters, NIL), was_evicted)
            }
        })
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Key, &BlockState)> {
        self.map.iter()
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map.len()
    }

    #[cfg(test)]
    fn insert_for_test(&mut self, key: Key) {
        self.or_empty(key).flags |= DIRTY;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_state_stays_small() {
        // The map's entries are the engine's main memory traffic besides the policy's.
        assert!(std::mem::size_of::<BlockState>() <= 24);
    }

    #[test]
    fn filter_never_hides_a_state() {
        let mut s = BlockStates::default();
        // Many keys, so that slots collide and some counters stick at their maximum.
        let keys: Vec<Key> = (0..200_000u64).map(|i| i.wrapping_mul(0x2545_F491_4F6C_DD1D)).collect();
        for &k in &keys {
            s.insert_for_test(k);
        }
        assert_eq!(s.len(), keys.len());
        for &k in &keys {
            assert!(s.get(k).is_some());
        }
        for &k in keys.iter().step_by(2) {
            s.update(k, |st| st.flags = 0);
        }
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(s.get(k).is_some(), i % 2 == 1, "key {i}");
        }
        for &k in keys.iter().skip(1).step_by(2) {
            s.get_mut(k).unwrap().flags = 0;
            assert_eq!(s.update(k, |_| ()), Some(()));
        }
        assert_eq!(s.len(), 0);
        assert!(keys.iter().all(|&k| s.get(k).is_none()));
        // With the map empty again, unstuck counters are back to zero.
        assert!(s.filter.iter().all(|&c| c == 0 || c == STUCK));
    }
}
