//! Relaunched benchmarks: the KDSim/REDCAP paper's AIP test, "all in parallel", which "finishes
//! when each one has been run at least once. If a benchmark ends when others are still in their
//! first run, it is launched again" (González-Férez, Piernas and Cortes, Computer Journal 59(10),
//! 2016, l.197).
//!
//! Whether a benchmark runs again depends on when the others finish in the simulated run, which
//! a trace cannot know, so the replay does it. A trace marks a benchmark with `launch` events
//! ([`ProcessEventKind::Launch`]): `launch` of `pid` by `ppid` says that `ppid`, the benchmark's
//! launcher (a process that issues no requests, like the shell that starts the benchmark), starts
//! `pid` as one of the benchmark's processes. A benchmark is the processes one launcher launches
//! and every process they fork, transitively; the trace holds one run of it.
//!
//! The rule, in closed loop:
//! - a run of a benchmark completes when every one of its processes has exited (an `exit` event,
//!   or the end of its requests);
//! - when a run completes and some benchmark has not completed once, the benchmark starts again at
//!   once: the same requests (the same files read again) and process events, with the trace's
//!   think times, by new processes: each process of the trace's run gets a new pid, numbered from
//!   [`RELAUNCH_PID_BASE`] up in launch order (the pids a trace with launches may not use);
//! - once every benchmark has completed once nothing is relaunched; runs under way go on to their
//!   end;
//! - a rerun that took no simulated time (every request a page-cache hit, which the stack gives no
//!   time: the model has no CPU cost) is not relaunched again, as it would repeat without end at
//!   the same instant; the report marks the benchmark `rerun_in_no_time`. The report's `benchmarks` gives each benchmark's runs and completion times, and
//!   `all_completed_ns`, the time every benchmark had completed once: the AIP test's end.
//!
//! The rule works at process exits, off the per-request path: the requests of a benchmark's
//! processes are copied as the reader reads each batch (and only in a trace with launches).
//! Relaunching needs closed-loop replay with the trace's processes.

use rustc_hash::FxHashMap;

use super::*;
use crate::engine::timed::{BenchmarkReport, BenchmarksReport};
use crate::trace::{ProcessEvent, ProcessEventKind};

/// The pid of the first relaunched process (2^30). A trace with launch events numbers its own
/// processes below it.
pub const RELAUNCH_PID_BASE: u32 = 1 << 30;

/// Most runs of one benchmark: a benchmark that never completes (a wait for a child that never
/// exits) would otherwise keep the others relaunching without end.
pub const MAX_RUNS: u32 = 10_000;

/// A request or event of a benchmark's run, with its trace time relative to the trace's first
/// request.
#[derive(Debug, Clone, Copy)]
enum Item {
    Request(Request),
    Event(ProcessEvent),
}

#[derive(Debug, Default)]
struct Bench {
    launcher: u32,
    /// Launched by the launcher in the trace.
    launched: Vec<u32>,
    /// Every process of the trace's run, in order of launch or fork.
    members: Vec<u32>,
    /// The trace's run, in trace order.
    script: Vec<(u64, Item)>,
    /// Trace time of the run's last request read.
    last_ns: u64,
    /// Processes of the current run that have not exited.
    live: u32,
    runs: u32,
    /// When the current run started.
    start_ns: u64,
    /// A rerun took no simulated time: not relaunched again.
    no_time: bool,
    completions: Vec<u64>,
}

#[derive(Debug, Default)]
pub(super) struct Relaunch {
    benches: Vec<Bench>,
    by_launcher: FxHashMap<u32, u32>,
    /// The benchmark of every process launched, forked inside one, or relaunched.
    bench_of: FxHashMap<u32, u32>,
    next_pid: u32,
    all_completed_ns: Option<u64>,
}

impl Relaunch {
    fn new() -> Relaunch {
        Relaunch { next_pid: RELAUNCH_PID_BASE, ..Default::default() }
    }

    /// Adds process `pid` to benchmark `b`'s trace run.
    fn join(&mut self, b: u32, pid: u32) -> Result<(), String> {
        let bench = &mut self.benches[b as usize];
        if bench.runs > 1 || !bench.completions.is_empty() {
            return Err(format!("process {pid} joins the benchmark of launcher {} after its run completed", bench.launcher));
        }
        if self.bench_of.insert(pid, b).is_some() {
            return Err(format!("process {pid} is launched or forked twice"));
        }
        bench.members.push(pid);
        bench.live += 1;
        Ok(())
    }

    /// Reads the requests `batch` (trace numbers from `first`) and the events `events` read with
    /// them (trace times relative to `t0`): launches and forks make members, and members'
    /// requests and events are copied for their relaunch.
    fn record(&mut self, batch: &[Request], first: u64, events: &[ProcessEvent], t0: u64) -> Result<(), String> {
        let mut ev = events.iter().peekable();
        let mut i = 0;
        loop {
            let at = first + i as u64;
            let next_event = ev.peek().filter(|e| e.before <= at || i == batch.len());
            if let Some(&&e) = next_event {
                ev.next();
                self.event(e).map_err(|m| format!("the {} event of process {} (parent {}) after request {} of the trace: {m}", e.kind.as_str(), e.pid, e.ppid, e.before))?;
                continue;
            }
            let Some(r) = batch.get(i) else { return Ok(()) };
            i += 1;
            if r.pid >= RELAUNCH_PID_BASE {
                return Err(format!("request {} of the trace is of process {}: a trace with launch events numbers its processes below {RELAUNCH_PID_BASE} (the pids of relaunched processes)", at + 1, r.pid));
            }
            if let Some(&b) = self.bench_of.get(&r.pid) {
                let bench = &mut self.benches[b as usize];
                let t = r.time_ns.saturating_sub(t0).max(bench.last_ns);
                bench.last_ns = t;
                bench.script.push((t, Item::Request(*r)));
            }
        }
    }

    fn event(&mut self, e: ProcessEvent) -> Result<(), String> {
        let bench = match e.kind {
            ProcessEventKind::Launch => {
                if self.bench_of.contains_key(&e.ppid) {
                    return Err(format!("launcher {} is a process of a benchmark", e.ppid));
                }
                let n = self.benches.len() as u32;
                let b = *self.by_launcher.entry(e.ppid).or_insert(n);
                if b == n {
                    self.benches.push(Bench { launcher: e.ppid, runs: 1, ..Default::default() });
                }
                self.join(b, e.pid)?;
                self.benches[b as usize].launched.push(e.pid);
                return Ok(());
            }
            ProcessEventKind::Fork => match self.bench_of.get(&e.ppid) {
                Some(&b) => {
                    self.join(b, e.pid)?;
                    b
                }
                None => return Ok(()),
            },
            ProcessEventKind::Wait => match self.bench_of.get(&e.ppid) {
                Some(&b) => b,
                None => return Ok(()),
            },
            ProcessEventKind::Exit => match self.bench_of.get(&e.pid) {
                Some(&b) => b,
                None => return Ok(()),
            },
        };
        let bench = &mut self.benches[bench as usize];
        bench.script.push((bench.last_ns, Item::Event(e)));
        Ok(())
    }

    pub(super) fn report(&self) -> BenchmarksReport {
        BenchmarksReport {
            all_completed_ns: self.all_completed_ns,
            benchmarks: self
                .benches
                .iter()
                .map(|b| BenchmarkReport { launcher: b.launcher, processes: b.launched.clone(), runs: b.runs, completions_ns: b.completions.clone(), rerun_in_no_time: b.no_time })
                .collect(),
        }
    }

    /// Launchers that the trace also gives requests (`is_process`), for the end-of-run check.
    pub(super) fn launcher_as_process(&self, is_process: impl Fn(u32) -> bool) -> Option<u32> {
        self.benches.iter().map(|b| b.launcher).find(|&l| is_process(l))
    }
}

impl<P: Policy + ?Sized, F: Prefetcher + ?Sized, S: Scheduler + ?Sized, D: Device + ?Sized> Engine<P, F, S, D> {
    /// The reader read the batch `self.batch` (its first request numbered `self.order.read`) and
    /// the events `events` with it: copies the benchmarks' part. Only called for a trace with
    /// launch events, in closed loop.
    #[cold]
    pub(super) fn record_benchmarks(&mut self, events: &[ProcessEvent]) {
        let t0 = self.t0.or(self.batch.first().map(|r| r.time_ns)).unwrap_or(0);
        let Some(pe) = self.proc_events.as_mut() else { return };
        let rl = pe.relaunch.get_or_insert_with(|| Box::new(Relaunch::new()));
        if let Err(msg) = rl.record(&self.batch, self.order.read, events, t0) {
            pe.error.get_or_insert(msg);
        }
    }

    /// Process `pid` exited: the end of its benchmark's run if it was the last, and then the
    /// benchmark's relaunch if another has not completed once.
    #[cold]
    #[inline(never)]
    pub(super) fn benchmark_exit(&mut self, pid: u32) {
        let now = self.now;
        let Some(pe) = self.proc_events.as_mut() else { return };
        let Some(rl) = pe.relaunch.as_mut() else { return };
        let Some(&b) = rl.bench_of.get(&pid) else { return };
        let bench = &mut rl.benches[b as usize];
        bench.live -= 1;
        if bench.live > 0 {
            return;
        }
        bench.completions.push(now);
        if rl.all_completed_ns.is_some() {
            return;
        }
        if bench.runs > 1 && bench.start_ns == now {
            // Every request a page-cache hit, which the stack gives no time: relaunched again it
            // would repeat without end at this instant, touching nothing but the cache.
            bench.no_time = true;
            return;
        }
        if rl.benches.iter().all(|b| !b.completions.is_empty()) {
            rl.all_completed_ns = Some(now);
            return;
        }
        if let Err(msg) = self.relaunch(b) {
            let pe = self.proc_events.as_mut().expect("events");
            pe.error.get_or_insert(msg);
        }
    }

    /// Starts benchmark `b` again now, with new pids.
    fn relaunch(&mut self, b: u32) -> Result<(), String> {
        let pe = self.proc_events.as_mut().expect("events");
        let rl = pe.relaunch.as_mut().expect("benchmarks");
        let bench = &mut rl.benches[b as usize];
        let launcher = bench.launcher;
        if bench.runs >= MAX_RUNS {
            return Err(format!("the benchmark of launcher {launcher} ran {MAX_RUNS} times while another never completed once"));
        }
        if !bench.script.iter().any(|(_, i)| matches!(i, Item::Request(_))) {
            return Err(format!("the benchmark of launcher {launcher} has no requests: relaunching it would never end"));
        }
        let n = bench.members.len() as u32;
        let Some(end) = rl.next_pid.checked_add(n) else {
            return Err(format!("relaunching the benchmark of launcher {launcher}: no pids left"));
        };
        let new: FxHashMap<u32, u32> = bench.members.iter().zip(rl.next_pid..end).map(|(&m, p)| (m, p)).collect();
        rl.next_pid = end;
        bench.runs += 1;
        bench.live = n;
        bench.start_ns = self.now;
        let script = std::mem::take(&mut bench.script);
        for &p in new.values() {
            rl.bench_of.insert(p, b);
        }
        let start = script.iter().map(|(t, _)| *t).min().unwrap_or(0);
        for &(t, item) in &script {
            let t = self.now + (t - start);
            match item {
                Item::Request(mut r) => {
                    r.pid = new[&r.pid];
                    r.time_ns = t;
                    let p = self.index_of_pid(r.pid);
                    self.enqueue(p, Queued::Request(r));
                }
                Item::Event(mut e) => {
                    e.pid = new.get(&e.pid).copied().unwrap_or(e.pid);
                    e.ppid = new.get(&e.ppid).copied().unwrap_or(e.ppid);
                    let pe = self.proc_events.as_mut().expect("events");
                    match e.kind {
                        ProcessEventKind::Fork => {
                            pe.parent.insert(e.pid, e.ppid);
                        }
                        ProcessEventKind::Exit => {
                            pe.exit_read.insert(e.pid);
                        }
                        _ => {}
                    }
                    let index = pe.placed.len() as u32;
                    pe.placed.push(e);
                    if e.kind == ProcessEventKind::Fork {
                        let c = self.index_of_pid(e.pid);
                        self.procs[c as usize].unborn = true;
                    }
                    let p = self.index_of_pid(e.actor());
                    self.enqueue(p, Queued::Event { time_ns: t, index });
                }
            }
        }
        let pe = self.proc_events.as_mut().expect("events");
        pe.relaunch.as_mut().expect("benchmarks").benches[b as usize].script = script;
        Ok(())
    }

    /// The report's `benchmarks`, for a trace with launch events.
    pub(crate) fn benchmarks_report(&self) -> Option<BenchmarksReport> {
        Some(self.proc_events.as_ref()?.relaunch.as_ref()?.report())
    }
}

#[cfg(test)]
mod tests {
    use super::RELAUNCH_PID_BASE as BASE;
    use crate::engine::timed::{StackConfig, TimedReport, TimedRun};
    use crate::trace::{ProcessEvent, ProcessEventKind, Request, VecReader};

    fn read(pid: u32, block: u64) -> Request {
        Request { pid, ..Request::read(block * 4096, 4096) }
    }

    fn ev(before: u64, kind: ProcessEventKind, pid: u32, ppid: u32) -> ProcessEvent {
        ProcessEvent { before, time_ns: 0, kind, pid, ppid }
    }

    /// A 1 ms device and a cache too small to keep a benchmark's blocks from one run to the next.
    fn config() -> StackConfig {
        StackConfig { device: "fixed:1ms".into(), sched: "noop".into(), prefetch: "none".into(), cache: "1".into(), ..Default::default() }
    }

    fn run(reqs: Vec<Request>, events: Vec<ProcessEvent>) -> Result<TimedReport, String> {
        TimedRun::new(&config()).unwrap().run(&mut VecReader::with_events(reqs, events)).map_err(|e| e.to_string())
    }

    /// Benchmark A (process 1, launcher 10) reads 2 blocks, B (process 2, launcher 11) 7: A
    /// runs again each time it ends while B has not, with a new pid each time, and B once.
    fn two() -> (Vec<Request>, Vec<ProcessEvent>) {
        let reqs = vec![read(1, 0), read(2, 100), read(1, 1), read(2, 101), read(2, 102), read(2, 103), read(2, 104), read(2, 105), read(2, 106)];
        (reqs, vec![ev(0, ProcessEventKind::Launch, 1, 10), ev(1, ProcessEventKind::Launch, 2, 11)])
    }

    #[test]
    fn a_benchmark_that_ends_first_runs_again_until_every_one_has_completed_once() {
        let (reqs, events) = two();
        let rep = run(reqs, events).unwrap();
        let b = rep.benchmarks.clone().expect("benchmarks");
        let (a, bb) = (&b.benchmarks[0], &b.benchmarks[1]);
        assert_eq!((a.launcher, a.processes.clone(), bb.launcher, bb.processes.clone()), (10, vec![1], 11, vec![2]));
        assert_eq!(bb.runs, 1);
        let end = bb.completions_ns[0];
        assert_eq!(b.all_completed_ns, Some(end));
        assert!(a.runs >= 3, "{b:?}");
        assert_eq!(a.completions_ns.len() as u32, a.runs, "a run under way when all had completed goes to its end");
        // Each run but the last ended before B did, so it was relaunched; the last one started
        // before B ended (relaunched at the end of the one before) and none after it.
        let n = a.completions_ns.len();
        assert!(a.completions_ns[..n - 1].iter().all(|&c| c < end), "{b:?}");
        assert!(a.completions_ns[n - 2] < end && a.completions_ns[n - 1] >= end, "{b:?}");
        // New pids, in order, each reading A's two blocks; the device read them all again.
        let relaunched: Vec<_> = rep.processes.iter().filter(|p| p.pid >= BASE).collect();
        assert_eq!(relaunched.iter().map(|p| p.pid).collect::<Vec<_>>(), (BASE..BASE + a.runs - 1).collect::<Vec<_>>());
        assert!(relaunched.iter().all(|p| p.requests == 2));
        assert_eq!(rep.device_requests, 7 + 2 * a.runs as u64);
        // Each relaunch starts when the run before ends.
        for (p, &c) in relaunched.iter().zip(&a.completions_ns) {
            assert_eq!(p.start_ns, c);
        }
        // Deterministic.
        let (reqs, events) = two();
        assert_eq!(serde_json::to_string(&run(reqs, events).unwrap()).unwrap(), serde_json::to_string(&rep).unwrap());
        // Without launch events, one run each.
        let (reqs, _) = two();
        let rep = run(reqs, Vec::new()).unwrap();
        assert!(rep.benchmarks.is_none() && rep.processes.len() == 2);
    }

    /// A relaunched benchmark's children get new pids too, and wait for their fork as in the
    /// trace; its parent waits for them.
    #[test]
    fn children_are_relaunched_with_their_parent() {
        // A: process 1 reads, forks 3 and waits for it; 3 reads twice and exits. B: 2 reads 9 times.
        let mut reqs = vec![read(1, 0), read(2, 100), read(3, 50), read(3, 51)];
        reqs.extend((1..9).map(|i| read(2, 100 + i)));
        let events = vec![
            ev(0, ProcessEventKind::Launch, 1, 10),
            ev(1, ProcessEventKind::Launch, 2, 11),
            ev(2, ProcessEventKind::Fork, 3, 1),
            ev(2, ProcessEventKind::Wait, 3, 1),
            ev(4, ProcessEventKind::Exit, 3, 1),
        ];
        let rep = run(reqs, events).unwrap();
        let b = rep.benchmarks.clone().unwrap();
        assert!(b.benchmarks[0].runs >= 2, "{b:?}");
        let p = |pid| rep.processes.iter().find(|p| p.pid == pid).unwrap_or_else(|| panic!("no process {pid}: {:?}", rep.processes)).clone();
        // The second run: parent BASE, child BASE + 1, forked after the parent's read.
        let (parent, child) = (p(BASE), p(BASE + 1));
        assert_eq!((parent.requests, child.requests), (1, 2));
        assert!(child.start_ns > parent.start_ns && parent.end_ns <= child.end_ns, "{parent:?} {child:?}");
        assert_eq!(b.benchmarks[0].completions_ns[1], child.end_ns);
    }

    #[test]
    fn bad_launches_are_errors_naming_the_event() {
        let (reqs, _) = two();
        let e = run(reqs.clone(), vec![ev(1, ProcessEventKind::Launch, 1, 10)]).unwrap_err();
        assert!(e.contains("process 1 appears in the trace before it is launched") && e.contains("launch event"), "{e}");
        let e = run(reqs.clone(), vec![ev(0, ProcessEventKind::Launch, 1, 2)]).unwrap_err();
        assert!(e.contains("launcher 2 issues requests of its own"), "{e}");
        let e = run(vec![read(1, 0), read(BASE, 1)], vec![ev(0, ProcessEventKind::Launch, 1, 10)]).unwrap_err();
        assert!(e.contains(&format!("process {BASE}")) && e.contains("below"), "{e}");
        let open = StackConfig { replay: crate::engine::timed::Replay::Open, ..config() };
        let e = TimedRun::new(&open).unwrap().run(&mut VecReader::with_events(reqs, vec![ev(0, ProcessEventKind::Launch, 1, 10)])).unwrap_err().to_string();
        assert!(e.contains("closed-loop"), "{e}");
    }

    /// A rerun that takes no time (all hits in a cache that holds it) is not relaunched again.
    #[test]
    fn a_rerun_in_no_time_is_not_relaunched_again() {
        let big = StackConfig { cache: "64".into(), ..config() };
        let (reqs, events) = two();
        let rep = TimedRun::new(&big).unwrap().run(&mut VecReader::with_events(reqs, events)).unwrap();
        let b = rep.benchmarks.unwrap();
        let a = &b.benchmarks[0];
        assert_eq!((a.runs, a.rerun_in_no_time, b.benchmarks[1].rerun_in_no_time), (2, true, false), "{b:?}");
        assert_eq!(a.completions_ns[0], a.completions_ns[1]);
        assert_eq!(b.all_completed_ns, Some(b.benchmarks[1].completions_ns[0]));
    }
}
