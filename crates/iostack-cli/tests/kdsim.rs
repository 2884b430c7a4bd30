//! `iostack kdsim`, run as a user runs it.

use std::path::Path;
use std::process::{Command, Output};

fn iostack(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iostack")).args(args).current_dir(dir).output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn train_writes_a_table_that_loads_as_a_device() {
    let d = tempfile::tempdir().unwrap();
    let dev = "hdd:st3400620as,capacity=2GiB";
    let o = iostack(&["kdsim", "train", "--device", dev, "--output", "T.json", "--samples", "2", "--seed", "3"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let a = std::fs::read(d.path().join("T.json")).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&a).unwrap();
    assert_eq!(v["capacity_bytes"], 2u64 << 30);
    assert_eq!(v["read"].as_array().unwrap().len(), 32);
    // Same seed, same table.
    let o = iostack(&["kdsim", "train", "--device", dev, "-o", "U.json", "--samples", "2", "--seed", "3"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::read(d.path().join("U.json")).unwrap(), a);
    let o = iostack(&["devices", "table:T.json", "--json"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["parameters"]["columns"], 20);
    // Bad input: a one-line error, nothing written.
    let o = iostack(&["kdsim", "train", "--device", "fixed:1ms", "-o", "F.json"], d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--capacity"), "{}", stderr(&o));
    assert!(!d.path().join("F.json").exists());
    std::fs::write(d.path().join("bad.json"), r#"{"capacity_bytes": 1, "values_per_cell": 64, "read": [], "write": []}"#).unwrap();
    let o = iostack(&["devices", "table:bad.json"], d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bad.json: read: 0 rows"), "{}", stderr(&o));
}

#[test]
fn gen_lists_and_writes_the_paper_benchmarks() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["gen", "--list"], d.path());
    let list = String::from_utf8_lossy(&o.stdout).into_owned();
    for g in ["tac ", "stride ", "ior ", "lkr ", "air ", "aip "] {
        assert!(list.contains(g), "{g} missing from\n{list}");
    }
    let o = iostack(&["gen", "stride", "--param", "pattern=512k-sr", "--processes", "2", "-o", "s.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(d.path().join("s.csv")).unwrap();
    assert_eq!(text.lines().count(), 1 + 2 * 8132);
    let o = iostack(&["gen", "aip", "--param", "file_size=1MiB", "--param", "lkr_files=20", "--param", "lkr_dirs=3", "--param", "runs=1:1:1:1:2", "-o", "a.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = iostack(&["gen", "aip", "--param", "runs=1:x", "-o", "b.csv"], d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("aip.runs"), "{}", stderr(&o));
    assert!(!d.path().join("b.csv").exists());
}

#[test]
fn accuracy_reports_windows() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["gen", "tac", "--param", "file_size=8MiB", "-o", "t.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let dev = "hdd:st3400620as,capacity=2GiB";
    let o = iostack(&["kdsim", "train", "--device", dev, "-o", "T.json", "--samples", "2"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = iostack(&["kdsim", "accuracy", "t.csv", "--device", dev, "--table", "T.json", "--json", "--window", "100"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let w = v["windows"].as_array().unwrap();
    assert!(w.len() > 3);
    for x in w {
        for k in ["start", "requests", "vd_ms", "rd_ms", "diff_pct"] {
            assert!(x.get(k).is_some(), "{k} missing in {x}");
        }
    }
    assert_eq!(w[1]["start"], 100);
    assert!(v["mean_abs_diff_pct"].as_f64().unwrap() >= 0.0);
    // A table for another capacity: a one-line error.
    let o = iostack(&["kdsim", "accuracy", "t.csv", "--device", "hdd:st3400620as", "--table", "T.json"], d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("T.json is a table for 2147483648 bytes"), "{}", stderr(&o));
    // REDCAP on (Table 1): the disks see its segment reads only (TAC: one per 128 KiB segment).
    let args = ["kdsim", "accuracy", "t.csv", "--device", dev, "--table", "T.json", "--json", "--prefetch", "none", "--cache", "8"];
    let o = iostack(&[&args[..], &["--redcap", "on"]].concat(), d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["redcap"]["requests"], 1024);
    assert_eq!(v["redcap"]["misses"], 64);
    assert_eq!(v["requests"], 64);
    assert!(v["mean_abs_diff_pct"].as_f64().is_some());
    let o = iostack(&args, d.path());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["redcap"].is_null());
    let o = iostack(&[&args[..], &["--redcap", "segment=5000"]].concat(), d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--redcap segment"), "{}", stderr(&o));
}

#[test]
fn run_with_redcap_reports_its_counts() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["gen", "tac", "--param", "file_size=4MiB", "-o", "t.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let args = ["run", "t.csv", "--sched", "noop", "--prefetch", "none", "--cache", "8", "--max-request", "128KiB", "--no-locality", "--json"];
    let o = iostack(&[&args[..], &["--redcap", "on"]].concat(), d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // 512 backward 8 KiB reads: one miss per 128 KiB segment, 15 of 16 hits.
    assert_eq!(v["redcap"]["requests"], 512);
    assert_eq!(v["redcap"]["misses"], 32);
    assert_eq!(v["redcap"]["hits"], 480);
    assert_eq!(v["config"]["redcap"], "on");
    let o = iostack(&args, d.path());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.get("redcap").is_none());
    let o = iostack(&[&args[..], &["--redcap", "size=1000"]].concat(), d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--redcap size"), "{}", stderr(&o));
}

#[test]
fn run_with_ada_reports_its_decisions() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["gen", "tac", "--param", "file_size=8MiB", "-o", "t.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let args = ["run", "t.csv", "--sched", "cfq", "--prefetch", "none", "--cache", "8", "--max-request", "128KiB", "--no-locality", "--json", "--redcap", "on"];
    let o = iostack(&[&args[..], &["--ada", "window=256,cadence=tumbling"]].concat(), d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let a = &v["ada"];
    assert_eq!(a["window"], 256);
    assert!(a["switches"].is_array() && a["activation_share"].is_number(), "{a}");
    assert_eq!(a["windows"].as_array().unwrap().len(), 4, "{a}");
    assert_eq!(v["redcap"]["requests"].as_u64().unwrap() + a["reads"].as_u64().unwrap() - a["reads_active"].as_u64().unwrap(), 1024);
    assert_eq!(v["config"]["ada"], "window=256,cadence=tumbling");
    // Bad input: a clear error each, exit 1.
    for (extra, msg) in [
        (&["--ada", "window=0"][..], "--ada window"),
        (&["--ada", "cadence=weekly"][..], "--ada cadence"),
        (&["--ada", "colour=red"][..], "colour"),
        (&["--ada", "table=missing.json"][..], "missing.json"),
    ] {
        let o = iostack(&[&args[..], extra].concat(), d.path());
        assert_eq!(o.status.code(), Some(1), "{extra:?}");
        assert!(stderr(&o).contains(msg), "{extra:?}: {}", stderr(&o));
    }
    let no_redcap: Vec<&str> = args[..args.len() - 2].to_vec();
    let o = iostack(&[&no_redcap[..], &["--ada", "on"]].concat(), d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--redcap"), "{}", stderr(&o));
}

#[test]
fn run_with_sched_select_reports_its_decisions() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["gen", "ior", "--processes", "4", "--param", "file_size=4MiB", "-o", "t.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let args = ["run", "t.csv", "--prefetch", "none", "--cache", "8", "--max-request", "128KiB", "--no-locality", "--json"];
    let o = iostack(&[&args[..], &["--sched-select", "deadline,cfq,window=100"]].concat(), d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let s = &v["sched_select"];
    assert_eq!(s["window"], 100);
    assert_eq!(s["schedulers"][0]["spec"], "deadline");
    assert_eq!(s["schedulers"][1]["spec"], "cfq");
    assert_eq!(s["reads"], 256);
    assert_eq!(s["checks"], 2, "{s}");
    assert!(s["switches"].is_array() && s["windows"].as_array().unwrap().len() == 2, "{s}");
    assert_eq!(v["config"]["sched_select"], "deadline,cfq,window=100");
    assert!(v["resolved"]["sched"].as_str().unwrap().starts_with("select:deadline|cfq"));
    // Without it, no key.
    let o = iostack(&args, d.path());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.get("sched_select").is_none());
    // Bad input: a clear error each, exit 1.
    for (extra, msg) in [
        (&["--sched-select", "cfq"][..], "two schedulers"),
        (&["--sched-select", "cfq,deadline,window=0"][..], "--sched-select window"),
        (&["--sched-select", "cfq,bogus"][..], "bogus"),
        (&["--sched-select", "cfq,deadline,table=missing.json"][..], "missing.json"),
        (&["--sched", "noop", "--sched-select", "cfq,deadline"][..], "--sched"),
    ] {
        let o = iostack(&[&args[..], extra].concat(), d.path());
        assert_eq!(o.status.code(), Some(1), "{extra:?}");
        assert!(stderr(&o).contains(msg), "{extra:?}: {}", stderr(&o));
    }
}

#[test]
fn run_with_prefetch_select_reports_its_decisions() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["kdsim", "train", "--device", "hdd:st3400620as", "--samples", "8", "--output", "table.json"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = iostack(&["gen", "ior", "--processes", "4", "--param", "file_size=4MiB", "-o", "t.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let args = ["run", "t.csv", "--cache", "4MiB", "--no-locality", "--json"];
    let o = iostack(&[&args[..], &["--prefetch-select", "none,linux,window=50,table=table.json"]].concat(), d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let s = &v["prefetch_select"];
    assert_eq!(s["window"], 50);
    assert_eq!(s["prefetchers"][0]["spec"], "none");
    assert_eq!(s["prefetchers"][1]["spec"], "linux");
    assert!(s["checks"].as_u64().unwrap() > 0, "{s}");
    assert_eq!(s["switches"][0]["prefetch"], "linux", "sequential readers take readahead: {s}");
    assert_eq!(v["config"]["prefetch_select"], "none,linux,window=50,table=table.json");
    assert!(v["resolved"]["prefetch"].as_str().unwrap().starts_with("select:none|linux"));
    let o = iostack(&args, d.path());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.get("prefetch_select").is_none());
    for (extra, msg) in [
        (&["--prefetch-select", "none"][..], "two readahead settings"),
        (&["--prefetch-select", "none,linux"][..], "--prefetch-select table"),
        (&["--prefetch-select", "none,linux,window=0,table=table.json"][..], "--prefetch-select window"),
        (&["--prefetch-select", "none,bogus,table=table.json"][..], "bogus"),
        (&["--prefetch-select", "none,linux,table=missing.json"][..], "missing.json"),
    ] {
        let o = iostack(&[&args[..], extra].concat(), d.path());
        assert_eq!(o.status.code(), Some(1), "{extra:?}");
        assert!(stderr(&o).contains(msg), "{extra:?}: {}", stderr(&o));
    }
}
