//! Per-process accounting and application control in the miss-ratio engine.
//!
//! With `per_process` (and always with an application-controlled policy such as LRU-SP) a run
//! counts requests and hits per process. With hints it also delivers each managing process's
//! caching calls to the policy ([`Policy::control`]): its level policies and file priorities
//! before the first request, and each temporary priority before the process's request number
//! `at`. The oracle ([`HintsSpec::Oracle`]) makes every process an ideal application that knows
//! its next `lookahead` references (counted in cache references: blocks in block mode): after
//! each reference it gives the block the temporary priority minus the position of its next
//! reference when that falls within the window (optimal replacement, ACFS l.562-565), or the
//! lowest priority when it does not; a block whose next reference enters the window later gets
//! its priority then. An application-controlled policy is also told the file of each reference
//! ([`Policy::next_file`]) and, after a process's last request, that it exited
//! ([`Policy::process_exit`]).
//!
//! File identity: a request's file and the block's index in it (in pages of the page size in
//! block mode; in object mode the object's index counted in objects of the request's length).
//! A request without a file belongs to its device, as the file [`device_file`] names, with the
//! block number (block mode) or offset (object mode) as index.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

use crate::cache::{CacheControl, FileBlock, Key, LevelPolicy, Policy};
use crate::engine::future::next_use_positions;
use crate::hints::{HintsSpec, TempHint, TraceFacts};
use crate::trace::Request;

/// The pseudo-file id of the blocks of `device` that belong to no file.
pub fn device_file(device: u32) -> u64 {
    u64::MAX - device as u64
}

/// The file block of a reference: block `b` of request `r` in block mode (`page_size` given),
/// else the request's object.
pub fn file_block(r: &Request, page_size: Option<u64>, b: u64) -> FileBlock {
    match (r.file, page_size) {
        (Some(f), Some(ps)) => FileBlock { file: f.id, block: (f.offset + (b * ps).max(r.offset) - r.offset) / ps },
        (Some(f), None) => FileBlock { file: f.id, block: f.offset / r.length.max(1) },
        (None, Some(_)) => FileBlock { file: device_file(r.device), block: b },
        (None, None) => FileBlock { file: device_file(r.device), block: r.offset },
    }
}

/// One process's counters in a result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessResult {
    pub pid: u32,
    pub requests: u64,
    pub hits: u64,
    pub misses: u64,
    pub miss_ratio: f64,
    /// Block mode only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_hits: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_misses: Option<u64>,
}

#[derive(Debug, Clone, Copy, Default)]
struct Counts {
    requests: u64,
    hits: u64,
    blocks: u64,
    block_hits: u64,
}

/// What the pre-pass over the trace learns for application control.
#[derive(Debug, Clone, Default)]
pub struct TracePlan {
    pub facts: TraceFacts,
    /// For the oracle: each process's references (keys and file blocks), in order.
    pub refs: FxHashMap<u32, (Vec<Key>, Vec<FileBlock>)>,
    /// For prefetching from access lists: where each file block referenced lies (block key),
    /// and each file's size in blocks (one past its largest block referenced).
    pub locations: FxHashMap<FileBlock, Key>,
    pub file_blocks: FxHashMap<u64, u64>,
}

impl TracePlan {
    /// Adds the trace's next request; `keys` are its cache references.
    pub fn add(&mut self, r: &Request, page_size: Option<u64>, keys: impl Iterator<Item = (Key, u64)>, oracle: bool) {
        self.facts.add(r);
        if oracle {
            let e = self.refs.entry(r.pid).or_default();
            for (k, b) in keys {
                e.0.push(k);
                e.1.push(file_block(r, page_size, b));
            }
        }
    }
}

impl TracePlan {
    /// The pre-pass of application control over a whole trace: its processes and files, and (for
    /// the oracle) each process's references, in blocks of `page_size` (block mode, the timed
    /// stack) or one per request (object mode, `None`). The reader must number devices as the
    /// run that uses the plan does (the same [`crate::trace::devices::DeviceTable`]), so that the
    /// keys and the pseudo-files of fileless requests name the devices the policy sees.
    /// With `locations` (block mode), it also records where each file block lies.
    pub fn scan(reader: &mut dyn crate::trace::TraceReader, page_size: Option<u64>, oracle: bool, locations: bool) -> Result<TracePlan, crate::error::TraceError> {
        let mut plan = TracePlan::default();
        let mut buf = Vec::with_capacity(1 << 14);
        loop {
            buf.clear();
            if reader.read_batch(&mut buf, 1 << 14)? == 0 {
                return Ok(plan);
            }
            for r in &buf {
                let (first, end) = match page_size {
                    Some(ps) => r.block_range(ps),
                    None => (0, 1),
                };
                let keys = (first..end).map(|b| match page_size {
                    Some(_) => (crate::cache::block_key(r.device, b), b),
                    None => (crate::trace::devices::object_key(r), b),
                });
                plan.add(r, page_size, keys, oracle);
                if let (true, Some(ps)) = (locations, page_size) {
                    for b in first..end {
                        let fb = file_block(r, Some(ps), b);
                        plan.locations.insert(fb, crate::cache::block_key(r.device, b));
                        let n = plan.file_blocks.entry(fb.file).or_default();
                        *n = (*n).max(fb.block + 1);
                    }
                }
            }
        }
    }
}

impl TracePlan {
    /// Each managing process's access list for prefetching: its `file_list` (each file whole,
    /// in the order given) then its `block_list` chunks, as blocks placed where the trace
    /// references them (a block the trace never references cannot be placed and is left out).
    pub fn access_lists(&self, hints: &crate::hints::Hints) -> BTreeMap<u32, Vec<crate::prefetch::ListBlock>> {
        let place = |file: u64, block: u64| {
            self.locations.get(&FileBlock { file, block }).map(|&k| {
                let (device, block_no) = crate::cache::split_block_key(k);
                crate::prefetch::ListBlock { device, block: block_no, file: FileBlock { file, block } }
            })
        };
        let mut out = BTreeMap::new();
        for p in &hints.processes {
            let mut list = Vec::new();
            for &f in &p.file_list {
                let n = self.file_blocks.get(&f).copied().unwrap_or(0);
                list.extend((0..n).filter_map(|b| place(f, b)));
            }
            for &(f, a, b) in &p.block_list {
                list.extend((a..=b).filter_map(|x| place(f, x)));
            }
            if !list.is_empty() {
                out.insert(p.pid, list);
            }
        }
        out
    }
}

/// One oracle process's knowledge of its future.
struct Foresight {
    fbs: Vec<FileBlock>,
    next: Vec<u64>,
    prev: Vec<u64>,
    pos: usize,
}

/// Lowest priority: blocks not referenced within the oracle's window.
const FAR: i32 = i32::MIN;

fn window_prio(pos: u64) -> i32 {
    -(pos.min(i32::MAX as u64 - 1) as i32)
}

/// Per-process state of one run.
pub struct Processes {
    counts: FxHashMap<u32, Counts>,
    controlled: bool,
    started: bool,
    initial: Vec<CacheControl>,
    temps: FxHashMap<u32, (Vec<TempHint>, usize)>,
    request_no: FxHashMap<u32, u64>,
    /// Requests of each process in the whole trace: it exits after the last.
    totals: FxHashMap<u32, u64>,
    lookahead: u64,
    foresight: FxHashMap<u32, Foresight>,
}

impl Processes {
    /// Counting only.
    pub fn counting() -> Processes {
        Processes {
            counts: FxHashMap::default(),
            controlled: false,
            started: true,
            initial: Vec::new(),
            temps: FxHashMap::default(),
            request_no: FxHashMap::default(),
            totals: FxHashMap::default(),
            lookahead: 0,
            foresight: FxHashMap::default(),
        }
    }

    /// Counting and application control of an application-controlled policy, from `hints` and
    /// the pre-pass `plan`.
    pub fn controlled(hints: Option<&HintsSpec>, plan: &TracePlan) -> Processes {
        let mut p = Processes::counting();
        p.controlled = true;
        p.started = false;
        p.totals = plan.facts.pids.iter().map(|(&pid, &n)| (pid, n)).collect();
        match hints {
            Some(HintsSpec::File(h)) => {
                for ph in &h.processes {
                    p.initial.extend(ph.initial_controls());
                    let mut t = ph.temp.clone();
                    t.sort_by_key(|t| t.at);
                    p.temps.insert(ph.pid, (t, 0));
                }
            }
            Some(HintsSpec::Oracle { lookahead }) => {
                p.lookahead = *lookahead;
                for &pid in plan.facts.pids.keys() {
                    p.initial.push(CacheControl::SetPolicy { pid, prio: 0, policy: LevelPolicy::Lru });
                    p.initial.push(CacheControl::SetPolicy { pid, prio: FAR, policy: LevelPolicy::Lru });
                }
                for (&pid, (keys, fbs)) in &plan.refs {
                    let next = next_use_positions(keys);
                    let mut prev = vec![u64::MAX; keys.len()];
                    for (i, &n) in next.iter().enumerate() {
                        if n != u64::MAX {
                            prev[n as usize] = i as u64;
                        }
                    }
                    p.foresight.insert(pid, Foresight { fbs: fbs.clone(), next, prev, pos: 0 });
                }
            }
            None => {}
        }
        p
    }

    /// Whether the policy is told files, calls and exits.
    pub fn controlled_policy(&self) -> bool {
        self.controlled
    }

    /// Before request `r`: the initial calls (once), then the process's temporary priorities
    /// due at this request.
    pub fn before_request<P: Policy + ?Sized>(&mut self, policy: &mut P, r: &Request) {
        if !self.controlled {
            return;
        }
        if !self.started {
            self.started = true;
            for c in &self.initial {
                policy.control(c);
            }
        }
        let no = *self.request_no.get(&r.pid).unwrap_or(&0);
        if let Some((list, next)) = self.temps.get_mut(&r.pid) {
            while *next < list.len() && list[*next].at <= no {
                let t = list[*next];
                policy.control(&CacheControl::SetTempPri { pid: r.pid, file: t.file, first: t.first, last: t.last, prio: t.prio });
                *next += 1;
            }
        }
    }

    /// After one cache reference of `pid` (a block in block mode): the oracle's priorities.
    pub fn after_reference<P: Policy + ?Sized>(&mut self, policy: &mut P, pid: u32) {
        let n = self.lookahead;
        let Some(f) = self.foresight.get_mut(&pid) else { return };
        let i = f.pos;
        f.pos += 1;
        if i >= f.fbs.len() {
            return;
        }
        let fb = f.fbs[i];
        let next = f.next[i];
        let prio = if next != u64::MAX && next - i as u64 <= n { window_prio(next) } else { FAR };
        policy.control(&CacheControl::SetTempPri { pid, file: fb.file, first: fb.block, last: fb.block, prio });
        // The reference entering the window: its block's next reference is now known, if its
        // previous reference saw it outside the window.
        let j = i as u64 + n;
        if (j as usize) < f.fbs.len() {
            let prev = f.prev[j as usize];
            if prev != u64::MAX && prev <= i as u64 && j - prev > n {
                let e = f.fbs[j as usize];
                policy.control(&CacheControl::SetTempPri { pid, file: e.file, first: e.block, last: e.block, prio: window_prio(j) });
            }
        }
    }

    /// After a request of process `pid` (counted under `pid`: the trace's, or the run's own
    /// numbering of processes): counts, and the exit of a process that made its last request.
    pub fn after_request<P: Policy + ?Sized>(&mut self, policy: &mut P, pid: u32, hit: bool, blocks: u64, block_hits: u64) {
        let c = self.counts.entry(pid).or_default();
        c.requests += 1;
        c.hits += hit as u64;
        c.blocks += blocks;
        c.block_hits += block_hits;
        if self.controlled {
            let no = self.request_no.entry(pid).or_default();
            *no += 1;
            if self.totals.get(&pid) == Some(no) {
                policy.process_exit(pid);
            }
        }
    }

    /// The results, by pid.
    pub fn results(&self, block_mode: bool) -> Vec<ProcessResult> {
        let sorted: BTreeMap<u32, Counts> = self.counts.iter().map(|(&p, &c)| (p, c)).collect();
        sorted
            .into_iter()
            .map(|(pid, c)| ProcessResult {
                pid,
                requests: c.requests,
                hits: c.hits,
                misses: c.requests - c.hits,
                miss_ratio: if c.requests == 0 { 0.0 } else { (c.requests - c.hits) as f64 / c.requests as f64 },
                blocks: block_mode.then_some(c.blocks),
                block_hits: block_mode.then_some(c.block_hits),
                block_misses: block_mode.then_some(c.blocks - c.block_hits),
            })
            .collect()
    }
}
