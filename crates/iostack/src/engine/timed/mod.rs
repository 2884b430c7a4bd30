//! The timed engine: a discrete-event simulation of the whole stack.
//!
//! ```text
//! processes -> [front] -> page cache (policy + prefetcher) -> [cache] -> I/O scheduler
//!           -> [sched] -> disk-side layers -> [device] -> device model
//! ```
//!
//! Virtual time in nanoseconds; one event queue (a binary heap ordered by time, ties broken by
//! a sequence number, so a run is deterministic). Processes replay the trace closed-loop (a
//! process issues its next request when the previous one completed, plus think time) or
//! open-loop (at the trace timestamps). Reads wait for their blocks; prefetches are
//! asynchronous; writes dirty cached blocks, written back on eviction and by a periodic flusher,
//! or written through. The cache is any [`crate::cache::Policy`], driven through
//! find/insert/evict so that every eviction is seen. Blocks are `page_size` bytes keyed by
//! [`crate::cache::block_key`]. A block whose read is under way is in flight: it already
//! occupies its cache slot (as a locked page does in Linux), a reference to it waits for that
//! read, and it is never read twice at once. When the policy evicts an in-flight block, the read
//! goes on, its waiters still get the data, and the block is simply not cached when the read
//! completes; a reference meanwhile caches it again and waits for the same read. See
//! docs/timed.md for the full semantics and the metrics.

mod config;
mod blocks;
mod engine;
mod observers;
mod report;

pub use config::{FileSizes, Processes, Replay, Resolved, StackConfig, Think, WritePolicy};
pub use engine::{Boundary, BoundaryObserver};
pub use observers::{DumpObserver, ProbeObserver, SharedProbe};
pub use report::{BoundaryLocality, CacheCounts, DeviceCounts, FrontCounts, LogHistogram, Percentiles, ProcessReport, SchedCounts, TimedReport};

use crate::device::Device;
use crate::error::{ConfigError, Error};
use crate::layer::Layer;
use crate::metrics::{Granularity, ProbeConfig};
use crate::trace::TraceReader;
use engine::{Engine, EngineSettings};

/// The engine of a stack: compiled for its policy when that is LRU (the default, and the most
/// used), else with the policy behind a trait object.
enum StackEngine {
    Lru(Engine<crate::cache::lru::Lru>),
    Any(Engine),
}

/// Runs `$body` with `$e` bound to the engine, whichever form it has.
macro_rules! with_engine {
    ($engine:expr, $e:ident => $body:expr) => {
        match $engine {
            StackEngine::Lru($e) => $body,
            StackEngine::Any($e) => $body,
        }
    };
}

/// A timed stack built from a config, ready to run one trace.
pub struct TimedRun {
    config: StackConfig,
    engine: StackEngine,
    /// The locality probes `config.locality` installed, by boundary (shared with the engine's
    /// observer list, which notifies them).
    probes: Option<[SharedProbe; 4]>,
}

impl TimedRun {
    /// Builds every component the config names; errors name the option at fault.
    pub fn new(config: &StackConfig) -> Result<TimedRun, ConfigError> {
        let device = build_device(&config.device)?;
        Self::with_device(config, device)
    }

    /// Builds the stack around a device the caller made (tests, custom models).
    pub fn with_device(config: &StackConfig, device: Box<dyn Device>) -> Result<TimedRun, ConfigError> {
        let resolved = config.resolve()?;
        let policy = crate::cache::build(&config.policy, resolved.cache_blocks)?;
        Self::with_parts(config, policy, device)
    }

    /// Builds the stack around a policy and a device the caller made; the config's `policy`
    /// and `device` are then only echoed.
    pub fn with_parts(config: &StackConfig, policy: Box<dyn crate::cache::Policy>, device: Box<dyn Device>) -> Result<TimedRun, ConfigError> {
        let resolved = config.resolve()?;
        if policy.needs_future() {
            return Err(ConfigError::new(
                "--policy",
                format!("`{}` needs each reference's next use, which the timed engine does not compute (the reference stream depends on timing); use it with `iostack sim`", policy.name()),
            ));
        }
        let prefetcher = crate::prefetch::build(&config.prefetch, config.page_size)?;
        let sched = crate::sched::build(&config.sched, crate::sched::SchedLimits { max_blocks: resolved.max_request_blocks })?;
        let layers: Vec<Box<dyn Layer>> = match config.layers.first() {
            None => Vec::new(),
            Some(l) => return Err(ConfigError::unknown("--layer", "layer", l, &[])),
        };
        let settings = EngineSettings {
            page_size: config.page_size,
            queue_depth: config.queue_depth,
            write_through: config.write_policy == WritePolicy::Through,
            replay: config.replay,
            processes: config.processes,
            resolved,
        };
        let is_lru = (policy.as_ref() as &dyn std::any::Any).is::<crate::cache::lru::Lru>();
        let mut engine = if is_lru {
            let lru = (policy as Box<dyn std::any::Any>).downcast().expect("the policy is LRU");
            StackEngine::Lru(Engine::new(settings, lru, prefetcher, sched, layers, device))
        } else {
            StackEngine::Any(Engine::new(settings, policy, prefetcher, sched, layers, device))
        };
        let probes = config.locality.then(|| {
            Boundary::ALL.map(|b| {
                let probe = SharedProbe::new(ProbeConfig { granularity: Granularity::Bytes(config.page_size), ..Default::default() });
                with_engine!(&mut engine, e => e.add_observer(b, Box::new(probe.clone())));
                probe
            })
        });
        Ok(TimedRun { config: config.clone(), engine, probes })
    }

    /// Observes the stream crossing `boundary` (locality probes, dumps).
    pub fn observe(&mut self, boundary: Boundary, observer: Box<dyn BoundaryObserver>) {
        with_engine!(&mut self.engine, e => e.add_observer(boundary, observer));
    }

    /// Whether the run wants file sizes inferred by a first pass over the trace
    /// ([`TimedRun::scan_extents`]): with `file_sizes = "infer"` and a prefetcher, unless the
    /// pass could learn nothing, because the trace names no files (`carries_files`) and the
    /// device's capacity already sizes the raw device.
    pub fn wants_extents(&self, carries_files: bool) -> bool {
        let (prefetcher, device) = with_engine!(&self.engine, e => (e.prefetcher(), e.device()));
        self.config.file_sizes == FileSizes::Infer && prefetcher.name() != "none" && (carries_files || device.capacity_sectors().is_none())
    }

    /// First pass: the largest extent accessed in each file (requests with a file but no file
    /// size) and on each device (requests without a file), as file sizes for the prefetcher.
    pub fn scan_extents(&mut self, reader: &mut dyn TraceReader) -> Result<(), Error> {
        let ps = self.config.page_size;
        let extents = with_engine!(&mut self.engine, e => &mut e.extents);
        let mut buf = Vec::with_capacity(4096);
        loop {
            buf.clear();
            if reader.read_batch(&mut buf, 4096)? == 0 {
                break;
            }
            for r in &buf {
                let (key, end) = match r.file {
                    Some(f) if f.size.is_none() => ((false, f.id), f.offset + r.length.max(1)),
                    Some(_) => continue,
                    None => ((true, r.device as u64), r.offset + r.length.max(1)),
                };
                let pages = end.div_ceil(ps);
                let e = extents.entry(key).or_insert(0);
                *e = (*e).max(pages);
            }
        }
        Ok(())
    }

    /// Replays the trace through the stack and reports.
    pub fn run(self, reader: &mut dyn TraceReader) -> Result<TimedReport, Error> {
        let TimedRun { config, mut engine, probes } = self;
        with_engine!(&mut engine, e => {
            e.run(reader)?;
            report(&config, &probes, e)
        })
    }
}

/// The report of engine `e` after its run of `config`'s stack.
fn report<P: crate::cache::Policy + ?Sized>(config: &StackConfig, locality_probes: &Option<[SharedProbe; 4]>, e: &mut Engine<P>) -> Result<TimedReport, Error> {
    let mut probes = std::collections::BTreeMap::new();
    let locality = locality_probes.as_ref().map(|[front, cache, sched, device]| BoundaryLocality {
        front: front.report(),
        cache: cache.report(),
        sched: sched.report(),
        device: device.report(),
    });
    for (b, o) in e.observers.iter_mut() {
        let v = o.finish().map_err(|m| Error::Io(std::io::Error::other(format!("{} boundary: {m}", b.name()))))?;
        if !v.is_null() {
            probes.insert(b.name().to_string(), v);
        }
    }
    let resolved = serde_json::json!({
        "policy": e.policy().name(),
        "cache": format!("{} blocks of {} bytes", config.resolve().map(|r| r.cache_blocks).unwrap_or(0), config.page_size),
        "prefetch": e.prefetcher().name(),
        "sched": e.scheduler().name(),
        "layers": e.layers().iter().map(|l| l.name()).collect::<Vec<_>>(),
        "device": e.device().name(),
        "device_parameters": e.device().parameters(),
        "replay": match config.replay { Replay::Closed => format!("closed, think {}", config.think), Replay::Open => "open".to_string() },
    });
    let c = &e.c;
    let hit_ratio = if c.cache.accesses == 0 { 0.0 } else { c.cache.hits as f64 / c.cache.accesses as f64 };
    Ok(TimedReport {
        config: config.clone(),
        resolved,
        elapsed_ns: c.elapsed_ns,
        end_ns: c.end_ns,
        device_busy_ns: c.device.busy_ns,
        device_requests: c.device.requests,
        hit_ratio,
        front: c.front.clone(),
        cache: c.cache.clone(),
        sched: c.sched.clone(),
        device: c.device.clone(),
        response: c.response.summary(),
        processes: e.process_reports(),
        locality,
        probes,
        skipped: e.skipped,
    })
}

/// Runs a config over a trace that `open` can open (twice when file sizes are inferred).
pub fn run_trace(
    config: &StackConfig,
    open: &mut dyn FnMut() -> Result<Box<dyn TraceReader>, Error>,
    observers: Vec<(Boundary, Box<dyn BoundaryObserver>)>,
) -> Result<TimedReport, Error> {
    run_built(TimedRun::new(config)?, open, observers)
}

/// [`run_trace`] with the stack already built (a caller that builds it first to check the
/// config before opening its outputs runs that stack, instead of building it again).
pub fn run_built(
    mut run: TimedRun,
    open: &mut dyn FnMut() -> Result<Box<dyn TraceReader>, Error>,
    observers: Vec<(Boundary, Box<dyn BoundaryObserver>)>,
) -> Result<TimedReport, Error> {
    for (b, o) in observers {
        run.observe(b, o);
    }
    let mut reader = open()?;
    if run.wants_extents(reader.carries_files()) {
        run.scan_extents(&mut *reader)?;
        reader = open()?;
    }
    run.run(&mut *reader)
}

/// Builds the device a spec names (`iostack devices`).
pub fn build_device(spec: &str) -> Result<Box<dyn Device>, ConfigError> {
    crate::device::build(spec)
}
