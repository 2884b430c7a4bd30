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
//! unaffected. Readahead is not selected this way: a different readahead changes the request
//! stream itself (which blocks leave the page cache, in which sizes, and which reads hit), and the
//! virtual disk below the page cache only sees copies of the stream the running setting produced;
//! evaluating another readahead would need a second page cache and prefetcher beside the real
//! one (docs/devices.md, Choosing the I/O scheduler on line).

use std::collections::{BTreeMap, VecDeque};
use std::path::PathBuf;

use super::{hand_over, IoRequest, SchedLimits, Scheduler};
use crate::device::table::{Head, TableModel};
use crate::device::SECTOR;
use crate::error::ConfigError;
use crate::kdsim::virtual_disk::{PartMatcher, VirtualDisk, VirtualRequest};
use crate::kdsim::window::{Cadence, Check, Side, WindowComparator};
use crate::trace::Op;

/// The controller's settings (`--sched-select A,B[,window=N][,cadence=...][,table=PATH]`).
#[derive(Debug, Clone, PartialEq)]
pub struct SelectConfig {
    /// The two schedulers' specs: the first runs on the real device at the start.
    pub specs: [String; 2],
    pub window: usize,
    pub cadence: Cadence,
    /// The virtual disk's starting table (`None`: learned on line from zero).
    pub table: Option<PathBuf>,
    /// How much smaller (in percent of the running scheduler's sum) the other's sum must be for
    /// a switch; 0 (the default) is KDSim's strict "smaller".
    pub margin_pct: f64,
    /// Verify each switch on the real device, reverting it with a doubling hold (`verify=on`).
    pub verify: bool,
}

const OPTION: &str = "--sched-select";
const KEYS: [&str; 5] = ["window", "cadence", "table", "margin", "verify"];

impl SelectConfig {
    /// Parses `A,B[,window=1000][,cadence=tumbling|sliding][,table=PATH][,margin=PCT][,verify=on|off]`. A scheduler's own
    /// parameters follow it as in `--sched` (`deadline:read_expire=100ms,fifo_batch=8`): an item
    /// `key=value` whose key is not the controller's belongs to the scheduler before it.
    pub fn parse(text: &str) -> Result<SelectConfig, ConfigError> {
        let mut specs: Vec<String> = Vec::new();
        let (mut window, mut cadence, mut table, mut margin_pct, mut verify) = (1000usize, Cadence::Tumbling, None, 0.0, true);
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let kv = item.split_once('=').filter(|(k, _)| !k.contains(':'));
            match kv {
                Some((k, v)) if KEYS.contains(&k.trim()) => {
                    let v = v.trim();
                    match k.trim() {
                        "window" => {
                            window = v.parse().ok().filter(|&n| n > 0).ok_or_else(|| ConfigError::new("--sched-select window", format!("`{v}` is not a positive number of requests")))?;
                        }
                        "cadence" => cadence = Cadence::parse("--sched-select cadence", v)?,
                        "margin" => {
                            margin_pct = v
                                .trim_end_matches('%')
                                .parse::<f64>()
                                .ok()
                                .filter(|m| (0.0..100.0).contains(m))
                                .ok_or_else(|| ConfigError::new("--sched-select margin", format!("`{v}` is not a percentage in [0, 100)")))?;
                        }
                        "verify" => {
                            verify = match v {
                                "on" => true,
                                "off" => false,
                                other => return Err(ConfigError::unknown("--sched-select verify", "value", other, &["on", "off"])),
                            };
                        }
                        _ => {
                            if v.is_empty() {
                                return Err(ConfigError::new("--sched-select table", "an empty path"));
                            }
                            table = Some(PathBuf::from(v));
                        }
                    }
                }
                Some(_) => match specs.last_mut() {
                    // A parameter of the scheduler before it.
                    Some(last) => {
                        last.push(if last.contains(':') { ',' } else { ':' });
                        last.push_str(item);
                    }
                    None => return Err(ConfigError::unknown(OPTION, "parameter", item.split('=').next().unwrap_or(item), &KEYS)),
                },
                None => specs.push(item.to_string()),
            }
        }
        let [a, b]: [String; 2] = specs.try_into().map_err(|v: Vec<String>| {
            ConfigError::new(OPTION, format!("give exactly two schedulers to choose between (e.g. `anticipatory,deadline`), not {} ({})", v.len(), v.join(", ")))
        })?;
        if a == b {
            return Err(ConfigError::new(OPTION, format!("the two schedulers are the same (`{a}`): nothing to choose")));
        }
        Ok(SelectConfig { specs: [a, b], window, cadence, table, margin_pct, verify })
    }
}

/// A scheduler taking effect on the real device.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Switch {
    /// Reads that had entered the scheduler when it took effect.
    pub request: u64,
    pub time_ns: u64,
    /// The scheduler's spec as given.
    pub scheduler: String,
    /// `window`: the window comparison chose it; `revert`: the verification undid the switch
    /// before this one.
    pub cause: &'static str,
    /// The replaced scheduler's window sum (ms per block) when the switch was decided.
    pub before_ms: Option<f64>,
    /// The new scheduler's first window sum on the real device (`null`: not verified, the run
    /// ended first, or a revert, which is not verified itself).
    pub after_ms: Option<f64>,
    /// Whether the verification found the new scheduler worse and switched back.
    pub reverted: bool,
}

/// What a check does to a switch awaiting its verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    /// No switch awaits one.
    Idle,
    /// The new scheduler's first real window is not complete yet: no decision.
    Wait,
    /// Its real window is no worse than the replaced one's: the switch stands, the hold is reset.
    Confirm { after_ms: f64 },
    /// Its real window is worse: switch back and hold the old scheduler for `hold_windows`.
    Revert { after_ms: f64, hold_windows: u64 },
}

/// The switch verification's rule with its back-off, apart from the schedulers it applies to.
/// Counts are reads the real device dispatched (the comparator's cadence clock).
#[derive(Debug, Clone)]
pub struct Verifier {
    window: u64,
    /// The switch awaiting its verdict: the count at it and the replaced scheduler's sum.
    pending: Option<(u64, f64)>,
    /// No switch away from the running scheduler before this count.
    hold_until: u64,
    /// The hold the next revert imposes, in windows.
    next_hold: u64,
}

/// A hold stops doubling here (about a million windows: the rest of any run).
const MAX_HOLD_WINDOWS: u64 = 1 << 20;

impl Verifier {
    pub fn new(window: usize) -> Verifier {
        Verifier { window: window as u64, pending: None, hold_until: 0, next_hold: 1 }
    }

    /// A switch took effect at `count`, decided while the replaced scheduler's sum was `before_ms`.
    pub fn switched(&mut self, count: u64, before_ms: f64) {
        self.pending = Some((count, before_ms));
    }

    /// A check at `count` where the running scheduler's sum is `running_ms`.
    pub fn check(&mut self, count: u64, running_ms: Option<f64>) -> Verdict {
        let Some((at, before)) = self.pending else { return Verdict::Idle };
        let after = match running_ms {
            Some(ms) if count >= at + self.window => ms,
            _ => return Verdict::Wait,
        };
        self.pending = None;
        if after > before {
            let hold_windows = self.next_hold;
            self.next_hold = (self.next_hold * 2).min(MAX_HOLD_WINDOWS);
            self.hold_until = count + hold_windows * self.window;
            Verdict::Revert { after_ms: after, hold_windows }
        } else {
            self.next_hold = 1;
            Verdict::Confirm { after_ms: after }
        }
    }

    /// Whether a switch away from the running scheduler may be decided at `count`.
    pub fn may_switch(&self, count: u64) -> bool {
        self.pending.is_none() && count >= self.hold_until
    }
}

/// One logged check.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct WindowSums {
    /// Reads that had entered the scheduler at the check.
    pub request: u64,
    /// Reads the real device had dispatched (the cadence's count).
    pub completed: u64,
    pub time_ns: u64,
    /// Σ T/B over each scheduler's window, ms per block (scaled to the window when it has fewer;
    /// `null`: none yet), A's and B's.
    pub a_ms: Option<f64>,
    pub b_ms: Option<f64>,
    pub a_requests: usize,
    pub b_requests: usize,
    /// The scheduler on the real device after the check.
    pub running: String,
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
    /// Candidate: B; baseline: A.
    cmp: WindowComparator,
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
    since: u64,
    time_ns: [u64; 2],
    reads: u64,
    reads_dispatched: [u64; 2],
    switches: Vec<Switch>,
    windows: Vec<WindowSums>,
    checks: u64,
    undecided: u64,
    verifier: Verifier,
    reverted: u64,
}

fn side(i: usize) -> Side {
    if i == 1 {
        Side::Candidate
    } else {
        Side::Baseline
    }
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
        let cmp = WindowComparator::new(cfg.window, cfg.cadence)?;
        Ok(Select {
            limits,
            page_bytes,
            real,
            running: 0,
            instance: 0,
            vd,
            cmp,
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
            since: 0,
            time_ns: [0; 2],
            reads: 0,
            reads_dispatched: [0; 2],
            switches: Vec::new(),
            windows: Vec::new(),
            checks: 0,
            undecided: 0,
            verifier: Verifier::new(cfg.window),
            reverted: 0,
            cfg,
        })
    }

    /// The spec of the scheduler on the real device now.
    pub fn running(&self) -> &str {
        &self.cfg.specs[self.running]
    }

    /// The switches so far.
    pub fn switches(&self) -> &[Switch] {
        &self.switches
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
        let other = side(1 - self.running);
        let done = self.vd.take_completed();
        for c in &done {
            self.vd_last_finish = c.finish_ns;
            if c.op != Op::Read {
                continue;
            }
            self.cmp.record(other, c.service_ns() as f64, c.blocks as u64);
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
        let c = VirtualRequest { id: req.pid as u64, pid: req.pid, op: req.op, block: req.block, blocks: req.blocks, sync: req.sync };
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
        self.checks += 1;
        let (a, b) = (c.baseline_ms, c.candidate_ms);
        // The virtual disk's side is judged on a full window of its own reads: until then the
        // reads it has not completed are the ones its scheduler keeps waiting longest (K4's
        // scaling from the mean would favour it), and what it has played is the start of its
        // timeline, gated by the copies the real system had issued.
        let young = self.vd_reads < self.cfg.window as u64;
        let (run, other) = if self.running == 0 { (a, b) } else { (b, a) };
        let verdict = if self.cfg.verify { self.verifier.check(c.request, run) } else { Verdict::Idle };
        let mut switched = false;
        match verdict {
            Verdict::Revert { after_ms, .. } => {
                let last = self.switches.last_mut().expect("a switch awaited its verdict");
                last.after_ms = Some(after_ms);
                last.reverted = true;
                self.reverted += 1;
                self.switch(now, "revert", run);
                switched = true;
            }
            Verdict::Confirm { after_ms } => self.switches.last_mut().expect("a switch awaited its verdict").after_ms = Some(after_ms),
            Verdict::Idle | Verdict::Wait => {}
        }
        if !switched && (!self.cfg.verify || self.verifier.may_switch(c.request)) {
            switched = match (run, other) {
                (Some(run), Some(other)) if !young => other < run * (1.0 - self.cfg.margin_pct / 100.0),
                _ => {
                    self.undecided += 1;
                    false
                }
            };
            if switched {
                self.switch(now, "window", run);
                if self.cfg.verify {
                    self.verifier.switched(c.request, run.expect("compared"));
                }
            }
        }
        let n = self.cfg.window as u64;
        if switched || self.cfg.cadence == Cadence::Tumbling || c.request % n == 0 {
            self.windows.push(WindowSums {
                request: self.reads,
                completed: c.request,
                time_ns: now,
                a_ms: a,
                b_ms: b,
                a_requests: c.baseline_requests,
                b_requests: c.candidate_requests,
                running: self.running().to_string(),
            });
        }
    }

    /// The other scheduler takes the real device; the virtual disk plays the one that ran.
    fn switch(&mut self, now: u64, cause: &'static str, before_ms: Option<f64>) {
        let other = 1 - self.running;
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
        self.time_ns[self.running] += now - self.since;
        self.since = now;
        self.running = other;
        self.switches.push(Switch { request: self.reads, time_ns: now, scheduler: self.cfg.specs[other].clone(), cause, before_ms, after_ms: None, reverted: false });
    }
}

impl Scheduler for Select {
    fn name(&self) -> String {
        format!("select:{}|{},window={},cadence={},verify={}", self.cfg.specs[0], self.cfg.specs[1], self.cfg.window, self.cfg.cadence.name(), if self.cfg.verify { "on" } else { "off" })
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
                self.reads_dispatched[running] += 1;
                self.cmp.record(side(running), (end - arrival.min(end)) as f64, blocks as u64);
                if let Some(c) = self.cmp.count() {
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
        let mut time = self.time_ns;
        time[self.running] += self.now - self.since;
        let total = (time[0] + time[1]).max(1) as f64;
        let reads = (self.reads_dispatched[0] + self.reads_dispatched[1]).max(1) as f64;
        let schedulers: Vec<serde_json::Value> = (0..2)
            .map(|i| {
                serde_json::json!({
                    "spec": self.cfg.specs[i],
                    "name": self.names[i],
                    "time_ns": time[i],
                    "time_share": time[i] as f64 / total,
                    "reads": self.reads_dispatched[i],
                    "read_share": self.reads_dispatched[i] as f64 / reads,
                })
            })
            .collect();
        Some(serde_json::json!({
            "window": self.cfg.window,
            "cadence": self.cfg.cadence.name(),
            "margin_pct": self.cfg.margin_pct,
            "verify": self.cfg.verify,
            "table": self.cfg.table.as_ref().map(|p| p.display().to_string()),
            "schedulers": schedulers,
            "running": self.running(),
            "switches": self.switches,
            "reverted_switches": self.reverted,
            "reads": self.reads,
            "checks": self.checks,
            "undecided_checks": self.undecided,
            "windows": self.windows,
            "trained_cells": self.vd.table().trained_cells(),
        }))
    }
}

#[cfg(test)]
mod tests;
