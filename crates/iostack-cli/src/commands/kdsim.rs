//! `iostack kdsim`: KDSim's table model and virtual disk.
//!
//! - `iostack kdsim train --device SPEC --output PATH [--samples N] [--seed N]`: off-line training
//!   of a table against any device model (a progress bar on a terminal); the output loads with
//!   `--device table:PATH`.

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
}

fn train_cmd(a: TrainArgs, out: &Output) -> anyhow::Result<()> {
    let mut dev = device::build(&a.device)?;
    let capacity_bytes = match a.capacity.as_deref() {
        None => None,
        Some(s) => Some(match Size::parse("--capacity", s)? {
            Size::Bytes(b) | Size::Count(b) => b,
        }),
    };
    let cfg = TrainConfig { samples: a.samples, seed: a.seed, values_per_cell: a.values_per_cell, capacity_bytes };
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
    }
}
