//! Process events in the timed replay: forks, waits and exits read from the trace
//! ([`crate::trace::ProcessEvent`]).
//!
//! In closed loop each event is placed in the queue of the process that acts (the parent of a
//! fork or a wait, the process exiting) among its requests ([`Queued::Event`]), at its place in
//! the trace, and takes effect when that process gets to it, that is when its requests before it have
//! completed:
//! - a fork lets the child start (a process forked in the trace issues nothing before);
//! - a wait holds the parent until the child exits;
//! - an exit wakes a parent waiting for the process; a process that has no exit in the trace
//!   exits when its requests are over.
//!
//! Every event also goes to the block stage ([`crate::blk::BlockStage::process_event`]: the KDSim
//! virtual disk's rule R4) and an exit to an application-controlled policy
//! ([`Policy::process_exit`]: LRU-SP's dead owners). In open loop nothing is held: an event is
//! passed on when the trace reader reaches it.
//!
//! A launch event marks a process as one of a benchmark's, which the replay relaunches until
//! every benchmark has completed once ([`super::relaunch`]); it is checked where it is placed
//! and goes to no one else.

use rustc_hash::{FxHashMap, FxHashSet};

use super::*;
use crate::trace::{ProcessEvent, ProcessEventKind};

#[derive(Default)]
pub(super) struct ProcEvents {
    /// Events read, not yet placed (trace order).
    unplaced: VecDeque<ProcessEvent>,
    /// Events placed, by their index in [`Queued::Event`].
    pub(super) placed: Vec<ProcessEvent>,
    /// Parent of each process forked.
    pub(super) parent: FxHashMap<u32, u32>,
    /// Processes exited in the replay, and those that exited in the trace.
    exited: FxHashSet<u32>,
    pub(super) exit_read: FxHashSet<u32>,
    /// Processes (indices) waiting for a pid to exit.
    waiters: FxHashMap<u32, Vec<u32>>,
    /// The first inconsistency of the trace's events, reported at the end of the run.
    pub(super) error: Option<String>,
    /// The benchmarks to relaunch, once the trace has a launch event (closed loop).
    pub(super) relaunch: Option<Box<super::relaunch::Relaunch>>,
}

impl ProcEvents {
    /// Whether an event is due before request `at` (0-based) of the trace.
    #[inline]
    pub(super) fn due(&self, at: u64) -> bool {
        self.unplaced.front().is_some_and(|e| e.before <= at)
    }

    /// The trace request (0-based) the next event to place comes before.
    #[inline]
    pub(super) fn next_due(&self) -> Option<u64> {
        self.unplaced.front().map(|e| e.before)
    }

    fn fail(&mut self, e: &ProcessEvent, msg: String) {
        if self.error.is_none() {
            self.error = Some(format!("the {} event of process {} (parent {}) after request {} of the trace: {msg}", e.kind.as_str(), e.pid, e.ppid, e.before));
        }
    }
}

impl<P: Policy + ?Sized, F: Prefetcher + ?Sized, S: Scheduler + ?Sized, D: Device + ?Sized> Engine<P, F, S, D> {
    /// Takes the events the reader has read (once it says the trace has some).
    #[cold]
    pub(super) fn take_proc_events(&mut self, reader: &mut dyn crate::trace::TraceReader) {
        if !reader.carries_events() || self.s.processes != super::super::Processes::Trace {
            return;
        }
        let mut v = Vec::new();
        reader.take_events(&mut v);
        let launches = self.proc_events.as_ref().is_some_and(|pe| pe.relaunch.is_some()) || v.iter().any(|e| e.kind == ProcessEventKind::Launch);
        if launches && self.s.replay == Replay::Closed {
            self.proc_events.get_or_insert_with(Default::default);
            self.record_benchmarks(&v);
        }
        if !v.is_empty() {
            self.proc_events.get_or_insert_with(Default::default).unplaced.extend(v);
        }
    }

    /// Places the events due before trace request `at` (all of them at the end of the trace).
    #[cold]
    #[inline(never)]
    pub(super) fn place_events(&mut self, at: u64) {
        loop {
            let Some(pe) = self.proc_events.as_mut() else { return };
            if !pe.due(at) {
                return;
            }
            let e = pe.unplaced.pop_front().expect("due");
            if self.s.replay != Replay::Closed {
                if e.kind == ProcessEventKind::Launch {
                    pe.fail(&e, "relaunching benchmarks needs closed-loop replay (`replay = closed`)".into());
                    continue;
                }
                self.apply_event(&e);
                continue;
            }
            let known = self.proc_of.contains_key(&e.pid);
            let ok = match e.kind {
                ProcessEventKind::Launch if known => Err(format!("process {} appears in the trace before it is launched", e.pid)),
                ProcessEventKind::Launch if self.proc_of.contains_key(&e.ppid) => Err(format!("launcher {} issues requests of its own", e.ppid)),
                // Recorded as the trace was read: nothing to hold.
                ProcessEventKind::Launch => continue,
                ProcessEventKind::Fork if known => Err(format!("process {} appears in the trace before it is forked", e.pid)),
                ProcessEventKind::Fork => {
                    pe.parent.insert(e.pid, e.ppid);
                    Ok(())
                }
                ProcessEventKind::Wait if pe.parent.get(&e.pid) != Some(&e.ppid) => Err(format!("process {} was not forked by {}", e.pid, e.ppid)),
                ProcessEventKind::Exit if !pe.exit_read.insert(e.pid) => Err(format!("process {} exits twice", e.pid)),
                _ => Ok(()),
            };
            if let Err(msg) = ok {
                pe.fail(&e, msg);
                continue;
            }
            let queued = Queued::Event { time_ns: self.last_trace_ns, index: pe.placed.len() as u32 };
            pe.placed.push(e);
            if e.kind == ProcessEventKind::Fork {
                let c = self.index_of_pid(e.pid);
                self.procs[c as usize].unborn = true;
            }
            let p = self.index_of_pid(e.actor());
            self.enqueue(p, queued);
        }
    }

    /// Process `p` got to placed event `index`, queued at trace time `time_ns`.
    #[cold]
    #[inline(never)]
    pub(super) fn run_proc_event(&mut self, p: u32, time_ns: u64, index: u32) {
        let pe = self.proc_events.as_mut().expect("a queued event comes from the trace's events");
        let e = pe.placed[index as usize];
        let proc = &mut self.procs[p as usize];
        if !proc.started {
            proc.started = true;
            proc.start_ns = self.now;
        }
        proc.last_trace_ns = time_ns;
        self.apply_event(&e);
        let mut go = true;
        match e.kind {
            ProcessEventKind::Fork => {
                let c = self.index_of_pid(e.pid);
                let child = &mut self.procs[c as usize];
                child.unborn = false;
                if let Some(first) = child.queue.front() {
                    let t = first.time_ns().max(self.now);
                    self.push(t, Kind::Issue, c);
                }
            }
            ProcessEventKind::Wait => {
                let pe = self.proc_events.as_mut().expect("events");
                if !pe.exited.contains(&e.pid) {
                    pe.waiters.entry(e.pid).or_default().push(p);
                    go = false;
                }
            }
            ProcessEventKind::Exit => self.exited(e.pid),
            ProcessEventKind::Launch => unreachable!("launch events are not queued"),
        }
        if go {
            self.ready.push(p);
        }
    }

    /// Process `p` has no more requests: it exits if the trace did not say so already.
    #[cold]
    #[inline(never)]
    pub(super) fn proc_ended(&mut self, p: u32) {
        let pid = self.procs[p as usize].pid;
        let Some(pe) = self.proc_events.as_ref() else { return };
        if pe.exited.contains(&pid) {
            return;
        }
        let e = ProcessEvent { before: self.requests_taken(), time_ns: self.now, kind: ProcessEventKind::Exit, pid, ppid: pe.parent.get(&pid).copied().unwrap_or(0) };
        self.apply_event(&e);
        self.exited(pid);
    }

    /// `pid` exited now: the processes waiting for it go on.
    fn exited(&mut self, pid: u32) {
        let pe = self.proc_events.as_mut().expect("events");
        pe.exited.insert(pid);
        if let Some(w) = pe.waiters.remove(&pid) {
            self.ready.extend(w);
        }
        if pe.relaunch.is_some() {
            self.benchmark_exit(pid);
        }
    }

    /// Tells the stage, and an application-controlled policy of an exit.
    fn apply_event(&mut self, e: &ProcessEvent) {
        if let Some(st) = self.stage.as_mut() {
            st.process_event(e, self.now);
        }
        if e.kind == ProcessEventKind::Exit {
            for lane in &mut self.lanes {
                lane.sched.process_exit(e.pid, self.now);
            }
            self.kick_lanes();
        }
        if e.kind == ProcessEventKind::Exit && self.tracking.as_ref().is_some_and(|t| t.controlled_policy()) {
            self.policy.process_exit(e.pid);
        }
    }

    /// The end of the run: events the trace contradicts, or processes its events left waiting.
    #[cold]
    pub(super) fn proc_events_error(&self) -> Option<String> {
        let pe = self.proc_events.as_ref()?;
        if let Some(e) = &pe.error {
            return Some(format!("bad process events: {e}"));
        }
        if let Some(l) = pe.relaunch.as_ref().and_then(|rl| rl.launcher_as_process(|pid| self.proc_of.contains_key(&pid))) {
            return Some(format!("bad process events: launcher {l} issues requests of its own (a launcher only launches a benchmark's processes)"));
        }
        let stuck: Vec<u32> = self.procs.iter().filter(|p| !p.queue.is_empty()).map(|p| p.pid).take(5).collect();
        (!stuck.is_empty()).then(|| {
            format!("bad process events: process(es) {stuck:?} never ran their requests (a wait that never ends, or a fork never reached)")
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use crate::blk::{BlockStage, StageActions, Submit};
    use crate::engine::timed::{StackConfig, TimedRun};
    use crate::sched::IoRequest;
    use crate::trace::{ProcessEvent, ProcessEventKind, Request, VecReader};

    /// Records the process events it is told, with their times.
    struct Recorder(Arc<Mutex<Vec<(ProcessEventKind, u32, u64)>>>);

    impl BlockStage for Recorder {
        fn name(&self) -> String {
            "recorder".into()
        }
        fn submit(&mut self, _req: IoRequest, _now_ns: u64, _out: &mut StageActions) -> Submit {
            Submit::Pass
        }
        fn process_event(&mut self, e: &ProcessEvent, now_ns: u64) {
            self.0.lock().unwrap().push((e.kind, e.pid, now_ns));
        }
    }

    fn read(pid: u32, block: u64) -> Request {
        Request { pid, ..Request::read(block * 4096, 4096) }
    }

    fn ev(before: u64, kind: ProcessEventKind, pid: u32, ppid: u32) -> ProcessEvent {
        ProcessEvent { before, time_ns: 0, kind, pid, ppid }
    }

    fn config() -> StackConfig {
        StackConfig { device: "fixed:1ms".into(), sched: "noop".into(), prefetch: "none".into(), cache: "64".into(), ..Default::default() }
    }

    /// The child, interleaved with its parent in the trace, starts only when the parent gets to
    /// the fork (after its first read) and the parent's next read waits for the child's exit.
    #[test]
    fn a_forked_child_waits_for_its_fork_and_a_waiting_parent_for_its_exit() {
        let reqs = vec![read(1, 0), read(2, 100), read(1, 1), read(2, 101), read(1, 2)];
        let events = vec![ev(1, ProcessEventKind::Fork, 2, 1), ev(1, ProcessEventKind::Wait, 2, 1), ev(4, ProcessEventKind::Exit, 2, 1)];
        let log = Arc::new(Mutex::new(Vec::new()));
        let mut run = TimedRun::new(&config()).unwrap();
        run.set_stage(Box::new(Recorder(log.clone())));
        let rep = run.run(&mut VecReader::with_events(reqs.clone(), events)).unwrap();
        let p = |pid| rep.processes.iter().find(|p| p.pid == pid).unwrap().clone();
        const MS: u64 = 1_000_000;
        // Parent: read at 0; child: 2 reads from 1 ms; parent's next read at 3 ms, then 4 ms.
        assert_eq!((p(2).start_ns, p(2).end_ns), (MS, 3 * MS));
        assert_eq!((p(1).start_ns, p(1).end_ns), (0, 5 * MS));
        assert_eq!(*log.lock().unwrap(), vec![(ProcessEventKind::Fork, 2, MS), (ProcessEventKind::Wait, 2, MS), (ProcessEventKind::Exit, 2, 3 * MS), (ProcessEventKind::Exit, 1, 5 * MS)], "the parent exits at its end");
        // Without the events the two run side by side.
        let rep = TimedRun::new(&config()).unwrap().run(&mut VecReader::new(reqs)).unwrap();
        assert_eq!(rep.processes.iter().find(|p| p.pid == 2).unwrap().start_ns, 0);
    }

    /// A child that has no exit event exits when its requests are over; events the trace
    /// contradicts fail the run with a message naming the event.
    #[test]
    fn implicit_exits_and_contradictions() {
        let reqs = vec![read(1, 0), read(2, 100), read(1, 1)];
        let rep = TimedRun::new(&config()).unwrap().run(&mut VecReader::with_events(reqs.clone(), vec![ev(1, ProcessEventKind::Fork, 2, 1), ev(1, ProcessEventKind::Wait, 2, 1)])).unwrap();
        assert_eq!(rep.processes.iter().find(|p| p.pid == 1).unwrap().end_ns, 3_000_000);
        let e = TimedRun::new(&config()).unwrap().run(&mut VecReader::with_events(reqs.clone(), vec![ev(2, ProcessEventKind::Fork, 2, 1)])).err().unwrap().to_string();
        assert!(e.contains("process 2 appears in the trace before it is forked") && e.contains("fork event"), "{e}");
        let e = TimedRun::new(&config()).unwrap().run(&mut VecReader::with_events(reqs, vec![ev(1, ProcessEventKind::Wait, 2, 1)])).err().unwrap().to_string();
        assert!(e.contains("process 2 was not forked by 1"), "{e}");
    }
}
