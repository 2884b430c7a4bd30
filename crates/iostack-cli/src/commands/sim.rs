//! `iostack sim`: miss-ratio simulation of several policies and cache sizes over one trace.
//!
//! The trace is read once; every (policy, size) pair is a run fed from the same batches, and the
//! runs are spread over all cores (see `iostack::engine::sim::sweep`).
//!
//! Cache sizes: a plain number counts the cache's unit; a percentage (`1%`) or a number with a
//! decimal point (`0.01`, libCacheSim's form) is a fraction of the trace's footprint in that unit
//! (see `iostack::engine::footprint`); a size with a byte unit (`64MiB`) is converted to it:
//! - object mode with `--unit-size`: the cache counts objects, so only plain counts are accepted
//!   (a byte size has no meaning when every object has size 1; the error says so);
//! - object mode with real sizes: the capacity is bytes; a plain number is bytes too;
//! - block mode: the cache counts blocks of `--page-size` bytes; a byte size is divided by the
//!   page size (rounding down) and must hold at least one page.

use std::path::PathBuf;

use anyhow::Context;
use iostack::engine::series::{series_path, series_rows, Interval};
use iostack::engine::sim::{sweep, sweep_sizes, FileTrace, Mode, ProgressFn, RunSpec, SimResult, SweepConfig, TraceSource};
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
    #[arg(short, long, required_unless_present = "preset", num_args = 1)]
    pub policy: Vec<String>,
    /// Cache sizes, comma-separated: counts (objects, or blocks in block mode; bytes in sized
    /// object mode), byte sizes such as 64MiB, or fractions of the trace's footprint in the
    /// cache's unit: `0.1%,1%,10%` or `0.001,0.01,0.1`.
    #[arg(short, long, required_unless_present = "preset", value_delimiter = ',')]
    pub cache: Vec<String>,
    /// A named configuration's caching: `acfs-1` (global LRU) or `acfs-4` (LRU-SP with the
    /// hints' application control); sets the policy, block mode with 8 KiB pages and a 6.4MiB
    /// cache, each overridden by its own flag. The other ACFS presets differ from these only in
    /// prefetching and scheduling, which `iostack run` models.
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// Trace format (see `iostack formats`); detected when omitted.
    #[arg(short, long)]
    pub format: Option<String>,
    /// Column mapping of a generic CSV trace, e.g. `offset=2,length=3,op=1,time=0` (see
    /// docs/formats.md).
    #[arg(long)]
    pub mapping: Option<String>,
    /// Object mode (one object per request, the default) or block mode (pages).
    #[arg(short, long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Object mode: every object has size 1 and the cache counts objects.
    #[arg(long)]
    pub unit_size: bool,
    /// Block mode: page size (bytes, or e.g. 4KiB; default 4096).
    #[arg(long)]
    pub page_size: Option<String>,
    /// Count and skip malformed lines or records instead of stopping at the first.
    #[arg(long)]
    pub skip_invalid: bool,
    /// Worker threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print results as a JSON array, one object per run.
    #[arg(long)]
    pub json: bool,
    /// Hit and miss ratios per interval of trace time (`1h`, `10s`) or of requests
    /// (`100000req`): `series` in --json, a table per run in the text output, and a second
    /// table beside --output (`FILE.series.EXT`); see docs/experiments.md.
    #[arg(long, value_name = "WIDTH")]
    pub interval: Option<String>,
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
    /// Print the miss ratios as policies x cache sizes (as `iostack demo` does); with --output,
    /// the file holds that pivot too.
    #[arg(long, conflicts_with = "json")]
    pub wide: bool,
    /// Write the results to FILE as a table, one row per run (with --wide, one per policy); the
    /// format comes from the extension: .csv, .parquet, .json, .jsonl.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
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

/// Fills in what preset `name` sets and the flags did not: its policy, block mode, its page
/// size and its cache size. Only presets whose configuration differs in caching are accepted.
fn apply_preset(args: &mut Args, name: &str) -> Result<(), ConfigError> {
    let p = iostack::engine::timed::preset::find("--preset", name)?;
    if p.prefetch != "obl:seq" {
        let same = if p.number() <= 3 { "acfs-1" } else { "acfs-4" };
        return Err(ConfigError::new(
            "--preset",
            format!("{} differs from {same} only in prefetching and scheduling, which `iostack sim` does not model: use `iostack run --preset {}`, or `--preset {same}` for its caching", p.name, p.name),
        ));
    }
    let settings = p.settings();
    let get = |key: &str| settings.iter().find(|(k, _)| *k == key).map(|(_, v)| v.as_str().map_or_else(|| v.to_string(), str::to_string)).expect("an ACFS preset sets the key");
    if args.policy.is_empty() {
        args.policy = vec![get("policy")];
    }
    if args.cache.is_empty() {
        args.cache = vec![get("cache")];
    }
    args.mode.get_or_insert(ModeArg::Block);
    args.page_size.get_or_insert_with(|| get("page_size"));
    Ok(())
}

/// Runs a sweep, with a progress spinner on stderr when `show` is set.
pub fn run_sweep(source: &dyn TraceSource, runs: &[RunSpec], cfg: &SweepConfig, page_size: u64, show: bool) -> anyhow::Result<Vec<SimResult>> {
    with_spinner(show, runs.len(), |progress| sweep(source, runs, cfg, page_size, progress))
}

/// Runs `work` with a spinner on stderr (requests read, rate, elapsed) when `show` is set.
pub fn with_spinner(show: bool, runs: usize, work: impl FnOnce(ProgressFn<'_>) -> Result<Vec<SimResult>, iostack::error::Error>) -> anyhow::Result<Vec<SimResult>> {
    let bar = if show {
        let bar = indicatif::ProgressBar::new_spinner();
        bar.set_style(
            indicatif::ProgressStyle::with_template("{spinner} {human_pos} requests read, {per_sec}, {elapsed} ({msg})")
                .expect("valid template"),
        );
        bar.set_message(format!("{} run{}", runs, if runs == 1 { "" } else { "s" }));
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Some(bar)
    } else {
        None
    };
    let result = work(&mut |n| {
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
    let mut args = args;
    if let Some(name) = args.preset.clone() {
        apply_preset(&mut args, &name)?;
    }
    let (mode, page_size) = mode(args.mode.unwrap_or(ModeArg::Object), args.unit_size, args.page_size.as_deref().unwrap_or("4096"))?;
    let policies = split_policies(&args.policy)?;
    iostack::engine::sim::check_runs(&policies, &args.cache, mode)?;
    crate::output::check_table_path(args.output.as_deref())?;
    let format = args.format.as_deref().map(Format::from_name).transpose()?;
    let csv_mapping = args.mapping.as_deref().map(CsvMapping::parse).transpose()?;
    let options = ReaderOptions { skip_invalid: args.skip_invalid, csv_mapping, ..Default::default() };
    let source = FileTrace::new(&args.trace, format, options)?;
    let mut cfg = SweepConfig::new(mode);
    cfg.threads = args.threads;
    cfg.per_process = args.per_process;
    cfg.interval = args.interval.as_deref().map(|t| Interval::parse("--interval", t)).transpose()?;
    cfg.hints = args.hints.as_deref().map(iostack::hints::HintsSpec::parse).transpose()?.map(std::sync::Arc::new);
    if cfg.interval.is_some() && args.wide {
        return Err(ConfigError::new("--interval", "cannot be shown with --wide (one row per policy); use --json or --output").into());
    }
    let runs = policies.len() * args.cache.len();
    let results = with_spinner(out.progress(), runs, |p| sweep_sizes(&source, &policies, &args.cache, &cfg, page_size, p))?;
    for w in results.iter().filter_map(iostack::engine::sim::cache_too_small) {
        eprintln!("iostack: warning: {w}");
    }
    if let Some(path) = &args.output {
        let rows = if args.wide { wide_rows(&results) } else { results.iter().map(|r| iostack::table::flatten(r, "")).collect() };
        crate::output::write_table(path, &rows)?;
        if cfg.interval.is_some() {
            crate::output::write_table(&series_path(path), &series_table(&results))?;
        }
    }
    if args.json {
        out.print(&(serde_json::to_string_pretty(&results).context("serializing results")? + "\n"))
    } else if args.wide {
        out.print(&wide_table(&results))
    } else {
        out.print(&table(&results))
    }
}

/// The cache sizes of `results` in order, each with its label: the size as given, and the
/// absolute size beside it when they differ (`1% (489)`).
fn size_labels(results: &[SimResult]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for r in results {
        if !out.iter().any(|(spec, _)| *spec == r.cache_size_spec) {
            let label = if r.cache_size_spec == r.cache_size.to_string() {
                r.cache_size_spec.clone()
            } else {
                format!("{} ({})", r.cache_size_spec, r.cache_size)
            };
            out.push((r.cache_size_spec.clone(), label));
        }
    }
    out
}

/// Miss ratios pivoted: one row per policy, one column per cache size (named as given).
fn wide_rows(results: &[SimResult]) -> Vec<iostack::table::Row> {
    let mut rows: Vec<iostack::table::Row> = Vec::new();
    for r in results {
        let i = match rows.iter().position(|row| row.get("policy").and_then(|v| v.as_str()) == Some(r.policy.as_str())) {
            Some(i) => i,
            None => {
                let mut row = iostack::table::Row::new();
                row.set("policy", r.policy.clone());
                rows.push(row);
                rows.len() - 1
            }
        };
        rows[i].set(r.cache_size_spec.clone(), r.miss_ratio);
    }
    rows
}

/// The miss ratios as policies x cache sizes, with a header line naming the trace.
pub fn wide_table(results: &[SimResult]) -> String {
    let Some(first) = results.first() else { return String::new() };
    let labels = size_labels(results);
    let mut s = format!("trace {} ({}), {} mode, miss ratio by cache size in {}\n", first.trace, first.format, first.mode, first.cache_unit);
    let pw = results.iter().map(|r| r.policy.len()).max().unwrap_or(6).max(6);
    s += &format!("{:<pw$}", "policy");
    for (_, label) in &labels {
        s += &format!("  {:>w$}", label, w = label.len().max(8));
    }
    s += "\n";
    for row in wide_rows(results) {
        s += &format!("{:<pw$}", row.get("policy").and_then(|v| v.as_str()).unwrap_or(""));
        for (spec, label) in &labels {
            let cell = row.get(spec).and_then(|v| v.as_f64()).map(|m| format!("{m:.6}")).unwrap_or_default();
            s += &format!("  {:>w$}", cell, w = label.len().max(8));
        }
        s += "\n";
    }
    s
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
    // Sizes given relative to the footprint (or with a byte unit) are shown as given too.
    let given = results.iter().any(|r| r.cache_size_spec != r.cache_size.to_string());
    let gw = results.iter().map(|r| r.cache_size_spec.len()).max().unwrap_or(0).max(5);
    if let Some(fp) = results.iter().find_map(|r| r.footprint) {
        s += &format!("footprint {fp} {}\n", first.cache_unit);
    }
    s += &format!("{:<pw$}", "policy");
    if given {
        s += &format!("  {:>gw$}", "given");
    }
    s += &format!("  {:>cw$}  {:>10}  {:>10}  {:>11}", size_col, "miss ratio", "byte miss", "hits");
    if block {
        s += &format!("  {:>10}", "block miss");
    }
    s += "\n";
    for r in results {
        s += &format!("{:<pw$}", r.policy);
        if given {
            s += &format!("  {:>gw$}", r.cache_size_spec);
        }
        s += &format!("  {:>cw$}  {:>10.6}  {:>10.6}  {:>11}", r.cache_size, r.miss_ratio, r.byte_miss_ratio, r.hits);
        if let Some(b) = r.block_miss_ratio {
            s += &format!("  {:>10.6}", b);
        }
        s += "\n";
    }
    s + &process_table(results) + &series_text(results)
}

/// The rows of the series table: one per run and interval, led by the run's trace, policy and
/// cache size.
pub fn series_table(results: &[SimResult]) -> Vec<iostack::table::Row> {
    let mut rows = Vec::new();
    for r in results {
        let Some(series) = &r.series else { continue };
        let mut lead = iostack::table::Row::new();
        lead.set("trace", r.trace.clone());
        lead.set("policy", r.policy.clone());
        lead.set("cache_size_spec", r.cache_size_spec.clone());
        lead.set("cache_size", r.cache_size);
        rows.extend(series_rows(&lead, &series.unit, series.width, &series.points));
    }
    rows
}

/// The series as text: one line per interval, the request miss ratio of every run in columns.
fn series_text(results: &[SimResult]) -> String {
    let runs: Vec<&SimResult> = results.iter().filter(|r| r.series.is_some()).collect();
    let Some(first) = runs.first().and_then(|r| r.series.as_ref()) else { return String::new() };
    let heads: Vec<String> = runs.iter().map(|r| format!("{}@{}", r.policy, r.cache_size_spec)).collect();
    let time = first.unit == "ns";
    let mut s = format!(
        "\nmiss ratio per interval of {}:\n{:>14}  {:>11}",
        if time { format!("{} s", first.width as f64 / 1e9) } else { format!("{} requests", first.width) },
        if time { "start (s)" } else { "start" },
        "requests"
    );
    for h in &heads {
        s += &format!("  {:>w$}", h, w = h.len().max(10));
    }
    s += "\n";
    // Every run sees the same intervals (they read the same requests).
    for (i, p) in first.points.iter().enumerate() {
        if time {
            s += &format!("{:>14.3}  {:>11}", p.start as f64 / 1e9, p.requests);
        } else {
            s += &format!("{:>14}  {:>11}", p.start, p.requests);
        }
        for (r, h) in runs.iter().zip(&heads) {
            let m = r.series.as_ref().and_then(|s| s.points.get(i)).map(|p| format!("{:.6}", p.miss_ratio)).unwrap_or_default();
            s += &format!("  {:>w$}", m, w = h.len().max(10));
        }
        s += "\n";
    }
    s
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
        let cap = |t: &str, m: Mode| m.capacity(Size::parse("--cache", t).unwrap(), t);
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
        let src = FailingSource;
        let cfg = SweepConfig::new(Mode::Object { unit_size: true });
        let e = sweep_sizes(&src, &["lru".into(), "nope".into()], &["1%".into()], &cfg, 4096, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("unknown policy `nope`") && e.contains("arc"), "{e}");
        let e = sweep_sizes(&src, &["lru".into()], &["2.5".into()], &cfg, 4096, &mut |_| {}).unwrap_err().to_string();
        assert!(e.contains("--cache") && e.contains("2.5%"), "{e}");
    }

    /// A trace that fails when opened: the checks above must come first.
    struct FailingSource;
    impl TraceSource for FailingSource {
        fn open(&self) -> Result<Box<dyn iostack::trace::TraceReader>, iostack::error::Error> {
            panic!("the trace was opened before the configuration was checked")
        }
        fn name(&self) -> String {
            "failing".into()
        }
        fn format(&self) -> String {
            "none".into()
        }
    }
}
