//! `iostack analyze`, run as a user runs it.

use std::path::Path;
use std::process::{Command, Output};

fn iostack(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iostack")).args(args).current_dir(dir).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn table_and_json_of_a_generated_workload() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["gen", "hot-far", "--objects", "1000", "--requests", "5000", "-o", "hf.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = iostack(&["analyze", "hf.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let t = stdout(&o);
    for want in ["requests       5000", "stack affinity", "block affinity", "LRU miss ratio", "over time"] {
        assert!(t.contains(want), "`{want}` missing:\n{t}");
    }
    let o = iostack(&["analyze", "hf.csv", "--json", "--mrc-sizes", "1,2,3"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    // Two blocks alternate: after the two first references every one is at stack distance 1.
    assert_eq!(v["footprint_units"], 2);
    let mrc: Vec<(u64, u64)> = v["mrc"].as_array().unwrap().iter().map(|p| (p["cache_size"].as_u64().unwrap(), p["misses"].as_u64().unwrap())).collect();
    assert_eq!(mrc, vec![(1, 5000), (2, 2), (3, 2)]);
    assert!(v["stack_affinity"]["mean"].as_f64().unwrap() > 0.9);
    assert!(v["block_affinity"]["median"].as_f64().unwrap() < 0.4);
}

#[test]
fn plot_needs_the_python_package() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["gen", "uniform", "--objects", "10", "--requests", "10", "-o", "u.csv"], d.path());
    assert!(o.status.success());
    let o = iostack(&["analyze", "u.csv", "--plot", "plots"], d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("Python package"), "{}", stderr(&o));
    assert!(!d.path().join("plots").exists());
}

#[test]
fn bad_input_is_a_one_line_error() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("bad.csv"), "time_ns,op,offset,length\n0,R,12,4096\n1,R,x,4096\n").unwrap();
    let o = iostack(&["analyze", "bad.csv"], d.path());
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("bad.csv") && e.contains("line 3") && e.contains("offset"), "{e}");
    let o = iostack(&["analyze", "bad.csv", "--skip-invalid", "--json"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["skipped_invalid"], 1);
    assert_eq!(v["requests"], 1);
    for (opt, val) in [("--mrc-sizes", "0"), ("--page-size", "0"), ("--first-reference", "sometimes"), ("--interval", "0req")] {
        let o = iostack(&["analyze", "bad.csv", "--skip-invalid", opt, val], d.path());
        assert_eq!(o.status.code(), Some(1), "{opt} {val}");
        assert!(stderr(&o).contains(opt), "{opt}: {}", stderr(&o));
    }
}
