//! KDSim's virtual disk (paper §3.2, l.56-60 and l.89-112; spec §1.2, §1.4, K5).
//!
//! A second disk that serves *virtual requests*: copies of the requests entering the real
//! scheduler (process, type, block range, synchronous or not), with no data. It has its own
//! instance of the real disk's scheduler and is timed by a [`TableModel`]: one request in service
//! at a time, its I/O time the table's answer for its size and its distance from the end of the
//! previous request the virtual disk served.
//!
//! Copies do not enter its scheduler at once. They arrive in the *shared queue*, move in FIFO order
//! to the *waiting queue*, and from there to the scheduler queue (and the *process queue*, which
//! holds every request in the scheduler or in service until it completes) only when their
//! dependencies are resolved (l.103-106):
//! - R1: a write moves at once;
//! - R2: a synchronous read of process p moves only if no other synchronous read of p is ahead of
//!   it in the waiting queue and none is in the process queue (the process is blocked on it): a
//!   process issues its next synchronous read only after the previous one completed;
//! - R3: an asynchronous read of p moves only if no synchronous read of p is ahead of it in the
//!   waiting queue;
//! - R4: the first request of a new process moves only after the last request its parent issued
//!   before creating it has been served; a parent that waits for its child has none of its new
//!   requests moved until the child exits;
//! - R5: a read that its process issued when all but `n` of its earlier reads had completed at
//!   the real disk moves only when at most `n` reads of the process are unserved ahead of it
//!   here (in the process queue, or passed over in the waiting queue). The paper's virtual disk
//!   "should know ... whether a request was issued when the previous one was complete or not"
//!   (l.91); R2 and R3 say it for demand reads only. A sequential reader's readahead reads are
//!   asynchronous, but each is issued when the process reaches the pages of the one before, i.e.
//!   after that one completed: without R5 a virtual disk behind the real one takes in a whole
//!   backlog of them at once, which CFQ sees as a process with requests queued and long think
//!   times (measured from its last completion here), and it drops the process's idle window
//!   where the real CFQ keeps it (`docs/reproductions.md`, KDSim Table 1). Likewise a read issued
//!   when `q` of those `n` were still waiting in the real scheduler (not dispatched) moves only
//!   when at most `q` of its process's reads ahead of it here are undispatched: a readahead run
//!   issued while the run before it was already on the real disk could not merge with it there,
//!   and a virtual disk running a little behind would otherwise merge the two and serve one
//!   request where the real disk served two (LKR with the drive's cache off: 3.9 % faster here
//!   before this, `docs/reproductions.md`, KDSim Figure 3). A feed that does not know the real
//!   disk's state gives no `n` or `q`, and R5 does not apply.
//! - R6: the scheduler here hears of a synchronous read's completion no earlier than the running
//!   system completed the read it stands for, when the feed reports that
//!   ([`VirtualRequest::awaits_real`], [`VirtualDisk::real_done`]). Until then the process is
//!   blocked in the running system and cannot issue its next read, so it is not thinking: CFQ's
//!   idle wait and the anticipatory scheduler's anticipation, which run from a completion, and the
//!   think times both measure, run from the later of the two completions. Without R6 a virtual disk
//!   that served a read sooner than the running system did gives up waiting for a process whose
//!   next read the running system has not had the chance to issue, and serves another: with 8
//!   processes its CFQ went round the processes where the running system's kept each one's slice
//!   (ADA on 8k-SR, where a REDCAP miss takes a 128 KiB segment read and the virtual normal
//!   system's 4 KiB read is done long before; `docs/reproductions.md`). The device itself is free
//!   at once; the scheduler treats the read as still in it (CFQ keeps the slice for its queue,
//!   anticipation waits for it), as it would on a disk that had taken as long. The paper's virtual
//!   disk learns of every real completion (it updates its table from them, l.83), so it can do the
//!   same.
//!
//! The rules are evaluated whenever a request arrives or completes, scanning the waiting queue in
//! arrival order; a blocked request does not block later eligible ones, and the requests moved keep
//! their order. Every rule looks only at the request's own process, so the waiting queue is kept
//! as one arrival-ordered queue per process and the requests each moves are put back in global
//! arrival order before they enter the scheduler: the same moves as one scan of a single queue,
//! at a cost that does not grow with the number of requests waiting (a virtual disk slower than
//! the real one, e.g. the size-blind table, accumulates many). A scan visits only the processes
//! whose requests may have become movable (their own arrivals and completions, and R4's
//! service of a parent's request and exit of a child): with process events, where every process
//! is linked, visiting all of them cost a walk over every waiting process at every event (the LKR
//! part of AIR keeps thousands of children waiting). A request's *service time* runs from its
//! insertion into the scheduler queue to its completion (K5: the time in the waiting queue is left out, which keeps a slower simulated system
//! from running up unbounded queueing delay); its *I/O time* is its share, by blocks, of the table
//! time of the dispatched request that served it (the scheduler may merge copies).
//!
//! R4 needs the process tree, which the copies do not carry: the caller reports each fork, wait
//! and exit ([`VirtualDisk::process_event`]) when it takes effect in the real system, from the
//! trace's process events (`docs/formats.md`). Without them every process is on its own.
//!
//! The disk is advanced lazily: [`VirtualDisk::advance`] runs its events (completions, scheduler
//! wake-ups) up to a time, and every arrival first advances to the arrival time. It never feeds
//! back into the real system; callers read what completed with [`VirtualDisk::take_completed`].

use std::collections::VecDeque;

use rustc_hash::FxHashMap as HashMap;

use crate::device::table::{Head, TableModel};
use crate::device::SECTOR;
use crate::sched::{Cause, IoRequest, Scheduler};
use crate::trace::{Op, ProcessEvent, ProcessEventKind};

/// A copy of a request entering the real scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VirtualRequest {
    /// The caller's identifier (e.g. its arrival number), returned at completion.
    pub id: u64,
    pub pid: u32,
    pub op: Op,
    /// First block and blocks, in pages of the disk's page size.
    pub block: u64,
    pub blocks: u32,
    /// A process waits for it (a demand read).
    pub sync: bool,
    /// Reads of its process outstanding at the real disk (in its scheduler or in service) when
    /// this one was issued, for a read; `None` when the feed does not know. A read issued when
    /// its process's earlier reads had completed but `n` (later) ones had not moves on the
    /// virtual disk only when the process has at most `n` reads unserved there (R5 below).
    pub issued_behind: Option<u32>,
    /// Of those, the reads still waiting in the real scheduler (not dispatched) when this one was
    /// issued; `None` when the feed does not know. A read issued after its process's earlier
    /// reads had all been dispatched at the real disk moves here only once they have been
    /// dispatched here too, so the scheduler cannot merge it with them (R5, below).
    pub issued_queued: Option<u32>,
    /// A synchronous read whose completion in the running system the feed reports
    /// ([`VirtualDisk::real_done`]): its process is blocked there until then, so the scheduler
    /// here hears of its completion no earlier (R6 below).
    pub awaits_real: bool,
}

/// A virtual request served.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VirtualCompletion {
    pub id: u64,
    pub op: Op,
    pub blocks: u32,
    pub sync: bool,
    /// Arrival at the virtual disk, insertion into its scheduler, completion (ns).
    pub arrival_ns: u64,
    pub queued_ns: u64,
    pub finish_ns: u64,
    /// Its share of the table time of the request that served it (ns).
    pub io_ns: f64,
}

impl VirtualCompletion {
    /// Service time (K5): scheduler insertion to completion.
    pub fn service_ns(&self) -> u64 {
        self.finish_ns - self.queued_ns
    }
}

#[derive(Debug, Clone, Copy)]
struct Pending {
    req: VirtualRequest,
    arrival_ns: u64,
    queued_ns: u64,
    serial: u64,
}

/// One process's requests in the waiting queue, in arrival order.
#[derive(Debug, Default)]
struct ProcWaiting {
    items: VecDeque<Pending>,
    /// Writes among `items` (a write may move past a blocked read).
    writes: usize,
    /// The largest `issued_behind` among the reads pushed (a scan past a read that waits for
    /// more of its process's reads to be served than this can move only writes).
    max_behind: u32,
    /// The same for `issued_queued`.
    max_queued: u32,
    /// Some read pushed carries `issued_queued`: a dispatch here may let it move.
    dispatch_counts: bool,
}

/// Process-tree state for R4.
#[derive(Debug, Clone, Default)]
struct ProcState {
    /// Sync reads of this process in the process queue (scheduler or service).
    sync_in_flight: u32,
    /// Reads of this process in the process queue.
    reads_queued: u32,
    /// Of those, the reads in the scheduler, not dispatched.
    reads_undispatched: u32,
    /// Reads of this process the virtual disk has not served yet (shared, waiting or process
    /// queue): an exit takes effect once they are served.
    reads_unserved: u32,
    /// The process exited in the real system while some of its reads were still unserved here.
    exit_pending: bool,
    /// R4: none of this process's requests moves before its parent's request of this serial is
    /// served.
    start_after: Option<u64>,
    /// R4: the process waits for these children to exit before any request it issues after
    /// the wait (serial from the second value on) moves. In the order of the waits, so by
    /// serial: the first entry is the earliest hold (a parent that goes on forking while the
    /// virtual disk lags keeps thousands here, and a scan looks only at the first).
    waiting_for: VecDeque<(u32, u64)>,
    /// The serial of the last request this process issued.
    last_serial: Option<u64>,
    started: bool,
}

/// The set of serials not yet served. Serials are handed out in order, so the set is a run of
/// flags from the oldest one unserved (a hash set cost a hash, an insertion and a removal per
/// request).
#[derive(Debug, Default)]
struct Unserved {
    base: u64,
    flags: VecDeque<bool>,
}

impl Unserved {
    /// `s` is larger than every serial inserted before.
    fn insert(&mut self, s: u64) {
        if self.flags.is_empty() {
            self.base = s;
        }
        debug_assert!(s >= self.base + self.flags.len() as u64, "serials only grow");
        while self.base + (self.flags.len() as u64) < s {
            self.flags.push_back(false);
        }
        self.flags.push_back(true);
    }

    fn contains(&self, s: &u64) -> bool {
        s.checked_sub(self.base).and_then(|i| self.flags.get(usize::try_from(i).ok()?).copied()).unwrap_or(false)
    }

    /// Whether `s` was in the set.
    fn remove(&mut self, s: &u64) -> bool {
        let Some(f) = s.checked_sub(self.base).and_then(|i| self.flags.get_mut(usize::try_from(i).ok()?)) else { return false };
        let was = std::mem::replace(f, false);
        while self.flags.front() == Some(&false) {
            self.flags.pop_front();
            self.base += 1;
        }
        was
    }
}

/// Matches the block range of a dispatched (possibly merged) request with the requests it
/// serves: the undispatched ones of its direction inside its range, in arrival order, until
/// their blocks add up to its length.
#[derive(Debug, Default, Clone)]
pub struct PartMatcher<T: Copy> {
    pending: Vec<(Op, u64, u32, T)>,
}

impl<T: Copy> PartMatcher<T> {
    pub fn add(&mut self, op: Op, block: u64, blocks: u32, tag: T) {
        self.pending.push((op, block, blocks, tag));
    }

    /// The parts of a dispatched request, removed from the pending ones.
    pub fn take(&mut self, op: Op, block: u64, blocks: u32) -> Vec<(u32, T)> {
        let mut out = Vec::new();
        self.take_into(op, block, blocks, &mut out);
        out
    }

    /// [`PartMatcher::take`] into `out` (cleared first), which keeps its allocation.
    pub fn take_into(&mut self, op: Op, block: u64, blocks: u32, out: &mut Vec<(u32, T)>) {
        out.clear();
        let end = block + blocks as u64;
        let mut left = blocks as u64;
        let mut i = 0;
        while i < self.pending.len() && left > 0 {
            let (o, b, n, t) = self.pending[i];
            if o == op && b >= block && b + n as u64 <= end && n as u64 <= left {
                out.push((n, t));
                left -= n as u64;
                self.pending.remove(i);
            } else {
                i += 1;
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }
}

/// The request in service.
struct InService {
    req: IoRequest,
    io_ns: u64,
    finish_ns: u64,
    /// The copies it serves, with their blocks.
    parts: Vec<(u32, Pending)>,
    /// Dispatched by the scheduler the disk has now (not by one it replaced since).
    by_current: bool,
}

/// KDSim's virtual disk.
pub struct VirtualDisk {
    sched: Box<dyn Scheduler>,
    table: TableModel,
    page_bytes: u64,
    head: Head,
    clock: u64,
    next_serial: u64,
    shared: VecDeque<Pending>,
    /// The waiting queue, per process (scans visit processes in pid order).
    waiting: HashMap<u32, ProcWaiting>,
    waiting_len: usize,
    /// Processes whose waiting requests may have become movable since the last scan: their own
    /// arrivals and synchronous completions, and for R4 the service of the request a child
    /// waits for (`held_on`) and the exit of a child a parent waits for. The rules look only at
    /// a process's own state, and a process scanned again with none of these in between moves
    /// nothing more, so scanning only these makes the same moves as scanning every process.
    dirty: Vec<u32>,
    /// R4: the children whose first request waits for the service of each unserved serial.
    held_on: HashMap<u64, Vec<u32>>,
    /// Tests: scan every process with waiting requests instead of the dirty ones (the two must
    /// make the same moves).
    #[cfg(test)]
    scan_all: bool,
    /// The process queue: requests in the scheduler or in service (the matcher holds them until
    /// dispatch, the request in service after it).
    process_queue: usize,
    matcher: PartMatcher<Pending>,
    procs: HashMap<u32, ProcState>,
    /// R4: the parents waiting for each process to exit, with the serial their wait holds from
    /// (to find the parent's entry without walking its list).
    waiters: HashMap<u32, Vec<(u32, u64)>>,
    /// Serials served (for R4's "served" check): the smallest serial not yet served is enough
    /// only in FIFO order, so keep the set of unserved serials instead.
    unserved: Unserved,
    in_service: Option<InService>,
    completed: Vec<VirtualCompletion>,
    /// Emptied vectors kept for their allocations (requests moved in a scan, parts of a request
    /// in service).
    moved: Vec<Pending>,
    spare_parts: Vec<(u32, Pending)>,
    /// R6: synchronous reads (`awaits_real`) not yet completed in the running system.
    real_open: rustc_hash::FxHashSet<u64>,
    /// R6: requests served here whose completion the scheduler has not been told, with the
    /// reads among their parts still open in the running system.
    deferred: Vec<(IoRequest, Vec<u64>)>,
}

impl VirtualDisk {
    /// A virtual disk with its own scheduler and table, requests in pages of `page_bytes`.
    pub fn new(sched: Box<dyn Scheduler>, table: TableModel, page_bytes: u64) -> VirtualDisk {
        VirtualDisk {
            sched,
            table,
            page_bytes,
            head: Head::default(),
            clock: 0,
            next_serial: 0,
            shared: VecDeque::new(),
            waiting: HashMap::default(),
            waiting_len: 0,
            dirty: Vec::new(),
            held_on: HashMap::default(),
            #[cfg(test)]
            scan_all: false,
            process_queue: 0,
            matcher: PartMatcher { pending: Vec::new() },
            procs: HashMap::default(),
            waiters: HashMap::default(),
            unserved: Default::default(),
            in_service: None,
            completed: Vec::new(),
            moved: Vec::new(),
            spare_parts: Vec::new(),
            real_open: Default::default(),
            deferred: Vec::new(),
        }
    }

    pub fn table(&self) -> &TableModel {
        &self.table
    }

    /// The table, for on-line updates from the real disk.
    pub fn table_mut(&mut self) -> &mut TableModel {
        &mut self.table
    }

    /// Requests not yet completed (shared, waiting, scheduler, service).
    pub fn outstanding(&self) -> usize {
        self.shared.len() + self.waiting_len + self.process_queue
    }

    /// The virtual disk's time.
    pub fn now(&self) -> u64 {
        self.clock
    }

    /// R4: `child` is created by `parent` now (after every request `parent` has issued so far);
    /// with `waits`, the parent's new requests wait for the child's exit.
    pub fn fork(&mut self, parent: u32, child: u32, waits: bool) {
        let after = self.procs.get(&parent).and_then(|p| p.last_serial);
        let c = self.procs.entry(child).or_default();
        if !c.started {
            c.start_after = after;
            if let Some(s) = after.filter(|s| self.unserved.contains(s)) {
                self.held_on.entry(s).or_default().push(child);
            }
        }
        if waits {
            self.wait(parent, child);
        }
    }

    /// R4: `parent` waits now for `child` to exit: none of its new requests moves until then.
    pub fn wait(&mut self, parent: u32, child: u32) {
        let from = self.next_serial;
        let w = &mut self.procs.entry(parent).or_default().waiting_for;
        debug_assert!(w.back().is_none_or(|&(_, f)| f <= from), "serials only grow");
        w.push_back((child, from));
        self.waiters.entry(child).or_default().push((parent, from));
    }

    /// R4: `pid` exited in the real system. A process exits after the reads it issued: it waited
    /// for its synchronous reads and then used the pages of its readahead, so on the virtual disk
    /// the exit takes effect once every read `pid` issued has been served here. Until then a
    /// parent waiting for it stays held. (Taking the real exit at once would let a virtual disk
    /// that lags the real one run a waiting parent's, and so the next child's, requests beside the
    /// exited child's unserved ones: an interleaving the real system never had.)
    pub fn exit(&mut self, pid: u32, now_ns: u64) {
        self.advance(now_ns);
        match self.procs.get_mut(&pid) {
            Some(p) if p.reads_unserved > 0 => p.exit_pending = true,
            _ => self.exited(pid),
        }
        self.move_waiting();
    }

    /// `pid`'s exit takes effect on the virtual disk: a parent waiting for it may go on.
    fn exited(&mut self, pid: u32) {
        self.sched.process_exit(pid, self.clock);
        for (parent, from) in self.waiters.remove(&pid).unwrap_or_default() {
            if let Some(p) = self.procs.get_mut(&parent) {
                // Its entry: among those of serial `from`, found by bisection (the list is in
                // serial order); every entry of `pid` has one in `waiters`, so removing one per
                // entry there removes all of them.
                let w = &mut p.waiting_for;
                let first = w.partition_point(|&(_, f)| f < from);
                if let Some(i) = (first..w.len()).take_while(|&i| w[i].1 == from).find(|&i| w[i].0 == pid) {
                    w.remove(i);
                }
            }
            self.dirty.push(parent);
        }
        // An exited process issues nothing more: only a pending R4 hold of its own matters.
        if self.procs.get(&pid).is_some_and(|p| p.start_after.is_none() && p.waiting_for.is_empty() && p.sync_in_flight == 0 && p.reads_unserved == 0) && !self.waiting.contains_key(&pid) {
            self.procs.remove(&pid);
        }
    }

    /// A process event of the trace, as it takes effect in the real system at `now_ns`: a fork
    /// ([`VirtualDisk::fork`], not waiting), a wait ([`VirtualDisk::wait`]) or an exit
    /// ([`VirtualDisk::exit`]).
    pub fn process_event(&mut self, e: &ProcessEvent, now_ns: u64) {
        match e.kind {
            ProcessEventKind::Fork => {
                self.advance(now_ns);
                self.fork(e.ppid, e.pid, false);
            }
            ProcessEventKind::Wait => {
                self.advance(now_ns);
                self.wait(e.ppid, e.pid);
            }
            ProcessEventKind::Exit => self.exit(e.pid, now_ns),
            // A launch is the replay's (relaunching benchmarks), not the kernel's: the launched
            // process is new, as a process met first is.
            ProcessEventKind::Launch => {}
        }
    }

    /// A copy arrives at `now_ns` (non-decreasing).
    pub fn submit(&mut self, req: VirtualRequest, now_ns: u64) {
        self.advance(now_ns);
        let serial = self.next_serial;
        self.next_serial += 1;
        let st = self.procs.entry(req.pid).or_default();
        st.started = true;
        st.last_serial = Some(serial);
        st.reads_unserved += (req.op != Op::Write) as u32;
        if req.awaits_real && req.sync && req.op != Op::Write {
            self.real_open.insert(req.id);
        }
        self.unserved.insert(serial);
        self.shared.push_back(Pending { req, arrival_ns: now_ns, queued_ns: 0, serial });
        self.move_waiting();
    }

    /// Runs the disk's events up to `t`.
    ///
    /// An idle disk starts its next request at an instant only once that instant is over (when the
    /// disk is advanced past it), so that every copy arriving at the same time is in the scheduler
    /// first and can be merged, as the real scheduler merges the runs the page cache hands it
    /// together (e.g. the demand block and the readahead block of one 8 KiB read).
    pub fn advance(&mut self, t: u64) {
        loop {
            if let Some(s) = &self.in_service {
                if s.finish_ns > t {
                    break;
                }
                self.clock = s.finish_ns;
                self.complete();
                self.move_waiting();
                continue;
            }
            if self.sched.queued() == 0 || self.clock >= t {
                break;
            }
            if self.dispatch() {
                continue;
            }
            // Requests held back by the scheduler: its wake-up, if it falls before `t`.
            match self.sched.wake_at() {
                Some(w) if w > self.clock && w < t => self.clock = w,
                _ => break,
            }
        }
        self.clock = self.clock.max(t);
    }

    /// R6: the running system completed the synchronous read `id` at `now_ns` (non-decreasing,
    /// as for arrivals): if it was served here already, the scheduler hears of it now.
    pub fn real_done(&mut self, id: u64, now_ns: u64) {
        self.advance(now_ns);
        if !self.real_open.remove(&id) {
            return;
        }
        let mut i = 0;
        while i < self.deferred.len() {
            let open = &mut self.deferred[i].1;
            open.retain(|&x| x != id);
            if open.is_empty() {
                let (req, _) = self.deferred.remove(i);
                self.sched.completed(&req, self.clock);
            } else {
                i += 1;
            }
        }
    }

    /// Withdraws, at `now_ns`, the copies still in the shared and waiting queues that `withdraw`
    /// selects: they never enter the scheduler and are not reported as completed. For the
    /// dependency rules they count as served (a child held on one of them may start, an exit
    /// waiting for them takes effect). Copies in the scheduler or in service are left to finish:
    /// the scheduler's queue is a black box (l.110). Returns the ids withdrawn, in arrival order.
    pub fn withdraw_waiting(&mut self, now_ns: u64, mut withdraw: impl FnMut(&VirtualRequest) -> bool) -> Vec<u64> {
        self.advance(now_ns);
        let mut out: Vec<(u64, u64)> = Vec::new();
        let mut exits = Vec::new();
        let mut pids: Vec<u32> = self.waiting.keys().copied().collect();
        pids.sort_unstable();
        for pid in pids {
            let q = self.waiting.get_mut(&pid).expect("listed");
            let before = q.items.len();
            let mut dropped = Vec::new();
            q.items.retain(|p| {
                let w = withdraw(&p.req);
                if w {
                    dropped.push(*p);
                }
                !w
            });
            if dropped.is_empty() {
                continue;
            }
            q.writes -= dropped.iter().filter(|p| p.req.op == Op::Write).count();
            self.waiting_len -= before - q.items.len();
            if q.items.is_empty() {
                self.waiting.remove(&pid);
            }
            for p in dropped {
                self.real_open.remove(&p.req.id);
                self.served(&p, &mut exits);
                out.push((p.serial, p.req.id));
            }
            self.dirty.push(pid);
        }
        for pid in exits {
            self.exited(pid);
        }
        self.move_waiting();
        out.sort_unstable();
        out.into_iter().map(|(_, id)| id).collect()
    }

    /// Runs until every request that can complete has (the end of a run).
    pub fn drain(&mut self) {
        for (req, _) in std::mem::take(&mut self.deferred) {
            self.sched.completed(&req, self.clock);
        }
        self.real_open.clear();
        loop {
            let next = match &self.in_service {
                Some(s) => s.finish_ns,
                None if self.sched.queued() > 0 => match self.sched.wake_at() {
                    Some(w) if w > self.clock => w + 1,
                    _ => self.clock + 1,
                },
                None => break,
            };
            let before = (self.outstanding(), self.in_service.is_some());
            self.advance(next);
            let stuck = self.in_service.is_none() && (self.outstanding(), false) == before;
            if stuck && self.sched.wake_at().map_or(true, |w| w <= self.clock) {
                // A scheduler holding requests with no wake-up: nothing more can happen.
                break;
            }
        }
    }

    /// What completed since the last call, in completion order.
    pub fn take_completed(&mut self) -> Vec<VirtualCompletion> {
        std::mem::take(&mut self.completed)
    }

    /// [`VirtualDisk::take_completed`] into `buf` (its contents dropped), keeping both vectors'
    /// allocations.
    pub fn swap_completed(&mut self, buf: &mut Vec<VirtualCompletion>) {
        buf.clear();
        std::mem::swap(&mut self.completed, buf);
    }

    /// The move rules R1-R4, scanning each process's waiting requests in arrival order; the
    /// requests moved enter the scheduler in global arrival order.
    fn move_waiting(&mut self) {
        for p in self.shared.drain(..) {
            let q = self.waiting.entry(p.req.pid).or_default();
            q.writes += (p.req.op == Op::Write) as usize;
            if p.req.op != Op::Write {
                q.max_behind = q.max_behind.max(p.req.issued_behind.unwrap_or(u32::MAX));
                q.max_queued = q.max_queued.max(p.req.issued_queued.unwrap_or(u32::MAX));
                q.dispatch_counts |= p.req.issued_queued.is_some();
            }
            q.items.push_back(p);
            self.waiting_len += 1;
            self.dirty.push(p.req.pid);
        }
        let mut moved = std::mem::take(&mut self.moved);
        let mut pids = std::mem::take(&mut self.dirty);
        #[cfg(test)]
        if self.scan_all {
            pids = self.waiting.keys().copied().collect();
        }
        pids.sort_unstable();
        pids.dedup();
        for &pid in &pids {
            let Some(q) = self.waiting.get_mut(&pid) else { continue };
            let st = self.procs.entry(pid).or_default();
            // R4: a child before its parent's last request is served, a parent waiting for a child.
            if st.start_after.is_some_and(|s| self.unserved.contains(&s)) {
                continue;
            }
            // A waiting parent's requests issued since the wait stay.
            let held_from = st.waiting_for.front().map_or(u64::MAX, |&(_, from)| from);
            st.start_after = None;
            // Whether a synchronous read of this process was passed over earlier in the scan:
            // from then on only writes move (R2, R3).
            let mut sync_ahead = false;
            let mut writes_left = q.writes;
            // R5: the process's reads unserved ahead of the one scanned (process queue, and
            // passed over in the waiting queue).
            let mut reads_ahead = st.reads_queued;
            // Of those, the ones not dispatched (in the scheduler, or passed over).
            let mut undispatched_ahead = st.reads_undispatched;
            let mut i = 0;
            while i < q.items.len() {
                if ((sync_ahead || reads_ahead > q.max_behind || undispatched_ahead > q.max_queued) && writes_left == 0) || q.items[i].serial >= held_from {
                    break;
                }
                let r = q.items[i].req;
                let behind_ok = r.issued_behind.map_or(true, |n| reads_ahead <= n) && r.issued_queued.map_or(true, |n| undispatched_ahead <= n);
                let eligible = match (r.op, r.sync) {
                    (Op::Write, _) => true,
                    (_, true) => !sync_ahead && st.sync_in_flight == 0 && behind_ok,
                    (_, false) => !sync_ahead && behind_ok,
                };
                if r.op == Op::Write {
                    writes_left -= 1;
                }
                if eligible {
                    let p = q.items.remove(i).expect("in range");
                    if r.op == Op::Write {
                        q.writes -= 1;
                    } else {
                        st.sync_in_flight += r.sync as u32;
                        st.reads_queued += 1;
                        st.reads_undispatched += 1;
                        reads_ahead += 1;
                        undispatched_ahead += 1;
                    }
                    moved.push(p);
                } else {
                    sync_ahead |= r.op != Op::Write && r.sync;
                    reads_ahead += (r.op != Op::Write) as u32;
                    undispatched_ahead += (r.op != Op::Write) as u32;
                    i += 1;
                }
            }
            if q.items.is_empty() {
                self.waiting.remove(&pid);
            }
        }
        pids.clear();
        self.dirty = pids;
        if moved.is_empty() {
            self.moved = moved;
            return;
        }
        self.waiting_len -= moved.len();
        moved.sort_unstable_by_key(|p| p.serial);
        for mut p in moved.drain(..) {
            p.queued_ns = self.clock;
            self.enqueue(p);
        }
        self.moved = moved;
    }

    /// Puts a moved request in the scheduler and the process queue (its process's
    /// `sync_in_flight` is already counted).
    fn enqueue(&mut self, p: Pending) {
        let r = p.req;
        self.matcher.add(r.op, r.block, r.blocks, p);
        self.process_queue += 1;
        let io = IoRequest {
            op: r.op,
            device: 0,
            block: r.block,
            blocks: r.blocks,
            sync: r.sync,
            cause: if r.op == Op::Write { Cause::Writeback } else if r.sync { Cause::Demand } else { Cause::Prefetch },
            arrival_ns: self.clock,
            pid: r.pid,
        };
        self.sched.add(io, self.clock);
    }

    /// Starts the scheduler's next request if the disk is idle; whether one started.
    fn dispatch(&mut self) -> bool {
        if self.in_service.is_some() || self.sched.queued() == 0 {
            return false;
        }
        let Some(req) = self.sched.dispatch(self.clock) else { return false };
        let sectors_per_page = self.page_bytes / SECTOR;
        let d = self.head.advance(req.block * sectors_per_page, req.blocks as u64 * sectors_per_page);
        let io_ns = self.table.estimate(req.op, req.blocks as u64 * self.page_bytes, d);
        let mut parts = std::mem::take(&mut self.spare_parts);
        self.matcher.take_into(req.op, req.block, req.blocks, &mut parts);
        for (_, p) in &parts {
            if p.req.op != Op::Write {
                if let Some(st) = self.procs.get_mut(&p.req.pid) {
                    st.reads_undispatched -= 1;
                    // Only a waiting read that carries a dispatch count can move on a dispatch
                    // (R5); every other rule waits for arrivals and completions.
                    if self.waiting.get(&p.req.pid).is_some_and(|q| q.dispatch_counts) {
                        self.dirty.push(p.req.pid);
                    }
                }
            }
        }
        self.in_service = Some(InService { req, io_ns, finish_ns: self.clock + io_ns, parts, by_current: true });
        #[cfg(test)]
        let scan = self.scan_all || !self.dirty.is_empty();
        #[cfg(not(test))]
        let scan = !self.dirty.is_empty();
        if scan {
            self.move_waiting();
        }
        true
    }

    /// `p` is served here as far as R4 goes (completed, or withdrawn): a child held on it may
    /// start, and its process's pending exit, once nothing of it is left unserved, joins `exits`.
    fn served(&mut self, p: &Pending, exits: &mut Vec<u32>) {
        if self.unserved.remove(&p.serial) && !self.held_on.is_empty() {
            if let Some(children) = self.held_on.remove(&p.serial) {
                self.dirty.extend(children);
            }
        }
        if p.req.op != Op::Write {
            if let Some(st) = self.procs.get_mut(&p.req.pid) {
                st.reads_unserved -= 1;
                if st.exit_pending && st.reads_unserved == 0 {
                    exits.push(p.req.pid);
                }
            }
        }
    }

    fn complete(&mut self) {
        let mut s = self.in_service.take().expect("a request in service");
        let total: u64 = s.parts.iter().map(|(n, _)| *n as u64).sum::<u64>().max(1);
        self.process_queue -= s.parts.len();
        let mut exits = Vec::new();
        let mut open = Vec::new();
        for (n, p) in s.parts.drain(..) {
            if p.req.awaits_real && self.real_open.contains(&p.req.id) {
                open.push(p.req.id);
            }
            self.served(&p, &mut exits);
            if p.req.op != Op::Write {
                if let Some(st) = self.procs.get_mut(&p.req.pid) {
                    st.sync_in_flight -= p.req.sync as u32;
                    st.reads_queued -= 1;
                }
                // R2 and R5 look at the reads in the process queue.
                self.dirty.push(p.req.pid);
            }
            self.completed.push(VirtualCompletion {
                id: p.req.id,
                op: p.req.op,
                blocks: p.req.blocks,
                sync: p.req.sync,
                arrival_ns: p.arrival_ns,
                queued_ns: p.queued_ns,
                finish_ns: s.finish_ns,
                io_ns: s.io_ns as f64 * n as f64 / total as f64,
            });
        }
        if s.by_current {
            if open.is_empty() {
                self.sched.completed(&s.req, s.finish_ns);
            } else {
                self.deferred.push((s.req, open));
            }
        }
        // Exits waiting for these reads take effect after the scheduler heard of the completion.
        for pid in exits {
            self.exited(pid);
        }
        self.spare_parts = s.parts;
    }

    /// The time of the disk's next event with no new arrival: the completion of the request in
    /// service, else, with requests queued, the scheduler's wake-up or (a dispatch due) the
    /// disk's time; `None` when idle and empty. For callers that step the disk one event at a
    /// time and react to each completion.
    pub fn next_event_ns(&self) -> Option<u64> {
        match &self.in_service {
            Some(s) => Some(s.finish_ns),
            None if self.sched.queued() > 0 => Some(self.sched.wake_at().filter(|&w| w > self.clock).unwrap_or(self.clock)),
            None => None,
        }
    }

    /// The table, giving the disk up (a new disk can start from what it learnt).
    pub fn into_table(self) -> TableModel {
        self.table
    }

    /// The scheduler's name.
    pub fn scheduler_name(&self) -> String {
        self.sched.name()
    }

    /// Puts `sched` in place of the disk's scheduler at `now_ns` (after advancing to it), as
    /// [`crate::sched::hand_over`] does for a real device: the requests queued move to `sched`
    /// oldest first, the one in service finishes (and its completion is told to neither), the
    /// waiting and process queues are unchanged. `None`, with nothing changed, when the old
    /// scheduler cannot hand its queue over.
    pub fn replace_scheduler(&mut self, mut sched: Box<dyn Scheduler>, now_ns: u64) -> Option<usize> {
        self.advance(now_ns);
        let n = crate::sched::hand_over(&mut *self.sched, &mut *sched, self.clock)?;
        self.sched = sched;
        // Completions the old scheduler was still to hear of are told to neither.
        self.deferred.clear();
        if let Some(s) = &mut self.in_service {
            s.by_current = false;
        }
        Some(n)
    }
}

#[cfg(test)]
mod tests;
