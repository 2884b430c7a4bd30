//! `iostack sim --policy lrusp` with hints and per-process results, run as a user runs it.

use std::path::Path;
use std::process::{Command, Output};

fn iostack(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iostack")).args(args).output().unwrap()
}

/// A CSV trace of (pid, file, block) reads of 8 KiB; file f's block b is at device block
/// f * 100000 + b.
fn write_trace(path: &Path, refs: &[(u32, u64, u64)]) {
    let mut s = String::from("time_ns,offset,length,op,pid,device,file,file_offset,file_size\n");
    for (i, &(pid, file, b)) in refs.iter().enumerate() {
        s += &format!("{i},{},8192,R,{pid},0,{file},{},\n", (file * 100_000 + b) * 8192, b * 8192);
    }
    std::fs::write(path, s).unwrap();
}

fn sim_json(args: &[&str]) -> serde_json::Value {
    let o = iostack(args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// D-C1's loop (one process reading 1,000 blocks of file 5 eight times) and hints making the
/// process MRU, written into `dir`.
fn mru_loop(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let trace = dir.join("loop.csv");
    let refs: Vec<(u32, u64, u64)> = (0..8).flat_map(|_| (0..1000).map(|b| (1, 5, b))).collect();
    write_trace(&trace, &refs);
    let hints = dir.join("h.toml");
    std::fs::write(&hints, "[[process]]\npid = 1\npolicy = \"mru\"\n").unwrap();
    (trace, hints)
}

#[test]
fn mru_loop_is_exact_through_a_hints_file() {
    // D-C1: N = 1000 blocks scanned 8 times in 256 frames: LRU 8000 misses, MRU 6208.
    let dir = tempfile::tempdir().unwrap();
    let (trace, hints) = mru_loop(dir.path());
    let t = trace.to_str().unwrap();
    let base = ["sim", t, "--mode", "block", "--page-size", "8192", "--cache", "256", "--json"];
    let lru = sim_json(&[&base[..], &["--policy", "lru", "--per-process"]].concat());
    assert_eq!(lru[0]["processes"][0]["misses"], 8000);
    let mru = sim_json(&[&base[..], &["--policy", "lrusp", "--hints", hints.to_str().unwrap()]].concat());
    assert_eq!(mru[0]["processes"][0]["pid"], 1);
    assert_eq!(mru[0]["processes"][0]["misses"], 6208);
    // Without hints the process is oblivious and LRU-SP is global LRU.
    let plain = sim_json(&[&base[..], &["--policy", "lrusp"]].concat());
    assert_eq!(plain[0]["processes"][0]["misses"], 8000);
}

#[test]
fn oracle_and_priorities_help_the_managing_process_only_itself() {
    // Process 1 rescans a 40-block file (MRU suits it); process 2 rereads a 6-block file.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("two.csv");
    let mut refs = Vec::new();
    for i in 0..400u64 {
        refs.push((1, 1, i % 40));
        refs.push((2, 2, (i * 7) % 6));
    }
    write_trace(&trace, &refs);
    let t = trace.to_str().unwrap();
    let base = ["sim", t, "--mode", "block", "--page-size", "8192", "--cache", "24", "--json"];
    let lru = sim_json(&[&base[..], &["--policy", "lru", "--per-process"]].concat());
    let misses = |v: &serde_json::Value, pid: usize| v[0]["processes"][pid - 1]["misses"].as_u64().unwrap();
    let hints = dir.path().join("h.toml");
    std::fs::write(&hints, "[[process]]\npid = 1\npolicy = \"mru\"\nfile_list = [1]\n").unwrap();
    let sp = sim_json(&[&base[..], &["--policy", "lrusp", "--hints", hints.to_str().unwrap()]].concat());
    assert!(misses(&sp, 1) < misses(&lru, 1), "MRU helps the scanning process");
    assert!(misses(&sp, 2) <= misses(&lru, 2), "and never hurts the oblivious one");
    let oracle = sim_json(&[&base[..], &["--policy", "lrusp", "--hints", "oracle:lookahead=1000"]].concat());
    assert!(misses(&oracle, 1) <= misses(&sp, 1), "{} > {}", misses(&oracle, 1), misses(&sp, 1));
    assert!(misses(&oracle, 2) <= misses(&lru, 2));
}

#[test]
fn bad_hints_name_the_file_and_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.csv");
    write_trace(&trace, &[(1, 3, 0), (1, 3, 1), (2, 4, 0)]);
    let cases = [
        ("[[process]]\npid = 9\npolicy = \"lru\"\n", "pid 9 makes no request"),
        ("[[process]]\npid = 1\npolicy = \"lru\"\nfiles = { 8 = 1 }\n", "file 8 appears in no request"),
        ("[[process]]\npid = 1\npolicy = \"lru\"\nblock_list = [[3, 4, 1]]\n", "block_list[0]: first block 4 is after last block 1"),
        ("[[process]]\npid = 1\npolicy = \"arc\"\n", "policy `arc` is not lru or mru"),
        ("[[process]]\npid = 1\npolicy = \"lru\"\nfile_list = [" , "h.toml"),
    ];
    for (text, want) in cases {
        let h = dir.path().join("h.toml");
        std::fs::write(&h, text).unwrap();
        let o = iostack(&["sim", trace.to_str().unwrap(), "--policy", "lrusp", "--cache", "2", "--hints", h.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("h.toml") && err.contains(want) && !err.contains("panicked"), "{want}: {err}");
    }
    let long: Vec<String> = (0..5001).map(|_| "3".to_string()).collect();
    let h = dir.path().join("long.toml");
    std::fs::write(&h, format!("[[process]]\npid = 1\npolicy = \"lru\"\nfile_list = [{}]\n", long.join(","))).unwrap();
    let o = iostack(&["sim", trace.to_str().unwrap(), "--policy", "lrusp", "--cache", "2", "--hints", h.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("long.toml") && err.contains("more than the limit of 5000"), "{err}");
    let o = iostack(&["sim", trace.to_str().unwrap(), "--policy", "lru", "--cache", "2", "--hints", h.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn acfs_generators_write_a_trace_and_its_hints() {
    let dir = tempfile::tempdir().unwrap();
    for g in ["acfs-cs1", "acfs-cs2", "acfs-cs3", "acfs-din", "acfs-gli", "acfs-psel1", "acfs-psel2", "acfs-andrew"] {
        let trace = dir.path().join(format!("{g}.csv"));
        let o = iostack(&["gen", g, "-o", trace.to_str().unwrap()]);
        assert!(o.status.success(), "{g}: {}", String::from_utf8_lossy(&o.stderr));
        let hints = dir.path().join(format!("{g}.csv.hints.toml"));
        assert!(hints.exists(), "{g}");
        // The hints fit the trace they came with.
        let v = sim_json(&["sim", trace.to_str().unwrap(), "--policy", "lru,lrusp", "--cache", "6.4MB", "--mode", "block", "--page-size", "8192", "--hints", hints.to_str().unwrap(), "--json"]);
        let sp = v[1]["processes"][0]["misses"].as_u64().unwrap();
        let lru_misses = v[0]["requests"].as_u64().unwrap() - v[0]["hits"].as_u64().unwrap();
        assert!(sp <= lru_misses, "{g}: lrusp {sp} > lru {lru_misses}");
        if g == "acfs-cs1" {
            // 8 scans of 1,099 blocks in 781 frames: LRU misses all, MRU N + (R-1)(N-C).
            assert_eq!(lru_misses, 8 * 1099);
            assert_eq!(sp, 1099 + 7 * (1099 - 781));
        }
    }
    let o = iostack(&["gen", "zipf", "-o", dir.path().join("z.csv").to_str().unwrap(), "--hints-out", "x.toml"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn run_delivers_hints_and_counts_per_process() {
    // D-C1 through the timed stack: the same MRU loop, with no prefetching, misses exactly as
    // in the miss-ratio engine, and each process reports its own references.
    let dir = tempfile::tempdir().unwrap();
    let (trace, hints) = mru_loop(dir.path());
    let t = trace.to_str().unwrap();
    let base = ["run", t, "--page-size", "8192", "--cache", "256", "--prefetch", "none", "--device", "fixed:1ms", "--no-locality", "--json"];
    let p = |v: &serde_json::Value, k: &str| v["processes"][0][k].as_u64().unwrap();
    let lru = sim_json(&[&base[..], &["--policy", "lru", "--per-process"]].concat());
    assert_eq!(p(&lru, "block_misses"), 8000);
    assert_eq!(p(&lru, "misses"), 8000);
    let mru = sim_json(&[&base[..], &["--policy", "lrusp", "--hints", hints.to_str().unwrap()]].concat());
    assert_eq!(p(&mru, "block_misses"), 6208);
    assert_eq!(p(&mru, "device_requests"), 6208);
    assert_eq!(p(&mru, "elapsed_ns"), 6208 * 1_000_000);
    assert_eq!(mru["config"]["hints"], hints.to_str().unwrap(), "the config echoes its hints");
    let oracle = sim_json(&[&base[..], &["--policy", "lrusp", "--hints", "oracle:lookahead=8000"]].concat());
    assert_eq!(p(&oracle, "block_misses"), 6208, "the oracle finds MRU optimal for a loop");
    // Without --per-process or an application-controlled policy, no cache counts.
    let plain = sim_json(&[&base[..], &["--policy", "lru"]].concat());
    assert!(plain["processes"][0].get("hits").is_none());
    // The echoed config re-runs with its hints.
    let cfg = dir.path().join("r.json");
    std::fs::write(&cfg, serde_json::to_string(&mru).unwrap()).unwrap();
    let again = sim_json(&["run", t, "--config", cfg.to_str().unwrap(), "--json"]);
    assert_eq!(p(&again, "block_misses"), 6208);
    // Hints written into a TOML config.
    let inline = dir.path().join("c.toml");
    std::fs::write(&inline, "policy = \"lrusp\"\n[[hints.process]]\npid = 1\npolicy = \"mru\"\n").unwrap();
    let v = sim_json(&[&base[..], &["--config", inline.to_str().unwrap()]].concat());
    assert_eq!(p(&v, "block_misses"), 6208);
}

#[test]
fn run_refuses_bad_hints_naming_the_file_and_the_entry() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.csv");
    write_trace(&trace, &[(1, 3, 0), (1, 3, 1), (2, 4, 0)]);
    let long: Vec<String> = (0..5001).map(|_| "3".to_string()).collect();
    let long = format!("[[process]]\npid = 1\npolicy = \"lru\"\nfile_list = [{}]\n", long.join(","));
    let cases = [
        ("[[process]]\npid = 9\npolicy = \"lru\"\n", "pid 9 makes no request"),
        ("[[process]]\npid = 1\npolicy = \"lru\"\nfiles = { 8 = 1 }\n", "file 8 appears in no request"),
        ("[[process]]\npid = 1\npolicy = \"lru\"\nblock_list = [[3, 4, 1]]\n", "block_list[0]: first block 4 is after last block 1"),
        ("[[process]]\npid = 1\npolicy = \"arc\"\n", "policy `arc` is not lru or mru"),
        (long.as_str(), "more than the limit of 5000"),
    ];
    for (text, want) in cases {
        let h = dir.path().join("h.toml");
        std::fs::write(&h, text).unwrap();
        let o = iostack(&["run", trace.to_str().unwrap(), "--policy", "lrusp", "--cache", "2", "--hints", h.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("h.toml") && err.contains(want) && !err.contains("panicked"), "{want}: {err}");
    }
    let h = dir.path().join("ok.toml");
    std::fs::write(&h, "[[process]]\npid = 1\npolicy = \"lru\"\n").unwrap();
    for (extra, want) in [(&["--policy", "lru"][..], "`lru` is neither"), (&["--policy", "lrusp", "--processes", "one"][..], "processes = trace")] {
        let o = iostack(&[&["run", trace.to_str().unwrap(), "--cache", "2", "--hints", h.to_str().unwrap()][..], extra].concat());
        assert_eq!(o.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&o.stderr).contains(want), "{}", String::from_utf8_lossy(&o.stderr));
    }
    // Controlled-aggressive prefetching needs the lists of a hints file.
    for (hints, want) in [(None, "give them with --hints"), (Some("oracle:lookahead=4"), "the oracle gives none")] {
        let mut args = vec!["run", trace.to_str().unwrap(), "--cache", "2", "--policy", "lrusp", "--prefetch", "ca"];
        args.extend(hints.map(|h| ["--hints", h]).into_iter().flatten());
        let o = iostack(&args);
        assert_eq!(o.status.code(), Some(1));
        assert!(String::from_utf8_lossy(&o.stderr).contains(want), "{}", String::from_utf8_lossy(&o.stderr));
    }
}

/// A trace on devices 7 and 3 (first seen in that order, so the dense numbers are 0 and 1),
/// fileless: the hints' pseudo-files and the oracle's keys must name the devices as the policy
/// sees them. Process 1 scans 40 blocks of device 7 repeatedly; process 2 rereads 6 blocks of
/// device 3.
fn write_two_device_trace(path: &Path) {
    let mut s = String::from("time_ns,offset,length,op,pid,device\n");
    for i in 0..400u64 {
        s += &format!("{},{},8192,R,1,7\n", 2 * i, (i % 40) * 8192);
        s += &format!("{},{},8192,R,2,3\n", 2 * i + 1, ((i * 7) % 6) * 8192);
    }
    std::fs::write(path, s).unwrap();
}

#[test]
fn hints_on_a_multi_device_trace_name_the_devices_the_policy_sees() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("two.csv");
    write_two_device_trace(&trace);
    let t = trace.to_str().unwrap();
    // The oracle's block keys must be the policy's: with a long window it plays optimal
    // replacement per process, so process 1's misses fall well below LRU's and no process
    // does worse.
    let base = ["sim", t, "--mode", "block", "--page-size", "8192", "--cache", "24", "--json"];
    let lru = sim_json(&[&base[..], &["--policy", "lru", "--per-process"]].concat());
    let oracle = sim_json(&[&base[..], &["--policy", "lrusp", "--hints", "oracle:lookahead=1000"]].concat());
    let misses = |v: &serde_json::Value, i: usize| v[0]["processes"][i]["misses"].as_u64().unwrap();
    assert_eq!(misses(&lru, 0), 400, "40 blocks in 18 frames: LRU misses every time");
    assert!(misses(&oracle, 0) < 300, "oracle: {}", misses(&oracle, 0));
    assert!(misses(&oracle, 1) <= misses(&lru, 1));
    // The same through the timed stack, whose devices are numbered the same way.
    let run = ["run", t, "--page-size", "8192", "--cache", "24", "--prefetch", "none", "--device", "fixed:1ms", "--no-locality", "--json"];
    let rl = sim_json(&[&run[..], &["--policy", "lru", "--per-process"]].concat());
    let ro = sim_json(&[&run[..], &["--policy", "lrusp", "--hints", "oracle:lookahead=1000"]].concat());
    let bm = |v: &serde_json::Value, i: usize| v["processes"][i]["block_misses"].as_u64().unwrap();
    assert_eq!(bm(&rl, 0), 400);
    assert!(bm(&ro, 0) < 300, "oracle in run: {}", bm(&ro, 0));
    assert!(bm(&ro, 1) <= bm(&rl, 1));
}

/// D-F1t (specs/acfs.md §4; docs/timed.md, "The theoretical model of ACFS"): Figure 1 through
/// `iostack run` as documented. K = 2 blocks, a fetch of 4 ms, a reference of 1 ms (the think
/// time), A and B cached by `--preload`, the application's list the whole reference string.
/// Elapsed time ends at the last completion: the model's total less one unit.
#[test]
fn figure_1_runs_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let elapsed_ms = |refs: &str, level: &str, policy: &str, prefetch: &str| {
        // Block A is file 1's block 0 at device block 0, B block 1, ... (page size 4096).
        let blocks: Vec<u64> = refs.chars().map(|c| (c as u8 - b'A') as u64).collect();
        let trace = dir.path().join(format!("{refs}.csv"));
        let mut s = String::from("time_ns,offset,length,op,pid,device,file,file_offset,file_size\n");
        for (i, b) in blocks.iter().enumerate() {
            s += &format!("{},{},4096,R,1,0,1,{},\n", i as u64 * 1_000_000, b * 4096, b * 4096);
        }
        std::fs::write(&trace, s).unwrap();
        let hints = dir.path().join(format!("{refs}-{level}.toml"));
        let list: Vec<String> = blocks.iter().map(|b| format!("[1, {b}, {b}]")).collect();
        std::fs::write(&hints, format!("[[process]]\npid = 1\npolicy = \"{level}\"\nblock_list = [{}]\n", list.join(", "))).unwrap();
        let (t, h) = (trace.to_str().unwrap(), hints.to_str().unwrap());
        let args = ["run", t, "--policy", policy, "--prefetch", prefetch, "--hints", h, "--cache", "2", "--device", "fixed:4ms", "--think", "1ms", "--sched", "noop", "--preload", "0-1@1", "--no-locality", "--json"];
        let o = iostack(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["config"]["preload"], "0-1@1");
        v["elapsed_ns"].as_u64().unwrap() as f64 / 1e6
    };
    let ca = "ca:trigger_min=1,loop_gt=0";
    // ABCA: without prefetching 7 ms (model 8); controlled-aggressive with the block in use
    // pinned 9 ms (model 10: prefetching loses); without pinning C replaces A at A's own
    // reference, 8 ms.
    assert_eq!(elapsed_ms("ABCA", "mru", "lrusp", "none"), 7.0);
    assert_eq!(elapsed_ms("ABCA", "mru", "lrusp:pin_current=on", ca), 9.0);
    assert_eq!(elapsed_ms("ABCA", "mru", "lrusp", ca), 8.0);
    // ABCB: prefetching wins, 6 ms against 7 (model 7 and 8).
    assert_eq!(elapsed_ms("ABCB", "lru", "lrusp", "none"), 7.0);
    assert_eq!(elapsed_ms("ABCB", "lru", "lrusp:pin_current=on", ca), 6.0);
}
