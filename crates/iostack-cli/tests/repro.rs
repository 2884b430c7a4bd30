//! `iostack repro`, run as a user runs it.

use std::process::{Command, Output};

fn iostack(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iostack")).args(args).output().unwrap()
}

#[test]
fn list_names_every_reproduction() {
    let o = iostack(&["repro", "--list"]);
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    for r in iostack::repro::REPROS {
        assert!(text.lines().any(|l| l.starts_with(r.name)), "{} missing:\n{text}", r.name);
    }
}

#[test]
fn table_i_prints_the_paper_beside_iostack_and_passes() {
    let o = iostack(&["repro", "dulo-table1"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("66.5") && text.contains("95.0"), "{text}");
    assert!(!text.contains("DIFFERS"), "{text}");
}

#[test]
fn json_echoes_the_config() {
    let o = iostack(&["repro", "split-table4", "--json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["config"]["policy"], "splitlru");
    assert_eq!(v["config"]["prefetch"]["technique"], "miss_or_last_hit");
    let checks = v["checks"].as_array().unwrap();
    assert!(checks.iter().all(|c| c["ok"] == true));
    for c in checks {
        for key in ["what", "paper", "iostack", "tolerance"] {
            assert!(c[key].is_string(), "{key} in {c}");
        }
    }
}

#[test]
fn text_shows_each_tolerance_and_the_verdict() {
    let o = iostack(&["repro", "split-table1"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("tolerance") && text.contains("exact") && text.contains("verdict: holds"), "{text}");
}

#[test]
fn plot_needs_the_python_command_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plots");
    let o = iostack(&["repro", "dulo-table1", "--plot", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("matplotlib"));
    assert!(!out.exists());
}

#[test]
fn unknown_name_is_an_error_listing_valid_ones() {
    let o = iostack(&["repro", "table-9"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("table-9") && err.contains("dulo-table1"), "{err}");
}
