//! CLOCK (second chance): FIFO that gives referenced entries another round.
//!
//! Entries sit on a circular list in insertion order, each with a reference counter of `bits`
//! bits (1 by default: the classic reference bit, Corbató 1968). A hit increments the counter,
//! saturating at 2^bits - 1. To evict, the hand looks at the oldest entry: if its counter is
//! zero it is the victim, otherwise the counter is decremented and the entry goes back to the
//! newest end, and the hand moves on. With `bits=1` this is FIFO-Reinsertion; with more bits an
//! entry survives as many sweeps as it has recent hits.
//!
//! libCacheSim semantics reproduced (`Clock.c`, parameter `n-bit-counter`): a new entry starts
//! with counter 0 (it is not "referenced" by the miss that brought it in), the hand sweeps from
//! the oldest entry and re-queues at the newest end; hits keep the inserted size.
//!
//! Parameters: `bits` (1..=8, default 1).

use super::list::List;
use super::resident::{ResidentEntry, ResidentSet};
use super::slots::SizeTag;
use super::{Access, Evicted, Key, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "clock",
    aliases: &["second-chance"],
    summary: "CLOCK / second chance with an n-bit reference counter (bits=1)",
    build: |capacity, params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> {
        let bits = params.u64_in("bits", 1, 1, 32)?;
        if !(1..=8).contains(&bits) {
            return Err(ConfigError::new("clock.bits", format!("{bits} is out of range; the counter has 1 to 8 bits")));
        }
        Ok(Box::new(Clock::new(capacity, bits as u32)))
    },
};

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Key,
    /// Size, with the reference counter as tag.
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

pub struct Clock {
    capacity: u64,
    max_count: u8,
    resident: ResidentSet<Entry>,
    /// Head: newest; tail: where the hand points.
    ring: List,
}

impl Clock {
    pub fn new(capacity: u64, bits: u32) -> Self {
        let max_count = ((1u32 << bits.clamp(1, 8)) - 1) as u8;
        Clock { capacity, max_count, resident: ResidentSet::new(), ring: List::new() }
    }

    /// Keys and counters from newest to the hand.
    pub fn entries(&self) -> impl Iterator<Item = (Key, u8)> + '_ {
        self.resident.slab().iter(&self.ring).map(|(_, e)| (e.key, e.word.tag()))
    }
}

impl Policy for Clock {
    fn name(&self) -> &str {
        "clock"
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

    #[inline]
    fn find(&mut self, a: &Access) -> bool {
        match self.resident.find(a.key) {
            Some(s) => {
                let e = self.resident.get_mut(s);
                let c = e.word.tag();
                if c < self.max_count {
                    e.word.set_tag(c + 1);
                }
                true
            }
            None => false,
        }
    }

    #[inline]
    fn insert(&mut self, a: &Access) {
        self.resident.insert_head(&mut self.ring, Entry { key: a.key, word: SizeTag::new(a.size, 0) });
    }

    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        // Terminates: every pass over the ring decrements every nonzero counter.
        loop {
            let s = self.ring.tail()?;
            let e = self.resident.get_mut(s);
            let c = e.word.tag();
            if c == 0 {
                break;
            }
            e.word.set_tag(c - 1);
            self.resident.move_to_head(&mut self.ring, s);
        }
        let e = self.resident.evict_tail(&mut self.ring)?;
        Some(Evicted { key: e.key, size: e.word.size() })
    }

    fn remove(&mut self, key: Key) -> bool {
        let ring = &mut self.ring;
        self.resident.remove(key, |_| ring).is_some()
    }

    fn metadata_bytes(&self) -> usize {
        self.resident.metadata_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil;

    #[test]
    fn referenced_entries_get_a_second_chance() {
        let mut c = Clock::new(3, 1);
        let hits = testutil::run_keys(&mut c, &[1, 2, 3, 1, 4, 5, 1]);
        // 1 2 3 miss; 1 hit sets its bit; 4: hand clears 1's bit and re-queues it, evicts 2;
        // 5 evicts 3; 1 is still cached.
        assert_eq!(hits, vec![false, false, false, true, false, false, true]);
        assert_eq!(c.entries().collect::<Vec<_>>(), vec![(5, 0), (4, 0), (1, 1)]);
    }

    #[test]
    fn counter_saturates() {
        let mut c = Clock::new(2, 2);
        testutil::run_keys(&mut c, &[1, 1, 1, 1, 1, 2]);
        assert_eq!(c.entries().collect::<Vec<_>>(), vec![(2, 0), (1, 3)]);
    }

    #[test]
    fn rejects_bad_bits() {
        assert!(crate::cache::build("clock:bits=0", 10).is_err());
        assert!(crate::cache::build("clock:bits=2", 10).is_ok());
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| Box::new(Clock::new(c, 1)));
        testutil::check_contract(|c| Box::new(Clock::new(c, 3)));
    }
}
