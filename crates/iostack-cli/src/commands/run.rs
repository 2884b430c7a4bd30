//! `iostack run`: replay a trace through the timed stack (page cache, prefetcher, I/O
//! scheduler, disk-side layers, device) and report I/O time, hits, prefetching, device
//! requests, disk sequence sizes and response times.
//!
//! The stack is a `StackConfig`: defaults, then `--config FILE` (TOML or JSON; a whole `--json`
//! result is accepted too, so any result re-runs exactly), then `--preset` (the keys it sets),
//! then the other flags given. The resolved config is echoed in every result.

use std::path::PathBuf;

use anyhow::Context as _;
use iostack::error::{Error, Location};
use iostack::engine::timed::{self, StackConfig, TimedReport};
use iostack::trace::{CsvMapping, Format, ReaderOptions};

use crate::Output;

#[derive(clap::Args, Debug, Default)]
pub struct Args {
    /// Trace file (format detected from name and content unless --format is given).
    pub trace: PathBuf,
    /// Stack configuration file (TOML or JSON, e.g. the `config` of an earlier --json result);
    /// flags given on the command line override it.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// A named configuration (`acfs-1` .. `acfs-6`: the ACFS paper's six file systems; see
    /// docs/policies.md): sets policy, prefetch, sched, page size, cache, max request and think
    /// time over the config file's; the other flags given override it.
    #[arg(long, value_name = "NAME")]
    pub preset: Option<String>,
    /// Replacement policy spec (`iostack policies`), e.g. `lru`, `arc`.
    #[arg(long)]
    pub policy: Option<String>,
    /// Cache size: `64MiB`, a plain number of blocks of the page size, or a fraction of the
    /// trace's footprint in blocks (`1%`, `0.01`).
    #[arg(long)]
    pub cache: Option<String>,
    /// Block (page) size in bytes.
    #[arg(long)]
    pub page_size: Option<u64>,
    /// Prefetcher: `none`, `obl`, `pm:N`, `pa:N`, `linux[:max=128KiB]`.
    #[arg(long)]
    pub prefetch: Option<String>,
    /// I/O scheduler: `noop`, `cscan`, `sstf`, `deadline`, `batch:B`, `cfq`, `anticipatory` (`as`),
    /// with parameters as `NAME:key=value,...`; any takes `merge=process` and `plug=on`.
    #[arg(long)]
    pub sched: Option<String>,
    /// Device spec, e.g. `hdd:st3400620as`, `ssd:x25m`, `fixed:9.5ms`, for every device id of
    /// the trace; or one device (with its own scheduler) per device id:
    /// `0=hdd:wd7200,1=ssd:x25m`.
    #[arg(long)]
    pub device: Option<String>,
    /// Requests the device holds at once.
    #[arg(long)]
    pub queue_depth: Option<u32>,
    /// Largest request after merging (`512KiB`, or blocks).
    #[arg(long)]
    pub max_request: Option<String>,
    /// `closed` (next request when the previous completed) or `open` (at trace timestamps).
    #[arg(long, value_parser = ["closed", "open"])]
    pub replay: Option<String>,
    /// Closed-loop think time: `none`, `trace` (the trace's gaps) or a duration (`2ms`).
    #[arg(long)]
    pub think: Option<String>,
    /// Blocks cached at the start, outside every count and time: `BLOCKS[@PID]`, BLOCKS a
    /// comma list of `[DEV:]FIRST[-LAST]` block numbers (page-size units, device 0 unless
    /// given), loaded in order as if read by PID (default 0); at most the cache's size.
    #[arg(long)]
    pub preload: Option<String>,
    /// CPUs the processes share for their think time (closed loop): 1 or more; a process
    /// computing waits for a free one, round robin (docs/timed.md, CPUs). Default: a CPU each.
    #[arg(long)]
    pub cpus: Option<u32>,
    /// Round-robin quantum with --cpus (default 100ms, 4.3BSD's).
    #[arg(long)]
    pub cpu_quantum: Option<String>,
    /// Processes: `trace` (the trace's pid), `one`, or `device` (one per device).
    #[arg(long, value_parser = ["trace", "one", "device"])]
    pub processes: Option<String>,
    /// Writes: `back` (buffered, written back later) or `through`.
    #[arg(long, value_parser = ["back", "through"])]
    pub write_policy: Option<String>,
    /// Age at which the flusher writes dirty blocks back (default 30s).
    #[arg(long)]
    pub dirty_expire: Option<String>,
    /// Flusher period (default 5s).
    #[arg(long)]
    pub flush_interval: Option<String>,
    /// File sizes missing from the trace: `infer` (largest extent accessed) or `unknown`.
    #[arg(long, value_parser = ["infer", "unknown"])]
    pub file_sizes: Option<String>,
    #[arg(long)]
    pub seed: Option<u64>,
    /// Trace format (see `iostack formats`); detected when absent.
    #[arg(long)]
    pub format: Option<String>,
    /// Column mapping of a generic CSV trace, e.g. `offset=2,length=3,op=1,time=0`.
    #[arg(long)]
    pub mapping: Option<String>,
    /// Count and skip malformed lines or records instead of stopping at the first.
    #[arg(long)]
    pub skip_invalid: bool,
    /// Write the requests crossing a boundary (`front`, `cache`, `sched`, `device`) to a trace
    /// file (iostack CSV; `.bin` for binary), e.g. `--dump device=dev.csv`. Repeatable.
    #[arg(long, value_name = "LAYER=PATH")]
    pub dump: Vec<String>,
    /// Write every device request's queue, dispatch and completion times (blktrace's Q, D and
    /// C) to PATH as CSV (docs/timed.md, "Latency log"); same as `--dump latency=PATH`.
    #[arg(long, value_name = "PATH")]
    pub latency_log: Option<PathBuf>,
    /// Figures per interval of virtual time (`1h`, `10s`) or of issued requests (`100000req`):
    /// hit and miss ratio, device requests, I/O time and response percentiles (`series` in
    /// --json, a table beside --output as `FILE.series.EXT`).
    #[arg(long, value_name = "WIDTH")]
    pub interval: Option<String>,
    /// REDCAP between the page cache and the scheduler: `on` (512 x 128 KiB segments, 5us per
    /// block copied) or `size=64MiB,segment=128KiB,hit=5us`.
    #[arg(long, value_name = "SPEC")]
    pub redcap: Option<String>,
    /// Application hints for an application-controlled policy (`lrusp`): a TOML hints file
    /// (see docs/policies.md), or `oracle:lookahead=N` (every process knows its next N block
    /// references). Needs `--processes trace`.
    #[arg(long, value_name = "PATH|oracle:lookahead=N")]
    pub hints: Option<String>,
    /// Count cache references, hits and misses per process (`processes` in the result; always
    /// on with an application-controlled policy).
    #[arg(long)]
    pub per_process: bool,
    /// ADA switching REDCAP on and off (needs --redcap): `on` or
    /// `window=1000,cadence=tumbling|sliding[,table=PATH][,blocks=requested|fetched]`.
    #[arg(long, value_name = "SPEC")]
    pub ada: Option<String>,
    /// Choose the I/O scheduler on line between two, in place of --sched: `A,B` (A runs first;
    /// e.g. `anticipatory,deadline`), options `window=1000`, `cadence=tumbling|sliding`,
    /// `table=PATH` (the virtual disk's trained table), `margin=PCT` (how much smaller the other's
    /// sum must be; default 0). KDSim's virtual disk runs the other scheduler on copies of the
    /// requests; after each window of N reads the one with the smaller summed time per block takes
    /// the device. Reported under `sched_select` (docs/devices.md).
    #[arg(long, value_name = "A,B[,window=N,...]")]
    pub sched_select: Option<String>,
    /// Choose the readahead setting on line between two prefetchers, in place of --prefetch:
    /// `A,B,table=PATH` (A runs first; e.g. `pm:32,none`; the table from `iostack kdsim train`),
    /// options `window=1000`, `cadence=tumbling|sliding`, `margin=PCT`, `verify=on|off`. A shadow
    /// page cache plays the other setting on KDSim's virtual disk; after each window of N
    /// application reads the setting with the smaller summed read time takes the page cache.
    /// Reported under `prefetch_select` (docs/devices.md).
    #[arg(long, value_name = "A,B,table=PATH[,window=N,...]")]
    pub prefetch_select: Option<String>,
    /// Measure locality (stack/block distance and affinity) at the four boundaries (the
    /// default; the reports go under `locality` in the result).
    #[arg(long, conflicts_with = "no_locality")]
    pub locality: bool,
    /// Do not measure locality (config `locality = false`): saves the probes' time and memory.
    #[arg(long)]
    pub no_locality: bool,
    /// Also measure locality at the device per disk request (one reference per request, the
    /// unit of Fox et al.'s affinity figures), beside the per-block `device` report, with first
    /// references counted as RULE: `distinct` (Max = distinct requests' starts), `infinite`
    /// (affinity 0), `exclude`, or a fixed Max; reported as `locality.device_per_request`.
    #[arg(long, value_name = "RULE", conflicts_with = "no_locality")]
    pub device_request_locality: Option<String>,
    /// Print the full result as JSON.
    #[arg(long)]
    pub json: bool,
    /// Write PNG plots into DIR; needs the Python package (`pip install iostack`), whose
    /// `iostack` command draws them (docs/plots.md).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
    /// Write the result to FILE as a one-row table of flattened columns (`elapsed_ns`,
    /// `response.p99_ns`, `device.busy_ns`, `config.policy`, ...; see docs/experiments.md); the
    /// format comes from the extension: .csv, .parquet, .json, .jsonl.
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The stack configuration the arguments describe.
pub fn stack_config(args: &Args) -> anyhow::Result<StackConfig> {
    let mut c = match &args.config {
        Some(p) => {
            let text = std::fs::read_to_string(p).with_context(|| format!("reading {}", p.display()))?;
            StackConfig::parse(&text, &p.display().to_string())?
        }
        None => StackConfig::default(),
    };
    if let Some(name) = &args.preset {
        iostack::engine::timed::preset::find("--preset", name)?.apply(&mut c);
    }
    let s = |v: &Option<String>, f: &mut String| {
        if let Some(v) = v {
            *f = v.clone();
        }
    };
    s(&args.policy, &mut c.policy);
    s(&args.cache, &mut c.cache);
    s(&args.prefetch, &mut c.prefetch);
    s(&args.sched, &mut c.sched);
    s(&args.device, &mut c.device);
    s(&args.max_request, &mut c.max_request);
    s(&args.think, &mut c.think);
    s(&args.dirty_expire, &mut c.dirty_expire);
    s(&args.flush_interval, &mut c.flush_interval);
    if args.preload.is_some() {
        c.preload = args.preload.clone();
    }
    if args.cpus.is_some() {
        c.cpus = args.cpus;
    }
    if args.cpu_quantum.is_some() {
        c.cpu_quantum = args.cpu_quantum.clone();
    }
    if let Some(v) = args.page_size {
        c.page_size = v;
    }
    if let Some(v) = args.queue_depth {
        c.queue_depth = v;
    }
    if let Some(v) = args.seed {
        c.seed = v;
    }
    if let Some(v) = &args.replay {
        c.replay = enum_of(v)?;
    }
    if let Some(v) = &args.processes {
        c.processes = enum_of(v)?;
    }
    if let Some(v) = &args.write_policy {
        c.write_policy = enum_of(v)?;
    }
    if let Some(v) = &args.file_sizes {
        c.file_sizes = enum_of(v)?;
    }
    if args.locality {
        c.locality = true;
    }
    if args.no_locality {
        c.locality = false;
    }
    if let Some(v) = &args.redcap {
        c.redcap = Some(v.clone());
    }
    if let Some(v) = &args.hints {
        c.hints = Some(timed::HintsConfig::Spec(v.clone()));
    }
    if args.per_process {
        c.per_process = true;
    }
    if let Some(v) = &args.ada {
        c.ada = Some(v.clone());
    }
    if let Some(v) = &args.sched_select {
        c.sched_select = Some(v.clone());
    }
    if let Some(v) = &args.prefetch_select {
        c.prefetch_select = Some(v.clone());
    }
    if let Some(v) = &args.device_request_locality {
        c.device_request_locality = Some(v.clone());
    }
    if let Some(v) = &args.interval {
        c.interval = Some(v.clone());
    }
    iostack::engine::footprint::check_timed_config(&c)?;
    Ok(c)
}

fn enum_of<T: serde::de::DeserializeOwned>(v: &str) -> anyhow::Result<T> {
    Ok(serde_json::from_value(serde_json::Value::String(v.to_string()))?)
}

/// Runs the stack the arguments describe and returns the result.
pub fn report(args: &Args) -> anyhow::Result<TimedReport> {
    let config = stack_config(args)?;
    let format = args.format.as_deref().map(Format::from_name).transpose()?;
    let csv_mapping = args.mapping.as_deref().map(CsvMapping::parse).transpose()?;
    let options = ReaderOptions { skip_invalid: args.skip_invalid, csv_mapping, ..Default::default() };
    let mut dumps = args.dump.iter().map(|d| timed::Dump::parse(d)).collect::<Result<Vec<_>, _>>()?;
    dumps.extend(args.latency_log.iter().map(timed::Dump::latency));
    // A configuration error names its option and a trace that cannot be opened its file; the
    // rest happened while replaying the trace.
    iostack::engine::footprint::run_timed_file(&config, &args.trace, format, &options, &dumps).map_err(|e| match e {
        Error::Config(c) => anyhow::Error::from(c),
        Error::Trace(t) if t.location == Location::File => anyhow::Error::from(t),
        other => anyhow::Error::from(other).context(format!("replaying {}", args.trace.display())),
    })
}

/// A timed result as one table row: the trace, the cache size in blocks (`cache_size`, with
/// `cache_unit` and the size as given in `cache_size_spec`), then every figure of the report
/// flattened to dotted column names (see `iostack::table::flatten`).
pub fn row(trace: &str, rep: &TimedReport) -> iostack::table::Row {
    let mut row = iostack::table::Row::new();
    row.set("trace", trace);
    row.set("cache_size", rep.resolved.get("cache_blocks").cloned().unwrap_or_default());
    row.set("cache_unit", "blocks");
    row.set("cache_size_spec", rep.config.cache.clone());
    row.extend(iostack::table::flatten(rep, ""));
    row
}

/// The rows of a run's series table: one per interval, led by the trace and the cache size.
pub fn series_rows(trace: &str, rep: &TimedReport, s: &timed::series::TimedSeries) -> Vec<iostack::table::Row> {
    let mut lead = iostack::table::Row::new();
    lead.set("trace", trace);
    lead.set("cache_size_spec", rep.config.cache.clone());
    iostack::engine::series::series_rows(&lead, &s.unit, s.width, &s.points)
}

pub fn run(args: Args, out: &Output) -> anyhow::Result<()> {
    if let Some(dir) = &args.plot {
        return Err(super::report::python_only(&format!("--plot {}", dir.display())));
    }
    crate::output::check_table_path(args.output.as_deref())?;
    let rep = report(&args)?;
    for w in &rep.warnings {
        eprintln!("iostack: warning: {w}");
    }
    for note in &rep.notes {
        eprintln!("iostack: note: {note}");
    }
    if let Some(path) = &args.output {
        let trace = args.trace.display().to_string();
        crate::output::write_table(path, &[row(&trace, &rep)])?;
        if let Some(s) = &rep.series {
            crate::output::write_table(&iostack::engine::series::series_path(path), &series_rows(&trace, &rep, s))?;
        }
    }
    if args.json {
        out.print(&(serde_json::to_string_pretty(&rep)? + "\n"))
    } else {
        out.print(&rep.table())
    }
}
