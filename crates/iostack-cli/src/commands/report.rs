//! `iostack report RESULTS... --out report.html`: one self-contained HTML report of results.
//!
//! The report draws its figures with matplotlib, so it is the Python package's command
//! (`python/iostack/report.py`, reached through its `iostack` entry point, which handles
//! `report` before the Rust command line). The Rust-only binary lists it in `--help` and says
//! where it is instead of calling it unknown.

use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Result files or directories: sweep or sim tables (CSV, JSON Lines, Parquet, JSON), run
    /// and analyze JSON, PNG figures.
    #[arg(required = true)]
    pub results: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(long, short)]
    pub out: PathBuf,
    /// Title of the report.
    #[arg(long)]
    pub title: Option<String>,
}

/// Names the command that makes the report (this binary cannot draw it).
pub fn python_only(what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{what}: figures are drawn with matplotlib by the Python package; install it (`pip install iostack`) and run its `iostack` command, or use --json and plot the results yourself"
    )
}

pub fn run(args: Args) -> anyhow::Result<()> {
    Err(python_only(&format!("report --out {}", args.out.display())))
}
