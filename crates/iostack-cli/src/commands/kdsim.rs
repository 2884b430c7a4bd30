//! `iostack kdsim`: KDSim's table model and virtual disk.
//!
//! - `iostack kdsim train --device SPEC --output PATH [--samples N] [--seed N]`: off-line training
//!   of a table against any device model (a progress bar on a terminal); the output loads with
//!   `--device table:PATH`.
//! - `iostack kdsim accuracy TRACE --device SPEC [--table PATH] [--json]`: replays a trace with
//!   the virtual disk beside the real (modelled) one and reports, per window of 1000 requests,
//!   their summed I/O times and difference (`windows`, `mean_abs_diff_pct`); `--redcap SPEC` puts
//!   REDCAP, always on, in front of both.

use std::path::PathBuf;

use crate::Output;
use iostack::device;
use iostack::kdsim::train::{self, TrainConfig};
use iostack::units::Size;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(clap::Subcommand, Debug)]
pub enum Sub {
    /// Train a table model off line against a device model (random requests, uniformly over all
    /// cells); the result loads with `--device table:PATH`.
    Train(TrainArgs),
    /// Replay a trace with KDSim's virtual disk beside the real (modelled) device and compare
    /// their I/O times per window of requests.
    Accuracy(AccuracyArgs),
}

#[derive(clap::Args, Debug)]
pub struct AccuracyArgs {
    /// The trace (any format iostack reads).
    pub trace: PathBuf,
    /// The real device, e.g. `hdd:st3400620as`.
    #[arg(long)]
    pub device: String,
    /// The virtual disk's starting table (from `kdsim train`); without it the table starts empty
    /// and is learned on line.
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Requests per window.
    #[arg(long, default_value_t = 1000)]
    pub window: u64,
    /// I/O scheduler of both disks.
    #[arg(long, default_value = "noop")]
    pub sched: String,
    /// Page-cache size (bytes with a unit, or blocks).
    #[arg(long, default_value = "64MiB")]
    pub cache: String,
    /// Replacement policy.
    #[arg(long, default_value = "lru")]
    pub policy: String,
    /// Prefetcher.
    #[arg(long, default_value = "linux")]
    pub prefetch: String,
    /// Largest request (the table's rows stop at 128 KiB).
    #[arg(long, default_value = "128KiB")]
    pub max_request: String,
    /// Answer with each distance column's mean over all sizes (the paper's "VD 64 average").
    #[arg(long)]
    pub size_blind: bool,
    /// Observations per cell of a table learned from zero.
    #[arg(long, default_value_t = 64)]
    pub values_per_cell: usize,
    /// Write the virtual disk's table at the end of the run to this file.
    #[arg(long)]
    pub save_table: Option<PathBuf>,
    /// REDCAP always on in front of both disks (`on` or `size=64MiB,segment=128KiB,hit=5us`):
    /// the disks then serve its segment reads and the writes (the paper's Table 1).
    #[arg(long)]
    pub redcap: Option<String>,
}

fn accuracy_cmd(a: AccuracyArgs, out: &Output) -> anyhow::Result<()> {
    use iostack::engine::timed::StackConfig;
    use iostack::kdsim::accuracy::{self, AccuracyConfig};
    let config = StackConfig {
        device: a.device.clone(),
        sched: a.sched.clone(),
        cache: a.cache.clone(),
        policy: a.policy.clone(),
        prefetch: a.prefetch.clone(),
        max_request: a.max_request.clone(),
        redcap: a.redcap.clone(),
        // The report has no locality section: the probes would only cost time.
        locality: false,
        ..Default::default()
    };
    let acc = AccuracyConfig { table: a.table.clone(), window: a.window, size_blind: a.size_blind, values_per_cell: a.values_per_cell };
    let path = a.trace.clone();
    let options = iostack::trace::ReaderOptions::default();
    let start = std::time::Instant::now();
    let (report, result, table) = accuracy::run_with_table(&config, &acc, &mut || Ok(iostack::trace::open(&path, None, &options)?))?;
    if let Some(p) = &a.save_table {
        table.save(p)?;
    }
    if a.json {
        let v = accuracy::report_json(&a.trace, &report, &acc, &result);
        return out.print(&(serde_json::to_string_pretty(&v)? + "\n"));
    }
    let mut text = format!(
        "{} on {} ({}), {} requests in {} windows of {}\n{:>10} {:>8} {:>12} {:>12} {:>9}\n",
        a.trace.display(),
        report.resolved["device"].as_str().unwrap_or(""),
        report.resolved["sched"].as_str().unwrap_or(""),
        result.requests,
        result.windows.len(),
        result.window,
        "start", "requests", "vd_ms", "rd_ms", "diff_%"
    );
    for w in &result.windows {
        let d = w.diff_pct.map_or("-".to_string(), |d| format!("{d:+.3}"));
        text += &format!("{:>10} {:>8} {:>12.3} {:>12.3} {:>9}\n", w.start, w.requests, w.vd_ms, w.rd_ms, d);
    }
    text += &format!(
        "mean |diff| {} over {} windows; {} cells trained; {:.2} s\n",
        result.mean_abs_diff_pct.map_or("-".to_string(), |m| format!("{m:.3} %")),
        result.windows.len(),
        result.trained_cells,
        start.elapsed().as_secs_f64()
    );
    out.print(&text)
}

#[derive(clap::Args, Debug)]
pub struct TrainArgs {
    /// The device to measure, e.g. `hdd:st3400620as` or `ssd:x25m`.
    #[arg(long)]
    pub device: String,
    /// The table file to write (JSON, see docs/devices.md).
    #[arg(short, long)]
    pub output: PathBuf,
    /// Requests per cell.
    #[arg(long, default_value_t = 64)]
    pub samples: u32,
    /// Random seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Observations each cell keeps (the paper's 64).
    #[arg(long, default_value_t = 64)]
    pub values_per_cell: usize,
    /// Capacity, for a device model that has none (e.g. `fixed:9.5ms`), e.g. 400GB.
    #[arg(long)]
    pub capacity: Option<String>,
    /// Idle time between a completion and the next request (e.g. 50us): a program's own time.
    #[arg(long, default_value = "0ns")]
    pub gap: String,
    /// Mix reads and writes in one random order (default: the read table first, then the write
    /// table).
    #[arg(long)]
    pub mixed: bool,
}

fn train_cmd(a: TrainArgs, out: &Output) -> anyhow::Result<()> {
    let mut dev = device::build(&a.device)?;
    let capacity_bytes = match a.capacity.as_deref() {
        None => None,
        Some(s) => Some(match Size::parse("--capacity", s)? {
            Size::Bytes(b) | Size::Count(b) => b,
        }),
    };
    let gap_ns = iostack::units::parse_duration_ns("--gap", &a.gap)?;
    let cfg = TrainConfig { samples: a.samples, seed: a.seed, values_per_cell: a.values_per_cell, capacity_bytes, gap_ns, mixed: a.mixed };
    let bar = out.progress().then(|| {
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {human_pos}/{human_len} requests, {per_sec}, eta {eta} ({msg})")
                .expect("valid template"),
        );
        bar.set_message(dev.name());
        bar
    });
    let start = std::time::Instant::now();
    let result = train::train(dev.as_mut(), &cfg, &mut |done, total| {
        if let Some(b) = &bar {
            b.set_length(total);
            b.set_position(done);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let (table, sum) = result?;
    table.save(&a.output)?;
    out.print(&format!(
        "{}: {} requests over {} cells ({} out of reach), {} columns, {:.1} s of device time -> {} in {:.2} s\n",
        dev.name(),
        sum.requests,
        sum.cells,
        sum.unreachable,
        table.columns(),
        sum.device_ns as f64 / 1e9,
        a.output.display(),
        start.elapsed().as_secs_f64()
    ))
}

pub fn run(args: Args, out: &Output) -> anyhow::Result<()> {
    match args.command {
        Sub::Train(a) => train_cmd(a, out),
        Sub::Accuracy(a) => accuracy_cmd(a, out),
    }
}
