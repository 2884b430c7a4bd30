//! SplitLRU: the LRU replacement queue split into an Up queue above a Down queue.
//!
//! Follows Varki, Hubbe and Merchant, "Significance of replacement queue in sequential
//! prefetching" (`papers/003_0e822c5faac48388.txt`), Section 3.1 and Tables 3-4.
//!
//! A sequential prefetcher loads several blocks ahead of a stream, but the stream will ask for
//! them in order: the first of them is needed before the last. Split makes the queue say so.
//! The queue is cut into an *Up* queue (higher priority) and a *Down* queue; a block falling off
//! the LRU end of Up enters the MRU end of Down, and victims are always taken from the LRU end
//! of Down. Of each prefetched window of x blocks ahead of a request, the earlier half goes to
//! the MRU end of Up and the later half to the MRU end of Down (Section 3.1, Section 4: "x/2
//! stream blocks are loaded into the Up queue, while the latter x/2 ... into the Down queue"), so
//! the later half is evicted first, as Belady's MIN would (Section 3, Summarizing).
//!
//! Like StreamLRU, Split is prefetch aware: a hit on a stream brings the stream's cached blocks
//! ahead of the hit forward, to the MRU end of Up for the first half of the new window and of
//! Down for the rest (in Table 3 the hit on 1a moves 1b from Down to Up). The window length x is
//! what the prefetcher reported for the blocks (`Origin::Prefetch::len`); a block's half is its
//! position in that window (`index`), which counts the window's blocks that were already cached,
//! as in Table 3 where 1c, the second block of 1a's window, goes to Down. A demand-fetched block,
//! or a hit block itself, is the stream's current position and goes to the MRU end of Up.
//!
//! Sizes (Section 5, Split23). `up` and `down` give the Up:Down ratio of the cache (1:1 by
//! default; `split23` is 2:1). The Up queue holds at most its share; Down holds the rest. The
//! paper's Result 2 (between ceil(C/x) and ceil(C/x) + floor(C/2x) of the most recently accessed
//! streams are cached) holds for the 1:1 split.

use super::list::{List, Slot};
use super::resident::{ResidentEntry, ResidentSet};
use super::{Access, Evicted, Key, Origin, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

fn build_split(capacity: u64, params: &mut Params, up: u64, down: u64) -> Result<Box<dyn Policy>, ConfigError> {
    let up = params.u64_in("up", up, 0, 1 << 20)?;
    let down = params.u64_in("down", down, 0, 1 << 20)?;
    if up == 0 && down == 0 {
        return Err(ConfigError::new("splitlru.up", "the Up:Down ratio needs a non-zero part"));
    }
    Ok(Box::new(SplitLru::new(capacity, up, down)))
}

pub const INFO: PolicyInfo = PolicyInfo {
    name: "splitlru",
    aliases: &["split"],
    summary: "LRU split into Up and Down queues; later half of each prefetch in Down (Varki et al.)",
    build: |capacity, params: &mut Params| build_split(capacity, params, 1, 1),
};

pub const INFO_23: PolicyInfo = PolicyInfo {
    name: "split23",
    aliases: &[],
    summary: "SplitLRU with the Up queue twice the Down queue (Varki et al., Figure 4)",
    build: |capacity, params: &mut Params| build_split(capacity, params, 2, 1),
};

#[derive(Debug, Clone, Copy)]
struct Block {
    key: Key,
    size: u64,
    up: bool,
    /// Length of the prefetch window the block came with (0: demand).
    window: u32,
    /// Prefetch set it came with (NO_SET: demand).
    set: u32,
}


impl ResidentEntry for Block {
    #[inline]
    fn key(&self) -> Key {
        self.key
    }
    #[inline]
    fn size(&self) -> u64 {
        self.size
    }
}

const NO_SET: u32 = u32::MAX;

pub struct SplitLru {
    capacity: u64,
    up_max: u64,
    ratio: (u64, u64),
    resident: ResidentSet<Block>,
    up: List,
    down: List,
    up_size: u64,
    /// The prefetch set being inserted (its Down blocks stay at the MRU end of Down).
    current_set: u32,
    /// Hits that found their block in Up and in Down (Section 5 suggests comparing them to size
    /// the queues).
    pub up_hits: u64,
    pub down_hits: u64,
}

impl SplitLru {
    pub fn new(capacity: u64, up: u64, down: u64) -> Self {
        let up_max = ((capacity as u128 * up as u128 + (up + down) as u128 / 2) / (up + down) as u128) as u64;
        SplitLru {
            capacity,
            up_max,
            ratio: (up, down),
            resident: ResidentSet::new(),
            up: List::new(),
            down: List::new(),
            up_size: 0,
            current_set: NO_SET,
            up_hits: 0,
            down_hits: 0,
        }
    }

    /// The Up queue from its MRU end.
    pub fn up_keys(&self) -> Vec<Key> {
        self.resident.slab().iter(&self.up).map(|(_, b)| b.key).collect()
    }
    /// The Down queue from its MRU end.
    pub fn down_keys(&self) -> Vec<Key> {
        self.resident.slab().iter(&self.down).map(|(_, b)| b.key).collect()
    }
    /// The Up:Down ratio and the Up queue's size.
    pub fn geometry(&self) -> (u64, u64, u64) {
        (self.ratio.0, self.ratio.1, self.up_max)
    }

    fn unlink(&mut self, s: Slot) {
        let b = *self.resident.get(s);
        if b.up {
            self.resident.unlink(&mut self.up, s);
            self.up_size -= b.size;
        } else {
            self.resident.unlink(&mut self.down, s);
        }
    }

    fn push(&mut self, s: Slot, up: bool) {
        let b = self.resident.get_mut(s);
        b.up = up;
        let size = b.size;
        if up {
            self.resident.push_head(&mut self.up, s);
            self.up_size += size;
        } else {
            self.resident.push_head(&mut self.down, s);
        }
    }

    /// Blocks falling off the LRU end of Up enter the MRU end of Down (done when a block is
    /// inserted).
    ///
    /// The later half of the set being inserted belongs at the very MRU end of Down, above what
    /// its first half pushes out of Up (Section 3.1: the Up block spilled by 3a enters Down, "and
    /// then the second block from stream 3, 3b, is inserted"), whatever order the prefetcher
    /// hands the set's blocks over in; so a spilled block goes just below the current set's
    /// blocks at the head of Down.
    fn spill(&mut self) {
        while self.up_size > self.up_max {
            let s = self.up.tail().expect("up_size > 0");
            self.unlink(s);
            let mut below = None;
            let mut cur = self.down.head();
            while let Some(c) = cur {
                if self.current_set == NO_SET || self.resident.get(c).set != self.current_set {
                    break;
                }
                below = Some(c);
                cur = self.resident.slab().next(c);
            }
            self.resident.get_mut(s).up = false;
            match below {
                Some(at) => self.resident.insert_after(&mut self.down, at, s),
                None => self.resident.push_head(&mut self.down, s),
            }
        }
    }

    #[inline]
    fn first_half(index: u64, window: u64) -> bool {
        2 * index < window
    }
}

impl Policy for SplitLru {
    fn name(&self) -> &str {
        if self.ratio == (2, 1) {
            "split23"
        } else {
            "splitlru"
        }
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
        let hit = *self.resident.get(s);
        if hit.up {
            self.up_hits += 1;
        } else {
            self.down_hits += 1;
        }
        // The stream's blocks ahead of the hit, farthest first so the nearest ends up at MRU.
        let window = hit.window as u64;
        let mut ahead = 0u64;
        while ahead < window && a.key.checked_add(ahead + 1).is_some_and(|k| self.resident.contains(k)) {
            ahead += 1;
        }
        for d in (1..=ahead).rev() {
            let t = self.resident.find(a.key + d).expect("counted as cached above");
            self.unlink(t);
            self.push(t, Self::first_half(d - 1, window));
        }
        self.unlink(s);
        self.push(s, true);
        // Up is trimmed at the next insertion, not here: in the prefetch-cache model the hit
        // block leaves the cache right after this, and must not push another block down (in
        // Table 3 the hit on 1a leaves 2a in Up).
        true
    }

    fn insert(&mut self, a: &Access) {
        let (up, window, set) = match a.origin {
            Origin::Demand => (true, 0, NO_SET),
            Origin::Prefetch { index, len, set } => (Self::first_half(index as u64, len as u64), len, set),
        };
        self.current_set = set;
        let s = self.resident.insert_unlinked(Block { key: a.key, size: a.size, up, window, set });
        self.push(s, up);
        self.spill();
    }

    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        let s = self.down.tail().or(self.up.tail())?;
        self.unlink(s);
        let b = self.resident.forget_unlinked(s);
        Some(Evicted { key: b.key, size: b.size })
    }

    fn remove(&mut self, key: Key) -> bool {
        match self.resident.find(key) {
            Some(s) => {
                self.unlink(s);
                self.resident.forget_unlinked(s);
                true
            }
            None => false,
        }
    }

    fn metadata_bytes(&self) -> usize {
        self.resident.metadata_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{build, testutil};

    fn prefetch(key: Key, index: u32, len: u32) -> Access {
        Access { key, size: 1, origin: Origin::Prefetch { set: (key / 100) as u32, index, len }, ..Default::default() }
    }

    #[test]
    fn halves_go_up_and_down_and_up_spills() {
        let mut p = SplitLru::new(8, 1, 1);
        for i in 0..4 {
            p.insert(&prefetch(100 + i, i as u32, 4));
        }
        assert_eq!(p.up_keys(), vec![101, 100]);
        assert_eq!(p.down_keys(), vec![103, 102]);
        for i in 0..4 {
            p.insert(&prefetch(200 + i, i as u32, 4));
        }
        // Full (8). Victims come from Down's LRU end; a fifth first-half block spills 100.
        assert_eq!(p.evict(&Access::default()).unwrap().key, 102);
        p.insert(&prefetch(300, 0, 4));
        assert_eq!(p.up_keys(), vec![300, 201, 200, 101]);
        assert_eq!(p.down_keys(), vec![100, 203, 202, 103]);
        // A hit on 200: the new window ahead is 201-204, so 201 and 202 (its first half) go to
        // Up's MRU end and 203 to Down's; 200 itself goes on top and 101 spills into Down.
        assert!(p.find(&Access::unit(200, 0)));
        assert_eq!(p.up_keys(), vec![200, 201, 202, 300, 101]);
        assert_eq!(p.down_keys(), vec![203, 100, 103]);
        // The next insertion trims Up to its size.
        p.evict(&Access::default());
        p.insert(&prefetch(400, 1, 2));
        assert_eq!(p.up_keys(), vec![200, 201, 202, 300]);
        assert_eq!(p.down_keys(), vec![400, 101, 203, 100], "the set being inserted stays on top of Down");
    }

    #[test]
    fn ratio_sets_up_share() {
        assert_eq!(SplitLru::new(90, 2, 1).geometry(), (2, 1, 60));
        assert_eq!(build("split23", 9).unwrap().name(), "split23");
        assert!(build("splitlru:up=0,down=0", 9).is_err());
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| Box::new(SplitLru::new(c, 1, 1)));
        testutil::check_contract(|c| Box::new(SplitLru::new(c, 2, 1)));
    }
}
