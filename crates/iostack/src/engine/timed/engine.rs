//! The discrete-event engine: processes, page cache, prefetcher, scheduler, layers, device.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::config::{Replay, Resolved, Think};
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
use crate::trace::{Op, PageSize, Request};

mod proc_events;
use proc_events::{ProcEvents, EVENT_LEN};

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

#[derive(Debug, Default, Clone)]
struct Proc {
    pid: u32,
    queue: VecDeque<Request>,
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
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Event {
    time: u64,
    seq: u64,
    kind: Kind,
    arg: u32,
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
    pub processes: super::Processes,
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
    /// Response times of reads and of writes (all requests: their merge, at the end).
    pub response_read: LogHistogram,
    pub response_write: LogHistogram,
    /// Requests completed (the series takes differences of it).
    pub completed: u64,
    /// Device requests from entering the scheduler to completion: reads, writes, demand reads
    /// (all: the merge of reads and writes, at the end).
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
    /// Requests in the device, with their service.
    /// and the time each was dispatched.
    in_device: Vec<Option<(IoRequest, Service, u64)>>,
    in_device_free: Vec<u32>,
    dirty_fifo: VecDeque<(u64, Key)>,
    flush_armed: bool,
    fetch_buf: Vec<Fetch>,
    seen: Vec<(DeviceRequest, Service)>,
    read_run: Option<IoRequest>,
    write_run: Option<IoRequest>,
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
    /// The key of the first block of each request of `batch`.
    batch_keys: Vec<Key>,
    batch_pos: usize,
    next_arrival: Option<Request>,
    /// Closed-loop look-ahead: how far into `batch` the reader has looked for processes whose
    /// first request is due, and whether it waits for the next batch.
    ahead_pos: usize,
    ahead_waits: bool,
    pub(crate) skipped: u64,
    /// What the replay noticed about the trace's order, for the report's warnings.
    pub(crate) order: OrderChecks,
    /// The trace's process events, when it has any.
    proc_events: Option<Box<ProcEvents>>,
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
            dirty_fifo: VecDeque::new(),
            flush_armed: false,
            fetch_buf: Vec::new(),
            seen: Vec::new(),
            read_run: None,
            write_run: None,
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
            batch_keys: Vec::with_capacity(INPUT_BATCH),
            batch_pos: 0,
            next_arrival: None,
            ahead_pos: 0,
            ahead_waits: false,
            skipped: 0,
            order: OrderChecks::default(),
            proc_events: None,
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
        if self.mapped {
            device as usize
        } else {
            0
        }
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

    // ----- trace input -----

    #[inline(always)]
    fn next_request(&mut self, reader: &mut dyn crate::trace::TraceReader) -> InputResult<Option<Request>> {
        if self.batch_pos == self.batch.len() && !self.refill(reader)? {
            if self.proc_events.is_some() {
                self.place_events(u64::MAX);
            }
            return Ok(None);
        }
        if let Some(pe) = &self.proc_events {
            // Requests taken before this one.
            let at = self.order.read - (self.batch.len() - self.batch_pos) as u64;
            if pe.due(at) {
                self.place_events(at);
            }
        }
        let mut r = self.batch[self.batch_pos];
        self.batch_pos += 1;
        // Let the policy start loading the index cell some requests ahead and the entry a few
        // requests ahead, in two stages so neither stalls, and the entry's list neighbours (which
        // a hit's relinking writes) once the entry has arrived (memory prefetches only; no effect
        // on results).
        let keys = &self.batch_keys;
        if let Some(&k) = keys.get(self.batch_pos + 8) {
            self.policy.prefetch_index(k);
        }
        if let Some(&k) = keys.get(self.batch_pos + 3) {
            self.policy.prefetch(k);
        }
        if let Some(&k) = keys.get(self.batch_pos) {
            self.policy.prefetch_neighbours(k);
        }
        // Trace time relative to the first request, never going back.
        let t0 = *self.t0.get_or_insert(r.time_ns);
        let t = r.time_ns.saturating_sub(t0).max(self.last_trace_ns);
        self.last_trace_ns = t;
        r.time_ns = t;
        Ok(Some(r))
    }

    /// Reads the next batch of the trace; `false` at its end.
    #[cold]
    #[inline(never)]
    fn refill(&mut self, reader: &mut dyn crate::trace::TraceReader) -> InputResult<bool> {
        if self.input_done {
            return Ok(false);
        }
        self.batch.clear();
        self.batch_pos = 0;
        self.ahead_pos = 0;
        if std::mem::take(&mut self.ahead_waits) {
            // The look-ahead stopped at the end of the last batch: it goes on in this one.
            self.push(self.now, Kind::Discover, 0);
        }
        let n = reader.read_batch(&mut self.batch, INPUT_BATCH)?;
        self.take_proc_events(reader);
        if n == 0 {
            self.input_done = true;
            self.skipped = reader.skipped();
            return Ok(false);
        }
        // Checked here, a batch at a time, off the per-request path: device ids the device map
        // does not name, and the order of trace times.
        if self.mapped {
            let lanes = self.lanes.len();
            if let Some(i) = self.batch.iter().position(|r| r.device as usize >= lanes) {
                let r = self.batch[i];
                self.order.read += i as u64 + 1;
                return Err(self.unmapped_device(&r));
            }
        }
        let t0 = self.t0.unwrap_or(self.batch[0].time_ns);
        let o = &mut self.order;
        for r in &self.batch {
            o.read += 1;
            if r.time_ns < o.max_raw_ns {
                o.backwards += 1;
                if o.first_backwards.is_none() {
                    o.first_backwards = Some((o.read, r.pid, r.time_ns.saturating_sub(t0), o.max_raw_ns - t0));
                }
            } else {
                o.max_raw_ns = r.time_ns;
            }
        }
        // The key of each request's first block, for the memory hints above.
        let pages = self.pages;
        self.batch_keys.clear();
        self.batch_keys.extend(self.batch.iter().map(|r| block_key(r.device, pages.page_of(r.offset))));
        Ok(true)
    }

    /// The process `r` is for, as the run sees it.
    #[inline]
    fn pid_of(&self, r: &Request) -> u32 {
        match self.s.processes {
            super::Processes::Trace => r.pid,
            super::Processes::One => 0,
            super::Processes::Device => r.device,
        }
    }

    fn proc_index(&mut self, r: &Request) -> u32 {
        let pid = self.pid_of(r);
        if self.last_proc.0 == pid && !self.procs.is_empty() {
            return self.last_proc.1;
        }
        self.index_of_pid(pid)
    }

    /// The index of process `pid`, created if new.
    fn index_of_pid(&mut self, pid: u32) -> u32 {
        let i = match self.proc_of.get(&pid) {
            Some(&i) => i,
            None => {
                let i = self.procs.len() as u32;
                self.procs.push(Proc { pid, ..Default::default() });
                self.proc_of.insert(pid, i);
                i
            }
        };
        self.last_proc = (pid, i);
        i
    }

    /// Closed loop: reads the trace until process `want` has a request queued (or the trace
    /// ends). Processes met on the way start at their first request's trace time, or now if
    /// that has passed.
    fn fill(&mut self, reader: &mut dyn crate::trace::TraceReader, want: Option<u32>) -> InputResult<()> {
        loop {
            if let Some(p) = want {
                if !self.procs[p as usize].queue.is_empty() {
                    return Ok(());
                }
            }
            let Some(r) = self.next_request(reader)? else { return Ok(()) };
            let p = self.proc_index(&r);
            self.enqueue(p, r);
            if want.is_none() {
                return Ok(());
            }
        }
    }

    /// Closed loop: looks ahead in the trace, up to the present, for processes whose first
    /// request is due, so that each starts at its trace time however far the running processes
    /// have read. The look-ahead scans the batch in memory without taking requests from it;
    /// only when it finds a new process does the reader take the requests up to that one's
    /// first (queueing the others' on the way, as `fill` does). It then waits, as a `Discover`
    /// event, for the trace time of the next request it has not seen. At the end of the batch
    /// it waits until the running processes have taken the batch's requests (`refill` wakes it):
    /// so the look-ahead holds no request beyond the batch, and a process whose first request
    /// lies in a later batch starts when the others have issued the requests of this one.
    fn discover(&mut self, reader: &mut dyn crate::trace::TraceReader) -> InputResult<()> {
        let t0 = self.t0.unwrap_or(0);
        // A request is due when its time relative to the first is no later than now, and the
        // reader has not raised the times past now (it never lets them go back).
        let due_raw = t0.saturating_add(self.now);
        loop {
            let start = self.ahead_pos.max(self.batch_pos);
            if start == self.batch.len() {
                if self.batch_pos < self.batch.len() {
                    self.ahead_pos = start;
                    self.ahead_waits = true;
                    return Ok(());
                }
                if !self.refill(reader)? {
                    return Ok(());
                }
                continue;
            }
            // Most requests are due ones of the process last met: skip them in one tight scan.
            let known = self.last_proc.0;
            let rest = &self.batch[start..];
            let n = if self.last_trace_ns > self.now {
                0
            } else {
                rest.iter().position(|r| r.time_ns > due_raw || self.pid_of(r) != known).unwrap_or(rest.len())
            };
            let j = start + n;
            self.ahead_pos = j;
            let Some(&r) = self.batch.get(j) else { continue };
            let t = r.time_ns.saturating_sub(t0).max(self.last_trace_ns);
            if t > self.now {
                self.push(t, Kind::Discover, 0);
                return Ok(());
            }
            self.ahead_pos = j + 1;
            if !self.proc_of.contains_key(&self.pid_of(&r)) {
                // A process whose first request is due: take the requests up to it.
                while self.batch_pos <= j {
                    let Some(r) = self.next_request(reader)? else { break };
                    let p = self.proc_index(&r);
                    self.enqueue(p, r);
                }
            }
        }
    }

    /// Queues `r` for process `p`; a process met for the first time starts at the request's
    /// trace time, or now if that has passed.
    #[inline]
    fn enqueue(&mut self, p: u32, r: Request) {
        let proc = &mut self.procs[p as usize];
        let first = !proc.started && proc.queue.is_empty();
        proc.queue.push_back(r);
        if first && !proc.unborn {
            if self.now > r.time_ns.saturating_add(LATE_START_NS).max(r.time_ns.saturating_mul(2)) {
                self.late_start(p, r.time_ns);
            }
            self.push(r.time_ns.max(self.now), Kind::Issue, p);
        }
    }

    /// Process `p`, met now, should have started at `trace_ns`: a late start if others run.
    #[cold]
    fn late_start(&mut self, p: u32, trace_ns: u64) {
        if self.procs.iter().any(|q| q.started) {
            self.order.late += 1;
            if self.order.first_late.is_none() {
                self.order.first_late = Some((self.procs[p as usize].pid, trace_ns, self.now));
            }
        }
    }

    /// Closed loop, after process `p`'s request completed (the only one that did): issues its
    /// next request here if the event queue would hand that issue back straight away (no other
    /// event due at or before it), which is what most completions lead to; the event order, and so
    /// every result, is the same as going through the queue. Returns the request to issue, or
    /// `None` when the issue was left to the queue (or `p` has no more requests).
    fn next_issue_inline(&mut self, reader: &mut dyn crate::trace::TraceReader, p: u32) -> InputResult<Option<Request>> {
        debug_assert_eq!(self.ready, [p]);
        self.ready.clear();
        // p's next request: queued already, else the trace's next if it is p's, else what
        // `fill` finds (queueing the other processes' requests on the way).
        let next = match self.procs[p as usize].queue.pop_front() {
            Some(r) => r,
            None => {
                let got = match self.next_request(reader)? {
                    Some(r) => {
                        let q = self.proc_index(&r);
                        if q == p && self.procs[p as usize].queue.is_empty() {
                            Some(r)
                        } else {
                            self.enqueue(q, r);
                            self.fill(reader, Some(p))?;
                            self.procs[p as usize].queue.pop_front()
                        }
                    }
                    // The end of the trace may have placed an event of p's.
                    None => self.procs[p as usize].queue.pop_front(),
                };
                match got {
                    Some(r) => r,
                    None => {
                        if self.proc_events.is_some() {
                            self.proc_ended(p);
                        }
                        return Ok(None);
                    }
                }
            }
        };
        let t = self.now + self.think_before(p, &next);
        let other_due = self.inline.is_some_and(|e| e.time <= t) || self.heap.peek().is_some_and(|Reverse(e)| e.time <= t);
        if other_due {
            self.procs[p as usize].queue.push_front(next);
            self.push(t, Kind::Issue, p);
            return Ok(None);
        }
        // The sequence number the issue event would have taken.
        self.seq += 1;
        self.now = t;
        Ok(Some(next))
    }

    /// Closed loop, after an event: the processes whose request completed continue (here, after
    /// the event, so that trace reading errors propagate). A lone one issues its next requests
    /// itself for as long as no other event comes first (see `next_issue_inline`); otherwise
    /// each gets an issue event.
    fn continue_ready(&mut self, reader: &mut dyn crate::trace::TraceReader) -> InputResult<()> {
        loop {
            while let [p] = self.ready[..] {
                match self.next_issue_inline(reader, p)? {
                    Some(r) => self.start_request(p, r),
                    None => break,
                }
            }
            if self.ready.is_empty() {
                return Ok(());
            }
            let mut ready = std::mem::take(&mut self.ready);
            for &p in &ready {
                self.fill(reader, Some(p))?;
                self.continue_proc(p);
            }
            ready.clear();
            // Processes a process event woke (a child's exit) go on too.
            let woken = std::mem::replace(&mut self.ready, ready);
            if woken.is_empty() {
                return Ok(());
            }
            self.ready.extend_from_slice(&woken);
        }
    }

    // ----- the run -----

    pub(crate) fn run(&mut self, reader: &mut dyn crate::trace::TraceReader) -> InputResult<()> {
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
                    let r = self.procs[p as usize].queue.pop_front().expect("issue with a queued request");
                    self.start_request(p, r);
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
    // ----- requests -----

    #[inline(always)]
    fn start_request(&mut self, p: u32, r: Request) {
        if r.length == EVENT_LEN {
            return self.run_proc_event(p, r);
        }
        if self.series.is_some() {
            self.series_issue();
        }
        let proc = &mut self.procs[p as usize];
        if !proc.started {
            proc.started = true;
            proc.start_ns = self.now;
        }
        proc.last_trace_ns = r.time_ns;
        let pid = proc.pid;
        self.acting_pid = pid;
        let f = &mut self.c.front;
        f.requests += 1;
        let write = r.op.is_write();
        if write {
            f.writes += 1;
        } else {
            f.reads += 1;
        }
        if self.observe[Boundary::Front as usize] {
            let mut seen = r;
            seen.time_ns = self.now;
            self.notify(Boundary::Front, &seen);
        }
        let ps = self.s.page_size;
        let (first, end) = self.pages.block_range(&r);
        self.c.front.blocks += end - first;
        self.cur = Pending { proc: p, issue_ns: self.now, outstanding: 0, write };
        debug_assert_eq!(self.cur_slot, NIL);
        let tracked = self.tracking.is_some();
        let hits_before = self.c.cache.hits;
        if tracked {
            self.track_request(&r, pid);
        }
        if write {
            for b in first..end {
                if tracked {
                    self.track_block(&r, b);
                }
                self.access_write(r.device, b, pid);
                if tracked {
                    self.track_reference(pid);
                }
            }
        } else {
            // The file the blocks belong to, for the prefetcher.
            let (id, is_device, first_index, size_pages) = match r.file {
                Some(f) => {
                    let size = match f.size {
                        Some(sz) => sz.div_ceil(ps),
                        None => self.extents.get(&(false, f.id)).copied().unwrap_or(u64::MAX),
                    };
                    (f.id, false, self.pages.page_of(f.offset), size)
                }
                None => (r.device as u64, true, first, self.lanes[self.lane_index(r.device)].device_pages.unwrap_or_else(|| {
                    self.extents.get(&(true, r.device as u64)).copied().unwrap_or(u64::MAX)
                })),
            };
            for b in first..end {
                let file = FileView { id, is_device, index: first_index + (b - first), size_pages };
                if tracked {
                    self.track_block(&r, b);
                }
                self.access_read(r.device, b, file, end - b, pid);
                if tracked {
                    self.track_reference(pid);
                }
            }
        }
        if tracked {
            self.track_request_done(pid, end - first, self.c.cache.hits - hits_before);
        }
        self.flush_runs();
        self.kick();
        // Nothing to wait for: the request completed now.
        if std::mem::replace(&mut self.cur_slot, NIL) == NIL {
            self.request_done(self.cur.proc, self.cur.issue_ns, self.cur.write);
        }
    }

    /// Before request `r` of process `pid`: the process's caching calls due now.
    #[cold]
    #[inline(never)]
    fn track_request(&mut self, r: &Request, pid: u32) {
        let t = self.tracking.as_mut().expect("tracked");
        if self.tell_files {
            t.before_request(&mut *self.policy, &Request { pid, ..*r });
        }
    }

    /// Before the reference to block `b` of `r`: the policy learns its file.
    #[inline(never)]
    fn track_block(&mut self, r: &Request, b: u64) {
        if self.tell_files {
            let fb = file_block(r, Some(self.s.page_size), b);
            self.demand_file = Some((r.device, b, fb));
            self.policy.next_file(Some(fb));
        }
    }

    /// After one reference of `pid`: the oracle's priorities.
    #[inline(never)]
    fn track_reference(&mut self, pid: u32) {
        if self.tell_files {
            let t = self.tracking.as_mut().expect("tracked");
            t.after_reference(&mut *self.policy, pid);
        }
    }

    /// After the references of a request of `pid` (`blocks` of them, `block_hits` found
    /// cached): its counts, and the process's exit after its last request.
    #[inline(never)]
    fn track_request_done(&mut self, pid: u32, blocks: u64, block_hits: u64) {
        self.demand_file = None;
        let t = self.tracking.as_mut().expect("tracked");
        t.after_request(&mut *self.policy, pid, block_hits == blocks, blocks, block_hits);
    }

    /// The file of a block about to be prefetched, for a policy told files: what the
    /// prefetcher knows of it, else its place beside the demand reference that triggered it
    /// (same device, the same file, as many blocks on), else none.
    #[cold]
    #[inline(never)]
    fn tell_prefetch_file(&mut self, device: u32, block: u64) {
        let fb = self.prefetcher.file_of(device, block).or_else(|| {
            let (d, b, fb) = self.demand_file?;
            let index = (fb.block + block).checked_sub(b)?;
            (d == device).then_some(FileBlock { file: fb.file, block: index })
        });
        if self.tell_files {
            self.policy.next_file(fb);
        }
    }

    /// Carries out what the prefetcher asked of the cache: caching calls to an
    /// application-controlled policy, and flushes of false prefetches (released like
    /// evictions; a flushed block whose read is still under way is simply not cached when
    /// it completes).
    #[inline(never)]
    fn apply_cache_actions(&mut self) {
        let mut acts = std::mem::take(&mut self.cache_acts);
        self.prefetcher.cache_actions(&mut acts);
        if self.tell_files {
            for c in &acts.controls {
                self.policy.control(c);
            }
        }
        for &(d, b) in &acts.flush {
            let key = block_key(d, b);
            if self.policy.remove(key) {
                self.c.cache.prefetch_flushed += 1;
                self.release(key);
                self.drain_side();
            }
        }
        acts.controls.clear();
        acts.flush.clear();
        self.cache_acts = acts;
    }

    /// The slot of the request being started, taken on its first wait; counts one more wait.
    fn wait_on_current(&mut self) -> u32 {
        if self.cur_slot == NIL {
            self.cur_slot = slab_put(&mut self.pending, &mut self.pending_free, self.cur);
        }
        self.pending[self.cur_slot as usize].outstanding += 1;
        self.cur_slot
    }

    #[inline]
    fn access(&mut self, key: Key, op: Op, pid: u32, origin: Origin) -> Access {
        Access { key, size: 1, op: Some(op), pid, time_ns: self.now, vtime: self.vtime, next_access: u64::MAX, origin }
    }

    /// One demand read of one block.
    fn access_read(&mut self, device: u32, block: u64, file: FileView, req_pages: u64, pid: u32) {
        let key = block_key(device, block);
        self.vtime += 1;
        let acc = self.access(key, Op::Read, pid, Origin::Demand);
        let hit = self.policy.find(&acc);
        self.drain_side();
        let (mut flags, mut in_flight) = (0u8, false);
        // A hit consumes the marker and the prefetch (and drops the state if that was all).
        if let Some(f) = self.blocks.update(key, |st| {
            let f = st.flags;
            if hit {
                st.flags &= !(MARKER | PREFETCHED);
            }
            f
        }) {
            flags = f;
            in_flight = flags & INFLIGHT != 0;
        }
        let marker = hit && flags & MARKER != 0;
        let prefetch_hit = hit && flags & PREFETCHED != 0;
        let c = &mut self.c.cache;
        c.accesses += 1;
        if hit {
            c.hits += 1;
            if in_flight {
                c.hits_in_flight += 1;
            }
            if prefetch_hit {
                c.prefetch_used += 1;
            }
        } else {
            c.misses += 1;
        }
        self.fetch_buf.clear();
        if !(hit && !marker && !in_flight && !prefetch_hit && self.prefetcher.on_plain_hit(pid, &file, req_pages)) {
            let a = DemandAccess { device, block, file, req_pages, hit, in_flight, marker, prefetch_hit, pid, time_ns: self.now };
            let presence = Presence { policy: &*self.policy, capacity: self.capacity, blocks: &self.blocks, evicted_reads: self.evicted_reads };
            self.prefetcher.on_access(&a, &presence, &mut self.fetch_buf);
            if self.prefetcher_acts {
                self.apply_cache_actions();
            }
        }

        let mut fetched_now = false;
        if !hit {
            self.make_room(&acc);
            self.policy.insert(&acc);
            if in_flight {
                // Evicted while its read runs: cached again, and waits for that read.
                self.c.cache.misses_in_flight += 1;
                let st = self.blocks.get_mut(key).expect("in-flight block state");
                debug_assert!(st.flags & EVICTED != 0);
                st.flags &= !EVICTED;
                self.evicted_reads -= 1;
                self.wait_read(key);
                self.drain_side();
            } else {
                self.c.cache.demand_fetched += 1;
                // Mark in flight and wait, with one map operation.
                let pend = self.wait_on_current();
                let node = self.alloc_wait(WaitNode { pending: pend, next: NIL });
                let st = self.blocks.or_empty(key);
                st.flags |= INFLIGHT;
                self.waits[node as usize].next = std::mem::replace(&mut st.read_waiters, node);
                self.push_read(device, block, Cause::Demand, true, pid);
                fetched_now = true;
                self.drain_side();
            }
        } else if in_flight {
            self.wait_read(key);
        }
        if !self.fetch_buf.is_empty() {
            let fetches = std::mem::take(&mut self.fetch_buf);
            for f in &fetches {
                self.prefetch(f, key, fetched_now, pid);
            }
            self.fetch_buf = fetches;
        }
    }

    /// Issues one prefetch: its blocks that are neither cached nor in flight.
    fn prefetch(&mut self, f: &Fetch, demand_key: Key, demand_fetched_now: bool, pid: u32) {
        let set = self.next_set;
        self.next_set = self.next_set.wrapping_add(1);
        for i in 0..f.blocks {
            let block = f.block + i as u64;
            let key = block_key(f.device, block);
            let is_marker = f.marker == Some(block);
            if key == demand_key {
                // The demanded block inside a readahead window: read as demand; it carries the
                // window's marker if the window put one there (Linux marks pages it adds).
                if is_marker && demand_fetched_now {
                    self.blocks.or_empty(key).flags |= MARKER;
                }
                continue;
            }
            if self.policy.contains(key) {
                continue;
            }
            // Not in the policy: in flight only if its read outlived an eviction.
            if self.evicted_reads > 0 && self.blocks.get(key).is_some_and(|s| s.flags & INFLIGHT != 0) {
                continue;
            }
            let acc = self.access(key, Op::Read, pid, Origin::Prefetch { set, index: i, len: f.blocks });
            if self.tell_files || self.prefetcher_acts {
                self.tell_prefetch_file(f.device, block);
            }
            self.make_room(&acc);
            self.policy.insert(&acc);
            if self.prefetcher_acts {
                self.apply_cache_actions();
            }
            let st = self.blocks.or_empty(key);
            st.flags |= INFLIGHT | PREFETCHED | if is_marker { MARKER } else { 0 };
            self.c.cache.prefetch_issued += 1;
            self.push_read(f.device, block, Cause::Prefetch, false, pid);
            self.drain_side();
        }
    }

    /// One demand write of one block.
    fn access_write(&mut self, device: u32, block: u64, pid: u32) {
        let key = block_key(device, block);
        self.vtime += 1;
        let acc = self.access(key, Op::Write, pid, Origin::Demand);
        let hit = self.policy.find(&acc);
        self.drain_side();
        let c = &mut self.c.cache;
        c.accesses += 1;
        if hit {
            c.hits += 1;
        } else {
            c.misses += 1;
            // Whole-page writes: the block is not read first.
            self.make_room(&acc);
            self.policy.insert(&acc);
        }
        let st = self.blocks.or_empty(key);
        let flags = st.flags;
        st.flags &= !(PREFETCHED | MARKER | EVICTED);
        if flags & EVICTED != 0 {
            self.evicted_reads -= 1;
        }
        let newly_dirty = !self.s.write_through && flags & DIRTY == 0;
        if self.s.write_through {
            st.flags &= !DIRTY;
        } else if newly_dirty {
            st.flags |= DIRTY;
            st.dirty_since = self.now;
            st.dirty_pid = pid;
        }
        if hit && flags & INFLIGHT != 0 {
            self.c.cache.hits_in_flight += 1;
        }
        if !hit && flags & EVICTED != 0 {
            self.c.cache.misses_in_flight += 1;
        }
        if flags & PREFETCHED != 0 {
            self.c.cache.prefetch_used += 1;
        }
        if self.s.write_through {
            self.c.cache.write_through += 1;
            self.wait_write(key);
            self.push_write(device, block, Cause::Demand, true, pid);
        } else if newly_dirty {
            self.dirty_fifo.push_back((self.now, key));
            if !self.flush_armed {
                self.flush_armed = true;
                let iv = self.s.resolved.flush_interval_ns;
                self.push((self.now / iv + 1) * iv, Kind::Flush, 0);
            }
        }
        // After the block's state is set, so that an insert that gives up the block itself
        // releases it like any eviction.
        self.drain_side();
    }

    /// Evicts until one more block fits.
    #[inline]
    fn make_room(&mut self, acc: &Access) {
        while self.policy.occupied() + 1 > self.capacity {
            match self.policy.evict(acc) {
                Some(ev) => {
                    self.evicted(ev.key);
                    self.drain_side();
                }
                None => break,
            }
        }
    }

    /// Takes the entries the policy dropped outside `evict` since the last call (SLRU demotions
    /// cascading out on a hit, 2Q making room on insert, LIRS dropping several blocks in one
    /// evict) and releases each exactly like an eviction: write-back of dirty blocks, wasted
    /// prefetches, reads still in flight. Called after every `find`, `evict` and `insert`, as
    /// the `Policy` contract asks of callers that track residency.
    #[inline]
    fn drain_side(&mut self) {
        if !self.side_evictions {
            return;
        }
        self.policy.drain_side_evictions(&mut self.side_buf);
        if self.side_buf.is_empty() {
            return;
        }
        let mut buf = std::mem::take(&mut self.side_buf);
        for ev in &buf {
            self.c.cache.side_evictions += 1;
            self.evicted(ev.key);
        }
        buf.clear();
        self.side_buf = buf;
    }

    fn evicted(&mut self, key: Key) {
        self.c.cache.evictions += 1;
        self.release(key);
    }

    /// The block left the cache: prefetch and write-back accounting.
    fn release(&mut self, key: Key) {
        let Some(flags) = self.blocks.update(key, |st| {
            let flags = st.flags;
            st.flags &= !(PREFETCHED | MARKER | DIRTY);
            if flags & INFLIGHT != 0 {
                st.flags |= EVICTED;
            }
            flags
        }) else {
            return;
        };
        if flags & PREFETCHED != 0 {
            self.c.cache.prefetch_wasted += 1;
        }
        if flags & INFLIGHT != 0 {
            debug_assert!(flags & EVICTED == 0, "a block released twice");
            self.evicted_reads += 1;
            self.c.cache.evicted_in_flight += 1;
        }
        if flags & DIRTY != 0 {
            self.c.cache.writeback_evict += 1;
            let (device, block) = split_block_key(key);
            self.push_write(device, block, Cause::Writeback, false, self.acting_pid);
        }
    }

    #[inline]
    fn wait_read(&mut self, key: Key) {
        let pend = self.wait_on_current();
        let node = self.alloc_wait(WaitNode { pending: pend, next: NIL });
        let st = self.blocks.or_empty(key);
        self.waits[node as usize].next = std::mem::replace(&mut st.read_waiters, node);
    }

    fn wait_write(&mut self, key: Key) {
        let pend = self.wait_on_current();
        let node = self.alloc_wait(WaitNode { pending: pend, next: NIL });
        let st = self.blocks.or_empty(key);
        self.waits[node as usize].next = std::mem::replace(&mut st.write_waiters, node);
    }

    fn alloc_wait(&mut self, w: WaitNode) -> u32 {
        slab_put(&mut self.waits, &mut self.wait_free, w)
    }

    /// Wakes a list of waiters.
    fn wake(&mut self, mut node: u32) {
        while node != NIL {
            let w = self.waits[node as usize];
            self.wait_free.push(node);
            node = w.next;
            let p = &mut self.pending[w.pending as usize];
            p.outstanding -= 1;
            if p.outstanding == 0 {
                self.complete(w.pending);
            }
        }
    }

    /// The request waiting in slot `pend` completed now.
    fn complete(&mut self, pend: u32) {
        let p = self.pending[pend as usize];
        self.pending_free.push(pend);
        self.request_done(p.proc, p.issue_ns, p.write);
    }

    /// A request of process `proc` issued at `issue_ns` completed now.
    #[inline]
    fn request_done(&mut self, p: u32, issue_ns: u64, write: bool) {
        let rt = self.now - issue_ns;
        if write {
            self.c.response_write.record(rt);
        } else {
            self.c.response_read.record(rt);
        }
        self.c.completed += 1;
        if let Some(s) = self.series.as_deref_mut() {
            s.response(rt);
        }
        self.c.elapsed_ns = self.c.elapsed_ns.max(self.now);
        let proc = &mut self.procs[p as usize];
        proc.response_sum += rt as u128;
        proc.response_max = proc.response_max.max(rt);
        proc.requests += 1;
        proc.end_ns = self.now;
        if self.s.replay == Replay::Closed {
            self.ready.push(p);
        }
    }

    /// Closed loop: process `p` completed a request; issue its next one after the think time.
    fn continue_proc(&mut self, p: u32) {
        let Some(next) = self.procs[p as usize].queue.front() else {
            if self.proc_events.is_some() {
                self.proc_ended(p);
            }
            return;
        };
        let think = self.think_before(p, next);
        self.push(self.now + think, Kind::Issue, p);
    }

    /// Think time of process `p` before issuing `next`.
    #[inline]
    fn think_before(&self, p: u32, next: &Request) -> u64 {
        match self.s.resolved.think {
            Think::None => 0,
            Think::Fixed(t) => t,
            Think::Trace => next.time_ns.saturating_sub(self.procs[p as usize].last_trace_ns),
        }
    }

    // ----- toward the scheduler -----

    #[inline]
    fn push_read(&mut self, device: u32, block: u64, cause: Cause, sync: bool, pid: u32) {
        let run = self.read_run;
        match run {
            Some(mut r) if r.device == device && r.end() == block && r.cause == cause && r.pid == pid && r.blocks < self.s.resolved.max_request_blocks => {
                r.blocks += 1;
                self.read_run = Some(r);
            }
            _ => {
                if let Some(r) = self.read_run.take() {
                    self.to_sched(r);
                }
                self.read_run = Some(IoRequest { op: Op::Read, device, block, blocks: 1, sync, cause, arrival_ns: self.now, pid });
            }
        }
    }

    #[inline]
    fn push_write(&mut self, device: u32, block: u64, cause: Cause, sync: bool, pid: u32) {
        self.c.cache.writeback_blocks += 1;
        let run = self.write_run;
        match run {
            Some(mut r) if r.device == device && r.end() == block && r.cause == cause && r.pid == pid && r.blocks < self.s.resolved.max_request_blocks => {
                r.blocks += 1;
                self.write_run = Some(r);
            }
            _ => {
                if let Some(r) = self.write_run.take() {
                    self.to_sched(r);
                }
                self.write_run = Some(IoRequest { op: Op::Write, device, block, blocks: 1, sync, cause, arrival_ns: self.now, pid });
            }
        }
    }

    /// Hands the runs being built to the scheduler.
    #[inline]
    fn flush_runs(&mut self) {
        if self.read_run.is_some() || self.write_run.is_some() {
            self.flush_runs_now();
        }
    }

    #[inline(never)]
    fn flush_runs_now(&mut self) {
        if let Some(r) = self.read_run.take() {
            self.to_sched(r);
        }
        if let Some(r) = self.write_run.take() {
            self.to_sched(r);
        }
    }

    fn as_request(&self, r: &IoRequest, time_ns: u64) -> Request {
        Request {
            time_ns,
            offset: r.block * self.s.page_size,
            length: r.blocks as u64 * self.s.page_size,
            pid: r.pid,
            device: r.device,
            op: r.op,
            file: None,
        }
    }

    fn to_sched(&mut self, r: IoRequest) {
        self.c.cache.requests_out += 1;
        self.c.cache.blocks_out += r.blocks as u64;
        if self.observe[Boundary::Cache as usize] {
            let q = self.as_request(&r, self.now);
            self.notify(Boundary::Cache, &q);
        }
        if self.stage.is_some() {
            self.through_stage(r);
        } else {
            self.sched_add(r);
        }
    }

    #[inline]
    fn sched_add(&mut self, r: IoRequest) {
        let l = self.lane_index(r.device);
        let lane = &mut self.lanes[l];
        lane.sched_counts.requests_in += 1;
        lane.sched.add(r, self.now);
        lane.holds = true;
    }

    /// Offers `r` to the block stage and carries out what it decided.
    #[inline(never)]
    fn through_stage(&mut self, r: IoRequest) {
        let stage = self.stage.as_mut().expect("a stage");
        let mut out = std::mem::take(&mut self.stage_out);
        self.c.blk.requests_in += 1;
        self.c.blk.blocks_in += r.blocks as u64;
        match stage.submit(r, self.now, &mut out) {
            Submit::Pass => {
                self.c.blk.passed += 1;
                self.apply_stage(&mut out);
                self.sched_add(r);
            }
            Submit::Take => {
                self.c.blk.taken += 1;
                self.apply_stage(&mut out);
            }
        }
        self.stage_out = out;
    }

    /// Carries out (and clears) the actions a stage queued.
    fn apply_stage(&mut self, out: &mut StageActions) {
        for mut q in out.issue.drain(..) {
            q.arrival_ns = self.now;
            self.c.blk.issued += 1;
            self.c.blk.issued_blocks += q.blocks as u64;
            self.sched_add(q);
        }
        for (q, at) in out.serve.drain(..) {
            let slot = slab_put(&mut self.stage_serves, &mut self.stage_serves_free, Some(q));
            self.push(at.max(self.now), Kind::StageServe, slot);
        }
    }

    /// A stage's serve event: the blocks of its request are complete now.
    fn stage_served(&mut self, slot: u32) {
        let r = self.stage_serves[slot as usize].take().expect("a request being served");
        self.stage_serves_free.push(slot);
        self.c.blk.served += 1;
        self.c.blk.served_blocks += r.blocks as u64;
        self.c.end_ns = self.now;
        self.complete_blocks(&r);
        self.fetch_complete(&r, false);
        self.kick();
    }

    /// Hands requests to the device while it has room.
    #[inline]
    fn kick(&mut self) {
        // Nothing to hand over (the common case after a hit): no call at all.
        if let [lane] = &self.lanes[..] {
            if lane.holds && lane.in_device < self.s.queue_depth {
                self.dispatch_to_device(0);
            }
        } else {
            self.kick_lanes();
        }
    }

    #[inline(never)]
    fn kick_lanes(&mut self) {
        for l in 0..self.lanes.len() {
            let lane = &self.lanes[l];
            if lane.holds && lane.in_device < self.s.queue_depth {
                self.dispatch_to_device(l);
            }
        }
    }

    #[inline(never)]
    fn dispatch_to_device(&mut self, l: usize) {
        while self.lanes[l].in_device < self.s.queue_depth {
            let lane = &mut self.lanes[l];
            let Some(r) = lane.sched.dispatch(self.now) else { break };
            lane.sched_counts.requests_out += 1;
            lane.sched_counts.blocks_out += r.blocks as u64;
            if self.observe[Boundary::Sched as usize] {
                let q = self.as_request(&r, self.now);
                self.notify(Boundary::Sched, &q);
            }
            let dreq = DeviceRequest {
                op: r.op,
                device: r.device,
                sector: r.block * self.sectors_per_block,
                sectors: r.blocks as u64 * self.sectors_per_block,
            };
            let lane = &mut self.lanes[l];
            let service = if lane.layers.is_empty() {
                let s = lane.device.service(&dreq, self.now);
                self.device_served(l, &dreq, &s, r.pid);
                s
            } else {
                let mut device = DeviceRef(&mut *lane.device);
                let mut below = Below { layers: &mut lane.layers[..], device: &mut device, seen: &mut self.seen };
                let s = below.service(&dreq, self.now);
                for i in 0..self.seen.len() {
                    let (q, s) = self.seen[i];
                    self.device_served(l, &q, &s, r.pid);
                }
                self.seen.clear();
                s
            };
            if let Some(stage) = self.stage.as_mut() {
                stage.dispatched(&r, &service, self.now);
            }
            let slot = slab_put(&mut self.in_device, &mut self.in_device_free, Some((r, service, self.now)));
            self.lanes[l].in_device += 1;
            self.push(service.finish_ns.max(self.now), Kind::Done, slot);
        }
        let lane = &mut self.lanes[l];
        lane.holds = lane.sched.queued() > 0;
        if lane.holds && lane.in_device < self.s.queue_depth {
            if let Some(t) = lane.sched.wake_at() {
                if lane.wake_armed.map_or(true, |a| a > t) {
                    lane.wake_armed = Some(t);
                    self.push(t.max(self.now), Kind::SchedWake, l as u32);
                }
            }
        }
    }

    /// Accounts a request that reached the device.
    #[inline]
    fn device_served(&mut self, l: usize, q: &DeviceRequest, s: &Service, pid: u32) {
        let lane = &mut self.lanes[l];
        let d = &mut lane.counts;
        d.requests += 1;
        let blocks = q.sectors.div_ceil(self.sectors_per_block);
        if q.op.is_write() {
            d.writes += 1;
            d.blocks_written += blocks;
        } else {
            d.reads += 1;
            d.blocks_read += blocks;
        }
        d.busy_ns += s.finish_ns - s.start_ns;
        if s.cache_hit {
            d.cache_hits += 1;
        }
        lane.request_sizes.add(blocks);
        lane.seqs.push(q.device, q.op.is_write(), q.sector, q.sectors, blocks, &mut lane.sequence_sizes);
        if self.observe[Boundary::Device as usize] {
            let r = Request { time_ns: s.start_ns, offset: q.sector * SECTOR, length: q.sectors * SECTOR, pid, device: q.device, op: q.op, file: None };
            self.notify(Boundary::Device, &r);
        }
    }

    /// A dispatched request completed: every block in its range is done.
    fn device_done(&mut self, slot: u32) {
        let (r, service, dispatch_ns) = self.in_device[slot as usize].take().expect("request in the device");
        self.c.end_ns = self.now;
        let q2c = self.now - r.arrival_ns;
        let [read, write, demand] = &mut self.c.device_response;
        if r.op.is_write() {
            write.record(q2c);
        } else {
            read.record(q2c);
            if r.cause == Cause::Demand {
                demand.record(q2c);
            }
        }
        if self.latency_log.is_some() {
            self.log_latency(&r, &service, dispatch_ns);
        }
        self.in_device_free.push(slot);
        let l = self.lane_index(r.device);
        let lane = &mut self.lanes[l];
        lane.in_device -= 1;
        lane.sched.completed(&r, self.now);
        self.charge_process(&r);
        self.complete_blocks(&r);
        if let Some(stage) = self.stage.as_mut() {
            let mut out = std::mem::take(&mut self.stage_out);
            stage.completed(&r, &service, self.now, &mut out);
            self.apply_stage(&mut out);
            self.stage_out = out;
        }
        self.fetch_complete(&r, true);
        self.kick();
    }

    #[inline(never)]
    fn log_latency(&mut self, r: &IoRequest, service: &Service, dispatch_ns: u64) {
        let device = self.trace_device(r.device);
        let spb = self.sectors_per_block;
        if let Some(log) = self.latency_log.as_deref_mut() {
            log.record(r, device, spb, dispatch_ns, service.start_ns, self.now);
        }
    }

    /// The counters a series takes differences of, as they are now.
    fn snapshot(&self) -> Snapshot {
        let (mut device_requests, mut device_busy_ns) = (0, 0);
        for l in &self.lanes {
            device_requests += l.counts.requests;
            device_busy_ns += l.counts.busy_ns;
        }
        Snapshot {
            requests: self.c.front.requests,
            completed: self.c.completed,
            accesses: self.c.cache.accesses,
            hits: self.c.cache.hits,
            device_requests,
            device_busy_ns,
        }
    }

    /// An event at `now` past the end of the series' current interval.
    #[inline(never)]
    fn series_at(&mut self) {
        let counts = self.snapshot();
        if let Some(s) = self.series.as_deref_mut() {
            s.at(self.now, counts);
        }
    }

    /// Tells the series a request is issued now.
    #[inline(never)]
    fn series_issue(&mut self) {
        let counts = self.snapshot();
        if let Some(s) = self.series.as_deref_mut() {
            s.issue(self.now, || counts);
        }
    }

    /// Tells the prefetcher that `r`'s blocks are complete, and issues what it asks for.
    #[inline]
    fn fetch_complete(&mut self, r: &IoRequest, by_device: bool) {
        let done = Completion { op: r.op, device: r.device, block: r.block, blocks: r.blocks, cause: r.cause, pid: r.pid, by_device, time_ns: self.now };
        let presence = Presence { policy: &*self.policy, capacity: self.capacity, blocks: &self.blocks, evicted_reads: self.evicted_reads };
        self.fetch_buf.clear();
        self.prefetcher.on_complete(&done, &presence, &mut self.fetch_buf);
        if self.prefetcher_acts {
            self.apply_cache_actions();
        }
        if !self.fetch_buf.is_empty() {
            self.fetches_at_completion(r.pid);
        }
    }

    #[inline(never)]
    fn fetches_at_completion(&mut self, pid: u32) {
        self.acting_pid = pid;
        let fetches = std::mem::take(&mut self.fetch_buf);
        for f in &fetches {
            self.prefetch(f, Key::MAX, false, pid);
        }
        self.fetch_buf = fetches;
        self.flush_runs();
    }

    /// Every block in `r`'s range is complete: reads end their flight (a block evicted in
    /// flight is now simply not cached), and the references waiting for them wake.
    #[inline]
    fn complete_blocks(&mut self, r: &IoRequest) {
        let write = r.op.is_write();
        for b in r.block..r.end() {
            let key = block_key(r.device, b);
            let Some((waiters, was_evicted)) = self.blocks.update(key, |st| {
                if write {
                    (std::mem::replace(&mut st.write_waiters, NIL), false)
                } else {
                    let was_evicted = st.flags & EVICTED != 0;
                    st.flags &= !(INFLIGHT | EVICTED);
                    (std::mem::replace(&mut st.read_waiters, NIL), was_evicted)
                }
            }) else {
                continue;
            };
            if was_evicted {
                self.evicted_reads -= 1;
            }
            self.wake(waiters);
        }
    }

    /// Charges a completed device request to the process it was for.
    #[inline]
    fn charge_process(&mut self, r: &IoRequest) {
        let i = if self.last_done_proc.0 == r.pid {
            self.last_done_proc.1
        } else {
            // A pid no process has (a request a block stage made up) is charged to nobody.
            let Some(&i) = self.proc_of.get(&r.pid) else { return };
            self.last_done_proc = (r.pid, i);
            i
        };
        let rt = self.now - r.arrival_ns;
        let d = &mut self.procs[i as usize].device;
        d.requests += 1;
        d.sync_requests += r.sync as u64;
        if r.op.is_write() {
            d.blocks_written += r.blocks as u64;
        } else {
            d.blocks_read += r.blocks as u64;
        }
        d.response_sum += rt as u128;
        d.response_max = d.response_max.max(rt);
    }

    /// The flusher: writes back blocks dirty for longer than the expiry, then sleeps one
    /// interval (while the run goes on).
    fn flush_expired(&mut self) {
        self.flush_armed = false;
        let expire = self.s.resolved.dirty_expire_ns;
        self.flush_buf.clear();
        while let Some(&(t, key)) = self.dirty_fifo.front() {
            if t.saturating_add(expire) > self.now {
                break;
            }
            self.dirty_fifo.pop_front();
            let expired = self.blocks.update(key, |st| {
                let expired = st.flags & DIRTY != 0 && st.dirty_since == t;
                if expired {
                    st.flags &= !DIRTY;
                }
                expired.then_some(st.dirty_pid)
            });
            if let Some(Some(pid)) = expired {
                self.flush_buf.push((key, pid));
            }
        }
        // Disk order, so contiguous dirty blocks of one process leave as one request.
        let mut keys = std::mem::take(&mut self.flush_buf);
        keys.sort_unstable_by_key(|&(k, _)| k);
        for &(k, pid) in &keys {
            let (device, block) = split_block_key(k);
            self.c.cache.writeback_flush += 1;
            self.push_write(device, block, Cause::Writeback, false, pid);
        }
        self.flush_buf = keys;
        self.flush_runs();
        self.kick();
        if !self.dirty_fifo.is_empty() && !self.finished() {
            self.flush_armed = true;
            let iv = self.s.resolved.flush_interval_ns;
            self.push(self.now + iv, Kind::Flush, 0);
        }
    }

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
