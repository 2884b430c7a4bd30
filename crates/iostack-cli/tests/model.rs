//! `iostack model`, run as a user runs it.

use std::process::{Command, Output};

fn iostack(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iostack")).args(args).output().unwrap()
}

fn acfs(refs: &str, policy: &str) -> serde_json::Value {
    let o = iostack(&["model", "acfs", "--refs", refs, "--init", "AB", "--k", "2", "--f", "4", "--policy", policy, "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn figure1_totals_and_log() {
    for (refs, none, ca, opt) in [("ABCA", 8, 10, 8), ("ABCB", 8, 7, 7)] {
        assert_eq!(acfs(refs, "none")["total"], none);
        assert_eq!(acfs(refs, "ca")["total"], ca);
        assert_eq!(acfs(refs, "opt")["total"], opt);
    }
    let ca = acfs("ABCA", "ca");
    assert_eq!(ca["fetches"], 2);
    let log = ca["log"].as_array().unwrap();
    let fetches: Vec<(u64, &str, &str)> = log
        .iter()
        .filter(|e| e["event"] == "fetch")
        .map(|e| (e["t"].as_u64().unwrap(), e["block"].as_str().unwrap(), e["evict"].as_str().unwrap()))
        .collect();
    assert_eq!(fetches, vec![(1, "C", "A"), (5, "A", "B")]);
    let refs: Vec<u64> = log.iter().filter(|e| e["event"] == "ref").map(|e| e["t"].as_u64().unwrap()).collect();
    assert_eq!(refs, vec![0, 1, 5, 9]);
}

#[test]
fn text_output_and_named_blocks() {
    let o = iostack(&["model", "acfs", "--refs", "a1 b2 c3 a1", "--init", "a1 b2", "--k", "2", "--f", "4", "--policy", "ca"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.starts_with("policy ca: total 10"), "{text}");
    assert!(text.contains("fetch c3 evicting a1"), "{text}");
}

#[test]
fn bad_input_is_refused_clearly() {
    for (args, what) in [
        (vec!["--refs", "ABCA", "--init", "ABC", "--k", "2", "--f", "4", "--policy", "ca"], "--init"),
        (vec!["--refs", "ABCA", "--init", "AB", "--k", "2", "--f", "4", "--policy", "lru"], "--policy"),
        (vec!["--refs", "ABCA", "--init", "AB", "--k", "0", "--f", "4", "--policy", "ca"], "--k"),
        (
            vec!["--refs", "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTUVWXYZ", "--k", "8", "--f", "40", "--policy", "opt"],
            "exhaustive",
        ),
    ] {
        let mut a = vec!["model", "acfs"];
        a.extend(args);
        let o = iostack(&a);
        assert_eq!(o.status.code(), Some(1));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(what) && !err.contains("panicked"), "{err}");
    }
}
