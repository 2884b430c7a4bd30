//! The engine's hook into the CPU model ([`crate::engine::timed::cpu`]): with `cpus`, a
//! closed-loop process's think time is compute that needs a CPU. Entered only when a process
//! has think time to spend and the run has `cpus`; the issue of its next request waits for the
//! end of its compute.

use super::*;

impl<P: Policy + ?Sized, F: Prefetcher + ?Sized, S: Scheduler + ?Sized, D: Device + ?Sized> Engine<P, F, S, D> {
    /// Process `p` computes for `think_ns` (> 0) before it issues what it has queued next: it
    /// takes a CPU, or waits for one. Its issue event comes when its compute is done.
    #[cold]
    #[inline(never)]
    pub(super) fn compute(&mut self, p: u32, think_ns: u64) {
        let cpus = self.cpus.as_mut().expect("compute is entered only with cpus");
        if let Some((cpu, end)) = cpus.compute(p, think_ns, self.now) {
            self.push(end, Kind::CpuSlice, cpu);
        }
    }

    /// A slice ended on CPU `cpu`: a process whose compute is done issues, and the CPU takes on
    /// its next slice.
    #[cold]
    #[inline(never)]
    pub(super) fn cpu_slice_end(&mut self, cpu: u32) {
        let cpus = self.cpus.as_mut().expect("slices run only with cpus");
        let (done, next) = cpus.slice_end(cpu, self.now);
        if let Some(end) = next {
            self.push(end, Kind::CpuSlice, cpu);
        }
        if let Some(p) = done {
            self.push(self.now, Kind::Issue, p);
        }
    }

    /// The CPUs' figures at the end of the run, with `cpus`.
    pub(crate) fn cpu_report(&self) -> Option<crate::engine::timed::CpuReport> {
        let cpus = self.cpus.as_ref()?;
        let span = cpus.count() as f64 * self.c.end_ns as f64;
        Some(crate::engine::timed::CpuReport {
            cpus: cpus.count(),
            quantum_ns: cpus.quantum_ns(),
            busy_ns: cpus.busy_ns(),
            utilization: if span > 0.0 { cpus.busy_ns() as f64 / span } else { 0.0 },
            wait_ns: cpus.wait_ns(),
        })
    }
}
