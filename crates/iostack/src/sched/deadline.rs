//! deadline: Linux's deadline elevator (block/mq-deadline.c).
//!
//! Reads and writes are queued separately, each sorted by block and in arrival order (FIFO).
//! The scheduler dispatches in batches: within a batch it keeps taking the next request in
//! block order in the same direction, up to `fifo_batch` (16) requests. When a batch ends it
//! picks a direction: reads, unless writes are waiting and have already been passed over
//! `writes_starved` (2) times; then, in that direction, the oldest request if it has expired
//! (`read_expire` 500 ms, `write_expire` 5 s after arrival) or if no request lies ahead of the
//! last one dispatched in that direction, else the next one in block order. The defaults are the
//! kernel's (Documentation/block/deadline-iosched.rst).

use super::queue::{Head, RequestQueue};
use super::{IoRequest, SchedInfo, SchedLimits, Scheduler};

pub const INFO: SchedInfo = SchedInfo {
    name: "deadline",
    aliases: &["mq-deadline"],
    summary: "sorted per direction with FIFO expiry (read 500ms, write 5s), Linux rules",
    build: |limits: SchedLimits, spec| {
        Ok(Box::new(Deadline::new(
            limits,
            spec.duration_ns("read_expire", 500_000_000)?,
            spec.duration_ns("write_expire", 5_000_000_000)?,
            spec.u64("fifo_batch", 16, 1, 1 << 20)? as u32,
            spec.u64("writes_starved", 2, 0, 1 << 20)? as u32,
        )))
    },
};

pub struct Deadline {
    /// Reads (0) and writes (1).
    queues: [RequestQueue; 2],
    expire: [u64; 2],
    next: [Head; 2],
    fifo_batch: u32,
    writes_starved: u32,
    batching: u32,
    starved: u32,
    dir: Option<usize>,
}

impl Deadline {
    pub fn new(limits: SchedLimits, read_expire: u64, write_expire: u64, fifo_batch: u32, writes_starved: u32) -> Self {
        Deadline {
            queues: [RequestQueue::with_limits(&limits), RequestQueue::with_limits(&limits)],
            expire: [read_expire, write_expire],
            next: [Head::default(); 2],
            fifo_batch,
            writes_starved,
            batching: 0,
            starved: 0,
            dir: None,
        }
    }

    fn take(&mut self, dir: usize, id: u32) -> IoRequest {
        let r = self.queues[dir].remove(id);
        self.next[dir] = Head::after(&r);
        self.batching += 1;
        self.dir = Some(dir);
        r
    }
}

impl Scheduler for Deadline {
    fn name(&self) -> String {
        let base = format!(
            "deadline:read_expire={}ns,write_expire={}ns,fifo_batch={},writes_starved={}",
            self.expire[0], self.expire[1], self.fifo_batch, self.writes_starved
        );
        super::with_merge_scope(base, self.queues[0].per_process())
    }
    fn add(&mut self, req: IoRequest, _now_ns: u64) {
        self.queues[req.op.is_write() as usize].add(req);
    }
    fn dispatch(&mut self, now_ns: u64) -> Option<IoRequest> {
        // Continue the current batch.
        if let Some(d) = self.dir {
            if self.batching < self.fifo_batch {
                if let Some(id) = self.queues[d].at_or_after(self.next[d].device, self.next[d].block) {
                    return Some(self.take(d, id));
                }
            }
        }
        let reads = !self.queues[0].is_empty();
        let writes = !self.queues[1].is_empty();
        let d = if reads {
            if writes && self.starved >= self.writes_starved {
                self.starved = 0;
                1
            } else {
                if writes {
                    self.starved += 1;
                }
                0
            }
        } else if writes {
            self.starved = 0;
            1
        } else {
            return None;
        };
        self.batching = 0;
        let oldest = self.queues[d].oldest().expect("direction has requests");
        let expired = self.queues[d].get(oldest).arrival_ns.saturating_add(self.expire[d]) <= now_ns;
        let id = if expired {
            oldest
        } else {
            self.queues[d].at_or_after(self.next[d].device, self.next[d].block).unwrap_or(oldest)
        };
        Some(self.take(d, id))
    }
    fn queued(&self) -> usize {
        self.queues[0].len() + self.queues[1].len()
    }
    fn merges(&self) -> u64 {
        self.queues[0].merges() + self.queues[1].merges()
    }
    fn take_queued(&mut self) -> Option<Vec<IoRequest>> {
        let [reads, writes] = &mut self.queues;
        let mut v = reads.take_all();
        v.extend(writes.take_all());
        Some(super::oldest_first(v))
    }
}
