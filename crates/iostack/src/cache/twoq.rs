//! 2Q: a FIFO for first references (A1in), a ghost FIFO of their keys (A1out), an LRU (Am).
//!
//! Johnson and Shasha, "2Q: A Low Overhead High Performance Buffer Management Replacement
//! Algorithm", VLDB 1994, §2 ("full version", Figure 2). A page referenced for the first time
//! enters A1in, a FIFO holding `kin` of the cache (25 % by default, the paper's recommended Kin).
//! A hit in A1in does nothing: correlated references shortly after the first one are not taken as
//! evidence of reuse. When A1in holds more than its share, its oldest page leaves the cache and
//! its key enters A1out, a FIFO of keys only, holding `kout` of the capacity in keys (50 %, the
//! paper's Kout). A miss on a key found in A1out means the page was reused at a distance the
//! cache nearly caught: it goes to Am, an LRU holding the rest of the cache. A hit in Am moves
//! the page to Am's head; evictions from Am leave no trace.
//!
//! This module reproduces libCacheSim's `TwoQ.c` (0.3.5), which follows the paper with these
//! specifics:
//! - capacities are truncated to whole units: |A1in| = ⌊C·kin⌋, |A1out| = ⌊C·kout⌋ (in object
//!   sizes, like the cache), |Am| = C − |A1in|;
//! - the victim comes from A1in while A1in holds more than |A1in|, else from Am's LRU end;
//! - Am is a cache of its own: inserting a reused page into a full Am evicts Am's LRU page even
//!   when A1in has room to spare (so the whole cache may then hold less than C). [`Policy::get`]
//!   does this; a direct [`Policy::insert`] does it too, since it is part of the insertion, and
//!   hands the pages it so drops over through [`Policy::drain_side_evictions`];
//! - an object larger than |A1in| is not cached.
//!
//! One deviation, for caches so small that libCacheSim caches nothing (fewer than 4 unit objects,
//! where |A1in| is 0): |A1in| is at least one unit, and a reused page that cannot fit in Am goes to
//! A1in. For every larger cache the behaviour is identical.
//!
//! All three queues share one slab and one key map; a reference is one hash lookup and O(1) list
//! operations, and the ghost queue is bounded by |A1out|.

use super::list::{List, Slab, Slot};
use super::{Access, Evicted, Key, KeyMap, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "2q",
    aliases: &["twoq"],
    summary: "2Q: A1in FIFO + A1out ghost FIFO + Am LRU (Johnson and Shasha, VLDB'94)",
    build: |capacity, params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> {
        let kin = params.f64_in("kin", 0.25, 0.0, 1.0)?;
        let kout = params.f64_in("kout", 0.5, 0.0, 10.0)?;
        if !(kin > 0.0 && kin < 1.0) {
            return Err(ConfigError::new("2q.kin", format!("the A1in share must be in (0, 1), got {kin}")));
        }
        if !(0.0..=10.0).contains(&kout) {
            return Err(ConfigError::new("2q.kout", format!("the A1out share must be in [0, 10], got {kout}")));
        }
        Ok(Box::new(TwoQ::new(capacity, kin, kout)))
    },
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Queue {
    In,
    Out,
    Main,
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Key,
    size: u64,
    queue: Queue,
}

pub struct TwoQ {
    capacity: u64,
    in_cap: u64,
    out_cap: u64,
    main_cap: u64,
    map: KeyMap<Slot>,
    slab: Slab<Entry>,
    a1in: List,
    a1out: List,
    am: List,
    in_bytes: u64,
    out_bytes: u64,
    main_bytes: u64,
    /// The last `find` missed on a key that was in A1out.
    hit_on_ghost: bool,
    /// Pages `insert` dropped from Am, not drained yet.
    side: Vec<Evicted>,
}

impl TwoQ {
    /// `kin` and `kout` are fractions of `capacity`.
    pub fn new(capacity: u64, kin: f64, kout: f64) -> Self {
        let in_cap = ((capacity as f64 * kin) as u64).max(1).min(capacity);
        TwoQ {
            capacity,
            in_cap,
            out_cap: (capacity as f64 * kout) as u64,
            main_cap: capacity - in_cap,
            map: KeyMap::default(),
            slab: Slab::default(),
            a1in: List::new(),
            a1out: List::new(),
            am: List::new(),
            in_bytes: 0,
            out_bytes: 0,
            main_bytes: 0,
            hit_on_ghost: false,
            side: Vec::new(),
        }
    }

    /// Keys of A1in, A1out and Am, newest first.
    pub fn queues(&self) -> (Vec<Key>, Vec<Key>, Vec<Key>) {
        let keys = |l: &List| self.slab.iter(l).map(|(_, e)| e.key).collect();
        (keys(&self.a1in), keys(&self.a1out), keys(&self.am))
    }

    fn parts(&mut self, q: Queue) -> (&mut Slab<Entry>, &mut List, &mut u64) {
        match q {
            Queue::In => (&mut self.slab, &mut self.a1in, &mut self.in_bytes),
            Queue::Out => (&mut self.slab, &mut self.a1out, &mut self.out_bytes),
            Queue::Main => (&mut self.slab, &mut self.am, &mut self.main_bytes),
        }
    }

    /// Unlinks and forgets the entry at the tail of `q`.
    fn drop_tail(&mut self, q: Queue) -> Option<Evicted> {
        let (slab, list, bytes) = self.parts(q);
        let s = slab.pop_tail(list)?;
        let e = *slab.get(s);
        *bytes -= e.size;
        slab.release(s);
        self.map.remove(&e.key);
        Some(Evicted { key: e.key, size: e.size })
    }

    fn push(&mut self, q: Queue, key: Key, size: u64) {
        let s = self.slab.alloc(Entry { key, size, queue: q });
        let (slab, list, bytes) = self.parts(q);
        slab.push_head(list, s);
        *bytes += size;
        self.map.insert(key, s);
    }
}

impl Policy for TwoQ {
    fn name(&self) -> &str {
        "2q"
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn occupied(&self) -> u64 {
        self.in_bytes + self.main_bytes
    }
    fn len(&self) -> usize {
        self.a1in.len() + self.am.len()
    }
    fn contains(&self, key: Key) -> bool {
        self.map.get(&key).is_some_and(|&s| self.slab.get(s).queue != Queue::Out)
    }

    #[inline]
    fn find(&mut self, a: &Access) -> bool {
        self.hit_on_ghost = false;
        let Some(&s) = self.map.get(&a.key) else { return false };
        match self.slab.get(s).queue {
            // Correlated reference: no change.
            Queue::In => true,
            Queue::Main => {
                self.slab.move_to_head(&mut self.am, s);
                true
            }
            Queue::Out => {
                let size = self.slab.get(s).size;
                self.slab.unlink(&mut self.a1out, s);
                self.slab.release(s);
                self.out_bytes -= size;
                self.map.remove(&a.key);
                self.hit_on_ghost = true;
                false
            }
        }
    }

    fn get(&mut self, a: &Access) -> bool {
        if self.find(a) {
            return true;
        }
        if a.size > self.in_cap || a.size > self.capacity {
            return false;
        }
        while self.occupied() + a.size > self.capacity {
            if self.evict(a).is_none() {
                break;
            }
        }
        self.insert(a);
        // `get` hands nothing over (see the trait).
        self.side.clear();
        false
    }

    fn insert(&mut self, a: &Access) {
        // A key inserted without a `find` first (a prefetch) may still be in A1out: drop the
        // ghost, so the map never holds the key twice. (`get` finds first, which drops it.)
        if let Some(&s) = self.map.get(&a.key) {
            debug_assert!(self.slab.get(s).queue == Queue::Out, "insert of a cached key");
            self.remove(a.key);
        }
        if std::mem::take(&mut self.hit_on_ghost) && a.size <= self.main_cap {
            // Am is a cache of its own: make room in it.
            while self.main_bytes + a.size > self.main_cap {
                match self.drop_tail(Queue::Main) {
                    Some(v) => self.side.push(v),
                    None => break,
                }
            }
            self.push(Queue::Main, a.key, a.size);
        } else {
            self.push(Queue::In, a.key, a.size);
        }
    }

    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        if self.in_bytes > self.in_cap || self.am.is_empty() {
            let v = self.drop_tail(Queue::In)?;
            if v.size <= self.out_cap {
                while self.out_bytes + v.size > self.out_cap {
                    self.drop_tail(Queue::Out);
                }
                self.push(Queue::Out, v.key, v.size);
            }
            return Some(v);
        }
        self.drop_tail(Queue::Main)
    }

    fn remove(&mut self, key: Key) -> bool {
        let Some(s) = self.map.remove(&key) else { return false };
        let e = *self.slab.get(s);
        let (slab, list, bytes) = self.parts(e.queue);
        slab.unlink(list, s);
        *bytes -= e.size;
        self.slab.release(s);
        e.queue != Queue::Out
    }

    fn has_side_evictions(&self) -> bool {
        true
    }

    fn drain_side_evictions(&mut self, out: &mut Vec<Evicted>) {
        out.append(&mut self.side);
    }

    fn metadata_bytes(&self) -> usize {
        self.map.allocation_size() + self.slab.allocated_bytes() + self.side.capacity() * std::mem::size_of::<Evicted>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil;

    fn hits(p: &mut dyn Policy, keys: &[u64]) -> String {
        testutil::run_keys(p, keys).iter().map(|&h| if h { 'H' } else { '.' }).collect()
    }

    /// Hit patterns produced by libCacheSim 0.3.5 (`lcs.TwoQ(c)`) on this sequence.
    #[test]
    fn matches_libcachesim_small_sequence() {
        let keys = [1, 2, 1, 3, 1, 2, 4, 5, 1, 1, 2, 3, 6, 7, 8, 9, 10, 11, 12, 13, 1, 2, 3, 14, 15, 1, 16, 17, 18, 19, 2, 3];
        for (c, want) in [
            (4, "..H.HH...H...........HH........H"),
            (5, "..H.HH..HHHH.............H......"),
            (10, "..H.HH..HHHH.............H....HH"),
        ] {
            let mut p = TwoQ::new(c, 0.25, 0.5);
            assert_eq!(hits(&mut p, &keys), want, "capacity {c}");
        }
    }

    #[test]
    fn reuse_after_a1in_goes_to_am() {
        let mut p = TwoQ::new(8, 0.25, 0.5); // A1in 2, A1out 4, Am 6
        testutil::run_keys(&mut p, &[1, 2, 3, 4]);
        let (a1in, a1out, am) = p.queues();
        assert_eq!(a1in, vec![4, 3, 2, 1]); // A1in may exceed its share while the cache has room
        assert!(a1out.is_empty() && am.is_empty());
        testutil::run_keys(&mut p, &[5, 6, 7, 8, 9]); // cache full at 8: 9 pushes 1 out to A1out
        let (_, a1out, _) = p.queues();
        assert_eq!(a1out, vec![1]);
        assert!(!p.get(&Access::unit(1, 9)));
        // 1 left A1out for Am; making room for it pushed 2 from A1in to A1out.
        let (a1in, a1out, am) = p.queues();
        assert_eq!(a1out, vec![2]);
        assert_eq!(am, vec![1]);
        assert_eq!(a1in, vec![9, 8, 7, 6, 5, 4, 3]);
    }

    /// Inserting a reused page into a full Am evicts Am's LRU page although the cache has room;
    /// the page is handed over as a side eviction.
    #[test]
    fn insert_into_full_am_hands_over_its_victim() {
        let mut p = TwoQ::new(4, 0.5, 1.0); // A1in 2, A1out 4, Am 2
        testutil::run_keys(&mut p, &[1, 2, 3, 4, 5, 6, 1, 2]);
        let (a1in, a1out, am) = p.queues();
        assert_eq!((a1in, a1out, am), (vec![6, 5], vec![4, 3], vec![2, 1]));
        assert!(p.remove(6)); // room in the cache, none in Am
        let a = Access::unit(3, 8);
        assert!(!p.find(&a)); // ghost hit
        p.insert(&a);
        let mut out = Vec::new();
        p.drain_side_evictions(&mut out);
        assert_eq!(out, vec![Evicted { key: 1, size: 1 }]);
        assert_eq!(p.queues().2, vec![3, 2]);
        assert_eq!(p.len(), 3);
        assert!(!p.contains(1));
        out.clear();
        p.drain_side_evictions(&mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn params_are_parsed() {
        assert!(crate::cache::build("twoq:kin=0.3,kout=1", 100).is_ok());
        assert!(crate::cache::build("2q:kin=0", 100).is_err());
        assert!(crate::cache::build("2q:kni=0.2", 100).is_err());
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| Box::new(TwoQ::new(c, 0.25, 0.5)));
    }
}
