//! Block-layer stages: code between the page cache and the I/O scheduler.
//!
//! ```text
//! page cache -> [cache] -> block stage -> I/O scheduler -> [sched] -> layers -> device
//! ```
//!
//! Every request the page cache sends toward the disk (demand reads, prefetches, write-back,
//! write-through: an [`IoRequest`] with its pid and sync flag) goes through the stage, if the
//! stack has one. A stage may pass a request on to the scheduler unchanged, serve it itself
//! after a delay (from its own memory), or take it and send other requests of its own through
//! the scheduler instead (e.g. a whole segment around it), and then complete the blocks it took
//! at its request's completion or a delay after it (a copy). It also hears every request the
//! scheduler dispatches and every completion, with the device's service times. This is where
//! designs that sit above the scheduler belong: REDCAP's segment cache (KDSim paper §4: a read
//! is served from a cached segment, or waits for a segment being read, or replaced by the read
//! of its segment), ADA's on/off decision (it needs each request's real service time), and the
//! feed of KDSim's virtual disk (copies of the requests entering the real scheduler, each with
//! its process and flag). REDCAP with ADA is one stage ([`ada::Ada`]): it drives a REDCAP cache
//! and the virtual disk itself. Disk-side code that sits below the scheduler is a
//! [`crate::layer::Layer`] instead.
//!
//! The stack has at most one stage; without one (the default) the engine hands requests to
//! the scheduler directly and pays nothing for this slot.

pub mod ada;
pub mod redcap;

use crate::device::Service;
use crate::sched::IoRequest;

/// What a stage does with a request it was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Submit {
    /// Hand it to the scheduler unchanged (after the actions the stage queued, if any).
    Pass,
    /// The stage keeps it: the actions it queued (now or later) complete its blocks.
    Take,
}

/// Actions a stage queues during a call; the engine carries them out when the call returns,
/// in order (issues in the order given, each serve as an event at its time).
#[derive(Debug, Default)]
pub struct StageActions {
    pub(crate) issue: Vec<IoRequest>,
    pub(crate) serve: Vec<(IoRequest, u64)>,
    pub(crate) hold: Vec<(IoRequest, u64)>,
}

impl StageActions {
    /// Sends `req`, a request of the stage's own, to the scheduler now (its `arrival_ns` is set
    /// to now). The scheduler may merge it with other requests like any other; when the device
    /// completes it, every block in its range is complete (waiters wake, in-flight reads end),
    /// exactly as for a request from the page cache, and the stage hears of it through
    /// [`BlockStage::dispatched`] and [`BlockStage::completed`].
    pub fn issue(&mut self, req: IoRequest) {
        self.issue.push(req);
    }

    /// Completes every block of `req`'s range (reads: the data is there; writes: written) at
    /// `at_ns` (at least now): the stage served it from its own memory. Waiters wake then,
    /// exactly as at a device completion. `req` is usually a request the stage took, but may be
    /// any range.
    pub fn serve(&mut self, req: IoRequest, at_ns: u64) {
        self.serve.push((req, at_ns));
    }

    /// In [`BlockStage::completed`]: the blocks of `req`'s range that lie inside the completing
    /// device request are *not* completed with it but at `at_ns` (at least now), as by
    /// [`StageActions::serve`]: the stage copies them from the data the read brought before the
    /// readers have them (REDCAP's copy after a segment read, K9). Blocks outside the completing
    /// request, and a hold queued in any other call, are simply served at `at_ns`.
    pub fn hold(&mut self, req: IoRequest, at_ns: u64) {
        self.hold.push((req, at_ns));
    }

    /// Nothing queued.
    pub fn is_empty(&self) -> bool {
        self.issue.is_empty() && self.serve.is_empty() && self.hold.is_empty()
    }
}

/// A block-layer stage.
///
/// Contract. The engine guarantees:
/// - [`BlockStage::submit`] is called for every request leaving the page cache, in time order,
///   once each, before the scheduler sees it; requests carry the pid of the process they are
///   for and whether it waits for them (`sync`; see docs/timed.md, Processes below the page
///   cache). Requests of different processes are never joined before the stage sees them.
/// - [`BlockStage::dispatched`] is called for every request the scheduler hands to the device
///   (whoever sent it: the scheduler may have merged page-cache requests and the stage's own, so
///   a stage recognises its requests by their block range), with the service times the device
///   model answered; [`BlockStage::completed`] when the device completes it, before its blocks
///   are completed (so that the stage can hold some of them, [`StageActions::hold`]) and before
///   the scheduler is asked for more work.
/// - All times are the engine's virtual time, in nanoseconds, non-decreasing across calls.
///
/// An implementation MUST:
/// - complete every block of every request it takes: by [`StageActions::serve`], or by issuing
///   requests of its own that cover them (the completion of a device read completes every
///   block in its range, whoever asked for it; a taken read whose blocks lie inside a read
///   already in flight needs nothing more, which is how "wait for the segment being read"
///   works). A run that ends with blocks a stage took never completed fails with an error
///   naming the stage.
/// - not serve a read of blocks before it has their data (the engine cannot check this:
///   serving is the stage's claim that the data is in memory);
/// - be deterministic (same calls, same actions).
///
/// Passing a request is free of side effects; taking it leaves its blocks in flight (a
/// reference waits for them, prefetchers see them in flight) until they are completed.
pub trait BlockStage: Send {
    /// Name with parameters, e.g. `redcap:segment=256KiB`.
    fn name(&self) -> String;
    /// A request leaves the page cache at `now_ns`: pass it on, or take it and queue actions.
    fn submit(&mut self, req: IoRequest, now_ns: u64, out: &mut StageActions) -> Submit;
    /// The scheduler dispatched `req` at `now_ns`; the device serves it over `service`
    /// (`service.finish_ns` is its completion time, known now).
    fn dispatched(&mut self, req: &IoRequest, service: &Service, now_ns: u64) {
        let _ = (req, service, now_ns);
    }
    /// The device completed `req` (dispatched earlier with `service`) at `now_ns`; the stage may
    /// queue actions: hold blocks of `req` it took, to complete them later
    /// ([`StageActions::hold`]: every other block of `req` completes now), serve others, issue
    /// more.
    fn completed(&mut self, req: &IoRequest, service: &Service, now_ns: u64, out: &mut StageActions) {
        let _ = (req, service, now_ns, out);
    }
    /// A process event of the trace (a fork, a wait, an exit) took effect at `now_ns`, at its
    /// place in the acting process's stream (see [`crate::trace::ProcessEvent`]).
    fn process_event(&mut self, event: &crate::trace::ProcessEvent, now_ns: u64) {
        let _ = (event, now_ns);
    }
    /// What the stage reports at the end of the run (under `blk.stage` in the result; `Null` to
    /// add nothing).
    fn report(&self) -> serde_json::Value {
        serde_json::Value::Null
    }
}
