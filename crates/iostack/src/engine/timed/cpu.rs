//! Processes sharing CPUs (`cpus = N`): the compute a closed-loop process does between its
//! requests (its think time) needs a CPU, and with fewer CPUs than processes computing at once
//! the compute serialises, while one process's I/O overlaps another's compute.
//!
//! Without `cpus` (the default) every process has a CPU of its own: its think time is a plain
//! delay, and this module is never entered. With `cpus = N`, a process that has think time `d`
//! to spend asks for a CPU ([`Cpus::compute`]); it runs as soon as one is free, in slices of at
//! most the quantum, and issues its next request once it has had `d` of CPU. The time it spends
//! ready but not running is its CPU wait.
//!
//! **Discipline: round robin with a quantum**, the scheduling of 4.3BSD among processes of equal
//! priority (Leffler, McKusick, Karels, Quarterman, *The Design and Implementation of the 4.3BSD
//! UNIX Operating System*, 1989, §4.4: the running process is switched for the next one of its
//! priority every time quantum, 100 ms, `roundrobin()` run at `hz/10`); Ultrix 4.3, the system of
//! the ACFS paper's DEC 5000/240 (Cao et al., papers/002, l.892), derives from it. One ready
//! queue, first come first served: a process that asks for a CPU while every CPU is busy joins
//! its tail; when a slice ends, the process goes on if it still has compute and nobody waits,
//! goes to the tail if someone does, and otherwise gives the CPU to the head of the queue. Free
//! CPUs are taken lowest number first, so a run is deterministic.
//!
//! What it leaves out, and why: 4.3BSD's priorities decay with recent CPU use and a process
//! woken from disk I/O runs at a kernel priority that preempts a user-mode one. Both need
//! per-process usage histories and kernel-path costs that traces do not carry (the ACFS paper
//! gives CPU time only as bars); with the bursts of a few milliseconds between block reads that
//! traces show, far below the quantum, each burst runs to its end once started, and the model is
//! first come first served among them, whatever the priorities would have reordered. The time
//! to issue a request and to take its completion is not modelled (zero CPU).

use std::collections::VecDeque;

/// The 4.3BSD time quantum (see the module comment).
pub const QUANTUM_NS: u64 = 100_000_000;

/// One process's CPU figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcCpu {
    /// CPU time it had.
    pub cpu_ns: u64,
    /// Time it was ready to compute with no CPU free.
    pub wait_ns: u64,
}

/// A process on a CPU.
#[derive(Debug, Clone, Copy)]
struct Running {
    proc: u32,
    /// Compute still to do after the current slice.
    after: u64,
}

/// The CPUs and their ready queue. Processes are the engine's process indices.
#[derive(Debug)]
pub struct Cpus {
    quantum_ns: u64,
    running: Vec<Option<Running>>,
    /// Processes ready to compute with no CPU: (process, compute left, since when).
    ready: VecDeque<(u32, u64, u64)>,
    procs: Vec<ProcCpu>,
    busy_ns: u64,
}

impl Cpus {
    /// `n` CPUs (at least 1) with slices of at most `quantum_ns` (at least 1).
    pub fn new(n: u32, quantum_ns: u64) -> Cpus {
        assert!(n > 0 && quantum_ns > 0, "checked by the config");
        Cpus { quantum_ns, running: vec![None; n as usize], ready: VecDeque::new(), procs: Vec::new(), busy_ns: 0 }
    }

    pub fn count(&self) -> u32 {
        self.running.len() as u32
    }

    pub fn quantum_ns(&self) -> u64 {
        self.quantum_ns
    }

    fn stats(&mut self, p: u32) -> &mut ProcCpu {
        let i = p as usize;
        if self.procs.len() <= i {
            self.procs.resize(i + 1, ProcCpu::default());
        }
        &mut self.procs[i]
    }

    /// Starts a slice of `left` compute for `p` on CPU `cpu` at `now`; gives the slice's end.
    fn start(&mut self, cpu: usize, p: u32, left: u64, now: u64) -> u64 {
        let slice = left.min(self.quantum_ns);
        self.running[cpu] = Some(Running { proc: p, after: left - slice });
        self.stats(p).cpu_ns += slice;
        self.busy_ns += slice;
        now + slice
    }

    /// Process `p` (which is neither running nor ready) has `compute_ns` (> 0) of compute to do
    /// from `now`. If a CPU is free it starts on it: gives `(cpu, end of its slice)`, when the
    /// caller calls [`Cpus::slice_end`]. Otherwise it waits in the ready queue.
    pub fn compute(&mut self, p: u32, compute_ns: u64, now: u64) -> Option<(u32, u64)> {
        debug_assert!(compute_ns > 0);
        match self.running.iter().position(Option::is_none) {
            Some(cpu) => Some((cpu as u32, self.start(cpu, p, compute_ns, now))),
            None => {
                self.ready.push_back((p, compute_ns, now));
                None
            }
        }
    }

    /// The slice on CPU `cpu` ended at `now`. Gives the process that finished its compute, if
    /// the one running did, and the end of the CPU's next slice, if it has one (for the same
    /// process or the next ready one).
    pub fn slice_end(&mut self, cpu: u32, now: u64) -> (Option<u32>, Option<u64>) {
        let cpu = cpu as usize;
        let r = self.running[cpu].take().expect("a slice ends on a busy CPU");
        let mut done = None;
        if r.after == 0 {
            done = Some(r.proc);
        } else if self.ready.is_empty() {
            return (None, Some(self.start(cpu, r.proc, r.after, now)));
        } else {
            self.ready.push_back((r.proc, r.after, now));
        }
        let next = self.ready.pop_front().map(|(p, left, since)| {
            self.stats(p).wait_ns += now - since;
            self.start(cpu, p, left, now)
        });
        (done, next)
    }

    /// Process `p`'s figures so far.
    pub fn of(&self, p: u32) -> ProcCpu {
        self.procs.get(p as usize).copied().unwrap_or_default()
    }

    /// CPU time given to all processes.
    pub fn busy_ns(&self) -> u64 {
        self.busy_ns
    }

    /// CPU wait of all processes.
    pub fn wait_ns(&self) -> u64 {
        self.procs.iter().map(|p| p.wait_ns).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives the CPUs alone: each (process, arrival, compute) asks at its time; gives each
    /// process's finish time.
    fn finish_times(n: u32, quantum: u64, jobs: &[(u32, u64, u64)]) -> Vec<u64> {
        let mut cpus = Cpus::new(n, quantum);
        let mut ends: Vec<(u64, u32)> = Vec::new();
        let mut fin = vec![0; jobs.len()];
        let mut arrivals: Vec<_> = jobs.to_vec();
        arrivals.sort_by_key(|j| j.1);
        let mut a = 0;
        loop {
            let next_end = ends.iter().map(|e| e.0).min();
            let next_arr = arrivals.get(a).map(|j| j.1);
            match (next_arr, next_end) {
                (Some(t), e) if e.is_none_or(|e| t < e) => {
                    let (p, _, d) = arrivals[a];
                    a += 1;
                    if let Some((cpu, end)) = cpus.compute(p, d, t) {
                        ends.push((end, cpu));
                    }
                }
                (_, Some(t)) => {
                    let i = ends.iter().position(|e| e.0 == t).unwrap();
                    let (_, cpu) = ends.remove(i);
                    let (done, next) = cpus.slice_end(cpu, t);
                    if let Some(p) = done {
                        fin[p as usize] = t;
                    }
                    if let Some(e) = next {
                        ends.push((e, cpu));
                    }
                }
                _ => break,
            }
        }
        fin
    }

    #[test]
    fn one_cpu_serves_in_arrival_order_and_two_run_side_by_side() {
        // Bursts below the quantum: first come first served.
        assert_eq!(finish_times(1, QUANTUM_NS, &[(0, 0, 5), (1, 1, 3), (2, 2, 4)]), vec![5, 8, 12]);
        assert_eq!(finish_times(2, QUANTUM_NS, &[(0, 0, 5), (1, 1, 3), (2, 2, 4)]), vec![5, 4, 8]);
        // Longer than the quantum: the two alternate in slices; the total is the sum.
        assert_eq!(finish_times(1, 10, &[(0, 0, 25), (1, 0, 15)]), vec![40, 35]);
    }

    #[test]
    fn cpu_time_and_wait_are_counted() {
        let mut c = Cpus::new(1, 10);
        assert_eq!(c.compute(0, 25, 0), Some((0, 10)));
        assert_eq!(c.compute(1, 5, 3), None);
        // 0's slice ends: 1 waited since 3, runs 10..15.
        assert_eq!(c.slice_end(0, 10), (None, Some(15)));
        assert_eq!(c.slice_end(0, 15), (Some(1), Some(25)));
        assert_eq!(c.slice_end(0, 25), (None, Some(30)));
        assert_eq!(c.slice_end(0, 30), (Some(0), None));
        assert_eq!(c.of(0), ProcCpu { cpu_ns: 25, wait_ns: 5 });
        assert_eq!(c.of(1), ProcCpu { cpu_ns: 5, wait_ns: 7 });
        assert_eq!((c.busy_ns(), c.wait_ns()), (30, 12));
    }
}
