//! `iostack sim`: miss-ratio simulation of several policies and cache sizes over one trace.
//!
//! The trace is read once; every (policy, size) pair is a run fed from the same batches, and the
//! runs are spread over all cores (see `iostack::engine::sim::sweep`).
//!
//! Cache sizes: a plain number counts the cache's unit; a size with a byte unit (`64MiB`) is
//! converted to it:
//! - object mode with `--unit-size`: the cache counts objects, so only plain counts are accepted
//!   (a byte size has no meaning when every object has size 1; the error says so);
//! - object mode with real sizes: the capacity is bytes; a plain number is bytes too;
//! - block mode: the cache counts blocks of `--page-size` bytes; a byte size is divided by the
//!   page size (rounding down) and must hold at least one page.

use std::path::PathBuf;

use anyhow::Context;
use iostack::engine::sim::{sweep, FileTrace, Mode, RunSpec, SimResult, SweepConfig, TraceSource};
use iostack::trace::{CsvMapping, Format, ReaderOptions};
use iostack::units::Size;
use iostack::ConfigError;

use crate::Output;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModeArg {
    /// One object per request, keyed by its start (libCacheSim's semantics).
    Object,
    /// Requests split into pages of --page-size bytes, keyed by (device, block).
    Block,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Trace file (format detected from its name and contents unless --format is given;
    /// .gz/.zst/.xz/.bz2 are decompressed on the fly).
    pub trace: PathBuf,
    /// Policies, comma-separated, each optionally with parameters: `lru,arc,slru:segments=4`.
    /// See `iostack policies`.
    #[arg(short, long, required = true, num_args = 1)]
    pub policy: Vec<String>,
    /// Cache sizes, comma-separated: counts (objects, or blocks in block mode; bytes in sized
    /// object mode) or byte sizes such as 64MiB.
    #[arg(short, long, required = true, value_delimiter = ',')]
    pub cache: Vec<String>,
    /// Trace format (see `iostack formats`); detected when omitted.
    #[arg(short, long)]
    pub format: Option<String>,
    /// Column mapping of a generic CSV trace, e.g. `offset=2,length=3,op=1,time=0` (see
    /// docs/formats.md).
    #[arg(long)]
    pub mapping: Option<String>,
    /// Object mode (one object per request) or block mode (pages).
    #[arg(short, long, value_enum, default_value_t = ModeArg::Object)]
    pub mode: ModeArg,
    /// Object mode: every object has size 1 and the cache counts objects.
    #[arg(long)]
    pub unit_size: bool,
    /// Block mode: page size (bytes, or e.g. 4KiB).
    #[arg(long, default_value = "4096")]
    pub page_size: String,
    /// Count and skip malformed lines or records instead of stopping at the first.
    #[arg(long)]
    pub skip_invalid: bool,
    /// Worker threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print results as a JSON array, one object per run.
    #[arg(long)]
    pub json: bool,
    /// Application hints for lrusp: a TOML hints file (see docs/policies.md), or
    /// oracle:lookahead=N (every process knows its next N references).
    #[arg(long, value_name = "PATH|oracle:lookahead=N")]
    pub hints: Option<String>,
    /// Count requests, hits and misses per process (always done with lrusp).
    #[arg(long)]
    pub per_process: bool,
    /// Write PNG plots into DIR; needs the Python package (`pip install iostack`), whose
    /// `iostack` command draws them (docs/plots.md).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

/// Splits `lru,arc,slru:segments=4,x=1` into specs: a piece with `=` and no `:` continues the
/// parameters of the spec before it.
pub fn split_policies(args: &[String]) -> Result<Vec<String>, ConfigError> {
    let mut out: Vec<String> = Vec::new();
    for arg in args {
        let mut continues = false;
        for piece in arg.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if continues && piece.contains('=') && !piece.contains(':') {
                let last = out.last_mut().expect("continuation follows a spec");
                last.push(',');
                last.push_str(piece);
            } else {
                continues = piece.contains(':');
                out.push(piece.to_string());
            }
        }
    }
    if out.is_empty() {
        return Err(ConfigError::new("--policy", "no policy given"));
    }
    Ok(out)
}

/// The capacity of a cache of `size` in the cache's unit for `mode` (see the module comment).
pub fn capacity(size: Size, text: &str, mode: Mode) -> Result<u64, ConfigError> {
    mode.capacity(size, text)
}

/// The mode from the flags; rejects flags that do not apply.
pub fn mode(mode: ModeArg, unit_size: bool, page_size: &str) -> Result<(Mode, u64), ConfigError> {
    let page = match Size::parse("--page-size", page_size)? {
        Size::Count(n) | Size::Bytes(n) => n,
    };
    if page == 0 {
        return Err(ConfigError::new("--page-size", "the page size must be at least 1 byte"));
    }
    Ok(match mode {
        ModeArg::Object => (Mode::Object { unit_size }, page),
        ModeArg::Block => {
            if unit_size {
                return Err(ConfigError::new("--unit-size", "applies to object mode only (block mode counts blocks)"));
            }
            (Mode::Block { page_size: page }, page)
        }
    })
}

/// The (policy, capacity) pairs, policies outer, sizes inner, in the order given.
pub fn runs(policies: &[String], sizes: &[String], mode: Mode) -> Result<Vec<RunSpec>, ConfigError> {
    let mut caps = Vec::new();
    for text in sizes.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
        caps.push(capacity(Size::parse("--cache", text)?, text, mode)?);
    }
    if caps.is_empty() {
        return Err(ConfigError::new("--cache", "no cache size given"));
    }
    // Check every spec once, so that a typo fails before the trace is read.
    for p in policies {
        iostack::cache::build(p, caps[0])?;
    }
    Ok(policies.iter().flat_map(|p| caps.iter().map(move |&c| RunSpec { policy: p.clone(), capacity: c })).collect())
}

/// Runs a sweep, with a progress spinner on stderr when `show` is set.
pub fn run_sweep(source: &dyn TraceSource, runs: &[RunSpec], cfg: &SweepConfig, page_size: u64, show: bool) -> anyhow::Result<Vec<SimResult>> {
    let bar = if show {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {human_pos} requests read, {per_sec}, {elapsed} ({msg})")
                .expect("valid template"),
        );
        bar.set_message(format!("{} run{}", runs.len(), if runs.len() == 1 { "" } else { "s" }));
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Some(bar)
    } else {
        None
    };
    let result = sweep(source, runs, cfg, page_size, &mut |n| {
        if let Some(b) = &bar {
            b.set_position(n);
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    Ok(result?)
}

pub fn run(args: Args, out: &Output) -> anyhow::Result<()> {
    if let Some(dir) = &args.plot {
        return Err(super::report::python_only(&format!("--plot {}", dir.display())));
    }
    let (mode, page_size) = mode(args.mode, args.unit_size, &args.page_size)?;
    let policies = split_policies(&args.policy)?;
    let runs = runs(&policies, &args.cache, mode)?;
    let format = args.format.as_deref().map(Format::from_name).transpose()?;
    let csv_mapping = args.mapping.as_deref().map(CsvMapping::parse).transpose()?;
    let options = ReaderOptions { skip_invalid: args.skip_invalid, csv_mapping, ..Default::default() };
    let source = FileTrace::new(&args.trace, format, options)?;
    let mut cfg = SweepConfig::new(mode);
    cfg.threads = args.threads;
    cfg.per_process = args.per_process;
    cfg.hints = args.hints.as_deref().map(iostack::hints::HintsSpec::parse).transpose()?.map(std::sync::Arc::new);
    let results = run_sweep(&source, &runs, &cfg, page_size, out.progress())?;
    for w in results.iter().filter_map(iostack::engine::sim::cache_too_small) {
        eprintln!("iostack: warning: {w}");
    }
    if args.json {
        out.print(&(serde_json::to_string_pretty(&results).context("serializing results")? + "\n"))
    } else {
        out.print(&table(&results))
    }
}

/// A readable table of results, one line per run.
pub fn table(results: &[SimResult]) -> String {
    let Some(first) = results.first() else { return String::new() };
    let block = first.blocks.is_some();
    let mut s = format!(
        "trace {} ({}), {} mode{}, {} requests{}\n",
        first.trace,
        first.format,
        first.mode,
        match first.mode.as_str() {
            "block" => format!(", {}-byte pages", first.page_size),
            _ if first.unit_size => ", unit size".to_string(),
            _ => ", object sizes in bytes".to_string(),
        },
        first.requests,
        if first.skipped > 0 { format!(" ({} malformed skipped)", first.skipped) } else { String::new() }
    );
    let pw = results.iter().map(|r| r.policy.len()).max().unwrap_or(6).max(6);
    let size_col = format!("cache ({})", first.cache_unit);
    let cw = results.iter().map(|r| r.cache_size.to_string().len()).max().unwrap_or(0).max(size_col.len());
    s += &format!("{:<pw$}  {:>cw$}  {:>10}  {:>10}  {:>11}", "policy", size_col, "miss ratio", "byte miss", "hits");
    if block {
        s += &format!("  {:>10}", "block miss");
    }
    s += "\n";
    for r in results {
        s += &format!("{:<pw$}  {:>cw$}  {:>10.6}  {:>10.6}  {:>11}", r.policy, r.cache_size, r.miss_ratio, r.byte_miss_ratio, r.hits);
        if let Some(b) = r.block_miss_ratio {
            s += &format!("  {:>10.6}", b);
        }
        s += "\n";
    }
    s + &process_table(results)
}

/// The per-process counts of the runs that have them.
fn process_table(results: &[SimResult]) -> String {
    let mut s = String::new();
    for r in results {
        let Some(procs) = &r.processes else { continue };
        s += &format!("\n{} at {} {}, per process:\n", r.policy, r.cache_size, r.cache_unit);
        s += &format!("{:>8}  {:>11}  {:>11}  {:>11}  {:>10}\n", "pid", "requests", "hits", "misses", "miss ratio");
        for p in procs {
            s += &format!("{:>8}  {:>11}  {:>11}  {:>11}  {:>10.6}\n", p.pid, p.requests, p.hits, p.misses, p.miss_ratio);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_split_on_commas_but_keep_parameters() {
        let got = split_policies(&["lru,slru:segments=4,x=1,arc".into(), "fifo".into()]).unwrap();
        assert_eq!(got, vec!["lru", "slru:segments=4,x=1", "arc", "fifo"]);
    }

    #[test]
    fn sizes_follow_the_mode() {
        let obj = Mode::Object { unit_size: true };
        let sized = Mode::Object { unit_size: false };
        let blk = Mode::Block { page_size: 4096 };
        let cap = |t: &str, m| capacity(Size::parse("--cache", t).unwrap(), t, m);
        assert_eq!(cap("489", obj).unwrap(), 489);
        assert!(cap("64MiB", obj).unwrap_err().to_string().contains("counts objects"));
        assert_eq!(cap("64MiB", sized).unwrap(), 64 << 20);
        assert_eq!(cap("1000", sized).unwrap(), 1000);
        assert_eq!(cap("64MiB", blk).unwrap(), 16384);
        assert_eq!(cap("100", blk).unwrap(), 100);
        assert!(cap("1KiB", blk).unwrap_err().to_string().contains("smaller than one page"));
        assert!(cap("0", obj).unwrap_err().to_string().contains("at least 1"));
        assert!(mode(ModeArg::Block, true, "4096").is_err());
        assert!(mode(ModeArg::Block, false, "0").is_err());
        assert_eq!(mode(ModeArg::Block, false, "8KiB").unwrap().0, Mode::Block { page_size: 8192 });
    }

    #[test]
    fn unknown_policies_fail_before_reading() {
        let e = runs(&["lru".into(), "nope".into()], &["10".into()], Mode::Object { unit_size: true }).unwrap_err().to_string();
        assert!(e.contains("unknown policy `nope`") && e.contains("arc"), "{e}");
    }
}
