//! `iostack sweep EXPERIMENT.toml`: every run of an experiment's grid (traces x axes x cache
//! sizes), on all cores, one row per run appended to `--output` as it finishes; `--resume` skips
//! the points already there; failed runs are recorded and reported at the end (exit code 1).
//! See `iostack::experiment` and docs/experiments.md.
//!
//! `--backend ray` is run by the Python package's `iostack` command (python/iostack/experiment.py),
//! which hands the same tasks to Ray workers and writes the same rows through this code.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use iostack::experiment::{self, Experiment, SweepOutcome, SweepSettings, Task};
use iostack::table::Row;

use crate::Output;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Experiment file (TOML, or JSON of the same shape); see docs/experiments.md.
    pub experiment: PathBuf,
    /// Table the rows are appended to as runs finish: .parquet, .csv or .jsonl. Without it the
    /// table is printed as CSV on stdout at the end.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Skip the points whose rows are already in --output (failed points run again).
    #[arg(long, requires = "output")]
    pub resume: bool,
    /// Where runs execute: `local` (this machine, all cores) or `ray` (a Ray cluster; needs the
    /// Python package's `iostack` command).
    #[arg(long, default_value = "local", value_parser = ["local", "ray"])]
    pub backend: String,
    /// Ray: address of an existing cluster (`ray://host:10001` or `auto`); a local Ray instance
    /// is started when absent.
    #[arg(long)]
    pub address: Option<String>,
    /// Ray: how trace files reach the workers: `path` (every node reads the driver's path: a
    /// shared file system) or `store` (read once on the driver and shipped through Ray's object
    /// store).
    #[arg(long, default_value = "path", value_parser = ["path", "store"])]
    pub ship: String,
    /// Local backend: runs at once (default: one per core).
    #[arg(long, short, default_value_t = 0)]
    pub jobs: usize,
    /// Print the resolved experiment (traces expanded, points counted) and stop.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress and no summary: only errors.
    #[arg(long, short)]
    pub quiet: bool,
}

/// The experiment and its tasks from the file.
pub fn load(path: &std::path::Path) -> anyhow::Result<(Experiment, Vec<Task>)> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let exp = Experiment::parse(&text, &path.display().to_string(), &experiment::experiment_dir(path))?;
    let tasks = exp.plan();
    Ok((exp, tasks))
}

/// The resolved experiment, as echoed before the runs (and written beside the output).
pub fn echo(exp: &Experiment, tasks: &[Task]) -> String {
    let points: usize = tasks.iter().map(|t| t.points.len()).sum();
    let mut v = serde_json::to_value(exp).expect("experiments serialize");
    v["points"] = serde_json::json!(points);
    v["tasks"] = serde_json::json!(tasks.len());
    serde_json::to_string_pretty(&v).expect("JSON")
}

/// Progress of a sweep on stderr: an indicatif bar on a terminal (done/total, rate, ETA),
/// a plain line every 10 seconds otherwise, nothing when quiet.
pub struct Progress {
    bar: Option<indicatif::ProgressBar>,
    plain: bool,
    start: Instant,
    last: Instant,
}

impl Progress {
    pub fn new(total: usize, quiet: bool) -> Progress {
        let terminal = std::io::stderr().is_terminal();
        let bar = (!quiet && terminal).then(|| {
            let bar = indicatif::ProgressBar::new(total as u64);
            bar.set_style(
                indicatif::ProgressStyle::with_template("{bar:30} {pos}/{len} runs, {per_sec}, ETA {eta} {msg}").expect("valid template"),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Progress { bar, plain: !quiet && !terminal, start: Instant::now(), last: Instant::now() }
    }

    pub fn update(&mut self, done: usize, total: usize, failed: usize) {
        if let Some(b) = &self.bar {
            b.set_position(done as u64);
            if failed > 0 {
                b.set_message(format!("({failed} failed)"));
            }
        } else if self.plain && (self.last.elapsed() >= Duration::from_secs(10) || done == total) {
            self.last = Instant::now();
            let secs = self.start.elapsed().as_secs_f64();
            eprintln!("sweep: {done}/{total} runs done{}, {secs:.0}s elapsed", if failed > 0 { format!(", {failed} failed") } else { String::new() });
        }
    }

    pub fn finish(self) {
        if let Some(b) = self.bar {
            b.finish_and_clear();
        }
    }
}

/// Reports the outcome on stderr (unless quiet) and turns failures into an error.
pub fn conclude(outcome: &SweepOutcome, settings: &SweepSettings, quiet: bool) -> anyhow::Result<()> {
    if !quiet {
        let ran = outcome.total - outcome.skipped;
        eprintln!(
            "sweep: {} runs ({} run now, {} already in the output), {} failed{}",
            outcome.total,
            ran,
            outcome.skipped,
            outcome.failures.len(),
            settings.output.as_ref().map(|p| format!("; results in {}", p.display())).unwrap_or_default()
        );
    }
    if outcome.failures.is_empty() {
        return Ok(());
    }
    for f in &outcome.failures {
        eprintln!("failed: {}: {}", f.point, f.error);
    }
    anyhow::bail!("{} of {} runs failed (their rows hold the error)", outcome.failures.len(), outcome.total)
}

pub fn run(args: Args, out: &Output) -> anyhow::Result<()> {
    if args.backend == "ray" {
        anyhow::bail!("--backend ray runs through the Python package: install it (`pip install iostack[ray]`) and use its `iostack` command");
    }
    crate::output::check_table_path(args.output.as_deref())?;
    let (exp, tasks) = load(&args.experiment)?;
    let echoed = echo(&exp, &tasks);
    if args.dry_run {
        return out.print(&(echoed + "\n"));
    }
    if let Some(p) = &args.output {
        let side = PathBuf::from(format!("{}.experiment.json", p.display()));
        iostack::table::write_atomically(&side, |f| std::io::Write::write_all(f, echoed.as_bytes()))?;
    }
    let settings = SweepSettings { output: args.output.clone(), resume: args.resume };
    let total = tasks.iter().map(|t| t.points.len()).sum();
    let mut progress = Progress::new(total, args.quiet);
    let jobs = args.jobs;
    let outcome = experiment::execute(tasks, &settings, |todo, done| experiment::run_local(todo, jobs, done), &mut |d, t, f| progress.update(d, t, f))?;
    progress.finish();
    if args.output.is_none() {
        out.print(&csv_text(&outcome.rows)?)?;
    }
    conclude(&outcome, &settings, args.quiet)
}

fn csv_text(rows: &[Row]) -> anyhow::Result<String> {
    let dir = std::env::temp_dir().join(format!("iostack-sweep-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("rows.csv");
    iostack::table::write(&path, rows)?;
    let text = std::fs::read_to_string(&path)?;
    let _ = std::fs::remove_dir_all(&dir);
    Ok(text)
}
