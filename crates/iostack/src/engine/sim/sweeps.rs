//! Sweeps: one trace read once for many (policy, capacity) runs, spread over threads (see the
//! module documentation of [`super`]).

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::cache::{self, Policy};
use crate::engine::future::next_use_positions;
use crate::engine::processes::{ProcessResult, Processes, TracePlan};
use crate::engine::series::{Interval, SimSeries};
use crate::hints::HintsSpec;
use crate::engine::footprint::FootprintCounter;
use crate::error::{ConfigError, Error, TraceError};
use crate::trace::devices::{DenseDevices, DeviceTable};
use crate::trace::{Format, ReaderOptions, Request, TraceReader};

use super::*;

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
