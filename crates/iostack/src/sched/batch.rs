//! batch: ACFS's limited batch scheduling (Cao, Felten, Karlin and Li, ACM TOCS 1996, §3.3).
//!
//! "Every time the disk becomes idle, the prefetcher tries to issue a batch of prefetch
//! requests, instead of just one request. There is a limit, B, on the batch size"; the driver
//! then serves the batch "into order of increasing logical block number". Here the rule applies
//! to every queued request: when the device wants work and the current batch is used up, the
//! (at most) B oldest queued requests form the next batch, which is served in (device, block)
//! order; requests arriving meanwhile wait for the following batch (they may still merge with
//! queued ones). B = 16 is the value ACFS chose (§5.3); B = 1 is FIFO.

use super::queue::RequestQueue;
use super::{IoRequest, SchedInfo, SchedLimits, Scheduler};

pub const INFO: SchedInfo = SchedInfo {
    name: "batch",
    aliases: &[],
    summary: "ACFS batches of B requests served in block order (batch:B, default 16)",
    build: |limits: SchedLimits, spec| Ok(Box::new(Batch::new(limits, spec.u64("b", 16, 1, 1 << 20)? as usize))),
};

pub struct Batch {
    queue: RequestQueue,
    b: usize,
    /// The current batch, in reverse block order (served from the end).
    batch: Vec<IoRequest>,
}

impl Batch {
    pub fn new(limits: SchedLimits, b: usize) -> Self {
        Batch { queue: RequestQueue::with_limits(&limits), b, batch: Vec::with_capacity(b) }
    }
}

impl Scheduler for Batch {
    fn name(&self) -> String {
        super::with_merge_scope(format!("batch:b={}", self.b), self.queue.per_process())
    }
    fn add(&mut self, req: IoRequest, _now_ns: u64) {
        self.queue.add(req);
    }
    fn dispatch(&mut self, _now_ns: u64) -> Option<IoRequest> {
        if self.batch.is_empty() {
            while self.batch.len() < self.b {
                match self.queue.oldest() {
                    Some(id) => {
                        let r = self.queue.remove(id);
                        self.batch.push(r);
                    }
                    None => break,
                }
            }
            self.batch.sort_unstable_by(|x, y| (y.device, y.block, y.op as u8).cmp(&(x.device, x.block, x.op as u8)));
        }
        self.batch.pop()
    }
    fn queued(&self) -> usize {
        self.queue.len() + self.batch.len()
    }
    fn merges(&self) -> u64 {
        self.queue.merges()
    }
    fn take_queued(&mut self) -> Option<Vec<IoRequest>> {
        // The current batch in the order it would have been served, then the queue.
        let mut v: Vec<IoRequest> = self.batch.drain(..).rev().collect();
        v.extend(self.queue.take_all());
        Some(super::oldest_first(v))
    }
}
