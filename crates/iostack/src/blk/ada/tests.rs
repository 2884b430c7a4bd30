use super::*;
use crate::engine::timed::{StackConfig, TimedReport, TimedRun};
use crate::workload::streams::{Merged, Placement, Stream};

fn stack(device: &str, sched: &str) -> StackConfig {
    // Page cache bypassed (no readahead, a cache too small for reuse), 128 KiB requests (spec §1.3).
    StackConfig { device: device.into(), sched: sched.into(), prefetch: "none".into(), cache: "8".into(), max_request: "128KiB".into(), locality: false, ..Default::default() }
}

fn run(cfg: &StackConfig, streams: Vec<Stream>) -> TimedReport {
    TimedRun::new(cfg).unwrap().run(&mut Merged::new("t", streams)).unwrap()
}

fn ada(cfg: &StackConfig, spec: &str) -> StackConfig {
    StackConfig { redcap: Some("on".into()), ada: Some(spec.into()), ..cfg.clone() }
}

/// A table trained off line against `device` with few samples per cell (as the paper's kernel
/// starts from trained tables), saved once per test process.
fn trained(device: &str) -> String {
    use std::sync::{Mutex, OnceLock};
    static TABLES: OnceLock<Mutex<std::collections::HashMap<String, (tempfile::TempDir, String)>>> = OnceLock::new();
    let mut g = TABLES.get_or_init(Default::default).lock().unwrap();
    let (_, path) = g.entry(device.to_string()).or_insert_with(|| {
        let mut d = crate::device::build(device).unwrap();
        let cfg = crate::kdsim::train::TrainConfig { samples: 64, ..Default::default() };
        let (t, _) = crate::kdsim::train::train(&mut *d, &cfg, &mut |_, _| {}).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.json");
        t.save(&p).unwrap();
        let p = p.display().to_string();
        (dir, p)
    });
    path.clone()
}

fn share(r: &TimedReport) -> f64 {
    r.ada.as_ref().unwrap()["activation_share"].as_f64().unwrap()
}

fn switches(r: &TimedReport) -> Vec<(u64, String)> {
    r.ada.as_ref().unwrap()["switches"].as_array().unwrap().iter().map(|s| (s["request"].as_u64().unwrap(), s["state"].as_str().unwrap().to_string())).collect()
}

fn tac(mib: u64, procs: u32) -> Vec<Stream> {
    crate::workload::tac::Tac { file_size: mib << 20, ..Default::default() }.streams(procs, &mut Placement::default())
}

fn sr512k(mib: u64, procs: u32) -> Vec<Stream> {
    crate::workload::stride::Stride { file_size: mib << 20, ..crate::workload::stride::Stride::sr512k() }.streams(procs, &mut Placement::default())
}

fn sr8k(mib: u64, procs: u32) -> Vec<Stream> {
    crate::workload::stride::Stride { file_size: mib << 20, ..crate::workload::stride::Stride::sr8k() }.streams(procs, &mut Placement::default())
}

#[test]
fn parse() {
    let c = AdaConfig::parse("window=500,cadence=sliding,table=t.json,blocks=fetched").unwrap();
    assert_eq!(c, AdaConfig { window: 500, cadence: Cadence::Sliding, table: Some("t.json".into()), blocks: Blocks::Fetched });
    assert_eq!(AdaConfig::parse("on").unwrap(), AdaConfig::default());
    for (bad, names) in [("window=0", "--ada window"), ("window=x", "--ada window"), ("cadence=hop", "--ada cadence"), ("blocks=all", "--ada blocks"), ("colour=red", "--ada"), ("table=", "--ada table"), ("window", "--ada")] {
        let e = AdaConfig::parse(bad).unwrap_err().to_string();
        assert!(e.contains(names), "{bad}: {e}");
    }
}

#[test]
fn ada_needs_redcap_and_a_readable_table() {
    let cfg = StackConfig { ada: Some("on".into()), ..stack("hdd:st3400620as", "cfq") };
    let e = TimedRun::new(&cfg).err().unwrap().to_string();
    assert!(e.contains("--ada") && e.contains("--redcap"), "{e}");
    let e = TimedRun::new(&ada(&stack("hdd:st3400620as", "cfq"), "table=/nonexistent/t.json")).err().unwrap().to_string();
    assert!(e.contains("/nonexistent/t.json"), "{e}");
}

/// D-A1 (reduced: 32 MiB files): TAC stays on and beats the normal system; the report keeps its
/// promised keys.
#[test]
fn tac_keeps_redcap_on_and_gains() {
    for (device, sched) in [("hdd:st3400620as", "cfq"), ("ssd:x25m", "noop")] {
        let base = stack(device, sched);
        let vanilla = run(&base, tac(32, 1));
        let r = run(&ada(&base, "window=1000"), tac(32, 1));
        assert!(share(&r) >= 0.9, "{device}: {}", r.ada.as_ref().unwrap());
        assert!(r.elapsed_ns < vanilla.elapsed_ns, "{device}: {} vs {}", r.elapsed_ns, vanilla.elapsed_ns);
        let a = r.ada.as_ref().unwrap();
        for k in ["switches", "activation_share", "windows"] {
            assert!(a.get(k).is_some(), "{k} missing in {a}");
        }
        assert_eq!(a["windows"].as_array().unwrap().len(), 4, "one check per 1000 reads: {a}");
        let rc = r.redcap.as_ref().unwrap();
        for k in ["requests", "partials", "misses", "partial_hits", "hits", "blocks_read"] {
            assert!(rc[k].as_u64().is_some(), "{k} missing in {rc}");
        }
    }
}

/// D-A1 (reduced, SSD model): 512k-SR turns REDCAP off at the first check and it stays off
/// (never on for more than 2 windows in all): its cost is the first window of segment reads.
#[test]
fn sparse_strides_turn_redcap_off_at_the_first_check() {
    for sched in ["noop", "cfq"] {
        let base = stack("ssd:x25m", sched);
        let spec = format!("window=1000,table={}", trained("ssd:x25m"));
        let r = run(&ada(&base, &spec), sr512k(1024, 1));
        let sw = switches(&r);
        assert_eq!(sw, vec![(1000, "inactive".to_string())], "{sched}: {}", r.ada.as_ref().unwrap());
        let reads = r.ada.as_ref().unwrap()["reads"].as_u64().unwrap();
        assert!(share(&r) * reads as f64 <= 2000.0 + 1.0, "{}", r.ada.as_ref().unwrap());
        // Off after one window of segment reads: far cheaper than REDCAP always on.
        let on = run(&StackConfig { redcap: Some("on".into()), ..base.clone() }, sr512k(1024, 1));
        let vanilla = run(&base, sr512k(1024, 1));
        assert!(r.elapsed_ns < vanilla.elapsed_ns + (on.elapsed_ns - vanilla.elapsed_ns) / 4, "{sched}: {} vs {} and {}", r.elapsed_ns, vanilla.elapsed_ns, on.elapsed_ns);
    }
}

/// On the HDD model 512k-SR costs the same with REDCAP on or off (the 128 KiB segment read ends
/// where the 4 KiB read would have waited for the platter anyway); the table's column for the
/// 4 KiB reads ([512 KiB, 1 MiB)) averages longer rotations than the stride's exact 512 KiB, so
/// ADA may keep REDCAP on, at no cost: the run is within 1 % of the normal system.
#[test]
fn sparse_strides_on_the_hdd_cost_nothing_either_way() {
    let base = stack("hdd:st3400620as", "cfq");
    let spec = format!("window=1000,table={}", trained("hdd:st3400620as"));
    let r = run(&ada(&base, &spec), sr512k(1024, 1));
    let vanilla = run(&base, sr512k(1024, 1));
    let ratio = r.elapsed_ns as f64 / vanilla.elapsed_ns as f64;
    assert!((0.99..1.01).contains(&ratio), "{ratio}: {}", r.ada.as_ref().unwrap());
}

/// Sliding cadence decides after every read once a window is full; TAC keeps REDCAP on.
#[test]
fn sliding_cadence() {
    let base = stack("hdd:st3400620as", "cfq");
    let spec = format!("window=500,cadence=sliding,table={}", trained("hdd:st3400620as"));
    let r = run(&ada(&base, &spec), tac(16, 1));
    let a = r.ada.as_ref().unwrap();
    let vanilla = run(&base, tac(16, 1));
    assert_eq!(a["cadence"], "sliding");
    assert!(a["checks"].as_u64().unwrap() == 2048 - 500 + 1, "{a}");
    assert!(share(&r) >= 0.9, "{a}");
    assert!(r.elapsed_ns < vanilla.elapsed_ns, "{} vs {}: {a}", r.elapsed_ns, vanilla.elapsed_ns);
}

/// 8 processes of TAC (D-A1, reduced): on, and faster than the normal system.
#[test]
fn tac_with_eight_processes() {
    let base = stack("hdd:st3400620as", "cfq");
    let spec = format!("window=1000,table={}", trained("hdd:st3400620as"));
    let r = run(&ada(&base, &spec), tac(4, 8));
    let vanilla = run(&base, tac(4, 8));
    assert!(share(&r) >= 0.9, "{}", r.ada.as_ref().unwrap());
    assert!(r.elapsed_ns < vanilla.elapsed_ns, "{} vs {}", r.elapsed_ns, vanilla.elapsed_ns);
}

/// Same input, same output.
#[test]
fn deterministic() {
    let cfg = ada(&stack("hdd:st3400620as", "cfq"), "window=200");
    let a = serde_json::to_string(&run(&cfg, sr8k(4, 2)).ada).unwrap();
    let b = serde_json::to_string(&run(&cfg, sr8k(4, 2)).ada).unwrap();
    assert_eq!(a, b);
}

/// An ADA stage held inactive over a table where every read costs 1 ms (one observation, the
/// fallbacks of K8) and a noop scheduler, `window` reads to a check.
fn inactive_one_ms(window: usize) -> Ada {
    let mut table = TableModel::new(1 << 30, 64).unwrap();
    table.observe(Op::Read, 128 << 10, 0, 1_000_000);
    let sched = crate::sched::build("noop", crate::sched::SchedLimits::new(32, 4096)).unwrap();
    let cfg = AdaConfig { window, ..AdaConfig::default() };
    let mut a = Ada::new(RedcapConfig::paper(4096), cfg, sched, table, 4096).unwrap();
    a.active = false;
    a
}

fn read_of(pid: u32, block: u64, sync: bool) -> IoRequest {
    IoRequest { op: Op::Read, device: 0, block, blocks: 1, sync, cause: if sync { crate::sched::Cause::Demand } else { crate::sched::Cause::Prefetch }, arrival_ns: 0, pid }
}

/// While inactive, a read of the segment the simulated cache is reading on the virtual disk for
/// the process's last synchronous miss, issued after that miss, is a hit at T_CHit (l.151,
/// l.171: in a REDCAP system the process waited for that miss before it asked for anything
/// more), synchronous or not; a read issued with the miss (the readahead of the same call), or a
/// read of an older segment still in flight, waits for it, as a real REDCAP's reads do (K12).
#[test]
fn simulated_reads_of_a_segment_in_flight() {
    const MS: u64 = 1_000_000;
    let mut a = inactive_one_ms(7);
    let mut out = StageActions::default();
    let read = |block, sync| read_of(1, block, sync);
    a.submit(read(0, true), 0, &mut out); // a miss: segment 0 is read on the virtual disk, 0..1 ms
    a.submit(read(1, false), 0, &mut out); // readahead issued with the miss: waits until 1 ms
    a.submit(read(2, true), 10_000, &mut out); // synchronous, after the miss: a hit
    a.submit(read(3, false), 20_000, &mut out); // asynchronous, after the miss: a hit
    a.submit(read(40, true), 30_000, &mut out); // a miss: segment 1, read after segment 0, 1..2 ms
    a.submit(read(4, true), 40_000, &mut out); // segment 0, no longer the last miss: waits
    a.submit(read(41, false), 50_000, &mut out); // segment 1, after its miss: a hit
    a.catch_up(10 * MS);
    assert_eq!(a.cmp.completed(Side::Candidate), 7);
    // Misses: 1 ms + copy 5 us each (segment 1 enters the virtual disk's scheduler at 1 ms, R2);
    // the hits 5 us each (T_CHit before any hit seen: the copy cost, K6); the waits from 0 and
    // 40 us to 1 ms, + copy 5 us.
    let sum = a.cmp.check().candidate_ms.unwrap();
    assert!((sum - (1.005 + 1.005 + 0.005 + 0.005 + 1.005 + 0.965 + 0.005)).abs() < 1e-6, "{sum}");
}

/// The last miss is carried along the process tree: a child forked after its parent's miss
/// reads that segment as a hit, and so does a parent that waited for a child after the child's
/// miss; an unrelated process waits for the segment (K12).
#[test]
fn simulated_last_misses_follow_the_process_tree() {
    use crate::trace::{ProcessEvent, ProcessEventKind as K};
    const MS: u64 = 1_000_000;
    let mut a = inactive_one_ms(5);
    let mut out = StageActions::default();
    let event = |kind, pid, ppid, t| ProcessEvent { before: 0, time_ns: t, kind, pid, ppid };
    a.submit(read_of(1, 0, true), 0, &mut out); // the parent misses segment 0: 0..1 ms
    a.process_event(&event(K::Fork, 2, 1, 10_000), 10_000);
    a.process_event(&event(K::Wait, 2, 1, 10_000), 10_000);
    a.submit(read_of(2, 1, true), 20_000, &mut out); // the child, segment 0: a hit
    a.submit(read_of(2, 40, true), 30_000, &mut out); // the child misses segment 1
    a.process_event(&event(K::Exit, 2, 1, 40_000), 40_000);
    a.submit(read_of(1, 41, true), 50_000, &mut out); // the parent after the child: a hit
    a.submit(read_of(3, 42, true), 60_000, &mut out); // another process: waits for segment 1
    a.catch_up(10 * MS);
    assert_eq!(a.cmp.completed(Side::Candidate), 5);
    // The child's first request to the virtual disk, segment 1's read, enters its scheduler once
    // the parent's read before the fork is served (R4), at 1 ms, and is served 1..2 ms: 1 ms of
    // service time (K5) + the copy, for the child's miss and for the third process's wait alike.
    let sum = a.cmp.check().candidate_ms.unwrap();
    assert!((sum - (1.005 + 0.005 + 1.005 + 0.005 + 1.005)).abs() < 1e-6, "{sum}");
}

/// At a switch the virtual disk stops playing the system that now runs: its copies for that
/// system still waiting are withdrawn, and what it completes for that system after the switch
/// counts for neither side; the running system's reads time that side from then on.
#[test]
fn a_switch_withdraws_the_old_roles_copies() {
    const MS: u64 = 1_000_000;
    let mut a = inactive_one_ms(1000);
    let mut out = StageActions::default();
    // While inactive, two processes miss: their segment reads go to the virtual disk, one in
    // service (0..1 ms), one waiting in its scheduler (noop), and a third process's second
    // miss waits in the waiting queue behind its first (R2).
    a.submit(read_of(1, 0, true), 0, &mut out);
    a.submit(read_of(2, 64, true), 0, &mut out);
    a.submit(read_of(3, 128, true), 0, &mut out);
    a.submit(read_of(3, 192, true), 0, &mut out);
    assert_eq!(a.vd.outstanding(), 4);
    // REDCAP turns on at 0.5 ms.
    a.catch_up(MS / 2);
    a.decide(Check { request: 1000, candidate_wins: Some(true), candidate_ms: None, baseline_ms: None, candidate_requests: 0, baseline_requests: 0 });
    assert!(a.active);
    // The waiting segment read is gone; the three in the scheduler or in service finish.
    assert_eq!(a.vd.outstanding(), 3);
    a.catch_up(10 * MS);
    assert_eq!(a.vd.outstanding(), 0);
    assert_eq!(a.cmp.completed(Side::Candidate), 0, "no simulated read is timed after the switch");
    assert!(a.segment_reads.is_empty() && a.sim_timing.is_empty() && a.sim_waiters.is_empty());
}
