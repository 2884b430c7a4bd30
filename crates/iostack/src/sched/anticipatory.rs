//! anticipatory (alias `as`): Linux's anticipatory scheduler, as in block/as-iosched.c of Linux
//! 2.6.20 (defaults checked in that file: `default_read_expire` HZ/8, `default_write_expire`
//! HZ/4, `default_read_batch_expire` HZ/2, `default_write_batch_expire` HZ/8,
//! `default_antic_expire` HZ/150, i.e. 6 ms at HZ = 1000; and Documentation/block/as-iosched.txt).
//!
//! # Deadline batches
//!
//! Requests are kept in two classes, synchronous (every read, and the writes a process waits
//! for: Linux 2.6's `rq_is_sync`) and asynchronous (write-back), each sorted by block and in
//! arrival order. The scheduler serves batches of one class: a read batch lasts
//! `read_batch_expire` (500 ms, counted from the completion of its first request), a write batch
//! `write_batch_expire` (125 ms) or `write_batch_count` requests, a count the scheduler tunes
//! after each write batch (halved or decremented when the batch overran its time, doubled or
//! incremented when it finished early; it starts at write_batch_expire / 10 ms = 12). When a
//! batch expires and the other class has requests, the other class gets the next batch; the
//! switch waits until the old batch's requests have completed. Within a batch the next request
//! is the nearest in the one-way elevator of [`super::elevator`] (back seeks of up to 512 MiB at
//! twice their cost), except that a request older than its class's expiry (`read_expire`
//! 125 ms, `write_expire` 250 ms) is served first; the check is made at most once per expiry
//! interval, so that many expired requests do not turn into a storm of seeks.
//!
//! # Anticipation
//!
//! After dispatching a synchronous request, the scheduler remembers its process. In a read batch,
//! instead of dispatching a request of another process, it may wait for that process's next
//! request: first until the remembered request completes, then up to `antic_expire` (6 ms) from
//! that completion. The wait ends early (and the chosen request is dispatched) when:
//!
//! - the remembered process issues a request, or has one queued already;
//! - a synchronous request arrives that is "close" to where the last one ended: within 4 MiB
//!   ahead or 2 MiB behind at first, the window doubling with every millisecond waited, or
//!   nearer than the remembered process's mean seek distance (a close request from another
//!   process also counts as that process's history: cooperating processes);
//! - the remembered process's mean think time (the time from a request's completion to its next
//!   request, as a decaying mean) exceeds `antic_expire`, so waiting would not pay off;
//! - the remembered process has exited, and lately the waits for exited processes mostly ran
//!   out without a close request of another process saving them (`exit_no_coop`, a decaying
//!   share, over one half); or it is on its first request and, lately, processes waited for on
//!   their first request mostly exited or ran out (`exit_prob`), so that the product of the two
//!   shares is over one half: short-lived processes such as a `cat` per file are soon no longer
//!   waited for;
//! - `antic_expire` has passed since the completion.
//!
//! A request of another class, or an expired read, is served without waiting. A process seen
//! for the first time is judged by the means of the processes seen before it.
//!
//! # Differences from the kernel
//!
//! - A process's exit is known from the trace's `exit` events (`Scheduler::process_exit`); a
//!   process whose trace simply ended is waited for until `antic_expire` like any other.
//! - A dispatched request goes straight to the device, so the kernel's count of a process's
//!   requests on the dispatch list but not yet started (`nr_dispatched` of `as_io_context`) is
//!   always zero and left out.
//! - The next request is chosen at dispatch time from the end of the last dispatched request of
//!   the class, rather than cached in advance.

use super::history::IoHistory;
use super::queue::{Head, Id, RequestQueue};
use super::{duration_text, elevator, IoRequest, MergeScope, SchedInfo, SchedLimits, Scheduler};

pub const INFO: SchedInfo = SchedInfo {
    name: "anticipatory",
    aliases: &["as"],
    summary: "Linux 2.6 anticipatory: read/write batches, waits 6ms after a read for the same process",
    build: |limits: SchedLimits, spec| {
        let d = AsParams::default();
        let p = AsParams {
            read_expire: spec.duration_ns("read_expire", d.read_expire)?,
            write_expire: spec.duration_ns("write_expire", d.write_expire)?,
            read_batch_expire: spec.duration_ns("read_batch_expire", d.read_batch_expire)?,
            write_batch_expire: spec.duration_ns("write_batch_expire", d.write_batch_expire)?,
            antic_expire: spec.duration_ns("antic_expire", d.antic_expire)?,
        };
        Ok(Box::new(Anticipatory::new(limits, p)))
    },
};

/// The anticipatory scheduler's tunables (the kernel's sysfs names), in ns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AsParams {
    pub read_expire: u64,
    pub write_expire: u64,
    pub read_batch_expire: u64,
    pub write_batch_expire: u64,
    pub antic_expire: u64,
}

const MS: u64 = 1_000_000;

impl Default for AsParams {
    /// Linux 2.6.20's defaults at HZ = 1000.
    fn default() -> Self {
        AsParams {
            read_expire: 125 * MS,
            write_expire: 250 * MS,
            read_batch_expire: 500 * MS,
            write_batch_expire: 125 * MS,
            antic_expire: 6 * MS,
        }
    }
}

const ASYNC: usize = 0;
const SYNC: usize = 1;
/// The longest back seek the elevator takes (`MAXBACK`: 1024 * 1024 sectors), in bytes.
const MAXBACK_BYTES: u64 = 1024 * 1024 * 512;
const BACK_PENALTY: u64 = 2;
/// Longest think time recorded (`MAX_THINKTIME`, HZ/50).
const MAX_THINKTIME: u64 = 20 * MS;
/// The close window with no waiting yet, in sectors (4 MiB ahead; half of it behind).
const CLOSE_SECTORS: u64 = 8192;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Antic {
    /// Not anticipating.
    Off,
    /// Waiting for the remembered process's request to complete.
    WaitReq,
    /// Its request completed; waiting up to antic_expire for its next one.
    WaitNext,
    /// Gave up or found a candidate; dispatch the next request.
    Finished,
}

/// What the scheduler knows of a process (the kernel's `as_io_context`).
#[derive(Default)]
struct Process {
    hist: IoHistory,
    /// Its requests queued here (after merging).
    queued: u32,
    /// Has issued a synchronous request.
    started: bool,
    /// Has had a synchronous request completed.
    running: bool,
    /// Has exited (the kernel's `AS_TASK_RUNNING` cleared).
    exited: bool,
    last_end_request: u64,
    /// End of its last synchronous request, in sectors.
    last_request_pos: u64,
}

pub struct Anticipatory {
    p: AsParams,
    limits: SchedLimits,
    back_max_blocks: u64,
    /// Asynchronous (0) and synchronous (1) requests.
    queues: [RequestQueue; 2],
    last: [Head; 2],
    last_check_fifo: [u64; 2],
    batch_dir: usize,
    current_batch_expires: u64,
    /// Switching class: waiting for the old batch's requests to complete.
    changed_batch: bool,
    /// A read batch whose time starts when its first request completes.
    new_batch: bool,
    write_batch_count: u32,
    current_write_count: u32,
    write_batch_idled: bool,
    antic: Antic,
    antic_start: u64,
    /// The process of the last dispatched synchronous request.
    io_context: Option<u32>,
    /// A request of `io_context` completed since.
    ioc_finished: bool,
    /// Requests dispatched and not completed.
    nr_dispatched: u32,
    /// Mean think time and seek of processes on their first request (fixed point, x256).
    new_ttime_total: u64,
    new_ttime_mean: u64,
    new_seek_total: u64,
    new_seek_mean: u64,
    /// How often a process waited for had no think time yet because it exited or timed out,
    /// and how often an exited one was not saved by a close request of another (fixed point,
    /// 256 = always; the kernel's `exit_prob` and `exit_no_coop`).
    exit_prob: u64,
    exit_no_coop: u64,
    processes: rustc_hash::FxHashMap<u32, Process>,
}

impl Anticipatory {
    pub fn new(limits: SchedLimits, p: AsParams) -> Self {
        Anticipatory {
            p,
            limits,
            back_max_blocks: MAXBACK_BYTES / limits.block_bytes.max(1),
            queues: [RequestQueue::with_limits(&limits), RequestQueue::with_limits(&limits)],
            last: [Head::default(); 2],
            last_check_fifo: [0; 2],
            batch_dir: ASYNC,
            current_batch_expires: p.read_batch_expire,
            changed_batch: false,
            new_batch: false,
            write_batch_count: ((p.write_batch_expire / (10 * MS)) as u32).max(2),
            current_write_count: 0,
            write_batch_idled: false,
            antic: Antic::Off,
            antic_start: 0,
            io_context: None,
            ioc_finished: false,
            nr_dispatched: 0,
            new_ttime_total: 0,
            new_ttime_mean: 0,
            new_seek_total: 0,
            new_seek_mean: 0,
            exit_prob: 0,
            exit_no_coop: 0,
            processes: Default::default(),
        }
    }

    fn expire(&self, dir: usize) -> u64 {
        if dir == SYNC {
            self.p.read_expire
        } else {
            self.p.write_expire
        }
    }

    fn batch_expire(&self, dir: usize) -> u64 {
        if dir == SYNC {
            self.p.read_batch_expire
        } else {
            self.p.write_batch_expire
        }
    }

    /// Records a synchronous request `r` in the history of process `pid` (`as_update_iohist`;
    /// `pid` differs from `r.pid` when a close request of another process counts for it).
    fn update_history(&mut self, pid: u32, r: &IoRequest, now: u64) {
        let start = self.limits.sectors(r.block);
        let end = self.limits.sectors(r.end());
        let pr = self.processes.entry(pid).or_default();
        if pr.running || pr.started {
            let think = if pr.running && pr.queued == 0 { now.saturating_sub(pr.last_end_request).min(MAX_THINKTIME) } else { 0 };
            let seek = start.abs_diff(pr.last_request_pos);
            if !pr.hist.has_think() {
                self.new_ttime_total = (7 * self.new_ttime_total + 256 * think) / 8;
                self.new_ttime_mean = self.new_ttime_total / 256;
                self.exit_prob = 7 * self.exit_prob / 8;
            }
            if !pr.hist.has_seek() {
                self.new_seek_total = (7 * self.new_seek_total).saturating_add(256 * seek) / 8;
                self.new_seek_mean = self.new_seek_total / 256;
            }
            pr.hist.add_think(think);
            pr.hist.add_seek(seek);
        }
        pr.last_request_pos = end;
        pr.started = true;
    }

    fn antic_expired(&self, now: u64) -> bool {
        now.saturating_sub(self.antic_start) >= self.p.antic_expire
    }

    /// Whether `r` is close to where the last request of the batch ended (`as_close_req`).
    fn close(&self, pid: u32, r: &IoRequest, now: u64) -> bool {
        let delay_ms = if self.antic == Antic::Off || !self.ioc_finished { 0 } else { now.saturating_sub(self.antic_start) / MS };
        let delta = if delay_ms == 0 {
            CLOSE_SECTORS
        } else if delay_ms <= 20 && delay_ms <= self.p.antic_expire / MS {
            CLOSE_SECTORS << delay_ms
        } else {
            return true;
        };
        let head = self.last[self.batch_dir];
        let s = if r.device == head.device {
            let (last, next) = (self.limits.sectors(head.block), self.limits.sectors(r.block));
            if last <= next + delta / 2 && next <= last + delta {
                return true;
            }
            last.abs_diff(next)
        } else {
            u64::MAX
        };
        match self.processes.get(&pid) {
            Some(pr) if pr.hist.has_seek() => pr.hist.seek_mean > s,
            _ => self.new_seek_mean > s,
        }
    }

    /// Whether to stop waiting for the remembered process, given candidate `r`
    /// (`as_can_break_anticipation`).
    fn can_break(&mut self, r: Option<&IoRequest>, now: u64) -> bool {
        let Some(pid) = self.io_context else { return true };
        if r.is_some_and(|r| r.pid == pid) {
            return true;
        }
        if self.ioc_finished && self.antic_expired(now) {
            return true;
        }
        let (queued, think, exited) = match self.processes.get(&pid) {
            Some(pr) => (pr.queued, pr.hist.has_think().then_some(pr.hist.ttime_mean), pr.exited),
            None => (0, None, false),
        };
        if queued > 0 {
            return true;
        }
        if let Some(r) = r {
            if super::cfq::is_sync(r) && self.close(pid, r, now) {
                // A close request of another process: count it as the remembered one's.
                if exited {
                    if think.is_none() {
                        self.exit_prob_up();
                    }
                    self.exit_no_coop = 7 * self.exit_no_coop / 8;
                }
                self.update_history(pid, r, now);
                return true;
            }
        }
        if exited {
            if think.is_none() {
                self.exit_prob_up();
            }
            if self.exit_no_coop > 128 {
                return true;
            }
        }
        match think {
            Some(mean) => mean > self.p.antic_expire,
            // A process on its first request: judged by the processes before it, and not waited
            // for when new processes have mostly exited unsaved.
            None => self.new_ttime_mean > self.p.antic_expire || self.exit_prob * self.exit_no_coop > 128 * 256,
        }
    }

    /// A process waited for had no think time yet (`ttime_samples == 0`): it exited or timed out
    /// on its first request.
    fn exit_prob_up(&mut self) {
        self.exit_prob = (7 * self.exit_prob + 256) / 8;
    }

    /// The wait for the remembered process ran out (`as_antic_timeout`).
    fn antic_timed_out(&mut self) {
        let Some(pid) = self.io_context else { return };
        let (no_think, exited) = self.processes.get(&pid).map_or((true, false), |pr| (!pr.hist.has_think(), pr.exited));
        if no_think {
            self.exit_prob_up();
        }
        if exited {
            self.exit_no_coop = (7 * self.exit_no_coop + 256) / 8;
        }
    }

    fn can_anticipate(&mut self, r: Option<Id>, now: u64) -> bool {
        if self.io_context.is_none() || self.antic == Antic::Finished {
            return false;
        }
        let r = r.map(|id| *self.queues[self.batch_dir].get(id));
        !self.can_break(r.as_ref(), now)
    }

    fn batch_expired(&self, now: u64) -> bool {
        if self.changed_batch || self.new_batch {
            return false;
        }
        now > self.current_batch_expires || (self.batch_dir == ASYNC && self.current_write_count == 0)
    }

    /// Whether the oldest request of `dir` expired, checked at most once per expiry interval.
    fn fifo_expired(&mut self, dir: usize, now: u64) -> bool {
        if now.saturating_sub(self.last_check_fifo[dir]) < self.expire(dir) {
            return false;
        }
        self.last_check_fifo[dir] = now;
        let q = &self.queues[dir];
        q.oldest().is_some_and(|id| now > q.get(id).arrival_ns.saturating_add(self.expire(dir)))
    }

    fn next_rq(&self, dir: usize) -> Option<Id> {
        elevator::choose(&self.queues[dir], self.last[dir], self.back_max_blocks, BACK_PENALTY)
    }

    /// Tunes the write batch size after a write batch (`update_write_batch`).
    fn update_write_batch(&mut self, now: u64) {
        let batch = self.p.write_batch_expire as i128;
        let write_time = (now as i128 - self.current_batch_expires as i128 + batch).max(0);
        let c = &mut self.write_batch_count;
        if write_time > batch && !self.write_batch_idled {
            if write_time > 3 * batch {
                *c /= 2;
            } else {
                *c = c.saturating_sub(1);
            }
        } else if write_time < batch && self.current_write_count == 0 {
            if batch > 3 * write_time {
                *c = c.saturating_mul(2);
            } else {
                *c += 1;
            }
        }
        *c = (*c).max(1);
    }

    fn move_to_dispatch(&mut self, dir: usize, id: Id) -> IoRequest {
        self.antic = Antic::Off;
        let r = self.queues[dir].remove(id);
        self.last[dir] = Head::after(&r);
        if dir == SYNC {
            self.io_context = Some(r.pid);
        } else {
            self.io_context = None;
            self.current_write_count = self.current_write_count.saturating_sub(1);
        }
        self.ioc_finished = false;
        if let Some(pr) = self.processes.get_mut(&r.pid) {
            pr.queued = pr.queued.saturating_sub(1);
        }
        self.nr_dispatched += 1;
        r
    }
}

impl Scheduler for Anticipatory {
    fn name(&self) -> String {
        let p = &self.p;
        let s = format!(
            "anticipatory:read_expire={},write_expire={},read_batch_expire={},write_batch_expire={},antic_expire={}",
            duration_text(p.read_expire),
            duration_text(p.write_expire),
            duration_text(p.read_batch_expire),
            duration_text(p.write_batch_expire),
            duration_text(p.antic_expire)
        );
        super::with_merge_scope(s, self.limits.merge == MergeScope::Process)
    }

    fn add(&mut self, req: IoRequest, now_ns: u64) {
        let dir = super::cfq::is_sync(&req) as usize;
        if dir == SYNC {
            self.update_history(req.pid, &req, now_ns);
        }
        let before = self.queues[dir].len();
        self.queues[dir].add(req);
        let after = self.queues[dir].len();
        if after > before {
            self.processes.entry(req.pid).or_default().queued += 1;
        } else if let Some(gone) = self.queues[dir].take_absorbed() {
            if let Some(pr) = self.processes.get_mut(&gone) {
                pr.queued = pr.queued.saturating_sub(1);
            }
        }
        if matches!(self.antic, Antic::WaitReq | Antic::WaitNext) && self.can_break(Some(&req), now_ns) {
            self.antic = Antic::Finished;
        }
    }

    fn dispatch(&mut self, now_ns: u64) -> Option<IoRequest> {
        let now = now_ns;
        if self.antic == Antic::WaitNext && self.antic_expired(now) {
            self.antic = Antic::Finished;
            self.antic_timed_out();
        }
        let reads = !self.queues[SYNC].is_empty();
        let writes = !self.queues[ASYNC].is_empty();
        if self.batch_dir == ASYNC && !reads && (self.current_write_count == 0 || !writes) {
            self.write_batch_idled = true;
        }
        if !(reads || writes) || matches!(self.antic, Antic::WaitReq | Antic::WaitNext) || self.changed_batch {
            return None;
        }
        // The request to dispatch, and whether it was picked because its class's oldest expired.
        let mut pick: Option<Id> = None;
        let mut forced = false;
        if !(reads && writes && self.batch_expired(now)) {
            // The batch goes on (or only one class has requests).
            let rq = self.next_rq(self.batch_dir);
            if self.batch_dir == SYNC && self.p.antic_expire > 0 {
                if self.fifo_expired(SYNC, now) {
                    forced = true;
                } else if self.can_anticipate(rq, now) {
                    if self.antic == Antic::Off {
                        self.antic = if self.ioc_finished { Antic::WaitNext } else { Antic::WaitReq };
                    }
                    return None;
                }
            }
            if !forced {
                if let Some(id) = rq {
                    if reads && !writes {
                        self.current_batch_expires = now + self.p.read_batch_expire;
                    }
                    pick = Some(id);
                }
            }
        }
        if pick.is_none() && !forced {
            // Choose the class of a new batch: reads, unless a read batch just ended and
            // writes wait.
            if reads && !(writes && self.batch_dir == SYNC) {
                if self.batch_dir == ASYNC {
                    self.changed_batch = true;
                }
                self.batch_dir = SYNC;
                pick = self.queues[SYNC].oldest();
                self.last_check_fifo[SYNC] = now;
            } else {
                if self.batch_dir == SYNC {
                    self.changed_batch = true;
                    self.new_batch = false;
                }
                self.batch_dir = ASYNC;
                self.current_write_count = self.write_batch_count;
                self.write_batch_idled = false;
                pick = self.next_rq(ASYNC);
            }
        }
        let dir = self.batch_dir;
        if forced || self.fifo_expired(dir, now) {
            pick = self.queues[dir].oldest();
        }
        if self.changed_batch {
            if self.nr_dispatched > 0 {
                // Start the new batch when the old one's requests have completed.
                return None;
            }
            if dir == ASYNC {
                self.current_batch_expires = now + self.p.write_batch_expire;
            } else {
                self.new_batch = true;
            }
            self.changed_batch = false;
        }
        let id = pick.expect("the batch's class has requests");
        Some(self.move_to_dispatch(dir, id))
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

    fn process_exit(&mut self, pid: u32, _now_ns: u64) {
        if let Some(pr) = self.processes.get_mut(&pid) {
            pr.exited = true;
        }
    }

    fn wake_at(&self) -> Option<u64> {
        (self.antic == Antic::WaitNext).then(|| self.antic_start.saturating_add(self.p.antic_expire))
    }

    fn completed(&mut self, req: &IoRequest, now_ns: u64) {
        let sync = super::cfq::is_sync(req);
        if self.changed_batch && self.nr_dispatched == 1 {
            self.changed_batch = false;
            if self.batch_dir == SYNC {
                self.new_batch = true;
            }
        }
        self.nr_dispatched = self.nr_dispatched.saturating_sub(1);
        if self.new_batch && (self.batch_dir == SYNC) == sync {
            self.update_write_batch(now_ns);
            self.current_batch_expires = now_ns + self.batch_expire(SYNC);
            self.new_batch = false;
        }
        if self.io_context == Some(req.pid) {
            self.antic_start = now_ns;
            self.ioc_finished = true;
            if self.antic == Antic::WaitReq {
                self.antic = Antic::WaitNext;
            }
        }
        if sync {
            let pr = self.processes.entry(req.pid).or_default();
            pr.running = true;
            pr.last_end_request = now_ns;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::Cause;
    use crate::trace::Op;

    use crate::sched::{serve_one, test_read as rd};

    fn wr(block: u64, t: u64) -> IoRequest {
        IoRequest { op: Op::Write, device: 0, block, blocks: 1, sync: false, cause: Cause::Writeback, arrival_ns: t, pid: 9 }
    }

    fn sched(p: AsParams) -> Anticipatory {
        Anticipatory::new(SchedLimits::new(128, 4096), p)
    }

    fn serve(s: &mut Anticipatory, now: u64, service: u64) -> Option<(IoRequest, u64)> {
        serve_one(s, now, service)
    }

    /// Process 1 read block 100 (completing at 1 ms); process 2's read far away is queued.
    fn after_one_read() -> (Anticipatory, u64) {
        let mut s = sched(AsParams::default());
        s.add(rd(1, 100, 0), 0);
        let (r, t) = serve(&mut s, 0, MS).unwrap();
        assert_eq!(r.pid, 1);
        s.add(rd(2, 900_000, 0), 0);
        (s, t)
    }

    #[test]
    fn anticipation_serves_a_close_request_of_the_same_process() {
        let (mut s, t) = after_one_read();
        // Process 2's far read waits: the scheduler anticipates process 1's next read.
        assert_eq!(s.dispatch(t), None);
        assert_eq!(s.wake_at(), Some(t + 6 * MS));
        s.add(rd(1, 101, t + 2 * MS), t + 2 * MS);
        assert_eq!(s.dispatch(t + 2 * MS).unwrap().block, 101);
    }

    #[test]
    fn anticipation_expires_after_antic_expire() {
        let (mut s, t) = after_one_read();
        assert_eq!(s.dispatch(t), None);
        assert_eq!(s.dispatch(t + 6 * MS - 1), None);
        assert_eq!(s.dispatch(t + 6 * MS).unwrap().pid, 2);
        // With antic_expire = 0 there is no waiting at all.
        let mut s = sched(AsParams { antic_expire: 0, ..AsParams::default() });
        s.add(rd(1, 100, 0), 0);
        let (_, t) = serve(&mut s, 0, MS).unwrap();
        s.add(rd(2, 900_000, 0), 0);
        assert_eq!(s.dispatch(t).unwrap().pid, 2);
    }

    #[test]
    fn a_close_request_of_another_process_ends_the_wait() {
        let (mut s, t) = after_one_read();
        assert_eq!(s.dispatch(t), None);
        // Process 3 reads right after block 100: close, dispatched without waiting further.
        s.add(rd(3, 104, t + MS), t + MS);
        assert_eq!(s.dispatch(t + MS).unwrap().pid, 3);
    }

    #[test]
    fn a_process_that_thinks_too_long_is_not_waited_for() {
        // Process 1 reads with 15 ms between a completion and its next read (over antic_expire).
        let mut s = sched(AsParams::default());
        let mut t = 0;
        for i in 0..6 {
            s.add(rd(1, 100 + 2 * i, t), t);
            let (_, done) = serve(&mut s, t, MS).unwrap();
            t = done + 15 * MS;
        }
        s.add(rd(2, 900_000, t), t);
        assert_eq!(s.dispatch(t).unwrap().pid, 2);
    }

    /// Processes that each read one block and exit (a `cat` per file), each followed by a far read
    /// of process 99: at first the scheduler waits antic_expire for each exited process; once
    /// the waits for exited processes have mostly run out unsaved (`exit_no_coop` over one half),
    /// it no longer waits for an exited process.
    #[test]
    fn exited_processes_are_soon_no_longer_waited_for() {
        let mut s = sched(AsParams::default());
        let mut t = 0;
        let mut waited = Vec::new();
        for i in 0..10u32 {
            let pid = 10 + i;
            s.add(rd(pid, 1000 * i as u64, t), t);
            // Served once any wait for process 99's next read has run out.
            let (r, done) = serve(&mut s, t + 6 * MS, MS).unwrap();
            assert_eq!(r.pid, pid);
            s.process_exit(pid, done);
            s.add(rd(99, 900_000 + i as u64, done), done);
            let (r, at) = match s.dispatch(done) {
                Some(r) => (r, done),
                None => {
                    // Waiting: the far read goes at the end of antic_expire.
                    assert_eq!(s.dispatch(done + 6 * MS - 1), None);
                    (s.dispatch(done + 6 * MS).unwrap(), done + 6 * MS)
                }
            };
            assert_eq!(r.pid, 99);
            waited.push(at > done);
            s.completed(&r, at + MS);
            t = at + MS;
        }
        // exit_no_coop after n timeouts: 32, 60, 84, 105, 123, 139 > 128.
        assert_eq!(waited, [true, true, true, true, true, true, false, false, false, false]);
    }

    /// Reads of one process (all queued) and writes, 10 ms each: the runs of reads and writes.
    fn batch_runs(p: AsParams) -> Vec<(bool, usize)> {
        let mut s = sched(p);
        for i in 0..200 {
            s.add(rd(1, 1000 + 2 * i, 0), 0);
            s.add(wr(500_000 + 2 * i, 0), 0);
        }
        let t = 0;
        let mut runs: Vec<(bool, usize)> = Vec::new();
        for (r, _) in crate::sched::serve_all(&mut s, t, 10 * MS) {
            let w = r.op.is_write();
            match runs.last_mut() {
                Some((x, n)) if *x == w => *n += 1,
                _ => runs.push((w, 1)),
            }
        }
        runs
    }

    #[test]
    fn read_and_write_batches_expire() {
        let runs = batch_runs(AsParams::default());
        // A read batch expires 500 ms after its first request completed (at 10 ms): reads are
        // dispatched at 0, 10, ..., 510 ms (the expiry is passed only after 510): 52. The write
        // batch then runs from 520 ms to its expiry at 645 ms: 13 writes (its count, 24 after
        // the first read batch's tuning, is not reached). And again.
        assert_eq!(&runs[..6], &[(false, 52), (true, 13), (false, 52), (true, 13), (false, 52), (true, 13)], "{runs:?}");
        // Longer batches, longer runs.
        let runs = batch_runs(AsParams { read_batch_expire: 1000 * MS, write_batch_expire: 250 * MS, ..AsParams::default() });
        assert!((100..=102).contains(&runs[0].1), "{runs:?}");
        assert!(runs[1].1 > 14, "{runs:?}");
    }

    /// Where process 2's read, queued at 1 ms more than 512 MiB behind a queued run of 40 reads
    /// of process 1, is served.
    fn position_of_far_read(p: AsParams) -> usize {
        crate::sched::far_read_position(&mut sched(p), 2, 400_000, 40)
    }

    #[test]
    fn fifo_expiry_forces_an_old_read() {
        assert_eq!(position_of_far_read(AsParams { read_expire: 10_000 * MS, ..AsParams::default() }), 40);
        // 125 ms: requests go out at 1, 11, 21, ... ms; the FIFO is checked once 125 ms have
        // passed since the batch began (at 0), at 131 ms, when the read queued at 1 ms has
        // waited 130 ms: it is the 14th request.
        assert_eq!(position_of_far_read(AsParams::default()), 13);
    }
}
