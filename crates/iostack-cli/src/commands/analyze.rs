//! `iostack analyze`: characterise a trace without simulating anything.
//!
//! Footprint, read/write mix, request sizes, sequential runs, reuse and stack distances, stack
//! and block affinity (Fox, Lojpur and Wang, Section 3), the LRU miss-ratio curve of every cache
//! size from one pass (Mattson's stack algorithm) and the working set over time; see
//! `iostack::metrics::workload`. A table by default, `--json` for the full report.
//!
//! `--plot DIR` draws PNG plots with matplotlib, so it is handled by the Python entry point
//! (`python/iostack/cli.py`), which runs this same command through [`capture`] to get the report
//! and then plots it. The Rust-only binary says so instead of silently skipping the plots.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Context as _;
use iostack::metrics::workload::{miss_ratio_curve, CurveReport};
use iostack::metrics::{analyze, AnalysisConfig, AnalysisReport, FirstReference, Granularity, IntervalSpec, MrcSampling, SamplingReport};
use iostack::trace::{self, CsvMapping, Format, ReaderOptions};
use iostack::units::Size;

use crate::Output;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Trace file, or `-` for standard input (format detected from name and content unless
    /// --format is given; compressed files are read transparently).
    pub trace: PathBuf,
    /// Trace format (see `iostack formats`); detected when absent.
    #[arg(long)]
    pub format: Option<String>,
    /// Column mapping of a generic CSV trace, e.g. `offset=2,length=3,op=1,time=0`.
    #[arg(long)]
    pub mapping: Option<String>,
    /// Count and skip malformed lines or records instead of stopping at the first.
    #[arg(long)]
    pub skip_invalid: bool,
    /// `block`: requests split into pages of --page-size; `object`: one object per request keyed
    /// by its offset, as `iostack sim --mode object --unit-size`; `file`: whole files.
    #[arg(long, default_value = "block", value_parser = ["block", "object", "file"])]
    pub mode: String,
    /// Block granularity in block mode: `512`, `4KiB`, `64KiB`, `sector`, `block`.
    #[arg(long, default_value = "4096")]
    pub page_size: String,
    /// Accepted for symmetry with `iostack sim`: object mode always counts one unit per object.
    #[arg(long)]
    pub unit_size: bool,
    /// Stack distance of a first reference: `distinct` (Max = distinct keys of the trace), a
    /// fixed Max, `infinite` (affinity 0), or `exclude` to leave first references out.
    #[arg(long, default_value = "distinct")]
    pub first_reference: String,
    /// Intervals of the series over time: `auto`, a duration (`10s`, `3600s`) or `N` requests
    /// (`100000req`).
    #[arg(long, default_value = "auto")]
    pub interval: String,
    /// Cache sizes for the miss-ratio curve, comma separated: counts of units (`1000,5000`) or
    /// byte sizes converted with the page size (`64MiB,1GiB`). Default: powers of two up to the
    /// size where only first references miss.
    #[arg(long, value_delimiter = ',')]
    pub mrc_sizes: Option<Vec<String>>,
    /// Estimate the miss-ratio curve from a spatially hashed sample of the units (SHARDS):
    /// `RATE` or `rate=RATE` samples that fraction of the keys (0 < RATE <= 1; `1` is the exact
    /// curve), `size=KEYS` at most KEYS keys, lowering the rate as the footprint grows (constant
    /// memory); `,seed=N` draws another sample (default 0). The report says how it sampled.
    #[arg(long, value_name = "SPEC")]
    pub mrc_sampling: Option<String>,
    /// Compute the miss-ratio curve alone (exact, or sampled with --mrc-sampling), without the
    /// other metrics, so that its time and memory are the curve's own.
    #[arg(long)]
    pub mrc_only: bool,
    /// Print the full report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write the summary figures to FILE as a one-row table (flattened column names such as
    /// `footprint_units`, `stack_affinity.mean`; the curves and series are in --json); the format
    /// comes from the extension: .csv, .parquet, .json, .jsonl.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Write PNG plots (MRC, affinity over time, distance histograms) into DIR; needs the
    /// Python package (`pip install iostack`).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

/// The analysis configuration and reader options the arguments describe.
pub fn config(args: &Args) -> anyhow::Result<(AnalysisConfig, Option<Format>, ReaderOptions)> {
    let unit = match args.mode.as_str() {
        "block" => match Granularity::parse("--page-size", &args.page_size)? {
            Granularity::Bytes(p) => p,
            _ => anyhow::bail!("--page-size: `{}` is not a size in bytes", args.page_size),
        },
        _ => 1,
    };
    let granularity = match args.mode.as_str() {
        "block" => Granularity::Bytes(unit),
        "object" => Granularity::Object,
        _ => Granularity::File,
    };
    let first_reference: FirstReference = args.first_reference.parse().map_err(|e: String| anyhow::anyhow!("--first-reference: {e}"))?;
    let interval = IntervalSpec::parse("--interval", &args.interval)?;
    let mrc_sizes = match &args.mrc_sizes {
        None => None,
        Some(list) => {
            let mut v = Vec::with_capacity(list.len());
            for s in list {
                let size = match Size::parse("--mrc-sizes", s)? {
                    Size::Bytes(_) if args.mode != "block" => anyhow::bail!("--mrc-sizes: `{s}` is a byte size; in {} mode give counts of objects", args.mode),
                    sz => sz.in_units(unit),
                };
                if size == 0 {
                    anyhow::bail!("--mrc-sizes: `{s}` is smaller than one unit");
                }
                v.push(size);
            }
            Some(v)
        }
    };
    let mrc_sampling = args.mrc_sampling.as_deref().map(|s| MrcSampling::parse("--mrc-sampling", s)).transpose()?;
    if args.mrc_only {
        if let Some(dir) = &args.plot {
            anyhow::bail!("--plot {}: the plots need the full analysis, not --mrc-only", dir.display());
        }
    }
    let format = args.format.as_deref().map(Format::from_name).transpose()?;
    let csv_mapping = args.mapping.as_deref().map(CsvMapping::parse).transpose()?;
    let options = ReaderOptions { skip_invalid: args.skip_invalid, csv_mapping, ..Default::default() };
    Ok((AnalysisConfig { granularity, first_reference, interval, mrc_sizes, mrc_sampling }, format, options))
}

/// The full analysis, or the curve alone (`--mrc-only`).
#[derive(Debug, Clone, serde::Serialize)]
#[serde(untagged)]
pub enum Report {
    Full(Box<AnalysisReport>),
    Curve(CurveReport),
}

/// Runs the analysis the arguments describe.
pub fn report(args: &Args) -> anyhow::Result<Report> {
    let (cfg, format, options) = config(args)?;
    let mut reader = trace::open(&args.trace, format, &options)?;
    let context = || format!("analysing {}", args.trace.display());
    Ok(if args.mrc_only {
        Report::Curve(miss_ratio_curve(&mut *reader, cfg).with_context(context)?)
    } else {
        Report::Full(Box::new(analyze(&mut *reader, cfg).with_context(context)?))
    })
}

pub fn run(args: Args, out: &Output) -> anyhow::Result<()> {
    if let Some(dir) = &args.plot {
        return Err(super::report::python_only(&format!("--plot {}", dir.display())));
    }
    crate::output::check_table_path(args.output.as_deref())?;
    let rep = report(&args)?;
    print_report(&rep, &args, out)
}

/// Writes the `--output` table, then prints the report.
fn print_report(rep: &Report, args: &Args, out: &Output) -> anyhow::Result<()> {
    if let Some(path) = &args.output {
        let row = match rep {
            Report::Full(r) => iostack::table::flatten(r, ""),
            Report::Curve(r) => iostack::table::flatten(r, ""),
        };
        crate::output::write_table(path, &[row])?;
    }
    if args.json {
        out.print(&(serde_json::to_string_pretty(rep)? + "\n"))
    } else {
        out.print(&match rep {
            Report::Full(r) => table(r),
            Report::Curve(r) => curve_table(r),
        })
    }
}

#[derive(clap::Parser, Debug)]
#[command(name = "iostack analyze")]
struct Standalone {
    #[command(flatten)]
    args: Args,
}

/// `argv` (`iostack analyze TRACE ...`, program name first) without the subcommand name.
fn parse_argv(argv: &[String]) -> Result<Args, clap::Error> {
    use clap::Parser as _;
    let rest: Vec<String> = argv.iter().take(1).cloned().chain(argv.iter().skip(2).cloned()).collect();
    Standalone::try_parse_from(rest).map(|s| s.args)
}

/// The analysis of `iostack analyze ...` (`argv` with the program name first) as a report, or
/// the error message the command would print. `--plot` is accepted and ignored (the caller
/// plots); nothing is printed.
pub fn report_from_argv(argv: Vec<String>) -> Result<Report, String> {
    let args = parse_argv(&argv).map_err(|e| e.render().to_string())?;
    report(&args).map_err(|e| format!("{e:#}"))
}

/// Runs `iostack analyze ...` (`argv` with the program name first) as the command line does,
/// printing its table or JSON, but accepting `--plot DIR`, and returns the exit code and the
/// report as JSON for the caller to plot (the Python entry point).
pub fn capture(argv: Vec<String>) -> (i32, Option<String>) {
    let args = match parse_argv(&argv) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return (e.exit_code(), None);
        }
    };
    let out = Output::stdout();
    let result = crate::output::check_table_path(args.output.as_deref()).and_then(|_| report(&args)).and_then(|rep| {
        print_report(&rep, &args, &out)?;
        Ok(serde_json::to_string(&rep)?)
    });
    match result {
        Ok(json) => (0, Some(json)),
        Err(e) => {
            eprintln!("iostack: error: {e:#}");
            (1, None)
        }
    }
}

/// The heading of the miss-ratio curve: exact, or how it was sampled.
fn curve_title(sampling: Option<&SamplingReport>) -> String {
    match sampling {
        None => "LRU miss ratio (one pass, Mattson's stack algorithm)".to_string(),
        Some(s) => {
            let how = match (s.requested_rate, s.max_keys) {
                (Some(r), _) => format!("fixed rate {r}"),
                (_, Some(k)) => format!("fixed size {k} keys, final rate {:.6}", s.rate),
                _ => String::new(),
            };
            format!(
                "LRU miss ratio (estimated, SHARDS {how}, seed {}: {} of {} references and {} keys sampled)",
                s.seed, s.sampled_references, s.references, s.sampled_keys
            )
        }
    }
}

/// The report of `--mrc-only`.
pub fn curve_table(r: &CurveReport) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "trace          {}", r.trace);
    let unit = match r.page_size {
        Some(p) => format!("{p}-byte blocks"),
        None => format!("{}s", r.mode),
    };
    let _ = writeln!(s, "mode           {} ({unit})", r.mode);
    let _ = writeln!(s, "requests       {}{}", r.requests, if r.skipped_invalid > 0 { format!(" ({} malformed skipped)", r.skipped_invalid) } else { String::new() });
    let _ = writeln!(s, "references     {}", r.references);
    let _ = writeln!(s);
    let _ = writeln!(s, "{}", curve_title(r.mrc_sampling.as_ref()));
    let _ = writeln!(s, "  {:>14} {:>14} {:>12}", format!("cache {}", if r.page_size.is_some() { "blocks".to_string() } else { format!("{}s", r.mode) }), "cache bytes", "miss ratio");
    for p in &r.mrc {
        let b = r.page_size.map(|ps| bytes(p.cache_size.saturating_mul(ps))).unwrap_or_else(|| "-".into());
        let _ = writeln!(s, "  {:>14} {:>14} {:>12}", p.cache_size, b, format!("{:.4}", p.miss_ratio));
    }
    s
}

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1}%", v * 100.0)).unwrap_or_else(|| "-".into())
}

fn num(x: Option<f64>) -> String {
    match x {
        None => "-".into(),
        Some(v) if v.fract() == 0.0 && v.abs() < 1e15 => format!("{}", v as i64),
        Some(v) => format!("{v:.2}"),
    }
}

fn bytes(b: u64) -> String {
    const U: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = b as f64;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < U.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", U[i])
    }
}

fn range(lo: u64, hi: u64) -> String {
    if hi == lo + 1 {
        format!("{lo}")
    } else {
        format!("{lo}-{}", hi - 1)
    }
}

/// The human-readable report.
pub fn table(r: &AnalysisReport) -> String {
    let mut s = String::new();
    let l = &r.locality;
    let unit = match r.page_size {
        Some(p) => format!("{p}-byte blocks"),
        None => format!("{}s", r.mode),
    };
    let _ = writeln!(s, "trace          {}", r.trace);
    let _ = writeln!(s, "mode           {} ({unit})", r.mode);
    let _ = writeln!(s, "requests       {}{}", r.requests, if r.skipped_invalid > 0 { format!(" ({} malformed skipped)", r.skipped_invalid) } else { String::new() });
    if let (Some(a), Some(b)) = (r.first_time_ns, r.last_time_ns) {
        let _ = writeln!(s, "duration       {:.3} s", (b - a) as f64 / 1e9);
    }
    let _ = writeln!(s, "devices        {}", r.devices);
    let _ = writeln!(s, "reads          {} ({}), {}", r.ops.reads, pct(r.ops.read_fraction), bytes(r.ops.read_bytes));
    let _ = writeln!(s, "writes         {} ({}), {}", r.ops.writes, pct(r.ops.read_fraction.map(|f| 1.0 - f)), bytes(r.ops.write_bytes));
    let _ = writeln!(s, "read bytes     {} of bytes requested", pct(r.ops.read_byte_fraction));
    let _ = writeln!(
        s,
        "footprint      {} {unit}{}",
        r.footprint_units,
        r.footprint_bytes.map(|b| format!(" = {}", bytes(b))).unwrap_or_default()
    );
    let sz = &r.request_size;
    let _ = writeln!(s, "request size   mean {}, median {}, min {}, max {} bytes", num(sz.mean), num(sz.median), num(sz.min.map(|v| v as f64)), num(sz.max.map(|v| v as f64)));
    let q = &r.sequential;
    let _ = writeln!(
        s,
        "sequential     {} of requests continue the previous one; {} runs, mean {} requests ({}), longest {}",
        pct(q.sequential_fraction),
        q.runs,
        num(q.mean_run_requests),
        q.mean_run_bytes.map(|b| bytes(b as u64)).unwrap_or_else(|| "-".into()),
        q.longest_run_requests
    );
    let c = &r.characterisation;
    let pop = &c.popularity;
    let _ = writeln!(
        s,
        "popularity     Zipf alpha {} (r2 {}, log-log fit over {} ranks); most popular unit {} references",
        pop.zipf_alpha.map(|a| format!("{a:.3}")).unwrap_or_else(|| "-".into()),
        pop.zipf_r2.map(|a| format!("{a:.3}")).unwrap_or_else(|| "-".into()),
        pop.fit_points,
        pop.max_count
    );
    let _ = writeln!(s, "one-hit wonders {} of {} units ({})", pop.one_hit_wonders, pop.distinct_units, pct(pop.one_hit_wonder_ratio));
    let secs = |x: Option<f64>| x.map(|v| format!("{:.6} s", v / 1e9)).unwrap_or_else(|| "-".into());
    let _ = writeln!(s, "inter-arrival  mean {}, median {}", secs(c.inter_arrival.mean_ns), secs(c.inter_arrival.median_ns));
    let _ = writeln!(s, "reuse time     mean {}, median {} ({} reuses)", secs(c.reuse_time.mean_ns), secs(c.reuse_time.median_ns), c.reuse_time.count);
    let rates: Vec<f64> = c.over_time.points.iter().filter_map(|p| p.request_rate).collect();
    if !rates.is_empty() {
        let peak = rates.iter().cloned().fold(0.0, f64::max);
        let dur = r.last_time_ns.zip(r.first_time_ns).map(|(b, a)| (b - a) as f64 / 1e9).unwrap_or(0.0);
        let mean = if dur > 0.0 { format!("{:.1}", r.requests as f64 / dur) } else { "-".into() };
        let _ = writeln!(s, "request rate   mean {mean}/s, peak {peak:.1}/s (intervals of {:.3} s)", c.over_time.width as f64 / 1e9);
    }
    let _ = writeln!(s, "processes      {}", c.processes.len());
    for p in c.processes.iter().take(8) {
        let _ = writeln!(
            s,
            "  pid {:<10} {:>10} requests, {} reads ({}), {} writes ({}), sequential {}",
            p.pid.map_or("others".to_string(), |v| v.to_string()),
            p.requests,
            p.reads,
            bytes(p.read_bytes),
            p.writes,
            bytes(p.write_bytes),
            pct(p.sequential_fraction)
        );
    }
    if c.processes.len() > 8 {
        let _ = writeln!(s, "  ... {} more (--json for all)", c.processes.len() - 8);
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "locality (Fox, Lojpur and Wang)    mean     median");
    let aff = |x: Option<f64>| x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into());
    let _ = writeln!(s, "  stack affinity (temporal)        {:<8} {}", aff(r.stack_affinity.mean), aff(r.stack_affinity.median));
    let _ = writeln!(s, "  block affinity (spatial)         {:<8} {}", aff(r.block_affinity.mean), aff(r.block_affinity.median));
    let _ = writeln!(s, "  stack distance                   {:<8} {}", num(l.stack_distance.mean), num(l.stack_distance.median));
    let _ = writeln!(s, "  block distance                   {:<8} {}", num(l.block_distance.mean), num(l.block_distance.median));
    let _ = writeln!(s, "  reuse distance                   {:<8} {}", num(l.reuse_distance.mean), num(l.reuse_distance.median));
    let fr = match l.stack_distance.first_reference_max {
        Some(iostack::metrics::stack_distance::INFINITE_DISTANCE) => "counted at an infinite distance".into(),
        Some(m) => format!("counted at Max = {m}"),
        None => "left out".into(),
    };
    let _ = writeln!(s, "  first references                 {} ({fr})", l.stack_distance.first_references);
    let _ = writeln!(s);
    let _ = writeln!(s, "distance histograms (references per log2 bucket)");
    let _ = writeln!(s, "  {:<22} {:>12} {:>12} {:>12}", "distance", "stack", "block", "reuse");
    let max_bucket = [&l.stack_distance, &l.block_distance, &l.reuse_distance].iter().flat_map(|d| d.histogram.iter().map(|b| b.lo)).max();
    if let Some(maxlo) = max_bucket {
        let count = |h: &[iostack::metrics::affinity::Bucket], lo: u64| h.iter().find(|b| b.lo == lo).map(|b| b.count).unwrap_or(0);
        let mut k = 0usize;
        loop {
            let (lo, hi) = iostack::metrics::affinity::log2_bucket_bounds(k);
            if lo > maxlo {
                break;
            }
            let _ = writeln!(
                s,
                "  {:<22} {:>12} {:>12} {:>12}",
                range(lo, hi),
                count(&l.stack_distance.histogram, lo),
                count(&l.block_distance.histogram, lo),
                count(&l.reuse_distance.histogram, lo)
            );
            k += 1;
            if k > 64 {
                break;
            }
        }
    }
    let _ = writeln!(s, "  {:<22} {:>12} {:>12} {:>12}", "first reference", l.stack_distance.first_references, 0, l.reuse_distance.first_references);
    let _ = writeln!(s);
    let _ = writeln!(s, "{}", curve_title(r.mrc_sampling.as_ref()));
    match &r.mrc_requests {
        Some(req) => {
            let _ = writeln!(s, "  {:>14} {:>14} {:>12} {:>14}", "cache blocks", "cache bytes", "block miss", "request miss");
            for (p, q) in r.mrc.iter().zip(req) {
                let _ = writeln!(s, "  {:>14} {:>14} {:>12} {:>14}", p.cache_size, bytes(p.cache_size * r.page_size.unwrap_or(1)), format!("{:.4}", p.miss_ratio), format!("{:.4}", q.miss_ratio));
            }
        }
        None if r.page_size.is_some() => {
            let _ = writeln!(s, "  {:>14} {:>14} {:>12}", "cache blocks", "cache bytes", "block miss");
            for p in &r.mrc {
                let _ = writeln!(s, "  {:>14} {:>14} {:>12}", p.cache_size, bytes(p.cache_size * r.page_size.unwrap_or(1)), format!("{:.4}", p.miss_ratio));
            }
        }
        None => {
            let _ = writeln!(s, "  {:>14} {:>12}", format!("cache {}s", r.mode), "miss ratio");
            for p in &r.mrc {
                let _ = writeln!(s, "  {:>14} {:>12}", p.cache_size, format!("{:.4}", p.miss_ratio));
            }
        }
    }
    let pts = &l.series.points;
    if !pts.is_empty() {
        let _ = writeln!(s);
        let unit = if l.series.unit == "ns" { "s" } else { "requests" };
        let _ = writeln!(s, "over time ({} intervals of {} {unit}; up to 10 shown, --json for all)", pts.len(), if l.series.unit == "ns" { format!("{:.3}", l.series.width as f64 / 1e9) } else { l.series.width.to_string() });
        let _ = writeln!(s, "  {:>14} {:>10} {:>12} {:>10} {:>10}", "start", "requests", "working set", "stack aff", "block aff");
        let step = pts.len().div_ceil(10);
        for p in pts.iter().step_by(step) {
            let start = if l.series.unit == "ns" { format!("{:.3}", p.start as f64 / 1e9) } else { p.start.to_string() };
            let f = |x: Option<f64>| x.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into());
            let _ = writeln!(s, "  {:>14} {:>10} {:>12} {:>10} {:>10}", start, p.requests, p.working_set, f(p.stack_affinity), f(p.block_affinity));
        }
    }
    s
}
