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

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::cache::{self, block_key, Access, Key, Policy};
use crate::engine::future::next_use_positions;
use crate::engine::processes::{file_block, ProcessResult, Processes, TracePlan};
use crate::engine::series::{Interval, SimSeries, SimSeriesCounter};
use crate::hints::HintsSpec;
pub use crate::engine::footprint::CacheSize;
use crate::engine::footprint::FootprintCounter;
use crate::error::{ConfigError, Error, TraceError};
use crate::units::Size;
use crate::trace::devices::{object_key, DenseDevices, DeviceTable, KeySpace};
use crate::trace::{read_all, Format, ReaderOptions, Request, TraceReader};

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

/// Where a sweep gets its requests: something that can open the trace (more than once when a
/// future-aware policy needs the pre-pass), with a name and format for the results.
pub trait TraceSource: Sync {
    /// A fresh reader positioned at the first request.
    fn open(&self) -> Result<Box<dyn TraceReader>, Error>;
    /// How the trace is named in results (usually its path).
    fn name(&self) -> String;
    /// The trace format, echoed in results.
    fn format(&self) -> String;
}

/// Requests already in memory (generated workloads, Python arrays).
pub struct MemoryTrace {
    pub requests: Arc<Vec<Request>>,
    pub name: String,
}

impl MemoryTrace {
    pub fn new(requests: Vec<Request>, name: impl Into<String>) -> Self {
        MemoryTrace { requests: Arc::new(requests), name: name.into() }
    }
}

impl TraceSource for MemoryTrace {
    fn open(&self) -> Result<Box<dyn TraceReader>, Error> {
        Ok(Box::new(SharedVecReader { requests: self.requests.clone(), pos: 0, path: PathBuf::from(&self.name) }))
    }
    fn name(&self) -> String {
        self.name.clone()
    }
    fn format(&self) -> String {
        "memory".to_string()
    }
}

/// A trace file, opened with [`crate::trace::open`] (format given or detected).
///
/// The file is opened (and its format detected) once, by [`FileTrace::new`], and that reader is
/// the one the first [`TraceSource::open`] returns, so standard input (`-`), which can be read
/// only once, loses nothing to detection. A second pass (policies that need the future) opens
/// a file again; on standard input it is an error saying so.
pub struct FileTrace {
    pub path: PathBuf,
    /// The format given, if any (a second opening detects it again the same way otherwise).
    pub format: Option<Format>,
    pub options: ReaderOptions,
    /// The format used: the one given or the one detected.
    used: Format,
    opened: std::sync::Mutex<Option<Box<dyn TraceReader>>>,
}

impl FileTrace {
    /// Opens the file and detects its format before any work starts.
    pub fn new(path: impl Into<PathBuf>, format: Option<Format>, options: ReaderOptions) -> Result<FileTrace, TraceError> {
        let path = path.into();
        let (reader, used) = crate::trace::open_with_format(&path, format, &options)?;
        Ok(FileTrace { path, format, options, used, opened: std::sync::Mutex::new(Some(reader)) })
    }

    fn is_stdin(&self) -> bool {
        self.path == std::path::Path::new("-")
    }
}

impl TraceSource for FileTrace {
    fn open(&self) -> Result<Box<dyn TraceReader>, Error> {
        if let Some(r) = self.opened.lock().unwrap_or_else(|e| e.into_inner()).take() {
            return Ok(r);
        }
        if self.is_stdin() {
            return Err(TraceError::file(
                &self.path,
                "this run needs two passes over the trace (a policy that looks into the future, such as belady, \
                 first learns every reference's next use), and standard input can be read only once: give the trace as a file",
            )
            .into());
        }
        Ok(crate::trace::open(&self.path, self.format, &self.options)?)
    }
    fn name(&self) -> String {
        self.path.display().to_string()
    }
    fn format(&self) -> String {
        self.used.name().to_string()
    }
}

/// Reads a shared vector of requests without copying it first.
struct SharedVecReader {
    requests: Arc<Vec<Request>>,
    pos: usize,
    path: PathBuf,
}

impl TraceReader for SharedVecReader {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        let r = self.requests.get(self.pos).copied();
        self.pos += r.is_some() as usize;
        Ok(r)
    }
    fn read_batch(&mut self, buf: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        let end = (self.pos + max).min(self.requests.len());
        buf.extend_from_slice(&self.requests[self.pos..end]);
        let n = end - self.pos;
        self.pos = end;
        Ok(n)
    }
    fn path(&self) -> &std::path::Path {
        &self.path
    }
}

/// One run of a sweep: a policy spec and a capacity in the cache's unit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    pub policy: String,
    pub capacity: u64,
}

/// How a sweep runs.
#[derive(Debug, Clone)]
pub struct SweepConfig {
    pub mode: Mode,
    /// Worker threads; 0 means one per core.
    pub threads: usize,
    /// Requests per batch handed to the runs.
    pub batch_size: usize,
    /// Application hints for application-controlled policies (LRU-SP).
    pub hints: Option<Arc<HintsSpec>>,
    /// Count requests and hits per process in every run (always done for application-controlled
    /// policies).
    pub per_process: bool,
    /// Count hits and misses per interval in every run (`--interval`; `series` in the results).
    pub interval: Option<Interval>,
}

impl SweepConfig {
    pub fn new(mode: Mode) -> Self {
        SweepConfig { mode, threads: 0, batch_size: 1 << 14, hints: None, per_process: false, interval: None }
    }
}

/// Result of one run, with the configuration that produced it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimResult {
    pub trace: String,
    pub format: String,
    /// The policy spec as given (`lru`, `arc`, `slru:segments=4`).
    pub policy: String,
    /// Capacity in `cache_unit`: the absolute size, whichever way it was given.
    pub cache_size: u64,
    /// The size as given: `489`, `64MiB`, `1%`, `0.01` (a relative size is a fraction of
    /// `footprint`).
    #[serde(default)]
    pub cache_size_spec: String,
    /// The trace's footprint in `cache_unit` (distinct objects, bytes of distinct objects, or
    /// distinct blocks), when a cache size was relative to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint: Option<u64>,
    /// `objects` (unit-size object mode), `bytes` (sized object mode) or `blocks` (block mode).
    pub cache_unit: String,
    pub mode: String,
    pub unit_size: bool,
    /// Block size in bytes (block mode; echoed as given in object mode, where it is unused).
    pub page_size: u64,
    pub requests: u64,
    pub hits: u64,
    pub miss_ratio: f64,
    /// Missed bytes over requested bytes, counting each request's length.
    pub byte_miss_ratio: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_hits: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_miss_ratio: Option<f64>,
    /// Requests for objects larger than the whole cache (sized object mode): they always miss.
    #[serde(default)]
    pub requests_larger_than_cache: u64,
    /// Malformed lines or records skipped (`--skip-invalid`).
    pub skipped: u64,
    /// Entries cached at the end of the run.
    pub cached_objects: u64,
    /// Memory of the policy's metadata at the end of the run, per cached entry.
    pub metadata_bytes_per_object: f64,
    /// Per-process counts (`per_process`, and always for application-controlled policies),
    /// by pid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<Vec<ProcessResult>>,
    /// Hit and miss ratios per interval (`--interval`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<SimSeries>,
}

/// Progress of a sweep: requests read so far.
pub type ProgressFn<'a> = &'a mut dyn FnMut(u64);

/// A warning for a run where every request asked for an object larger than the whole cache, so
/// that the miss ratio is 1 whatever the policy (a cache size given in the wrong unit, most
/// often); `None` otherwise.
pub fn cache_too_small(r: &SimResult) -> Option<String> {
    (r.requests > 0 && r.requests_larger_than_cache == r.requests).then(|| {
        format!(
            "{} at {} {}: the cache is smaller than every object of the trace, so every request misses (sizes are in bytes in sized object mode; --unit-size counts objects)",
            r.policy, r.cache_size, r.cache_unit
        )
    })
}

/// Runs every (policy, capacity) of `runs` over the trace of `source`, reading it once (twice if a
/// policy needs the future). Results are in the order of `runs`. `page_size` is echoed in the
/// results (block mode uses the one in `cfg.mode`). `progress` is called after each batch with
/// the number of requests read so far.
pub fn sweep(source: &dyn TraceSource, runs: &[RunSpec], cfg: &SweepConfig, page_size: u64, progress: ProgressFn<'_>) -> Result<Vec<SimResult>, Error> {
    sweep_with(source, runs, cfg, page_size, None, progress, &mut |_, spec| cache::build(&spec.policy, spec.capacity))
}

/// Every policy of `policies` at every size of `sizes` (policies outer, sizes inner), sizes as
/// users write them: counts, byte sizes, or relative to the trace's footprint (`1%`, `0.01`;
/// see [`CacheSize`]). A relative size needs the footprint before the runs can be built, so the
/// trace is read once more first; that pass also collects the next-use table when a policy
/// needs the future, so the trace is never read more than twice. Each result echoes the size as
/// given (`cache_size_spec`), its absolute value (`cache_size`) and, for relative sizes, the
/// `footprint`.
pub fn sweep_sizes(
    source: &dyn TraceSource,
    policies: &[String],
    sizes: &[String],
    cfg: &SweepConfig,
    page_size: u64,
    progress: ProgressFn<'_>,
) -> Result<Vec<SimResult>, Error> {
    check_runs(policies, sizes, cfg.mode)?;
    let sizes: Vec<&String> = sizes.iter().filter(|s| !s.trim().is_empty()).collect();
    let pairs: Vec<(String, String)> = policies.iter().flat_map(|p| sizes.iter().map(move |s| (p.clone(), s.trim().to_string()))).collect();
    sweep_pairs(source, &pairs, cfg, page_size, progress)
}

/// [`sweep_sizes`] for any list of (policy, size) pairs, in that order.
pub fn sweep_pairs(
    source: &dyn TraceSource,
    pairs: &[(String, String)],
    cfg: &SweepConfig,
    page_size: u64,
    progress: ProgressFn<'_>,
) -> Result<Vec<SimResult>, Error> {
    let policies: Vec<String> = pairs.iter().map(|(p, _)| p.clone()).collect();
    let texts: Vec<String> = pairs.iter().map(|(_, s)| s.clone()).collect();
    let (sizes, future) = check_runs(&policies, &texts, cfg.mode)?;
    if sizes.len() != pairs.len() {
        return Err(ConfigError::new("--cache", "no cache size given").into());
    }
    let relative = sizes.iter().any(|(_, s)| s.is_relative());
    let (mut footprint, mut next_use) = (None, None);
    if relative || future {
        // Devices numbered densely in first-seen order, as the sweep's own passes number them,
        // so that keys (and the next-use table) are the same.
        let mut reader = DenseDevices::new(source.open()?, &DeviceTable::new(), cfg.mode.key_space());
        let mut counter = relative.then(|| FootprintCounter::new(cfg.mode));
        let mut keys = Vec::new();
        let mut buf = Vec::with_capacity(1 << 14);
        loop {
            buf.clear();
            if reader.read_batch(&mut buf, 1 << 14)? == 0 {
                break;
            }
            if let Some(c) = &mut counter {
                c.feed_batch(&buf);
            }
            if future {
                append_reference_keys(&mut keys, &buf, cfg.mode);
            }
        }
        footprint = counter.map(|c| c.footprint());
        if future {
            next_use = Some(Arc::new(next_use_positions(&keys)));
        }
    }
    let mut runs = Vec::with_capacity(pairs.len());
    let mut specs = Vec::with_capacity(pairs.len());
    for (p, (text, size)) in policies.iter().zip(&sizes) {
        // An empty trace has no footprint; the sweep reports it as empty.
        let capacity = match footprint {
            Some(0) if size.is_relative() => 1,
            fp => size.capacity(text, cfg.mode, fp)?,
        };
        runs.push(RunSpec { policy: p.clone(), capacity });
        specs.push((text.clone(), size.is_relative()));
    }
    let mut results = sweep_with(source, &runs, cfg, page_size, next_use, progress, &mut |_, spec| cache::build(&spec.policy, spec.capacity))?;
    for (r, (text, rel)) in results.iter_mut().zip(specs) {
        r.cache_size_spec = text;
        r.footprint = if rel { footprint } else { None };
    }
    Ok(results)
}

/// Checks the policies and sizes of [`sweep_sizes`] without reading the trace (a caller that
/// opens the trace first calls it, so that a typo fails before a missing file does). Returns
/// the parsed sizes and whether a policy needs the future.
pub fn check_runs(policies: &[String], sizes: &[String], mode: Mode) -> Result<(Vec<(String, CacheSize)>, bool), ConfigError> {
    mode.check()?;
    let sizes: Vec<(String, CacheSize)> = sizes
        .iter()
        .map(|t| t.trim())
        .filter(|t| !t.is_empty())
        .map(|t| Ok((t.to_string(), CacheSize::parse("--cache", t)?)))
        .collect::<Result<_, ConfigError>>()?;
    if sizes.is_empty() {
        return Err(ConfigError::new("--cache", "no cache size given"));
    }
    if policies.is_empty() {
        return Err(ConfigError::new("--policy", "no policy given"));
    }
    let mut future = false;
    for p in policies {
        future |= cache::build(p, 1)?.needs_future();
    }
    for (text, size) in &sizes {
        if let CacheSize::Absolute(s) = size {
            mode.capacity(*s, text)?;
        }
    }
    Ok((sizes, future))
}

/// [`sweep`] with the next-use table already computed when `next_use` is given, and the
/// policies built by `build`, called once per run with the run's index in `runs` (each run's
/// `policy` is then only its name in the results): how policies from outside the registry are
/// simulated.
pub fn sweep_with(
    source: &dyn TraceSource,
    runs: &[RunSpec],
    cfg: &SweepConfig,
    page_size: u64,
    next_use: Option<Arc<Vec<u64>>>,
    progress: ProgressFn<'_>,
    build: &mut dyn FnMut(usize, &RunSpec) -> Result<Box<dyn Policy>, ConfigError>,
) -> Result<Vec<SimResult>, Error> {
    cfg.mode.check()?;
    if runs.is_empty() {
        return Err(ConfigError::new("--policy", "no policy and cache size to simulate").into());
    }
    let mut sims = Vec::with_capacity(runs.len());
    for (i, spec) in runs.iter().enumerate() {
        sims.push(SimRun::with_policy(build(i, spec)?, cfg.mode)?);
    }

    let controlled = sims.iter().any(|s| s.policy().application_controlled());
    if cfg.hints.is_some() && !controlled {
        return Err(ConfigError::new(
            "--hints",
            "hints apply to application-controlled policies (lrusp); none of the policies given is one",
        )
        .into());
    }
    // Devices are numbered densely (keys hold 16 bits of device), the same way in every pass:
    // the hints' pre-pass, the future's and the run.
    let devices = DeviceTable::new();
    let open = || -> Result<DenseDevices<Box<dyn TraceReader>>, Error> { Ok(DenseDevices::new(source.open()?, &devices, cfg.mode.key_space())) };
    if controlled {
        let page_size = match cfg.mode {
            Mode::Block { page_size } => Some(page_size),
            Mode::Object { .. } => None,
        };
        let plan = TracePlan::scan(&mut open()?, page_size, matches!(cfg.hints.as_deref(), Some(HintsSpec::Oracle { .. })), false)?;
        if let Some(HintsSpec::File(h)) = cfg.hints.as_deref() {
            h.validate(&plan.facts)?;
        }
        for s in sims.iter_mut() {
            if s.policy().application_controlled() {
                s.set_processes(Processes::controlled(cfg.hints.as_deref(), &plan));
            }
        }
    }
    if cfg.per_process {
        for s in sims.iter_mut().filter(|s| s.processes.is_none()) {
            s.set_processes(Processes::counting());
        }
    }
    if let Some(interval) = cfg.interval {
        for s in sims.iter_mut() {
            s.set_interval(interval);
        }
    }

    if sims.iter().any(|s| s.policy().needs_future()) {
        let next = match next_use {
            Some(n) => n,
            None => {
                let mut reader = open()?;
                let keys = trace_reference_keys(&mut reader, cfg.mode)?;
                Arc::new(next_use_positions(&keys))
            }
        };
        for s in sims.iter_mut().filter(|s| s.policy().needs_future()) {
            s.set_future(next.clone());
        }
    }

    let mut reader = open()?;
    let threads = if cfg.threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { cfg.threads };
    let workers = threads.clamp(1, sims.len());
    // Worker w owns runs w, w + workers, ...: a fixed assignment, so that which thread runs what
    // never depends on timing (and would not matter anyway: a run is one thread's).
    let mut groups: Vec<Vec<(usize, SimRun)>> = (0..workers).map(|_| Vec::new()).collect();
    for (i, s) in sims.into_iter().enumerate() {
        groups[i % workers].push((i, s));
    }

    let batch_size = cfg.batch_size.max(1);
    let (read_result, finished) = std::thread::scope(|scope| {
        let mut senders = Vec::with_capacity(workers);
        let mut handles = Vec::with_capacity(workers);
        for mut group in groups {
            let (tx, rx) = crossbeam_channel::bounded::<Arc<Vec<Request>>>(4);
            senders.push(tx);
            handles.push(scope.spawn(move || {
                for batch in rx {
                    for (_, run) in group.iter_mut() {
                        run.feed_batch(&batch);
                    }
                }
                group
            }));
        }
        // Batches go out as `Arc`s; one whose every worker is done is recycled, so the reader
        // does not allocate a fresh buffer per batch.
        let mut pool: Vec<Arc<Vec<Request>>> = Vec::new();
        let mut total = 0u64;
        let read_result = (|| -> Result<u64, TraceError> {
            loop {
                let mut buf = match pool.iter().position(|b| Arc::strong_count(b) == 1) {
                    Some(i) => {
                        let mut b = pool.swap_remove(i);
                        Arc::get_mut(&mut b).expect("sole owner").clear();
                        b
                    }
                    None => Arc::new(Vec::with_capacity(batch_size)),
                };
                let n = reader.read_batch(Arc::get_mut(&mut buf).expect("sole owner"), batch_size)?;
                if n == 0 {
                    return Ok(total);
                }
                total += n as u64;
                for tx in &senders {
                    // A worker only stops receiving when it panics; the scope reports that.
                    let _ = tx.send(buf.clone());
                }
                if pool.len() < 2 * workers + 8 {
                    pool.push(buf);
                }
                progress(total);
            }
        })();
        drop(senders);
        let finished: Vec<Vec<(usize, SimRun)>> = handles.into_iter().map(|h| h.join().expect("simulation worker panicked")).collect();
        (read_result, finished)
    });
    let total = read_result?;
    let skipped = reader.skipped();
    if total == 0 {
        let msg = if skipped > 0 {
            format!("the trace has no valid requests ({skipped} malformed skipped)")
        } else {
            "the trace has no requests".to_string()
        };
        return Err(TraceError::file(reader.path(), msg).into());
    }

    let mut done: Vec<(usize, SimRun)> = finished.into_iter().flatten().collect();
    done.sort_by_key(|(i, _)| *i);
    let (trace, format) = (source.name(), source.format());
    Ok(done
        .into_iter()
        .map(|(i, run)| {
            let c = &run.counts;
            let block = matches!(cfg.mode, Mode::Block { .. });
            let len = run.policy().len() as u64;
            SimResult {
                trace: trace.clone(),
                format: format.clone(),
                policy: runs[i].policy.clone(),
                cache_size: runs[i].capacity,
                cache_size_spec: runs[i].capacity.to_string(),
                footprint: None,
                cache_unit: cfg.mode.cache_unit().to_string(),
                mode: cfg.mode.name().to_string(),
                unit_size: matches!(cfg.mode, Mode::Object { unit_size: true }),
                page_size: match cfg.mode {
                    Mode::Block { page_size } => page_size,
                    Mode::Object { .. } => page_size,
                },
                requests: c.requests,
                hits: c.hits,
                miss_ratio: c.miss_ratio(),
                byte_miss_ratio: c.byte_miss_ratio(),
                blocks: block.then_some(c.blocks),
                block_hits: block.then_some(c.block_hits),
                block_miss_ratio: block.then(|| c.block_miss_ratio()),
                requests_larger_than_cache: c.larger_than_cache,
                skipped,
                cached_objects: len,
                metadata_bytes_per_object: if len == 0 { 0.0 } else { run.policy().metadata_bytes() as f64 / len as f64 },
                processes: run.process_results(),
                series: run.series(),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Op, VecReader};

    fn zipfish(n: usize, seed: u64) -> Vec<Request> {
        // A skewed key stream without a generator dependency: squares of a LCG make low keys hot.
        let mut x = seed;
        (0..n)
            .map(|i| {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let u = (x >> 33) as f64 / (1u64 << 31) as f64;
                let key = (u * u * u * 5000.0) as u64;
                let mut r = Request::read(key * 4096, 4096 * (1 + (i as u64 % 3))).at(i as u64);
                if i % 7 == 0 {
                    r.op = Op::Write;
                }
                r
            })
            .collect()
    }

    fn specs(policies: &[&str], sizes: &[u64]) -> Vec<RunSpec> {
        policies.iter().flat_map(|p| sizes.iter().map(move |&c| RunSpec { policy: p.to_string(), capacity: c })).collect()
    }

    #[test]
    fn sweep_matches_single_runs_at_any_thread_count() {
        let reqs = zipfish(50_000, 3);
        let src = MemoryTrace::new(reqs.clone(), "mem");
        for mode in [Mode::Object { unit_size: true }, Mode::Object { unit_size: false }, Mode::Block { page_size: 4096 }] {
            let caps: Vec<u64> = match mode {
                Mode::Object { unit_size: false } => vec![100 << 12, 1000 << 12],
                _ => vec![10, 100, 1000],
            };
            let runs = specs(&["lru"], &caps);
            let mut outs = Vec::new();
            for threads in [1, 2, 3] {
                let mut cfg = SweepConfig::new(mode);
                cfg.threads = threads;
                cfg.batch_size = 777;
                let mut seen = 0;
                let out = sweep(&src, &runs, &cfg, 4096, &mut |n| seen = n).unwrap();
                assert_eq!(seen, 50_000);
                outs.push(out);
            }
            assert_eq!(outs[0], outs[1]);
            assert_eq!(outs[0], outs[2]);
            for (res, spec) in outs[0].iter().zip(&runs) {
                let counts = simulate(&mut VecReader::new(reqs.clone()), &spec.policy, spec.capacity, mode).unwrap();
                assert_eq!(res.requests, counts.requests);
                assert_eq!(res.hits, counts.hits);
                assert_eq!(res.miss_ratio, counts.miss_ratio());
                assert!(res.hits > 0 && res.hits < res.requests);
                assert_eq!(res.blocks.is_some(), matches!(mode, Mode::Block { .. }));
            }
            // Bigger caches miss less.
            assert!(outs[0].windows(2).all(|w| w[0].miss_ratio >= w[1].miss_ratio));
        }
    }

    #[test]
    fn future_aware_runs_get_next_uses_in_both_modes() {
        let reqs = zipfish(20_000, 9);
        let src = MemoryTrace::new(reqs.clone(), "mem");
        for mode in [Mode::Object { unit_size: true }, Mode::Block { page_size: 4096 }] {
            let runs = specs(&["lru", "belady"], &[50, 500]);
            let mut cfg = SweepConfig::new(mode);
            cfg.threads = 3;
            let out = sweep(&src, &runs, &cfg, 4096, &mut |_| {}).unwrap();
            for (res, spec) in out.iter().zip(&runs) {
                let single = simulate(&mut VecReader::new(reqs.clone()), &spec.policy, spec.capacity, mode).unwrap();
                assert_eq!((res.hits, res.blocks.unwrap_or(0)), (single.hits, single.blocks), "{spec:?} {mode:?}");
            }
            // OPT never misses more than LRU at the same size.
            assert!(out[2].miss_ratio < out[0].miss_ratio && out[3].miss_ratio < out[1].miss_ratio, "{mode:?}");
        }
    }

    #[test]
    fn relative_sizes_are_fractions_of_the_footprint() {
        let reqs = zipfish(20_000, 4);
        let src = MemoryTrace::new(reqs.clone(), "mem");
        for mode in [Mode::Object { unit_size: true }, Mode::Object { unit_size: false }, Mode::Block { page_size: 4096 }] {
            let fp = crate::engine::footprint::footprint(&mut VecReader::new(reqs.clone()), mode).unwrap();
            let policies = vec!["lru".to_string(), "belady".to_string()];
            let sizes = vec!["1%".to_string(), "0.1".to_string(), "50".to_string()];
            let out = sweep_sizes(&src, &policies, &sizes, &SweepConfig::new(mode), 4096, &mut |_| {}).unwrap();
            let caps = [fp / 100, fp / 10, 50];
            let absolute = sweep(&src, &specs(&["lru", "belady"], &caps), &SweepConfig::new(mode), 4096, &mut |_| {}).unwrap();
            for (i, (r, a)) in out.iter().zip(&absolute).enumerate() {
                assert_eq!((r.cache_size, r.hits, r.blocks), (a.cache_size, a.hits, a.blocks), "{mode:?} {i}");
                assert_eq!(r.cache_size_spec, sizes[i % 3]);
                assert_eq!(r.footprint, if i % 3 == 2 { None } else { Some(fp) });
            }
        }
    }

    #[test]
    fn block_mode_counts_blocks() {
        // 0..8192 is two blocks; the second request touches block 1 only, the third spans 1..3.
        let reqs = vec![Request::read(0, 8192), Request::read(4096, 100), Request::read(4096, 8192)];
        let out = sweep(&MemoryTrace::new(reqs, "m"), &specs(&["lru"], &[10]), &SweepConfig::new(Mode::Block { page_size: 4096 }), 4096, &mut |_| {}).unwrap();
        let r = &out[0];
        assert_eq!((r.requests, r.hits, r.blocks, r.block_hits), (3, 1, Some(5), Some(2)));
        assert_eq!(r.cache_unit, "blocks");
        assert_eq!(r.cached_objects, 3);
    }

    #[test]
    fn empty_trace_is_an_error() {
        let err = sweep(&MemoryTrace::new(vec![], "empty.csv"), &specs(&["lru"], &[10]), &SweepConfig::new(Mode::Object { unit_size: true }), 4096, &mut |_| {}).unwrap_err();
        assert_eq!(err.to_string(), "empty.csv: the trace has no requests");
    }

    #[test]
    fn bad_configurations_are_rejected() {
        let src = MemoryTrace::new(zipfish(10, 1), "m");
        let cfg = SweepConfig::new(Mode::Object { unit_size: true });
        let e = sweep(&src, &specs(&["nosuch"], &[10]), &cfg, 4096, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("unknown policy `nosuch`") && e.contains("lru"), "{e}");
        let e = sweep(&src, &specs(&["lru"], &[0]), &cfg, 4096, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("--cache"), "{e}");
        let e = sweep(&src, &[], &cfg, 4096, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("no policy"), "{e}");
        let e = sweep(&src, &specs(&["lru"], &[1]), &SweepConfig::new(Mode::Block { page_size: 0 }), 0, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("--page-size"), "{e}");
    }

    #[test]
    fn reference_keys_follow_the_mode() {
        let reqs = vec![Request::read(0, 8192), Request::read(4096, 1)];
        let obj = reference_keys(&reqs, Mode::Object { unit_size: true });
        assert_eq!(obj, vec![0, 4096]);
        let blk = trace_reference_keys(&mut VecReader::new(reqs), Mode::Block { page_size: 4096 }).unwrap();
        assert_eq!(blk, vec![0, 1, 1]);
        assert_eq!(next_use_positions(&blk), vec![u64::MAX, 2, u64::MAX]);
    }

    #[test]
    fn metadata_is_reported() {
        let out = sweep(&MemoryTrace::new(zipfish(20_000, 5), "m"), &specs(&["lru"], &[500]), &SweepConfig::new(Mode::Object { unit_size: true }), 4096, &mut |_| {}).unwrap();
        assert_eq!(out[0].cached_objects, 500);
        assert!(out[0].metadata_bytes_per_object > 8.0 && out[0].metadata_bytes_per_object < 200.0);
    }

    fn reads(offsets: &[u64], length: u64) -> Vec<Request> {
        offsets.iter().map(|&o| Request::read(o, length)).collect()
    }

    #[test]
    fn belady_gets_next_uses_in_object_mode() {
        // Capacity 2: 1 2 miss; 3 evicts 2 (next used after 1); 1 hits; 2 evicts 1 (next used
        // after 3); 3 hits; 1 misses. LRU hits none of them.
        let reqs = reads(&[1, 2, 3, 1, 2, 3, 1], 1);
        let c = simulate(&mut VecReader::new(reqs.clone()), "belady", 2, Mode::Object { unit_size: true }).unwrap();
        assert_eq!((c.requests, c.hits), (7, 2));
        let c = simulate(&mut VecReader::new(reqs), "lru", 2, Mode::Object { unit_size: true }).unwrap();
        assert_eq!(c.hits, 0);
    }

    #[test]
    fn belady_gets_next_uses_in_block_mode() {
        // Two-block requests on 4 KiB pages: blocks (0,1) (2,3) (0,1) with room for 3 blocks.
        // Block 3 is never used again, so Belady evicts it (or 2) and keeps 0 and 1: the third
        // request hits both blocks.
        let reqs = reads(&[0, 8192, 0], 8192);
        let c = simulate(&mut VecReader::new(reqs), "belady", 3, Mode::Block { page_size: 4096 }).unwrap();
        assert_eq!((c.blocks, c.block_hits, c.hits), (6, 2, 1));
    }

    #[test]
    fn reference_keys_of_two_block_requests() {
        let reqs = reads(&[0, 8192], 8192);
        assert_eq!(reference_keys(&reqs, Mode::Object { unit_size: true }), vec![0, 8192]);
        assert_eq!(reference_keys(&reqs, Mode::Block { page_size: 4096 }), vec![0, 1, 2, 3]);
    }
}
