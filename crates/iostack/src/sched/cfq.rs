//! cfq: Linux's Completely Fair Queueing scheduler, as in block/cfq-iosched.c of Linux 2.6.20
//! (the CFQ of the 2.6.2x kernels the KDSim and affinity papers ran; defaults checked in that
//! file: `cfq_quantum`, `cfq_fifo_expire`, `cfq_slice_*`, `cfq_back_*`).
//!
//! # Queues
//!
//! Every process has its own queue for its synchronous requests, which in Linux 2.6 are all
//! reads (readahead included: `rq_is_sync` is true for every read) and the writes a process
//! waits for. Asynchronous writes (write-back) of all processes share one queue, as the kernel
//! keys them all `CFQ_KEY_ASYNC` within a priority level; traces carry no I/O priorities, so
//! every process is best effort at the default level 4 and there is one async queue. Requests
//! merge only within a queue (the kernel's `cfq_allow_merge`), so a process's reads never merge
//! with another's; in the shared async queue, writes of different processes merge (the kernel's
//! behaviour) unless the scheduler is built with `merge=process`.
//!
//! # Round robin in time slices
//!
//! Queues with requests wait in a round-robin list. A queue never served yet enters it at the
//! front (behind other new queues); others at the back; a queue that still has requests in the
//! device waits in a second list that is served only when the first is empty. The queue at the
//! front becomes the active queue and owns the device for a time slice: `slice_sync` (100 ms)
//! for a synchronous queue, `slice_async` (40 ms) for the async one, counted from the end of its
//! first dispatch round. In each round the active queue moves up to `quantum` (4) requests to the
//! dispatch list, from which the device takes them one at a time; the next round starts when
//! that list is empty. The async queue also ends its slice after `slice_async_rq` scaled by the
//! priority (`2 * (rq + rq * (8 - 1 - 4))` = 16 requests at the default level). An expired queue
//! goes to the back of the list.
//!
//! Within a queue, a request that waited longer than `fifo_expire` (125 ms sync, 250 ms async)
//! is served first, at most once per slice; otherwise the next request is the nearest in the
//! one-way elevator of [`super::elevator`], with back seeks of at most `back_seek_max` (16 MiB)
//! costing `back_seek_penalty` (2) times their distance.
//!
//! # Idling
//!
//! When the active synchronous queue empties and its last request has completed, CFQ does not
//! switch at once: it waits up to `slice_idle` (8 ms) for the same process's next request (a
//! sequential reader issues it right after its read completes), so that two readers do not
//! force a seek between every pair of requests. A request from that process ends the wait and is
//! dispatched even if the slice has run out meanwhile; when the wait expires, the slice ends and
//! the next queue is served. A process whose mean think time exceeds `slice_idle` (once three
//! think times are known) loses its idle window, and then its slice ends after every dispatch
//! round, as it does for every queue when `slice_idle = 0`; a process whose mean seek distance is
//! over 64 MiB is waited for only 2 ms. An async request from the process being waited for ends
//! the wait (it will not issue a read soon).
//!
//! # Differences from the kernel
//!
//! - One priority level, no real-time or idle classes, so the kernel's preemption never fires
//!   (in 2.6.20 it needs a waiting queue, and only the active queue waits).
//! - The idle wait is set once when it starts; 2.6.20 re-arms its timer whenever the queue is
//!   run during the wait, which later kernels stopped doing.
//! - The next request in a queue is chosen when it is dispatched, from the end of the last
//!   dispatched request, rather than cached in advance.
//! - The dispatch list keeps the order requests were moved to it (the kernel sorts it by sector
//!   between barriers; from one queue in elevator order the two agree).

use std::collections::VecDeque;

use super::history::IoHistory;
use super::queue::{Head, RequestQueue};
use super::{duration_text, elevator, IoRequest, MergeScope, SchedInfo, SchedLimits, Scheduler};
use crate::trace::Op;

pub const INFO: SchedInfo = SchedInfo {
    name: "cfq",
    aliases: &[],
    summary: "Linux 2.6 CFQ: per-process queues in round-robin time slices, idling 8ms for the next read",
    build: |limits: SchedLimits, spec| {
        let d = CfqParams::default();
        let p = CfqParams {
            quantum: spec.u64("quantum", d.quantum as u64, 1, 65_536)? as u32,
            fifo_expire_sync: spec.duration_ns("fifo_expire_sync", d.fifo_expire_sync)?,
            fifo_expire_async: spec.duration_ns("fifo_expire_async", d.fifo_expire_async)?,
            slice_sync: spec.duration_ns("slice_sync", d.slice_sync)?,
            slice_async: spec.duration_ns("slice_async", d.slice_async)?,
            slice_async_rq: spec.u64("slice_async_rq", d.slice_async_rq as u64, 1, 65_536)? as u32,
            slice_idle: spec.duration_ns("slice_idle", d.slice_idle)?,
            back_seek_max: spec.size_bytes("back_seek_max", d.back_seek_max, 1024)?,
            back_seek_penalty: spec.u64("back_seek_penalty", d.back_seek_penalty, 1, 1024)?,
        };
        for (key, v) in [("slice_sync", p.slice_sync), ("slice_async", p.slice_async)] {
            if v == 0 {
                return Err(spec.error(key, "a time slice must be longer than 0"));
            }
        }
        Ok(Box::new(Cfq::new(limits, p)))
    },
};

/// CFQ's tunables (the kernel's sysfs names; durations in ns, `back_seek_max` in bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CfqParams {
    pub quantum: u32,
    pub fifo_expire_sync: u64,
    pub fifo_expire_async: u64,
    pub slice_sync: u64,
    pub slice_async: u64,
    pub slice_async_rq: u32,
    pub slice_idle: u64,
    pub back_seek_max: u64,
    pub back_seek_penalty: u64,
}

const MS: u64 = 1_000_000;

impl Default for CfqParams {
    /// Linux 2.6.20's defaults at HZ = 1000.
    fn default() -> Self {
        CfqParams {
            quantum: 4,
            fifo_expire_sync: 125 * MS,
            fifo_expire_async: 250 * MS,
            slice_sync: 100 * MS,
            slice_async: 40 * MS,
            slice_async_rq: 2,
            slice_idle: 8 * MS,
            back_seek_max: 16 << 20,
            back_seek_penalty: 2,
        }
    }
}

/// Whose queue a request goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    /// A process's synchronous requests.
    Sync(u32),
    /// Every process's asynchronous writes.
    Async,
}

/// Linux 2.6's `rq_is_sync`: every read, and the writes a process waits for.
#[inline]
pub(crate) fn is_sync(r: &IoRequest) -> bool {
    r.op == Op::Read || r.sync
}

fn key_of(r: &IoRequest) -> Key {
    if is_sync(r) {
        Key::Sync(r.pid)
    } else {
        Key::Async
    }
}

/// Mean seek distance beyond which a process counts as seeky (`CIC_SEEKY`: 64 MiB in sectors).
const SEEKY_SECTORS: u64 = 128 * 1024;
/// The idle wait for a seeky process.
const SEEKY_IDLE_NS: u64 = 2 * MS;
/// Requests in the device beyond which the kernel assumes a queueing device (`hw_tag`).
const HW_TAG_DEPTH: u32 = 4;

struct CfqQueue {
    key: Key,
    sort: RequestQueue,
    /// Requests moved to the dispatch list or the device and not yet completed: async, sync.
    on_dispatch: [u32; 2],
    /// In a round-robin list (it has queued requests).
    on_rr: bool,
    /// Never had a slice yet.
    new: bool,
    idle_window: bool,
    must_dispatch: bool,
    wait_request: bool,
    /// Served an expired request in this slice.
    fifo_expired: bool,
    slice_end: Option<u64>,
}

impl CfqQueue {
    fn dispatched(&self) -> u32 {
        self.on_dispatch[0] + self.on_dispatch[1]
    }

    fn class_sync(&self) -> bool {
        matches!(self.key, Key::Sync(_))
    }

    /// `cfq_cfqq_sync`: a sync queue, or one with sync requests in flight.
    fn sync(&self) -> bool {
        self.class_sync() || self.on_dispatch[1] > 0
    }
}

/// What CFQ knows of a process (the kernel's `cfq_io_context`).
struct Process {
    hist: IoHistory,
    last_end_request: u64,
    /// End of its last sync request, in sectors.
    last_request_pos: u64,
}

pub struct Cfq {
    p: CfqParams,
    limits: SchedLimits,
    back_max_blocks: u64,
    queues: Vec<CfqQueue>,
    index: rustc_hash::FxHashMap<Key, usize>,
    /// Round robin of queues with requests and nothing in flight.
    rr: VecDeque<usize>,
    /// Queues with requests and requests in flight, served when `rr` is empty.
    busy_rr: VecDeque<usize>,
    busy_queues: usize,
    active: Option<usize>,
    /// The process whose request was dispatched first in the active slice.
    active_pid: Option<u32>,
    dispatch_slice: u32,
    /// End of the idle wait of the active queue.
    idle_until: Option<u64>,
    head: Head,
    /// The dispatch list: requests moved out of their queues, taken by the device in order.
    ready: VecDeque<IoRequest>,
    processes: rustc_hash::FxHashMap<u32, Process>,
    /// Requests queued in all queues (after merging), plus the dispatch list.
    held: usize,
    in_driver: u32,
    hw_tag: bool,
}

impl Cfq {
    pub fn new(limits: SchedLimits, p: CfqParams) -> Self {
        Cfq {
            p,
            limits,
            back_max_blocks: p.back_seek_max / limits.block_bytes.max(1),
            queues: Vec::new(),
            index: Default::default(),
            rr: VecDeque::new(),
            busy_rr: VecDeque::new(),
            busy_queues: 0,
            active: None,
            active_pid: None,
            dispatch_slice: 0,
            idle_until: None,
            head: Head::default(),
            ready: VecDeque::new(),
            processes: Default::default(),
            held: 0,
            in_driver: 0,
            hw_tag: false,
        }
    }

    fn queue_of(&mut self, key: Key) -> usize {
        if let Some(&i) = self.index.get(&key) {
            return i;
        }
        let i = self.queues.len();
        self.queues.push(CfqQueue {
            key,
            sort: RequestQueue::with_limits(&self.limits),
            on_dispatch: [0; 2],
            on_rr: false,
            new: true,
            idle_window: true,
            must_dispatch: false,
            wait_request: false,
            fifo_expired: false,
            slice_end: None,
        });
        self.index.insert(key, i);
        i
    }

    fn process(&mut self, pid: u32, now: u64) -> &mut Process {
        self.processes.entry(pid).or_insert(Process { hist: IoHistory::default(), last_end_request: now, last_request_pos: 0 })
    }

    /// Puts queue `q` at its place in the round robin (`cfq_resort_rr_list`).
    fn resort(&mut self, q: usize) {
        self.rr.retain(|&x| x != q);
        self.busy_rr.retain(|&x| x != q);
        let list = if self.queues[q].dispatched() > 0 { &mut self.busy_rr } else { &mut self.rr };
        if self.queues[q].new {
            // New queues go first, behind the other new ones.
            let at = list.iter().position(|&x| !self.queues[x].new).unwrap_or(list.len());
            list.insert(at, q);
        } else {
            list.push_back(q);
        }
    }

    fn del_rr(&mut self, q: usize) {
        self.queues[q].on_rr = false;
        self.rr.retain(|&x| x != q);
        self.busy_rr.retain(|&x| x != q);
        self.busy_queues -= 1;
    }

    /// Ends the active queue's slice.
    fn slice_expired(&mut self) {
        let Some(q) = self.active.take() else { return };
        self.idle_until = None;
        let cq = &mut self.queues[q];
        cq.must_dispatch = false;
        cq.wait_request = false;
        cq.new = false;
        if cq.on_rr {
            self.resort(q);
        }
        self.active_pid = None;
        self.dispatch_slice = 0;
    }

    fn set_active_queue(&mut self) -> Option<usize> {
        let q = self.rr.front().or_else(|| self.busy_rr.front()).copied()?;
        let cq = &mut self.queues[q];
        cq.slice_end = None;
        cq.fifo_expired = false;
        self.active = Some(q);
        Some(q)
    }

    /// Starts the idle wait on the emptied active queue `q`, if it idles.
    fn arm_slice_timer(&mut self, q: usize, now: u64) -> bool {
        if self.p.slice_idle == 0 || !self.queues[q].idle_window {
            return false;
        }
        let Some(pid) = self.active_pid else { return false };
        let mut wait = self.p.slice_idle;
        if let Some(pr) = self.processes.get(&pid) {
            if pr.hist.seek_valid() && pr.hist.seek_mean > SEEKY_SECTORS {
                wait = wait.min(SEEKY_IDLE_NS);
            }
        }
        let cq = &mut self.queues[q];
        cq.must_dispatch = true;
        cq.wait_request = true;
        self.idle_until = Some(now.saturating_add(wait));
        true
    }

    /// The idle wait ran out (`cfq_idle_slice_timer`).
    fn idle_timer(&mut self, now: u64) {
        self.idle_until = None;
        let Some(q) = self.active else { return };
        let cq = &mut self.queues[q];
        if cq.slice_end.is_some_and(|e| now > e) || cq.sort.is_empty() {
            self.slice_expired();
        } else {
            cq.must_dispatch = true;
        }
    }

    /// The queue to dispatch from, if any (`cfq_select_queue`).
    fn select_queue(&mut self, now: u64) -> Option<usize> {
        let Some(q) = self.active else { return self.set_active_queue() };
        let cq = &self.queues[q];
        let expired = !cq.must_dispatch && cq.slice_end.is_some_and(|e| now > e);
        if !expired {
            if !cq.sort.is_empty() {
                return Some(q);
            }
            if cq.dispatched() > 0 {
                // Wait for its requests in flight before giving the device to another queue.
                return None;
            }
            if cq.class_sync() && (self.idle_until.is_some() || self.arm_slice_timer(q, now)) {
                return None;
            }
        }
        self.slice_expired();
        self.set_active_queue()
    }

    /// The request `q` serves next: an expired one (once per slice), else the nearest.
    fn next_in(&mut self, q: usize, now: u64) -> super::queue::Id {
        let expire = if self.queues[q].class_sync() { self.p.fifo_expire_sync } else { self.p.fifo_expire_async };
        let cq = &mut self.queues[q];
        if !cq.fifo_expired {
            if let Some(old) = cq.sort.oldest() {
                if now > cq.sort.get(old).arrival_ns.saturating_add(expire) {
                    cq.fifo_expired = true;
                    return old;
                }
            }
        }
        elevator::choose(&cq.sort, self.head, self.back_max_blocks, self.p.back_seek_penalty).expect("queue has requests")
    }

    /// One dispatch round of queue `q` (`__cfq_dispatch_requests`).
    fn dispatch_round(&mut self, q: usize, now: u64) {
        let mut n = 0;
        loop {
            let id = self.next_in(q, now);
            let r = self.queues[q].sort.remove(id);
            self.queues[q].on_dispatch[is_sync(&r) as usize] += 1;
            if self.queues[q].sort.is_empty() && self.queues[q].on_rr {
                self.del_rr(q);
            }
            self.head = Head::after(&r);
            self.ready.push_back(r);
            self.dispatch_slice += 1;
            n += 1;
            self.active_pid.get_or_insert(r.pid);
            if self.queues[q].sort.is_empty() || n >= self.p.quantum {
                break;
            }
        }
        let cq = &mut self.queues[q];
        if cq.slice_end.is_none() {
            let slice = if cq.sync() { self.p.slice_sync } else { self.p.slice_async };
            cq.slice_end = Some(now.saturating_add(slice));
        }
        let max_rq = 8 * self.p.slice_async_rq;
        if (!cq.sync() && self.dispatch_slice >= max_rq) || !cq.idle_window {
            self.slice_expired();
        }
    }

    /// Fills the dispatch list (`cfq_dispatch_requests`).
    fn dispatch_requests(&mut self, now: u64) {
        let mut prev = None;
        while let Some(q) = self.select_queue(now) {
            if prev == Some(q) {
                break;
            }
            let cq = &mut self.queues[q];
            cq.must_dispatch = false;
            cq.wait_request = false;
            self.idle_until = None;
            self.dispatch_round(q, now);
            if self.queues[q].idle_window && self.active.is_some() {
                break;
            }
            prev = Some(q);
        }
    }

    /// A sync request of process `pid` arrived: its think time, seek distance and idle window
    /// (`cfq_rq_enqueued` with `cfq_update_idle_window`).
    fn note_sync_request(&mut self, q: usize, r: &IoRequest, now: u64) {
        let cap = 2 * self.p.slice_idle;
        let start = self.limits.sectors(r.block);
        let end = self.limits.sectors(r.end());
        let (slice_idle, hw_tag) = (self.p.slice_idle, self.hw_tag);
        let pr = self.process(r.pid, now);
        pr.hist.add_think(now.saturating_sub(pr.last_end_request).min(cap));
        pr.hist.add_seek(start.abs_diff(pr.last_request_pos));
        pr.last_request_pos = end;
        let seeky = pr.hist.seek_mean > SEEKY_SECTORS;
        let think = pr.hist.think_valid().then_some(pr.hist.ttime_mean);
        let cq = &mut self.queues[q];
        if slice_idle == 0 || (hw_tag && seeky) {
            cq.idle_window = false;
        } else if let Some(t) = think {
            cq.idle_window = t <= slice_idle;
        }
    }
}

impl Scheduler for Cfq {
    fn name(&self) -> String {
        let p = &self.p;
        let s = format!(
            "cfq:quantum={},fifo_expire_sync={},fifo_expire_async={},slice_sync={},slice_async={},slice_async_rq={},slice_idle={},back_seek_max={}KiB,back_seek_penalty={}",
            p.quantum,
            duration_text(p.fifo_expire_sync),
            duration_text(p.fifo_expire_async),
            duration_text(p.slice_sync),
            duration_text(p.slice_async),
            p.slice_async_rq,
            duration_text(p.slice_idle),
            p.back_seek_max / 1024,
            p.back_seek_penalty
        );
        super::with_merge_scope(s, self.limits.merge == MergeScope::Process)
    }

    fn add(&mut self, req: IoRequest, now_ns: u64) {
        let q = self.queue_of(key_of(&req));
        self.process(req.pid, now_ns);
        let before = self.queues[q].sort.len();
        self.queues[q].sort.add(req);
        self.held = self.held + self.queues[q].sort.len() - before;
        if !self.queues[q].on_rr {
            self.queues[q].on_rr = true;
            self.busy_queues += 1;
            self.resort(q);
        }
        if !is_sync(&req) {
            // The process being waited for wrote instead: stop waiting for it.
            if self.active_pid == Some(req.pid) && self.idle_until.is_some() {
                self.slice_expired();
            }
            return;
        }
        self.note_sync_request(q, &req, now_ns);
        if self.active == Some(q) && self.queues[q].wait_request {
            // The request the active queue idled for: dispatch it even if the slice ran out.
            self.queues[q].must_dispatch = true;
            self.idle_until = None;
        }
    }

    fn dispatch(&mut self, now_ns: u64) -> Option<IoRequest> {
        if self.ready.is_empty() {
            if self.busy_queues == 0 {
                return None;
            }
            if self.idle_until.is_some_and(|t| now_ns >= t) {
                self.idle_timer(now_ns);
            }
            self.dispatch_requests(now_ns);
        }
        let r = self.ready.pop_front()?;
        self.held -= 1;
        self.in_driver += 1;
        if self.in_driver > HW_TAG_DEPTH {
            self.hw_tag = true;
        }
        Some(r)
    }

    fn queued(&self) -> usize {
        self.held
    }

    fn merges(&self) -> u64 {
        self.queues.iter().map(|q| q.sort.merges()).sum()
    }
    fn take_queued(&mut self) -> Option<Vec<IoRequest>> {
        // The dispatch list first (CFQ chose those), then every process queue.
        let mut v: Vec<IoRequest> = self.ready.drain(..).collect();
        for q in &mut self.queues {
            v.extend(q.sort.take_all());
        }
        self.held = 0;
        Some(super::oldest_first(v))
    }

    fn wake_at(&self) -> Option<u64> {
        self.idle_until
    }

    /// The kernel's `cfq_exit_cfqq` (2.6.20): when a task's I/O context goes away, its queue's
    /// slice ends if it is the active one, so CFQ does not idle for a process that has exited
    /// (`find` forking a `cat` per file would otherwise leave the disk idle `slice_idle` after
    /// every file). Requests of its still queued are served in turn like any queue's.
    fn process_exit(&mut self, pid: u32, _now_ns: u64) {
        if self.active.is_some_and(|q| self.queues[q].key == Key::Sync(pid)) {
            self.slice_expired();
        }
    }

    fn completed(&mut self, req: &IoRequest, now_ns: u64) {
        let sync = is_sync(req);
        let Some(&q) = self.index.get(&key_of(req)) else { return };
        self.in_driver = self.in_driver.saturating_sub(1);
        let cq = &mut self.queues[q];
        cq.on_dispatch[sync as usize] = cq.on_dispatch[sync as usize].saturating_sub(1);
        if cq.dispatched() == 0 && cq.on_rr {
            self.resort(q);
        }
        if sync {
            self.process(req.pid, now_ns).last_end_request = now_ns;
        }
        if self.active == Some(q) {
            let cq = &self.queues[q];
            if cq.slice_end.is_some_and(|e| now_ns > e) {
                self.slice_expired();
            } else if sync && cq.sort.is_empty() && cq.dispatched() == 0 {
                self.arm_slice_timer(q, now_ns);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::Cause;

    fn limits() -> SchedLimits {
        SchedLimits::new(128, 4096)
    }

    use crate::sched::{serve_one, test_read as rd};

    fn cfq(p: CfqParams) -> Cfq {
        Cfq::new(limits(), p)
    }

    fn serve(s: &mut Cfq, now: u64, service: u64) -> Option<(IoRequest, u64)> {
        serve_one(s, now, service)
    }

    #[test]
    fn slices_expire_and_rotate_round_robin() {
        // Three processes with plenty of requests, 10 ms per request, no idling needed (they
        // never run dry): each holds the device for its 100 ms slice, then the next one.
        let mut s = cfq(CfqParams::default());
        for pid in 1..=3 {
            for i in 0..40 {
                s.add(rd(pid, pid as u64 * 100_000 + 2 * i, 0), 0);
            }
        }
        let t = 0;
        let mut order = Vec::new();
        for (r, _) in crate::sched::serve_all(&mut s, t, 10 * MS) {
            order.push(r.pid);
        }
        // Runs of one pid, in round-robin order 1, 2, 3, 1, ...
        let mut runs: Vec<(u32, usize)> = Vec::new();
        for p in order {
            match runs.last_mut() {
                Some((q, n)) if *q == p => *n += 1,
                _ => runs.push((p, 1)),
            }
        }
        let pids: Vec<u32> = runs.iter().map(|r| r.0).collect();
        assert_eq!(&pids[..6], &[1, 2, 3, 1, 2, 3], "{runs:?}");
        // A 100 ms slice at 10 ms a request, in rounds of 4: the third round starts at 80 ms,
        // the completion at 110 ms ends the slice, and the round's last request, already in
        // the dispatch list, is still served: 12 requests.
        assert!(runs[..3].iter().all(|r| r.1 == 12), "{runs:?}");
    }

    /// The kernel ends the slice of an exited process's queue: no idling for it.
    #[test]
    fn an_exit_ends_the_idle_wait_for_the_process() {
        let mut s = cfq(CfqParams::default());
        s.add(rd(1, 0, 0), 0);
        s.add(rd(2, 500_000, 0), 0);
        let (r, t) = serve(&mut s, 0, MS).unwrap();
        assert_eq!(r.pid, 1);
        assert_eq!(s.dispatch(t), None, "idling for process 1");
        // Another process's exit changes nothing.
        s.process_exit(3, t);
        assert_eq!(s.dispatch(t), None);
        s.process_exit(1, t);
        assert_eq!(s.wake_at(), None);
        assert_eq!(s.dispatch(t).map(|r| r.pid), Some(2), "served at once after the exit");
    }

    #[test]
    fn idling_waits_for_the_same_process_then_gives_up() {
        let mut s = cfq(CfqParams::default());
        s.add(rd(1, 0, 0), 0);
        s.add(rd(2, 500_000, 0), 0);
        let (r, t) = serve(&mut s, 0, MS).unwrap();
        assert_eq!(r.pid, 1);
        // Process 1's queue is empty: CFQ idles for it instead of serving process 2.
        assert_eq!(s.dispatch(t), None);
        assert_eq!(s.wake_at(), Some(t + 8 * MS));
        // Process 1's next request within the wait is served at once.
        s.add(rd(1, 1, t + 2 * MS), t + 2 * MS);
        let (r, t) = serve(&mut s, t + 2 * MS, MS).unwrap();
        assert_eq!((r.pid, r.block), (1, 1));
        // Idle again; this time process 1 stays silent: at the end of the wait, process 2.
        assert_eq!(s.dispatch(t), None);
        assert_eq!(s.dispatch(t + 7 * MS), None);
        let r = s.dispatch(t + 8 * MS).unwrap();
        assert_eq!(r.pid, 2);
        // With slice_idle = 0 there is no wait.
        let mut s = cfq(CfqParams { slice_idle: 0, ..CfqParams::default() });
        s.add(rd(1, 0, 0), 0);
        s.add(rd(2, 500_000, 0), 0);
        let (_, t) = serve(&mut s, 0, MS).unwrap();
        assert_eq!(s.dispatch(t).unwrap().pid, 2);
    }

    /// Where process 1's own read at block 10, queued far behind (more than back_seek_max) a
    /// sequential run of 20 of its reads, is served.
    fn position_of_far_request(p: CfqParams) -> usize {
        crate::sched::far_read_position(&mut cfq(p), 1, 200_000, 20)
    }

    #[test]
    fn fifo_expiry_forces_an_old_request() {
        // Without expiry (10 s) the far request comes last.
        assert_eq!(position_of_far_request(CfqParams { fifo_expire_sync: 10_000 * MS, ..CfqParams::default() }), 20);
        // With 125 ms it goes first in the first dispatch round after it expired: rounds of 4
        // start at 1, 41, 81, 121 and 161 ms; at 161 ms it has waited 160 ms.
        assert_eq!(position_of_far_request(CfqParams::default()), 16);
    }

    #[test]
    fn quantum_limits_one_round_and_without_idling_queues_alternate() {
        // slice_idle = 0: no idle window, so a queue's slice ends after each dispatch round of
        // `quantum` requests and the queues alternate in rounds of 4 (or 2 with quantum=2).
        for quantum in [4u32, 2] {
            let mut s = cfq(CfqParams { slice_idle: 0, quantum, ..CfqParams::default() });
            for pid in 1..=2 {
                for i in 0..8 {
                    s.add(rd(pid, pid as u64 * 100_000 + 2 * i, 0), 0);
                }
            }
            let t = 0;
            let mut order = Vec::new();
            for (r, _) in crate::sched::serve_all(&mut s, t, MS) {
                order.push(r.pid);
            }
            let q = quantum as usize;
            let want: Vec<u32> = (0..16).map(|i| if (i / q) % 2 == 0 { 1 } else { 2 }).collect();
            assert_eq!(order, want, "quantum {quantum}");
        }
    }

    #[test]
    fn async_writes_share_one_queue_and_reads_do_not_merge_across_processes() {
        let mut s = cfq(CfqParams::default());
        let w = |pid, block| IoRequest { op: Op::Write, device: 0, block, blocks: 1, sync: false, cause: Cause::Writeback, arrival_ns: 0, pid };
        s.add(w(1, 10), 0);
        s.add(w(2, 11), 0);
        assert_eq!((s.queued(), s.merges()), (1, 1));
        s.add(rd(1, 50, 0), 0);
        s.add(rd(2, 51, 0), 0);
        assert_eq!((s.queued(), s.merges()), (3, 1));
    }
}
