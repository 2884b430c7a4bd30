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

#[test]
fn sampled_miss_ratio_curves() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["gen", "zipf", "--objects", "20000", "--requests", "100000", "--seed", "3", "-o", "z.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let json = |args: &[&str]| -> serde_json::Value {
        let mut a = vec!["analyze", "z.csv", "--json", "--mrc-sizes", "1,10,100,1000,5000,20000"];
        a.extend_from_slice(args);
        let o = iostack(&a, d.path());
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let exact = json(&[]);
    assert!(exact["mrc_sampling"].is_null());
    // Rate 1 is the exact curve, in the full analysis and alone.
    for extra in [&[][..], &["--mrc-only"][..]] {
        let v = json(&[&["--mrc-sampling", "1"][..], extra].concat());
        assert_eq!(v["mrc"], exact["mrc"], "{extra:?}");
        assert_eq!(v["mrc_sampling"]["kind"], "rate");
        assert_eq!(v["mrc_sampling"]["rate"], 1.0);
    }
    let alone = json(&["--mrc-only"]);
    assert_eq!(alone["mrc"], exact["mrc"]);
    assert!(alone.get("locality").is_none() && alone["mrc_sampling"].is_null());
    // A sample: close to the exact curve, deterministic, reported, the same alone and in full.
    for spec in ["0.1", "size=2000,seed=5"] {
        let a = json(&["--mrc-sampling", spec]);
        let b = json(&["--mrc-sampling", spec, "--mrc-only"]);
        assert_eq!(a["mrc"], b["mrc"], "{spec}");
        assert_eq!(a["mrc_sampling"], b["mrc_sampling"], "{spec}");
        assert!(a["mrc_requests"].is_null());
        let s = &a["mrc_sampling"];
        assert!(s["sampled_references"].as_u64().unwrap() < s["references"].as_u64().unwrap(), "{s}");
        // A sample resolves sizes of many times 1 / rate units (here 10 and 6.4): from 1,000
        // units on, within 0.05 (0.015 at most measured).
        for (p, q) in a["mrc"].as_array().unwrap().iter().zip(exact["mrc"].as_array().unwrap()).skip(3) {
            let (x, y) = (p["miss_ratio"].as_f64().unwrap(), q["miss_ratio"].as_f64().unwrap());
            assert!((x - y).abs() < 0.05, "{spec}: {p} against {q}");
        }
        assert_eq!(json(&["--mrc-sampling", spec])["mrc"], a["mrc"]);
    }
    assert_eq!(json(&["--mrc-sampling", "size=2000,seed=5"])["mrc_sampling"]["seed"], 5);
    // The table says how it sampled.
    let o = iostack(&["analyze", "z.csv", "--mrc-sampling", "0.5", "--mrc-only"], d.path());
    assert!(stdout(&o).contains("SHARDS fixed rate 0.5, seed 0"), "{}", stdout(&o));
    let o = iostack(&["analyze", "z.csv", "--mrc-sampling", "size=100"], d.path());
    assert!(stdout(&o).contains("SHARDS fixed size 100 keys"), "{}", stdout(&o));
    // Out of range: a clear error naming the option.
    for bad in ["0", "1.01", "rate=-1", "nan", "size=0", "size=1e9", "rate=0.1,size=4", "often", "0.1,seed=x"] {
        let o = iostack(&["analyze", "z.csv", "--mrc-sampling", bad], d.path());
        assert_eq!(o.status.code(), Some(1), "{bad}");
        assert!(stderr(&o).contains("--mrc-sampling") && !stderr(&o).contains("panicked"), "{bad}: {}", stderr(&o));
    }
    let o = iostack(&["analyze", "z.csv", "--mrc-only", "--plot", "p"], d.path());
    assert_eq!(o.status.code(), Some(1));
}
