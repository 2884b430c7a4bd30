//! Counters of a timed run and the report built from them (JSON and a human table).
//!
//! Definitions (see docs/timed.md):
//! - front: requests and blocks as the processes issue them.
//! - cache: block references (reads and writes), hits (blocks found cached, including blocks
//!   still being read: `hits_in_flight`), misses, blocks fetched on demand, prefetched blocks
//!   issued / used (first demand reference) / wasted (evicted before any) / still cached unused
//!   at the end, write-back blocks, evictions (and of blocks still in flight), and the requests
//!   leaving the cache (runs of contiguous blocks, before the scheduler merges them).
//! - sched: requests in (from the cache), merges, requests out (dispatched).
//! - device: requests reaching the device, reads/writes, blocks, the size distribution, busy
//!   time (sum of service times), and DULO's disk access sequence sizes: a sequence is a maximal
//!   run of consecutively served requests each starting on the sector where the previous one
//!   ended (same device and direction); its size is its length in blocks (DULO §4.3.2).
//! - response time: from issue (closed loop) or arrival (open loop) to completion of a request;
//!   percentiles from a log-linear histogram exact below 1024 ns and within 0.2% above.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::Boundary;
use crate::metrics::LocalityReport;

/// A histogram of non-negative integers with 512 sub-buckets per power of two (1024 below 2048).
#[derive(Debug, Clone)]
pub struct LogHistogram {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    max: u64,
}

const SUB_BITS: u32 = 10;
const SUB: u64 = 1 << SUB_BITS;

impl Default for LogHistogram {
    fn default() -> Self {
        LogHistogram { counts: vec![0; (SUB + (64 - SUB_BITS as u64) * SUB / 2) as usize], n: 0, sum: 0, max: 0 }
    }
}

impl LogHistogram {
    /// The bucket of `v`: below `SUB`, `v` itself; above, the top `SUB_BITS` bits of `v` after
    /// the `shift` that drops the rest, past the `SUB / 2` buckets of each smaller shift. One
    /// formula covers both (shift 0 below `SUB`), so no branch depends on `v`: response times
    /// are zero (hits) or not (misses) in an order no predictor can learn.
    #[inline]
    fn index(v: u64) -> usize {
        let bits = 64 - (v | 1).leading_zeros();
        let shift = bits.saturating_sub(SUB_BITS);
        (shift as u64 * (SUB / 2) + (v >> shift)) as usize
    }

    /// Lowest value of bucket `i`.
    fn lower(i: usize) -> u64 {
        let i = i as u64;
        if i < SUB {
            return i;
        }
        let shift = (i - SUB) / (SUB / 2) + 1;
        let top = (i - SUB) % (SUB / 2) + SUB / 2;
        top << shift
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        self.counts[Self::index(v)] += 1;
        self.n += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// The histogram of `a`'s and `b`'s samples together: exactly what recording both into one
    /// histogram gives, so a partition (reads and writes) need not also be recorded whole.
    pub fn merged(a: &LogHistogram, b: &LogHistogram) -> LogHistogram {
        LogHistogram {
            counts: a.counts.iter().zip(&b.counts).map(|(x, y)| x + y).collect(),
            n: a.n + b.n,
            sum: a.sum + b.sum,
            max: a.max.max(b.max),
        }
    }

    /// The `q`-quantile (0..=1): the lowest value of the bucket holding the ceil(q n)-th
    /// smallest sample (the maximum for q = 1).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let rank = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::lower(i).min(self.max);
            }
        }
        self.max
    }

    /// Records `v`, adding its bucket to `touched` when it was empty: a histogram that is
    /// summed and cleared often (once per interval of a series) clears only those.
    #[inline]
    pub(crate) fn record_touching(&mut self, v: u64, touched: &mut Vec<u32>) {
        let i = Self::index(v);
        if self.counts[i] == 0 {
            touched.push(i as u32);
        }
        self.record(v);
    }

    /// The summary of a histogram recorded with [`Self::record_touching`], which is left empty
    /// (as is `touched`); costs the number of buckets touched, not the size of the table.
    pub(crate) fn take_summary(&mut self, touched: &mut Vec<u32>) -> Percentiles {
        touched.sort_unstable();
        let n = self.n;
        let rank = |q: f64| ((q * n as f64).ceil() as u64).clamp(1, n.max(1));
        let ranks = [rank(0.50), rank(0.90), rank(0.99)];
        let mut found = [self.max; 3];
        let mut seen = 0;
        for &i in touched.iter() {
            let c = std::mem::take(&mut self.counts[i as usize]);
            for (k, &r) in ranks.iter().enumerate() {
                if seen < r && seen + c >= r {
                    found[k] = Self::lower(i as usize).min(self.max);
                }
            }
            seen += c;
        }
        touched.clear();
        let out = Percentiles {
            count: n,
            mean_ns: if n == 0 { 0.0 } else { self.sum as f64 / n as f64 },
            p50_ns: if n == 0 { 0 } else { found[0] },
            p90_ns: if n == 0 { 0 } else { found[1] },
            p99_ns: if n == 0 { 0 } else { found[2] },
            max_ns: self.max,
        };
        (self.n, self.sum, self.max) = (0, 0, 0);
        out
    }

    /// The distribution in [`CDF_BUCKETS_PER_OCTAVE`] buckets per power of two (1 ns wide below
    /// 64 ns): `[lowest value, count]` of every bucket with a sample, in increasing order. Enough
    /// for a CDF accurate to about 3% of the value at any scale, in at most a few hundred pairs.
    pub fn cdf_buckets(&self) -> Vec<[u64; 2]> {
        let mut out: Vec<[u64; 2]> = Vec::new();
        for (i, &c) in self.counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let lo = Self::lower(i);
            let bits = 64 - lo.leading_zeros();
            let shift = bits.saturating_sub(CDF_BUCKETS_PER_OCTAVE.trailing_zeros() + 1);
            let key = (lo >> shift) << shift;
            match out.last_mut() {
                Some(last) if last[0] == key => last[1] += c,
                _ => out.push([key, c]),
            }
        }
        out
    }

    pub fn summary(&self) -> Percentiles {
        Percentiles {
            count: self.n,
            mean_ns: if self.n == 0 { 0.0 } else { self.sum as f64 / self.n as f64 },
            p50_ns: self.quantile(0.50),
            p90_ns: self.quantile(0.90),
            p99_ns: self.quantile(0.99),
            max_ns: self.max,
        }
    }
}

/// Buckets per power of two of the response-time histogram a report keeps (see
/// [`LogHistogram::cdf_buckets`]).
pub const CDF_BUCKETS_PER_OCTAVE: u32 = 32;

/// Response times of the requests the processes issued: all of them (the keys of
/// [`Percentiles`], at the top level: `response.p99_ns`), reads and writes apart, and the
/// histogram a CDF is drawn from. Derefs to the summary of all of them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ResponseReport {
    #[serde(flatten)]
    pub all: Percentiles,
    #[serde(default)]
    pub read: Percentiles,
    #[serde(default)]
    pub write: Percentiles,
    /// `[lowest ns, count]` per bucket of [`CDF_BUCKETS_PER_OCTAVE`] buckets per power of two
    /// (buckets without a sample left out): the distribution of all response times.
    #[serde(default)]
    pub histogram: Vec<[u64; 2]>,
}

impl std::ops::Deref for ResponseReport {
    type Target = Percentiles;
    fn deref(&self) -> &Percentiles {
        &self.all
    }
}

impl ResponseReport {
    pub(crate) fn new(read: &LogHistogram, write: &LogHistogram) -> ResponseReport {
        let all = LogHistogram::merged(read, write);
        ResponseReport { all: all.summary(), read: read.summary(), write: write.summary(), histogram: all.cdf_buckets() }
    }
}

/// Response times of the device requests, from entering the scheduler to completion (blktrace's
/// Q2C): all of them, reads (demand and prefetch), writes (write-back and write-through), and
/// demand reads alone (the reads a process waits for).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceResponse {
    pub all: Percentiles,
    pub read: Percentiles,
    pub write: Percentiles,
    pub demand_read: Percentiles,
}

/// Response-time summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub count: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p90_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FrontCounts {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub blocks: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheCounts {
    /// Block references (reads and writes).
    pub accesses: u64,
    pub hits: u64,
    /// Hits on blocks whose read had not completed (the reference waited for it).
    pub hits_in_flight: u64,
    pub misses: u64,
    /// Misses on blocks evicted while still being read: re-cached, waited for, not re-read.
    pub misses_in_flight: u64,
    /// Blocks read from the device because a reference missed.
    pub demand_fetched: u64,
    pub prefetch_issued: u64,
    pub prefetch_used: u64,
    pub prefetch_wasted: u64,
    /// Of those, false prefetches the prefetcher flushed once their predicted access had
    /// passed (`ca`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub prefetch_flushed: u64,
    pub prefetch_unused_at_end: u64,
    /// Blocks written to the device (eviction, flusher, write-through).
    pub writeback_blocks: u64,
    pub writeback_evict: u64,
    pub writeback_flush: u64,
    pub write_through: u64,
    pub dirty_at_end: u64,
    pub evictions: u64,
    pub evicted_in_flight: u64,
    /// Of `evictions`, the blocks the policy gave up outside the victim `evict` returned (an
    /// SLRU hit cascading out of probation, a 2Q insert, a LIRS evict dropping several blocks),
    /// handed over through `Policy::drain_side_evictions`. 0 for LRU.
    pub side_evictions: u64,
    /// Requests leaving the cache toward the scheduler (before merging) and their blocks.
    pub requests_out: u64,
    pub blocks_out: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SchedCounts {
    pub requests_in: u64,
    pub merges: u64,
    pub requests_out: u64,
    pub blocks_out: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceCounts {
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub blocks_read: u64,
    pub blocks_written: u64,
    pub busy_ns: u64,
    /// Served from the drive's own cache.
    pub cache_hits: u64,
    /// Request size in blocks -> count.
    pub sizes: BTreeMap<u64, u64>,
    /// DULO disk access sequence size in blocks -> number of sequences.
    pub sequences: BTreeMap<u64, u64>,
}

impl SchedCounts {
    pub(crate) fn add(&mut self, o: &SchedCounts) {
        self.requests_in += o.requests_in;
        self.merges += o.merges;
        self.requests_out += o.requests_out;
        self.blocks_out += o.blocks_out;
    }
}

impl DeviceCounts {
    pub(crate) fn add(&mut self, o: &DeviceCounts) {
        self.requests += o.requests;
        self.reads += o.reads;
        self.writes += o.writes;
        self.blocks_read += o.blocks_read;
        self.blocks_written += o.blocks_written;
        self.busy_ns += o.busy_ns;
        self.cache_hits += o.cache_hits;
        for (&k, &v) in &o.sizes {
            *self.sizes.entry(k).or_default() += v;
        }
        for (&k, &v) in &o.sequences {
            *self.sequences.entry(k).or_default() += v;
        }
    }
}

/// One device of the stack (see `--device`): what it served, and its scheduler's counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceReport {
    /// The trace's device id it serves; `null`: every id (one device for the whole trace).
    pub id: Option<u32>,
    /// The device model with its preset, e.g. `hdd:wd7200`.
    pub model: String,
    /// Its scheduler (each device has its own instance).
    pub sched: String,
    /// Requests, reads, writes, blocks, busy time, drive-cache hits, sizes and sequences, as in
    /// the report's `device`.
    #[serde(flatten)]
    pub counts: DeviceCounts,
    /// Its scheduler's requests in, merges, requests out, blocks out, as in the report's `sched`.
    pub scheduler: SchedCounts,
}

/// What the block stage did (see [`crate::blk`]).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BlkCounts {
    /// Requests (and blocks) the page cache sent through the stage.
    pub requests_in: u64,
    pub blocks_in: u64,
    /// Of those, passed on to the scheduler, and taken by the stage.
    pub passed: u64,
    pub taken: u64,
    /// Requests of the stage's own sent to the scheduler, and their blocks.
    pub issued: u64,
    pub issued_blocks: u64,
    /// Requests the stage served from its memory, and their blocks.
    pub served: u64,
    pub served_blocks: u64,
}

/// The block stage's part of the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlkReport {
    /// The stage's name with its parameters.
    pub name: String,
    #[serde(flatten)]
    pub counts: BlkCounts,
    /// What the stage itself reports.
    #[serde(default, skip_serializing_if = "serde_json::Value::is_null")]
    pub stage: serde_json::Value,
}

/// Per-process results.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessReport {
    pub pid: u32,
    pub requests: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Makespan: end of the last request minus issue of the first.
    pub elapsed_ns: u64,
    pub mean_response_ns: f64,
    pub max_response_ns: u64,
    /// Requests the device served for this process: dispatched requests whose
    /// [`crate::sched::IoRequest::pid`] is this process (a request the scheduler merged from
    /// several processes' parts counts for its first part's process, with all its blocks).
    pub device_requests: u64,
    /// Of those, the synchronous ones (demand reads and write-through writes).
    pub device_sync_requests: u64,
    pub device_blocks_read: u64,
    pub device_blocks_written: u64,
    /// Response time of those requests: from entering the scheduler to completion.
    pub device_mean_response_ns: f64,
    pub device_max_response_ns: u64,
    /// Cache figures of the process's own references (with `per_process`, and always with an
    /// application-controlled policy): requests whose blocks were all found cached (`hits`) or
    /// not (`misses`), and its block references, found cached or not (a block whose read is
    /// still under way counts as found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hits: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub misses: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub miss_ratio: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_hits: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_misses: Option<u64>,
    /// How the process's access list predicted its accesses (a prefetcher with lists, `ca`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<crate::prefetch::ListCounts>,
    /// With `cpus`: the CPU time the process had for its think time, and the time it waited,
    /// ready to compute, for a CPU (see [`super::cpu`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_ns: Option<u64>,
}

/// The CPUs the processes shared (`cpus` in the config).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CpuReport {
    pub cpus: u32,
    pub quantum_ns: u64,
    /// CPU time given to the processes, over all CPUs.
    pub busy_ns: u64,
    /// `busy_ns` / (`cpus` × `end_ns`).
    pub utilization: f64,
    /// Time processes waited, ready to compute, for a CPU (summed over them).
    pub wait_ns: u64,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

/// A count per size in blocks, kept while the run goes on: sizes up to [`Self::DENSE`] in an
/// array (one add per device request, no map operation), larger ones in a map. Folded into the
/// report's `BTreeMap` at the end.
#[derive(Debug, Clone)]
pub(crate) struct SizeCounts {
    dense: Vec<u64>,
    sparse: BTreeMap<u64, u64>,
}

impl Default for SizeCounts {
    fn default() -> Self {
        SizeCounts { dense: vec![0; Self::DENSE as usize], sparse: BTreeMap::new() }
    }
}

impl SizeCounts {
    const DENSE: u64 = 1024;

    #[inline]
    pub fn add(&mut self, size: u64) {
        match self.dense.get_mut(size as usize) {
            Some(n) => *n += 1,
            None => *self.sparse.entry(size).or_default() += 1,
        }
    }

    /// Adds every count into `out`.
    pub fn fold_into(&self, out: &mut BTreeMap<u64, u64>) {
        for (size, &n) in self.dense.iter().enumerate() {
            if n > 0 {
                *out.entry(size as u64).or_default() += n;
            }
        }
        for (&size, &n) in &self.sparse {
            *out.entry(size).or_default() += n;
        }
    }
}

/// Tracks DULO sequences over the served request stream.
#[derive(Debug, Clone, Default)]
pub(crate) struct SequenceTracker {
    cur: Option<(u32, bool, u64)>,
    len_blocks: u64,
}

impl SequenceTracker {
    #[inline]
    pub fn push(&mut self, device: u32, write: bool, sector: u64, sectors: u64, blocks: u64, out: &mut SizeCounts) {
        match self.cur {
            Some((d, w, end)) if d == device && w == write && end == sector => {
                self.len_blocks += blocks;
            }
            _ => {
                self.close(out);
                self.len_blocks = blocks;
            }
        }
        self.cur = Some((device, write, sector + sectors));
    }
    pub fn close(&mut self, out: &mut SizeCounts) {
        if self.len_blocks > 0 {
            out.add(self.len_blocks);
        }
        self.len_blocks = 0;
        self.cur = None;
    }
}

/// One benchmark in the report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BenchmarkReport {
    /// The launcher's pid, as the trace gives it.
    pub launcher: u32,
    /// The processes the launcher launched in the trace (their first run's pids).
    pub processes: Vec<u32>,
    /// Runs started, the trace's included.
    pub runs: u32,
    /// Completion time of each run that completed, in order (ns from the first request's time).
    pub completions_ns: Vec<u64>,
    /// A rerun took no simulated time (every request a page-cache hit, which the stack gives no
    /// time), so the benchmark was not relaunched again: the rule would repeat it without end.
    #[serde(default)]
    pub rerun_in_no_time: bool,
}

/// Benchmarks relaunched by the replay (present when the trace has launch events).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BenchmarksReport {
    /// When every benchmark had completed once (the AIP test's end); absent if one never did.
    pub all_completed_ns: Option<u64>,
    /// In order of their first launch in the trace.
    pub benchmarks: Vec<BenchmarkReport>,
}

/// The result of a timed run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimedReport {
    /// The configuration, as given (re-runnable with `--config`).
    pub config: super::StackConfig,
    /// The components as built, with all their parameters.
    pub resolved: serde_json::Value,
    /// Completion of the last request (from the first request's trace time).
    pub elapsed_ns: u64,
    /// The last completion, of a request or of a device request (write-back and prefetch may
    /// still run after the last request).
    pub end_ns: u64,
    pub device_busy_ns: u64,
    pub device_requests: u64,
    /// Block hit ratio of the cache (hits / block references).
    pub hit_ratio: f64,
    pub front: FrontCounts,
    pub cache: CacheCounts,
    pub sched: SchedCounts,
    pub device: DeviceCounts,
    /// Each device of the stack (one, serving every device id, unless `device` maps ids to
    /// devices); `device` and `sched` above are their sums.
    pub devices: Vec<DeviceReport>,
    /// Response times of the processes' requests (all, `read`, `write`, `histogram`).
    pub response: ResponseReport,
    /// Response times of the device requests, scheduler entry to completion.
    #[serde(default)]
    pub device_response: DeviceResponse,
    /// The block stage between the page cache and the scheduler (absent without one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blk: Option<BlkReport>,
    /// REDCAP's counts when the stack has it (`requests`, `partials`, `misses`, `partial_hits`,
    /// `hits_in_flight`, `hits`, `blocks_read`, `invalidating_writes`; see `blk::redcap`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redcap: Option<serde_json::Value>,
    /// ADA's decisions when the stack has it (`switches` as `{request, state}`,
    /// `activation_share`, the per-check sums under `windows`; see `blk::ada`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ada: Option<serde_json::Value>,
    /// The scheduler controller's decisions with `sched_select` (`switches` as `{request,
    /// time_ns, scheduler}`, each scheduler's `time_share`, the per-check sums under `windows`;
    /// see `sched::select`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_select: Option<serde_json::Value>,
    /// The readahead controller's decisions with `prefetch_select` (`switches` as `{request,
    /// time_ns, prefetch, cause, before_ms, after_ms, reverted}`; docs/devices.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefetch_select: Option<serde_json::Value>,
    pub processes: Vec<ProcessReport>,
    /// The CPUs the processes shared, with `cpus` (absent: a CPU per process).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<CpuReport>,
    /// Benchmarks the replay relaunched, for a trace with launch events (the KDSim paper's AIP;
    /// see `docs/timed.md`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub benchmarks: Option<BenchmarksReport>,
    /// Locality of the stream crossing each boundary (`null` with `locality = false`).
    #[serde(default)]
    pub locality: Option<BoundaryLocality>,
    /// What observers added to the run (dumps, custom probes) reported, by boundary.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub probes: BTreeMap<String, serde_json::Value>,
    /// Trace lines or records skipped as invalid.
    pub skipped: u64,
    /// What the replay found questionable in the trace (e.g. processes that do not interleave
    /// as their times say), one line per kind; absent when there is nothing to say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Remarks on how to read this result (e.g. a scheduler that could not matter); the command
    /// line prints each once on standard error, Python gives each as a warning.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Figures per interval of virtual time or of requests (`interval` in the config).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub series: Option<super::series::TimedSeries>,
}

/// The locality reports of the four boundaries, top of the stack first: the requests the
/// processes issue (`front`), those leaving the page cache (`cache`: misses, prefetches,
/// write-backs), those the scheduler dispatches after merging (`sched`), and those reaching the
/// device after the disk-side layers (`device`). A boundary nothing crossed reports zero
/// references and `null` affinities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundaryLocality {
    pub front: LocalityReport,
    pub cache: LocalityReport,
    pub sched: LocalityReport,
    /// At the device, per 4 KiB block (in units of the page size).
    pub device: LocalityReport,
    /// At the device, per disk request (one reference per request, keyed by its start; positions
    /// for block distance in 4 KiB blocks), when `device_request_locality` asks for it; absent
    /// otherwise. Its `granularity` is `object` and its `references` equal its `requests`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device_per_request: Option<LocalityReport>,
}

impl BoundaryLocality {
    /// The reports with their boundaries, top first.
    pub fn iter(&self) -> impl Iterator<Item = (Boundary, &LocalityReport)> {
        [(Boundary::Front, &self.front), (Boundary::Cache, &self.cache), (Boundary::Sched, &self.sched), (Boundary::Device, &self.device)].into_iter()
    }

    pub fn get(&self, b: Boundary) -> &LocalityReport {
        match b {
            Boundary::Front => &self.front,
            Boundary::Cache => &self.cache,
            Boundary::Sched => &self.sched,
            Boundary::Device => &self.device,
        }
    }
}

fn ms(ns: u64) -> String {
    format!("{:.3} ms", ns as f64 / 1e6)
}

impl TimedReport {
    /// The notes a run of `config` that gave `processes` deserves. A closed-loop replay of one
    /// process at queue depth 1, with no prefetching and write-through caching, sends the
    /// scheduler nothing but the pieces of the one request that process is waiting for (no
    /// prefetches, no background write-back, no other process): there is nothing to reorder
    /// across requests, so the choice of scheduler has nothing to act on.
    pub fn notes_for(config: &super::StackConfig, processes: &[ProcessReport]) -> Vec<String> {
        let mut notes = Vec::new();
        let lone = config.replay == super::Replay::Closed && config.queue_depth == 1 && processes.len() == 1;
        let synchronous = config.prefetch == "none" && config.write_policy == super::WritePolicy::Through;
        if lone && synchronous && !config.sched.starts_with("noop") {
            notes.push(format!(
                "closed-loop replay of a single process at queue depth 1, without prefetching and with write-through: the scheduler only ever receives the pieces of the one request the process waits for, so `{}` has nothing to reorder (open replay, several processes, a larger queue depth, prefetching or write-back give it work)",
                config.sched
            ));
        }
        notes
    }

    /// The report as a human-readable table.
    pub fn table(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let c = &self.cache;
        let d = &self.device;
        let _ = writeln!(s, "stack     {}", self.resolved_line());
        let _ = writeln!(s, "elapsed   {}   (last event {}, device busy {}, {:.1}%)", ms(self.elapsed_ns), ms(self.end_ns), ms(d.busy_ns),
            if self.end_ns == 0 { 0.0 } else { 100.0 * d.busy_ns as f64 / self.end_ns as f64 });
        let _ = writeln!(s, "front     {} requests ({} reads, {} writes), {} blocks", self.front.requests, self.front.reads, self.front.writes, self.front.blocks);
        let _ = writeln!(s, "cache     {} references, {} hits ({:.4} hit ratio, {} in flight), {} misses ({} in flight)",
            c.accesses, c.hits, self.hit_ratio, c.hits_in_flight, c.misses, c.misses_in_flight);
        let _ = writeln!(s, "          demand-fetched {}, prefetched {} (used {}, wasted {}, unused at end {})",
            c.demand_fetched, c.prefetch_issued, c.prefetch_used, c.prefetch_wasted, c.prefetch_unused_at_end);
        let _ = writeln!(s, "          written back {} (eviction {}, flusher {}, write-through {}), dirty at end {}, evictions {} ({} in flight, {} side)",
            c.writeback_blocks, c.writeback_evict, c.writeback_flush, c.write_through, c.dirty_at_end, c.evictions, c.evicted_in_flight, c.side_evictions);
        let _ = writeln!(s, "          {} requests out ({} blocks)", c.requests_out, c.blocks_out);
        let _ = writeln!(s, "sched     {} in, {} merges, {} out ({} blocks)", self.sched.requests_in, self.sched.merges, self.sched.requests_out, self.sched.blocks_out);
        let _ = writeln!(s, "device    {} requests ({} reads, {} writes), {} blocks read, {} written, {} drive-cache hits",
            d.requests, d.reads, d.writes, d.blocks_read, d.blocks_written, d.cache_hits);
        let mean = if d.requests == 0 { 0.0 } else { (d.blocks_read + d.blocks_written) as f64 / d.requests as f64 };
        let _ = writeln!(s, "          mean request {:.2} blocks; sizes {}", mean, short_hist(&d.sizes));
        let nseq: u64 = d.sequences.values().sum();
        let _ = writeln!(s, "          {} sequences; sizes {}", nseq, short_hist(&d.sequences));
        let r = &self.response;
        let _ = writeln!(s, "response  {} requests: mean {}, p50 {}, p90 {}, p99 {}, max {}", r.count,
            ms(r.mean_ns as u64), ms(r.p50_ns), ms(r.p90_ns), ms(r.p99_ns), ms(r.max_ns));
        let line = |s: &mut String, what: &str, p: &Percentiles| {
            if p.count > 0 {
                let _ = writeln!(s, "          {what:<12} {:>9}: mean {}, p50 {}, p90 {}, p99 {}, max {}", p.count,
                    ms(p.mean_ns as u64), ms(p.p50_ns), ms(p.p90_ns), ms(p.p99_ns), ms(p.max_ns));
            }
        };
        line(&mut s, "reads", &r.read);
        line(&mut s, "writes", &r.write);
        let dr = &self.device_response;
        // Device requests, scheduler entry to completion (blktrace's Q2C).
        line(&mut s, "Q2C all", &dr.all);
        line(&mut s, "Q2C reads", &dr.read);
        line(&mut s, "Q2C demand", &dr.demand_read);
        line(&mut s, "Q2C writes", &dr.write);
        if let Some(series) = &self.series {
            s += &series.table();
        }
        if let Some(l) = &self.locality {
            let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
            let _ = writeln!(s, "locality  boundary  references  stack affinity mean/median  block affinity mean/median");
            let rows = l.iter().map(|(b, r)| (b.name(), r)).chain(l.device_per_request.as_ref().map(|r| ("device per request", r)));
            for (name, r) in rows {
                let _ = writeln!(s, "          {:<8}  {:>10}  {:>12} / {:<12}  {:>12} / {}", name, r.references,
                    f(r.stack_affinity.mean), f(r.stack_affinity.median), f(r.block_affinity.mean), f(r.block_affinity.median));
            }
        }
        for p in self.processes.iter().take(16) {
            let mut cache = match (p.blocks, p.block_misses) {
                (Some(b), Some(m)) => format!("; {b} block references, {m} missed"),
                _ => String::new(),
            };
            if let Some(h) = p.hints {
                let dropped = if h.dropped { ", list dropped" } else { "" };
                cache += &format!("; hints {} matched, {} unpredicted, {} skipped{dropped}", h.matched, h.unpredicted, h.skipped);
            }
            let _ = writeln!(s, "pid {:<6}{} requests, elapsed {}, mean response {}; device {} requests ({} blocks), mean response {}{cache}", p.pid, p.requests,
                ms(p.elapsed_ns), ms(p.mean_response_ns as u64), p.device_requests, p.device_blocks_read + p.device_blocks_written, ms(p.device_mean_response_ns as u64));
        }
        if self.processes.len() > 16 {
            let _ = writeln!(s, "... {} more processes (see --json)", self.processes.len() - 16);
        }
        s
    }

    fn resolved_line(&self) -> String {
        let g = |k: &str| self.resolved.get(k).and_then(|v| v.as_str()).unwrap_or("?").to_string();
        format!("{} {} | prefetch {} | sched {} | device {} | {}", g("policy"), g("cache"), g("prefetch"), g("sched"), g("device"), g("replay"))
    }
}

fn short_hist(h: &BTreeMap<u64, u64>) -> String {
    let total: u64 = h.values().sum();
    if total == 0 {
        return "-".into();
    }
    let frac = |pred: &dyn Fn(u64) -> bool| h.iter().filter(|(k, _)| pred(**k)).map(|(_, v)| *v).sum::<u64>() as f64 / total as f64;
    format!(
        "=1: {:.1}%, <=4: {:.1}%, <=16: {:.1}%, >32: {:.1}%",
        100.0 * frac(&|k| k == 1),
        100.0 * frac(&|k| k <= 4),
        100.0 * frac(&|k| k <= 16),
        100.0 * frac(&|k| k > 32)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_round_trip() {
        for v in [0u64, 1, 1023, 1024, 1025, 2047, 2048, 9_500_000, u64::MAX / 3] {
            let i = LogHistogram::index(v);
            let lo = LogHistogram::lower(i);
            assert!(lo <= v, "{v}");
            assert!(v - lo <= v / 512, "{v} {lo}");
            assert_eq!(LogHistogram::index(lo), i);
        }
        // Buckets are consecutive across every power of two, and the last fits the table.
        for k in 1..64 {
            let edge = 1u64 << k;
            assert_eq!(LogHistogram::index(edge - 1) + 1, LogHistogram::index(edge), "2^{k}");
        }
        assert_eq!(LogHistogram::index(u64::MAX), LogHistogram::default().counts.len() - 1);
        let mut h = LogHistogram::default();
        for v in 1..=100u64 {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), 50);
        assert_eq!(h.quantile(0.99), 99);
        assert_eq!(h.quantile(1.0), 100);
    }

    #[test]
    fn summaries_taken_from_touched_buckets_match_the_full_ones() {
        let mut full = LogHistogram::default();
        let mut part = LogHistogram::default();
        let mut touched = Vec::new();
        for round in 0..3u64 {
            full = LogHistogram::default();
            for v in (0..997u64).map(|i| (i * 7919 + round * 13) % 50_000_000) {
                full.record(v);
                part.record_touching(v, &mut touched);
            }
            assert_eq!(part.take_summary(&mut touched), full.summary());
            assert!(touched.is_empty() && part.counts.iter().all(|&c| c == 0));
        }
        assert_eq!(part.take_summary(&mut touched), Percentiles::default());
        // The CDF buckets hold every sample, within 1/32 of an octave below its value.
        let b = full.cdf_buckets();
        assert_eq!(b.iter().map(|x| x[1]).sum::<u64>(), 997);
        assert!(b.windows(2).all(|w| w[0][0] < w[1][0]));
        assert!(b.len() <= 64 * CDF_BUCKETS_PER_OCTAVE as usize);
        let mut one = LogHistogram::default();
        one.record(9_500_000);
        let [lo, n] = one.cdf_buckets()[0];
        assert!(n == 1 && lo <= 9_500_000 && 9_500_000 - lo < 9_500_000 / 32, "{lo}");
    }
}
