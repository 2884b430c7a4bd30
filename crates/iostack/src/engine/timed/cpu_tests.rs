//! Processes sharing CPUs in the timed engine (`cpus`, [`super::cpu`]): compute serialises on
//! one CPU, I/O overlaps another process's compute, and without `cpus` nothing changes.

use super::{StackConfig, TimedReport, TimedRun};
use crate::trace::{Request, VecReader};

const MS: u64 = 1_000_000;

/// Process `pid` reads `n` blocks from `first` on, its requests `gap_ms` apart in the trace.
fn reads(pid: u32, first: u64, n: u64, gap_ms: u64) -> Vec<Request> {
    (0..n).map(|i| Request { pid, ..Request::read((first + i) * 4096, 4096).at(i * gap_ms * MS) }).collect()
}

fn merged(mut a: Vec<Request>, b: Vec<Request>) -> Vec<Request> {
    a.extend(b);
    a.sort_by_key(|r| r.time_ns);
    a
}

/// Think time from the trace, one 10 ms disk, no prefetching.
fn config(cpus: Option<u32>, preload: Option<&str>) -> StackConfig {
    StackConfig {
        device: "fixed:10ms".into(),
        sched: "noop".into(),
        prefetch: "none".into(),
        cache: "1000".into(),
        think: "trace".into(),
        locality: false,
        cpus,
        preload: preload.map(str::to_string),
        ..Default::default()
    }
}

fn run(c: &StackConfig, reqs: &[Request]) -> TimedReport {
    TimedRun::new(c).unwrap().run(&mut VecReader::new(reqs.to_vec())).unwrap()
}

fn cpu_of(r: &TimedReport, pid: u32) -> (u64, u64) {
    let p = r.processes.iter().find(|p| p.pid == pid).unwrap();
    (p.cpu_ns.unwrap(), p.cpu_wait_ns.unwrap())
}

/// Two processes computing 40 ms each between cached blocks: side by side without `cpus` or
/// with two CPUs, one after the other's compute on one CPU (the run takes the sum).
#[test]
fn two_computing_processes_on_one_cpu_take_the_sum_of_their_compute() {
    let reqs = merged(reads(1, 0, 5, 10), reads(2, 100, 5, 10));
    let warm = Some("0-4,100-104");
    let own = run(&config(None, warm), &reqs);
    assert_eq!(own.elapsed_ns, 40 * MS);
    assert!(own.cpu.is_none() && own.processes.iter().all(|p| p.cpu_ns.is_none()));
    let two = run(&config(Some(2), warm), &reqs);
    assert_eq!(two.elapsed_ns, 40 * MS);
    assert_eq!((cpu_of(&two, 1), cpu_of(&two, 2)), ((40 * MS, 0), (40 * MS, 0)));
    let one = run(&config(Some(1), warm), &reqs);
    assert_eq!(one.elapsed_ns, 80 * MS, "the sum of the two processes' compute");
    let (c1, w1) = cpu_of(&one, 1);
    let (c2, w2) = cpu_of(&one, 2);
    assert_eq!((c1, c2), (40 * MS, 40 * MS));
    // They alternate: every burst but pid 1's first waits 10 ms for one of the other's.
    assert_eq!((w1, w2), (30 * MS, 40 * MS));
    let cpu = one.cpu.clone().unwrap();
    assert_eq!((cpu.cpus, cpu.quantum_ns, cpu.busy_ns, cpu.wait_ns), (1, 100 * MS, 80 * MS, 70 * MS));
    assert!((cpu.utilization - 1.0).abs() < 1e-9);
    // Deterministic.
    assert_eq!(serde_json::to_string(&run(&config(Some(1), warm), &reqs)).unwrap(), serde_json::to_string(&one).unwrap());
}

/// One process computes between cached blocks while the other waits for its disk reads: on one
/// CPU the reads overlap the compute, and the run takes the longer of the two, not the sum.
#[test]
fn one_process_io_overlaps_another_process_compute() {
    // pid 1: 4 bursts of 10 ms; pid 2: 5 reads of 10 ms, no compute (all at trace time 0).
    let reqs = merged(reads(1, 0, 5, 10), reads(2, 100, 5, 0));
    let c = config(Some(1), Some("0-4@1"));
    let one = run(&c, &reqs);
    assert_eq!(one.elapsed_ns, 50 * MS);
    assert_eq!(cpu_of(&one, 1), (40 * MS, 0));
    assert_eq!(cpu_of(&one, 2), (0, 0));
    assert_eq!(one.elapsed_ns, run(&config(None, Some("0-4@1")), &reqs).elapsed_ns);
}

/// A burst longer than the quantum is cut into slices that alternate with the other process's.
#[test]
fn bursts_longer_than_the_quantum_alternate() {
    // Each process: a cached block, 25 ms of compute, another cached block.
    let reqs = merged(reads(1, 0, 2, 25), reads(2, 100, 2, 25));
    let mut c = config(Some(1), Some("0-1,100-101"));
    c.cpu_quantum = Some("10ms".into());
    let r = run(&c, &reqs);
    // Slices 1: 0-10, 2: 10-20, 1: 20-30, 2: 30-40, 1: 40-45, 2: 45-50.
    let end = |pid| r.processes.iter().find(|p| p.pid == pid).unwrap().end_ns;
    assert_eq!((end(1), end(2)), (45 * MS, 50 * MS));
    assert_eq!(cpu_of(&r, 1), (25 * MS, 20 * MS));
    assert_eq!(cpu_of(&r, 2), (25 * MS, 25 * MS));
}

#[test]
fn bad_cpu_settings_are_errors_naming_the_option() {
    let err = |c: StackConfig| TimedRun::new(&c).err().expect("refused").to_string();
    assert!(err(config(Some(0), None)).contains("--cpus"));
    assert!(err(config(Some(super::config::MAX_CPUS + 1), None)).contains("out of range"));
    let mut c = config(Some(1), None);
    c.replay = super::Replay::Open;
    assert!(err(c).contains("closed-loop"));
    let mut c = config(Some(1), None);
    c.cpu_quantum = Some("0ms".into());
    assert!(err(c).contains("--cpu-quantum"));
    let mut c = config(None, None);
    c.cpu_quantum = Some("10ms".into());
    assert!(err(c).contains("give --cpus"));
}
