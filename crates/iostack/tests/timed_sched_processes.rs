//! Per-process schedulers in the timed stack: two processes each read their own file
//! sequentially with synchronous reads (closed loop, no readahead, a cache far smaller than the
//! files). CFQ (time slices, idling for the active process's next read) and the anticipatory
//! scheduler (waiting after a read for the same process's next one) let one process run on for
//! many requests; noop serves the requests as they come, so the processes alternate.

use std::cell::RefCell;
use std::rc::Rc;

use iostack::engine::timed::{Boundary, BoundaryObserver, StackConfig, TimedRun};
use iostack::trace::{Op, Request, VecReader};

/// Records the pid of every request reaching the device.
#[derive(Clone, Default)]
struct Pids(Rc<RefCell<Vec<u32>>>);

impl BoundaryObserver for Pids {
    fn observe(&mut self, r: &Request) {
        self.0.borrow_mut().push(r.pid);
    }
    fn finish(&mut self) -> Result<serde_json::Value, String> {
        Ok(serde_json::Value::Null)
    }
}

const READS: u64 = 2000;

/// The device's pid sequence, its number of runs of one pid and their mean length, under
/// `sched`.
fn device_runs(sched: &str) -> (Vec<u32>, usize, f64) {
    // Process 1 reads blocks 0.., process 2 blocks 20_000_000.. (80 GB further on), one page
    // per read, both starting at time 0.
    let mut trace = Vec::new();
    for i in 0..READS {
        for (pid, base) in [(1u32, 0u64), (2, 20_000_000)] {
            let block = base + i;
            trace.push(Request { time_ns: 0, offset: block * 4096, length: 4096, pid, device: 0, op: Op::Read, file: None });
        }
    }
    let config = StackConfig {
        cache: "256KiB".into(),
        prefetch: "none".into(),
        sched: sched.into(),
        device: "hdd:st3400620as".into(),
        locality: false,
        ..Default::default()
    };
    let mut run = TimedRun::new(&config).unwrap();
    let pids = Pids::default();
    run.observe(Boundary::Device, Box::new(pids.clone()));
    let rep = run.run(&mut VecReader::new(trace)).unwrap();
    let seq = pids.0.borrow().clone();
    assert_eq!(seq.len() as u64, 2 * READS, "{sched}: every read reaches the device once");
    assert_eq!(rep.device_requests, 2 * READS);
    let runs = 1 + seq.windows(2).filter(|w| w[0] != w[1]).count();
    let mean = seq.len() as f64 / runs as f64;
    eprintln!("{sched:>22}: {runs} runs, mean run {mean:7.2} requests, elapsed {:.1} ms", rep.elapsed_ns as f64 / 1e6);
    (seq.clone(), runs, mean)
}

#[test]
fn cfq_and_anticipatory_serve_long_runs_of_one_process_noop_alternates() {
    let (seq, _, noop) = device_runs("noop");
    assert!(seq.contains(&1) && seq.contains(&2), "both processes reach the device with their pids");
    assert!(noop < 1.5, "noop: mean run {noop:.2}, the processes should alternate");
    for sched in ["cfq", "anticipatory", "as", "cfq:plug=on", "anticipatory:plug=on"] {
        let (_, runs, mean) = device_runs(sched);
        assert!(mean >= 4.0, "{sched}: mean run of one pid {mean:.2} (noop {noop:.2})");
        if sched.starts_with("cfq") {
            // Each file takes about 240 ms of sequential reading: 100 ms slices hand the device
            // from one process to the other several times.
            assert!(runs >= 4, "{sched}: {runs} runs");
        }
    }
    // Without idling, CFQ's slices end after every dispatch round: runs of at most quantum (4)
    // requests, and each process has one read in flight at a time, so they alternate again.
    let (_, _, no_idle) = device_runs("cfq:slice_idle=0ms");
    assert!(no_idle < 1.5, "cfq without idling: mean run {no_idle:.2}");
}
