//! The schedulers' choice rules on small hand-made queues.

use iostack::sched::{build, Cause, IoRequest, SchedLimits, Scheduler};
use iostack::trace::Op;

fn req(block: u64, op: Op, t: u64) -> IoRequest {
    IoRequest { op, device: 0, block, blocks: 1, sync: true, cause: Cause::Demand, arrival_ns: t, pid: 0 }
}

fn drain(s: &mut dyn Scheduler, now: u64) -> Vec<u64> {
    let mut v = Vec::new();
    while let Some(r) = s.dispatch(now) {
        v.push(r.block);
    }
    v
}

fn sched(spec: &str) -> Box<dyn Scheduler> {
    build(spec, SchedLimits::new(128, 4096)).unwrap()
}

#[test]
fn noop_is_fifo() {
    let mut s = sched("noop");
    for (i, b) in [50, 10, 30].into_iter().enumerate() {
        s.add(req(b, Op::Read, i as u64), i as u64);
    }
    assert_eq!(drain(&mut *s, 10), vec![50, 10, 30]);
}

#[test]
fn cscan_sweeps_up_then_wraps() {
    let mut s = sched("cscan");
    s.add(req(40, Op::Read, 0), 0);
    assert_eq!(s.dispatch(0).unwrap().block, 40); // head now at 41
    for b in [90, 10, 60, 20] {
        s.add(req(b, Op::Read, 1), 1);
    }
    assert_eq!(drain(&mut *s, 1), vec![60, 90, 10, 20]);
}

#[test]
fn sstf_takes_the_nearest() {
    let mut s = sched("sstf");
    s.add(req(50, Op::Read, 0), 0);
    assert_eq!(s.dispatch(0).unwrap().block, 50); // head at 51
    for b in [70, 45, 100, 0] {
        s.add(req(b, Op::Read, 1), 1);
    }
    // 45 (6 away), then 70 (24 from 46), then 100, then 0.
    assert_eq!(drain(&mut *s, 1), vec![45, 70, 100, 0]);
}

#[test]
fn deadline_serves_expired_requests_first_and_prefers_reads() {
    let mut s = sched("deadline:read_expire=10ms,write_expire=50ms");
    s.add(req(5, Op::Read, 0), 0);
    assert_eq!(s.dispatch(0).unwrap().block, 5);
    // An old read far behind the head and a young one ahead.
    s.add(req(1, Op::Read, 0), 0);
    s.add(req(900, Op::Read, 1_000_000), 1_000_000);
    s.add(req(500, Op::Write, 0), 0);
    // Batch continues in block order from the head while nothing forces otherwise...
    let mut s2 = sched("deadline:read_expire=10ms,write_expire=50ms,fifo_batch=1");
    s2.add(req(5, Op::Read, 0), 0);
    s2.dispatch(0);
    s2.add(req(1, Op::Read, 0), 0);
    s2.add(req(900, Op::Read, 1_000_000), 1_000_000);
    // ...but once the old read expired (at 20 ms) it goes first.
    assert_eq!(s2.dispatch(20_000_000).unwrap().block, 1);
    // Reads before writes; writes get their turn after being passed over twice.
    let order = drain(&mut *s, 2_000_000);
    assert_eq!(order.len(), 3);
    assert_eq!(order[0], 900);
}

#[test]
fn batch_sorts_each_batch() {
    let mut s = sched("batch:3");
    for (i, b) in [50, 10, 30, 5, 1].into_iter().enumerate() {
        s.add(req(b * 10, Op::Read, i as u64), i as u64);
    }
    // First batch: the 3 oldest (50, 10, 30) in block order; then (5, 1).
    assert_eq!(drain(&mut *s, 10), vec![100, 300, 500, 10, 50]);
}

#[test]
fn unknown_scheduler_lists_valid_ones() {
    let e = build("elevatorz", SchedLimits::new(8, 4096)).err().unwrap().to_string();
    assert!(e.contains("cscan") && e.contains("deadline"), "{e}");
    assert!(build("batch:b=0", SchedLimits::new(8, 4096)).is_err());
}

#[test]
fn names_spell_out_every_parameter_and_build_the_same_scheduler() {
    for spec in [
        "noop",
        "cfq",
        "cfq:quantum=8,slice_idle=0ms,merge=process,plug=5ms/8",
        "as",
        "anticipatory:antic_expire=2ms,read_batch_expire=1s",
        "noop:plug=on",
        "deadline:read_expire=100ms,merge=process",
        "batch:8,merge=process",
    ] {
        let name = sched(spec).name();
        assert_eq!(sched(&name).name(), name, "{spec}");
    }
    assert_eq!(
        sched("cfq").name(),
        "cfq:quantum=4,fifo_expire_sync=125ms,fifo_expire_async=250ms,slice_sync=100ms,slice_async=40ms,\
slice_async_rq=2,slice_idle=8ms,back_seek_max=16384KiB,back_seek_penalty=2"
    );
    assert_eq!(
        sched("as").name(),
        "anticipatory:read_expire=125ms,write_expire=250ms,read_batch_expire=500ms,write_batch_expire=125ms,antic_expire=6ms"
    );
}

#[test]
fn bad_scheduler_parameters_are_errors_naming_them() {
    for (spec, names) in [
        ("cfq:slice_idle=8", "cfq.slice_idle"),
        ("as:antic_expire=6", "--sched as.antic_expire"),
        ("deadline:read_expire=500", "deadline.read_expire"),
        ("cfq:quantum=0", "cfq.quantum"),
        ("cfq:slice_sync=0ms", "cfq.slice_sync"),
        ("cfq:slices=2", "cfq.slices"),
        ("noop:merge=some", "noop.merge"),
        ("noop:plug=3/4", "noop.plug"),
    ] {
        let e = build(spec, SchedLimits::new(128, 4096)).err().unwrap_or_else(|| panic!("{spec} accepted")).to_string();
        assert!(e.contains(names), "{spec}: {e}");
    }
}
