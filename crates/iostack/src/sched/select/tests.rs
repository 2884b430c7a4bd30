use super::*;
use crate::kdsim::window::Cadence;
use crate::engine::timed::{StackConfig, TimedRun};
use crate::repro::sched_select::{run, stack, Phases, Trained};
use crate::sched::{build, serve_all, Cause};

fn limits() -> SchedLimits {
    SchedLimits::new(32, 4096)
}

/// Reads of eight processes (sync and async, some adjacent so that schedulers merge them) and a
/// few writes, arriving over 8 ms.
fn requests() -> Vec<IoRequest> {
    let mut v = Vec::new();
    for i in 0..40u64 {
        let pid = (i % 8) as u32 + 1;
        let block = if i % 5 == 0 { 1000 + i } else { (i * 7919) % 5000 * 8 };
        let op = if i % 9 == 4 { Op::Write } else { Op::Read };
        let sync = op == Op::Read && i % 3 != 0;
        let cause = if op == Op::Write { Cause::Writeback } else if sync { Cause::Demand } else { Cause::Prefetch };
        v.push(IoRequest { op, device: 0, block, blocks: 1 + (i % 3) as u32, sync, cause, arrival_ns: i * 200_000, pid });
    }
    v
}

/// The blocks of `rs`, sorted, each (op, block) once per time it is covered.
fn blocks(rs: impl IntoIterator<Item = IoRequest>) -> Vec<(bool, u64)> {
    let mut v: Vec<(bool, u64)> = rs.into_iter().flat_map(|r| (r.block..r.end()).map(move |b| (r.op == Op::Write, b))).collect();
    v.sort_unstable();
    v
}

const SPECS: [&str; 9] = ["noop", "cscan", "sstf", "deadline", "batch:4", "cfq", "anticipatory", "anticipatory:plug=on", "cfq:merge=process"];

/// A hand-over mid-run serves every request exactly once: those dispatched before it, and the
/// rest by the new scheduler; nothing lost, nothing twice, whichever pair.
#[test]
fn hand_over_serves_every_queued_request_once() {
    let all = requests();
    for from_spec in SPECS {
        for to_spec in SPECS {
            let mut from = build(from_spec, limits()).unwrap();
            let mut served = Vec::new();
            // Half arrive, three are dispatched and completed, one stays in the device.
            let mut t = 0;
            for r in &all[..20] {
                t = r.arrival_ns;
                from.add(*r, t);
            }
            for _ in 0..3 {
                if let Some(r) = from.dispatch(t) {
                    t += 1_000_000;
                    from.completed(&r, t);
                    served.push(r);
                }
            }
            let in_device = from.dispatch(t);
            served.extend(in_device);
            let queued_before = from.queued();
            let mut to = build(to_spec, limits()).unwrap();
            let n = hand_over(&mut *from, &mut *to, t).unwrap();
            assert_eq!(from.queued(), 0, "{from_spec} -> {to_spec}: the old scheduler is empty");
            assert!((n > 0) == (queued_before > 0) && to.queued() <= n, "{from_spec} -> {to_spec}: {n} handed over, {} queued", to.queued());
            // The rest arrive at the new scheduler; the request in the device finishes there
            // unannounced.
            for r in &all[20..] {
                to.add(*r, t.max(r.arrival_ns));
            }
            served.extend(serve_all(&mut *to, t + 1_000_000, 1_000_000).into_iter().map(|(r, _)| r));
            assert_eq!(blocks(served), blocks(all.iter().copied()), "{from_spec} -> {to_spec}");
        }
    }
}

/// Handed-over requests keep their arrival (deadline's FIFO expiry runs from it) and come oldest
/// first.
#[test]
fn take_queued_gives_the_oldest_first_with_their_arrivals() {
    for spec in SPECS {
        let mut s = build(spec, limits()).unwrap();
        for r in requests() {
            s.add(r, r.arrival_ns);
        }
        let v = s.take_queued().unwrap();
        assert!(v.windows(2).all(|w| w[0].arrival_ns <= w[1].arrival_ns), "{spec}");
        assert_eq!(blocks(v.iter().copied()), blocks(requests()), "{spec}");
        assert_eq!(s.queued(), 0, "{spec}");
    }
}

#[test]
fn the_virtual_disk_hands_its_queue_over_too() {
    let mut t = TableModel::new(1 << 30, 64).unwrap();
    t.observe(Op::Read, 4096, 0, 1_000_000);
    let mut vd = VirtualDisk::new(build("noop", limits()).unwrap(), t, 4096);
    for i in 0..10u64 {
        vd.submit(VirtualRequest { id: i, pid: i as u32 + 1, op: Op::Read, block: i * 1000, blocks: 1, sync: true, issued_behind: None, issued_queued: None, awaits_real: false }, 0);
    }
    vd.advance(1);
    assert_eq!(vd.replace_scheduler(build("anticipatory", limits()).unwrap(), 1_500_000), Some(8), "one served, one in service");
    vd.drain();
    let mut ids: Vec<u64> = vd.take_completed().iter().map(|c| c.id).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..10).collect::<Vec<_>>());
}

#[test]
fn parse() {
    let c = super::parse("anticipatory,deadline:read_expire=100ms,fifo_batch=8,window=500,cadence=sliding,table=t.json").unwrap();
    assert_eq!(c.specs, ["anticipatory".to_string(), "deadline:read_expire=100ms,fifo_batch=8".to_string()]);
    assert_eq!((c.window, c.cadence, c.table.as_deref()), (500, Cadence::Sliding, Some(std::path::Path::new("t.json"))));
    let c = super::parse("cfq, noop").unwrap();
    assert_eq!((c.specs[1].as_str(), c.window, c.cadence, c.table.is_none(), c.verify), ("noop", 1000, Cadence::Tumbling, true, true));
    assert!(!super::parse("cfq,noop,verify=off").unwrap().verify);
    for (bad, names) in [
        ("cfq", "two schedulers"),
        ("cfq,noop,deadline", "two schedulers"),
        ("cfq,cfq", "the same"),
        ("fifo_batch=8,cfq,noop", "--sched-select"),
        ("cfq,noop,margin=100", "--sched-select margin"),
        ("cfq,noop,window=0", "--sched-select window"),
        ("cfq,noop,cadence=hourly", "--sched-select cadence"),
        ("cfq,noop,table=", "--sched-select table"),
        ("cfq,noop,verify=maybe", "--sched-select verify"),
    ] {
        let e = super::parse(bad).unwrap_err().to_string();
        assert!(e.contains(names), "{bad}: {e}");
    }
}

#[test]
fn impossible_configurations_are_refused() {
    let with = |select: &str, f: &dyn Fn(&mut StackConfig)| {
        let mut c = StackConfig { sched_select: Some(select.into()), ..stack("cscan") };
        f(&mut c);
        TimedRun::new(&c).err().map(|e| e.to_string()).unwrap_or_default()
    };
    let e = with("cfq,nosuch", &|_| {});
    assert!(e.contains("nosuch") && e.contains("--sched-select"), "{e}");
    let e = with("cfq,deadline:fifo_batch=0", &|_| {});
    assert!(e.contains("fifo_batch"), "{e}");
    let e = with("cfq,deadline", &|c| c.sched = "noop".into());
    assert!(e.contains("--sched-select") && e.contains("--sched"), "{e}");
    let e = with("cfq,deadline", &|c| {
        c.redcap = Some("on".into());
        c.ada = Some("on".into());
    });
    assert!(e.contains("--ada"), "{e}");
    let e = with("cfq,deadline,table=/nonexistent/t.json", &|_| {});
    assert!(e.contains("/nonexistent/t.json"), "{e}");
    assert_eq!(with("cfq,deadline", &|_| {}), "", "a valid controller builds");
}

fn sequential_readers() -> Phases {
    Phases { processes: 8, seq_bytes: 16 << 20, random_reads: 0, ..Default::default() }
}

/// Eight concurrent sequential synchronous readers: CFQ (idling on each process's queue) wins
/// by far over deadline (a seek between the files at almost every request). Started on
/// deadline, the controller moves to CFQ once the virtual disk has played a window of reads
/// under CFQ (the virtual disk learns each process's next read only when deadline has served the
/// previous one for real, so that takes a few windows) and ends far from fixed deadline; started
/// on CFQ it never leaves it: the virtual disk, playing each process's closed loop on its own
/// timeline, shows deadline's seeks. With no reason to leave (a margin no window reaches), the
/// controller is fixed CFQ exactly. The report keeps its promised keys.
#[test]
fn moves_to_the_clearly_better_scheduler_and_stays() {
    let w = sequential_readers();
    let (seq_reads, _) = w.requests();
    let table = Trained::new(&stack("cfq").device).unwrap();
    let cfq = run(&stack("cfq"), &w).unwrap().elapsed_ns as f64;
    let deadline = run(&stack("deadline"), &w).unwrap().elapsed_ns as f64;
    assert!(deadline > 3.0 * cfq, "the workload favours cfq clearly: {cfq} vs {deadline}");
    let r = run(&table.config("deadline,cfq,window=500"), &w).unwrap();
    let s = r.sched_select.as_ref().unwrap();
    let switches = s["switches"].as_array().unwrap();
    assert_eq!(switches.len(), 1, "{switches:?}");
    assert_eq!(switches[0]["scheduler"], "cfq");
    assert!(switches[0]["request"].as_u64().unwrap() < seq_reads / 2, "early in the run: {switches:?}");
    let elapsed = r.elapsed_ns as f64;
    assert!(elapsed < deadline / 2.0, "controller {elapsed} vs cfq {cfq}, deadline {deadline}");
    for k in ["window", "cadence", "margin_pct", "table", "schedulers", "switches", "reads", "checks", "undecided_checks", "windows", "trained_cells", "verify", "reverted_switches"] {
        assert!(s.get(k).is_some(), "missing {k}");
    }
    let shares: f64 = s["schedulers"].as_array().unwrap().iter().map(|x| x["time_share"].as_f64().unwrap()).sum();
    assert!((shares - 1.0).abs() < 1e-9);
    assert!(r.resolved["sched"].as_str().unwrap().starts_with("select:deadline|cfq"));
    let r = run(&table.config("cfq,deadline,window=500"), &w).unwrap();
    assert_eq!(r.sched_select.as_ref().unwrap()["switches"].as_array().unwrap().len(), 0, "stays on cfq");
    assert_eq!(r.elapsed_ns as f64, cfq);
    // Never switching, the controller is the running scheduler exactly.
    let r = run(&table.config("cfq,deadline,window=500,margin=99.99"), &w).unwrap();
    assert_eq!(r.sched_select.as_ref().unwrap()["switches"].as_array().unwrap().len(), 0);
    assert_eq!(r.elapsed_ns as f64, cfq, "the controller changes nothing while it keeps the running scheduler");
}

/// Same input, same output.
#[test]
fn deterministic() {
    let w = Phases { processes: 4, seq_bytes: 1 << 20, random_reads: 200, ..Default::default() };
    let c = StackConfig { sched_select: Some("cfq,deadline,window=100".into()), ..stack("cscan") };
    let a = run(&c, &w).unwrap();
    let b = run(&c, &w).unwrap();
    assert_eq!(a.elapsed_ns, b.elapsed_ns);
    assert_eq!(a.sched_select, b.sched_select);
}

/// The verification's rule: a switch whose first real window is worse than the replaced
/// scheduler's last one is reverted; each revert doubles the hold (1, 2, 4 windows) during which
/// no switch may be decided; a confirmed switch resets it to one window; nothing is decided while
/// a switch awaits its verdict.
#[test]
fn verification_reverts_a_worse_switch_and_backs_off() {
    let n = 100;
    let mut v = Verifier::new(n);
    assert_eq!(v.check(100, Some(5.0)), Verdict::Idle);
    assert!(v.may_switch(100));
    // Switch at 100 (the old scheduler's sum 10): no verdict before the new one's window is real.
    v.switched(100, 10.0);
    assert!(!v.may_switch(150));
    assert_eq!(v.check(150, Some(50.0)), Verdict::Wait);
    assert_eq!(v.check(200, None), Verdict::Wait);
    // Worse on the real device: revert, hold one window.
    assert_eq!(v.check(200, Some(12.0)), Verdict::Revert { after_ms: 12.0, hold_windows: 1 });
    assert!(!v.may_switch(299) && v.may_switch(300));
    // Again: the hold doubles, then doubles again.
    v.switched(300, 10.0);
    assert_eq!(v.check(400, Some(11.0)), Verdict::Revert { after_ms: 11.0, hold_windows: 2 });
    assert!(!v.may_switch(599) && v.may_switch(600));
    v.switched(600, 10.0);
    assert_eq!(v.check(700, Some(10.5)), Verdict::Revert { after_ms: 10.5, hold_windows: 4 });
    assert!(!v.may_switch(1099) && v.may_switch(1100));
    // A switch no worse (a tie included) stands and resets the hold to one window.
    v.switched(1100, 10.0);
    assert_eq!(v.check(1200, Some(10.0)), Verdict::Confirm { after_ms: 10.0 });
    assert_eq!(v.check(1300, Some(1.0)), Verdict::Idle);
    assert!(v.may_switch(1200));
    v.switched(1300, 10.0);
    assert_eq!(v.check(1400, Some(20.0)), Verdict::Revert { after_ms: 20.0, hold_windows: 1 });
}

/// On the phased workload, a switch from CFQ to deadline that the real device shows worse is
/// switched back a window later and marked reverted, the revert names its cause, and every
/// switch's verdict respects the rule; with `verify=off` nothing is marked.
#[test]
fn reverted_switches_are_reported() {
    let w = Phases { processes: 8, seq_bytes: 2 << 20, random_reads: 300, ..Default::default() };
    let table = Trained::new(&stack("cfq").device).unwrap();
    let r = run(&table.config("cfq,deadline,window=200"), &w).unwrap();
    let s = r.sched_select.as_ref().unwrap();
    let sw = s["switches"].as_array().unwrap();
    let reverted = sw.iter().filter(|x| x["reverted"] == true).count();
    assert_eq!(s["reverted_switches"].as_u64().unwrap() as usize, reverted);
    assert!(reverted > 0, "the biased virtual disk leads to at least one reverted switch: {sw:?}");
    for (i, x) in sw.iter().enumerate() {
        if x["reverted"] == true {
            assert!(x["after_ms"].as_f64().unwrap() > x["before_ms"].as_f64().unwrap(), "{x}");
            assert_eq!(sw.get(i + 1).map(|y| y["cause"].clone()), Some(serde_json::json!("revert")), "{sw:?}");
        } else if let Some(after) = x["after_ms"].as_f64() {
            assert!(after <= x["before_ms"].as_f64().unwrap(), "{x}");
        }
    }
    let r = run(&table.config("cfq,deadline,window=200,verify=off"), &w).unwrap();
    let s = r.sched_select.as_ref().unwrap();
    assert_eq!(s["reverted_switches"], 0);
    assert!(s["switches"].as_array().unwrap().iter().all(|x| x["cause"] == "window" && x["after_ms"].is_null()));
}
