//! StreamLRU: LRU over streams rather than blocks.
//!
//! Follows Varki, Hubbe and Merchant, "Significance of replacement queue in sequential
//! prefetching" (`papers/003_0e822c5faac48388.txt`), Section 2 and Table 2, which formalise the
//! prefetch-aware LRU of SARC (Gill and Modha 2005): all cached blocks of a stream sit together in
//! the replacement queue and move as a unit. A hit on any block of a stream moves the whole
//! stream to the MRU end; the victim is taken from the least recently used stream. Result 1 of
//! the paper follows: with x blocks prefetched ahead of each request, the ceil(C/x) most
//! recently accessed streams are in the cache.
//!
//! What a stream is. A stream is a run of blocks contiguous on disk (Section 2: a sequential
//! prefetcher sees the workload as interleaved runs of contiguous block numbers). A block joins
//! the stream of its disk predecessor if that is cached, else of its successor, else starts a new
//! stream; this needs no help from the prefetcher and puts the blocks a prefetcher adds ahead of a
//! stream into that stream (1c joins 1b in Table 2). Inserting a block counts as an access to its
//! stream.
//!
//! Order within a stream. Blocks are kept in ascending block order and a stream gives up its
//! last block first, so a stream that loses blocks keeps the ones its next requests need (this is
//! what makes the ceiling in Result 1 exact).

use super::list::{List, Slab, Slot, NIL};
use super::resident::{ResidentEntry, ResidentSet};
use super::{Access, Evicted, Key, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "streamlru",
    aliases: &["stream-lru"],
    summary: "LRU over streams of contiguous blocks, moved as a unit (Varki et al., Table 2; SARC)",
    build: |capacity, _params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> { Ok(Box::new(StreamLru::new(capacity))) },
};

#[derive(Debug, Clone, Copy)]
struct Block {
    key: Key,
    size: u64,
    stream: Slot,
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

#[derive(Debug, Clone, Copy)]
struct Stream {
    blocks: List,
}

pub struct StreamLru {
    capacity: u64,
    blocks: ResidentSet<Block>,
    streams: Slab<Stream>,
    /// Streams, MRU at the head.
    queue: List,
}

impl StreamLru {
    pub fn new(capacity: u64) -> Self {
        StreamLru {
            capacity,
            blocks: ResidentSet::new(),
            streams: Slab::default(),
            queue: List::new(),
        }
    }

    /// The replacement queue from the MRU end: streams most recent first, each in block order.
    pub fn keys(&self) -> Vec<Key> {
        let mut out = Vec::with_capacity(self.blocks.len());
        for (_, st) in self.streams.iter(&self.queue) {
            out.extend(self.blocks.slab().iter(&st.blocks).map(|(_, b)| b.key));
        }
        out
    }

    /// Number of streams held.
    pub fn streams(&self) -> usize {
        self.queue.len()
    }

    fn touch(&mut self, stream: Slot) {
        self.streams.move_to_head(&mut self.queue, stream);
    }

    fn unlink_block(&mut self, s: Slot) {
        let st = self.blocks.get(s).stream;
        let mut list = self.streams.get(st).blocks;
        self.blocks.unlink(&mut list, s);
        self.streams.get_mut(st).blocks = list;
        if list.is_empty() {
            self.streams.unlink(&mut self.queue, st);
            self.streams.release(st);
        }
    }
}

impl Policy for StreamLru {
    fn name(&self) -> &str {
        "streamlru"
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn occupied(&self) -> u64 {
        self.blocks.occupied()
    }
    fn len(&self) -> usize {
        self.blocks.len()
    }
    fn contains(&self, key: Key) -> bool {
        self.blocks.contains(key)
    }

    fn find(&mut self, a: &Access) -> bool {
        match self.blocks.find(a.key) {
            Some(s) => {
                let st = self.blocks.get(s).stream;
                self.touch(st);
                true
            }
            None => false,
        }
    }

    fn insert(&mut self, a: &Access) {
        let k = a.key;
        let pred = k.checked_sub(1).and_then(|p| self.blocks.find(p));
        let succ = k.checked_add(1).and_then(|n| self.blocks.find(n));
        let s = self.blocks.insert_unlinked(Block { key: k, size: a.size, stream: NIL });
        let st = if let Some(p) = pred {
            let st = self.blocks.get(p).stream;
            let mut list = self.streams.get(st).blocks;
            self.blocks.insert_after(&mut list, p, s);
            self.streams.get_mut(st).blocks = list;
            st
        } else if let Some(n) = succ {
            let st = self.blocks.get(n).stream;
            let mut list = self.streams.get(st).blocks;
            match self.blocks.slab().prev(n) {
                Some(p) => self.blocks.insert_after(&mut list, p, s),
                None => self.blocks.push_head(&mut list, s),
            }
            self.streams.get_mut(st).blocks = list;
            st
        } else {
            let st = self.streams.alloc(Stream { blocks: List::new() });
            let mut list = List::new();
            self.blocks.push_head(&mut list, s);
            self.streams.get_mut(st).blocks = list;
            self.streams.push_head(&mut self.queue, st);
            st
        };
        self.blocks.get_mut(s).stream = st;
        self.touch(st);
    }

    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        let st = self.queue.tail()?;
        let s = self.streams.get(st).blocks.tail().expect("streams are never empty");
        self.unlink_block(s);
        let b = self.blocks.forget_unlinked(s);
        Some(Evicted { key: b.key, size: b.size })
    }

    fn remove(&mut self, key: Key) -> bool {
        match self.blocks.find(key) {
            Some(s) => {
                self.unlink_block(s);
                self.blocks.forget_unlinked(s);
                true
            }
            None => false,
        }
    }

    fn metadata_bytes(&self) -> usize {
        self.blocks.metadata_bytes() + self.streams.allocated_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::testutil;

    #[test]
    fn streams_move_and_leave_as_units() {
        let mut p = StreamLru::new(5);
        for (i, k) in [10u64, 11, 12, 50, 51].iter().enumerate() {
            p.get(&Access::unit(*k, i as u64));
        }
        assert_eq!(p.keys(), vec![50, 51, 10, 11, 12]);
        assert!(p.find(&Access::unit(11, 5)));
        assert_eq!(p.keys(), vec![10, 11, 12, 50, 51]);
        // 90 needs room: the LRU stream (50, 51) gives up its last block.
        p.get(&Access::unit(90, 6));
        assert_eq!(p.keys(), vec![90, 10, 11, 12, 50]);
        assert_eq!(p.streams(), 3);
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| Box::new(StreamLru::new(c)));
    }
}
