//! The readahead controller (`--prefetch-select`, `prefetch::select`) on a workload whose phases
//! favour different readahead settings: KDSim used as the paper frames it (González-Férez,
//! Piernas and Cortes, Computer Journal 59(10), 2016, §3 and §7: a framework to evaluate
//! alternatives on line and select among them), with a shadow page cache playing the setting not
//! running.
//!
//! The workload ([`Phases`], the scheduler selector's, with 4 KiB requests): P processes, each
//! first reading a file of its own sequentially in synchronous 4 KiB requests (the files one after
//! another on the disk), then reading random 4 KiB blocks of one large shared file. The two
//! settings: a fixed 128 KiB readahead on every miss (`pm:32`, prefetch on miss of degree 32, the
//! readahead of a system that reads ahead whatever the access pattern) and no readahead
//! (`none`). In the first phase readahead wins by far: one request of 33 pages per 33 reads
//! instead of 33 requests, each a seek between the processes' files. In the second no page read
//! ahead is ever used, and each miss's 128 KiB transfer occupies the disk the next random read
//! waits for: no readahead wins. (Linux's own readahead, `linux`, detects random reads and reads
//! only the requested page, so it loses nothing in the second phase and there would be nothing to
//! choose; the controller's use is for settings without such a heuristic, or for the size of
//! its window.)
//!
//! Three runs of the same trace on the HDD model: fixed `pm:32`, fixed `none`, and the controller
//! starting with `pm:32`, its virtual disk's table trained off line against the model. The checks
//! follow from the design: the controller must beat each fixed choice on elapsed time (it runs
//! each phase's better setting, less about a window of reads after the phase change on the wrong
//! one), must stay with readahead through the sequential phase, and must run without readahead
//! in the random phase.

use super::sched_select::{setting_figure, times, window_sums_figure, Phases, Trained};
use super::{Check, Progress, Report, ReproInfo, Table};
use crate::engine::timed::{run_built, StackConfig, TimedReport, TimedRun};
use crate::workload::streams::Merged;

pub const INFO: ReproInfo = ReproInfo { name: "ra-select", title: "KDSim choosing the readahead on line: 128 KiB readahead, then none", quick: false, run: reproduce };

/// The controller's settings in the reproduction (the table is added by [`config`]).
pub const SELECT: &str = "pm:32,none,window=1000,cadence=tumbling";

/// The workload: 4 processes, 16 MiB each read sequentially in 4 KiB requests, then 1000 random
/// 4 KiB reads each in an 8 GiB file.
pub fn workload() -> Phases {
    Phases { processes: 4, seq_bytes: 16 << 20, seq_request: 4 << 10, random_reads: 1000, random_span: 8 << 30, seed: 1 }
}

/// The stack: HDD model, a 16 MiB LRU page cache, CSCAN, 128 KiB requests at most.
pub fn stack(prefetch: &str) -> StackConfig {
    StackConfig { device: "hdd:st3400620as".into(), prefetch: prefetch.into(), cache: "16MiB".into(), max_request: "128KiB".into(), locality: false, ..Default::default() }
}

/// `select`'s controller over [`stack`] with `table`'s table.
pub fn config(table: &Trained, select: &str) -> StackConfig {
    StackConfig { prefetch_select: Some(format!("{select},table={}", table.path.display())), ..stack("linux") }
}

/// One run of `w` through `config`.
pub fn run(config: &StackConfig, w: &Phases) -> Result<TimedReport, crate::error::Error> {
    run_built(TimedRun::new(config)?, &mut || Ok(Box::new(Merged::new("ra-select", w.streams()))), Vec::new())
}

fn reproduce(progress: &Progress) -> Report {
    let w = workload();
    progress.expect(4);
    let table = Trained::new(&stack("none").device).expect("the HDD model trains");
    progress.step("table trained");
    let configs = [("pm:32", stack("pm:32")), ("none", stack("none")), ("controller", config(&table, SELECT))];
    let mut reports = Vec::new();
    for (label, c) in &configs {
        reports.push(run(c, &w).expect("the reproduction's stack runs"));
        progress.step(label);
    }
    report(&w, &reports)
}

/// The report from the three runs (fixed A, fixed B, controller).
pub fn report(w: &Phases, runs: &[TimedReport]) -> Report {
    let t: Vec<(f64, f64)> = runs.iter().map(times).collect();
    let sel = runs[2].prefetch_select.clone().unwrap_or_default();
    let gain = |fixed: f64, ctl: f64| (fixed - ctl) / fixed * 100.0;
    let labels = ["fixed pm:32 (128 KiB readahead)", "fixed none (no readahead)", "controller (pm:32,none)"];
    let rows: Vec<Vec<String>> = (0..3)
        .map(|i| {
            let g = |j: usize| if i == 2 { format!("{:+.1} %", gain(t[j].0, t[2].0)) } else { String::new() };
            vec![labels[i].to_string(), format!("{:.3}", t[i].0), format!("{:.3}", t[i].1), g(0), g(1)]
        })
        .collect();
    let switches: Vec<&serde_json::Value> = sel["switches"].as_array().map(|v| v.iter().collect()).unwrap_or_default();
    let setting = |s: &serde_json::Value| s["prefetch"].as_str().unwrap_or("").to_string();
    let (seq_reads, _) = w.requests();
    let window = sel["window"].as_u64().unwrap_or(1000);
    let first_to_none = switches.iter().find(|s| setting(s) == "none").and_then(|s| s["request"].as_u64());
    let running_at_end = sel["running"].as_str().unwrap_or("").to_string();
    let switch_rows: Vec<Vec<String>> = switches
        .iter()
        .map(|x| {
            let ms = |k: &str| x[k].as_f64().map_or("-".to_string(), |v| format!("{v:.1}"));
            let verdict = if x["reverted"] == true { "reverted" } else if x["after_ms"].is_null() { "-" } else { "kept" };
            vec![x["request"].to_string(), format!("{:.3}", x["time_ns"].as_f64().unwrap_or(0.0) / 1e9), setting(x), x["cause"].as_str().unwrap_or("").to_string(), ms("before_ms"), ms("after_ms"), verdict.to_string()]
        })
        .collect();
    let share = |i: usize| sel["prefetchers"][i]["time_share"].as_f64().unwrap_or(0.0);
    let checks = vec![
        Check::new("controller beats fixed pm:32 (elapsed)", "better than each fixed choice on a phased workload (beyond the paper)", format!("{:.3} s vs {:.3} s ({:+.1} %)", t[2].0, t[0].0, gain(t[0].0, t[2].0)), "< fixed pm:32", t[2].0 < t[0].0),
        Check::new("controller beats fixed none (elapsed)", "better than each fixed choice on a phased workload (beyond the paper)", format!("{:.3} s vs {:.3} s ({:+.1} %)", t[2].0, t[1].0, gain(t[1].0, t[2].0)), "< fixed none", t[2].0 < t[1].0),
        Check::new(
            "keeps readahead through the sequential phase",
            format!("no switch to none before the {seq_reads} sequential reads"),
            first_to_none.map_or("never".to_string(), |r| format!("read {r}")),
            format!(">= {} (the phase, less the processes that finish it early: one window)", seq_reads.saturating_sub(window)),
            first_to_none.is_some_and(|r| r + window >= seq_reads),
        ),
        Check::new("runs without readahead in the random phase", "none from the phase change on", format!("first switch to none at read {}, {running_at_end} at the end", first_to_none.map_or("-".to_string(), |r| r.to_string())), "a switch to none, none at the end", first_to_none.is_some() && running_at_end == "none"),
    ];
    let figure = setting_figure(
        "Readahead setting in the real page cache over time (0: pm:32, 1: none)",
        "setting",
        switches.iter().map(|s| (s["time_ns"].as_u64().unwrap_or(0), setting(s) == "none")),
        t[2].0,
    );
    let sums = window_sums_figure(&sel, ["pm:32", "none"], "Σ application read time over each check's window", "ms (sum over the window)");
    let shadow = &sel["shadow"];
    Report {
        name: INFO.name.into(),
        title: INFO.title.into(),
        source: "beyond the paper: KDSim (González-Férez et al., Computer Journal 59(10), 2016, §3, §7) selecting the readahead setting".into(),
        config: serde_json::json!({ "workload": w, "stack": stack("pm:32|none"), "prefetch_select": SELECT }),
        tables: vec![
            Table { title: "Elapsed and mean application time (s), controller's gain over each fixed choice".into(), header: ["run", "elapsed s", "app s", "gain vs pm:32", "gain vs none"].map(String::from).to_vec(), rows },
            Table {
                title: "Switches (application reads issued when it took effect, time, setting, cause, the replaced setting's window sum and the new one's first real window in ms of read time, verdict)".into(),
                header: ["read", "time s", "setting", "cause", "before ms", "after ms", "verdict"].map(String::from).to_vec(),
                rows: switch_rows,
            },
            Table {
                title: "Controller's time share per setting, and the shadow page cache".into(),
                header: ["", "value"].map(String::from).to_vec(),
                rows: vec![
                    vec!["pm:32 time share".into(), format!("{:.3}", share(0))],
                    vec!["none time share".into(), format!("{:.3}", share(1))],
                    vec!["shadow accesses / hits".into(), format!("{} / {}", shadow["accesses"], shadow["hits"])],
                    vec!["shadow requests / pages read".into(), format!("{} / {}", shadow["requests"], shadow["blocks_read"])],
                ],
            },
        ],
        checks,
        notes: vec![
            "Both sides are measured by the application's read time (issue to the presence of its last missing page), summed over the same window of application reads: time per block, the measure of ADA and the scheduler selector, rewards a readahead that reads more blocks per request whether or not they are used.".into(),
        ],
        figures: vec![figure, sums],
    }
}
