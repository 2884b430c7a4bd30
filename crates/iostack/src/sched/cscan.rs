//! C-SCAN: a one-way elevator in logical block order.
//!
//! The head sweeps toward higher block numbers: the next request is the first one at or after
//! the end of the last dispatched request (device, then block, order); when none is left ahead,
//! the sweep restarts from the lowest queued request (circular SCAN, Seltzer, Chen and
//! Ousterhout 1990). One-way sweeps give every block the same expected wait, unlike SCAN, and
//! match the ascending order Linux's elevators and ACFS's batches use.

use super::queue::{Head, RequestQueue};
use super::{IoRequest, SchedInfo, SchedLimits, Scheduler};

pub const INFO: SchedInfo = SchedInfo {
    name: "cscan",
    aliases: &["c-scan", "elevator"],
    summary: "one-way elevator in block order (C-SCAN)",
    build: |limits: SchedLimits, _spec| Ok(Box::new(CScan::new(limits))),
};

pub struct CScan {
    queue: RequestQueue,
    head: Head,
}

impl CScan {
    pub fn new(limits: SchedLimits) -> Self {
        CScan { queue: RequestQueue::with_limits(&limits), head: Head::default() }
    }
}

impl Scheduler for CScan {
    fn name(&self) -> String {
        super::with_merge_scope("cscan".into(), self.queue.per_process())
    }
    fn add(&mut self, req: IoRequest, _now_ns: u64) {
        self.queue.add(req);
    }
    // Inlined into the engine's dispatch loop (the default stack's scheduler): returned from a
    // call, the request is written to memory in pieces and read back whole at once, a load
    // the CPU cannot forward from those stores.
    #[inline(always)]
    fn dispatch(&mut self, _now_ns: u64) -> Option<IoRequest> {
        let id = self.queue.at_or_after(self.head.device, self.head.block).or_else(|| self.queue.lowest())?;
        let r = self.queue.remove(id);
        self.head = Head::after(&r);
        Some(r)
    }
    fn queued(&self) -> usize {
        self.queue.len()
    }
    fn merges(&self) -> u64 {
        self.queue.merges()
    }
    fn take_queued(&mut self) -> Option<Vec<IoRequest>> {
        Some(self.queue.take_all())
    }
}
