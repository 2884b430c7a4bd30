//! The timed engine: a discrete-event simulation of the whole stack.
//!
//! ```text
//! processes -> [front] -> page cache (policy + prefetcher) -> [cache] -> (block stage)
//!           -> I/O scheduler -> [sched] -> disk-side layers -> [device] -> device model
//! ```
//!
//! (the part from the scheduler down once per device when the config maps device ids to
//! devices)
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
pub mod cpu;
mod engine;
#[cfg(test)]
mod ca_tests;
#[cfg(test)]
mod cpu_tests;
#[cfg(test)]
mod fig1_tests;
#[cfg(test)]
mod file_map_tests;
#[cfg(test)]
mod hook_tests;
mod latency_log;
mod observers;
mod probe_set;
pub mod preset;
mod report;
pub mod series;

pub use config::{FileSizes, HintsConfig, Processes, Replay, Resolved, StackConfig, Think, WritePolicy};
pub use engine::{Boundary, BoundaryObserver};
pub use observers::{DumpObserver, ProbeObserver, ProbeThread, RequestRecorder, SharedProbe};
pub use probe_set::{ProbeSet, SetMember};
pub use latency_log::{LatencyLog, HEADER as LATENCY_LOG_HEADER};
pub use report::{BenchmarkReport, BenchmarksReport, BlkCounts, BlkReport, BoundaryLocality, DeviceReport, DeviceResponse, CacheCounts, CpuReport, DeviceCounts, FrontCounts, LogHistogram, Percentiles, ProcessReport, ResponseReport, SchedCounts, TimedReport};

use std::any::Any;
use std::cell::RefCell;
use std::rc::Rc;
use std::path::{Path, PathBuf};

use crate::cache::lru::Lru;
use crate::device::hdd::Hdd;
use crate::device::{BuiltDevice, Device};
use crate::prefetch::linux::LinuxReadahead;
use crate::prefetch::Prefetcher;
use crate::sched::cscan::CScan;
use crate::sched::Scheduler;
use crate::error::{ConfigError, Error};
use crate::layer::Layer;
use crate::metrics::{FirstReference, Granularity, ProbeConfig};
use crate::trace::background::BackgroundReader;
use crate::trace::devices::{DenseDevices, DeviceTable, KeySpace};
use crate::trace::{Format, ReaderOptions, TraceReader};
use engine::{Engine, EngineSettings, Lane};
use crate::engine::processes::{Processes as Tracking, TracePlan};
use crate::hints::HintsSpec;

/// The engine of a stack, in one of three compiled forms: the default stack (LRU, Linux
/// readahead, C-SCAN, a mechanical drive, no layers) with every component's calls compiled in;
/// LRU, the default and most used policy, compiled in with the other components behind trait
/// objects; and everything behind trait objects. All three run the same code.
enum StackEngine {
    Default(Box<Engine<Lru, LinuxReadahead, CScan, Hdd>>),
    Lru(Box<Engine<Lru>>),
    Any(Box<Engine>),
}

/// Runs `$body` with `$e` bound to the engine, whichever form it has.
macro_rules! with_engine {
    ($engine:expr, $e:ident => $body:expr) => {
        match $engine {
            StackEngine::Default($e) => $body,
            StackEngine::Lru($e) => $body,
            StackEngine::Any($e) => $body,
        }
    };
}

/// `Ok` with the trait object `$b` as a box of its concrete type `$t` if that is what it holds,
/// else `Err($b)`.
macro_rules! downcast {
    ($b:expr, $t:ty) => {{
        let b = $b;
        if (b.as_ref() as &dyn Any).is::<$t>() {
            Ok((b as Box<dyn Any>).downcast::<$t>().expect("checked type"))
        } else {
            Err(b)
        }
    }};
}

/// A device of the stack as built: the device id it serves, its scheduler, layers and model.
type StackLane = (Option<u32>, Box<dyn Scheduler>, Vec<Box<dyn Layer>>, BuiltDevice);

/// A timed stack built from a config, ready to run one trace.
pub struct TimedRun {
    config: StackConfig,
    engine: StackEngine,
    /// The locality probes `config.locality` installed, one member per boundary in
    /// [`Boundary::ALL`]'s order (shared with the engine's observer list, which notifies them).
    probes: Option<Rc<RefCell<ProbeSet>>>,
    /// The per-request device probe `config.device_request_locality` installed.
    request_probe: Option<SharedProbe>,
    /// The engine's dense device numbers and the trace's ids they stand for; the ids a device
    /// map names are numbered first, in the map's order, so its lanes know their numbers.
    devices: DeviceTable,
    /// The application hints the config names.
    hints: Option<std::sync::Arc<HintsSpec>>,
    /// The prefetcher has been told where the trace's files lie.
    file_map_given: bool,
}

impl TimedRun {
    /// Builds every component the config names; errors name the option at fault.
    pub fn new(config: &StackConfig) -> Result<TimedRun, ConfigError> {
        let devices = config.devices()?.into_iter().map(|(id, spec)| Ok((id, crate::device::build_model(&spec)?))).collect::<Result<Vec<_>, ConfigError>>()?;
        let resolved = config.resolve()?;
        let policy = crate::cache::build(&config.policy, resolved.cache_blocks)?;
        Self::assemble(config, policy, devices)
    }

    /// Builds every component the config names except the policy, which `build` makes from the
    /// cache's capacity in blocks (a policy from outside the registry, such as a Python class);
    /// the config's `policy` is then only echoed.
    pub fn with_policy(
        config: &StackConfig,
        build: impl FnOnce(u64) -> Result<Box<dyn crate::cache::Policy>, ConfigError>,
    ) -> Result<TimedRun, ConfigError> {
        let devices = config.devices()?.into_iter().map(|(id, spec)| Ok((id, crate::device::build_model(&spec)?))).collect::<Result<Vec<_>, ConfigError>>()?;
        let resolved = config.resolve()?;
        Self::assemble(config, build(resolved.cache_blocks)?, devices)
    }

    /// Builds the stack around a device the caller made (tests, custom models), serving every
    /// device id of the trace.
    pub fn with_device(config: &StackConfig, device: Box<dyn Device>) -> Result<TimedRun, ConfigError> {
        let resolved = config.resolve()?;
        let policy = crate::cache::build(&config.policy, resolved.cache_blocks)?;
        Self::with_parts(config, policy, device)
    }

    /// Builds the stack around a policy and a device the caller made; the config's `policy`
    /// and `device` are then only echoed.
    pub fn with_parts(config: &StackConfig, policy: Box<dyn crate::cache::Policy>, device: Box<dyn Device>) -> Result<TimedRun, ConfigError> {
        Self::assemble(config, policy, vec![(None, BuiltDevice::Other(device))])
    }

    /// Builds the stack around a policy and devices the caller made, each serving the trace's
    /// device id given with it (`None`: every id; then it must be the only device).
    pub fn with_devices(config: &StackConfig, policy: Box<dyn crate::cache::Policy>, devices: Vec<(Option<u32>, Box<dyn Device>)>) -> Result<TimedRun, ConfigError> {
        if devices.is_empty() || (devices.len() > 1 && devices.iter().any(|(id, _)| id.is_none())) {
            return Err(ConfigError::new("--device", "give one device for every device id, or one for each device id of the trace"));
        }
        Self::assemble(config, policy, devices.into_iter().map(|(id, d)| (id, BuiltDevice::Other(d))).collect())
    }

    fn assemble(config: &StackConfig, policy: Box<dyn crate::cache::Policy>, devices: Vec<(Option<u32>, BuiltDevice)>) -> Result<TimedRun, ConfigError> {
        let resolved = config.resolve()?;
        if policy.needs_future() {
            return Err(ConfigError::new(
                "--policy",
                format!("`{}` needs each reference's next use, which the timed engine does not compute (the reference stream depends on timing); use it with `iostack sim`", policy.name()),
            ));
        }
        let prefetcher = match &config.prefetch_select {
            None => crate::prefetch::build(&config.prefetch, config.page_size)?,
            Some(spec) => Self::prefetch_select(config, spec, &*policy, resolved.max_request_blocks, devices.len())?,
        };
        let hints = config.hints.as_ref().map(|h| h.load()).transpose()?;
        if prefetcher.wants_lists() {
            match &hints {
                Some(HintsSpec::File(_)) => {}
                Some(HintsSpec::Oracle { .. }) => {
                    return Err(ConfigError::new("--prefetch", format!("`{}` prefetches from the access lists of a hints file; the oracle gives none", prefetcher.name())))
                }
                None => return Err(ConfigError::new("--prefetch", format!("`{}` prefetches from the applications' access lists: give them with --hints", prefetcher.name()))),
            }
        }
        if hints.is_some() {
            if !policy.application_controlled() && !prefetcher.wants_lists() {
                return Err(ConfigError::new(
                    "--hints",
                    format!("hints apply to application-controlled policies (lrusp) and to prefetching from access lists (ca); `{}` is neither", policy.name()),
                ));
            }
            if config.processes != Processes::Trace {
                return Err(ConfigError::new("--hints", "hints name the trace's processes: they need `processes = trace`"));
            }
        }
        if let Some(l) = config.layers.first() {
            return Err(ConfigError::unknown("--layer", "layer", l, &[]));
        }
        // Each device has its own scheduler (and would have its own layers).
        let select = match &config.sched_select {
            None => None,
            Some(spec) => Some(Self::select_config(config, spec, devices.len())?),
        };
        let table = DeviceTable::new();
        let mut lanes = Vec::with_capacity(devices.len());
        for (id, device) in devices {
            let id = match id {
                None => None,
                Some(i) => Some(table.dense(i).ok_or_else(|| ConfigError::new("--device", "the device map names more devices than a run can key apart"))?),
            };
            let limits = crate::sched::SchedLimits::new(resolved.max_request_blocks, config.page_size);
            let sched = match &select {
                None => crate::sched::build(&config.sched, limits)?,
                Some((cfg, table)) => Box::new(crate::sched::select::Select::new(cfg.clone(), limits, table.clone(), config.page_size)?),
            };
            lanes.push((id, sched, Vec::<Box<dyn Layer>>::new(), device));
        }
        let settings = EngineSettings {
            page_size: config.page_size,
            queue_depth: config.queue_depth,
            write_through: config.write_policy == WritePolicy::Through,
            replay: config.replay,
            processes: config.processes,
            resolved,
        };
        let mut engine = Self::engine(settings, policy, prefetcher, lanes);
        let probes = config.locality.then(|| {
            let set = Rc::new(RefCell::new(ProbeSet::new(ProbeConfig { granularity: Granularity::Bytes(config.page_size), ..Default::default() }, Boundary::ALL.len())));
            for (member, b) in Boundary::ALL.into_iter().enumerate() {
                with_engine!(&mut engine, e => e.add_observer(b, Box::new(SetMember { set: set.clone(), member })));
            }
            set
        });
        let request_probe = match &config.device_request_locality {
            None => None,
            Some(_) if !config.locality => {
                return Err(ConfigError::new("--device-request-locality", "adds a probe to the locality probes, which `locality = false` (--no-locality) turns off"));
            }
            Some(rule) => {
                let first_reference = rule.trim().parse::<FirstReference>().map_err(|m| ConfigError::new("--device-request-locality", m))?;
                let probe = SharedProbe::new(ProbeConfig { granularity: Granularity::Object, first_reference, ..Default::default() });
                with_engine!(&mut engine, e => e.add_observer(Boundary::Device, Box::new(probe.clone())));
                Some(probe)
            }
        };
        with_engine!(&mut engine, e => e.set_device_ids(table.clone()));
        let mut run = TimedRun { config: config.clone(), engine, probes, request_probe, devices: table, hints: hints.map(std::sync::Arc::new), file_map_given: false };
        match (&config.redcap, &config.ada) {
            (None, Some(_)) => return Err(ConfigError::new("--ada", "ADA switches REDCAP on and off: give --redcap too (e.g. --redcap on)")),
            (Some(spec), None) => {
                let cfg = crate::blk::redcap::RedcapConfig::parse(spec, config.page_size)?;
                run.set_stage(Box::new(crate::blk::redcap::Redcap::new(cfg)));
            }
            (Some(spec), Some(ada)) => {
                let rc = crate::blk::redcap::RedcapConfig::parse(spec, config.page_size)?;
                let ada = crate::blk::ada::AdaConfig::parse(ada)?;
                let acc = crate::kdsim::accuracy::AccuracyConfig { table: ada.table.clone(), window: ada.window as u64, ..Default::default() };
                let table = crate::kdsim::accuracy::starting_table(config, &acc).map_err(|e| if ada.table.is_some() { ConfigError::new("--ada table", e.to_string()) } else { e })?;
                let sched = crate::sched::build(&config.sched, crate::sched::SchedLimits::new(resolved.max_request_blocks, config.page_size))?;
                run.set_stage(Box::new(crate::blk::ada::Ada::new(rc, ada, sched, table, config.page_size)?));
            }
            (None, None) => {}
        }
        Ok(run)
    }

    /// `--sched-select`'s settings and the virtual disk's starting table, for a stack of
    /// `devices` devices.
    fn select_config(config: &StackConfig, spec: &str, devices: usize) -> Result<(crate::sched::select::SelectConfig, crate::device::table::TableModel), ConfigError> {
        let option = "--sched-select";
        if config.sched != StackConfig::default().sched {
            return Err(ConfigError::new(option, format!("takes the place of --sched (`{}`): give the schedulers to choose between in --sched-select alone", config.sched)));
        }
        if config.ada.is_some() {
            return Err(ConfigError::new(option, "ADA and the scheduler controller each drive a virtual disk of their own; use one of --ada and --sched-select"));
        }
        if devices > 1 {
            return Err(ConfigError::new(option, "one device only: the controller compares schedulers on a virtual disk timed by one device's table"));
        }
        let cfg = crate::sched::select::parse(spec)?;
        let acc = crate::kdsim::accuracy::AccuracyConfig { table: cfg.table.clone(), window: cfg.window as u64, ..Default::default() };
        let table = crate::kdsim::accuracy::starting_table(config, &acc).map_err(|e| ConfigError::new("--sched-select table", e.to_string()))?;
        Ok((cfg, table))
    }

    /// `--prefetch-select`'s controller over the stack's policy, size and scheduler.
    fn prefetch_select(config: &StackConfig, spec: &str, policy: &dyn crate::cache::Policy, max_request_blocks: u32, devices: usize) -> Result<Box<dyn Prefetcher>, ConfigError> {
        let option = "--prefetch-select";
        if config.prefetch != StackConfig::default().prefetch {
            return Err(ConfigError::new(option, format!("takes the place of --prefetch (`{}`): give the settings to choose between in --prefetch-select alone", config.prefetch)));
        }
        if config.sched_select.is_some() || config.ada.is_some() {
            return Err(ConfigError::new(option, "the readahead controller, the scheduler controller and ADA each drive a virtual disk of their own; use one of --prefetch-select, --sched-select and --ada"));
        }
        if config.redcap.is_some() {
            return Err(ConfigError::new(option, "the shadow page cache's virtual disk has no REDCAP below it; run the controller without --redcap"));
        }
        if devices > 1 {
            return Err(ConfigError::new(option, "one device only: the shadow's reads are timed by one device's table"));
        }
        let cfg = crate::prefetch::select::parse(spec)?;
        if cfg.table.is_none() {
            return Err(ConfigError::new(
                "--prefetch-select table",
                "give the virtual disk's table (table=PATH, from `iostack kdsim train`): the page cache sees when reads complete, not when the device started them, so the table cannot be learned on line here",
            ));
        }
        let acc = crate::kdsim::accuracy::AccuracyConfig { table: cfg.table.clone(), window: cfg.window as u64, ..Default::default() };
        let table = crate::kdsim::accuracy::starting_table(config, &acc).map_err(|e| ConfigError::new("--prefetch-select table", e.to_string()))?;
        let stack = crate::prefetch::select::ShadowStack {
            policy: config.policy.clone(),
            capacity: policy.capacity(),
            sched: config.sched.clone(),
            limits: crate::sched::SchedLimits::new(max_request_blocks, config.page_size),
            page_bytes: config.page_size,
            max_request_blocks,
        };
        Ok(Box::new(crate::prefetch::select::PrefetchSelect::new(cfg, &stack, table)?))
    }

    /// The engine in the most compiled form the components allow.
    fn engine(settings: EngineSettings, policy: Box<dyn crate::cache::Policy>, prefetcher: Box<dyn Prefetcher>, mut lanes: Vec<StackLane>) -> StackEngine {
        let ps = settings.page_size;
        let dyn_lanes = |lanes: Vec<StackLane>| lanes.into_iter().map(|(id, sched, layers, device)| Lane::new(id, sched, layers, device.into_dyn(), ps)).collect::<Vec<_>>();
        let policy = match downcast!(policy, Lru) {
            Ok(lru) => lru,
            Err(other) => return StackEngine::Any(Box::new(Engine::new(settings, other, prefetcher, dyn_lanes(lanes)))),
        };
        if lanes.len() > 1 {
            return StackEngine::Lru(Box::new(Engine::new(settings, policy, prefetcher, dyn_lanes(lanes))));
        }
        let (id, sched, layers, device) = lanes.pop().expect("a device");
        match (downcast!(prefetcher, LinuxReadahead), downcast!(sched, CScan), device) {
            (Ok(prefetcher), Ok(sched), BuiltDevice::Hdd(hdd)) if layers.is_empty() => {
                StackEngine::Default(Box::new(Engine::new(settings, policy, prefetcher, vec![Lane::new(id, sched, layers, hdd, ps)])))
            }
            (prefetcher, sched, device) => {
                // Back behind trait objects, whichever way the downcasts went.
                let prefetcher: Box<dyn Prefetcher> = match prefetcher {
                    Ok(p) => p,
                    Err(p) => p,
                };
                let sched: Box<dyn Scheduler> = match sched {
                    Ok(s) => s,
                    Err(s) => s,
                };
                StackEngine::Lru(Box::new(Engine::new(settings, policy, prefetcher, vec![Lane::new(id, sched, layers, device.into_dyn(), ps)])))
            }
        }
    }

    /// Writes every device request's queue, dispatch and completion times to `log`.
    pub fn set_latency_log(&mut self, log: LatencyLog) {
        with_engine!(&mut self.engine, e => e.latency_log = Some(Box::new(log)));
    }

    /// Puts `stage` between the page cache and the scheduler (see [`crate::blk::BlockStage`]).
    pub fn set_stage(&mut self, stage: Box<dyn crate::blk::BlockStage>) {
        with_engine!(&mut self.engine, e => e.set_stage(stage));
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
        let (prefetches, device_sized) =
            with_engine!(&self.engine, e => (e.prefetcher().name() != "none", e.lanes().iter().all(|l| l.device.capacity_sectors().is_some())));
        self.config.file_sizes == FileSizes::Infer && prefetches && (carries_files || !device_sized)
    }

    /// First pass: the largest extent accessed in each file (requests with a file but no file
    /// size) and on each device (requests without a file), as file sizes for the prefetcher.
    pub fn scan_extents(&mut self, reader: &mut dyn TraceReader) -> Result<(), Error> {
        self.scan(reader, true, false)
    }

    /// Whether the prefetcher wants to know where the trace's files lie
    /// ([`Prefetcher::wants_file_map`]) and has not been told: a first pass learns it, when the
    /// trace names files (`carries_files`).
    pub fn wants_file_map(&self, carries_files: bool) -> bool {
        carries_files && !self.file_map_given && with_engine!(&self.engine, e => e.prefetcher().wants_file_map())
    }

    /// Hands the prefetcher where the trace's files lie (its requests with devices numbered
    /// by this run's table).
    pub fn set_file_map(&mut self, map: crate::prefetch::file_map::FileMap) {
        let map = std::sync::Arc::new(map);
        with_engine!(&mut self.engine, e => e.prefetcher_mut().set_file_map(map));
        self.file_map_given = true;
    }

    /// One first pass over the trace for what the run wants of it: the extents
    /// ([`TimedRun::scan_extents`]) and the file map ([`TimedRun::wants_file_map`]).
    fn scan(&mut self, reader: &mut dyn TraceReader, extents: bool, file_map: bool) -> Result<(), Error> {
        let ps = self.config.page_size;
        let pages = crate::trace::PageSize::new(ps);
        let mut map = crate::prefetch::file_map::FileMap::default();
        let sizes = with_engine!(&mut self.engine, e => &mut e.extents);
        let mut buf = Vec::with_capacity(4096);
        loop {
            buf.clear();
            if reader.read_batch(&mut buf, 4096)? == 0 {
                break;
            }
            for r in &buf {
                if file_map {
                    map.add_request(r, pages);
                }
                if !extents {
                    continue;
                }
                let (key, end) = match r.file {
                    Some(f) if f.size.is_none() => ((false, f.id), f.offset + r.length.max(1)),
                    Some(_) => continue,
                    None => ((true, r.device as u64), r.offset + r.length.max(1)),
                };
                let pages = end.div_ceil(ps);
                let e = sizes.entry(key).or_insert(0);
                *e = (*e).max(pages);
            }
        }
        if file_map {
            self.set_file_map(map);
        }
        Ok(())
    }

    /// Whether the run needs a pre-pass over the trace before replaying it ([`TimedRun::prepare`]):
    /// with an application-controlled policy, which is told each process's hints and exit.
    pub fn needs_plan(&self) -> bool {
        with_engine!(&self.engine, e => crate::cache::Policy::application_controlled(e.policy()) || e.prefetcher().wants_lists())
    }

    /// Sets up per-process counting (`per_process`) and, for an application-controlled policy,
    /// its hints and process exits from a pre-pass over the trace (`reader`, numbering devices
    /// with this run's table, as [`run_built`] opens it). The hints are checked against the
    /// trace: every pid and file they name must appear in it.
    pub fn prepare(&mut self, reader: Option<&mut dyn TraceReader>) -> Result<(), Error> {
        let controlled = with_engine!(&self.engine, e => crate::cache::Policy::application_controlled(e.policy()));
        let lists = with_engine!(&self.engine, e => e.prefetcher().wants_lists());
        let tracking = match reader {
            Some(reader) if self.needs_plan() => {
                let oracle = matches!(self.hints.as_deref(), Some(HintsSpec::Oracle { .. }));
                let plan = TracePlan::scan(reader, Some(self.config.page_size), oracle, lists)?;
                if let Some(HintsSpec::File(h)) = self.hints.as_deref() {
                    h.validate(&plan.facts)?;
                    if lists {
                        let l = plan.access_lists(h);
                        with_engine!(&mut self.engine, e => e.prefetcher_mut().set_lists(l));
                    }
                }
                if controlled {
                    Tracking::controlled(self.hints.as_deref(), &plan)
                } else if self.config.per_process {
                    Tracking::counting()
                } else {
                    return Ok(());
                }
            }
            _ if self.config.per_process => Tracking::counting(),
            _ => return Ok(()),
        };
        with_engine!(&mut self.engine, e => e.set_tracking(tracking));
        Ok(())
    }

    /// Replays the trace through the stack and reports.
    /// An application-controlled policy's pre-pass needs the trace twice: unless
    /// [`TimedRun::prepare`] was called, the trace is read into memory first.
    pub fn run(mut self, reader: &mut dyn TraceReader) -> Result<TimedReport, Error> {
        let table = self.devices.clone();
        let page_size = self.config.page_size;
        let reader = &mut DenseDevices::new(reader, &table, KeySpace::Blocks(page_size));
        let prepared = with_engine!(&self.engine, e => e.tracking().is_some());
        let file_map = self.wants_file_map(reader.carries_files());
        if !prepared && self.needs_plan() {
            let requests = crate::trace::read_all(reader)?;
            if file_map {
                self.set_file_map(crate::prefetch::file_map::FileMap::of_requests(&requests, page_size));
            }
            self.prepare(Some(&mut crate::trace::VecReader::new(requests.clone())))?;
            return self.run_numbered(&mut crate::trace::VecReader::new(requests));
        }
        if file_map {
            // Read into memory for the map's pass, with the process events kept in their places.
            let requests = crate::trace::read_all(reader)?;
            let mut events = Vec::new();
            reader.take_events(&mut events);
            self.set_file_map(crate::prefetch::file_map::FileMap::of_requests(&requests, page_size));
            if !prepared {
                self.prepare(None)?;
            }
            return self.run_numbered(&mut crate::trace::VecReader::with_events(requests, events));
        }
        if !prepared {
            self.prepare(None)?;
        }
        self.run_numbered(reader)
    }

    /// [`TimedRun::run`] over a reader whose devices are already numbered by this run's table.
    fn run_numbered(self, reader: &mut dyn TraceReader) -> Result<TimedReport, Error> {
        let TimedRun { config, mut engine, probes, request_probe, devices, .. } = self;
        let preload = match config.preload_blocks()? {
            Some(p) => {
                let mut blocks = Vec::with_capacity(p.blocks.len());
                for (d, b) in p.blocks {
                    let dense = devices.dense(d).ok_or_else(|| crate::error::ConfigError::new("--preload", format!("device {d}: too many devices")))?;
                    blocks.push((dense, b));
                }
                Some((blocks, p.pid))
            }
            None => None,
        };
        with_engine!(&mut engine, e => {
            if let Some((blocks, pid)) = &preload {
                e.preload(blocks, *pid);
            }
            e.run(reader)?;
            report(&config, &probes, request_probe.as_ref(), &devices, e)
        })
    }
}

/// The report of engine `e` after its run of `config`'s stack.
fn report<P: crate::cache::Policy + ?Sized, F: Prefetcher + ?Sized, S: Scheduler + ?Sized, D: Device + ?Sized>(
    config: &StackConfig,
    locality_probes: &Option<Rc<RefCell<ProbeSet>>>,
    request_probe: Option<&SharedProbe>,
    table: &DeviceTable,
    e: &mut Engine<P, F, S, D>,
) -> Result<TimedReport, Error> {
    let mut probes = std::collections::BTreeMap::new();
    let locality = locality_probes.as_ref().map(|set| {
        let mut set = set.borrow_mut();
        let [front, cache, sched, device] = set.reports() else { unreachable!("one member per boundary") };
        BoundaryLocality {
            front: front.clone(),
            cache: cache.clone(),
            sched: sched.clone(),
            device: device.clone(),
            device_per_request: request_probe.map(|p| p.report()),
        }
    });
    for (b, o) in e.observers.iter_mut() {
        let v = o.finish().map_err(|m| Error::Io(std::io::Error::other(format!("{} boundary: {m}", b.name()))))?;
        if !v.is_null() {
            probes.insert(b.name().to_string(), v);
        }
    }
    if let Some(log) = e.latency_log.take() {
        let path = log.path().display().to_string();
        let n = log.finish()?;
        probes.insert("latency_log".to_string(), serde_json::json!({ "latency_log": path, "requests": n }));
    }
    let lanes = e.lanes();
    // Lanes know dense device numbers; reports name the trace's ids.
    let trace_id = |l: &engine::Lane<S, D>| l.id.map(|d| table.trace_id(d));
    let (device, device_parameters) = match lanes {
        [one] if one.id.is_none() => (serde_json::Value::String(one.device.name()), one.device.parameters()),
        _ => (
            serde_json::Value::String(lanes.iter().map(|l| format!("{}={}", trace_id(l).unwrap_or(0), l.device.name())).collect::<Vec<_>>().join(",")),
            lanes.iter().map(|l| (trace_id(l).unwrap_or(0).to_string(), l.device.parameters())).collect::<serde_json::Map<_, _>>().into(),
        ),
    };
    let devices = lanes
        .iter()
        .map(|l| DeviceReport { id: trace_id(l), model: l.device.name(), sched: l.sched.name(), counts: l.counts.clone(), scheduler: l.sched_counts.clone() })
        .collect();
    let mut resolved = serde_json::json!({
        "policy": e.policy().name(),
        "cache": format!("{} blocks of {} bytes", config.resolve().map(|r| r.cache_blocks).unwrap_or(0), config.page_size),
        "prefetch": e.prefetcher().name(),
        "sched": lanes[0].sched.name(),
        "layers": lanes[0].layers.iter().map(|l| l.name()).collect::<Vec<_>>(),
        "device": device,
        "device_parameters": device_parameters,
        "replay": match config.replay { Replay::Closed => format!("closed, think {}", config.think), Replay::Open => "open".to_string() },
    });
    let stage_report = config.redcap.as_ref().and_then(|_| e.stage().map(|st| st.report()));
    // With ADA the stage reports both: REDCAP's counts and ADA's decisions.
    let (redcap, ada) = match (stage_report, &config.ada) {
        (Some(mut v), Some(_)) => (v.get_mut("redcap").map(serde_json::Value::take), v.get_mut("ada").map(serde_json::Value::take)),
        (v, _) => (v, None),
    };
    let blk = e.stage().map(|st| {
        resolved["blk"] = serde_json::Value::String(st.name());
        BlkReport { name: st.name(), counts: e.c.blk.clone(), stage: st.report() }
    });
    let c = &e.c;
    let hit_ratio = if c.cache.accesses == 0 { 0.0 } else { c.cache.hits as f64 / c.cache.accesses as f64 };
    let processes = e.process_reports();
    let notes = TimedReport::notes_for(config, &processes);
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
        devices,
        response: ResponseReport::new(&c.response_read, &c.response_write),
        device_response: {
            let [other_read, write, demand_read] = &c.device_response;
            let read = LogHistogram::merged(other_read, demand_read);
            let all = LogHistogram::merged(&read, write);
            DeviceResponse { all: all.summary(), read: read.summary(), write: write.summary(), demand_read: demand_read.summary() }
        },
        blk,
        redcap,
        ada,
        sched_select: lanes[0].sched.report(),
        prefetch_select: e.prefetcher().report(),
        processes,
        cpu: e.cpu_report(),
        benchmarks: e.benchmarks_report(),
        locality,
        probes,
        skipped: e.skipped,
        warnings: e.order.warnings(),
        notes,
        series: e.series_report.take(),
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
    // The engine keys blocks by a 16-bit device number: devices are numbered densely in the
    // order they appear (the same in both passes), and what leaves the run (dumps, processes
    // of `processes = device`) carries the trace's own ids again.
    let devices = run.devices.clone();
    for (b, o) in observers {
        run.observe(b, Box::new(TraceDeviceIds { inner: o, table: devices.clone(), ids: Vec::new() }));
    }
    let page_size = run.config.page_size;
    let per_device = run.config.processes == Processes::Device;
    let mut open = || -> Result<Box<dyn TraceReader>, Error> { Ok(Box::new(DenseDevices::new(open()?, &devices, KeySpace::Blocks(page_size)))) };
    // The trace is decoded on a second thread while the engine runs (same requests, same
    // order, same errors: see `BackgroundReader`).
    if run.needs_plan() {
        run.prepare(Some(&mut *open()?))?;
    } else {
        run.prepare(None)?;
    }
    // The reader's thread also makes the engine's pass over each batch (`trace::scan`), for the
    // reader the run reads, not for one a first pass over the trace reads.
    let pages = crate::trace::PageSize::new(page_size);
    let mut inner = open()?;
    let (extents, file_map) = (run.wants_extents(inner.carries_files()), run.wants_file_map(inner.carries_files()));
    if extents || file_map {
        run.scan(&mut BackgroundReader::spawn(inner), extents, file_map)?;
        inner = open()?;
    }
    let mut reader = BackgroundReader::scanning(inner, pages);
    let mut report = run.run_numbered(&mut reader)?;
    if per_device {
        for p in &mut report.processes {
            p.pid = devices.trace_id(p.pid);
        }
        report.processes.sort_by_key(|p| p.pid);
    }
    Ok(report)
}

/// Hands an observer the requests with the trace's own device ids (the engine sees dense ones).
struct TraceDeviceIds {
    inner: Box<dyn BoundaryObserver>,
    table: DeviceTable,
    /// The table's ids, copied as far as this observer has needed them.
    ids: Vec<u32>,
}

impl BoundaryObserver for TraceDeviceIds {
    fn observe(&mut self, r: &crate::trace::Request) {
        if r.device as usize >= self.ids.len() {
            self.ids = self.table.ids();
        }
        let mut r = *r;
        r.device = self.ids.get(r.device as usize).copied().unwrap_or(r.device);
        self.inner.observe(&r);
    }
    fn finish(&mut self) -> Result<serde_json::Value, String> {
        self.inner.finish()
    }
}

/// A stream to write: the requests crossing a boundary, to the trace file `path` (iostack CSV,
/// or the format its name gives, as `iostack convert` does); or the latency log (`--latency-log`,
/// see [`LatencyLog`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dump {
    pub of: DumpOf,
    pub path: PathBuf,
}

/// What a [`Dump`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpOf {
    /// The requests crossing the boundary.
    Boundary(Boundary),
    /// Every device request's queue, dispatch and completion times.
    Latency,
}

impl DumpOf {
    pub fn name(self) -> &'static str {
        match self {
            DumpOf::Boundary(b) => b.name(),
            DumpOf::Latency => "latency",
        }
    }
}

impl Dump {
    /// The dump of layer `layer` (front, cache, sched, device; or `latency`, the latency log) to
    /// `path`.
    pub fn new(layer: &str, path: impl Into<PathBuf>) -> Result<Dump, ConfigError> {
        let of = match layer.trim() {
            "latency" => DumpOf::Latency,
            l => DumpOf::Boundary(Boundary::parse(l).ok_or_else(|| {
                ConfigError::new("--dump", format!("unknown layer `{layer}`; valid: {}, latency", Boundary::ALL.map(|b| b.name()).join(", ")))
            })?),
        };
        Ok(Dump { of, path: path.into() })
    }

    /// The latency log to `path` (`--latency-log`).
    pub fn latency(path: impl Into<PathBuf>) -> Dump {
        Dump { of: DumpOf::Latency, path: path.into() }
    }

    /// `LAYER=PATH`, as `--dump` takes it.
    pub fn parse(spec: &str) -> Result<Dump, ConfigError> {
        let (layer, path) = spec.split_once('=').ok_or_else(|| ConfigError::new("--dump", format!("`{spec}` is not LAYER=PATH")))?;
        Dump::new(layer, path)
    }
}

/// Runs `config` over the trace at `path` (`-`: standard input) with the dumps `dumps`: what
/// `iostack run` and `iostack.run` do. The stack is built and the trace opened before any dump
/// file is created, so that a bad configuration or trace leaves nothing behind; a dump may not
/// name the trace. The reader opened for that check is the one the run reads; the trace is
/// opened a second time only when a first pass infers file sizes or learns where the files lie
/// (for `obl`), which standard input (read once) cannot give.
pub fn run_file(config: &StackConfig, path: &Path, format: Option<Format>, options: &ReaderOptions, dumps: &[Dump]) -> Result<TimedReport, Error> {
    run_stack_file(TimedRun::new(config)?, path, format, options, dumps)
}

/// [`run_file`] with a stack the caller built (e.g. with [`TimedRun::with_policy`]).
pub fn run_stack_file(
    mut stack: TimedRun,
    path: &Path,
    format: Option<Format>,
    options: &ReaderOptions,
    dumps: &[Dump],
) -> Result<TimedReport, Error> {
    let mut opened = Some(crate::trace::open(path, format, options)?);
    let mut observers: Vec<(Boundary, Box<dyn BoundaryObserver>)> = Vec::with_capacity(dumps.len());
    for (i, d) in dumps.iter().enumerate() {
        // Two dumps into one file would interleave (or share one temporary file): refused
        // before anything is written.
        let id = crate::trace::write::output_identity(&d.path);
        if let Some(e) = dumps[..i].iter().find(|e| crate::trace::write::output_identity(&e.path) == id) {
            return Err(ConfigError::new(
                "--dump",
                format!("{} is named by two dumps ({} and {}); give each its own file", d.path.display(), e.of.name(), d.of.name()),
            )
            .into());
        }
        if crate::trace::write::same_file(&d.path, path) {
            return Err(ConfigError::new("--dump", format!("{} is the trace being read", d.path.display())).into());
        }
        match d.of {
            DumpOf::Boundary(b) => observers.push((b, Box::new(DumpObserver::create(&d.path)?))),
            DumpOf::Latency => stack.set_latency_log(LatencyLog::create(&d.path)?),
        }
    }
    let stdin = path == Path::new("-");
    if stdin && stack.needs_plan() {
        return Err(ConfigError::new(
            "--hints",
            format!(
                "`{}` with `{}` reads the trace twice (a first pass finds each process's requests and files, for its hints, lists and exit), \
                 and standard input can be read only once: give the trace as a file",
                stack.config.policy, stack.config.prefetch
            ),
        )
        .into());
    }
    let carries_files = opened.as_ref().is_some_and(|r| r.carries_files());
    if stdin && stack.wants_file_map(carries_files) {
        return Err(ConfigError::new(
            "--prefetch",
            format!(
                "`{}` fetches a file's next block where the file lies, which a first pass over the trace learns, \
                 and standard input can be read only once: give the trace as a file",
                stack.config.prefetch
            ),
        )
        .into());
    }
    let mut open = || -> Result<Box<dyn TraceReader>, Error> {
        match opened.take() {
            Some(reader) => Ok(reader),
            None if stdin => Err(ConfigError::new(
                "--file-sizes",
                "file sizes are inferred by a first pass over the trace, and standard input can be read only once: \
                 give the trace as a file, or set file sizes to `unknown`",
            )
            .into()),
            None => Ok(crate::trace::open(path, format, options)?),
        }
    };
    run_built(stack, &mut open, observers)
}

/// Builds the device a spec names (`iostack devices`).
pub fn build_device(spec: &str) -> Result<Box<dyn Device>, ConfigError> {
    crate::device::build(spec)
}
