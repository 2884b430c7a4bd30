//! Processes below the page cache: every request leaving the cache carries the pid of the
//! process it is for, runs are never joined across processes, and the report and the device
//! stream show each process's share of the device.

use std::cell::RefCell;
use std::rc::Rc;

use iostack::engine::timed::{Boundary, BoundaryObserver, Replay, StackConfig, TimedRun};
use iostack::trace::{Op, Request, VecReader};

/// Records the requests crossing a boundary.
#[derive(Clone, Default)]
struct Recorder(Rc<RefCell<Vec<Request>>>);

impl BoundaryObserver for Recorder {
    fn observe(&mut self, r: &Request) {
        self.0.borrow_mut().push(*r);
    }
    fn finish(&mut self) -> Result<serde_json::Value, String> {
        Ok(serde_json::Value::Null)
    }
}

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
