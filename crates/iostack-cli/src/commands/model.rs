//! `iostack model MODEL`: runs a paper's theoretical model exactly.
//!
//! `iostack model acfs --refs ABCA --init AB --k 2 --f 4 --policy ca [--json]` runs the
//! prefetching and caching model of Cao et al. (§2.1): a reference string from an initial cache
//! of at most K blocks, fetch time F, under demand fetching with optimal replacement (`none`),
//! controlled-aggressive prefetching (`ca`), or the optimum by exhaustive search (`opt`, small
//! instances only). It prints the total time and the event log; `--json` prints `total`,
//! `fetches`, `log` and the instance.

use crate::Output;
use iostack::model::acfs::{run as run_acfs, Instance, ModelPolicy};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub model: Model,
}

#[derive(clap::Subcommand, Debug)]
pub enum Model {
    /// Cao et al.'s integrated prefetching and caching model (K blocks, fetch time F, one fetch
    /// at a time): demand fetching, controlled-aggressive, or the exhaustive optimum.
    Acfs(AcfsArgs),
}

#[derive(clap::Args, Debug)]
pub struct AcfsArgs {
    /// Reference string: one letter per block (ABCA) or space-separated names ("a b c a").
    #[arg(long)]
    pub refs: String,
    /// Initially cached blocks, in the same form (at most K) [default: empty cache].
    #[arg(long, default_value = "")]
    pub init: String,
    /// Cache size in blocks.
    #[arg(long)]
    pub k: usize,
    /// Fetch time in time units (one reference takes one unit).
    #[arg(long)]
    pub f: u64,
    /// none (demand fetching), ca (controlled-aggressive) or opt (exhaustive optimum).
    #[arg(long)]
    pub policy: String,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, out: &Output) -> anyhow::Result<()> {
    match args.model {
        Model::Acfs(a) => {
            let policy = ModelPolicy::parse(&a.policy)?;
            let inst = Instance::parse(&a.refs, &a.init, a.k, a.f)?;
            let outcome = run_acfs(&inst, policy)?;
            if a.json {
                out.print(&(serde_json::to_string_pretty(&outcome)? + "\n"))
            } else {
                out.print(&outcome.to_text())
            }
        }
    }
}
