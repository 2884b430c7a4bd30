//! The scheduler controller (`--sched-select`, `sched::select`) on a workload whose phases favour
//! different schedulers: KDSim used as the paper frames it (González-Férez, Piernas and Cortes,
//! Computer Journal 59(10), 2016, §3 and §7: a framework to evaluate alternatives on line and
//! select among them), beyond the one use (REDCAP's ADA) the paper builds.
//!
//! The workload: P processes, each first reading a file of its own sequentially in synchronous
//! 16 KiB requests (the files one after another on the disk), then reading random 4 KiB blocks
//! of one large shared file. In the first phase CFQ wins: it gives each process a time slice and
//! idles a few milliseconds on an emptied synchronous queue for that process's next, adjacent
//! read instead of seeking to another process's file; deadline serves the processes' requests in
//! block order and seeks between the files at almost every request. In the second phase no
//! process's next read is near its last one, and deadline's one elevator over all the
//! processes' queued reads beats CFQ's slices and idle waits. (Anticipatory wins the first phase
//! too, but in iostack's model it stops anticipating for random readers and does not lose the
//! second: see the notes.)
//!
//! Three runs of the same trace on the HDD model, page cache out of the way (no readahead, a cache
//! of 8 pages): fixed CFQ, fixed deadline, and the controller starting with CFQ, its virtual disk's
//! table trained off line against the model. The checks follow from the design, not from the
//! result: the controller must beat the worse fixed choice, must be no worse than the better one
//! by more than its cost of learning (about one window after each phase change run on the wrong
//! scheduler: 10 %), must switch to deadline, and must stay on CFQ through the sequential phase.
//! They are not all met: the notes say why.

use super::{Check, Figure, Progress, Report, ReproInfo, Series, Table};
use crate::engine::timed::{run_built, StackConfig, TimedReport, TimedRun};
use crate::workload::streams::{FileMap, Merged, Placement, Stream, BLOCK};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

pub const INFO: ReproInfo = ReproInfo { name: "sched-select", title: "KDSim choosing the I/O scheduler on line: CFQ, then deadline", quick: false, run: reproduce };

/// The phased workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Phases {
    pub processes: u32,
    /// Phase 1: bytes each process reads sequentially, in requests of `seq_request` bytes.
    pub seq_bytes: u64,
    pub seq_request: u64,
    /// Phase 2: 4 KiB reads per process, at random in a shared file of `random_span` bytes.
    pub random_reads: u64,
    pub random_span: u64,
    pub seed: u64,
}

impl Default for Phases {
    fn default() -> Self {
        Phases { processes: 8, seq_bytes: 16 << 20, seq_request: 16 << 10, random_reads: 1000, random_span: 8 << 30, seed: 1 }
    }
}

impl Phases {
    /// Requests of each phase in all.
    pub fn requests(&self) -> (u64, u64) {
        (self.processes as u64 * self.seq_bytes.div_ceil(self.seq_request), self.processes as u64 * self.random_reads)
    }

    /// One stream per process: its sequential file, then its random reads.
    pub fn streams(&self) -> Vec<Stream> {
        let mut at = Placement::default();
        let files = at.contiguous_files(self.processes, self.seq_bytes);
        let shared = FileMap::contiguous(at.file_id, self.random_span, at.block);
        let span_blocks = shared.blocks();
        let (req, bytes, n) = (self.seq_request, self.seq_bytes, self.random_reads);
        files
            .into_iter()
            .enumerate()
            .map(|(p, f)| {
                let pid = at.pid + p as u32;
                let shared = shared.clone();
                let mut rng = Pcg64Mcg::seed_from_u64(self.seed.wrapping_mul(1_000_003).wrapping_add(p as u64));
                let seq = (0..bytes.div_ceil(req)).flat_map(move |i| f.read_one(i * req, req, pid));
                let random = (0..n).flat_map(move |_| {
                    let b = rng.gen_range(0..span_blocks);
                    shared.read_one(b * BLOCK, BLOCK, pid)
                });
                Box::new(seq.chain(random)) as Stream
            })
            .collect()
    }
}

/// The stack: HDD model, page cache out of the way, 128 KiB requests at most.
pub fn stack(sched: &str) -> StackConfig {
    StackConfig { device: "hdd:st3400620as".into(), sched: sched.into(), prefetch: "none".into(), cache: "8".into(), max_request: "128KiB".into(), locality: false, ..Default::default() }
}

/// One run of `w` through `config`.
pub fn run(config: &StackConfig, w: &Phases) -> Result<TimedReport, crate::error::Error> {
    run_built(TimedRun::new(config)?, &mut || Ok(Box::new(Merged::new("sched-select", w.streams()))), Vec::new())
}

/// The controller's settings in the reproduction (the table is added by [`Trained`]).
pub const SELECT: &str = "cfq,deadline,window=1000,cadence=tumbling";

/// A table trained off line against the stack's device (64 requests per cell, as `iostack kdsim
/// train`), saved for `table=PATH` as the paper's kernel loads one at boot; the file (in the
/// system's temporary directory) lives as long as this value.
pub struct Trained {
    pub path: std::path::PathBuf,
}

impl Drop for Trained {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

impl Trained {
    pub fn new(device: &str) -> Result<Trained, crate::error::Error> {
        let mut dev = crate::device::build(device)?;
        let cfg = crate::kdsim::train::TrainConfig { samples: 64, ..Default::default() };
        let (table, _) = crate::kdsim::train::train(dev.as_mut(), &cfg, &mut |_, _| {})?;
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("iostack-sched-select-{}-{n}.json", std::process::id()));
        table.save(&path)?;
        Ok(Trained { path })
    }

    /// `select`'s controller over [`stack`] with this table.
    pub fn config(&self, select: &str) -> StackConfig {
        StackConfig { sched_select: Some(format!("{select},table={}", self.path.display())), ..stack("cscan") }
    }
}

/// The setting on the real system over time, from the switches (time in ns, whether to the
/// second setting) and the run's end in seconds.
pub(crate) fn setting_figure(title: &str, axis: &str, switches: impl Iterator<Item = (u64, bool)>, end_s: f64) -> Figure {
    let mut pts = vec![(0.0, 0.0)];
    let mut cur = 0.0;
    for (t, second) in switches {
        let x = t as f64 / 1e9;
        pts.push((x, cur));
        cur = if second { 1.0 } else { 0.0 };
        pts.push((x, cur));
    }
    pts.push((end_s, cur));
    Figure::line("switches", title, "time (s)", axis, vec![Series::iostack("controller", pts)])
}

/// Each setting's window sum at each check of a controller's report `sel`.
pub(crate) fn window_sums_figure(sel: &serde_json::Value, names: [&str; 2], title: &str, axis: &str) -> Figure {
    let windows: Vec<(f64, f64, f64)> = sel["windows"].as_array().map(|v| v.iter().map(|c| (c["time_ns"].as_f64().unwrap_or(0.0) / 1e9, c["a_ms"].as_f64().unwrap_or(f64::NAN), c["b_ms"].as_f64().unwrap_or(f64::NAN))).collect()).unwrap_or_default();
    Figure::line("window-sums", title, "time (s)", axis, vec![Series::iostack(names[0], windows.iter().map(|w| (w.0, w.1))), Series::iostack(names[1], windows.iter().map(|w| (w.0, w.2)))])
}

/// Elapsed (virtual) seconds and mean application time per process of a run.
pub(crate) fn times(r: &TimedReport) -> (f64, f64) {
    let app = r.processes.iter().map(|p| p.elapsed_ns as f64).sum::<f64>() / r.processes.len().max(1) as f64;
    (r.elapsed_ns as f64 / 1e9, app / 1e9)
}

fn reproduce(progress: &Progress) -> Report {
    let w = Phases::default();
    progress.expect(4);
    let table = Trained::new(&stack("cfq").device).expect("the HDD model trains");
    progress.step("table trained");
    let configs = [("cfq", stack("cfq")), ("deadline", stack("deadline")), ("controller", table.config(SELECT))];
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
    let sel = runs[2].sched_select.clone().unwrap_or_default();
    let (best, worst) = (t[0].0.min(t[1].0), t[0].0.max(t[1].0));
    let gain = |fixed: f64, ctl: f64| (fixed - ctl) / fixed * 100.0;
    let labels = ["fixed cfq", "fixed deadline", "controller (cfq,deadline)"];
    let mut rows: Vec<Vec<String>> = (0..3)
        .map(|i| {
            let g = |j: usize| if i == 2 { format!("{:+.1} %", gain(t[j].0, t[2].0)) } else { String::new() };
            vec![labels[i].to_string(), format!("{:.3}", t[i].0), format!("{:.3}", t[i].1), g(0), g(1)]
        })
        .collect();
    rows[2][3] = format!("{:+.1} %", gain(t[0].0, t[2].0));
    let switches: Vec<(u64, u64, String)> = sel["switches"].as_array().map(|v| v.iter().map(|s| (s["request"].as_u64().unwrap_or(0), s["time_ns"].as_u64().unwrap_or(0), s["scheduler"].as_str().unwrap_or("").to_string())).collect()).unwrap_or_default();
    let (seq_reads, _) = w.requests();
    let share = |i: usize| sel["schedulers"][i]["time_share"].as_f64().unwrap_or(0.0);
    let first_to_deadline = switches.iter().find(|s| s.2 == "deadline").map(|s| s.0);
    let switch_rows: Vec<Vec<String>> = switches
        .iter()
        .zip(sel["switches"].as_array().into_iter().flatten())
        .map(|((r, t, s), x)| {
            let ms = |k: &str| x[k].as_f64().map_or("-".to_string(), |v| format!("{v:.1}"));
            let verdict = if x["reverted"] == true { "reverted" } else if x["after_ms"].is_null() { "-" } else { "kept" };
            vec![r.to_string(), format!("{:.3}", *t as f64 / 1e9), s.clone(), x["cause"].as_str().unwrap_or("").to_string(), ms("before_ms"), ms("after_ms"), verdict.to_string()]
        })
        .collect();
    let window = sel["window"].as_u64().unwrap_or(1000);
    let checks = vec![
        Check::new("controller beats the worse fixed choice (elapsed)", "better than both fixed choices on a phased workload (beyond the paper)", format!("{:.3} s vs {:.3} s", t[2].0, worst), "< the worse", t[2].0 < worst),
        Check::new(
            "controller within 10 % of the better fixed choice (elapsed)",
            "the better choice, less the cost of learning",
            format!("{:+.1} %", (t[2].0 - best) / best * 100.0),
            "<= +10 % (one window per phase on the wrong scheduler)",
            t[2].0 <= best * 1.10,
        ),
        Check::new("switches to deadline", "at least one switch", format!("{} switch(es)", switches.len()), ">= 1 to deadline", first_to_deadline.is_some()),
        Check::new(
            "stays on cfq through the sequential phase",
            format!("first switch after the {seq_reads} sequential reads"),
            first_to_deadline.map_or("never".to_string(), |r| format!("read {r}")),
            format!(">= {} (the phase, less the processes that finish it early: one window)", seq_reads.saturating_sub(window)),
            first_to_deadline.is_some_and(|r| r + window >= seq_reads),
        ),
    ];
    let figure = setting_figure("Scheduler on the real device over time (0: cfq, 1: deadline)", "scheduler", switches.iter().map(|(_, t, s)| (*t, s == "deadline")), t[2].0);
    let sums = window_sums_figure(&sel, ["cfq", "deadline"], "Σ time per block over each check's window", "ms per block (sum over the window)");
    Report {
        name: INFO.name.into(),
        title: INFO.title.into(),
        source: "beyond the paper: KDSim (González-Férez et al., Computer Journal 59(10), 2016, §3, §7) selecting the I/O scheduler".into(),
        config: serde_json::json!({ "workload": w, "stack": stack("cfq|deadline"), "sched_select": SELECT }),
        tables: vec![
            Table { title: "Elapsed and mean application time (s), controller's gain over each fixed choice".into(), header: ["run", "elapsed s", "app s", "gain vs cfq", "gain vs deadline"].map(String::from).to_vec(), rows },
            Table {
                title: "Switches (reads entered when it took effect, time, scheduler, cause, the replaced scheduler's window sum and the new one's first real window in ms per block, verdict)".into(),
                header: ["read", "time s", "scheduler", "cause", "before ms", "after ms", "verdict"].map(String::from).to_vec(),
                rows: switch_rows,
            },
            Table {
                title: "Controller's time share per scheduler".into(),
                header: ["scheduler", "time share"].map(String::from).to_vec(),
                rows: vec![vec!["cfq".into(), format!("{:.3}", share(0))], vec!["deadline".into(), format!("{:.3}", share(1))]],
            },
        ],
        checks,
        notes: vec![
            "The virtual disk plays each process's closed loop on its own timeline: a process's next synchronous read enters it at the virtual completion of the previous one plus the think time measured in the real system, so the scheduler not running sees the processes' requests when they would have issued them under it, not at the running one's pace; it decides only on a full window of its own reads. Played at CFQ's pace instead, deadline served the copies of the blocked processes' reads at once and never saw their next ones, and looked as cheap as CFQ in the sequential phase. The virtual disk cannot play a read before the real system issued it, so at the phase change it may still be in the earlier phase, and the verification compares deadline's first real window with CFQ's last, which spans both phases (see `switches`).".into(),
            "In iostack's anticipatory model the scheduler stops anticipating for processes whose reads are random (its think-time and seek-distance heuristics), so it loses nothing to deadline on random readers (8 processes, 1000 random 4 KiB reads each in 8 GiB: anticipatory 45.7 s, deadline 47.0 s); CFQ, whose time slices and idle window still cost it, is the scheduler that wins the sequential phase and loses the random one (CFQ 51.7 s).".into(),
        ],
        figures: vec![figure, sums],
    }
}
