//! I/O schedulers: the block layer's queue between the page cache and the device.
//!
//! The page cache hands the scheduler block-range requests ([`IoRequest`]: reads for demand
//! misses and prefetches, writes for write-back). The scheduler merges requests that touch
//! adjacent blocks (same device and direction, up to a maximum merged size), keeps them queued
//! while the device is busy, and chooses which one the device serves next. One module per
//! scheduler:
//!
//! - [`noop`]: first come, first served, with merging (Linux `noop`/`none`).
//! - [`cscan`]: one-way elevator in logical block order, wrapping to the lowest block (C-SCAN).
//! - [`sstf`]: shortest seek first: the request nearest to the last dispatched position.
//! - [`deadline`]: Linux `mq-deadline`'s rules: sorted per direction, FIFO expiry 500 ms (reads)
//!   and 5 s (writes), reads preferred, writes starved at most twice.
//! - [`batch`]: ACFS limited batch scheduling: take up to B requests, serve them in LBN order.
//! - [`cfq`]: Linux 2.6.2x CFQ: per-process queues served round robin in time slices, idling on
//!   an emptied synchronous queue for that process's next request.
//! - [`anticipatory`]: Linux 2.6.2x anticipatory scheduler: deadline-like batches of reads and
//!   writes, waiting after a synchronous read for a nearby request of the same process.
//!
//! All of them share [`queue::RequestQueue`], which does the merging and answers the questions
//! by block position and by arrival, so a scheduler is only its choice rule. Two options apply
//! to every scheduler (see [`build`]): `merge=process` merges only requests of one process, and
//! `plug=on` wraps the scheduler in Linux's queue plugging ([`plug`]).

use crate::error::ConfigError;
use crate::trace::Op;

pub mod anticipatory;
pub mod batch;
pub mod cfq;
pub mod cscan;
pub mod deadline;
pub mod elevator;
pub mod history;
pub mod noop;
pub mod plug;
pub mod queue;
pub mod select;
pub mod spec;
pub mod sstf;

/// What caused a block-layer request (after merging, the cause of its first part).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cause {
    /// A demand read miss (a process waits for it).
    Demand,
    /// A prefetch (nobody waits for it when it is issued).
    Prefetch,
    /// Write-back of dirty blocks (eviction, periodic flush, or write-through).
    Writeback,
}

/// A request in the block layer, in page-sized blocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoRequest {
    pub op: Op,
    pub device: u32,
    /// First block (in page units).
    pub block: u64,
    /// Number of blocks (at least 1).
    pub blocks: u32,
    /// Some process waits for it (a demand read, or a write-through write).
    pub sync: bool,
    pub cause: Cause,
    /// When it entered the scheduler (for merged requests: the earliest part).
    pub arrival_ns: u64,
    /// The process it is for: the reader of a demand read or a prefetch, the writer of a
    /// write-through write; the process whose eviction or flush wrote back a dirty block.
    pub pid: u32,
}

impl IoRequest {
    /// One past the last block.
    #[inline]
    pub fn end(&self) -> u64 {
        self.block + self.blocks as u64
    }
}

/// An I/O scheduler.
///
/// Contract: the engine calls [`Scheduler::add`] for every request leaving the page cache (in
/// time order) and [`Scheduler::dispatch`] whenever the device can take a request, repeatedly
/// until it answers `None`, and [`Scheduler::completed`] when the device finishes a request the
/// scheduler dispatched. A scheduler MUST return every request it was given exactly once
/// (merged requests count as their parts: the dispatched request covers exactly the union of
/// the blocks of its parts), never merge requests of different direction or device or beyond
/// the maximum merged size it was built with (nor of different processes when built with
/// [`MergeScope::Process`]), and be deterministic. `dispatch` may hold requests back (answer
/// `None` with requests queued) only if it names, through [`Scheduler::wake_at`], a time at
/// which it will dispatch them without further input, or while a request it dispatched is still
/// in the device (its completion is the input it waits for: CFQ waiting for its active queue's
/// requests, anticipation waiting for the read it anticipates after). With nothing queued
/// (`queued() == 0`) `dispatch` answers `None`, and the engine does not ask.
pub trait Scheduler: std::any::Any + Send {
    /// Name with parameters, e.g. `batch:b=16`.
    fn name(&self) -> String;
    /// Queues `req` (possibly merging it with a queued request).
    fn add(&mut self, req: IoRequest, now_ns: u64);
    /// The next request for the device, if the scheduler wants to dispatch one now.
    fn dispatch(&mut self, now_ns: u64) -> Option<IoRequest>;
    /// Requests queued (after merging).
    fn queued(&self) -> usize;
    /// Merges done so far.
    fn merges(&self) -> u64;
    /// When a scheduler holding requests back wants `dispatch` called again.
    fn wake_at(&self) -> Option<u64> {
        None
    }
    /// The device finished `req` at `now_ns`.
    ///
    /// Contract: the engine calls it exactly once for every request `dispatch` returned, with
    /// that request as dispatched (equal to it), at its completion time, in completion order,
    /// before anything else happens at that completion (the blocks' waiters wake, a block stage
    /// and the prefetcher hear of it, and so may add requests) and before the engine asks
    /// `dispatch` again: after a completion it always asks for work while the device has room
    /// and the scheduler holds requests. Schedulers that idle or anticipate after a completion
    /// (CFQ, anticipatory) decide here; to hold the device idle they answer `None` from
    /// `dispatch` and name the end of the wait through `wake_at`. The default does nothing.
    fn completed(&mut self, _req: &IoRequest, _now_ns: u64) {}
    /// Process `pid` exited at `now_ns` (a trace's exit event, or the end of its requests when
    /// the trace has process events).
    ///
    /// Contract: called at most once per process, after every request of it that the process
    /// waited for has completed; the engine asks `dispatch` again afterwards. A scheduler that
    /// idles or anticipates on a process stops waiting for it here, as the kernel does when a
    /// task's I/O context goes away. The default does nothing.
    fn process_exit(&mut self, _pid: u32, _now_ns: u64) {}
    /// Hands over every request queued and not yet dispatched, oldest first (by `arrival_ns`,
    /// then the order the scheduler would have taken them in), for a scheduler that takes this
    /// one's place ([`hand_over`]); `None` if this scheduler cannot.
    ///
    /// Contract: the requests returned are exactly those queued (merged requests as merged,
    /// requests a scheduler moved to its dispatch list and not yet dispatched included), each
    /// once; afterwards `queued()` is 0 and the scheduler is retired: the caller drops it and
    /// tells it nothing more (not even the completions of requests it dispatched, which the
    /// device still finishes). The default answers `None`.
    fn take_queued(&mut self) -> Option<Vec<IoRequest>> {
        None
    }
    /// What the scheduler reports at the end of the run, beside its counts (`None`: nothing).
    /// A scheduler that selects among others on line reports its decisions here (see
    /// [`select`]).
    fn report(&self) -> Option<serde_json::Value> {
        None
    }
}

/// Puts `to` in `from`'s place: every request queued in `from` and not yet dispatched is added
/// to `to` at `now_ns`, oldest first, keeping its `arrival_ns` (so deadlines and FIFO expiry run
/// from the original arrival), and `from` is retired (see [`Scheduler::take_queued`]). `to` may
/// merge the requests handed over as it merges any it is given (merges are counted by `to`).
/// Requests `from` dispatched are not handed over: the device finishes them, and the caller
/// tells neither scheduler of their completion (`to` never dispatched them; `from` is retired).
/// `to`'s wake-up (`wake_at`) is its own: the caller asks for it after the hand-over, as after
/// any `add`. A plugged `from` hands over what its plug held; a plugged `to` decides afresh
/// whether to plug. Returns the requests handed over (before `to` merged them), or `None`, with
/// nothing changed, when `from` cannot hand over its queue.
pub fn hand_over(from: &mut dyn Scheduler, to: &mut dyn Scheduler, now_ns: u64) -> Option<usize> {
    let queued = from.take_queued()?;
    let n = queued.len();
    for r in queued {
        to.add(r, now_ns);
    }
    Some(n)
}

/// `v` oldest first: a stable sort by `arrival_ns`, so that requests of one instant keep the
/// order they were given in (for [`Scheduler::take_queued`]).
pub(crate) fn oldest_first(mut v: Vec<IoRequest>) -> Vec<IoRequest> {
    v.sort_by_key(|r| r.arrival_ns);
    v
}

/// Settings every scheduler shares.
#[derive(Debug, Clone, Copy)]
pub struct SchedLimits {
    /// Largest merged request, in blocks.
    pub max_blocks: u32,
    /// Bytes per block (the page size), for parameters given in bytes or sectors.
    pub block_bytes: u64,
    /// Whose requests may merge (the `merge` option; set by [`build`]).
    pub merge: MergeScope,
}

impl SchedLimits {
    /// Limits merging any processes' requests up to `max_blocks` blocks of `block_bytes`.
    pub fn new(max_blocks: u32, block_bytes: u64) -> SchedLimits {
        SchedLimits { max_blocks, block_bytes, merge: MergeScope::All }
    }

    /// A block count as 512-byte sectors (the unit of Linux's seek heuristics).
    pub fn sectors(&self, blocks: u64) -> u64 {
        blocks.saturating_mul(self.block_bytes / 512)
    }
}

/// Which queued requests a new request may merge with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeScope {
    /// Any process's (Linux's noop, deadline and anticipatory elevators).
    All,
    /// Only the same process's (as CFQ, whose queues are per process).
    Process,
}

/// A scheduler's entry in the registry.
pub struct SchedInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub build: fn(limits: SchedLimits, spec: &mut ComponentSpec) -> Result<Box<dyn Scheduler>, ConfigError>,
}

/// Every scheduler iostack has.
pub static SCHEDULERS: &[SchedInfo] =
    &[noop::INFO, cscan::INFO, sstf::INFO, deadline::INFO, batch::INFO, cfq::INFO, anticipatory::INFO];

/// Builds a scheduler from a spec such as `cscan`, `deadline:read_expire=100ms` or `batch:16`
/// (a bare value is the scheduler's main parameter). Every scheduler also takes `merge=all`
/// (default; `merge=process` merges only requests of one process; CFQ's queues are per process
/// already) and `plug=off` (default; `plug=on` plugs the queue as Linux 2.6 does, unplugging after
/// 3 ms or at 4 queued requests; `plug=DELAY/COUNT` sets both, e.g. `plug=5ms/8`).
pub fn build(spec: &str, mut limits: SchedLimits) -> Result<Box<dyn Scheduler>, ConfigError> {
    let mut spec = ComponentSpec::parse("--sched", spec, &[("batch", "b")])?;
    let info = SCHEDULERS
        .iter()
        .find(|s| s.name == spec.name || s.aliases.contains(&spec.name.as_str()))
        .ok_or_else(|| {
            let names: Vec<&str> = SCHEDULERS.iter().map(|s| s.name).collect();
            ConfigError::unknown("--sched", "scheduler", &spec.name, &names)
        })?;
    if limits.max_blocks == 0 {
        return Err(ConfigError::new("--max-request", "the maximum request size must be at least one page"));
    }
    limits.merge = match spec.text("merge").as_deref() {
        None | Some("all") => MergeScope::All,
        Some("process") => MergeScope::Process,
        Some(v) => return Err(spec.error("merge", format!("`{v}` is not `all` or `process`"))),
    };
    let plugging = plug::PlugSettings::from_spec(&mut spec)?;
    let mut s = (info.build)(limits, &mut spec)?;
    spec.finish()?;
    if let Some(p) = plugging {
        s = Box::new(plug::Plug::new(s, p));
    }
    Ok(s)
}

pub use spec::ComponentSpec;

/// `base` (a scheduler's name with its parameters) with `merge=process` appended when the
/// scheduler merges per process, so that the name given back is a spec that builds it again.
pub fn with_merge_scope(base: String, per_process: bool) -> String {
    if !per_process {
        return base;
    }
    let sep = if base.contains(':') { ',' } else { ':' };
    format!("{base}{sep}merge=process")
}

/// A duration in ns as the shortest exact text with a unit (`125ms`, `2500us`, `7ns`), for
/// scheduler names that can be given back as specs.
pub fn duration_text(ns: u64) -> String {
    for (unit, per) in [("s", 1_000_000_000u64), ("ms", 1_000_000), ("us", 1_000)] {
        if ns != 0 && ns % per == 0 {
            return format!("{}{unit}", ns / per);
        }
    }
    format!("{ns}ns")
}

/// Test helper: a one-block synchronous demand read of `pid` at `block`, arriving at `t`.
#[cfg(test)]
pub(crate) fn test_read(pid: u32, block: u64, t: u64) -> IoRequest {
    IoRequest { op: Op::Read, device: 0, block, blocks: 1, sync: true, cause: Cause::Demand, arrival_ns: t, pid }
}

/// Test helper: dispatches one request at `now` and completes it `service` later; returns it
/// and the completion time.
#[cfg(test)]
pub(crate) fn serve_one(s: &mut dyn Scheduler, now: u64, service: u64) -> Option<(IoRequest, u64)> {
    let r = s.dispatch(now)?;
    s.completed(&r, now + service);
    Some((r, now + service))
}

/// Test helper for FIFO expiry: process 1 reads block `start` (1 ms); then a read of `far_pid`
/// at block 10, far behind, and `n` reads of process 1 ahead (every other block from `start`)
/// are queued; served at 10 ms each, where block 10 comes in the order.
#[cfg(test)]
pub(crate) fn far_read_position(s: &mut dyn Scheduler, far_pid: u32, start: u64, n: u64) -> usize {
    s.add(test_read(1, start, 0), 0);
    let (_, t) = serve_one(s, 0, 1_000_000).unwrap();
    s.add(test_read(far_pid, 10, t), t);
    for i in 1..=n {
        s.add(test_read(1, start + 2 * i, t), t);
    }
    let order: Vec<u64> = serve_all(s, t, 10_000_000).into_iter().map(|(r, _)| r.block).collect();
    assert_eq!(order.len() as u64, n + 1);
    order.iter().position(|&b| b == 10).unwrap()
}

/// Test helper: a device that serves one request at a time, each taking `service` ns, from
/// `start` until the scheduler is empty, following its holds; every request with the time it
/// was dispatched.
#[cfg(test)]
pub(crate) fn serve_all(s: &mut dyn Scheduler, start: u64, service: u64) -> Vec<(IoRequest, u64)> {
    let mut t = start;
    let mut out = Vec::new();
    while s.queued() > 0 {
        match s.dispatch(t) {
            Some(r) => {
                out.push((r, t));
                t += service;
                s.completed(&r, t);
            }
            None => t = s.wake_at().expect("a scheduler holding requests names when it wakes"),
        }
    }
    out
}
