//! ADA: REDCAP's activation-deactivation algorithm (González-Férez, Piernas and Cortes, Computer
//! Journal 59(10), 2016, §4.1, l.145-171; spec `specs/kdsim-redcap.md` §1.6, K1-K7, K9).
//!
//! ADA keeps REDCAP on while it pays and off while it does not. Two systems are compared over the
//! last window of read requests: REDCAP (the candidate) and the normal system (the baseline). One
//! of them runs; KDSim's virtual disk plays the other (l.169-171):
//! - **active** (REDCAP serves reads): the virtual disk gets a copy of each original request and
//!   gives the normal system's T_Normal (its service time there: insertion into its scheduler to
//!   completion, K5); REDCAP's own T_Redcap runs from a read's arrival at REDCAP to the end of all
//!   its partials: a hit ends after the copy time, a miss or a wait for a segment in flight ends
//!   when its segment read ends, which is the read's dispatch time plus the table's estimate of
//!   its I/O time (l.160: "ADA uses the table model of KDSim for computing the I/O times of both
//!   the real and virtual disk"), plus the copy of its requested blocks (K9).
//! - **inactive** (reads pass to the scheduler unchanged): the real side gives T_Normal, from
//!   entering the real scheduler to the table estimate's end at dispatch. A *simulated* REDCAP cache
//!   (metadata only) decides hits and misses; its segment reads go to the virtual disk, so
//!   T_Redcap = the segment read's service there + the copy; a hit costs T_CHit, the mean time
//!   per block of the hits seen while active, or the configured copy cost before any (K6).
//! - **Simulated hits**: a read of the segment the simulated cache is reading on the virtual disk
//!   for the same process's last synchronous miss is a hit at T_CHit, not a wait for that read,
//!   when it comes after that miss (synchronous or not: the readahead of a later read call too);
//!   any other read of a segment in flight waits for it, as K12 has a real REDCAP's reads wait.
//!   The paper's simulated REDCAP only "record[s] the hits/misses on each read" (l.151) and times
//!   a request as T_Virtual_Disk for its misses plus T_CHit for its hits (l.171). The reads
//!   feeding it come at the pace of the normal system that runs for real, which does not wait for
//!   the simulated segment reads; a process of a real REDCAP system blocks on its synchronous miss
//!   and asks for nothing more until that segment arrived. Timing those reads as waits charged one
//!   segment read's wait (under CFQ or AS, all the other processes' slices) to every read of the
//!   segment: on 8k-SR with 8 processes on the HDD model, 36,518 of the simulated cache's 36,879
//!   hits were such waits, against 8 of 39,600 in the same run with REDCAP always on; and TAC's
//!   8 KiB reads, which reach REDCAP as a synchronous block and the readahead of the next, paid
//!   that wait on every second block. A read issued with the miss (the same call's readahead)
//!   still waits, as it does in a REDCAP system. Only the last miss qualifies: a virtual disk
//!   lagging far behind keeps older segments in flight that a real REDCAP of the same size would
//!   have evicted long before. The last miss follows the process tree as R4 orders it (l.106): a
//!   child forked after its parent's miss starts with it, and a parent that waited for a child
//!   goes on with the child's (LKR's `find` and the `cat` it runs for each file).
//! - Writes go to the disk unmodified in both systems; the virtual disk gets them in both states,
//!   and they invalidate the blocks they cover in whichever cache is in use.
//! - The virtual disk's rule R6 (`kdsim/virtual_disk.rs`): a process blocked in the running
//!   system is not thinking on the virtual disk. While active, the copy of a synchronous read that
//!   waits for REDCAP segment reads is completed for the virtual scheduler no earlier than the
//!   last of them completes on the real disk (a read REDCAP serves from memory blocks nobody);
//!   while inactive, the simulated segment reads of a synchronous read no earlier than the real
//!   disk completes that read.
//!
//! The blocks a request counts (B_Redcap, B_Normal) are its requested blocks (K1); with
//! `blocks=fetched` a miss partial counts its whole segment (the literal reading of l.155).
//! [`crate::kdsim::window::WindowComparator`] holds the last N per-block times of each side and
//! decides after every N-th completed original read (tumbling) or after every one (sliding),
//! REDCAP winning only with a strictly smaller sum; the new state takes effect from the next read
//! (K2). At a switch (K7), turning off starts the simulated cache as a copy of the real one's
//! metadata; turning on starts the real cache empty (the simulated one has no data, and writes
//! while off were not applied to the old one). ADA starts active (l.252).
//!
//! **At a switch** the virtual disk stops playing the system that now runs and starts playing the
//! other (l.169-171). The copies it holds for its old role and has not yet taken into its
//! scheduler are withdrawn; the few in its scheduler or in service finish, as a scheduler's queue
//! cannot be scanned (l.110), and count for neither side. Each side's times come from one
//! source in each state. While active, T_Normal comes from the virtual disk and T_Redcap from
//! REDCAP (l.169). While inactive, T_Redcap comes from the virtual disk and T_Normal from the
//! running system (l.171). The paper says nothing of the virtual disk's queues at a switch. When
//! the system it played was the slower one, its backlog is of requests the running system served
//! long before. Left in place, that backlog went on through the new role. It delayed the new role's
//! copies, and its completions were counted on the side now measured for real. On 512k-SR with 8
//! processes and the anticipatory scheduler, this made ADA switch every two windows. In the
//! window after each switch, the side the virtual disk played was 4.4-9.6 % above the running one;
//! in the next it was 7.2-12.1 % below, after the first cycle (`docs/reproductions.md`, AIR,
//! 2026-11-29).
//!
//! The virtual disk's table starts from `table=PATH` (trained off line, as the paper's kernel
//! loads at boot) or from zero, and is updated from every request the real device serves
//! (l.83): the measured service time, in the cell of its size and its distance from the previous
//! request the real disk served, applied when the request completes.

use rustc_hash::FxHashMap as HashMap;

use super::redcap::{Outcome, Partial, Redcap, RedcapConfig, RedcapCounts};
use super::{BlockStage, StageActions, Submit};
use crate::device::table::TableModel;
use crate::device::Service;
use crate::error::ConfigError;
use crate::kdsim::accuracy::RealFeed;
use crate::kdsim::virtual_disk::{PartMatcher, VirtualCompletion, VirtualDisk, VirtualRequest};
use crate::kdsim::window::{Cadence, Check, Side, WindowComparator};
use crate::sched::{IoRequest, Scheduler};
use crate::trace::Op;

/// Which blocks a REDCAP miss counts in B_Redcap (K1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Blocks {
    /// The blocks the request asked for (the reading taken).
    Requested,
    /// A miss partial counts its whole segment (requested and prefetched blocks, l.155 literally).
    Fetched,
}

/// ADA's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdaConfig {
    pub window: usize,
    pub cadence: Cadence,
    /// The virtual disk's starting table (`None`: learned on line from zero).
    pub table: Option<std::path::PathBuf>,
    pub blocks: Blocks,
}

impl Default for AdaConfig {
    fn default() -> Self {
        AdaConfig { window: 1000, cadence: Cadence::Tumbling, table: None, blocks: Blocks::Requested }
    }
}

impl AdaConfig {
    /// Parses `on` or `window=1000,cadence=tumbling|sliding,table=PATH,blocks=requested|fetched`
    /// (any subset).
    pub fn parse(text: &str) -> Result<AdaConfig, ConfigError> {
        let mut c = AdaConfig::default();
        for item in text.split(',').map(str::trim).filter(|s| !s.is_empty() && *s != "on") {
            let (k, v) = item.split_once('=').ok_or_else(|| ConfigError::new("--ada", format!("`{item}` is not key=value (window, cadence, table, blocks)")))?;
            let v = v.trim();
            match k.trim() {
                "window" => {
                    c.window = v.parse().ok().filter(|&n| n > 0).ok_or_else(|| ConfigError::new("--ada window", format!("`{v}` is not a positive number of requests")))?;
                }
                "cadence" => c.cadence = Cadence::parse("--ada cadence", v)?,
                "table" => {
                    if v.is_empty() {
                        return Err(ConfigError::new("--ada table", "an empty path"));
                    }
                    c.table = Some(v.into());
                }
                "blocks" => {
                    c.blocks = match v {
                        "requested" => Blocks::Requested,
                        "fetched" => Blocks::Fetched,
                        other => return Err(ConfigError::unknown("--ada blocks", "block count", other, &["requested", "fetched"])),
                    }
                }
                other => return Err(ConfigError::unknown("--ada", "ADA parameter", other, &["window", "cadence", "table", "blocks"])),
            }
        }
        Ok(c)
    }
}

/// A change of state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Switch {
    /// Read requests seen when the new state took effect.
    pub request: u64,
    /// When it took effect (ns, the run's clock).
    pub time_ns: u64,
    /// `active` or `inactive`.
    pub state: &'static str,
}

/// One logged check: the two sums and the state after it.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct WindowSums {
    /// Read requests seen at the check.
    pub request: u64,
    /// When the check was made (ns, the run's clock).
    pub time_ns: u64,
    /// Completed original reads counted at the check (the cadence's clock).
    pub completed: u64,
    /// Σ T/B over the window, ms per block, REDCAP and the normal system (`null`: no request
    /// completed on that side yet).
    pub redcap_ms: Option<f64>,
    pub normal_ms: Option<f64>,
    /// Requests in each side's window.
    pub redcap_requests: usize,
    pub normal_requests: usize,
    /// The state after the check.
    pub state: &'static str,
}

fn state_name(active: bool) -> &'static str {
    if active {
        "active"
    } else {
        "inactive"
    }
}

/// What a request sent to the virtual disk stands for.
#[derive(Debug, Clone, Copy)]
enum Tag {
    /// A copy of an original read (normal system, active state); its blocks come back with it.
    Normal,
    /// A simulated REDCAP's segment read.
    Segment((u32, u64)),
    /// A write (either system).
    Write,
}

/// The kind of a virtual request, in the top bits of its id (the rest is its number), so that
/// only segment reads need a look-up at completion.
const VD_KIND: u64 = 3 << 62;
const VD_NORMAL: u64 = 1 << 62;
const VD_SEGMENT: u64 = 2 << 62;
const VD_WRITE: u64 = 3 << 62;

/// Values keyed by numbers handed out in increasing order, most removed soon after (reads being
/// timed): a run of slots from the oldest key still present, in place of a hash map.
#[derive(Debug)]
struct ByNumber<T> {
    base: u64,
    slots: std::collections::VecDeque<Option<T>>,
}

impl<T> Default for ByNumber<T> {
    fn default() -> Self {
        ByNumber { base: 0, slots: Default::default() }
    }
}

impl<T> ByNumber<T> {
    /// `k` is larger than every key inserted before.
    fn insert(&mut self, k: u64, v: T) {
        if self.slots.is_empty() {
            self.base = k;
        }
        debug_assert!(k >= self.base + self.slots.len() as u64, "keys only grow");
        while self.base + (self.slots.len() as u64) < k {
            self.slots.push_back(None);
        }
        self.slots.push_back(Some(v));
    }

    fn get(&self, k: u64) -> Option<&T> {
        let i = usize::try_from(k.checked_sub(self.base)?).ok()?;
        self.slots.get(i)?.as_ref()
    }

    fn get_mut(&mut self, k: u64) -> Option<&mut T> {
        let i = usize::try_from(k.checked_sub(self.base)?).ok()?;
        self.slots.get_mut(i)?.as_mut()
    }

    fn remove(&mut self, k: u64) -> Option<T> {
        let i = usize::try_from(k.checked_sub(self.base)?).ok()?;
        let v = self.slots.get_mut(i)?.take();
        while let Some(None) = self.slots.front() {
            self.slots.pop_front();
            self.base += 1;
        }
        v
    }
}

/// An original read whose partials are still being timed.
#[derive(Debug, Clone, Copy)]
struct Timing {
    arrival_ns: u64,
    left: u32,
    /// The longest partial so far (ns).
    dur_ns: u64,
    /// B: blocks counted.
    blocks: u64,
}

/// A process's last synchronous miss in the simulated cache.
#[derive(Debug, Clone, Copy)]
struct LastMiss {
    segment: (u32, u64),
    arrival_ns: u64,
}

/// The ADA stage: REDCAP switched on and off, the virtual disk beside it.
pub struct Ada {
    cfg: AdaConfig,
    rc: RedcapConfig,
    active: bool,
    /// The real cache (serves reads while active).
    real: Redcap,
    /// The simulated cache (decides hits and misses while inactive).
    sim: Redcap,
    /// Counts of simulated caches replaced at earlier switches.
    sim_past: RedcapCounts,
    vd: VirtualDisk,
    cmp: WindowComparator,
    page_bytes: u64,
    /// The real disk's observations for the table.
    feed: RealFeed,
    // Real side timing.
    next_id: u64,
    /// Original reads timed on the real side (REDCAP while active, normal while inactive).
    /// (Keyed by read number, without the [`REDCAP_ID`] mark.)
    real_timing: ByNumber<Timing>,
    /// Real REDCAP partials waiting for their segment's dispatch: (read, copy ns).
    real_waiters: HashMap<(u32, u64), Vec<(u64, u64)>>,
    /// Estimated end of real segment reads dispatched and not completed.
    real_seg_end: HashMap<(u32, u64), u64>,
    /// Reads passed to the scheduler while inactive, until dispatched.
    passed: PartMatcher<u64>,
    // Virtual side.
    next_vid: u64,
    /// The simulated REDCAP's segment reads on the virtual disk, by request number.
    segment_reads: HashMap<u64, (u32, u64)>,
    sim_timing: HashMap<u64, Timing>,
    sim_waiters: HashMap<(u32, u64), Vec<(u64, u64)>>,
    /// Per process, the last synchronous simulated miss it waited for in a REDCAP system: the
    /// segment and when the miss arrived (its own, or one carried along the process tree; see
    /// "Simulated hits").
    sim_last_miss: HashMap<u32, LastMiss>,
    /// Children a parent waits for (child -> parent), to hand a child's last miss to its parent
    /// at the child's exit.
    sim_waited_by: HashMap<u32, u32>,
    /// R6 of the virtual disk (a process is blocked while the running system serves its
    /// synchronous read): while active, the copies of original reads waiting for real segment
    /// reads, by segment, with the segments each still waits for.
    copies_on_segment: HashMap<(u32, u64), Vec<u64>>,
    copy_segments_left: HashMap<u64, u32>,
    /// While inactive, the simulated segment reads each read passed to the scheduler caused, until
    /// it is dispatched; then by the real request serving it, until that completes.
    segment_reads_of: HashMap<u64, Vec<u64>>,
    segment_reads_in_device: Vec<(u64, u32, Vec<u64>)>,
    scratch: StageActions,
    parts: Vec<Partial>,
    /// Emptied vectors kept for their allocations: the virtual disk's completions taken in,
    /// the passed reads a dispatch serves.
    done: Vec<VirtualCompletion>,
    passed_parts: Vec<(u32, u64)>,
    // T_CHit from hits seen while active.
    hit_ns: u64,
    hit_blocks: u64,
    // Report.
    reads_seen: u64,
    reads_active: u64,
    switches: Vec<Switch>,
    windows: Vec<WindowSums>,
    /// The time of the last event the stage heard of (every entry point catches up to it first).
    now_ns: u64,
    checks: u64,
    undecided: u64,
}

impl Ada {
    /// ADA over a REDCAP of `rc`, its virtual disk with `sched` (a fresh instance of the real
    /// disk's scheduler) and `table`, requests in pages of `page_bytes`.
    pub fn new(rc: RedcapConfig, cfg: AdaConfig, sched: Box<dyn Scheduler>, table: TableModel, page_bytes: u64) -> Result<Ada, ConfigError> {
        let cmp = WindowComparator::new(cfg.window, cfg.cadence)?;
        Ok(Ada {
            rc,
            active: true,
            real: Redcap::new(rc),
            sim: Redcap::new(rc),
            sim_past: RedcapCounts::default(),
            vd: VirtualDisk::new(sched, table, page_bytes),
            cmp,
            page_bytes,
            feed: RealFeed::default(),
            next_id: 0,
            real_timing: ByNumber::default(),
            real_waiters: HashMap::default(),
            real_seg_end: HashMap::default(),
            passed: PartMatcher::default(),
            next_vid: 0,
            segment_reads: HashMap::default(),
            sim_timing: HashMap::default(),
            sim_waiters: HashMap::default(),
            sim_last_miss: HashMap::default(),
            sim_waited_by: HashMap::default(),
            copies_on_segment: HashMap::default(),
            copy_segments_left: HashMap::default(),
            segment_reads_of: HashMap::default(),
            segment_reads_in_device: Vec::new(),
            scratch: StageActions::default(),
            parts: Vec::new(),
            done: Vec::new(),
            passed_parts: Vec::new(),
            hit_ns: 0,
            hit_blocks: 0,
            reads_seen: 0,
            reads_active: 0,
            switches: Vec::new(),
            windows: Vec::new(),
            now_ns: 0,
            checks: 0,
            undecided: 0,
            cfg,
        })
    }

    /// Whether REDCAP is serving reads now.
    pub fn active(&self) -> bool {
        self.active
    }

    fn copy_ns(&self, blocks: u32) -> u64 {
        self.rc.copy_ns(blocks)
    }

    /// T_CHit for `blocks` (K6).
    fn chit_ns(&self, blocks: u32) -> u64 {
        if self.hit_blocks == 0 {
            self.copy_ns(blocks)
        } else {
            (self.hit_ns as u128 * blocks as u128 / self.hit_blocks as u128) as u64
        }
    }

    /// Submits `req` to the virtual disk; its id there.
    fn vd_submit(&mut self, tag: Tag, req: VirtualRequest, now_ns: u64) -> u64 {
        let id = self.next_vid;
        self.next_vid += 1;
        let kind = match tag {
            Tag::Normal => VD_NORMAL,
            Tag::Segment(key) => {
                self.segment_reads.insert(id, key);
                VD_SEGMENT
            }
            Tag::Write => VD_WRITE,
        };
        self.vd.submit(VirtualRequest { id: id | kind, ..req }, now_ns);
        id | kind
    }

    /// B_Redcap of a read from its partials (K1).
    fn redcap_blocks(&self, parts: &[Partial]) -> u64 {
        parts
            .iter()
            .map(|p| match (self.cfg.blocks, p.outcome) {
                (Blocks::Fetched, Outcome::Miss) => self.rc.segment_blocks as u64,
                _ => p.blocks as u64,
            })
            .sum()
    }

    /// A partial of read `id` on `side` lasted `dur_ns`; the read is done when all have.
    fn partial_done(&mut self, real: bool, id: u64, dur_ns: u64) {
        let t = if real { self.real_timing.get_mut(id & !REDCAP_ID) } else { self.sim_timing.get_mut(&id) };
        let Some(t) = t else { return };
        t.dur_ns = t.dur_ns.max(dur_ns);
        t.left -= 1;
        if t.left == 0 {
            let t = if real { self.real_timing.remove(id & !REDCAP_ID) } else { self.sim_timing.remove(&id) };
            self.read_timed(real, id, t.expect("timed"));
        }
    }

    /// A read's time is known: the real side's reads drive the cadence.
    fn read_timed(&mut self, real: bool, id: u64, t: Timing) {
        // Real reads are REDCAP's while the read was taken (ids are marked by the state at arrival).
        let side = if real {
            if id & REDCAP_ID != 0 {
                Side::Candidate
            } else {
                Side::Baseline
            }
        } else {
            Side::Candidate
        };
        self.cmp.record(side, t.dur_ns as f64, t.blocks);
        if real {
            if let Some(c) = self.cmp.count() {
                self.decide(c);
            }
        }
    }

    fn decide(&mut self, c: Check) {
        self.checks += 1;
        let want = match c.candidate_wins {
            Some(w) => w,
            None => {
                self.undecided += 1;
                self.active
            }
        };
        let switched = want != self.active;
        if switched {
            self.active = want;
            if want {
                // K7: the real cache starts empty.
                self.real.clear();
            } else {
                // K7: the simulated cache starts as a copy of the real one's metadata.
                self.sim_past.add(&self.sim.counts());
                self.sim = self.real.settled_copy();
            }
            self.withdraw_old_role(want);
            self.switches.push(Switch { request: self.reads_seen, time_ns: self.now_ns, state: state_name(want) });
        }
        let n = self.cfg.window as u64;
        if switched || self.cfg.cadence == Cadence::Tumbling || c.request % n == 0 {
            self.windows.push(WindowSums {
                request: self.reads_seen,
                time_ns: self.now_ns,
                completed: c.request,
                redcap_ms: c.candidate_ms,
                normal_ms: c.baseline_ms,
                redcap_requests: c.candidate_requests,
                normal_requests: c.baseline_requests,
                state: state_name(self.active),
            });
        }
    }

    /// At a switch the virtual disk stops playing the system that now runs: the copies it holds
    /// for that system and has not yet taken into its scheduler are withdrawn (see the module
    /// comment, "At a switch").
    fn withdraw_old_role(&mut self, now_active: bool) {
        let old = if now_active { VD_SEGMENT } else { VD_NORMAL };
        for id in self.vd.withdraw_waiting(self.now_ns, |r| r.id & VD_KIND == old) {
            if old == VD_SEGMENT {
                if let Some(key) = self.segment_reads.remove(&(id & !VD_KIND)) {
                    self.forget_simulated_waiters(key);
                }
            }
        }
    }

    /// The simulated reads waiting for segment `key` will not be timed.
    fn forget_simulated_waiters(&mut self, key: (u32, u64)) {
        for (read, _) in self.sim_waiters.remove(&key).unwrap_or_default() {
            self.sim_timing.remove(&read);
        }
    }

    /// Runs the virtual disk to `now_ns` and takes in what it completed.
    fn catch_up(&mut self, now_ns: u64) {
        self.now_ns = now_ns;
        self.vd.advance(now_ns);
        let mut done = std::mem::take(&mut self.done);
        self.vd.swap_completed(&mut done);
        for c in done.drain(..) {
            let tag = match c.id & VD_KIND {
                VD_NORMAL => Some(Tag::Normal),
                VD_SEGMENT => self.segment_reads.remove(&(c.id & !VD_KIND)).map(Tag::Segment),
                _ => Some(Tag::Write),
            };
            match tag {
                // A role's completions after a switch count for neither side.
                Some(Tag::Normal) => {
                    if self.active {
                        self.cmp.record(Side::Baseline, c.service_ns() as f64, c.blocks as u64)
                    }
                }
                Some(Tag::Segment(key)) => {
                    let sb = self.rc.segment_blocks as u64;
                    let seg = IoRequest { op: Op::Read, device: key.0, block: key.1 * sb, blocks: sb as u32, sync: false, cause: crate::sched::Cause::Prefetch, arrival_ns: c.queued_ns, pid: 0 };
                    // Metadata only: the simulated copies are timed below, not served.
                    let mut scratch = std::mem::take(&mut self.scratch);
                    self.sim.read_done(&seg, c.finish_ns, &mut scratch);
                    scratch.hold.clear();
                    self.scratch = scratch;
                    if self.active {
                        self.forget_simulated_waiters(key);
                        continue;
                    }
                    for (id, copy) in self.sim_waiters.remove(&key).unwrap_or_default() {
                        let arrival = self.sim_timing.get(&id).map_or(c.queued_ns, |t| t.arrival_ns);
                        let dur = c.finish_ns - c.queued_ns.max(arrival).min(c.finish_ns) + copy;
                        self.partial_done(false, id, dur);
                    }
                }
                Some(Tag::Write) | None => {}
            }
        }
        self.done = done;
    }

    fn read_active(&mut self, req: IoRequest, now_ns: u64, out: &mut StageActions) {
        let id = self.next_id | REDCAP_ID;
        self.next_id += 1;
        let mut parts = std::mem::take(&mut self.parts);
        self.real.read(req, now_ns, out, &mut parts);
        // R6: a synchronous read served from memory does not block its process; one that waits
        // for segment reads does until they complete.
        let mut waits_for: Vec<(u32, u64)> = if req.sync { parts.iter().filter(|p| p.outcome != Outcome::Hit).map(|p| p.segment).collect() } else { Vec::new() };
        waits_for.dedup();
        let awaits_real = !waits_for.is_empty();
        let vid = self.vd_submit(Tag::Normal, VirtualRequest { id: 0, pid: req.pid, op: Op::Read, block: req.block, blocks: req.blocks, sync: req.sync, issued_behind: None, issued_queued: None, awaits_real }, now_ns);
        if awaits_real {
            self.copy_segments_left.insert(vid, waits_for.len() as u32);
            for key in waits_for {
                self.copies_on_segment.entry(key).or_default().push(vid);
            }
        }
        let blocks = self.redcap_blocks(&parts);
        self.real_timing.insert(id & !REDCAP_ID, Timing { arrival_ns: now_ns, left: parts.len() as u32, dur_ns: 0, blocks });
        for p in &parts {
            let copy = self.copy_ns(p.blocks);
            match p.outcome {
                Outcome::Hit => {
                    self.hit_ns += copy;
                    self.hit_blocks += p.blocks as u64;
                    self.partial_done(true, id, copy);
                }
                Outcome::InFlight | Outcome::Miss => match self.real_seg_end.get(&p.segment) {
                    Some(&end) => self.partial_done(true, id, end.saturating_sub(now_ns) + copy),
                    None => self.real_waiters.entry(p.segment).or_default().push((id, copy)),
                },
            }
        }
        self.parts = parts;
    }

    fn read_inactive(&mut self, req: IoRequest, now_ns: u64) {
        let id = self.next_id;
        self.next_id += 1;
        self.passed.add(Op::Read, req.block, req.blocks, id);
        self.real_timing.insert(id, Timing { arrival_ns: now_ns, left: 1, dur_ns: 0, blocks: req.blocks as u64 });
        // The simulated REDCAP: its segment reads go to the virtual disk.
        let (sync, pid) = (req.sync, req.pid);
        let last_miss = self.sim_last_miss.get(&pid).copied();
        // Issued after the process's last synchronous miss arrived: in a REDCAP system the process
        // waited for that miss's segment before it asked for anything more.
        let after_last_miss = |segment| last_miss.is_some_and(|m| m.segment == segment && (sync || now_ns > m.arrival_ns));
        let mut parts = std::mem::take(&mut self.parts);
        let mut scratch = std::mem::take(&mut self.scratch);
        self.sim.read(req, now_ns, &mut scratch, &mut parts);
        scratch.serve.clear();
        let mut vids = Vec::new();
        for q in scratch.issue.drain(..) {
            let key = self.sim.segment_of(q.device, q.block);
            // R6: the process waits for its synchronous read in the running system too.
            let vid = self.vd_submit(Tag::Segment(key), VirtualRequest { id: 0, pid: q.pid, op: Op::Read, block: q.block, blocks: q.blocks, sync: q.sync, issued_behind: None, issued_queued: None, awaits_real: sync && q.sync }, now_ns);
            if sync && q.sync {
                vids.push(vid);
            }
        }
        if !vids.is_empty() {
            self.segment_reads_of.insert(id, vids);
        }
        self.scratch = scratch;
        let blocks = self.redcap_blocks(&parts);
        self.sim_timing.insert(id, Timing { arrival_ns: now_ns, left: parts.len() as u32, dur_ns: 0, blocks });
        for p in &parts {
            // A segment the simulated cache holds is a hit (l.151, l.171), and so is the one it is
            // reading for the process's last synchronous miss when a synchronous read of that
            // process asks for it: see the module comment, "Simulated hits".
            let hit = match p.outcome {
                Outcome::Hit => true,
                Outcome::InFlight => after_last_miss(p.segment),
                Outcome::Miss => false,
            };
            if hit {
                let t = self.chit_ns(p.blocks);
                self.partial_done(false, id, t);
            } else {
                if p.outcome == Outcome::Miss && sync {
                    self.sim_last_miss.insert(pid, LastMiss { segment: p.segment, arrival_ns: now_ns });
                }
                let copy = self.copy_ns(p.blocks);
                self.sim_waiters.entry(p.segment).or_default().push((id, copy));
            }
        }
        self.parts = parts;
    }

    /// Carries the simulated cache's last synchronous misses along the process tree (see the
    /// module comment, "Simulated hits"): a child starts after its parent's last miss ended, and a
    /// parent that waits for a child goes on after the child's, as R4 orders them (l.106).
    fn carry_last_miss(&mut self, e: &crate::trace::ProcessEvent) {
        use crate::trace::ProcessEventKind as K;
        match e.kind {
            K::Fork => {
                if let Some(m) = self.sim_last_miss.get(&e.ppid).copied() {
                    self.sim_last_miss.insert(e.pid, m);
                }
            }
            K::Wait => {
                self.sim_waited_by.insert(e.pid, e.ppid);
            }
            K::Exit => {
                let m = self.sim_last_miss.remove(&e.pid);
                if let (Some(parent), Some(m)) = (self.sim_waited_by.remove(&e.pid), m) {
                    self.sim_last_miss.insert(parent, m);
                }
            }
            K::Launch => {}
        }
    }

    fn report_value(&self) -> serde_json::Value {
        let mut sim = self.sim_past;
        sim.add(&self.sim.counts());
        let share = if self.reads_seen == 0 { 1.0 } else { self.reads_active as f64 / self.reads_seen as f64 };
        serde_json::json!({
            "redcap": self.real.counts(),
            "ada": {
                "window": self.cfg.window,
                "cadence": self.cfg.cadence.name(),
                "blocks": match self.cfg.blocks { Blocks::Requested => "requested", Blocks::Fetched => "fetched" },
                "table": self.cfg.table.as_ref().map(|p| p.display().to_string()),
                "state": state_name(self.active),
                "switches": self.switches,
                "activation_share": share,
                "reads": self.reads_seen,
                "reads_active": self.reads_active,
                "checks": self.checks,
                "undecided_checks": self.undecided,
                "windows": self.windows,
                "simulated_redcap": sim,
                "trained_cells": self.vd.table().trained_cells(),
            }
        })
    }
}

/// Marks the ids of reads REDCAP took (timed on the candidate side).
const REDCAP_ID: u64 = 1 << 63;

impl BlockStage for Ada {
    fn name(&self) -> String {
        format!("{}+ada:window={},cadence={}", self.real.name(), self.cfg.window, self.cfg.cadence.name())
    }

    fn submit(&mut self, req: IoRequest, now_ns: u64, out: &mut StageActions) -> Submit {
        self.catch_up(now_ns);
        if req.op == Op::Write {
            if self.active {
                self.real.write(&req);
            } else {
                self.sim.write(&req);
            }
            self.vd_submit(Tag::Write, VirtualRequest { id: 0, pid: req.pid, op: Op::Write, block: req.block, blocks: req.blocks, sync: false, issued_behind: None, issued_queued: None, awaits_real: false }, now_ns);
            return Submit::Pass;
        }
        self.reads_seen += 1;
        if self.active {
            self.reads_active += 1;
            self.read_active(req, now_ns, out);
            Submit::Take
        } else {
            self.read_inactive(req, now_ns);
            Submit::Pass
        }
    }

    fn dispatched(&mut self, req: &IoRequest, service: &Service, now_ns: u64) {
        self.catch_up(now_ns);
        let (d, _) = self.feed.dispatched(req, service, now_ns, self.page_bytes);
        let est = self.vd.table().estimate(req.op, req.blocks as u64 * self.page_bytes, d);
        if req.op == Op::Write {
            return;
        }
        let end = now_ns + est;
        // Reads passed while inactive: waited in the scheduler until now, then the estimate.
        let mut passed = std::mem::take(&mut self.passed_parts);
        self.passed.take_into(Op::Read, req.block, req.blocks, &mut passed);
        let mut vids = Vec::new();
        for &(_, id) in &passed {
            let arrival = self.real_timing.get(id & !REDCAP_ID).map_or(now_ns, |t| t.arrival_ns);
            self.partial_done(true, id, end - arrival);
            vids.extend(self.segment_reads_of.remove(&id).unwrap_or_default());
        }
        if !vids.is_empty() {
            self.segment_reads_in_device.push((req.block, req.blocks, vids));
        }
        self.passed_parts = passed;
        // Real REDCAP segment reads inside the range end at the estimate.
        let sb = self.rc.segment_blocks as u64;
        for s in req.block.div_ceil(sb)..req.end() / sb {
            let key = (req.device, s);
            let waiters = self.real_waiters.remove(&key);
            if waiters.is_none() && !self.real.in_flight(key) {
                continue;
            }
            self.real_seg_end.insert(key, end);
            for (id, copy) in waiters.unwrap_or_default() {
                let arrival = self.real_timing.get(id & !REDCAP_ID).map_or(now_ns, |t| t.arrival_ns);
                self.partial_done(true, id, end.saturating_sub(arrival) + copy);
            }
        }
    }

    fn completed(&mut self, req: &IoRequest, _service: &Service, now_ns: u64, out: &mut StageActions) {
        self.catch_up(now_ns);
        self.feed.completed(req, self.vd.table_mut(), self.page_bytes);
        if req.op == Op::Write {
            return;
        }
        // The real cache's partials waiting for these segments complete after their copy (K9).
        self.real.read_done(req, now_ns, out);
        let sb = self.rc.segment_blocks as u64;
        for s in req.block.div_ceil(sb)..req.end() / sb {
            self.real_seg_end.remove(&(req.device, s));
            // R6: the copies of reads that waited for this segment; the last one frees its process.
            for vid in self.copies_on_segment.remove(&(req.device, s)).unwrap_or_default() {
                let left = self.copy_segments_left.get_mut(&vid).expect("counted");
                *left -= 1;
                if *left == 0 {
                    self.copy_segments_left.remove(&vid);
                    self.vd.real_done(vid, now_ns);
                }
            }
        }
        // R6: reads passed while inactive, served by this request: their processes go on.
        if let Some(i) = self.segment_reads_in_device.iter().position(|u| (u.0, u.1) == (req.block, req.blocks)) {
            for vid in self.segment_reads_in_device.remove(i).2 {
                self.vd.real_done(vid, now_ns);
            }
        }
    }

    fn process_event(&mut self, event: &crate::trace::ProcessEvent, now_ns: u64) {
        self.catch_up(now_ns);
        self.carry_last_miss(event);
        self.vd.process_event(event, now_ns);
    }

    fn report(&self) -> serde_json::Value {
        self.report_value()
    }
}

#[cfg(test)]
mod tests;
