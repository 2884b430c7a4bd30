use super::*;
use crate::engine::timed::{StackConfig, TimedRun};
use crate::prefetch::FileView;
use crate::repro::ra_select::{config, run, stack, workload};
use crate::repro::sched_select::{Phases, Trained};

fn table() -> TableModel {
    let mut t = TableModel::new(1 << 30, 64).unwrap();
    for blocks in 1..=32u64 {
        t.observe(crate::trace::Op::Read, blocks * 4096, 0, 1_000_000 + blocks * 40_000);
        t.observe(crate::trace::Op::Read, blocks * 4096, 1 << 20, 8_000_000 + blocks * 40_000);
    }
    t
}

fn shadow(prefetch: &str) -> Shadow {
    let limits = SchedLimits::new(32, 4096);
    let vd = VirtualDisk::new(crate::sched::build("noop", limits).unwrap(), table(), 4096);
    Shadow::new(crate::cache::build("lru", 1000).unwrap(), crate::prefetch::build(prefetch, 4096).unwrap(), vd, 32)
}

fn access(block: u64, pid: u32, time_ns: u64) -> DemandAccess {
    DemandAccess {
        device: 0,
        block,
        file: FileView { id: pid as u64, is_device: false, index: block, size_pages: 1 << 20 },
        req_pages: 1,
        hit: false,
        in_flight: false,
        marker: false,
        prefetch_hit: false,
        pid,
        time_ns,
    }
}

/// The shadow issues its own setting's requests for the same reads: with `pm:4` a miss reads
/// the page and the four after it in one request, and the next four reads wait for it in flight
/// (then hit); with `none` every read is a request of its own page.
#[test]
fn the_shadow_issues_its_own_settings_requests() {
    let mut s = shadow("pm:4");
    let waits: Vec<bool> = (0..10).map(|b| s.access(&access(b, 1, 0), b)).collect();
    assert_eq!(waits, vec![true; 10], "every page missed or in flight");
    assert_eq!((s.counts().requests, s.counts().blocks_read, s.counts().hits), (2, 10, 8));
    let mut s = shadow("none");
    for b in 0..10 {
        s.access(&access(b, 1, 0), b);
    }
    assert_eq!((s.counts().requests, s.counts().blocks_read, s.counts().hits), (10, 10, 0));
}

/// A process's synchronous reads enter the virtual disk one after another: the second waits for
/// the first's completion, and the reads it serves are reported with their completion times.
#[test]
fn a_process_waits_for_its_previous_read_in_the_shadow() {
    let mut s = shadow("none");
    s.access(&access(100, 1, 0), 0);
    s.access(&access(5000, 1, 0), 1);
    s.advance(u64::MAX / 2);
    let mut done = Vec::new();
    while let Some(d) = s.take_done() {
        done.push(d);
    }
    assert_eq!(done.len(), 2, "{done:?}");
    let (first, second) = (done[0], done[1]);
    assert_eq!((first.0, second.0), (0, 1));
    // Each read takes at least the table's far-seek time, one after the other.
    assert!(first.1 >= 8_000_000 && second.1 >= first.1 + 8_000_000, "{done:?}");
    // A page read by then is a hit, with nothing to wait for.
    assert!(!s.access(&access(100, 1, u64::MAX / 2), 2));
}

#[test]
fn parse() {
    let c = super::parse("pm:degree=32,none,window=500,cadence=sliding,table=t.json").unwrap();
    assert_eq!(c.specs, ["pm:degree=32".to_string(), "none".to_string()]);
    assert_eq!((c.window, c.cadence.name(), c.table.as_deref()), (500, "sliding", Some(std::path::Path::new("t.json"))));
    for (bad, names) in [
        ("pm:32", "two readahead settings"),
        ("none,none", "the same"),
        ("pm:32,none,window=0", "--prefetch-select window"),
        ("pm:32,none,cadence=hourly", "--prefetch-select cadence"),
        ("pm:32,none,margin=100", "--prefetch-select margin"),
        ("pm:32,none,verify=maybe", "--prefetch-select verify"),
        ("pm:32,none,table=", "--prefetch-select table"),
    ] {
        let e = super::parse(bad).unwrap_err().to_string();
        assert!(e.contains(names), "{bad}: {e}");
    }
}

#[test]
fn impossible_configurations_are_refused() {
    let t = Trained::new("hdd:st3400620as").unwrap();
    let with = |select: &str, f: &dyn Fn(&mut StackConfig)| {
        let mut c = config(&t, select);
        f(&mut c);
        TimedRun::new(&c).err().map(|e| e.to_string()).unwrap_or_default()
    };
    let e = with("pm:32,nosuch", &|_| {});
    assert!(e.contains("--prefetch-select") && e.contains("nosuch"), "{e}");
    let e = with("pm:32,pm:degree=32", &|_| {});
    assert!(e.contains("same setting"), "{e}");
    let e = with("pm:32,none", &|c| c.prefetch = "obl".into());
    assert!(e.contains("--prefetch-select") && e.contains("--prefetch"), "{e}");
    let e = with("pm:32,none", &|c| c.redcap = Some("on".into()));
    assert!(e.contains("--redcap"), "{e}");
    let e = with("pm:32,none", &|c| c.sched_select = Some("cfq,deadline".into()));
    assert!(e.contains("--sched-select"), "{e}");
    let e = with("pm:32,none", &|c| c.prefetch_select = Some("pm:32,none".into()));
    assert!(e.contains("--prefetch-select table"), "{e}");
    let e = with("pm:32,none", &|c| c.prefetch_select = Some("pm:32,none,table=/nonexistent/t.json".into()));
    assert!(e.contains("/nonexistent/t.json"), "{e}");
    assert_eq!(with("pm:32,none", &|_| {}), "", "a valid controller builds");
}

fn quick(seq_bytes: u64, random_reads: u64) -> Phases {
    Phases { seq_bytes, random_reads, ..workload() }
}

/// Sequential readers: started without readahead, the controller moves to readahead at the first
/// check and keeps it (the verification confirms it); started with readahead it never leaves it,
/// and then runs exactly as fixed readahead. Random readers: started with readahead, it moves to
/// none at the first check and ends far closer to fixed none than to fixed readahead.
#[test]
fn moves_to_the_better_setting_of_each_pattern() {
    let t = Trained::new("hdd:st3400620as").unwrap();
    let seq = quick(2 << 20, 0);
    let pm = run(&stack("pm:32"), &seq).unwrap().elapsed_ns;
    let none = run(&stack("none"), &seq).unwrap().elapsed_ns;
    assert!(none > 3 * pm, "sequential readers favour readahead: {pm} vs {none}");
    let r = run(&config(&t, "none,pm:32,window=200"), &seq).unwrap();
    let s = r.prefetch_select.as_ref().unwrap();
    let sw = s["switches"].as_array().unwrap();
    assert_eq!(sw.len(), 1, "{sw:?}");
    assert_eq!((sw[0]["prefetch"].as_str(), sw[0]["request"].as_u64(), sw[0]["reverted"].as_bool()), (Some("pm:32"), Some(203), Some(false)));
    assert!(r.elapsed_ns < none / 2, "{} vs none {none}", r.elapsed_ns);
    let r = run(&config(&t, "pm:32,none,window=200"), &seq).unwrap();
    assert_eq!(r.prefetch_select.as_ref().unwrap()["switches"].as_array().unwrap().len(), 0);
    assert_eq!(r.elapsed_ns, pm, "the controller changes nothing while it keeps the running setting");
    for k in ["window", "cadence", "margin_pct", "verify", "table", "prefetchers", "running", "switches", "reverted_switches", "reads", "checks", "undecided_checks", "windows", "shadow", "measure"] {
        assert!(r.prefetch_select.as_ref().unwrap().get(k).is_some(), "missing {k}");
    }
    assert!(r.resolved["prefetch"].as_str().is_some());

    let random = quick(0, 300);
    let pm = run(&stack("pm:32"), &random).unwrap().elapsed_ns as f64;
    let none = run(&stack("none"), &random).unwrap().elapsed_ns as f64;
    assert!(pm > 1.1 * none, "random readers favour no readahead: {pm} vs {none}");
    let r = run(&config(&t, "pm:32,none,window=200"), &random).unwrap();
    let s = r.prefetch_select.as_ref().unwrap();
    assert_eq!(s["running"], "none");
    assert_eq!(s["switches"][0]["prefetch"], "none");
    assert!((r.elapsed_ns as f64) < (pm + none) / 2.0, "{} vs {pm} / {none}", r.elapsed_ns);
}

/// Same input, same output.
#[test]
fn deterministic() {
    let t = Trained::new("hdd:st3400620as").unwrap();
    let w = quick(1 << 20, 200);
    let c = config(&t, "pm:32,none,window=100");
    let (a, b) = (run(&c, &w).unwrap(), run(&c, &w).unwrap());
    assert_eq!(a.elapsed_ns, b.elapsed_ns);
    assert_eq!(a.prefetch_select, b.prefetch_select);
}
