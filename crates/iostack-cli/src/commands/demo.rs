//! `iostack demo`: what iostack does, in a few seconds and without a trace file.
//!
//! Generates a Zipf workload (alpha 1.0 over 100,000 objects of 4 KiB, one million requests, a
//! fixed seed), then compares every registered policy at cache sizes of 0.1 %, 1 % and 10 % of
//! the objects in one sweep, exactly as `iostack sim` would on a trace file. The workload is
//! generated on the fly each time the sweep opens it (twice when Belady needs its pre-pass), so
//! nothing is written to disk.

use iostack::engine::sim::{Mode, RunSpec, SimResult, SweepConfig, TraceSource};
use iostack::trace::TraceReader;
use iostack::workload::{self, Common, GenParams};

use crate::Output;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Requests to generate.
    #[arg(long, default_value_t = 1_000_000)]
    pub requests: u64,
    /// Distinct objects.
    #[arg(long, default_value_t = 100_000)]
    pub objects: u64,
    /// Zipf skew.
    #[arg(long, default_value_t = 1.0)]
    pub alpha: f64,
    /// Generator seed.
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Print results as a JSON array, one object per run.
    #[arg(long)]
    pub json: bool,
}

/// The Zipf workload as a trace source: each open regenerates the same requests from the seed.
struct ZipfWorkload {
    common: Common,
    alpha: f64,
}

impl TraceSource for ZipfWorkload {
    fn open(&self) -> Result<Box<dyn TraceReader>, iostack::error::Error> {
        let params = GenParams::new("zipf", [("alpha".to_string(), self.alpha.to_string())]);
        Ok(workload::build("zipf", &self.common, params)?)
    }
    fn name(&self) -> String {
        format!("zipf(alpha={}, objects={}, requests={}, seed={})", self.alpha, self.common.objects, self.common.requests, self.common.seed)
    }
    fn format(&self) -> String {
        "generated".to_string()
    }
}

pub fn run(args: Args, out: &Output) -> anyhow::Result<()> {
    let common = Common { requests: args.requests, objects: args.objects, seed: args.seed, ..Common::default() };
    common.validate()?;
    let source = ZipfWorkload { common, alpha: args.alpha };
    let sizes: Vec<u64> = [1000, 100, 10].iter().map(|d| (args.objects / d).max(1)).collect();
    let policies: Vec<&str> = iostack::cache::POLICIES.iter().map(|p| p.name).collect();
    let runs: Vec<RunSpec> =
        policies.iter().flat_map(|p| sizes.iter().map(move |&c| RunSpec { policy: p.to_string(), capacity: c })).collect();
    let cfg = SweepConfig::new(Mode::Object { unit_size: true });
    let start = std::time::Instant::now();
    let results = super::sim::run_sweep(&source, &runs, &cfg, 4096, out.progress())?;
    let secs = start.elapsed().as_secs_f64();
    if args.json {
        return out.print(&(serde_json::to_string_pretty(&results)? + "\n"));
    }
    out.print(&demo_table(&results, &sizes, args.objects, secs))
}

/// Policies as rows, cache sizes as columns, miss ratios in the cells; best per column marked.
fn demo_table(results: &[SimResult], sizes: &[u64], objects: u64, secs: f64) -> String {
    let first = &results[0];
    let mut s = format!("Workload: {} (generated in memory, unit-size objects)\n", first.trace);
    s += &format!(
        "{} runs over {} requests in {:.1} s ({:.0} M requests/s simulated in total)\n\nMiss ratio by cache size (objects, % of the {} objects):\n",
        results.len(),
        first.requests,
        secs,
        (results.len() as f64 * first.requests as f64) / secs / 1e6,
        objects
    );
    let head: Vec<String> = sizes.iter().map(|c| format!("{c} ({:.1}%)", *c as f64 * 100.0 / objects as f64)).collect();
    let w = head.iter().map(|h| h.len()).max().unwrap_or(8).max(8);
    s += &format!("{:<10}", "policy");
    for h in &head {
        s += &format!("  {h:>w$}");
    }
    s += "\n";
    let best: Vec<f64> = sizes
        .iter()
        .map(|&c| results.iter().filter(|r| r.cache_size == c && r.policy != "belady").map(|r| r.miss_ratio).fold(f64::INFINITY, f64::min))
        .collect();
    let mut policies: Vec<&str> = Vec::new();
    for r in results {
        if !policies.contains(&r.policy.as_str()) {
            policies.push(&r.policy);
        }
    }
    for p in policies {
        s += &format!("{p:<10}");
        for (i, &c) in sizes.iter().enumerate() {
            let r = results.iter().find(|r| r.policy == p && r.cache_size == c).expect("every run has a result");
            let mark = if p != "belady" && r.miss_ratio == best[i] { "*" } else { " " };
            s += &format!("  {:>w$}", format!("{:.4}{mark}", r.miss_ratio));
        }
        s += "\n";
    }
    s += "\n* lowest miss ratio among the online policies (belady is the offline optimum).\n";
    s += "Next: `iostack sim TRACE --policy lru,arc --cache 1000,10000` on your own trace; `iostack policies`, `iostack formats`.\n";
    s
}
