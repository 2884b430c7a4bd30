//! Processes below the page cache: every request leaving the cache carries the pid of the
//! process it is for, runs are never joined across processes, and the report and the device
//! stream show each process's share of the device.

use iostack::engine::timed::{Boundary, Replay, RequestRecorder as Recorder, StackConfig, TimedRun};
use iostack::trace::{Op, Request, VecReader};

fn req(time_ns: u64, pid: u32, op: Op, block: u64, blocks: u64) -> Request {
    Request { time_ns, offset: block * 4096, length: blocks * 4096, pid, device: 0, op, file: None }
}

fn config() -> StackConfig {
    StackConfig {
        cache: "1MiB".into(),
        prefetch: "none".into(),
        sched: "noop".into(),
        device: "fixed:1ms".into(),
        replay: Replay::Open,
        flush_interval: "1s".into(),
        dirty_expire: "1s".into(),
        locality: false,
        ..Default::default()
    }
}

#[test]
fn requests_below_the_cache_carry_their_process() {
    // pid 2 and pid 3 dirty neighbouring blocks; the flusher writes them back for each of them
    // (two requests leave the cache, the scheduler merges them into one device request). pids 1
    // and 4 read neighbouring blocks at the same time.
    let trace = vec![
        req(0, 2, Op::Write, 0, 1),
        req(0, 3, Op::Write, 1, 1),
        req(10_000_000, 1, Op::Read, 100, 2),
        req(10_000_000, 4, Op::Read, 102, 2),
    ];
    let mut run = TimedRun::new(&config()).unwrap();
    let (cache, device) = (Recorder::default(), Recorder::default());
    run.observe(Boundary::Cache, Box::new(cache.clone()));
    run.observe(Boundary::Device, Box::new(device.clone()));
    let rep = run.run(&mut VecReader::new(trace)).unwrap();

    let cache = cache.0.borrow();
    let seen: Vec<(u32, Op, u64, u64)> = cache.iter().map(|r| (r.pid, r.op, r.offset / 4096, r.length / 4096)).collect();
    // The two reads touch adjacent blocks but belong to different processes: two requests.
    assert!(seen.contains(&(1, Op::Read, 100, 2)), "{seen:?}");
    assert!(seen.contains(&(4, Op::Read, 102, 2)), "{seen:?}");
    // Write-back goes out for the process that dirtied each block.
    assert!(seen.contains(&(2, Op::Write, 0, 1)) && seen.contains(&(3, Op::Write, 1, 1)), "{seen:?}");
    assert_eq!(seen.len(), 4);

    // The scheduler still merges across processes (its default); a merged request keeps the
    // pid of one of its parts.
    let device = device.0.borrow();
    let writes: Vec<&Request> = device.iter().filter(|r| r.op == Op::Write).collect();
    assert_eq!(writes.len(), 1, "{device:?}");
    assert_eq!(writes[0].length, 2 * 4096);
    assert!(writes[0].pid == 2 || writes[0].pid == 3);

    // The report charges each device request to its process.
    let by_pid = |pid: u32| rep.processes.iter().find(|p| p.pid == pid).unwrap().clone();
    let total: u64 = rep.processes.iter().map(|p| p.device_requests).sum();
    assert_eq!(total, rep.device_requests);
    let p1 = by_pid(1);
    assert_eq!((p1.device_requests, p1.device_sync_requests, p1.device_blocks_read), (1, 1, 2));
    // A fixed-cost device serves each request in 1 ms.
    assert!(p1.device_mean_response_ns >= 1e6, "{p1:?}");
    let writers = by_pid(2).device_blocks_written + by_pid(3).device_blocks_written;
    assert_eq!(writers, 2);
    assert_eq!(by_pid(2).device_sync_requests + by_pid(3).device_sync_requests, 0, "write-back is asynchronous");
}

#[test]
fn write_through_is_synchronous_and_prefetch_asynchronous() {
    let mut c = config();
    c.write_policy = iostack::engine::timed::WritePolicy::Through;
    c.prefetch = "obl".into();
    let trace = vec![req(0, 7, Op::Write, 50, 1), req(5_000_000, 8, Op::Read, 10, 1)];
    let rep = TimedRun::new(&c).unwrap().run(&mut VecReader::new(trace)).unwrap();
    let p = |pid: u32| rep.processes.iter().find(|p| p.pid == pid).unwrap().clone();
    assert_eq!((p(7).device_requests, p(7).device_sync_requests, p(7).device_blocks_written), (1, 1, 1));
    // The demand read of block 10 (sync) and the one-block lookahead of block 11 (async), both
    // for pid 8; noop merges them into one request, which keeps the demand part's flag.
    assert_eq!(p(8).device_blocks_read, 2);
    assert!(p(8).device_requests >= 1);
}

/// Two processes reading their own blocks, each `n` one-block reads, written one after the
/// other (as a generator that emits its processes in turn would), the second's times starting
/// again at `second_start`.
fn sequential_processes(n: u64, gap_ns: u64, second_start: u64) -> Vec<Request> {
    let mut v: Vec<Request> = (0..n).map(|i| req(i * gap_ns, 1, Op::Read, i * 10, 1)).collect();
    v.extend((0..n).map(|i| req(second_start + i * gap_ns, 2, Op::Read, 100_000 + i * 10, 1)));
    v
}

fn warnings_of(trace: Vec<Request>, replay: Replay) -> (Vec<String>, iostack::engine::timed::TimedReport) {
    let mut c = config();
    c.replay = replay;
    let rep = TimedRun::new(&c).unwrap().run(&mut VecReader::new(trace)).unwrap();
    (rep.warnings.clone(), rep)
}

#[test]
fn a_trace_whose_time_goes_back_warns_once() {
    // Process 2's times start again at 0 after process 1's 0..199 ms: all but its last go back.
    for replay in [Replay::Closed, Replay::Open] {
        let (w, rep) = warnings_of(sequential_processes(200, 1_000_000, 0), replay);
        assert_eq!(w.len(), 1, "{replay:?}: {w:?}");
        assert!(w[0].contains("trace time goes backwards: 199 request(s)") && w[0].contains("request 201, pid 2"), "{}", w[0]);
        assert_eq!(serde_json::to_value(&rep).unwrap()["warnings"], serde_json::json!(w));
    }
}

#[test]
fn a_process_reached_long_after_its_trace_time_warns_in_closed_loop() {
    // All times 0 (no think time), process 2 after all of process 1: the reader's look-ahead
    // (one batch of 4,096 requests beyond what process 1 still has to issue) finds process 2
    // only when process 1 has issued all but its last 904 reads of 1 ms, though its trace
    // time says it starts at once.
    let (w, rep) = warnings_of(sequential_processes(5000, 0, 0), Replay::Closed);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("1 process(es) started late (the first: pid 2, trace time 0.000 s"), "{}", w[0]);
    let p2 = rep.processes.iter().find(|p| p.pid == 2).unwrap();
    assert!(p2.start_ns >= 4_000_000_000, "{p2:?}");
    // Within the look-ahead, the same layout starts both at once, and does not warn.
    let (w, rep) = warnings_of(sequential_processes(200, 0, 0), Replay::Closed);
    assert!(w.is_empty(), "{w:?}");
    assert!(rep.processes.iter().all(|p| p.start_ns == 0), "{:?}", rep.processes);
    // Open loop issues each request at its trace time: both processes start at 0.
    let (w, _) = warnings_of(sequential_processes(5000, 0, 0), Replay::Open);
    assert!(w.is_empty(), "{w:?}");
}

#[test]
fn closed_loop_processes_start_at_their_trace_times() {
    // Three processes with their first request at trace time 0 and one at 5 ms, in time
    // order; each reads its own blocks (misses of 2 ms each) every 1 ms of trace time, so every
    // process runs behind its trace times once started.
    let mut trace = Vec::new();
    for i in 0..20u64 {
        for pid in 1..=3u32 {
            trace.push(req(i * 1_000_000, pid, Op::Read, pid as u64 * 10_000 + i * 10, 1));
        }
        trace.push(req(5_000_000 + i * 1_000_000, 4, Op::Read, 40_000 + i * 10, 1));
    }
    trace.sort_by_key(|r| r.time_ns);
    for think in ["none", "trace"] {
        let mut c = config();
        c.replay = Replay::Closed;
        c.device = "fixed:2ms".into();
        c.think = think.into();
        let mut run = TimedRun::new(&c).unwrap();
        let front = Recorder::default();
        run.observe(Boundary::Front, Box::new(front.clone()));
        let rep = run.run(&mut VecReader::new(trace.clone())).unwrap();
        assert!(rep.warnings.is_empty(), "{:?}", rep.warnings);
        let starts: Vec<(u32, u64)> = rep.processes.iter().map(|p| (p.pid, p.start_ns)).collect();
        assert_eq!(starts, [(1, 0), (2, 0), (3, 0), (4, 5_000_000)], "think {think}");
        // Each process's first request is issued at its start; its later ones follow its own
        // completions (a 2 ms read on a device shared by all), plus the think time.
        let front = front.0.borrow();
        for pid in 1..=4u32 {
            let issues: Vec<u64> = front.iter().filter(|r| r.pid == pid).map(|r| r.time_ns).collect();
            assert_eq!(issues.len(), 20);
            assert_eq!(issues[0], if pid == 4 { 5_000_000 } else { 0 }, "think {think}, pid {pid}");
            assert!(issues.windows(2).all(|w| w[1] >= w[0] + 2_000_000), "think {think}, pid {pid}: {issues:?}");
        }
        // Nothing waits for process 1 to get to a request: the four overlap from the start.
        let p1_end = rep.processes[0].end_ns;
        assert!(rep.processes.iter().all(|p| p.start_ns < p1_end));
    }
}

#[test]
fn interleaved_processes_and_late_trace_starts_do_not_warn() {
    // The same requests in time order: both processes run from the start, each issuing its
    // first request at its trace time 0.
    let mut trace = sequential_processes(200, 1_000_000, 0);
    trace.sort_by_key(|r| r.time_ns);
    let (w, rep) = warnings_of(trace, Replay::Closed);
    assert!(w.is_empty(), "{w:?}");
    let starts: Vec<u64> = rep.processes.iter().map(|p| p.start_ns).collect();
    assert_eq!(starts, [0, 0]);
    assert!(serde_json::to_value(&rep).unwrap().get("warnings").is_none());
    // A process the trace starts late, on time: no warning either.
    let (w, _) = warnings_of(sequential_processes(200, 1_000_000, 400_000_000), Replay::Closed);
    assert!(w.is_empty(), "{w:?}");
}
