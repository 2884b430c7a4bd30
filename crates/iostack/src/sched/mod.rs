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
//!
//! All of them share [`queue::RequestQueue`], which does the merging and answers the questions
//! by block position and by arrival, so a scheduler is only its choice rule.

use crate::error::ConfigError;
use crate::trace::Op;

pub mod batch;
pub mod cscan;
pub mod deadline;
pub mod noop;
pub mod queue;
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
/// until it answers `None`. A scheduler MUST return every request it was given exactly once
/// (merged requests count as their parts: the dispatched request covers exactly the union of
/// the blocks of its parts), never merge requests of different direction or device or beyond
/// the maximum merged size it was built with, and be deterministic. `dispatch` may hold
/// requests back (answer `None` with requests queued) only if it names, through
/// [`Scheduler::wake_at`], a time at which it will dispatch them without further input. With
/// nothing queued (`queued() == 0`) `dispatch` answers `None`, and the engine does not ask.
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
}

/// Settings every scheduler shares.
#[derive(Debug, Clone, Copy)]
pub struct SchedLimits {
    /// Largest merged request, in blocks.
    pub max_blocks: u32,
}

/// A scheduler's entry in the registry.
pub struct SchedInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    pub build: fn(limits: SchedLimits, spec: &mut ComponentSpec) -> Result<Box<dyn Scheduler>, ConfigError>,
}

/// Every scheduler iostack has.
pub static SCHEDULERS: &[SchedInfo] = &[noop::INFO, cscan::INFO, sstf::INFO, deadline::INFO, batch::INFO];

/// Builds a scheduler from a spec such as `cscan`, `deadline:read_expire=100ms` or `batch:16`
/// (a bare value is the scheduler's main parameter).
pub fn build(spec: &str, limits: SchedLimits) -> Result<Box<dyn Scheduler>, ConfigError> {
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
    let s = (info.build)(limits, &mut spec)?;
    spec.finish()?;
    Ok(s)
}

pub use spec::ComponentSpec;
