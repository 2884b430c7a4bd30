//! The discrete-event engine: processes, page cache, prefetcher, scheduler, layers, device.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::config::{Replay, Resolved, Think};
use super::Processes;
use super::report::{BlkCounts, CacheCounts, DeviceCounts, FrontCounts, LogHistogram, ProcessReport, SchedCounts, SequenceTracker, SizeCounts};
use super::latency_log::LatencyLog;
use super::series::{SeriesCounter, Snapshot, TimedSeries};
use super::blocks::{BlockStates, DIRTY, EVICTED, INFLIGHT, MARKER, NIL, PREFETCHED};
use crate::blk::{BlockStage, StageActions, Submit};
use crate::cache::{block_key, split_block_key, Access, Evicted, FileBlock, Key, Origin, Policy};
use crate::engine::processes::{file_block, Processes as Tracking};
use crate::device::{Device, DeviceRequest, Service, SECTOR};
use crate::layer::{Below, DeviceRef, Layer};
use crate::prefetch::{BlockPresence, CacheActions, Completion, DemandAccess, Fetch, FileView, Prefetcher};
use crate::sched::{Cause, IoRequest, Scheduler};
use crate::trace::scan::BatchScan;
use crate::trace::{Op, PageSize, Request};

mod block_layer;
mod compute;
mod input;
mod page_cache;
mod proc_events;
mod relaunch;

/// Requests read from the trace at a time.
const INPUT_BATCH: usize = 4096;

/// A boundary of the stack where the request stream can be observed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Boundary {
    /// Requests as the processes issue them.
    Front,
    /// Requests leaving the page cache (misses, prefetches, write-back), before merging.
    Cache,
    /// Requests the scheduler dispatches.
    Sched,
    /// Requests reaching the device (below the disk-side layers).
    Device,
}

impl Boundary {
    pub const ALL: [Boundary; 4] = [Boundary::Front, Boundary::Cache, Boundary::Sched, Boundary::Device];
    pub fn name(self) -> &'static str {
        match self {
            Boundary::Front => "front",
            Boundary::Cache => "cache",
            Boundary::Sched => "sched",
            Boundary::Device => "device",
        }
    }
    pub fn parse(s: &str) -> Option<Boundary> {
        Boundary::ALL.into_iter().find(|b| b.name().eq_ignore_ascii_case(s.trim()))
    }
}

/// A passive observer of the stream crossing one boundary (a locality probe, a dump writer).
/// Requests below the cache carry no file, and the pid of the process they are for (see
/// [`IoRequest::pid`]; after the scheduler merged requests, the pid of the first part).
pub trait BoundaryObserver {
    fn observe(&mut self, r: &Request);
    /// Called once at the end; the value goes into the report under the boundary's name
    /// (`Null` to add nothing). An error (e.g. a failed write) fails the run.
    fn finish(&mut self) -> Result<serde_json::Value, String>;
}

#[derive(Debug, Clone, Copy)]
struct WaitNode {
    pending: u32,
    next: u32,
}

/// A request some process waits for.
#[derive(Debug, Clone, Copy)]
struct Pending {
    proc: u32,
    issue_ns: u64,
    outstanding: u32,
    write: bool,
}

/// An entry of a process's queue: a request of the trace, or a process event (closed loop) that
/// the process gets to in turn, after the requests queued before it.
#[derive(Debug, Clone, Copy)]
enum Queued {
    Request(Request),
    /// The event `index` of the placed ones ([`proc_events::ProcEvents`]), at the trace time of
    /// the last request read when it was placed.
    Event { time_ns: u64, index: u32 },
}

impl Queued {
    /// The trace time it counts at, for the think time before it and a process's start.
    #[inline]
    fn time_ns(&self) -> u64 {
        match self {
            Queued::Request(r) => r.time_ns,
            Queued::Event { time_ns, .. } => *time_ns,
        }
    }
}

#[derive(Debug, Default, Clone)]
struct Proc {
    pid: u32,
    queue: VecDeque<Queued>,
    /// Trace time of the last request issued (for trace think time).
    last_trace_ns: u64,
    started: bool,
    start_ns: u64,
    end_ns: u64,
    requests: u64,
    response_sum: u128,
    response_max: u64,
    /// Requests the device completed for this process (by [`IoRequest::pid`]).
    device: ProcDevice,
    /// Forked in the trace, and its parent has not got to the fork yet: it waits.
    unborn: bool,
}

/// A process's share of the device: the requests dispatched on its behalf, their blocks, and
/// their response times from entering the scheduler to completion.
#[derive(Debug, Default, Clone, Copy)]
struct ProcDevice {
    requests: u64,
    sync_requests: u64,
    blocks_read: u64,
    blocks_written: u64,
    response_sum: u128,
    response_max: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Issue,
    Arrive,
    Done,
    Flush,
    SchedWake,
    /// A block stage serves a request from its memory.
    StageServe,
    /// Closed loop: the trace reader looks ahead for processes whose first request is due.
    Discover,
    /// With `cpus`: a slice of compute ends on the CPU `arg` ([`compute`]).
    CpuSlice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    time: u64,
    seq: u64,
    kind: Kind,
    arg: u32,
}

/// A run of blocks leaving the page cache as one request, while it is built: the request,
/// and whether there is one. (Not an `Option<IoRequest>`: taking that copies the request
/// through the stack in pieces, with its tag in the request's padding, and reads it back
/// whole, a load the CPU cannot forward from those stores.)
#[derive(Debug, Clone, Copy)]
struct Run {
    req: IoRequest,
    live: bool,
}

impl Run {
    const NONE: Run = Run {
        req: IoRequest { op: Op::Read, device: 0, block: 0, blocks: 0, sync: false, cause: Cause::Demand, arrival_ns: 0, pid: 0 },
        live: false,
    };
}

/// Stores `x` in a free slot of `slab` (or a new one) and returns its index.
#[inline]
fn slab_put<T>(slab: &mut Vec<T>, free: &mut Vec<u32>, x: T) -> u32 {
    match free.pop() {
        Some(i) => {
            slab[i as usize] = x;
            i
        }
        None => {
            slab.push(x);
            (slab.len() - 1) as u32
        }
    }
}

/// The settings the engine runs with.
#[derive(Debug, Clone, Copy)]
pub struct EngineSettings {
    pub page_size: u64,
    pub queue_depth: u32,
    pub write_through: bool,
    pub replay: Replay,
    pub processes: Processes,
    pub resolved: Resolved,
}

struct Presence<'a, P: ?Sized> {
    policy: &'a P,
    capacity: u64,
    blocks: &'a BlockStates,
    evicted_reads: u32,
}

impl<P: Policy + ?Sized> BlockPresence for Presence<'_, P> {
    #[inline]
    fn is_cached(&self, device: u32, block: u64) -> bool {
        let k = block_key(device, block);
        self.policy.contains(k) || (self.evicted_reads > 0 && self.blocks.get(k).is_some_and(|s| s.flags & INFLIGHT != 0))
    }
    #[inline]
    fn in_flight(&self, device: u32, block: u64) -> bool {
        self.blocks.get(block_key(device, block)).is_some_and(|s| s.flags & INFLIGHT != 0)
    }
    fn free_frames(&self) -> u64 {
        self.capacity.saturating_sub(self.policy.occupied())
    }
    fn pinned(&self, device: u32, block: u64) -> bool {
        self.policy.pinned(block_key(device, block))
    }
}

/// Counters the engine keeps while running.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub front: FrontCounts,
    pub cache: CacheCounts,
    /// The sums over the devices, made at the end of the run (each device counts its own while
    /// running: [`Lane`]).
    pub sched: SchedCounts,
    pub device: DeviceCounts,
    /// Response times of reads and of writes (all requests: their merge, at the end); their
    /// counts are the requests completed.
    pub response_read: LogHistogram,
    pub response_write: LogHistogram,
    /// Device requests from entering the scheduler to completion: reads other than demand
    /// reads, writes, demand reads (reads: the merge of the first and the last; all: of the
    /// three, at the end).
    pub device_response: [LogHistogram; 3],
    pub blk: BlkCounts,
    pub elapsed_ns: u64,
    pub end_ns: u64,
}

/// One device of the stack with its own scheduler (and disk-side layers): the requests for the
/// trace's device ids it serves go through it, and its figures are its own.
pub(crate) struct Lane<S: Scheduler + ?Sized, D: Device + ?Sized> {
    /// The trace's device id it serves; `None`: every id (one device for the whole trace).
    pub id: Option<u32>,
    pub sched: Box<S>,
    pub layers: Vec<Box<dyn Layer>>,
    pub device: Box<D>,
    /// The device's capacity in pages, when the model has one: the size of a raw device read
    /// as one file.
    device_pages: Option<u64>,
    /// Requests in the device.
    in_device: u32,
    wake_armed: Option<u64>,
    /// The scheduler holds requests (it changes only through `sched_add` and the dispatches).
    holds: bool,
    seqs: SequenceTracker,
    pub counts: DeviceCounts,
    pub sched_counts: SchedCounts,
    /// Request sizes and sequence sizes while running; folded into `counts` at the end.
    request_sizes: SizeCounts,
    sequence_sizes: SizeCounts,
}

impl<S: Scheduler + ?Sized, D: Device + ?Sized> Lane<S, D> {
    pub(crate) fn new(id: Option<u32>, sched: Box<S>, layers: Vec<Box<dyn Layer>>, device: Box<D>, page_size: u64) -> Self {
        let device_pages = device.capacity_sectors().map(|sec| sec * SECTOR / page_size);
        Lane {
            id,
            sched,
            layers,
            device,
            device_pages,
            in_device: 0,
            wake_armed: None,
            holds: false,
            seqs: SequenceTracker::default(),
            counts: DeviceCounts::default(),
            sched_counts: SchedCounts::default(),
            request_sizes: SizeCounts::default(),
            sequence_sizes: SizeCounts::default(),
        }
    }

    /// Closes the running counts at the end of the run.
    fn finish(&mut self) {
        self.seqs.close(&mut self.sequence_sizes);
        self.request_sizes.fold_into(&mut self.counts.sizes);
        self.sequence_sizes.fold_into(&mut self.counts.sequences);
        self.sched_counts.merges = self.sched.merges();
    }
}

/// The timed engine. Build it with [`super::TimedRun`]; it is driven by `run`.
///
/// It is generic over its components, which it calls several times per request: with concrete
/// types (`Engine<Lru, LinuxReadahead, CScan, Hdd>`, the default stack) those calls are compiled
/// in and inlined across components; with the defaults (trait objects) it runs any stack. Every
/// form is the same code, so every form gives the same results.
pub struct Engine<P: Policy + ?Sized = dyn Policy, F: Prefetcher + ?Sized = dyn Prefetcher, S: Scheduler + ?Sized = dyn Scheduler, D: Device + ?Sized = dyn Device> {
    s: EngineSettings,
    /// `s.page_size`, with the shift or division for pages chosen once.
    pages: PageSize,
    sectors_per_block: u64,
    policy: Box<P>,
    /// `policy.capacity()` and `policy.has_side_evictions()`, constant for the run.
    capacity: u64,
    side_evictions: bool,
    prefetcher: Box<F>,
    /// The devices, each with its scheduler; one for the whole trace unless the config maps
    /// device ids to devices.
    lanes: Vec<Lane<S, D>>,
    /// Whether a device map gives each device its own lane. Map ids are numbered first (see
    /// `TimedRun`), so lane `i` serves the engine's device number `i`; otherwise every request
    /// goes to lane 0.
    mapped: bool,
    /// `u32::MAX` when `mapped`, else 0: a device number masked with it is its lane (no branch
    /// on the per-request path).
    lane_mask: u32,
    /// Whether `kick` has anything to do: with one lane, whether it holds requests and its
    /// device has room (set where either changes, so that the common case, nothing to
    /// dispatch, tests one flag); with several, always (`kick_lanes` looks at each).
    kick_due: bool,
    /// The trace's device ids behind the dense numbers the engine sees, for messages.
    device_ids: Option<crate::trace::devices::DeviceTable>,
    /// The block-layer stage between the page cache and the scheduler, if any.
    stage: Option<Box<dyn BlockStage>>,
    stage_out: StageActions,
    /// Requests a stage serves, until their serve event.
    stage_serves: Vec<Option<IoRequest>>,
    stage_serves_free: Vec<u32>,
    pub(crate) observers: Vec<(Boundary, Box<dyn BoundaryObserver>)>,
    observe: [bool; 4],
    /// Per-process cache counts and application control (hints, files, exits), when the run
    /// counts per process or the policy is application-controlled; `None` otherwise, and then
    /// the per-request path does nothing for them.
    tracking: Option<Box<Tracking>>,
    /// The policy is told the file of each reference and of each prefetched block.
    tell_files: bool,
    /// The file block of the demand reference being made, and its disk block, for the files
    /// of the blocks prefetched around it.
    demand_file: Option<(u32, u64, FileBlock)>,
    /// The prefetcher asks for cache actions ([`Prefetcher::acts_on_cache`]), gathered here.
    prefetcher_acts: bool,
    cache_acts: CacheActions,

    now: u64,
    seq: u64,
    heap: BinaryHeap<Reverse<Event>>,
    /// The event pushed last, kept out of the heap until another is pushed: the next event is
    /// the earlier of this and the heap's top (events carry their sequence numbers, so the
    /// order is the heap's alone). A closed-loop process waiting for its read, the usual state,
    /// has one event pending, which then never enters the heap.
    inline: Option<Event>,
    blocks: BlockStates,
    /// Blocks flagged EVICTED (read in flight, not in the policy). A block in flight and not
    /// flagged is in the policy, so while this is 0 "cached or in flight" is one policy lookup.
    evicted_reads: u32,
    waits: Vec<WaitNode>,
    wait_free: Vec<u32>,
    pending: Vec<Pending>,
    pending_free: Vec<u32>,
    /// The request being started, and its slot in `pending`: `NIL` until one of its blocks has
    /// to be waited for (most requests complete at once, and never take a slot).
    cur: Pending,
    cur_slot: u32,
    procs: Vec<Proc>,
    proc_of: hashbrown::HashMap<u32, u32, rustc_hash::FxBuildHasher>,
    /// The last (pid, process index) looked up: traces come in runs of one process.
    last_proc: (u32, u32),
    /// Requests in the device.
    in_device: Vec<Option<IoRequest>>,
    in_device_free: Vec<u32>,
    /// The service of each request in the device and the time it was dispatched, by the same
    /// slots: kept only when something reads them at completion (a block stage, the latency
    /// log; `keep_service`, set as the run starts), so that the default stack's dispatch stores
    /// the request alone.
    in_device_service: Vec<(Service, u64)>,
    keep_service: bool,
    dirty_fifo: VecDeque<(u64, Key)>,
    flush_armed: bool,
    fetch_buf: Vec<Fetch>,
    seen: Vec<(DeviceRequest, Service)>,
    /// The read and the write run being built.
    read_run: Run,
    write_run: Run,
    /// Blocks the flusher writes back, with the process that dirtied each.
    flush_buf: Vec<(Key, u32)>,
    /// Side evictions drained from the policy (reused: no allocation in steady state).
    side_buf: Vec<Evicted>,
    next_set: u32,
    vtime: u64,
    /// The process on whose behalf the cache acts now (the issuer of the request being
    /// started): eviction write-back goes out for it.
    acting_pid: u32,
    /// The last (pid, process index) a device completion was charged to.
    last_done_proc: (u32, u32),
    /// Closed-loop processes whose request completed, to continue after the current event.
    ready: Vec<u32>,
    /// File sizes in pages inferred by the first pass: (is_device, id) -> pages.
    pub(crate) extents: hashbrown::HashMap<(bool, u64), u64, rustc_hash::FxBuildHasher>,
    pub(crate) c: Counters,
    /// Figures per interval (`interval` in the config), while running and as reported.
    series: Option<Box<SeriesCounter>>,
    pub(crate) series_report: Option<TimedSeries>,
    /// `--latency-log`: every device request's queue, dispatch and completion times.
    pub(crate) latency_log: Option<Box<LatencyLog>>,

    // Trace input.
    t0: Option<u64>,
    last_trace_ns: u64,
    input_done: bool,
    batch: Vec<Request>,
    /// What one pass over `batch` found: the key of the first block of each of its requests,
    /// the order of its trace times, its pids.
    scan: BatchScan,
    batch_pos: usize,
    /// Where in `batch` the reader stops taking requests straight away: its end, or the place of
    /// the next process event, which is placed there (so that the per-request path tests
    /// one bound for both).
    batch_stop: usize,
    next_arrival: Option<Request>,
    /// Closed-loop look-ahead: how far into `batch` the reader has looked for processes whose
    /// first request is due, and whether it waits for the next batch.
    ahead_pos: usize,
    ahead_waits: bool,
    /// The process of every request of `batch`, when they all have one (as `pid_of` sees it)
    /// and their trace times never go back: the look-ahead then finds the first request not
    /// yet due by bisection instead of a scan.
    batch_one_proc: Option<u32>,
    pub(crate) skipped: u64,
    /// What the replay noticed about the trace's order, for the report's warnings.
    pub(crate) order: OrderChecks,
    /// The trace's process events, when it has any.
    proc_events: Option<Box<proc_events::ProcEvents>>,
    /// With `cpus`: the CPUs the processes share for their think time; `None`, a CPU each
    /// (think time is then a plain delay, and nothing here is entered).
    cpus: Option<Box<super::cpu::Cpus>>,
}

/// Two signs that a trace does not interleave its processes the way it means to (a generator
/// that writes its processes one after another, say): requests whose trace time goes back
/// relative to the ones before them in the file (the replay raises such a time to the previous
/// one, so a process written after another runs after it), and, in closed loop, processes whose
/// first request the trace reader's look-ahead (see `Engine::discover`) finds long after its
/// trace time, because it lay beyond the batch the reader held, behind other processes'
/// requests that were due but not yet issued.
#[derive(Debug, Default, Clone)]
pub(crate) struct OrderChecks {
    /// Requests read, and the largest raw trace time among them.
    read: u64,
    max_raw_ns: u64,
    /// Requests earlier than one before them, and the first: (its position from 1, pid, its
    /// time, the time it follows), times relative to the first request.
    backwards: u64,
    first_backwards: Option<(u64, u32, u64, u64)>,
    /// Processes started late, and the first: (pid, trace time, issue time).
    late: u64,
    first_late: Option<(u32, u64, u64)>,
}

/// A closed-loop process whose first issue comes this much after its trace time, and more than
/// twice its trace time, started late.
const LATE_START_NS: u64 = 100_000_000;

impl OrderChecks {
    /// The warnings, one per kind at most.
    pub(crate) fn warnings(&self) -> Vec<String> {
        let s = |ns: u64| format!("{:.3} s", ns as f64 / 1e9);
        let mut w = Vec::new();
        if let Some((i, pid, t, prev)) = self.first_backwards {
            w.push(format!(
                "trace time goes backwards: {} request(s) are earlier than a request before them in the trace (the first: request {i}, pid {pid}, at {} after one at {}); \
                 the replay issues none before the requests before it, so a process whose requests come after another's in the file runs after it, not beside it. \
                 To replay processes concurrently, the trace must interleave them in time order (docs/timed.md, Replay)",
                self.backwards, s(t), s(prev)
            ));
        }
        if let Some((pid, t, at)) = self.first_late {
            w.push(format!(
                "{} process(es) started late (the first: pid {pid}, trace time {}, first request issued at {}): closed-loop replay starts a process at its \
                 trace time when the trace reader, looking ahead no further than the batch of {INPUT_BATCH} requests it holds, finds its first request; here \
                 it lay beyond that batch, behind other processes' requests that were due but not yet issued. If the processes ran \
                 concurrently, interleave their requests in time order (docs/timed.md, Replay)",
                self.late, s(t), s(at)
            ));
        }
        w
    }
}

/// Result of the trace input.
pub(crate) type InputResult<T> = Result<T, crate::error::Error>;

impl<P: Policy + ?Sized, F: Prefetcher + ?Sized, S: Scheduler + ?Sized, D: Device + ?Sized> Engine<P, F, S, D> {
    pub(crate) fn new(s: EngineSettings, policy: Box<P>, prefetcher: Box<F>, lanes: Vec<Lane<S, D>>) -> Self {
        assert!(!lanes.is_empty(), "an engine needs a device");
        let mapped = lanes.iter().any(|l| l.id.is_some());
        let several = lanes.len() > 1;
        assert!(!mapped || lanes.iter().enumerate().all(|(i, l)| l.id == Some(i as u32)), "lane i serves device number i");
        Engine {
            sectors_per_block: s.page_size / SECTOR,
            pages: PageSize::new(s.page_size),
            s,
            capacity: policy.capacity(),
            prefetcher_acts: prefetcher.acts_on_cache(),
            side_evictions: policy.has_side_evictions(),
            policy,
            prefetcher,
            lanes,
            mapped,
            lane_mask: if mapped { u32::MAX } else { 0 },
            kick_due: several,
            device_ids: None,
            stage: None,
            stage_out: StageActions::default(),
            stage_serves: Vec::new(),
            stage_serves_free: Vec::new(),
            observers: Vec::new(),
            observe: [false; 4],
            tracking: None,
            tell_files: false,
            demand_file: None,
            cache_acts: CacheActions::default(),
            now: 0,
            seq: 0,
            heap: BinaryHeap::new(),
            inline: None,
            blocks: BlockStates::default(),
            evicted_reads: 0,
            waits: Vec::new(),
            wait_free: Vec::new(),
            pending: Vec::new(),
            pending_free: Vec::new(),
            cur: Pending { proc: 0, issue_ns: 0, outstanding: 0, write: false },
            cur_slot: NIL,
            procs: Vec::new(),
            proc_of: Default::default(),
            last_proc: (0, 0),
            in_device: Vec::new(),
            in_device_free: Vec::new(),
            in_device_service: Vec::new(),
            keep_service: false,
            dirty_fifo: VecDeque::new(),
            flush_armed: false,
            fetch_buf: Vec::new(),
            seen: Vec::new(),
            read_run: Run::NONE,
            write_run: Run::NONE,
            flush_buf: Vec::new(),
            side_buf: Vec::new(),
            next_set: 0,
            vtime: 0,
            acting_pid: 0,
            last_done_proc: (u32::MAX, NIL),
            ready: Vec::new(),
            extents: Default::default(),
            c: Counters::default(),
            series: s.resolved.interval.map(|i| Box::new(SeriesCounter::new(i))),
            series_report: None,
            latency_log: None,
            t0: None,
            last_trace_ns: 0,
            input_done: false,
            batch: Vec::with_capacity(INPUT_BATCH),
            scan: BatchScan::default(),
            batch_pos: 0,
            batch_stop: 0,
            next_arrival: None,
            ahead_pos: 0,
            ahead_waits: false,
            batch_one_proc: None,
            skipped: 0,
            order: OrderChecks::default(),
            proc_events: None,
            cpus: s.resolved.cpus.map(|(n, q)| Box::new(super::cpu::Cpus::new(n, q))),
        }
    }

    pub(crate) fn policy(&self) -> &P {
        &self.policy
    }
    pub(crate) fn prefetcher(&self) -> &F {
        &self.prefetcher
    }
    pub(crate) fn lanes(&self) -> &[Lane<S, D>] {
        &self.lanes
    }

    /// The lane serving device id `device`.
    #[inline]
    fn lane_index(&self, device: u32) -> usize {
        // Requests for ids the map does not name are refused as the trace is read.
        (device & self.lane_mask) as usize
    }

    #[cold]
    #[inline(never)]
    /// Names the trace's device ids in errors (the engine sees dense numbers; see
    /// `trace::devices`).
    pub(crate) fn set_device_ids(&mut self, table: crate::trace::devices::DeviceTable) {
        self.device_ids = Some(table);
    }

    fn trace_device(&self, dense: u32) -> u32 {
        self.device_ids.as_ref().map_or(dense, |t| t.trace_id(dense))
    }

    fn unmapped_device(&self, r: &Request) -> crate::error::Error {
        let mut ids: Vec<u32> = self.lanes.iter().filter_map(|l| l.id).map(|d| self.trace_device(d)).collect();
        ids.sort_unstable();
        let ids: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
        crate::error::ConfigError::new(
            "--device",
            format!(
                "request {} of the trace is on device id {}, which the device map does not name (it maps ids {}): give a device for every device id of the trace, or one spec for all",
                self.order.read,
                self.trace_device(r.device),
                ids.join(", ")
            ),
        )
        .into()
    }
    pub(crate) fn stage(&self) -> Option<&dyn BlockStage> {
        self.stage.as_deref()
    }
    pub(crate) fn set_stage(&mut self, stage: Box<dyn BlockStage>) {
        self.stage = Some(stage);
    }

    /// Counts per process and, for an application-controlled policy, delivers its hints,
    /// files and process exits (see [`Tracking`]).
    pub(crate) fn set_tracking(&mut self, t: Tracking) {
        self.tell_files = t.controlled_policy();
        self.tracking = Some(Box::new(t));
    }

    pub(crate) fn prefetcher_mut(&mut self) -> &mut F {
        &mut self.prefetcher
    }

    /// The per-process cache counts, when tracked.
    pub(crate) fn tracking(&self) -> Option<&Tracking> {
        self.tracking.as_deref()
    }

    pub(crate) fn add_observer(&mut self, b: Boundary, o: Box<dyn BoundaryObserver>) {
        self.observe[b as usize] = true;
        self.observers.push((b, o));
    }

    fn notify(&mut self, b: Boundary, r: &Request) {
        for (ob, o) in self.observers.iter_mut() {
            if *ob == b {
                o.observe(r);
            }
        }
    }

    // ----- events -----

    #[inline]
    fn push(&mut self, time: u64, kind: Kind, arg: u32) {
        let e = Event { time, seq: self.seq, kind, arg };
        self.seq += 1;
        if let Some(old) = self.inline.replace(e) {
            self.heap.push(Reverse(old));
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<Event> {
        match self.inline {
            Some(e) => {
                if self.heap.peek().is_some_and(|Reverse(top)| *top < e) {
                    self.heap.pop().map(|Reverse(e)| e)
                } else {
                    self.inline = None;
                    Some(e)
                }
            }
            None => self.heap.pop().map(|Reverse(e)| e),
        }
    }

    // ----- the run -----

    /// Before the run: the cache starts holding these blocks, brought in by process `pid` and
    /// clean, in the order given (the last is the most recent), with no I/O and no counts. A
    /// block already cached is skipped; once the cache is full, the policy makes room as for a
    /// miss. Their file identity comes with their first reference.
    pub(crate) fn preload(&mut self, blocks: &[(u32, u64)], pid: u32) {
        if self.tell_files {
            self.policy.next_file(None);
        }
        for &(device, block) in blocks {
            let key = block_key(device, block);
            if self.policy.contains(key) {
                continue;
            }
            let acc = self.access(key, Op::Read, pid, Origin::Demand);
            while self.policy.occupied() + 1 > self.capacity {
                if self.policy.evict(&acc).is_none() {
                    break;
                }
            }
            self.policy.insert(&acc);
            if self.side_evictions {
                self.policy.drain_side_evictions(&mut self.side_buf);
                self.side_buf.clear();
            }
        }
    }

    pub(crate) fn run(&mut self, reader: &mut dyn crate::trace::TraceReader) -> InputResult<()> {
        self.keep_service = self.stage.is_some() || self.latency_log.is_some();
        match self.s.replay {
            Replay::Closed => {
                self.fill(reader, None)?;
                self.discover(reader)?;
            }
            Replay::Open => {
                if let Some(r) = self.next_request(reader)? {
                    self.next_arrival = Some(r);
                    self.push(r.time_ns, Kind::Arrive, 0);
                }
            }
        }
        while let Some(e) = self.pop() {
            debug_assert!(e.time >= self.now);
            self.now = e.time;
            if self.series.as_ref().is_some_and(|s| self.now >= s.next_ns) {
                self.series_at();
            }
            match e.kind {
                Kind::Issue => {
                    let p = e.arg;
                    let q = self.procs[p as usize].queue.pop_front().expect("issue with a queued request");
                    self.start_queued(p, q);
                }
                Kind::Arrive => {
                    let r = self.next_arrival.take().expect("arrival");
                    let p = self.proc_index(&r);
                    self.start_request(p, r);
                    if let Some(n) = self.next_request(reader)? {
                        self.next_arrival = Some(n);
                        self.push(n.time_ns.max(self.now), Kind::Arrive, 0);
                    }
                }
                Kind::Done => self.device_done(e.arg),
                Kind::Flush => self.flush_expired(),
                Kind::SchedWake => {
                    self.lanes[e.arg as usize].wake_armed = None;
                    self.kick();
                }
                Kind::StageServe => self.stage_served(e.arg),
                Kind::Discover => self.discover(reader)?,
                Kind::CpuSlice => self.cpu_slice_end(e.arg),
            }
            if self.s.replay == Replay::Closed {
                self.continue_ready(reader)?;
            }
        }
        self.c.end_ns = self.c.end_ns.max(self.c.elapsed_ns);
        if let Some(s) = self.series.take() {
            let counts = self.snapshot();
            self.series_report = Some(s.finish(self.c.end_ns, counts));
        }
        for lane in &mut self.lanes {
            lane.finish();
            self.c.device.add(&lane.counts);
            self.c.sched.add(&lane.sched_counts);
        }
        // Unused prefetched and dirty blocks left in the cache.
        for (&key, st) in self.blocks.iter() {
            if st.flags & PREFETCHED != 0 {
                // Every block the policy gave up was released when it was drained.
                debug_assert!(self.policy.contains(key), "prefetched block {key:#x} left policy {} unreported", self.policy.name());
                self.c.cache.prefetch_unused_at_end += 1;
            }
            if st.flags & DIRTY != 0 {
                self.c.cache.dirty_at_end += 1;
            }
        }
        if let Some(msg) = self.proc_events_error() {
            return Err(crate::error::Error::Io(std::io::Error::other(msg)));
        }
        let waiting = self.pending.len() - self.pending_free.len();
        if waiting > 0 {
            // Only a stage that took blocks and never completed them leaves requests waiting.
            let name = self.stage.as_ref().map_or_else(|| "none".to_string(), |s| s.name());
            return Err(crate::error::Error::Io(std::io::Error::other(format!(
                "{waiting} request(s) never completed: the block stage `{name}` took blocks it neither served nor covered by a request of its own"
            ))));
        }
        Ok(())
    }
}

impl<P: Policy + ?Sized, F: Prefetcher + ?Sized, S: Scheduler + ?Sized, D: Device + ?Sized> Engine<P, F, S, D> {
    /// No process will issue anything more. (A pending issue event always has its request
    /// queued, so the queues tell.)
    fn finished(&self) -> bool {
        self.input_done
            && self.next_arrival.is_none()
            && self.procs.iter().all(|p| p.queue.is_empty())
            && self.pending.len() == self.pending_free.len()
    }

    pub(crate) fn process_reports(&self) -> Vec<ProcessReport> {
        let mut v: Vec<ProcessReport> = self
            .procs
            .iter()
            .map(|p| ProcessReport {
                pid: p.pid,
                requests: p.requests,
                start_ns: p.start_ns,
                end_ns: p.end_ns,
                elapsed_ns: p.end_ns.saturating_sub(p.start_ns),
                mean_response_ns: if p.requests == 0 { 0.0 } else { p.response_sum as f64 / p.requests as f64 },
                max_response_ns: p.response_max,
                device_requests: p.device.requests,
                device_sync_requests: p.device.sync_requests,
                device_blocks_read: p.device.blocks_read,
                device_blocks_written: p.device.blocks_written,
                device_mean_response_ns: if p.device.requests == 0 { 0.0 } else { p.device.response_sum as f64 / p.device.requests as f64 },
                device_max_response_ns: p.device.response_max,
                ..Default::default()
            })
            .collect();
        if let Some(cpus) = &self.cpus {
            for (i, r) in v.iter_mut().enumerate() {
                let c = cpus.of(i as u32);
                (r.cpu_ns, r.cpu_wait_ns) = (Some(c.cpu_ns), Some(c.wait_ns));
            }
        }
        v.sort_by_key(|p| p.pid);
        if self.prefetcher_acts {
            for (pid, c) in self.prefetcher.list_counts() {
                if let Ok(i) = v.binary_search_by_key(&pid, |p| p.pid) {
                    v[i].hints = Some(c);
                }
            }
        }
        if let Some(t) = &self.tracking {
            for c in t.results(true) {
                if let Ok(i) = v.binary_search_by_key(&c.pid, |p| p.pid) {
                    let p = &mut v[i];
                    p.hits = Some(c.hits);
                    p.misses = Some(c.misses);
                    p.miss_ratio = Some(c.miss_ratio);
                    p.blocks = c.blocks;
                    p.block_hits = c.block_hits;
                    p.block_misses = c.block_misses;
                }
            }
        }
        v
    }
}
