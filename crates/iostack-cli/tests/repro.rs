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
    assert!(v["checks"].as_array().unwrap().iter().all(|c| c["ok"] == true));
}

#[test]
fn unknown_name_is_an_error_listing_valid_ones() {
    let o = iostack(&["repro", "table-9"]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("table-9") && err.contains("dulo-table1"), "{err}");
}
