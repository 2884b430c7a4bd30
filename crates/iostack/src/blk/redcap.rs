//! REDCAP: a RAM cache of disk segments between the page cache and the I/O scheduler
//! (González-Férez, Piernas and Cortes, Computer Journal 59(10), 2016, §4, l.120-143; spec
//! `specs/kdsim-redcap.md` §1.5, K9, K11, K12).
//!
//! The cache holds N segments of S' consecutive blocks (the paper's 64 MB as 512 segments of
//! 128 KiB), aligned on multiples of S' blocks ("some prefetched blocks may be located before the
//! requested blocks", l.126), managed independently with LRU replacement over segments (l.124).
//!
//! - A read is cut into one *partial* per segment it touches (l.128); the read completes when all
//!   its partials have. A partial whose blocks are all cached and valid is a hit, served from RAM
//!   after the copy time (`hit` per block, K9). A partial whose segment is being read waits for that
//!   read (K12: no second read). Otherwise it is a miss: the whole segment is read through the
//!   scheduler (the requested blocks and the "prefetched" ones, before and after them, which is what
//!   lets the drive's immediate read help, footnote l.132), replacing the least recently used
//!   segment not being read. A miss, like a wait for a segment in flight, then pays the same copy
//!   of its requested blocks as a hit (K9): when the segment read completes, its blocks are held
//!   back from the completion and complete one copy time later ([`StageActions::hold`]).
//! - A write goes to the disk unmodified and invalidates the cached blocks it covers (l.130-137;
//!   K11: a per-block valid bitmap; a read needing an invalid block re-reads the whole segment).
//!
//! Alone, this stage is always active; ADA (`blk::ada`) switches it on and off, driving a cache of
//! this type through [`Redcap::read`], [`Redcap::write`] and [`Redcap::read_done`].

use rustc_hash::FxHashMap as HashMap;

use super::{BlockStage, StageActions, Submit};
use crate::device::Service;
use crate::error::ConfigError;
use crate::sched::{Cause, IoRequest};
use crate::trace::Op;

/// Settings: segment count, blocks per segment, copy time per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RedcapConfig {
    pub segments: u32,
    pub segment_blocks: u32,
    pub hit_ns_per_block: u64,
}

impl RedcapConfig {
    /// The copy time of `blocks` blocks (a hit, and a miss after its segment read; K9).
    pub fn copy_ns(&self, blocks: u32) -> u64 {
        self.hit_ns_per_block * blocks as u64
    }

    /// The paper's cache (512 × 128 KiB) for `page_bytes` pages, 5 µs per 4 KiB copied (K9).
    pub fn paper(page_bytes: u64) -> RedcapConfig {
        let segment_blocks = ((128 << 10) / page_bytes).max(1) as u32;
        RedcapConfig { segments: 512, segment_blocks, hit_ns_per_block: 5_000 * page_bytes / 4096 }
    }

    /// Parses `on` or `size=64MiB,segment=128KiB,hit=5us` (any subset) for `page_bytes` pages.
    pub fn parse(text: &str, page_bytes: u64) -> Result<RedcapConfig, ConfigError> {
        let mut size = 64u64 << 20;
        let mut segment = 128u64 << 10;
        let mut hit = 5_000f64;
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty() && *s != "on") {
            let (k, v) = item.split_once('=').ok_or_else(|| ConfigError::new("--redcap", format!("`{item}` is not key=value (size, segment, hit)")))?;
            let bytes = |v: &str| -> Result<u64, ConfigError> {
                match crate::units::Size::parse(&format!("--redcap {k}"), v)? {
                    crate::units::Size::Bytes(b) | crate::units::Size::Count(b) => Ok(b),
                }
            };
            match k.trim() {
                "size" => size = bytes(v)?,
                "segment" => segment = bytes(v)?,
                "hit" => hit = crate::device::parse_duration("--redcap hit", v)?,
                other => return Err(ConfigError::unknown("--redcap", "REDCAP parameter", other, &["size", "segment", "hit"])),
            }
        }
        if segment == 0 || segment % page_bytes != 0 {
            return Err(ConfigError::new("--redcap segment", format!("{segment} bytes is not a whole number of {page_bytes}-byte pages")));
        }
        if size < segment || size % segment != 0 {
            return Err(ConfigError::new("--redcap size", format!("{size} bytes is not a whole number (at least one) of {segment}-byte segments")));
        }
        let segment_blocks = u32::try_from(segment / page_bytes).map_err(|_| ConfigError::new("--redcap segment", "too large"))?;
        let segments = u32::try_from(size / segment).map_err(|_| ConfigError::new("--redcap size", "too many segments"))?;
        Ok(RedcapConfig { segments, segment_blocks, hit_ns_per_block: (hit * page_bytes as f64 / 4096.0).round() as u64 })
    }
}

/// What REDCAP did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RedcapCounts {
    /// Original reads seen.
    pub requests: u64,
    /// Per-segment pieces of them.
    pub partials: u64,
    /// Pieces that read their segment.
    pub misses: u64,
    /// Pieces served from the cache or by a segment read already in flight.
    pub partial_hits: u64,
    /// Of those, pieces that waited for a segment in flight.
    pub hits_in_flight: u64,
    /// Original reads served entirely from REDCAP (every piece a hit).
    pub hits: u64,
    /// Blocks its segment reads fetched.
    pub blocks_read: u64,
    /// Writes that invalidated cached blocks.
    pub invalidating_writes: u64,
}

impl RedcapCounts {
    /// Adds `o`'s counts to these.
    pub fn add(&mut self, o: &RedcapCounts) {
        self.requests += o.requests;
        self.partials += o.partials;
        self.misses += o.misses;
        self.partial_hits += o.partial_hits;
        self.hits_in_flight += o.hits_in_flight;
        self.hits += o.hits;
        self.blocks_read += o.blocks_read;
        self.invalidating_writes += o.invalidating_writes;
    }
}

#[derive(Debug, Clone)]
struct Segment {
    key: (u32, u64),
    /// Valid blocks (bit i: block i of the segment).
    valid: Vec<u64>,
    in_flight: bool,
    /// The clock of its last use.
    stamp: u64,
    /// Its neighbours in the LRU order (slots; [`NIL`] at the ends and out of the order).
    prev: u32,
    next: u32,
}

impl Segment {
    fn all_valid(&self, from: u32, to: u32) -> bool {
        (from..to).all(|i| self.valid[(i / 64) as usize] >> (i % 64) & 1 == 1)
    }
}

/// No slot.
const NIL: u32 = u32::MAX;

/// The cached segments, in slots reused after eviction, and the LRU order of those that may be
/// replaced (not being read), oldest use first, as a list linked through the slots. A segment
/// being read is kept out of the order, so that finding the victim never walks past segments in
/// flight (a simulated cache whose virtual disk lags may have thousands); it comes in at its
/// last use's stamp when its read completes. The order is always by stamp: a use moves its
/// segment to the end (its stamp is the newest), and a segment coming in is placed by its stamp,
/// walking from the end (past the segments used since its own last use).
#[derive(Debug, Clone)]
struct Segments {
    slots: Vec<Segment>,
    free: Vec<u32>,
    index: HashMap<(u32, u64), u32>,
    /// Least and most recently used segments of the order.
    head: u32,
    tail: u32,
}

impl Segments {
    fn new() -> Segments {
        Segments { slots: Vec::new(), free: Vec::new(), index: HashMap::default(), head: NIL, tail: NIL }
    }

    fn len(&self) -> usize {
        self.index.len()
    }

    fn slot(&self, key: (u32, u64)) -> Option<u32> {
        self.index.get(&key).copied()
    }

    fn get(&self, key: (u32, u64)) -> Option<&Segment> {
        self.slot(key).map(|i| &self.slots[i as usize])
    }

    fn clear(&mut self) {
        self.slots.clear();
        self.free.clear();
        self.index.clear();
        self.head = NIL;
        self.tail = NIL;
    }

    /// A new segment being read, out of the order, none of its `words` words of blocks valid.
    fn insert(&mut self, key: (u32, u64), words: usize) -> u32 {
        let seg = Segment { key, valid: Vec::new(), in_flight: true, stamp: 0, prev: NIL, next: NIL };
        let i = match self.free.pop() {
            Some(i) => {
                let old = std::mem::replace(&mut self.slots[i as usize], seg);
                self.slots[i as usize].valid = old.valid;
                i
            }
            None => {
                self.slots.push(seg);
                (self.slots.len() - 1) as u32
            }
        };
        let valid = &mut self.slots[i as usize].valid;
        valid.clear();
        valid.resize(words, 0);
        self.index.insert(key, i);
        i
    }

    /// Takes slot `i` out of the order.
    fn unlink(&mut self, i: u32) {
        let (prev, next) = (self.slots[i as usize].prev, self.slots[i as usize].next);
        match prev {
            NIL => self.head = next,
            p => self.slots[p as usize].next = next,
        }
        match next {
            NIL => self.tail = prev,
            n => self.slots[n as usize].prev = prev,
        }
        self.slots[i as usize].prev = NIL;
        self.slots[i as usize].next = NIL;
    }

    /// Puts slot `i` (out of the order) in it by its stamp.
    fn link_by_stamp(&mut self, i: u32) {
        let stamp = self.slots[i as usize].stamp;
        let mut after = self.tail;
        while after != NIL && self.slots[after as usize].stamp > stamp {
            after = self.slots[after as usize].prev;
        }
        let next = match after {
            NIL => std::mem::replace(&mut self.head, i),
            a => std::mem::replace(&mut self.slots[a as usize].next, i),
        };
        match next {
            NIL => self.tail = i,
            n => self.slots[n as usize].prev = i,
        }
        self.slots[i as usize].prev = after;
        self.slots[i as usize].next = next;
    }

    /// Removes the least recently used segment of the order, if any.
    fn evict_oldest(&mut self) {
        let i = self.head;
        if i == NIL {
            return;
        }
        self.unlink(i);
        let key = self.slots[i as usize].key;
        self.index.remove(&key);
        self.free.push(i);
    }
}

/// The REDCAP stage.
pub struct Redcap {
    cfg: RedcapConfig,
    segments: Segments,
    clock: u64,
    counts: RedcapCounts,
    /// Partials waiting for their segment's read (misses and waits for a segment in flight), to
    /// be copied when it completes; kept across [`Redcap::clear`], since the read still comes.
    waiting: HashMap<(u32, u64), Vec<IoRequest>>,
    /// Emptied lists of `waiting`, reused.
    spare: Vec<Vec<IoRequest>>,
    /// Scratch for [`Redcap::read`]'s partials.
    parts: Vec<Partial>,
}

/// What became of one partial of a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Served from the cache after the copy time.
    Hit,
    /// Waits for its segment being read.
    InFlight,
    /// Its segment read was issued.
    Miss,
}

/// One partial of a read: its segment, its blocks and what became of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partial {
    pub segment: (u32, u64),
    pub blocks: u32,
    pub outcome: Outcome,
}

impl Redcap {
    pub fn new(cfg: RedcapConfig) -> Redcap {
        Redcap { cfg, segments: Segments::new(), clock: 0, counts: RedcapCounts::default(), waiting: HashMap::default(), spare: Vec::new(), parts: Vec::new() }
    }

    pub fn counts(&self) -> RedcapCounts {
        self.counts
    }

    pub fn config(&self) -> RedcapConfig {
        self.cfg
    }

    /// The cache key of the segment holding `block` of `device`.
    pub fn segment_of(&self, device: u32, block: u64) -> (u32, u64) {
        (device, block / self.cfg.segment_blocks as u64)
    }

    /// Whether segment `key` is being read.
    pub fn in_flight(&self, key: (u32, u64)) -> bool {
        self.segments.get(key).is_some_and(|s| s.in_flight)
    }

    /// Empties the cache (counts are kept; reads waiting for a segment in flight still get their
    /// copy when it arrives).
    pub fn clear(&mut self) {
        self.segments.clear();
    }

    /// A copy of the cache's metadata with counts at zero, segments being read taken as read (the
    /// simulated cache ADA starts from when it turns REDCAP off, K7).
    pub fn settled_copy(&self) -> Redcap {
        let mut c = Redcap { segments: self.segments.clone(), clock: self.clock, ..Redcap::new(self.cfg) };
        for &i in self.segments.index.values() {
            if c.segments.slots[i as usize].in_flight {
                c.segments.slots[i as usize].in_flight = false;
                c.segments.slots[i as usize].valid.iter_mut().for_each(|w| *w = u64::MAX);
                c.segments.link_by_stamp(i);
            }
        }
        c
    }

    /// A write goes to the disk: the cached blocks it covers become invalid (K11).
    pub fn write(&mut self, req: &IoRequest) {
        let sb = self.cfg.segment_blocks as u64;
        let mut touched = false;
        for s in req.block / sb..=(req.end() - 1) / sb {
            if let Some(i) = self.segments.slot((req.device, s)) {
                let seg = &mut self.segments.slots[i as usize];
                let from = req.block.max(s * sb) - s * sb;
                let to = req.end().min((s + 1) * sb) - s * sb;
                for i in from..to {
                    seg.valid[(i / 64) as usize] &= !(1u64 << (i % 64));
                }
                touched = true;
            }
        }
        self.counts.invalidating_writes += touched as u64;
    }

    /// A read arrives at `now_ns`: one partial per segment, each a hit (served after the copy
    /// time), a wait for its segment in flight, or a miss (its segment read issued); the last two
    /// are copied when their segment's read completes ([`Redcap::read_done`]). `parts` is
    /// cleared and gets what became of each partial, in block order.
    pub fn read(&mut self, req: IoRequest, now_ns: u64, out: &mut StageActions, parts: &mut Vec<Partial>) {
        parts.clear();
        let sb = self.cfg.segment_blocks as u64;
        self.counts.requests += 1;
        let mut all_hit = true;
        for s in req.block / sb..=(req.end() - 1) / sb {
            self.counts.partials += 1;
            let key = (req.device, s);
            let (from, to) = (req.block.max(s * sb), req.end().min((s + 1) * sb));
            let part = IoRequest { block: from, blocks: (to - from) as u32, ..req };
            let slot = self.segments.slot(key);
            let outcome = match slot.map(|i| &self.segments.slots[i as usize]) {
                Some(seg) if seg.in_flight => {
                    // K12: wait for the segment being read; its completion completes these blocks.
                    self.counts.partial_hits += 1;
                    self.counts.hits_in_flight += 1;
                    self.touch(slot.expect("cached"));
                    self.wait(key, part);
                    Outcome::InFlight
                }
                Some(seg) if seg.all_valid((from - s * sb) as u32, (to - s * sb) as u32) => {
                    self.counts.partial_hits += 1;
                    self.touch(slot.expect("cached"));
                    out.serve(part, now_ns + self.cfg.copy_ns(part.blocks));
                    Outcome::Hit
                }
                _ => {
                    all_hit = false;
                    self.counts.misses += 1;
                    let i = match slot {
                        None => {
                            self.make_room();
                            self.segments.insert(key, sb.div_ceil(64) as usize)
                        }
                        Some(i) => {
                            self.segments.slots[i as usize].in_flight = true;
                            self.segments.unlink(i);
                            i
                        }
                    };
                    self.touch(i);
                    self.counts.blocks_read += sb;
                    out.issue(IoRequest { block: s * sb, blocks: sb as u32, cause: if req.sync { Cause::Demand } else { Cause::Prefetch }, ..req });
                    self.wait(key, part);
                    Outcome::Miss
                }
            };
            parts.push(Partial { segment: key, blocks: part.blocks, outcome });
        }
        self.counts.hits += all_hit as u64;
    }

    /// `part` waits for segment `key`'s read.
    fn wait(&mut self, key: (u32, u64), part: IoRequest) {
        let spare = &mut self.spare;
        self.waiting.entry(key).or_insert_with(|| spare.pop().unwrap_or_default()).push(part);
    }

    /// A device read of `req`'s range completed at `now_ns`: every segment in flight inside it is
    /// now cached, all valid (segment reads may have been merged with others), and the partials
    /// waiting for those segments are held back from the completion, to complete after the copy
    /// of their blocks (K9).
    pub fn read_done(&mut self, req: &IoRequest, now_ns: u64, out: &mut StageActions) {
        let sb = self.cfg.segment_blocks as u64;
        for s in req.block.div_ceil(sb)..req.end() / sb {
            let key = (req.device, s);
            if let Some(i) = self.segments.slot(key) {
                let seg = &mut self.segments.slots[i as usize];
                if seg.in_flight {
                    seg.in_flight = false;
                    seg.valid.iter_mut().for_each(|w| *w = u64::MAX);
                    self.segments.link_by_stamp(i);
                }
            }
            if self.waiting.is_empty() {
                continue;
            }
            if let Some(mut parts) = self.waiting.remove(&key) {
                for p in parts.drain(..) {
                    out.hold(p, now_ns + self.cfg.copy_ns(p.blocks));
                }
                self.spare.push(parts);
            }
        }
    }

    /// A use of the segment in slot `i`: the newest stamp, the end of the order (if in it).
    fn touch(&mut self, i: u32) {
        self.clock += 1;
        self.segments.slots[i as usize].stamp = self.clock;
        if !self.segments.slots[i as usize].in_flight {
            self.segments.unlink(i);
            self.segments.link_by_stamp(i);
        }
    }

    /// Room for one more segment: the least recently used one not being read goes (none when
    /// every segment is being read).
    fn make_room(&mut self) {
        if self.segments.len() < self.cfg.segments as usize {
            return;
        }
        self.segments.evict_oldest();
    }
}

impl BlockStage for Redcap {
    fn name(&self) -> String {
        format!("redcap:segments={},segment_blocks={},hit={}ns", self.cfg.segments, self.cfg.segment_blocks, self.cfg.hit_ns_per_block)
    }

    fn submit(&mut self, req: IoRequest, now_ns: u64, out: &mut StageActions) -> Submit {
        if req.op == Op::Write {
            self.write(&req);
            return Submit::Pass;
        }
        let mut parts = std::mem::take(&mut self.parts);
        self.read(req, now_ns, out, &mut parts);
        self.parts = parts;
        Submit::Take
    }

    fn completed(&mut self, req: &IoRequest, _service: &Service, now_ns: u64, out: &mut StageActions) {
        if req.op != Op::Write {
            self.read_done(req, now_ns, out);
        }
    }

    fn report(&self) -> serde_json::Value {
        serde_json::to_value(self.counts).unwrap_or(serde_json::Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::timed::{StackConfig, TimedRun};
    use crate::workload::streams::{Merged, Placement};

    fn counts_of(v: &serde_json::Value) -> RedcapCounts {
        let s = &v["blk"]["stage"];
        let n = |k: &str| s[k].as_u64().unwrap_or_else(|| panic!("{k} missing in {s}"));
        RedcapCounts {
            requests: n("requests"),
            partials: n("partials"),
            misses: n("misses"),
            partial_hits: n("partial_hits"),
            hits_in_flight: n("hits_in_flight"),
            hits: n("hits"),
            blocks_read: n("blocks_read"),
            invalidating_writes: n("invalidating_writes"),
        }
    }

    fn run_with(cfg: &StackConfig, reader: &mut dyn crate::trace::TraceReader) -> RedcapCounts {
        let mut run = TimedRun::new(cfg).unwrap();
        run.set_stage(Box::new(Redcap::new(RedcapConfig::paper(4096))));
        let rep = run.run(reader).unwrap();
        counts_of(&serde_json::to_value(&rep).unwrap())
    }

    /// Page cache bypassed: no prefetching, and a cache too small for any reuse to matter.
    fn bypass() -> StackConfig {
        StackConfig { sched: "noop".into(), prefetch: "none".into(), cache: "8".into(), max_request: "128KiB".into(), ..Default::default() }
    }

    fn run(streams: Vec<crate::workload::streams::Stream>) -> RedcapCounts {
        run_with(&bypass(), &mut Merged::new("t", streams))
    }

    /// D-R1: REDCAP's segment arithmetic on the paper's patterns (1 GiB files, 512 × 128 KiB).
    #[test]
    fn paper_segment_arithmetic() {
        let tac = run(crate::workload::tac::Tac::default().streams(1, &mut Placement::default()));
        assert_eq!((tac.requests, tac.misses, tac.hits, tac.blocks_read), (131_072, 8_192, 122_880, 262_144));
        let sr8 = run(crate::workload::stride::Stride::sr8k().streams(1, &mut Placement::default()));
        assert_eq!((sr8.requests, sr8.misses, sr8.hits), (87_382, 8_192, 79_190));
        let sr512 = run(crate::workload::stride::Stride::sr512k().streams(1, &mut Placement::default()));
        assert_eq!((sr512.requests, sr512.misses, sr512.hits, sr512.blocks_read), (8_132, 8_132, 0, 260_224));
    }

    /// D-R2: a write invalidates the block it writes only; reading it again re-reads the segment,
    /// the segment's other blocks stay hits.
    #[test]
    fn writes_invalidate_their_blocks() {
        use crate::trace::{Op, Request, VecReader};
        let at = |op, block: u64| Request { time_ns: 0, offset: block * 4096, length: 4096, pid: 1, device: 0, op, file: None };
        let reqs = vec![at(Op::Read, 0), at(Op::Write, 1), at(Op::Read, 2), at(Op::Read, 1), at(Op::Read, 3)];
        let cfg = StackConfig { cache: "1".into(), write_policy: crate::engine::timed::WritePolicy::Through, ..bypass() };
        let c = run_with(&cfg, &mut VecReader::new(reqs));
        assert_eq!(c.invalidating_writes, 1);
        assert_eq!((c.requests, c.misses, c.hits), (4, 2, 2), "{c:?}");
        assert_eq!(c.blocks_read, 64);
    }

    /// K9: a hit costs the copy of its blocks; a miss its segment read and then the same copy;
    /// a read waiting for its segment in flight the rest of that read and the copy; a read across
    /// two segments the longer of its partials.
    #[test]
    fn a_miss_pays_its_segment_read_and_the_copy() {
        use crate::trace::{Op, Request, VecReader};
        let ms = 1_000_000;
        let read = |pid: u32, t: u64, block: u64, blocks: u64| Request { time_ns: t, offset: block * 4096, length: blocks * 4096, pid, device: 0, op: Op::Read, file: None };
        let reqs = vec![
            read(1, 0, 0, 1),                // miss: 1 ms + 5 µs
            read(2, 10 * ms, 1, 2),          // hit: 2 × 5 µs
            read(3, 20 * ms, 31, 2),         // block 31 hits, block 32 misses: 1 ms + 5 µs
            read(4, 30 * ms, 64, 1),         // miss: 1 ms + 5 µs
            read(5, 30 * ms + ms / 2, 65, 3), // waits for segment 2's read: 0.5 ms + 15 µs
        ];
        let cfg = StackConfig { device: "fixed:1ms".into(), ..bypass() };
        let mut run = TimedRun::new(&cfg).unwrap();
        run.set_stage(Box::new(Redcap::new(RedcapConfig::paper(4096))));
        let rep = run.run(&mut VecReader::new(reqs)).unwrap();
        let resp: Vec<(u32, f64)> = rep.processes.iter().map(|p| (p.pid, p.mean_response_ns)).collect();
        assert_eq!(resp, vec![(1, 1_005_000.0), (2, 10_000.0), (3, 1_005_000.0), (4, 1_005_000.0), (5, 515_000.0)]);
        let c = counts_of(&serde_json::to_value(&rep).unwrap());
        assert_eq!((c.requests, c.misses, c.hits, c.hits_in_flight), (5, 3, 2, 1), "{c:?}");
        // The device's own responses are the segment reads alone.
        assert_eq!(rep.device_response.read.max_ns, ms);
    }

    /// The LRU order holds exactly the cached segments not being read, by stamp, linked both
    /// ways; checked after every step of random reads, writes and completions on a small cache
    /// (so the victim, its first entry, is the least recently used segment not being read).
    #[test]
    fn lru_order_is_by_stamp_through_random_use() {
        fn check(c: &Redcap) {
            let seg = &c.segments;
            let (mut i, mut prev, mut last, mut n) = (seg.head, NIL, None, 0);
            while i != NIL {
                let s = &seg.slots[i as usize];
                assert_eq!(seg.slot(s.key), Some(i), "a linked slot is cached");
                assert!(!s.in_flight, "a segment being read is out of the order");
                assert_eq!(s.prev, prev);
                assert!(last.is_none_or(|l| l < s.stamp), "by stamp");
                (last, prev, i, n) = (Some(s.stamp), i, s.next, n + 1);
            }
            assert_eq!(seg.tail, prev);
            assert_eq!(n, seg.index.values().filter(|&&i| !seg.slots[i as usize].in_flight).count());
        }
        let cfg = RedcapConfig { segments: 6, segment_blocks: 4, hit_ns_per_block: 1 };
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let mut rnd = move |n: u64| rng.gen_range(0..n);
        let (mut c, mut out, mut parts) = (Redcap::new(cfg), StageActions::default(), Vec::new());
        let (mut reading, mut past): (Vec<IoRequest>, RedcapCounts) = Default::default();
        for step in 0..20_000u64 {
            let (block, blocks) = (rnd(48), 1 + rnd(6) as u32);
            let req = IoRequest { op: Op::Read, device: 0, block, blocks, sync: true, cause: Cause::Demand, arrival_ns: step, pid: 1 };
            match rnd(10) {
                0 => c.write(&IoRequest { op: Op::Write, ..req }),
                1..=3 if !reading.is_empty() => {
                    let r = reading.swap_remove(rnd(reading.len() as u64) as usize);
                    c.read_done(&r, step, &mut out);
                }
                4 if rnd(50) == 0 => {
                    past.add(&c.counts());
                    c = c.settled_copy();
                }
                _ => {
                    c.read(req, step, &mut out, &mut parts);
                    reading.append(&mut out.issue);
                }
            }
            out.serve.clear();
            out.hold.clear();
            check(&c);
        }
        past.add(&c.counts());
        assert!(past.misses > 1000 && past.hits > 1000, "{past:?}");
    }

    #[test]
    fn parse() {
        assert_eq!(RedcapConfig::parse("on", 4096).unwrap(), RedcapConfig::paper(4096));
        let c = RedcapConfig::parse("size=1MiB,segment=64KiB,hit=2us", 4096).unwrap();
        assert_eq!((c.segments, c.segment_blocks, c.hit_ns_per_block), (16, 16, 2000));
        for bad in ["size=1000", "segment=5000", "colour=red", "size"] {
            assert!(RedcapConfig::parse(bad, 4096).is_err(), "{bad}");
        }
    }
}
