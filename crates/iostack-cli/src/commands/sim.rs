//! `iostack sim`: miss-ratio simulation.

use crate::Output;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Trace file.
    pub trace: std::path::PathBuf,
}

pub fn run(args: Args, _out: &Output) -> anyhow::Result<()> {
    anyhow::bail!("{}: trace readers are not wired yet", args.trace.display())
}
