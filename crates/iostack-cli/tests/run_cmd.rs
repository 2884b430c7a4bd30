//! `iostack run`, as a user runs it: results, config echo and re-run, dumps, errors.

mod common;

use std::path::Path;
use std::process::{Command, Output};

fn iostack(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iostack")).args(args).current_dir(dir).output().unwrap()
}

fn gen(dir: &Path) {
    let o = iostack(
        &["gen", "zipf", "--alpha", "0.9", "--objects", "2000", "--requests", "5000", "--seed", "3", "--write-ratio", "0.2", "--files", "8", "-o", "t.csv"],
        dir,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn json_result_reruns_exactly_from_its_echoed_config() {
    let d = tempfile::tempdir().unwrap();
    gen(d.path());
    let o = iostack(&["run", "t.csv", "--policy", "lru", "--prefetch", "linux", "--sched", "cscan", "--device", "hdd:st3400620as", "--cache", "1MiB", "--json"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    for k in ["config", "elapsed_ns", "device_busy_ns", "device_requests", "hit_ratio"] {
        assert!(v.get(k).is_some(), "{k} missing");
    }
    assert_eq!(v["config"]["cache"], "1MiB");
    assert_eq!(v["front"]["requests"], 5000);
    assert!(v["device_requests"].as_u64().unwrap() > 0);
    std::fs::write(d.path().join("r.json"), &o.stdout).unwrap();
    let again = iostack(&["run", "t.csv", "--config", "r.json", "--json"], d.path());
    assert!(again.status.success());
    assert_eq!(o.stdout, again.stdout, "re-run from the echoed config differs");
    // A flag overrides the file.
    let other = iostack(&["run", "t.csv", "--config", "r.json", "--prefetch", "none", "--json"], d.path());
    let w: serde_json::Value = serde_json::from_slice(&other.stdout).unwrap();
    assert_eq!(w["config"]["prefetch"], "none");
    assert_eq!(w["cache"]["prefetch_issued"], 0);
}

#[test]
fn dumps_write_the_boundary_streams() {
    let d = tempfile::tempdir().unwrap();
    gen(d.path());
    let o = iostack(&["run", "t.csv", "--cache", "256", "--device", "fixed:1ms", "--dump", "front=f.csv", "--dump", "device=dev.csv", "--json"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let lines = |f: &str| std::fs::read_to_string(d.path().join(f)).unwrap().lines().count() as u64 - 1;
    assert_eq!(lines("f.csv"), 5000);
    assert_eq!(lines("dev.csv"), v["device_requests"].as_u64().unwrap());
    // The dumped device stream reads back as a trace.
    let o = iostack(&["run", "dev.csv", "--cache", "16", "--device", "fixed:1ms", "--prefetch", "none"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn errors_name_the_option_and_create_nothing() {
    let d = tempfile::tempdir().unwrap();
    gen(d.path());
    // A trace whose 300th request is malformed: the run fails after the dumps were opened.
    let text = std::fs::read_to_string(d.path().join("t.csv")).unwrap();
    let bad: Vec<String> = text.lines().enumerate().map(|(i, l)| if i == 300 { l.replacen(",R,", ",Q,", 1).replacen(",W,", ",Q,", 1) } else { l.to_string() }).collect();
    std::fs::write(d.path().join("bad.csv"), bad.join("\n") + "\n").unwrap();
    for (args, needle) in [
        (vec!["run", "t.csv", "--policy", "nosuch", "--dump", "device=x.csv"], "nosuch"),
        (vec!["run", "t.csv", "--sched", "elevatorz", "--dump", "device=x.csv"], "cscan"),
        (vec!["run", "t.csv", "--prefetch", "pm:0", "--dump", "device=x.csv"], "degree"),
        (vec!["run", "t.csv", "--device", "tape", "--dump", "device=x.csv"], "tape"),
        (vec!["run", "t.csv", "--cache", "12XB", "--dump", "device=x.csv"], "--cache"),
        (vec!["run", "missing.csv", "--dump", "device=x.csv"], "missing.csv"),
        (vec!["run", "t.csv", "--dump", "disk=x.csv"], "front, cache, sched, device"),
        (vec!["run", "t.csv", "--dump", "device=t.csv"], "trace being read"),
        (vec!["run", "bad.csv", "--dump", "device=x.csv"], "line 301"),
    ] {
        let o = iostack(&args, d.path());
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(!d.path().join("x.csv").exists(), "{args:?} created the dump");
        let left: Vec<_> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name()).filter(|n| n.to_string_lossy().contains(".tmp-")).collect();
        assert!(left.is_empty(), "{args:?} left {left:?}");
    }
}

/// `iostack run -` with `input` on standard input.
fn run_stdin(args: &[&str], input: &[u8], dir: &Path) -> Output {
    let mut all = vec!["run", "-"];
    all.extend_from_slice(args);
    common::piped(&all, dir, input)
}

#[test]
fn standard_input_is_read_once_and_gives_the_file_result() {
    let d = tempfile::tempdir().unwrap();
    gen(d.path());
    let trace = std::fs::read(d.path().join("t.csv")).unwrap();
    let args = ["--cache", "1MiB", "--file-sizes", "unknown", "--json"];
    let from_stdin = run_stdin(&args, &trace, d.path());
    assert!(from_stdin.status.success(), "{}", String::from_utf8_lossy(&from_stdin.stderr));
    let from_file = iostack(&[&["run", "t.csv"][..], &args[..]].concat(), d.path());
    assert!(from_file.status.success());
    let (a, b): (serde_json::Value, serde_json::Value) = (serde_json::from_slice(&from_stdin.stdout).unwrap(), serde_json::from_slice(&from_file.stdout).unwrap());
    assert_eq!(a["front"]["requests"], 5000);
    assert_eq!((&a["cache"], &a["device"], &a["elapsed_ns"]), (&b["cache"], &b["device"], &b["elapsed_ns"]));
    // Inferring file sizes needs a second pass, which standard input cannot give: said so.
    let o = run_stdin(&["--cache", "1MiB"], &trace, d.path());
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--file-sizes") && err.contains("standard input"), "{err}");
}

#[test]
fn locality_is_measured_by_default_and_can_be_turned_off() {
    let d = tempfile::tempdir().unwrap();
    gen(d.path());
    let o = iostack(&["run", "t.csv", "--cache", "256", "--device", "fixed:1ms", "--json"], d.path());
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["config"]["locality"], true);
    for b in ["front", "cache", "sched", "device"] {
        assert!(v["locality"][b]["stack_affinity"]["median"].is_f64(), "{b}");
        assert!(v["locality"][b]["block_affinity"]["mean"].is_f64(), "{b}");
    }
    assert_eq!(v["locality"]["front"]["requests"], 5000);
    let table = iostack(&["run", "t.csv", "--cache", "256", "--device", "fixed:1ms"], d.path());
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("stack affinity mean/median"), "{text}");
    assert_eq!(text.lines().filter(|l| ["front", "cache", "sched", "device"].iter().any(|b| l.trim_start().starts_with(b) && l.starts_with("   "))).count(), 4, "{text}");

    let off = iostack(&["run", "t.csv", "--cache", "256", "--device", "fixed:1ms", "--no-locality", "--json"], d.path());
    assert!(off.status.success());
    let w: serde_json::Value = serde_json::from_slice(&off.stdout).unwrap();
    assert_eq!(w["config"]["locality"], false);
    assert!(w["locality"].is_null());
    assert_eq!(w["cache"], v["cache"]);
    // The echoed config re-runs without probes.
    std::fs::write(d.path().join("off.json"), &off.stdout).unwrap();
    let again = iostack(&["run", "t.csv", "--config", "off.json", "--json"], d.path());
    assert_eq!(off.stdout, again.stdout);
    assert!(!String::from_utf8_lossy(&iostack(&["run", "t.csv", "--no-locality"], d.path()).stdout).contains("affinity"));
}

#[test]
fn device_request_locality_adds_a_per_request_probe_beside_the_per_block_one() {
    let d = tempfile::tempdir().unwrap();
    gen(d.path());
    let base = ["run", "t.csv", "--cache", "256", "--device", "fixed:1ms", "--json"];
    let run = |extra: &[&str]| {
        let o = iostack(&[&base[..], extra].concat(), d.path());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        o
    };
    let plain: serde_json::Value = serde_json::from_slice(&run(&[]).stdout).unwrap();
    assert!(plain["locality"].get("device_per_request").is_none(), "absent unless asked for");
    let o = run(&["--device-request-locality", "infinite"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let per_request = &v["locality"]["device_per_request"];
    // One reference per disk request, as many as the device served; the per-block report is
    // the run's without the option, and counts blocks.
    assert_eq!(per_request["granularity"]["kind"], "object");
    assert_eq!(per_request["requests"], v["device_requests"]);
    assert_eq!(per_request["references"], per_request["requests"]);
    assert_eq!(v["locality"]["device"], plain["locality"]["device"]);
    assert_eq!(v["locality"]["device"]["granularity"]["kind"], "bytes");
    assert!(v["locality"]["device"]["references"].as_u64() > per_request["references"].as_u64(), "blocks outnumber requests");
    assert_eq!(per_request["first_reference"]["kind"], "infinite");
    // First references at an infinite distance score 0: the mean is below the one that
    // leaves them out, by exactly their share.
    let excluded: serde_json::Value = serde_json::from_slice(&run(&["--device-request-locality", "exclude"]).stdout).unwrap();
    let (inf, exc) = (per_request["stack_affinity"]["mean"].as_f64().unwrap(), excluded["locality"]["device_per_request"]["stack_affinity"]["mean"].as_f64().unwrap());
    let firsts = per_request["stack_distance"]["first_references"].as_f64().unwrap();
    let n = per_request["references"].as_f64().unwrap();
    assert!(firsts > 0.0);
    assert!((inf - exc * (n - firsts) / n).abs() < 1e-12, "{inf} {exc}");
    // The echoed config asks for the probe again.
    assert_eq!(v["config"]["device_request_locality"], "infinite");
    std::fs::write(d.path().join("r.json"), &o.stdout).unwrap();
    let again = iostack(&["run", "t.csv", "--config", "r.json", "--json"], d.path());
    assert_eq!(o.stdout, again.stdout);
    // The table names the row apart from the per-block device row.
    let table = iostack(&["run", "t.csv", "--cache", "256", "--device", "fixed:1ms", "--device-request-locality", "7"], d.path());
    assert!(String::from_utf8_lossy(&table.stdout).contains("device per request"));
    // Bad rules and a probe without the locality probes are errors naming the option.
    for bad in [&["--device-request-locality", "soon"][..], &["--device-request-locality", "infinite", "--no-locality"]] {
        let o = iostack(&[&base[..], bad].concat(), d.path());
        assert!(!o.status.success());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--device-request-locality") || err.contains("--no-locality"), "{err}");
    }
}
