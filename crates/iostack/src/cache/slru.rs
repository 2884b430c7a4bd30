//! SLRU: segmented LRU (Karedla, Love and Wherry, IEEE Computer 1994), with `segments` LRU
//! segments of equal share.
//!
//! Segment 0 is the probationary segment, segment n-1 the most protected. A hit in segment i
//! moves the entry to the MRU end of segment i+1 (or of segment n-1 if it is already there); a
//! segment over its share then demotes its LRU entry to the MRU end of the segment below, and so
//! on down; an entry demoted out of segment 0 leaves the cache. The victim of a miss is the LRU
//! entry of the lowest non-empty segment. Entries so climb one segment per hit and must keep
//! being hit to stay protected, which shields the cache from scans better than LRU.
//!
//! libCacheSim semantics reproduced (`SLRU.c`, defaults `n-seg=4`, equal shares):
//! - each segment's share is `capacity / segments`, rounded down (the shares may add up to less
//!   than the capacity);
//! - a miss goes into the *lowest segment with room for it*, so while the cache fills, new
//!   entries land in higher segments too; when no segment has room, it goes into segment 0,
//!   which may then exceed its share (when the shares add up to less than the capacity);
//! - a hit can therefore evict: promoting an entry can cascade demotions down into a segment 0
//!   that is over its share, and the LRU entry of the lowest non-empty segment is dropped (an
//!   exception to the `Policy::find` rule, allowed by the trait's contract); such side evictions
//!   are handed over through [`Policy::drain_side_evictions`];
//! - an object larger than one share is not inserted; hits keep the inserted size.
//!
//! Parameters: `segments` (1..=16, default 4). The capacity must be at least `segments`.

use super::list::{List, Slot};
use super::resident::{ResidentEntry, ResidentSet};
use super::slots::SizeTag;
use super::{Access, Evicted, Key, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "slru",
    aliases: &[],
    summary: "segmented LRU, equal segments (segments=4)",
    build: |capacity, params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> {
        let segments = params.u64_in("segments", 4, 1, 64)?;
        if !(1..=16).contains(&segments) {
            return Err(ConfigError::new("slru.segments", format!("{segments} is out of range; SLRU has 1 to 16 segments")));
        }
        if capacity < segments {
            return Err(ConfigError::new(
                "--cache",
                format!("SLRU with {segments} segments needs a capacity of at least {segments} (each segment gets capacity/{segments})"),
            ));
        }
        Ok(Box::new(Slru::new(capacity, segments as usize)))
    },
};

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Key,
    /// Size, with the segment as tag.
    word: SizeTag,
}

impl ResidentEntry for Entry {
    #[inline]
    fn key(&self) -> Key {
        self.key
    }
    #[inline]
    fn size(&self) -> u64 {
        self.word.size()
    }
}

pub struct Slru {
    capacity: u64,
    resident: ResidentSet<Entry>,
    segs: Vec<List>,
    seg_size: Vec<u64>,
    /// Each segment's share of the capacity.
    share: u64,
    /// Entries dropped outside `evict` (by a hit's demotion cascade), not drained yet.
    side: Vec<Evicted>,
}

impl Slru {
    /// `segments` in 1..=16; `capacity >= segments`.
    pub fn new(capacity: u64, segments: usize) -> Self {
        assert!((1..=16).contains(&segments), "SLRU has 1 to 16 segments");
        Slru {
            capacity,
            resident: ResidentSet::new(),
            segs: vec![List::new(); segments],
            seg_size: vec![0; segments],
            share: capacity / segments as u64,
            side: Vec::new(),
        }
    }

    /// Keys of segment `i` (0 = probationary), MRU first.
    pub fn segment_keys(&self, i: usize) -> Vec<Key> {
        self.resident.slab().iter(&self.segs[i]).map(|(_, e)| e.key).collect()
    }

    /// Moves slot `s` to the MRU end of segment `to`.
    #[inline]
    fn move_to_segment(&mut self, s: Slot, to: usize) {
        let e = self.resident.get_mut(s);
        let from = e.word.tag() as usize;
        let size = e.word.size();
        e.word.set_tag(to as u8);
        self.resident.unlink(&mut self.segs[from], s);
        self.resident.push_head(&mut self.segs[to], s);
        self.seg_size[from] -= size;
        self.seg_size[to] += size;
    }

    /// Demotes the LRU entry of segment `i` (evicts it when `i` is 0), then repairs the segment
    /// below if that put it over its share.
    fn cool(&mut self, i: usize) {
        if i == 0 {
            if let Some(v) = self.evict_lowest() {
                self.side.push(v);
            }
            return;
        }
        let Some(s) = self.segs[i].tail() else { return };
        self.move_to_segment(s, i - 1);
        while self.seg_size[i - 1] > self.share {
            self.cool(i - 1);
        }
    }

    /// Evicts the LRU entry of the lowest segment holding anything.
    fn evict_lowest(&mut self) -> Option<Evicted> {
        let seg = (0..self.segs.len())
            .find(|&i| self.seg_size[i] > 0)
            .or_else(|| (0..self.segs.len()).find(|&i| !self.segs[i].is_empty()))?;
        let e = self.resident.evict_tail(&mut self.segs[seg])?;
        self.seg_size[seg] -= e.word.size();
        Some(Evicted { key: e.key, size: e.word.size() })
    }
}

impl Policy for Slru {
    fn name(&self) -> &str {
        "slru"
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
        let top = self.segs.len() - 1;
        let seg = self.resident.get(s).word.tag() as usize;
        if seg == top {
            self.resident.move_to_head(&mut self.segs[top], s);
        } else {
            self.move_to_segment(s, seg + 1);
            let mut cur = seg + 1;
            while self.seg_size[cur] > self.share {
                self.cool(cur);
                // In sized mode the cascade can demote, or even evict, the promoted entry itself;
                // follow it.
                if self.resident.find(a.key) != Some(s) {
                    break;
                }
                cur = self.resident.get(s).word.tag() as usize;
            }
        }
        true
    }

    fn insert(&mut self, a: &Access) {
        let seg = match (0..self.segs.len()).find(|&i| self.seg_size[i] + a.size <= self.share) {
            Some(i) => i,
            None => {
                // Only when the caller did not make room first.
                while self.resident.occupied() + a.size > self.capacity {
                    match self.evict_lowest() {
                        Some(v) => self.side.push(v),
                        None => break,
                    }
                }
                0
            }
        };
        self.resident.insert_head(&mut self.segs[seg], Entry { key: a.key, word: SizeTag::new(a.size, seg as u8) });
        self.seg_size[seg] += a.size;
    }

    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        self.evict_lowest()
    }

    /// As the default, but an object larger than one segment's share is not inserted.
    fn get(&mut self, a: &Access) -> bool {
        let hit = self.find(a) || {
            if a.size <= self.share && a.size <= self.capacity {
                while self.resident.occupied() + a.size > self.capacity {
                    if self.evict_lowest().is_none() {
                        break;
                    }
                }
                self.insert(a);
            }
            false
        };
        // `get` hands nothing over (see the trait).
        self.side.clear();
        hit
    }

    fn has_side_evictions(&self) -> bool {
        true
    }

    fn drain_side_evictions(&mut self, out: &mut Vec<Evicted>) {
        out.append(&mut self.side);
    }

    fn remove(&mut self, key: Key) -> bool {
        let segs = &mut self.segs;
        match self.resident.remove(key, |e| &mut segs[e.word.tag() as usize]) {
            Some(e) => {
                self.seg_size[e.word.tag() as usize] -= e.word.size();
                true
            }
            None => false,
        }
    }

    fn metadata_bytes(&self) -> usize {
        self.resident.metadata_bytes() + self.side.capacity() * std::mem::size_of::<Evicted>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil;

    #[test]
    fn fills_lowest_segment_with_room_then_promotes() {
        let mut s = Slru::new(5, 2);
        // Shares of 2 (5/2): 1 2 go to segment 0, 3 4 to segment 1; 5 finds no segment with
        // room and goes to segment 0, over its share (the cache still has room).
        testutil::run_keys(&mut s, &[1, 2, 3, 4, 5]);
        assert_eq!(s.segment_keys(0), vec![5, 2, 1]);
        assert_eq!(s.segment_keys(1), vec![4, 3]);
        // 1 hits: promoted to segment 1, over its share: its LRU (3) is demoted to segment 0,
        // still over its share: the LRU of segment 0 (2) is evicted by the hit, and handed over.
        assert!(s.find(&Access::unit(1, 5)));
        assert_eq!(s.segment_keys(1), vec![1, 4]);
        assert_eq!(s.segment_keys(0), vec![3, 5]);
        assert!(!s.contains(2));
        assert_eq!(s.occupied(), 4);
        let mut out = Vec::new();
        s.drain_side_evictions(&mut out);
        assert_eq!(out, vec![Evicted { key: 2, size: 1 }]);
        s.drain_side_evictions(&mut out);
        assert_eq!(out.len(), 1, "a drain empties the buffer");
        // 6 misses: the cache has room, no segment has: segment 0 again.
        assert!(!s.get(&Access::unit(6, 6)));
        assert_eq!(s.segment_keys(0), vec![6, 3, 5]);
    }

    /// `get` hands nothing over, even when its hit evicts.
    #[test]
    fn get_leaves_nothing_to_drain() {
        let mut s = Slru::new(5, 2);
        testutil::run_keys(&mut s, &[1, 2, 3, 4, 5]);
        assert!(s.get(&Access::unit(1, 5)));
        assert!(!s.contains(2));
        let mut out = Vec::new();
        s.drain_side_evictions(&mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn victim_is_lru_of_lowest_segment() {
        let mut s = Slru::new(4, 2);
        testutil::run_keys(&mut s, &[1, 2, 3, 4, 5]);
        // 5: no room anywhere: evict the LRU of segment 0 (1), insert into segment 0.
        assert_eq!(s.segment_keys(0), vec![5, 2]);
        assert_eq!(s.segment_keys(1), vec![4, 3]);
    }

    #[test]
    fn rejects_capacity_below_segments() {
        assert!(crate::cache::build("slru", 3).is_err());
        assert!(crate::cache::build("slru:segments=2", 3).is_ok());
    }

    #[test]
    fn common_contract() {
        testutil::check_contract_with(&[4, 7, 64, 400], |c| Box::new(Slru::new(c, 4)));
        testutil::check_contract_with(&[1, 2, 7, 64], |c| Box::new(Slru::new(c, 1)));
    }
}
