//! noop: first come, first served, with merging.
//!
//! Linux's `noop` (now `none`) elevator: requests are dispatched in the order they arrived; the
//! only thing it does is merge a new request into a queued one it touches (see
//! [`super::queue`]). A merged request keeps the place of its earliest part.

use super::queue::RequestQueue;
use super::{IoRequest, SchedInfo, SchedLimits, Scheduler};

pub const INFO: SchedInfo = SchedInfo {
    name: "noop",
    aliases: &["fifo", "none", "fcfs"],
    summary: "first come first served, merging adjacent requests",
    build: |limits: SchedLimits, _spec| Ok(Box::new(Noop::new(limits))),
};

pub struct Noop {
    queue: RequestQueue,
}

impl Noop {
    pub fn new(limits: SchedLimits) -> Self {
        Noop { queue: RequestQueue::with_limits(&limits) }
    }
}

impl Scheduler for Noop {
    fn name(&self) -> String {
        super::with_merge_scope("noop".into(), self.queue.per_process())
    }
    fn add(&mut self, req: IoRequest, _now_ns: u64) {
        self.queue.add(req);
    }
    fn dispatch(&mut self, _now_ns: u64) -> Option<IoRequest> {
        let id = self.queue.oldest()?;
        Some(self.queue.remove(id))
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
