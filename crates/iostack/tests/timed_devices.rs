//! Several devices: `device = "0=...,1=..."` gives each device id of the trace its own
//! scheduler and device model.

use iostack::engine::timed::{Replay, StackConfig, TimedRun};
use iostack::trace::{Op, Request, VecReader};

fn read(time_ns: u64, pid: u32, device: u32, block: u64) -> Request {
    Request { time_ns, offset: block * 4096, length: 4096, pid, device, op: Op::Read, file: None }
}

fn config(device: &str) -> StackConfig {
    StackConfig {
        cache: "1MiB".into(),
        prefetch: "none".into(),
        sched: "noop".into(),
        device: device.into(),
        write_policy: iostack::engine::timed::WritePolicy::Through,
        locality: false,
        ..Default::default()
    }
}

/// Two processes, one per device: 30 reads of distinct blocks on device 0 and 20 on device 1,
/// interleaved in time, and 5 writes to each device (written through).
fn two_device_trace() -> Vec<Request> {
    let mut v = Vec::new();
    for i in 0..30u64 {
        v.push(read(i * 100_000, 1, 0, 10 * i));
        if i < 20 {
            v.push(read(i * 100_000, 2, 1, 10 * i));
        }
    }
    for i in 0..5u64 {
        v.push(Request { op: Op::Write, ..read(4_000_000, 1, 0, 1000 + 10 * i) });
        v.push(Request { op: Op::Write, ..read(4_000_000, 2, 1, 1000 + 10 * i) });
    }
    v
}

#[test]
fn each_device_id_is_served_only_by_its_own_device() {
    for replay in [Replay::Closed, Replay::Open] {
        let mut c = config("0=fixed:1ms,1=fixed:10ms");
        c.replay = replay;
        let rep = TimedRun::new(&c).unwrap().run(&mut VecReader::new(two_device_trace())).unwrap();
        assert_eq!(rep.devices.len(), 2);
        let (d0, d1) = (&rep.devices[0], &rep.devices[1]);
        assert_eq!((d0.id, d0.model.as_str(), d1.id, d1.model.as_str()), (Some(0), "fixed:1ms", Some(1), "fixed:10ms"));
        assert_eq!((d0.counts.reads, d0.counts.writes, d0.counts.blocks_read, d0.counts.blocks_written), (30, 5, 30, 5), "{replay:?}");
        assert_eq!((d1.counts.reads, d1.counts.writes, d1.counts.blocks_read, d1.counts.blocks_written), (20, 5, 20, 5), "{replay:?}");
        // A fixed-cost device spends exactly its cost on each request.
        assert_eq!(d0.counts.busy_ns, 35 * 1_000_000);
        assert_eq!(d1.counts.busy_ns, 25 * 10_000_000);
        assert_eq!((d0.scheduler.requests_out, d1.scheduler.requests_out), (35, 25));
        // The aggregate figures are the sums.
        assert_eq!(rep.device_requests, 60);
        assert_eq!(rep.device_busy_ns, 35 * 1_000_000 + 25 * 10_000_000);
        assert_eq!(rep.device.requests, 60);
        assert_eq!(rep.sched.requests_out, 60);
        assert_eq!(rep.resolved["device"], "0=fixed:1ms,1=fixed:10ms");
        // The two devices work at the same time: the run lasts about as long as the slower one.
        assert!(rep.end_ns < 35 * 1_000_000 + 25 * 10_000_000, "{}", rep.end_ns);
    }
    // Closed loop, one process per device: each process's reads take its device's time.
    let rep = TimedRun::new(&config("0=fixed:1ms,1=fixed:10ms")).unwrap().run(&mut VecReader::new(two_device_trace())).unwrap();
    let p = |pid: u32| rep.processes.iter().find(|p| p.pid == pid).unwrap().clone();
    assert_eq!(p(1).device_max_response_ns, 1_000_000);
    assert_eq!(p(2).device_max_response_ns, 10_000_000);
}

#[test]
fn one_spec_serves_every_device_id_as_before() {
    let rep = TimedRun::new(&config("fixed:1ms")).unwrap().run(&mut VecReader::new(two_device_trace())).unwrap();
    assert_eq!(rep.devices.len(), 1);
    assert_eq!(rep.devices[0].id, None);
    assert_eq!(rep.devices[0].counts, rep.device);
    assert_eq!(rep.device.busy_ns, 60 * 1_000_000);
    assert_eq!(rep.resolved["device"], "fixed:1ms");
}

#[test]
fn a_device_id_missing_from_the_map_is_an_error_naming_it() {
    let err = TimedRun::new(&config("0=fixed:1ms")).unwrap().run(&mut VecReader::new(two_device_trace())).unwrap_err().to_string();
    assert!(err.contains("--device") && err.contains("device id 1") && err.contains("maps ids 0"), "{err}");
    let err = TimedRun::new(&config("0=fixed:1ms,1=nonsense")).err().unwrap().to_string();
    assert!(err.contains("--device"), "{err}");
}

/// A device map names the trace's own ids, whatever they are and in whatever order: devices 7
/// and 3 mapped as `3=...,7=...` (the engine numbers devices densely inside).
#[test]
fn device_map_names_the_traces_own_ids() {
    let mut v = Vec::new();
    for i in 0..10u64 {
        v.push(read(i * 100_000, 1, 7, 10 * i));
        v.push(read(i * 100_000, 2, 3, 10 * i));
    }
    let rep = TimedRun::new(&config("3=fixed:1ms,7=fixed:10ms")).unwrap().run(&mut VecReader::new(v.clone())).unwrap();
    let by_id: std::collections::HashMap<_, _> = rep.devices.iter().map(|d| (d.id, (d.model.clone(), d.counts.busy_ns))).collect();
    assert_eq!(by_id[&Some(3)], ("fixed:1ms".to_string(), 10 * 1_000_000));
    assert_eq!(by_id[&Some(7)], ("fixed:10ms".to_string(), 10 * 10_000_000));
    // An id the map does not name is refused, by its trace id.
    let err = TimedRun::new(&config("3=fixed:1ms")).unwrap().run(&mut VecReader::new(v)).unwrap_err().to_string();
    assert!(err.contains("device id 7"), "{err}");
}
