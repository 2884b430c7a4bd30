//! SSTF: shortest seek time first.
//!
//! The next request is the queued one whose first block is nearest to the end of the last
//! dispatched request, measured in blocks on the same device (a request on another device is
//! farther than any on the current one; between devices, the lower device id wins). Ties go to
//! the request ahead of the head, so a sequential stream keeps going. SSTF minimises each seek
//! but can starve requests far from a busy region.

use super::queue::{Head, RequestQueue};
use super::{IoRequest, SchedInfo, SchedLimits, Scheduler};

pub const INFO: SchedInfo = SchedInfo {
    name: "sstf",
    aliases: &[],
    summary: "shortest seek (block distance) first",
    build: |limits: SchedLimits, _spec| Ok(Box::new(Sstf::new(limits))),
};

pub struct Sstf {
    queue: RequestQueue,
    head: Head,
}

impl Sstf {
    pub fn new(limits: SchedLimits) -> Self {
        Sstf { queue: RequestQueue::with_limits(&limits), head: Head::default() }
    }

    fn distance(&self, r: &IoRequest) -> (u32, u64) {
        if r.device != self.head.device {
            return (1, 0);
        }
        (0, r.block.abs_diff(self.head.block))
    }
}

impl Scheduler for Sstf {
    fn name(&self) -> String {
        super::with_merge_scope("sstf".into(), self.queue.per_process())
    }
    fn add(&mut self, req: IoRequest, _now_ns: u64) {
        self.queue.add(req);
    }
    fn dispatch(&mut self, _now_ns: u64) -> Option<IoRequest> {
        let ahead = self.queue.at_or_after(self.head.device, self.head.block);
        let behind = self.queue.before(self.head.device, self.head.block);
        let id = match (ahead, behind) {
            (Some(a), Some(b)) => {
                let (da, db) = (self.distance(self.queue.get(a)), self.distance(self.queue.get(b)));
                if db < da {
                    b
                } else {
                    a
                }
            }
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => return None,
        };
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
