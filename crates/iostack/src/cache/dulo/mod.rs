//! DULO: dual-locality (temporal and spatial) replacement.
//!
//! Follows Jiang, Ding, Xu, Chen and Zhang, "DULO: exploiting both temporal and spatial locality
//! in buffer cache management", ACM Transactions on Storage 3(2), 2007 (the file
//! `papers/000_eed2f20ca423ecea.txt`). Section numbers below are the paper's.
//!
//! Why. A replacement policy that only counts misses treats every missed block alike, yet a disk
//! serves ten sequential blocks faster than three scattered ones (Section 1). DULO therefore
//! prefers to keep blocks that would be expensive to fetch again (blocks that were fetched
//! alone, "random" blocks) and to give up first blocks that would come back cheaply as part of a
//! long sequential disk request. Because the cache filters the request stream, this changes what
//! reaches the disk: fewer, longer requests (Section 2.1, Table I).
//!
//! The stack (Section 3.1, Figure 1). DULO keeps LRU's stack but cuts it in two. The top part,
//! the *staging section*, receives newly fetched blocks; it is itself a *correlation buffer*
//! (the top, a plain LRU list that absorbs closely spaced re-references, like LRU-K's
//! correlation period) above a *sequencing bank* that collects up to BANK-MAX blocks. The bottom
//! part, the *eviction section*, holds *sequences* sorted in the order they will be evicted. The
//! stack's total size is fixed, so each block that leaves the eviction section lets one block
//! slide from the bottom of the correlation buffer into the bank; once BANK-MAX blocks have left,
//! the bank is full and is turned into sequences that refill the eviction section. The bank
//! therefore sizes between 0 and BANK-MAX and the eviction section between its minimal size and
//! that plus BANK-MAX. All sequences formed from one bank share the same recency (they come from
//! the same pool), and restricting the bank bounds how much recency is traded for sequentiality.
//!
//! The block table (Section 3.2, Figure 2; `block_table.rs`). A *disk access clock* ticks once
//! per block fetched into the cache and stamps the block; the block table, a per-device radix
//! tree over LBNs shaped like a page table, keeps the two most recent stamps of every block, and
//! every directory entry on the way down keeps the newest stamp below it so that old subtrees can
//! be reclaimed wholesale when the table must shrink. The table outlives the cache residency of
//! a block: the previous stamp of a re-fetched block is what tells whether it was fetched
//! together with its neighbours last time too.
//!
//! Forming sequences (Section 3.3). The full bank is sorted by LBN and scanned from the smallest.
//! The block B following the last block A of the developing sequence is *not* added, and a new
//! sequence starts, when (1) B is more than 4 blocks beyond A (the drive's read-ahead would not
//! pick it up), (2) B's most recent stamp is not A's plus one (they were not fetched back to
//! back), (3) one has a previous stamp and the other not, or B's previous stamp is not A's plus
//! one (they were not fetched back to back before either, so the pair is not stable), or (4) the
//! sequence already has 128 blocks. A block that stands alone is a random block: a sequence of
//! size 1.
//!
//! Ordering sequences (Section 3.4). Sequences are ordered GreedyDual-Size style (Cao and Irani):
//! a global inflation value L starts at 0; a sequence entering the eviction section gets
//! H = L + 1/size; the sequence with the smallest H is the bottom of the stack and is evicted
//! first; evicting a sequence sets L to its H. Long sequences thus go first, but a short one that
//! is not referenced for long is eventually overtaken by newer sequences whose H includes the
//! inflated L. When every sequence has size 1 this is exactly LRU. The sequences of one refill
//! are merged into the already sorted eviction section (here a heap gives the same order).
//!
//! Hits (Section 3.4). Moving every hit block to the top, as strict LRU does, would make each hit
//! in the eviction section pay for re-sequencing; the paper's implementation is built on CLOCK
//! instead: a hit only sets a referenced bit, and a referenced block found at the bottom of the
//! eviction section goes back to the top of the stack with its bit cleared, so only misses
//! trigger sequencing. That is `hits=clock` (the default). The paper's illustrative example
//! (Table I) instead follows GreedyDual-Size to the letter: a hit restores its sequence's
//! H = L + 1/size. That is `hits=gds`; there a hit in the staging section moves the block to the
//! top of the correlation buffer, as LRU would.
//! Section 3.4 flags every hit alike, so a block brought in by prefetching and then referenced
//! once is young and gets its second chance; the paper's algorithm has no two-step activation
//! (Linux's PG_referenced two-step, under which such a page is not hot, is the `linux` core's
//! behaviour and so `dulo-linux`'s, Section 4.1).
//!
//! Parameters (Section 4.2 and 4.6). The paper's machine had 512 MB of memory, a 4 MB bank and a
//! 64 MB eviction section; scaled to a cache of C blocks the defaults are `bank` = C/128 (at least
//! 1) and `evict` = C/8, the correlation buffer taking the rest (`corr` = C - evict - bank).
//! Give `bank` and either `evict` or `corr` (all in blocks); giving all three requires that they
//! add up to C. `distance` (4) and `seq_max` (128) are the rules' thresholds; `table_kib` bounds
//! the block table's memory (0, the default, never reclaims). Table I is `dulo:hits=gds,bank=4,corr=0`
//! on an 8-block cache.
//!
//! The Linux variant (Section 4.1; `linux.rs`, policy `dulo-linux`): the prototype kept Linux's
//! active and inactive lists and applied DULO to the inactive list only (staging and eviction
//! sections within it), keeping the inactive list at least twice the eviction section; iostack
//! builds it on the `linux` policy's two-list core.
//!
//! What a fetch is here: every `insert` (a block entering the cache, on demand or by prefetch)
//! ticks the clock. `remove` is taken to mean the block's data is gone (invalidated), so its
//! block-table entry is reset as the paper does when a block is reclaimed.

mod block_table;
pub mod linux;
mod stack;

pub use block_table::{BlockTable, Stamps};
pub use stack::{DuloStack, HitMode, StackConfig, StackStats};

use super::{Access, Evicted, Key, Params, Policy, PolicyInfo};
use crate::error::ConfigError;

pub const INFO: PolicyInfo = PolicyInfo {
    name: "dulo",
    aliases: &[],
    summary: "dual locality: sequences by LBN and fetch time, GreedyDual-Size order (Jiang et al. 2007)",
    build: |capacity, params: &mut Params| -> Result<Box<dyn Policy>, ConfigError> {
        Ok(Box::new(Dulo::new(capacity, DuloParams::from_params(capacity, params, false)?)))
    },
};

/// DULO's parameters, in blocks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DuloParams {
    pub bank: u64,
    pub evict: u64,
    pub corr: u64,
    pub distance: u64,
    pub seq_max: u64,
    pub hits: HitMode,
    pub table_kib: u64,
}

impl DuloParams {
    /// The paper's defaults scaled to a cache of `capacity` blocks (Section 4.2): bank 4/512 and
    /// eviction section 64/512 of memory.
    pub fn scaled(capacity: u64) -> DuloParams {
        let bank = (capacity / 128).max(1).min(capacity);
        let evict = (capacity / 8).min(capacity - bank);
        DuloParams { bank, evict, corr: capacity - bank - evict, distance: 4, seq_max: 128, hits: HitMode::Clock, table_kib: 0 }
    }

    /// Reads `hits`, `bank`, `evict`, `corr`, `distance`, `seq_max`, `table_kib`. In the Linux
    /// variant (`linux`), `corr` is not a parameter: the staging section is whatever the inactive
    /// list holds above the eviction section.
    pub fn from_params(capacity: u64, params: &mut Params, linux: bool) -> Result<DuloParams, ConfigError> {
        let d = DuloParams::scaled(capacity);
        let policy = if linux { "dulo-linux" } else { "dulo" };
        let err = |k: &str, m: String| ConfigError::new(format!("{policy}.{k}"), m);
        let hits = match params.choice("hits", "clock", &["clock", "gds"])? {
            "gds" => HitMode::Gds,
            _ => HitMode::Clock,
        };
        let bank = params.u64("bank", d.bank)?;
        if bank == 0 || bank > capacity {
            return Err(err("bank", format!("the sequencing bank must hold 1 to {capacity} blocks (the cache size), not {bank}")));
        }
        let given_evict = params.u64("evict", u64::MAX)?;
        let given_corr = if linux { u64::MAX } else { params.u64("corr", u64::MAX)? };
        let room = capacity - bank;
        let (evict, corr) = match (given_evict, given_corr) {
            (u64::MAX, u64::MAX) => {
                let e = d.evict.min(room);
                (e, room - e)
            }
            (e, u64::MAX) => {
                if e > room {
                    return Err(err("evict", format!("eviction section {e} + bank {bank} exceed the cache ({capacity} blocks)")));
                }
                (e, room - e)
            }
            (u64::MAX, c) => {
                if c > room {
                    return Err(err("corr", format!("correlation buffer {c} + bank {bank} exceed the cache ({capacity} blocks)")));
                }
                (room - c, c)
            }
            (e, c) => {
                if e + c != room {
                    return Err(err("corr", format!("corr {c} + bank {bank} + evict {e} must equal the cache size {capacity}")));
                }
                (e, c)
            }
        };
        let distance = params.u64_in("distance", 4, 0, 1 << 20)?;
        let seq_max = params.u64_in("seq_max", 128, 1, 1 << 20)?;
        if seq_max == 0 {
            return Err(err("seq_max", "the largest sequence must be at least 1 block".into()));
        }
        let table_kib = params.u64_in("table_kib", 0, 0, 1 << 30)?;
        Ok(DuloParams { bank, evict, corr, distance, seq_max, hits, table_kib })
    }

    pub fn stack_config(&self) -> StackConfig {
        StackConfig {
            bank_max: self.bank as usize,
            evict_min: self.evict as usize,
            distance: self.distance,
            seq_max: self.seq_max as usize,
            hits: self.hits,
            table_limit: (self.table_kib as usize).saturating_mul(1024),
        }
    }
}

/// The DULO policy over the whole cache (Section 3).
pub struct Dulo {
    capacity: u64,
    params: DuloParams,
    stack: DuloStack,
}

impl Dulo {
    pub fn new(capacity: u64, params: DuloParams) -> Dulo {
        Dulo { capacity, params, stack: DuloStack::new(params.stack_config()) }
    }
    pub fn params(&self) -> &DuloParams {
        &self.params
    }
    pub fn stack(&self) -> &DuloStack {
        &self.stack
    }
    /// Block-table memory in use (bytes).
    pub fn block_table_bytes(&self) -> usize {
        self.stack.table().bytes_in_use()
    }
}

impl Policy for Dulo {
    fn name(&self) -> &str {
        "dulo"
    }
    fn capacity(&self) -> u64 {
        self.capacity
    }
    fn occupied(&self) -> u64 {
        self.stack.occupied()
    }
    fn len(&self) -> usize {
        self.stack.len()
    }
    fn contains(&self, key: Key) -> bool {
        self.stack.contains(key)
    }
    #[inline]
    fn find(&mut self, a: &Access) -> bool {
        self.stack.hit(a.key)
    }
    #[inline]
    fn insert(&mut self, a: &Access) {
        self.stack.insert_fetched(a.key, a.size);
    }
    #[inline]
    fn evict(&mut self, _a: &Access) -> Option<Evicted> {
        self.stack.evict().map(|(key, size)| Evicted { key, size })
    }
    fn remove(&mut self, key: Key) -> bool {
        self.stack.remove(key)
    }
    fn metadata_bytes(&self) -> usize {
        self.stack.metadata_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{block_key, build, testutil};

    fn gds(capacity: u64, bank: u64, corr: u64) -> Dulo {
        let mut p = DuloParams::scaled(capacity);
        p.hits = HitMode::Gds;
        p.bank = bank;
        p.corr = corr;
        p.evict = capacity - bank - corr;
        Dulo::new(capacity, p)
    }

    fn insert_run(d: &mut Dulo, keys: &[Key]) {
        for (i, &k) in keys.iter().enumerate() {
            let a = Access::unit(k, i as u64);
            if !d.find(&a) {
                while d.occupied() + 1 > d.capacity() {
                    d.evict(&a).unwrap();
                }
                d.insert(&a);
            }
        }
    }

    #[test]
    fn sequences_follow_the_four_rules() {
        let mut d = gds(64, 16, 0);
        // 8 contiguous blocks fetched back to back, 2 scattered, one within 4 blocks but fetched
        // out of order, and a 130-block run cut at 128 is tested separately.
        let mut keys: Vec<Key> = (100..108).map(|b| block_key(0, b)).collect();
        keys.push(block_key(0, 5000));
        keys.push(block_key(0, 111)); // 111 - 107 = 4: close, but fetched after 5000
        keys.push(block_key(0, 9000));
        keys.extend((200..205).map(|b| block_key(0, b)));
        insert_run(&mut d, &keys);
        let order = d.stack().eviction_order();
        let sizes: Vec<usize> = order.iter().map(|(_, k)| k.len()).collect();
        // Bottom first: the 8-block sequence (H = 1/8), the 5 run (1/5), then singles.
        assert_eq!(sizes, vec![8, 5, 1, 1, 1]);
        assert_eq!(order[0].0, 0.125);
        // Rule 4: at most seq_max blocks.
        let mut p = DuloParams::scaled(512);
        p.hits = HitMode::Gds;
        p.bank = 200;
        p.corr = 0;
        p.evict = 312;
        let mut d = Dulo::new(512, p);
        insert_run(&mut d, &(0..200).map(|b| block_key(1, b)).collect::<Vec<_>>());
        let sizes: Vec<usize> = d.stack().eviction_order().iter().map(|(_, k)| k.len()).collect();
        assert_eq!(sizes, vec![128, 72]);
    }

    #[test]
    fn distance_threshold_is_four_blocks() {
        let mut d = gds(16, 4, 0);
        // Fetched back to back: 10, 14 (distance 4: joins), 19 (distance 5: new sequence), 20.
        insert_run(&mut d, &[10, 14, 19, 20].map(|b| block_key(0, b)));
        let sizes: Vec<usize> = d.stack().eviction_order().iter().map(|(_, k)| k.len()).collect();
        assert_eq!(sizes, vec![2, 2]);
    }

    #[test]
    fn previous_stamps_must_be_continuous() {
        // Rule 3: history matters. Round one fetches 1,2,3,4,1000,6 back to back (stamps 1-6);
        // they leave the cache keeping their block-table history. Round two fetches
        // 3,4,6,7,1,2 and two far blocks (stamps 7-14).
        let mut d = gds(16, 8, 0);
        insert_run(&mut d, &[1, 2, 3, 4, 1000, 6].map(|b| block_key(0, b)));
        for b in [1, 2, 3, 4, 1000, 6] {
            assert!(d.remove_keep_history(block_key(0, b)));
        }
        insert_run(&mut d, &[3, 4, 6, 7, 1, 2, 50_000, 60_000].map(|b| block_key(0, b)));
        let mut seqs: Vec<Vec<u64>> =
            d.stack().eviction_order().iter().map(|(_, k)| k.iter().map(|&k| k & 0xffff_ffff).collect()).collect();
        seqs.sort();
        // 1,2: recent 11,12 and previous 1,2: together. 2->3: recent 12 then 7: apart (rule 2).
        // 3,4: together. 4->6: recent 8,9 but previous 4 and 6: apart (rule 3b).
        // 6->7: 7 has one stamp, 6 two: apart (rule 3a).
        assert_eq!(seqs, vec![vec![1, 2], vec![3, 4], vec![6], vec![7], vec![50_000], vec![60_000]]);
    }

    impl Dulo {
        fn remove_keep_history(&mut self, key: Key) -> bool {
            self.stack.take(key).is_some()
        }
    }

    #[test]
    fn all_random_blocks_degenerate_to_lru() {
        // Section 3.4: with only size-1 sequences DULO is LRU (GDS hits, no correlation buffer
        // needed for the equivalence on a miss-only stream).
        let keys: Vec<Key> = testutil::mixed_keys(4000, 7).iter().map(|k| block_key(0, k * 10)).collect();
        for cap in [8u64, 64] {
            let mut d = gds(cap, 1, 0);
            let mut lru = crate::cache::lru::Lru::new(cap);
            for (i, &k) in keys.iter().enumerate() {
                let a = Access::unit(k, i as u64);
                assert_eq!(d.get(&a), lru.get(&a), "cap {cap} ref {i}");
            }
        }
    }

    #[test]
    fn clock_hits_give_a_second_chance() {
        let mut d = Dulo::new(8, DuloParams { hits: HitMode::Clock, ..gds(8, 4, 0).params });
        insert_run(&mut d, &[10, 20, 30, 40].map(|b| block_key(0, b * 100)));
        insert_run(&mut d, &(0..4).map(|b| block_key(0, 7000 + b)).collect::<Vec<_>>());
        // The 4-block sequence is at the bottom; reference its first block.
        assert!(d.find(&Access::unit(block_key(0, 7000), 9)));
        let v = d.evict(&Access::default()).unwrap();
        assert_eq!(v.key, block_key(0, 7001), "referenced block skipped");
        assert!(d.contains(block_key(0, 7000)));
        assert_eq!(d.stack().stats.second_chances, 1);
    }

    #[test]
    fn parameters_scale_and_validate() {
        let p = DuloParams::scaled(1024);
        assert_eq!((p.bank, p.evict, p.corr), (8, 128, 888));
        assert!(build("dulo:bank=0", 100).is_err());
        assert!(build("dulo:bank=4,corr=0,evict=3", 8).is_err());
        assert!(build("dulo:bank=4,corr=0,evict=4", 8).is_ok());
        assert!(build("dulo:hits=lru", 8).is_err());
        assert!(build("dulo:bnak=4", 8).is_err());
        let d = build("dulo:hits=gds,bank=4,corr=0", 8).unwrap();
        assert_eq!(d.name(), "dulo");
    }

    #[test]
    fn block_table_reclaims_under_limit() {
        let mut p = DuloParams::scaled(64);
        p.table_kib = 64;
        let mut d = Dulo::new(64, p);
        // Random blocks spread over a large disk: each needs its own leaf.
        let keys: Vec<Key> = (0..3000u64).map(|i| block_key(0, (i * 2_654_435_761) % (1 << 40))).collect();
        insert_run(&mut d, &keys);
        assert!(d.stack().stats.table_reclaims > 0);
        assert!(d.block_table_bytes() <= 64 * 1024 + 64 * 6 * 4096, "{}", d.block_table_bytes());
    }

    #[test]
    fn common_contract() {
        testutil::check_contract(|c| build("dulo", c).unwrap());
        testutil::check_contract(|c| build("dulo:hits=gds", c).unwrap());
        testutil::check_contract(|c| build(&format!("dulo:bank={},corr=0", c.min(4)), c).unwrap());
    }
}
