//! S3-FIFO: a small FIFO for new objects, a main FIFO with a 2-bit reuse counter, a ghost FIFO.
//!
//! Yang, Zhang, Qiu, Yue and Rashmi, "FIFO queues are all you need for cache eviction",
//! SOSP 2023, §4 (Algorithm 1). The cache is split into a small queue S (10 % of the capacity by
//! default) and a main queue M (the rest); a ghost queue G remembers the keys of objects recently
//! evicted from S (up to 90 % of the capacity, counted in object sizes, like the cache itself).
//!
//! - Every object carries a small access counter. A hit only increments it: no queue is reordered
//!   on a hit, which is what makes the design "lazy promotion".
//! - A miss whose key is in G (it was evicted from S not long ago) goes straight to M; other misses
//!   go to S ("quick demotion": one-hit wonders leave through S without ever reaching M).
//! - Eviction from S looks at S's oldest object: if it was referenced at least `threshold` times
//!   (2 by default) while in S it moves to M's head, counter cleared, and the next oldest is tried;
//!   otherwise it leaves the cache and its key enters G. Eviction from M is CLOCK with a 2-bit
//!   counter: an oldest object with a non-zero counter is reinserted at the head with the counter
//!   capped at 3 and decremented; the first with counter 0 is evicted.
//! - Which queue to evict from: M when M holds more than its share or S is empty, else S.
//!
//! This module reproduces libCacheSim's `S3FIFO.c` (the version in the 0.3.5 Python package),
//! including the details of that version that differ from the paper's pseudocode:
//! - before the first eviction ever, a miss that finds S already full is inserted into M instead
//!   of S (so the cache fills completely before S starts filtering);
//! - an object whose size is at least S's capacity is not admitted (it would flush S);
//! - queue capacities are truncated to whole units: |S| = ⌊C·small⌋, |M| = C − |S|,
//!   |G| = ⌊C·ghost⌋.
//!
//! One deviation, for caches so small that libCacheSim refuses them (fewer than 20 unit objects,
//! where |S| ≤ 1 and nothing would ever be admitted): |S| is at least one unit and a unit-size
//! object is always admitted. For every larger cache the behaviour is identical.
//!
//! Entries leave the cache only through [`Policy::evict`] (promotions from S to M and ghost
//! trimming drop no resident entry), so S3-FIFO has no side evictions to hand over through
//! [`Policy::drain_side_evictions`].
//!
//! All three queues live in one slab and one key map (a key is in at most one of them), so a
//! reference costs one hash lookup and O(1) list operations; the ghost queue is bounded by its
//! capacity, so memory is bounded by about (1 + ghost) · C entries in unit mode.

use super::list::{List, Slab, Slot};
use super::{Access, Evicted, Key, KeyMap, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "s3fifo",
    aliases: &["s3-fifo"],
    summary: "S3-FIFO: small FIFO + main 2-bit CLOCK FIFO + ghost FIFO (SOSP'23; libCacheSim's variant)",
    build: |capacity, params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> {
        let small = params.f64_in("small", 0.1, 0.0, 1.0)?;
        let ghost = params.f64_in("ghost", 0.9, 0.0, 10.0)?;
        let threshold = params.u64_in("threshold", 2, 1, 255)?;
        if !(small > 0.0 && small < 1.0) {
            return Err(ConfigError::new("s3fifo.small", format!("the small queue share must be in (0, 1), got {small}")));
        }
        if !(0.0..=10.0).contains(&ghost) {
            return Err(ConfigError::new("s3fifo.ghost", format!("the ghost queue share must be in [0, 10], got {ghost}")));
        }
        if threshold == 0 || threshold > 255 {
            return Err(ConfigError::new("s3fifo.threshold", format!("the move-to-main threshold must be in 1..=255, got {threshold}")));
        }
        Ok(Box::new(S3Fifo::new(capacity, small, ghost, threshold as u8)))
    },
};

/// Which queue an entry is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Queue {
    Small,
    Main,
    Ghost,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Key,
    size: u64,
    /// References since insertion (or since the last CLOCK pass in M); saturates.
    freq: u8,
    queue: Queue,
}

pub struct S3Fifo {
    capacity: u64,
    small_cap: u64,
    main_cap: u64,
    ghost_cap: u64,
    threshold: u8,
    map: KeyMap<Slot>,
    slab: Slab<Entry>,
    small: List,
    main: List,
    ghost: List,
    small_bytes: u64,
    main_bytes: u64,
    ghost_bytes: u64,
    /// The last `find` missed on a key that was in the ghost queue.
    hit_on_ghost: bool,
    /// Whether anything was ever evicted (before that, a full S overflows into M).
    has_evicted: bool,
}

impl S3Fifo {
    /// `small` and `ghost` are fractions of `capacity`; `threshold` is the number of references
    /// in S that earn a move to M.
    pub fn new(capacity: u64, small: f64, ghost: f64, threshold: u8) -> Self {
        let small_cap = ((capacity as f64 * small) as u64).max(1).min(capacity);
        let ghost_cap = (capacity as f64 * ghost) as u64;
        S3Fifo {
            capacity,
            small_cap,
            main_cap: capacity - small_cap,
            ghost_cap,
            threshold,
            map: KeyMap::default(),
            slab: Slab::default(),
            small: List::new(),
            main: List::new(),
            ghost: List::new(),
            small_bytes: 0,
            main_bytes: 0,
            ghost_bytes: 0,
            hit_on_ghost: false,
            has_evicted: false,
        }
    }

    /// Whether a miss on an object of `size` makes room for it (libCacheSim's `can_insert`).
    fn can_insert(&self, size: u64) -> bool {
        size <= self.capacity && size <= self.small_cap
    }

    /// Whether an object of `size` that did not come from the ghost queue may enter S: one as
    /// large as S would flush it (a unit object is always admitted, see the module notes).
    fn fits_small(&self, size: u64) -> bool {
        size < self.small_cap || size == 1
    }

    /// Keys of the small, main and ghost queues, newest first (for tests and debugging).
    pub fn queues(&self) -> (Vec<Key>, Vec<Key>, Vec<Key>) {
        let keys = |l: &List| self.slab.iter(l).map(|(_, e)| e.key).collect();
        (keys(&self.small), keys(&self.main), keys(&self.ghost))
    }

    fn list_mut(&mut self, q: Queue) -> (&mut Slab<Entry>, &mut List, &mut u64) {
        match q {
            Queue::Small => (&mut self.slab, &mut self.small, &mut self.small_bytes),
            Queue::Main => (&mut self.slab, &mut self.main, &mut self.main_bytes),
            Queue::Ghost => (&mut self.slab, &mut self.ghost, &mut self.ghost_bytes),
        }
    }

    /// Remembers an object evicted from S in the ghost queue (FIFO, bounded by `ghost_cap`).
    fn remember(&mut self, key: Key, size: u64) {
        if size > self.ghost_cap {
            return;
        }
        while self.ghost_bytes + size > self.ghost_cap {
            let s = self.slab.pop_tail(&mut self.ghost).expect("ghost bytes without ghost entries");
            let e = *self.slab.get(s);
            self.ghost_bytes -= e.size;
            self.map.remove(&e.key);
            self.slab.release(s);
        }
        let s = self.slab.alloc(Entry { key, size, freq: 0, queue: Queue::Ghost });
        self.slab.push_head(&mut self.ghost, s);
        self.ghost_bytes += size;
        self.map.insert(key, s);
    }

    /// Evicts from S: promotes well-used objects to M until one leaves the cache.
    /// Returns `None` if S emptied without an eviction.
    fn evict_small(&mut self) -> Option<Evicted> {
        while let Some(s) = self.slab.pop_tail(&mut self.small) {
            let e = *self.slab.get(s);
            self.small_bytes -= e.size;
            if e.freq >= self.threshold {
                let entry = self.slab.get_mut(s);
                entry.freq = 0;
                entry.queue = Queue::Main;
                self.slab.push_head(&mut self.main, s);
                self.main_bytes += e.size;
            } else {
                self.map.remove(&e.key);
                self.slab.release(s);
                self.remember(e.key, e.size);
                return Some(Evicted { key: e.key, size: e.size });
            }
        }
        None
    }

    /// Evicts from M: CLOCK over a FIFO with a 2-bit counter.
    fn evict_main(&mut self) -> Option<Evicted> {
        while let Some(s) = self.slab.pop_tail(&mut self.main) {
            let e = self.slab.get_mut(s);
            if e.freq >= 1 {
                e.freq = e.freq.min(3) - 1;
                self.slab.push_head(&mut self.main, s);
            } else {
                let e = *e;
                self.main_bytes -= e.size;
                self.map.remove(&e.key);
                self.slab.release(s);
                return Some(Evicted { key: e.key, size: e.size });
            }
        }
        None
    }
}

impl Policy for S3Fifo {
    fn name(&self) -> &str {
        "s3fifo"
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn occupied(&self) -> u64 {
        self.small_bytes + self.main_bytes
    }
    fn len(&self) -> usize {
        self.small.len() + self.main.len()
    }
    fn contains(&self, key: Key) -> bool {
        self.map.get(&key).is_some_and(|&s| self.slab.get(s).queue != Queue::Ghost)
    }

    #[inline]
    fn find(&mut self, a: &Access) -> bool {
        self.hit_on_ghost = false;
        let Some(&s) = self.map.get(&a.key) else { return false };
        let e = self.slab.get_mut(s);
        if e.queue == Queue::Ghost {
            let size = e.size;
            self.slab.unlink(&mut self.ghost, s);
            self.slab.release(s);
            self.ghost_bytes -= size;
            self.map.remove(&a.key);
            self.hit_on_ghost = true;
            return false;
        }
        e.freq = e.freq.saturating_add(1);
        true
    }

    fn get(&mut self, a: &Access) -> bool {
        if self.find(a) {
            return true;
        }
        if !self.can_insert(a.size) {
            return false;
        }
        while self.occupied() + a.size > self.capacity {
            if self.evict(a).is_none() {
                break;
            }
        }
        // libCacheSim makes room first and only then refuses an object as large as S.
        if self.hit_on_ghost || self.fits_small(a.size) {
            self.insert(a);
        }
        false
    }

    /// Inserts into M after a ghost hit, else into S (or into M while the cache is still filling
    /// and S is full). An object too large for S (see the module notes) goes to M when inserted
    /// directly, since the caller asked for it to be cached; `get` does not insert it at all.
    fn insert(&mut self, a: &Access) {
        // A key inserted without a `find` first (a prefetch) may still be in G: drop the ghost,
        // so the map never holds the key twice. (`get` finds first, which drops it.)
        if let Some(&s) = self.map.get(&a.key) {
            debug_assert!(self.slab.get(s).queue == Queue::Ghost, "insert of a cached key");
            self.remove(a.key);
        }
        let to_main = std::mem::take(&mut self.hit_on_ghost)
            || !self.fits_small(a.size)
            || (!self.has_evicted && self.small_bytes >= self.small_cap);
        let queue = if to_main { Queue::Main } else { Queue::Small };
        let s = self.slab.alloc(Entry { key: a.key, size: a.size, freq: 0, queue });
        let (slab, list, bytes) = self.list_mut(queue);
        slab.push_head(list, s);
        *bytes += a.size;
        self.map.insert(a.key, s);
    }

    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        self.has_evicted = true;
        if self.main_bytes > self.main_cap || self.small.is_empty() {
            return self.evict_main();
        }
        // If every object in S earned a move to M, S is now empty and libCacheSim's next
        // eviction call would go to M: do it now.
        self.evict_small().or_else(|| self.evict_main())
    }

    fn remove(&mut self, key: Key) -> bool {
        let Some(s) = self.map.remove(&key) else { return false };
        let e = *self.slab.get(s);
        let (slab, list, bytes) = self.list_mut(e.queue);
        slab.unlink(list, s);
        *bytes -= e.size;
        self.slab.release(s);
        e.queue != Queue::Ghost
    }

    fn metadata_bytes(&self) -> usize {
        self.map.allocation_size() + self.slab.allocated_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil;

    fn hits(p: &mut dyn Policy, keys: &[u64]) -> String {
        testutil::run_keys(p, keys).iter().map(|&h| if h { 'H' } else { '.' }).collect()
    }

    /// Hit pattern produced by libCacheSim 0.3.5 (`lcs.S3FIFO(20)`) on this sequence.
    #[test]
    fn matches_libcachesim_small_sequence() {
        let keys = [1, 2, 1, 3, 1, 2, 4, 5, 1, 1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 1, 2, 3, 14, 15, 1, 16, 17, 18, 19, 2, 3];
        let mut p = S3Fifo::new(20, 0.1, 0.9, 2);
        assert_eq!(hits(&mut p, &keys), "..H.HH..HHHH........HHH..H....HH");
    }

    #[test]
    fn one_hit_wonders_leave_through_small_queue() {
        // Capacity 20: |S| = 2, |M| = 18. Before the first eviction a full S overflows into M,
        // so 0 and 1 fill S and 2..19 go to M; referencing 2..19 again sets their counters.
        let mut p = S3Fifo::new(20, 0.1, 0.9, 2);
        let mut keys: Vec<u64> = (0..20).chain(2..20).collect();
        // A scan of 100 cold keys: each passes through S and leaves for the ghost queue.
        keys.extend(100..200);
        testutil::run_keys(&mut p, &keys);
        let (small, main, ghost) = p.queues();
        assert_eq!(main, (2..20).rev().collect::<Vec<_>>(), "the scan did not touch M");
        assert_eq!(small, vec![199, 198]);
        // The ghost queue holds the last |G| = 18 keys evicted from S.
        assert_eq!(ghost, (180..198).rev().collect::<Vec<_>>());
        // LRU of the same size keeps none of the hot keys.
        let mut lru = crate::cache::lru::Lru::new(20);
        testutil::run_keys(&mut lru, &keys);
        assert!((2..20).all(|k| !lru.contains(k)));
    }

    #[test]
    fn ghost_hit_goes_to_main() {
        let mut p = S3Fifo::new(20, 0.1, 0.9, 2);
        let keys: Vec<u64> = (0..40).collect();
        testutil::run_keys(&mut p, &keys);
        let (_, _, ghost) = p.queues();
        let g = *ghost.first().expect("scan left ghosts");
        assert!(!p.get(&Access::unit(g, 40)));
        let (small, main, _) = p.queues();
        assert!(main.contains(&g) && !small.contains(&g));
    }

    #[test]
    fn params_are_parsed() {
        let p = crate::cache::build("s3fifo:small=0.2,threshold=1,ghost=0.5", 100).unwrap();
        assert_eq!(p.name(), "s3fifo");
        assert!(crate::cache::build("s3fifo:small=1.5", 100).is_err());
        assert!(crate::cache::build("s3fifo:threshold=0", 100).is_err());
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| Box::new(S3Fifo::new(c, 0.1, 0.9, 2)));
    }
}
