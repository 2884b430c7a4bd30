//! select: KDSim's window comparison choosing between two I/O schedulers while a workload runs.
//!
//! The KDSim paper (González-Férez, Piernas and Cortes, Computer Journal 59(10), 2016, §3 and
//! §7) presents its virtual disk as a framework to evaluate, on line, an alternative the system
//! is not running and to adopt it when it would do better; REDCAP's ADA (§4.1, `blk::ada`) is the
//! one use the paper builds. This module is the same machinery applied to the I/O scheduler:
//!
//! - The real device runs scheduler A (the first given). KDSim's virtual disk
//!   ([`crate::kdsim::virtual_disk`]) runs B on copies of every request entering the real
//!   scheduler (pid, read or write, blocks, synchronous or not), with the paper's shared, waiting
//!   and process queues and rules R1-R4, so that a process's next synchronous read enters B's
//!   queue only after its previous one completed *there*: the closed loop of the processes is
//!   played again under B, not replayed at A's pace. Each process has its own timeline there
//!   ([`Timeline`]): its next synchronous read enters at the virtual completion of the previous
//!   one plus the think time measured in the real system, so B sees the processes' requests when
//!   they would have issued them under B; the virtual disk runs only as far as no process can
//!   still hand it an earlier copy. Without it, CFQ's serial service starved the other processes'
//!   copies and deadline, played on them, looked as cheap as CFQ on sequential readers.
//! - Each read's time per block is summed over a window of N reads for each scheduler, both sides
//!   timed by the same table model so that like is compared with like (as ADA does, spec K5): on
//!   the real side from entering the scheduler to its dispatch plus the table's estimate of its
//!   I/O time (its size and its distance from the previous request the real device served); on
//!   the virtual side its service time there (insertion into the scheduler to completion). Reads
//!   only: writes leave the page cache behind the processes' backs (write-back), and a scheduler
//!   that holds them back on purpose (deadline's 5 s expiry, anticipatory's read batches) would
//!   be judged by a latency nobody waits for. The virtual disk still serves the writes, so the
//!   time they take from the reads is counted.
//! - The comparison is [`crate::kdsim::window::WindowComparator`]: after every N-th read the real
//!   device dispatched (`tumbling`) or after each once N have been (`sliding`), the scheduler not
//!   running is adopted when its sum is strictly smaller than the running one's (a tie keeps the
//!   running scheduler), once the virtual disk has completed a window of reads of its own since
//!   it started (before that its missing reads are the ones its scheduler keeps waiting longest). Each scheduler keeps its own window of values across switches, whichever
//!   disk produced them (B's come from the virtual disk until B runs on the real one).
//! - A switch replaces the real scheduler by a fresh instance of the other one
//!   ([`super::hand_over`]: the requests queued move to it oldest first, keeping their arrival
//!   times; requests already dispatched finish on the device and no scheduler is told of their
//!   completion), and the virtual disk by a fresh one playing a fresh instance of the one that
//!   was running, its table kept, so the virtual disk now plays the road not taken.
//!   Fresh instances, as Linux builds a new elevator when `/sys/block/*/queue/scheduler` is
//!   written: what a scheduler learnt about the processes (anticipatory's think times and seek
//!   distances, CFQ's idle windows) is learnt again.
//! - A switch is verified on the real device (`verify=on`, the default). The virtual disk plays
//!   the other scheduler on the stream the running one let through, which can flatter it: under
//!   CFQ the processes' reads arrive one process's run at a time, and deadline replayed on them
//!   looks as cheap as CFQ, though once deadline really runs the stream it shapes is not. So after
//!   a switch from A to B, B's first window of reads on the real device (its sum, as above) is
//!   compared with A's last window there before the switch (the sum the switch was decided on).
//!   If B's is larger, the controller switches back to A and holds A for a period during which no
//!   switch away from it is considered; the hold doubles with each revert (1, 2, 4, ... windows of
//!   N reads the real device dispatched) and returns to one window when a switch is confirmed
//!   (B's real window no larger), as a back-off does for a retried action whose outcome the
//!   estimate keeps mispredicting. No decision is taken while a switch awaits its verdict.
//! - The virtual disk's table starts from `table=PATH` (trained off line) or empty, and learns
//!   from every request the real device serves (its measured I/O time in the cell of its size and
//!   distance, applied at its completion: KDSim l.83).
//!
//! The controller is itself a [`Scheduler`] in the device's lane, so the engine's path is the
//! same with or without it and a run without it pays nothing; a block stage (REDCAP) above it is
//! unaffected. Readahead is selected by the same controller ([`crate::kdsim::controller`]) in
//! `prefetch::select`: a different readahead changes the request stream itself, so there a
//! shadow page cache produces the other setting's requests, not copies of the running stream.

use std::collections::{BTreeMap, VecDeque};

use super::{hand_over, IoRequest, SchedLimits, Scheduler};
use crate::device::table::{Head, TableModel};
use crate::device::SECTOR;
use crate::error::ConfigError;
use crate::kdsim::virtual_disk::{PartMatcher, VirtualDisk, VirtualRequest};
use crate::kdsim::controller::Controller;
use crate::kdsim::window::Check;
use crate::trace::Op;

/// The controller's settings (`--sched-select A,B[,window=N][,cadence=...][,table=PATH]`).
pub use crate::kdsim::controller::ControllerConfig as SelectConfig;
pub use crate::kdsim::controller::{Switch, Verdict, Verifier, WindowSums};

const OPTION: &str = "--sched-select";

/// Parses `A,B[,window=1000][,cadence=tumbling|sliding][,table=PATH][,margin=PCT][,verify=on|off]`
/// ([`ControllerConfig::parse`](crate::kdsim::controller::ControllerConfig::parse)). A
/// scheduler's own parameters follow it as in `--sched` (`deadline:read_expire=100ms,fifo_batch=8`).
pub fn parse(text: &str) -> Result<SelectConfig, ConfigError> {
    SelectConfig::parse(OPTION, "schedulers", "anticipatory,deadline", text)
}

/// A request on the real device.
#[derive(Debug, Clone)]
struct InFlight {
    req: IoRequest,
    dispatch_ns: u64,
    distance: u64,
    /// The scheduler instance that dispatched it (it alone may hear of its completion).
    instance: u32,
    /// The processes of the synchronous reads it serves (one entry per read).
    sync_pids: Vec<u32>,
}

/// One process's timeline on the virtual disk against the real one (see [`Select`]).
///
/// A process issues its next synchronous read when the previous one completed, after its own
/// think time. The virtual disk plays that loop under the other scheduler: the next read enters
/// it at the virtual completion of the previous one plus the think time measured in the real
/// system (the read's real arrival less the real completion of the previous one), so the
/// process's requests reach the other scheduler as soon as the process would have issued them
/// there, not when the running scheduler let it. `shift` is the virtual time less the real time
/// of the last synchronous read both have completed; every copy enters at its real arrival plus
/// the shift.
#[derive(Debug, Clone, Default)]
struct Timeline {
    /// Synchronous reads in the real scheduler or device.
    real_pending: u32,
    /// Of those, the ones issued before the virtual disk was rebuilt (it never saw them).
    unmatched_real: u32,
    /// Synchronous reads in the virtual disk.
    vd_pending: u32,
    /// Completion times of synchronous reads on the side that is ahead, awaiting the other's.
    real_done: VecDeque<u64>,
    vd_done: VecDeque<u64>,
    shift: i64,
    /// Copies held until the virtual disk completes the process's previous synchronous read
    /// (their real arrival beside them).
    held: VecDeque<(VirtualRequest, u64)>,
}

impl Timeline {
    /// The earliest virtual time at which this process may hand the virtual disk a copy not yet
    /// known, given the real time `now`; `None` when its next copy waits for the virtual disk.
    fn bound(&self, now: u64) -> Option<u64> {
        if !self.held.is_empty() || self.vd_pending > 0 {
            return None;
        }
        if self.real_pending > self.unmatched_real {
            // The virtual disk completed a read the real one has not: the next read comes after
            // its virtual completion at the earliest.
            return Some(self.vd_done.back().copied().unwrap_or(now));
        }
        Some(now.saturating_add_signed(self.shift))
    }

    /// Where a copy arriving for real at `arrival` enters the virtual disk.
    fn virtual_time(&self, arrival: u64) -> u64 {
        arrival.saturating_add_signed(self.shift)
    }
}

fn is_sync_read(op: Op, sync: bool) -> bool {
    op == Op::Read && sync
}

/// The controller: the running scheduler, the virtual disk playing the other.
pub struct Select {
    cfg: SelectConfig,
    limits: SchedLimits,
    page_bytes: u64,
    real: Box<dyn Scheduler>,
    /// Which of the two runs on the real device (0: A, 1: B).
    running: usize,
    /// Instances built so far for the real device (the current one's number).
    instance: u32,
    vd: VirtualDisk,
    /// The window comparison and its log (B the candidate, A the baseline).
    ctl: Controller,
    /// The real device's head, for the table's distance.
    head: Head,
    /// Reads in the real scheduler until dispatched, with their arrival, process and whether
    /// synchronous.
    queued_reads: PartMatcher<(u64, u32, bool)>,
    /// Each process's timeline on the virtual disk.
    timelines: BTreeMap<u32, Timeline>,
    /// Reads the virtual disk completed since it started, and its last completion's time.
    vd_reads: u64,
    vd_last_finish: u64,
    in_flight: Vec<InFlight>,
    last_finish: u64,
    /// Merges of the schedulers retired on the real device.
    retired_merges: u64,
    // Report.
    names: [String; 2],
    now: u64,
    reads: u64,
}

impl Select {
    /// The controller over `cfg`'s two schedulers (built with `limits`), its virtual disk timed
    /// by `table`, requests in pages of `page_bytes`. Refuses a scheduler that cannot hand over
    /// its queue.
    pub fn new(cfg: SelectConfig, limits: SchedLimits, table: TableModel, page_bytes: u64) -> Result<Select, ConfigError> {
        let mut names = [String::new(), String::new()];
        for (i, spec) in cfg.specs.iter().enumerate() {
            let mut s = super::build(spec, limits).map_err(|e| ConfigError::new(OPTION, format!("scheduler `{spec}`: {e}")))?;
            names[i] = s.name();
            if s.take_queued().is_none() {
                return Err(ConfigError::new(OPTION, format!("scheduler `{spec}` cannot hand its queue over to another")));
            }
        }
        let real = super::build(&cfg.specs[0], limits)?;
        let vd = VirtualDisk::new(super::build(&cfg.specs[1], limits)?, table, page_bytes);
        let ctl = Controller::new(cfg.clone())?;
        Ok(Select {
            limits,
            page_bytes,
            real,
            running: 0,
            instance: 0,
            vd,
            ctl,
            head: Head::default(),
            queued_reads: PartMatcher::default(),
            timelines: BTreeMap::new(),
            vd_reads: 0,
            vd_last_finish: 0,
            in_flight: Vec::new(),
            last_finish: 0,
            retired_merges: 0,
            names,
            now: 0,
            reads: 0,
            cfg,
        })
    }

    /// The spec of the scheduler on the real device now.
    pub fn running(&self) -> &str {
        &self.cfg.specs[self.running]
    }

    /// The switches so far.
    pub fn switches(&self) -> &[Switch] {
        self.ctl.switches()
    }

    /// The virtual time the virtual disk may run to at real time `now`: no process may hand it
    /// a copy before then (a process not seen yet may start at any real time from `now`).
    fn horizon(&self, now: u64) -> u64 {
        self.timelines.values().filter_map(|t| t.bound(now)).fold(now, u64::min)
    }

    /// Runs the virtual disk as far as the processes' timelines allow at real time `now`, one
    /// event at a time so that a read it completes lets its process's next copy in at the right
    /// virtual time, and records the reads it completed for the scheduler it plays.
    fn catch_up(&mut self, now: u64) {
        self.now = self.now.max(now);
        let mut stuck_at = None;
        loop {
            let h = self.horizon(now).max(self.vd.now());
            let t = match self.vd.next_event_ns() {
                // A dispatch due: run just past it (once; a scheduler that will not dispatch
                // waits for an arrival).
                Some(e) if e < h && e <= self.vd.now() && stuck_at != Some(self.vd.now()) => {
                    stuck_at = Some(self.vd.now());
                    self.vd.now() + 1
                }
                Some(e) if e < h && e > self.vd.now() => e,
                _ => h,
            };
            self.vd.advance(t);
            let done = self.take_virtual_completions();
            if t >= h && !done {
                break;
            }
        }
    }

    /// Records what the virtual disk completed; a synchronous read completed lets its process's
    /// held copies in. Whether anything completed.
    fn take_virtual_completions(&mut self) -> bool {
        let other = 1 - self.running;
        let done = self.vd.take_completed();
        for c in &done {
            self.vd_last_finish = c.finish_ns;
            if c.op != Op::Read {
                continue;
            }
            self.ctl.record(other, c.service_ns() as f64, c.blocks as u64);
            self.vd_reads += 1;
            if !c.sync {
                continue;
            }
            let pid = c.id as u32;
            let Some(t) = self.timelines.get_mut(&pid) else { continue };
            t.vd_pending = t.vd_pending.saturating_sub(1);
            match t.real_done.pop_front() {
                Some(real) => t.shift = c.finish_ns as i64 - real as i64,
                None => t.vd_done.push_back(c.finish_ns),
            }
            self.release(pid);
        }
        !done.is_empty()
    }

    /// Hands the virtual disk `pid`'s held copies up to its next synchronous read that must wait
    /// for the previous one.
    fn release(&mut self, pid: u32) {
        while let Some(t) = self.timelines.get_mut(&pid) {
            let Some(&(c, arrival)) = t.held.front() else { break };
            let sync = is_sync_read(c.op, c.sync);
            if sync && t.vd_pending > 0 {
                break;
            }
            t.held.pop_front();
            t.vd_pending += sync as u32;
            let at = t.virtual_time(arrival);
            self.enter(c, at);
        }
    }

    /// A copy enters the virtual disk at virtual time `at` (at the earliest its time now). One
    /// due at the instant of a completion after which the disk has not dispatched yet comes after
    /// that dispatch, as in the real system, where the device takes its next request when the
    /// previous one completes, before the process woken by it issues another.
    fn enter(&mut self, c: VirtualRequest, at: u64) {
        let now = self.vd.now();
        if at <= now && now == self.vd_last_finish && self.vd.next_event_ns() == Some(now) {
            self.vd.advance(now + 1);
        }
        let at = at.max(self.vd.now());
        self.vd.submit(c, at);
    }

    /// A copy of a request entering the real scheduler at `now` goes to its process's timeline.
    fn copy_arrives(&mut self, req: &IoRequest, now: u64) {
        let c = VirtualRequest { id: req.pid as u64, pid: req.pid, op: req.op, block: req.block, blocks: req.blocks, sync: req.sync, issued_behind: None, issued_queued: None, awaits_real: false };
        let sync = is_sync_read(req.op, req.sync);
        let t = self.timelines.entry(req.pid).or_default();
        t.real_pending += sync as u32;
        if !t.held.is_empty() || (sync && t.vd_pending > 0) {
            t.held.push_back((c, now));
            return;
        }
        t.vd_pending += sync as u32;
        let at = t.virtual_time(now);
        self.enter(c, at);
    }

    /// A synchronous read of `pid` completed on the real device at `now`.
    fn real_read_done(&mut self, pid: u32, now: u64) {
        let Some(t) = self.timelines.get_mut(&pid) else { return };
        t.real_pending = t.real_pending.saturating_sub(1);
        if t.unmatched_real > 0 {
            t.unmatched_real -= 1;
            return;
        }
        match t.vd_done.pop_front() {
            Some(v) => t.shift = v as i64 - now as i64,
            None => t.real_done.push_back(now),
        }
    }

    fn decide(&mut self, c: Check, now: u64) {
        // The virtual disk's side is judged on a full window of its own reads: until then the
        // reads it has not completed are the ones its scheduler keeps waiting longest (K4's
        // scaling from the mean would favour it), and what it has played is the start of its
        // timeline, gated by the copies the real system had issued.
        let young = self.vd_reads < self.cfg.window as u64;
        if self.ctl.decide(c, young, self.reads, now) {
            self.switch(now);
        }
    }

    /// The other scheduler takes the real device; the virtual disk plays the one that ran.
    fn switch(&mut self, now: u64) {
        let other = self.ctl.running();
        let mut next = super::build(&self.cfg.specs[other], self.limits).expect("built at the start");
        hand_over(&mut *self.real, &mut *next, now).expect("checked at the start");
        self.retired_merges += self.real.merges();
        self.real = next;
        self.instance += 1;
        // The virtual disk starts afresh with the scheduler that ran, from the copies arriving
        // from now on, its table kept: what it played so far was the other scheduler's timeline.
        let played = super::build(&self.cfg.specs[self.running], self.limits).expect("built at the start");
        let fresh = VirtualDisk::new(played, TableModel::new(1, 1).expect("a one-byte table"), self.page_bytes);
        *self.vd.table_mut() = std::mem::replace(&mut self.vd, fresh).into_table();
        self.vd_reads = 0;
        for t in self.timelines.values_mut() {
            *t = Timeline { real_pending: t.real_pending, unmatched_real: t.real_pending, ..Timeline::default() };
        }
        self.running = other;
    }
}

impl Scheduler for Select {
    fn name(&self) -> String {
        format!("select:{}|{},{}", self.cfg.specs[0], self.cfg.specs[1], self.cfg.describe())
    }

    fn add(&mut self, req: IoRequest, now_ns: u64) {
        self.catch_up(now_ns);
        self.copy_arrives(&req, now_ns);
        if req.op == Op::Read {
            self.reads += 1;
            self.queued_reads.add(Op::Read, req.block, req.blocks, (now_ns, req.pid, req.sync));
        }
        self.real.add(req, now_ns);
    }

    fn dispatch(&mut self, now_ns: u64) -> Option<IoRequest> {
        self.catch_up(now_ns);
        let r = self.real.dispatch(now_ns)?;
        let spp = self.page_bytes / SECTOR;
        let distance = self.head.advance(r.block * spp, r.blocks as u64 * spp);
        let (mut sync_pids, instance) = (Vec::new(), self.instance);
        if r.op == Op::Read {
            // Every read in the dispatched range: its wait here plus the table's estimate.
            let end = now_ns + self.vd.table().estimate(r.op, r.blocks as u64 * self.page_bytes, distance);
            let running = self.running;
            for (blocks, (arrival, pid, sync)) in self.queued_reads.take(Op::Read, r.block, r.blocks) {
                if sync {
                    sync_pids.push(pid);
                }
                self.ctl.record(running, (end - arrival.min(end)) as f64, blocks as u64);
                if let Some(c) = self.ctl.count(running) {
                    self.decide(c, now_ns);
                }
            }
        }
        self.in_flight.push(InFlight { req: r, dispatch_ns: now_ns, distance, instance, sync_pids });
        Some(r)
    }

    fn queued(&self) -> usize {
        self.real.queued()
    }

    fn merges(&self) -> u64 {
        self.retired_merges + self.real.merges()
    }

    fn wake_at(&self) -> Option<u64> {
        self.real.wake_at()
    }

    fn completed(&mut self, req: &IoRequest, now_ns: u64) {
        self.catch_up(now_ns);
        let Some(i) = self.in_flight.iter().position(|f| f.req == *req) else { return };
        let f = self.in_flight.remove(i);
        if f.instance == self.instance {
            self.real.completed(req, now_ns);
        }
        // The measured I/O time (from the previous completion when it queued in the device).
        let io = now_ns - f.dispatch_ns.max(self.last_finish).min(now_ns);
        self.last_finish = now_ns;
        self.vd.table_mut().observe(req.op, req.blocks as u64 * self.page_bytes, f.distance, io);
        for pid in f.sync_pids {
            self.real_read_done(pid, now_ns);
        }
    }

    fn process_exit(&mut self, pid: u32, now_ns: u64) {
        self.real.process_exit(pid, now_ns);
    }

    fn take_queued(&mut self) -> Option<Vec<IoRequest>> {
        // Only the running scheduler's queue is real; the controller's own state is dropped.
        self.real.take_queued()
    }

    fn report(&self) -> Option<serde_json::Value> {
        let mut m = self.ctl.report(self.now, "scheduler", "schedulers", &self.names);
        m.insert("reads".into(), self.reads.into());
        m.insert("trained_cells".into(), self.vd.table().trained_cells().into());
        Some(serde_json::Value::Object(m))
    }
}

#[cfg(test)]
mod tests;
