//! The miss-ratio engine.
//!
//! Object mode: one request is one object keyed by its start offset; its size is the request's
//! length, or 1 with `unit_size` (libCacheSim's `ignore_obj_size`). Capacity is in objects
//! (unit size) or bytes.
//!
//! Block mode: a request is split into the `page_size` blocks it touches, each keyed by
//! (device, block number) and of size 1; capacity is in blocks. A request hits when all its blocks
//! hit. Reads and writes both go through the cache (write-allocate): a write brings its blocks in
//! like a read, as a page cache does before it writes a partial page back.
//!
//! # Sweeps
//!
//! A study usually asks for many (policy, capacity) pairs over one trace. [`sweep`] reads the
//! trace once, in batches, and hands every batch to every run: the reader runs on the calling
//! thread and the runs are spread over worker threads, each fed through a bounded channel of
//! shared (`Arc`) batches, so parsing costs the same for one run or fifty and the runs of a
//! sweep use all cores. A run is never split across threads: it sees the requests in trace order
//! on one thread, so its result is bit-identical whatever the number of threads.
//!
//! Policies that look into the future (Belady's OPT, [`Policy::needs_future`]) need, for each
//! reference, the position of the next reference to the same key. A pre-pass over the trace
//! collects the reference keys (object keys in object mode, block keys in block mode) and
//! [`next_use_positions`] turns them into that table, shared by all such runs of the sweep.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::cache::{self, block_key, Access, Key, Policy};
use crate::engine::future::next_use_positions;
use crate::engine::processes::{file_block, ProcessResult, Processes};
use crate::engine::series::{Interval, SimSeries, SimSeriesCounter};
pub use crate::engine::footprint::CacheSize;
use crate::error::{ConfigError, Error, TraceError};
use crate::units::Size;
use crate::trace::devices::{object_key, DenseDevices, DeviceTable, KeySpace};
use crate::trace::{read_all, Request, TraceReader};

mod sweeps;
#[cfg(test)]
mod tests;

pub use sweeps::*;

/// How requests map to cache entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "mode", rename_all = "lowercase")]
pub enum Mode {
    /// One object per request, keyed by its start offset.
    Object { unit_size: bool },
    /// Requests split into blocks of `page_size` bytes.
    Block { page_size: u64 },
}

impl Mode {
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Object { .. } => "object",
            Mode::Block { .. } => "block",
        }
    }

    /// What the capacity counts: `objects`, `bytes` or `blocks`.
    pub fn cache_unit(&self) -> &'static str {
        match self {
            Mode::Object { unit_size: true } => "objects",
            Mode::Object { unit_size: false } => "bytes",
            Mode::Block { .. } => "blocks",
        }
    }

    /// The capacity of a cache of `size` in this mode's unit (`text` is how the user wrote it,
    /// for messages). A plain count is taken in the cache's unit. A byte size is: rejected with
    /// unit size (the cache counts objects of size 1, so bytes mean nothing); taken as it is in
    /// sized object mode (the capacity is bytes); divided by the page size in block mode (it
    /// must hold at least one page). Zero is rejected.
    pub fn capacity(&self, size: Size, text: &str) -> Result<u64, ConfigError> {
        let cap = match (*self, size) {
            (Mode::Object { unit_size: true }, Size::Bytes(_)) => {
                return Err(ConfigError::new(
                    "--cache",
                    format!("`{text}` is a byte size, but with unit size the cache counts objects; give a count"),
                ))
            }
            (Mode::Object { .. }, s) => s.in_units(1),
            (Mode::Block { page_size }, Size::Bytes(b)) => {
                if b < page_size {
                    return Err(ConfigError::new("--cache", format!("`{text}` is smaller than one page of {page_size} bytes")));
                }
                b / page_size
            }
            (Mode::Block { .. }, Size::Count(n)) => n,
        };
        if cap == 0 {
            return Err(ConfigError::new("--cache", format!("`{text}`: the cache size must be at least 1")));
        }
        Ok(cap)
    }

    /// What keys are made of in this mode (see [`DenseDevices`]).
    pub fn key_space(&self) -> KeySpace {
        match *self {
            Mode::Object { .. } => KeySpace::Offsets,
            Mode::Block { page_size } => KeySpace::Blocks(page_size),
        }
    }

    fn check(&self) -> Result<(), ConfigError> {
        if let Mode::Block { page_size: 0 } = self {
            return Err(ConfigError::new("--page-size", "the page size must be at least 1 byte"));
        }
        Ok(())
    }
}

/// Counters of one simulation run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SimCounts {
    pub requests: u64,
    pub hits: u64,
    pub bytes: u64,
    pub byte_hits: u64,
    /// Block mode only.
    pub blocks: u64,
    pub block_hits: u64,
    /// Requests for an object larger than the whole cache (sized object mode), which can never
    /// be cached and always miss.
    #[serde(default)]
    pub larger_than_cache: u64,
}

impl SimCounts {
    /// Adds `o`'s counts.
    pub fn add(&mut self, o: &SimCounts) {
        self.requests += o.requests;
        self.hits += o.hits;
        self.bytes += o.bytes;
        self.byte_hits += o.byte_hits;
        self.blocks += o.blocks;
        self.block_hits += o.block_hits;
        self.larger_than_cache += o.larger_than_cache;
    }

    /// The counts added since `before` (counts only grow).
    fn since(&self, before: &SimCounts) -> SimCounts {
        SimCounts {
            requests: self.requests - before.requests,
            hits: self.hits - before.hits,
            bytes: self.bytes - before.bytes,
            byte_hits: self.byte_hits - before.byte_hits,
            blocks: self.blocks - before.blocks,
            block_hits: self.block_hits - before.block_hits,
            larger_than_cache: self.larger_than_cache - before.larger_than_cache,
        }
    }

    fn ratio(miss: u64, total: u64) -> f64 {
        if total == 0 {
            0.0
        } else {
            miss as f64 / total as f64
        }
    }
    pub fn miss_ratio(&self) -> f64 {
        Self::ratio(self.requests - self.hits, self.requests)
    }
    /// Missed bytes over requested bytes; the request miss ratio when every request has length 0.
    pub fn byte_miss_ratio(&self) -> f64 {
        if self.bytes == 0 {
            return self.miss_ratio();
        }
        Self::ratio(self.bytes - self.byte_hits, self.bytes)
    }
    pub fn block_miss_ratio(&self) -> f64 {
        Self::ratio(self.blocks - self.block_hits, self.blocks)
    }
}

/// One run: a policy at one capacity, fed request by request.
pub struct SimRun {
    policy: Box<dyn Policy>,
    /// The policy's capacity, kept to count objects that can never fit.
    capacity: u64,
    mode: Mode,
    vtime: u64,
    /// Next-use positions by vtime, for policies that need the future.
    future: Option<Arc<Vec<u64>>>,
    pub counts: SimCounts,
    /// Buffers of [`SimRun::feed_batch`] (object mode), reused from chunk to chunk.
    accesses: Vec<Access>,
    hits: Vec<bool>,
    /// Per-process counts and application control (see [`crate::engine::processes`]); when set,
    /// requests are fed one by one.
    processes: Option<Box<Processes>>,
    /// Counts per interval (`--interval`), when asked for.
    series: Option<Box<SimSeriesCounter>>,
}

/// Requests per [`Policy::get_batch`] call: enough that the hints ahead lose little at chunk
/// edges, few enough that the access buffer (about 64 bytes each) stays in the L1/L2 cache.
const ACCESS_CHUNK: usize = 512;

impl SimRun {
    /// `capacity` is in the cache's unit: objects (unit size), bytes (sized object mode) or blocks.
    pub fn new(policy_spec: &str, capacity: u64, mode: Mode) -> Result<SimRun, ConfigError> {
        Self::with_policy(cache::build(policy_spec, capacity)?, mode)
    }

    /// A run of a policy the caller built (one defined outside the registry, such as a Python
    /// class), with its capacity in the cache's unit of `mode`.
    pub fn with_policy(policy: Box<dyn Policy>, mode: Mode) -> Result<SimRun, ConfigError> {
        mode.check()?;
        Ok(SimRun {
            capacity: policy.capacity(),
            policy,
            mode,
            vtime: 0,
            future: None,
            counts: SimCounts::default(),
            accesses: Vec::new(),
            hits: Vec::new(),
            processes: None,
            series: None,
        })
    }

    /// Counts per process, and delivers application control to the policy, from now on.
    pub fn set_processes(&mut self, p: Processes) {
        self.processes = Some(Box::new(p));
    }

    /// Counts hits and misses per interval from now on (see [`crate::engine::series`]).
    pub fn set_interval(&mut self, interval: Interval) {
        self.series = Some(Box::new(SimSeriesCounter::new(interval)));
    }

    /// The per-interval results, when counted.
    pub fn series(&self) -> Option<SimSeries> {
        self.series.as_ref().map(|s| s.report(matches!(self.mode, Mode::Block { .. })))
    }

    /// The per-process results, when counted.
    pub fn process_results(&self) -> Option<Vec<ProcessResult>> {
        self.processes.as_ref().map(|p| p.results(matches!(self.mode, Mode::Block { .. })))
    }

    /// One request with per-process counts and application control: the same references as
    /// `feed`, with the hints delivered around them.
    fn feed_tracked(&mut self, r: &Request) {
        let mut procs = self.processes.take().expect("tracked runs have processes");
        procs.before_request(&mut *self.policy, r);
        let tell = procs.controlled_policy();
        let (hit, blocks, block_hits) = match self.mode {
            Mode::Object { unit_size } => {
                if tell {
                    self.policy.next_file(Some(file_block(r, None, 0)));
                }
                let next_access = self.next_use(self.vtime);
                let before = self.counts.hits;
                self.feed_object(r, unit_size, next_access);
                procs.after_reference(&mut *self.policy, r.pid);
                (self.counts.hits > before, 0, 0)
            }
            Mode::Block { page_size } => {
                let (first, end) = r.block_range(page_size);
                let mut all = true;
                let mut hits = 0;
                for b in first..end {
                    if tell {
                        self.policy.next_file(Some(file_block(r, Some(page_size), b)));
                    }
                    let next_access = self.next_use(self.vtime);
                    let a = Access { key: block_key(r.device, b), size: 1, op: Some(r.op), pid: r.pid, time_ns: r.time_ns, vtime: self.vtime, next_access, ..Default::default() };
                    self.vtime += 1;
                    let hit = self.policy.get(&a);
                    procs.after_reference(&mut *self.policy, r.pid);
                    hits += hit as u64;
                    all &= hit;
                }
                let c = &mut self.counts;
                c.blocks += end - first;
                c.block_hits += hits;
                c.requests += 1;
                c.bytes += r.length;
                if all {
                    c.hits += 1;
                    c.byte_hits += r.length;
                }
                (all, end - first, hits)
            }
        };
        procs.after_request(&mut *self.policy, r.pid, hit, blocks, block_hits);
        self.processes = Some(procs);
    }

    pub fn policy(&self) -> &dyn Policy {
        &*self.policy
    }

    /// Whether the policy needs the next-use position of each reference (Belady).
    pub fn needs_future(&self) -> bool {
        self.policy.needs_future()
    }

    /// Gives the run the next-use position of every reference of the stream it will be fed,
    /// indexed by reference position (one reference per request in object mode, one per block in
    /// block mode), as [`next_use_positions`] computes it from [`reference_keys`]. `feed` then
    /// takes each reference's next use from it instead of its `next_access` argument. Runs of a
    /// sweep share one table (pass an `Arc`).
    pub fn set_future(&mut self, next_use: impl Into<Arc<Vec<u64>>>) {
        self.future = Some(next_use.into());
    }

    #[inline]
    fn next_use(&self, vtime: u64) -> u64 {
        match &self.future {
            Some(f) => f.get(vtime as usize).copied().unwrap_or(u64::MAX),
            None => u64::MAX,
        }
    }

    /// Feeds one request. `next_access` is the position of the next reference to the same
    /// object (object mode, for policies that need the future), else `u64::MAX`; a run given a
    /// next-use table with [`SimRun::set_future`] takes it from there instead.
    #[inline]
    pub fn feed(&mut self, r: &Request, next_access: u64) {
        if self.processes.is_some() {
            return self.feed_tracked(r);
        }
        match self.mode {
            Mode::Object { unit_size } => {
                let next_access = if self.future.is_some() { self.next_use(self.vtime) } else { next_access };
                self.feed_object(r, unit_size, next_access)
            }
            Mode::Block { page_size } => self.feed_block(r, page_size),
        }
    }

    /// Feeds a batch of requests in order. The mode is decided once per batch; in object mode the
    /// policy gets the requests in chunks through [`Policy::get_batch`].
    pub fn feed_batch(&mut self, batch: &[Request]) {
        match self.series.take() {
            None => self.feed_slice(batch),
            Some(mut series) => {
                // Slices that end where an interval ends, each fed as a batch of its own.
                let mut start = 0;
                let mut current = None;
                for (i, r) in batch.iter().enumerate() {
                    let interval = series.clock.next(r.time_ns);
                    if current != Some(interval) {
                        if let Some(c) = current {
                            self.feed_interval(&batch[start..i], c, &mut series);
                        }
                        (start, current) = (i, Some(interval));
                    }
                }
                if let Some(c) = current {
                    self.feed_interval(&batch[start..], c, &mut series);
                }
                self.series = Some(series);
            }
        }
    }

    fn feed_interval(&mut self, slice: &[Request], interval: u64, series: &mut SimSeriesCounter) {
        let before = self.counts.clone();
        self.feed_slice(slice);
        series.add(interval, &self.counts.since(&before));
    }

    fn feed_slice(&mut self, batch: &[Request]) {
        if self.processes.is_some() {
            for r in batch {
                self.feed_tracked(r);
            }
            return;
        }
        match (self.mode, self.future.is_some()) {
            (Mode::Object { unit_size }, with_future) => {
                for chunk in batch.chunks(ACCESS_CHUNK) {
                    self.feed_object_chunk(chunk, unit_size, with_future);
                }
            }
            (Mode::Block { page_size }, _) => {
                for r in batch {
                    self.feed_block(r, page_size);
                }
            }
        }
    }

    /// Object mode, a chunk at a time: the accesses are built into a reused buffer and handed
    /// to the policy in one [`Policy::get_batch`] call, which prefetches ahead within the chunk
    /// and calls `get` without dynamic dispatch; then the counters are summed.
    fn feed_object_chunk(&mut self, chunk: &[Request], unit_size: bool, with_future: bool) {
        let vtime = self.vtime;
        let future = if with_future { self.future.as_deref() } else { None };
        self.accesses.clear();
        self.accesses.extend(chunk.iter().enumerate().map(|(i, r)| {
            let vtime = vtime + i as u64;
            let next_access = future.map_or(u64::MAX, |f| f.get(vtime as usize).copied().unwrap_or(u64::MAX));
            let size = if unit_size { 1 } else { r.length };
            Access { key: object_key(r), size, op: Some(r.op), pid: r.pid, time_ns: r.time_ns, vtime, next_access, ..Default::default() }
        }));
        self.hits.clear();
        self.hits.resize(chunk.len(), false);
        self.policy.get_batch(&self.accesses, &mut self.hits);
        self.vtime += chunk.len() as u64;
        let c = &mut self.counts;
        c.requests += chunk.len() as u64;
        for (r, &hit) in chunk.iter().zip(&self.hits) {
            c.bytes += r.length;
            c.hits += hit as u64;
            c.byte_hits += if hit { r.length } else { 0 };
        }
        if !unit_size {
            c.larger_than_cache += chunk.iter().filter(|r| r.length > self.capacity).count() as u64;
        }
    }

    #[inline(always)]
    fn feed_object(&mut self, r: &Request, unit_size: bool, next_access: u64) {
        let c = &mut self.counts;
        c.requests += 1;
        c.bytes += r.length;
        let size = if unit_size { 1 } else { r.length };
        c.larger_than_cache += (size > self.capacity) as u64;
        let a = Access { key: object_key(r), size, op: Some(r.op), pid: r.pid, time_ns: r.time_ns, vtime: self.vtime, next_access, ..Default::default() };
        self.vtime += 1;
        if self.policy.get(&a) {
            c.hits += 1;
            c.byte_hits += r.length;
        }
    }

    #[inline]
    fn feed_block(&mut self, r: &Request, page_size: u64) {
        let (first, end) = r.block_range(page_size);
        let mut all = true;
        for b in first..end {
            let next_access = self.next_use(self.vtime);
            let a = Access { key: block_key(r.device, b), size: 1, op: Some(r.op), pid: r.pid, time_ns: r.time_ns, vtime: self.vtime, next_access, ..Default::default() };
            self.vtime += 1;
            let hit = self.policy.get(&a);
            self.counts.blocks += 1;
            self.counts.block_hits += hit as u64;
            all &= hit;
        }
        let c = &mut self.counts;
        c.requests += 1;
        c.bytes += r.length;
        if all {
            c.hits += 1;
            c.byte_hits += r.length;
        }
    }
}

/// Runs one policy over a whole trace (single-threaded; see [`sweep`] for many runs). A policy
/// that needs the future (Belady) reads the whole trace into memory first to compute each
/// reference's next use; the others stream.
pub fn simulate(reader: &mut dyn TraceReader, policy_spec: &str, capacity: u64, mode: Mode) -> Result<SimCounts, Error> {
    let mut run = SimRun::new(policy_spec, capacity, mode)?;
    let reader = &mut DenseDevices::new(reader, &DeviceTable::new(), mode.key_space());
    if run.needs_future() {
        let requests = read_all(reader)?;
        run.set_future(next_use_positions(&reference_keys(&requests, mode)));
        run.feed_batch(&requests);
        return Ok(run.counts);
    }
    let mut buf = Vec::with_capacity(1 << 14);
    loop {
        buf.clear();
        if reader.read_batch(&mut buf, 1 << 14)? == 0 {
            break;
        }
        run.feed_batch(&buf);
    }
    Ok(run.counts)
}

/// The keys of the cache references `requests` make in `mode`, in reference order: one per
/// request in object mode, one per block in block mode (what [`next_use_positions`] needs for
/// policies that look into the future).
pub fn reference_keys(requests: &[Request], mode: Mode) -> Vec<Key> {
    let mut keys = Vec::with_capacity(requests.len());
    append_reference_keys(&mut keys, requests, mode);
    keys
}

fn append_reference_keys(keys: &mut Vec<Key>, requests: &[Request], mode: Mode) {
    match mode {
        Mode::Object { .. } => keys.extend(requests.iter().map(object_key)),
        Mode::Block { page_size } => {
            for r in requests {
                let (first, end) = r.block_range(page_size);
                keys.extend((first..end).map(|b| block_key(r.device, b)));
            }
        }
    }
}

/// The reference keys of a whole trace, read in batches (the sweep's pre-pass).
fn trace_reference_keys(reader: &mut dyn TraceReader, mode: Mode) -> Result<Vec<Key>, TraceError> {
    let mut keys = Vec::new();
    let mut buf = Vec::with_capacity(1 << 14);
    loop {
        buf.clear();
        if reader.read_batch(&mut buf, 1 << 14)? == 0 {
            return Ok(keys);
        }
        append_reference_keys(&mut keys, &buf, mode);
    }
}
