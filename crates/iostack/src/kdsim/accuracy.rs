//! The virtual disk's accuracy against the real (modelled) disk (KDSim paper §6.1, Fig. 3 and
//! Table 1, l.205-240; spec K14).
//!
//! [`AccuracyStage`] is a block-layer stage that passes every request on unchanged and gives the
//! virtual disk a copy of each (pid, type, blocks, sync flag) as it enters the real scheduler
//! (l.99). A read's copy also carries how many reads of its process were outstanding at the real
//! disk when it was issued, counted from the copies and the real completions (the virtual disk's
//! rule R5: "whether a request was issued when the previous one was complete or not", l.91).
//! A synchronous read's real completion is reported to the virtual disk, whose scheduler hears of
//! the copy's completion no earlier (rule R6: the process was blocked until then).
//! When the real device serves a request, its service time (hand-over to completion, as in
//! training) updates the virtual disk's table in the cell of its size and its distance from the
//! previous request the real disk served (l.83); the update is applied when the real request
//! completes, so the virtual disk never uses a time the kernel could not know yet.
//!
//! With REDCAP on (Table 1, l.236-240: "the real and virtual disks serve the requests issued by
//! REDCAP for each cache miss"), the stage is also REDCAP, always active (`blk::redcap`, no ADA):
//! the requests entering the real scheduler, and so the copies, are REDCAP's segment reads and the
//! writes; reads REDCAP serves from its memory reach neither disk.
//!
//! Windows (K14): the requests entering the scheduler, numbered in arrival order, in windows of
//! `window` (1000 in the paper). Each request's I/O time on either disk is its share, by blocks,
//! of the I/O time of the (possibly merged) request that served it; a window's difference is
//! (Σ VD − Σ RD) / Σ RD × 100 % (negative: the virtual disk is faster), and the run's figure is the
//! mean of the absolute differences over the windows (the last window may be partial and counts
//! as one).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use rustc_hash::FxHashMap as HashMap;

use super::virtual_disk::{PartMatcher, VirtualDisk, VirtualRequest};
use crate::blk::redcap::{Partial, Redcap, RedcapConfig};
use crate::blk::{BlockStage, StageActions, Submit};
use crate::device::table::{Head, TableModel};
use crate::device::{Service, SECTOR};
use crate::sched::{IoRequest, Scheduler};
use crate::trace::Op;

/// One window's sums.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Window {
    /// Number of the window's first request (0-based, in arrival order).
    pub start: u64,
    pub requests: u64,
    pub vd_ms: f64,
    pub rd_ms: f64,
    /// (vd − rd) / rd × 100; `None` when the real disk took no time.
    pub diff_pct: Option<f64>,
}

/// The accuracy of a run.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Accuracy {
    pub window: u64,
    pub windows: Vec<Window>,
    /// Mean |diff_pct| over the windows that have one.
    pub mean_abs_diff_pct: Option<f64>,
    pub requests: u64,
    /// Cells of the virtual disk's table trained at the end.
    pub trained_cells: usize,
}

/// A table update waiting for its real request's completion.
struct Update {
    op: Op,
    block: u64,
    blocks: u32,
    distance: u64,
    io_ns: u64,
}

/// What the real disk tells the virtual disk's table (l.83): each dispatched request's distance
/// from the previous one the real disk served and its measured I/O time (hand-over to completion,
/// or from the previous completion when it queued in the device), applied to the table when the
/// request completes, so that no look-up uses a time the kernel could not know yet.
#[derive(Default)]
pub(crate) struct RealFeed {
    head: Head,
    last_finish: u64,
    updates: VecDeque<Update>,
}

impl RealFeed {
    /// `req` was dispatched at `now_ns` with `service`: its distance (bytes) and I/O time (ns).
    pub(crate) fn dispatched(&mut self, req: &IoRequest, service: &Service, now_ns: u64, page_bytes: u64) -> (u64, u64) {
        let spp = page_bytes / SECTOR;
        let d = self.head.advance(req.block * spp, req.blocks as u64 * spp);
        let io = service.finish_ns - now_ns.max(self.last_finish).min(service.finish_ns);
        self.last_finish = service.finish_ns;
        self.updates.push_back(Update { op: req.op, block: req.block, blocks: req.blocks, distance: d, io_ns: io });
        (d, io)
    }

    /// `req` completed: its observation goes into `table`.
    pub(crate) fn completed(&mut self, req: &IoRequest, table: &mut TableModel, page_bytes: u64) {
        let i = self.updates.iter().position(|u| u.op == req.op && u.block == req.block && u.blocks == req.blocks).unwrap_or(0);
        if let Some(u) = self.updates.remove(i) {
            table.observe(u.op, u.blocks as u64 * page_bytes, u.distance, u.io_ns);
        }
    }
}

struct Inner {
    vd: VirtualDisk,
    page_bytes: u64,
    window: u64,
    next_id: u64,
    /// Copies not yet dispatched by the real disk: (id, pid).
    real: PartMatcher<(u64, u32, bool)>,
    /// Reads of each process outstanding at the real disk (R5 of the virtual disk).
    real_reads: HashMap<u32, u32>,
    /// Real requests dispatched and not completed, with the copies and processes of their reads
    /// (and whether each copy is a synchronous read).
    real_in_flight: VecDeque<(Op, u64, u32, Vec<(u64, u32, bool)>)>,
    /// Real requests dispatched and not completed, with their table update.
    feed: RealFeed,
    /// Per window: VD and RD I/O time, ns.
    sums: Vec<(f64, f64)>,
    /// Scratch for the parts of a dispatched request, and for the virtual disk's completions.
    parts: Vec<(u32, (u64, u32, bool))>,
    done: Vec<super::virtual_disk::VirtualCompletion>,
}

impl Inner {
    fn add(&mut self, id: u64, vd: bool, ns: f64) {
        let w = (id / self.window) as usize;
        let s = &mut self.sums[w];
        if vd {
            s.0 += ns;
        } else {
            s.1 += ns;
        }
    }

    /// `req` enters the real scheduler at `now_ns`: the virtual disk gets a copy.
    fn copy(&mut self, req: &IoRequest, now_ns: u64) {
        let id = self.next_id;
        self.next_id += 1;
        if self.sums.len() as u64 <= id / self.window {
            self.sums.push((0.0, 0.0));
        }
        self.real.add(req.op, req.block, req.blocks, (id, req.pid, req.sync));
        let issued_behind = (req.op != Op::Write).then(|| {
            let n = self.real_reads.entry(req.pid).or_default();
            *n += 1;
            *n - 1
        });
        // Of the process's outstanding reads, those the real disk has dispatched.
        let dispatched = || self.real_in_flight.iter().map(|u| u.3.iter().filter(|&&(_, p, _)| p == req.pid).count() as u32).sum::<u32>();
        let issued_queued = issued_behind.map(|n| n.saturating_sub(dispatched()));
        self.vd.submit(VirtualRequest { id, pid: req.pid, op: req.op, block: req.block, blocks: req.blocks, sync: req.sync && req.op != Op::Write, issued_behind, issued_queued, awaits_real: req.sync && req.op != Op::Write }, now_ns);
        self.collect_vd();
    }

    fn collect_vd(&mut self) {
        let mut done = std::mem::take(&mut self.done);
        self.vd.swap_completed(&mut done);
        for c in &done {
            self.add(c.id, true, c.io_ns);
        }
        self.done = done;
    }
}

/// The stage feeding the virtual disk; [`AccuracyStage::handle`] reads the result after the run.
pub struct AccuracyStage {
    inner: Arc<Mutex<Inner>>,
    name: String,
    /// REDCAP, always active, in front of both disks (Table 1).
    redcap: Option<Redcap>,
    parts: Vec<Partial>,
}

/// The caller's handle on an [`AccuracyStage`]'s results.
#[derive(Clone)]
pub struct AccuracyHandle(Arc<Mutex<Inner>>);

impl AccuracyStage {
    /// A virtual disk with `sched` (a fresh instance of the real disk's scheduler) and `table`,
    /// requests in pages of `page_bytes`, windows of `window` requests.
    pub fn new(sched: Box<dyn Scheduler>, table: TableModel, page_bytes: u64, window: u64) -> AccuracyStage {
        let name = format!("kdsim-accuracy:sched={},window={window}", sched.name());
        let inner = Inner {
            vd: VirtualDisk::new(sched, table, page_bytes),
            page_bytes,
            window: window.max(1),
            next_id: 0,
            real: PartMatcher::default(),
            real_reads: HashMap::default(),
            real_in_flight: VecDeque::new(),
            feed: RealFeed::default(),
            sums: Vec::new(),
            parts: Vec::new(),
            done: Vec::new(),
        };
        AccuracyStage { inner: Arc::new(Mutex::new(inner)), name, redcap: None, parts: Vec::new() }
    }

    /// The same with REDCAP of `rc` always on in front of the real scheduler: the virtual disk
    /// gets copies of REDCAP's segment reads and of the writes (Table 1).
    pub fn with_redcap(mut self, rc: RedcapConfig) -> AccuracyStage {
        let redcap = Redcap::new(rc);
        self.name = format!("{}+{}", redcap.name(), self.name);
        self.redcap = Some(redcap);
        self
    }

    pub fn handle(&self) -> AccuracyHandle {
        AccuracyHandle(self.inner.clone())
    }
}

impl AccuracyHandle {
    /// Finishes the virtual disk's work and computes the windows.
    pub fn result(&self) -> Accuracy {
        let mut g = self.0.lock().expect("not poisoned");
        g.vd.drain();
        g.collect_vd();
        let (n, w) = (g.next_id, g.window);
        let windows: Vec<Window> = g
            .sums
            .iter()
            .enumerate()
            .map(|(i, &(vd, rd))| {
                let start = i as u64 * w;
                Window {
                    start,
                    requests: w.min(n - start),
                    vd_ms: vd / 1e6,
                    rd_ms: rd / 1e6,
                    diff_pct: (rd > 0.0).then(|| (vd - rd) / rd * 100.0).or((vd == 0.0 && rd == 0.0).then_some(0.0)),
                }
            })
            .collect();
        let diffs: Vec<f64> = windows.iter().filter_map(|w| w.diff_pct).collect();
        let mean = (!diffs.is_empty()).then(|| diffs.iter().map(|d| d.abs()).sum::<f64>() / diffs.len() as f64);
        Accuracy { window: w, windows, mean_abs_diff_pct: mean, requests: n, trained_cells: g.vd.table().trained_cells() }
    }

    /// The virtual disk's table (to save it, for example).
    pub fn table(&self) -> TableModel {
        self.0.lock().expect("not poisoned").vd.table().clone()
    }
}

impl BlockStage for AccuracyStage {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn submit(&mut self, req: IoRequest, now_ns: u64, out: &mut StageActions) -> Submit {
        let mut g = self.inner.lock().expect("not poisoned");
        let Some(redcap) = self.redcap.as_mut() else {
            g.copy(&req, now_ns);
            return Submit::Pass;
        };
        if req.op == Op::Write {
            redcap.write(&req);
            g.copy(&req, now_ns);
            return Submit::Pass;
        }
        // The read becomes hits, waits and segment reads; only the segment reads enter the
        // scheduler, so only they are copied.
        redcap.read(req, now_ns, out, &mut self.parts);
        for q in &out.issue {
            g.copy(q, now_ns);
        }
        Submit::Take
    }

    fn dispatched(&mut self, req: &IoRequest, service: &Service, now_ns: u64) {
        let mut g = self.inner.lock().expect("not poisoned");
        let page_bytes = g.page_bytes;
        let (_, io) = g.feed.dispatched(req, service, now_ns, page_bytes);
        let g = &mut *g;
        g.real.take_into(req.op, req.block, req.blocks, &mut g.parts);
        let total: u64 = g.parts.iter().map(|(n, _)| *n as u64).sum::<u64>().max(1);
        for i in 0..g.parts.len() {
            let (n, (id, _, _)) = g.parts[i];
            g.add(id, false, io as f64 * n as f64 / total as f64);
        }
        if req.op != Op::Write {
            let copies = g.parts.iter().map(|&(_, c)| c).collect();
            g.real_in_flight.push_back((req.op, req.block, req.blocks, copies));
        }
    }

    fn completed(&mut self, req: &IoRequest, _service: &Service, now_ns: u64, out: &mut StageActions) {
        if let Some(redcap) = self.redcap.as_mut() {
            if req.op != Op::Write {
                redcap.read_done(req, now_ns, out);
            }
        }
        let mut g = self.inner.lock().expect("not poisoned");
        g.vd.advance(now_ns);
        g.collect_vd();
        let g = &mut *g;
        g.feed.completed(req, g.vd.table_mut(), g.page_bytes);
        if req.op != Op::Write {
            if let Some(i) = g.real_in_flight.iter().position(|u| (u.0, u.1, u.2) == (req.op, req.block, req.blocks)) {
                for (id, pid, sync) in g.real_in_flight.remove(i).expect("in range").3 {
                    if let Some(n) = g.real_reads.get_mut(&pid) {
                        *n = n.saturating_sub(1);
                    }
                    if sync {
                        g.vd.real_done(id, now_ns);
                    }
                }
            }
        }
    }

    fn report(&self) -> serde_json::Value {
        self.redcap.as_ref().map_or(serde_json::Value::Null, |r| r.report())
    }

    fn process_event(&mut self, event: &crate::trace::ProcessEvent, now_ns: u64) {
        let mut g = self.inner.lock().expect("not poisoned");
        g.vd.process_event(event, now_ns);
        g.collect_vd();
    }
}

/// Settings of an accuracy run besides the stack.
#[derive(Debug, Clone, Default)]
pub struct AccuracyConfig {
    /// The virtual disk's starting table (`None`: empty, learned on line).
    pub table: Option<std::path::PathBuf>,
    /// Requests per window (the paper's 1000).
    pub window: u64,
    /// Answer look-ups with the column mean over all sizes ("VD 64 average").
    pub size_blind: bool,
    /// Values per cell of a table learned from zero.
    pub values_per_cell: usize,
}

/// The virtual disk's table for `config`'s device: the file given (its capacity must be the
/// device's) or an empty one of the device's capacity.
pub fn starting_table(config: &crate::engine::timed::StackConfig, acc: &AccuracyConfig) -> Result<TableModel, crate::error::ConfigError> {
    use crate::error::ConfigError;
    let capacity = crate::device::build(&config.device)?.capacity_sectors().map(|s| s * SECTOR);
    let mut table = match &acc.table {
        Some(path) => {
            let t = TableModel::load(path)?;
            if let Some(c) = capacity {
                if t.capacity_bytes() != c {
                    return Err(ConfigError::new(
                        "--table",
                        format!("{} is a table for {} bytes; device `{}` has {c} bytes (train one with `iostack kdsim train --device {}`)", path.display(), t.capacity_bytes(), config.device, config.device),
                    ));
                }
            }
            t
        }
        None => {
            let c = capacity.ok_or_else(|| ConfigError::new("--table", format!("device `{}` has no capacity to size a table from; give --table", config.device)))?;
            TableModel::new(c, if acc.values_per_cell == 0 { crate::device::table::DEFAULT_VALUES_PER_CELL } else { acc.values_per_cell })?
        }
    };
    table.set_size_blind(acc.size_blind);
    Ok(table)
}

/// Replays the trace `open` opens through `config`'s stack with the virtual disk beside the real
/// one.
pub fn run(
    config: &crate::engine::timed::StackConfig,
    acc: &AccuracyConfig,
    open: &mut dyn FnMut() -> Result<Box<dyn crate::trace::TraceReader>, crate::error::Error>,
) -> Result<(crate::engine::timed::TimedReport, Accuracy), crate::error::Error> {
    run_with_table(config, acc, open).map(|(r, a, _)| (r, a))
}

/// [`run`], also giving the virtual disk's table at the end.
pub fn run_with_table(
    config: &crate::engine::timed::StackConfig,
    acc: &AccuracyConfig,
    open: &mut dyn FnMut() -> Result<Box<dyn crate::trace::TraceReader>, crate::error::Error>,
) -> Result<(crate::engine::timed::TimedReport, Accuracy, TableModel), crate::error::Error> {
    if acc.window == 0 {
        return Err(crate::error::ConfigError::new("--window", "a window holds at least one request").into());
    }
    let table = starting_table(config, acc)?;
    let resolved = config.resolve()?;
    let sched = crate::sched::build(&config.sched, crate::sched::SchedLimits::new(resolved.max_request_blocks, config.page_size))?;
    if config.ada.is_some() {
        return Err(crate::error::ConfigError::new("--ada", "the accuracy run compares the two disks with REDCAP always on or off: ADA is not run").into());
    }
    let mut stage = AccuracyStage::new(sched, table, config.page_size, acc.window);
    if let Some(spec) = &config.redcap {
        stage = stage.with_redcap(RedcapConfig::parse(spec, config.page_size)?);
    }
    let handle = stage.handle();
    let mut run = crate::engine::timed::TimedRun::new(config)?;
    run.set_stage(Box::new(stage));
    let report = crate::engine::timed::run_built(run, open, Vec::new())?;
    let result = handle.result();
    Ok((report, result, handle.table()))
}

/// The JSON report of an accuracy run, as `iostack kdsim accuracy --json` prints it and
/// `iostack.kdsim_accuracy` returns it: the run's `trace`, `device`, `sched`, `table`,
/// `size_blind`, `redcap` (REDCAP's counts when it was on, else `null`), then `window`,
/// `requests`, `trained_cells`, `windows` and `mean_abs_diff_pct`.
pub fn report_json(trace: &std::path::Path, report: &crate::engine::timed::TimedReport, acc: &AccuracyConfig, result: &Accuracy) -> serde_json::Value {
    serde_json::json!({
        "trace": trace.display().to_string(),
        "device": report.resolved["device"],
        "sched": report.resolved["sched"],
        "table": acc.table.as_ref().map(|p| p.display().to_string()),
        "size_blind": acc.size_blind,
        "redcap": report.redcap,
        "window": result.window,
        "requests": result.requests,
        "trained_cells": result.trained_cells,
        "windows": result.windows,
        "mean_abs_diff_pct": result.mean_abs_diff_pct,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::timed::StackConfig;
    use crate::trace::{Request, VecReader};

    /// A hand table for a 1 GiB disk: reads cost by size and distance column.
    fn hand_file(dir: &tempfile::TempDir) -> std::path::PathBuf {
        let row = |r: usize| format!("[{}]", (0..19).map(|c| format!("{:.3}", 0.2 + 0.05 * r as f64 + 0.5 * c as f64)).collect::<Vec<_>>().join(","));
        let rows = (0..32).map(row).collect::<Vec<_>>().join(",");
        let p = dir.path().join("hand.json");
        std::fs::write(&p, format!(r#"{{"capacity_bytes": 1073741824, "values_per_cell": 64, "read": [{rows}], "write": [{rows}]}}"#)).unwrap();
        p
    }

    /// A cycle of 50 reads of several sizes at scattered places, repeated: after the first cycle
    /// every cell the trace uses has been seen. (50 reads of up to 4 blocks cycle through a
    /// 16-block LRU cache without a hit.)
    fn trace(n: usize) -> Vec<Request> {
        let mut cycle = Vec::new();
        let mut x = 12345u64;
        for _ in 0..50 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let blocks = 1 + (x % 4);
            let off = (x >> 8) % (1 << 17) * 4096;
            cycle.push(Request { time_ns: 0, offset: off, length: blocks * 4096, pid: 1, device: 0, op: crate::trace::Op::Read, file: None });
        }
        cycle.iter().cycle().take(n).copied().collect()
    }

    fn config(device: String) -> StackConfig {
        StackConfig { device, sched: "noop".into(), prefetch: "none".into(), cache: "16".into(), max_request: "128KiB".into(), ..Default::default() }
    }

    /// D-K4: a table learns a table device exactly; once every cell the trace uses has been seen,
    /// every window differs by 0.000 %.
    #[test]
    fn a_learned_table_matches_a_table_device_exactly() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(format!("table:{}", hand_file(&dir).display()));
        let reqs = trace(6000);
        let acc = AccuracyConfig { window: 1000, ..Default::default() };
        let (rep, a) = run(&cfg, &acc, &mut || Ok(Box::new(VecReader::new(reqs.clone())))).unwrap();
        assert_eq!(a.requests, rep.device_requests);
        assert_eq!(a.windows.len(), 6);
        assert!(a.windows[0].diff_pct.unwrap().abs() > 0.0, "the first window learns");
        for w in &a.windows[1..] {
            assert_eq!(w.diff_pct, Some(0.0), "{w:?}");
            assert!(w.rd_ms > 0.0);
        }
        assert!((a.windows.iter().map(|w| w.rd_ms).sum::<f64>() * 1e6 - rep.device_busy_ns as f64).abs() < 1e3);
        // Starting from the device's own table: exact from the first request.
        let acc = AccuracyConfig { table: Some(hand_file(&dir)), ..acc };
        let (_, b) = run(&cfg, &acc, &mut || Ok(Box::new(VecReader::new(reqs.clone())))).unwrap();
        assert!(b.windows.iter().all(|w| w.diff_pct == Some(0.0)), "{:?}", b.windows);
        assert_eq!(b.mean_abs_diff_pct, Some(0.0));
    }

    /// A read the real disk had to serve apart from its process's earlier read (that one was
    /// already dispatched when it came) is not merged with it on a virtual disk that lags: LKR
    /// alone, one process, noop, the drive's cache off, a table learned from zero. Before the
    /// virtual disk knew which of a process's reads were still queued at the real disk, it
    /// merged such readahead runs and was 3.9 % faster on this trace.
    #[test]
    fn readahead_runs_split_at_the_real_disk_stay_split_on_the_virtual_one() {
        use crate::workload::lkr::Lkr;
        use crate::workload::streams::{Merged, Placement};
        let cfg = StackConfig { device: "hdd:st3400620as,cache=off".into(), sched: "noop".into(), prefetch: "linux:context=off".into(), cache: "64MiB".into(), max_request: "128KiB".into(), locality: false, ..Default::default() };
        let lkr = Lkr { files: 3000, dirs: 200, child_cat: false, ..Lkr::default() };
        let acc = AccuracyConfig { window: 1000, ..Default::default() };
        let (_, a) = run(&cfg, &acc, &mut || Ok(Box::new(Merged::new("lkr", lkr.streams(1, &mut Placement::default()))))).unwrap();
        assert!(a.windows.len() >= 5, "{}", a.windows.len());
        let m = a.mean_abs_diff_pct.unwrap();
        assert!(m < 0.5, "mean |diff| {m:.3} %");
    }

    #[test]
    fn a_table_for_another_capacity_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let acc = AccuracyConfig { table: Some(hand_file(&dir)), window: 1000, ..Default::default() };
        let e = run(&config("hdd:st3400620as".into()), &acc, &mut || Ok(Box::new(VecReader::new(trace(10))))).err().unwrap().to_string();
        assert!(e.contains("hand.json") && e.contains("1073741824"), "{e}");
    }
}
