//! `iostack gen GENERATOR`: writes a synthetic workload as a trace file.
//!
//! `iostack gen zipf --alpha 1.0 --objects 1000000 --requests 10000000 --seed 7 -o z.oracleGeneral.bin`.
//! The output format comes from `--format` or the output name (`*.csv`, `*.iostack`/`*.bin`,
//! `*.oracleGeneral.bin`). `iostack gen --list` lists the generators and their parameters.

use std::path::PathBuf;

use crate::Output;
use iostack::trace::write;
use iostack::units::{parse_duration_ns, Size};
use iostack::workload::{self, Arrival, Common, GenParams, GENERATORS};

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum ArrivalArg {
    /// Request k at k * interarrival.
    Fixed,
    /// Exponential gaps of mean interarrival.
    Poisson,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Generator (see --list).
    #[arg(required_unless_present = "list")]
    pub generator: Option<String>,
    /// List the generators and their parameters.
    #[arg(long)]
    pub list: bool,
    /// Output file.
    #[arg(short, long, required_unless_present = "list")]
    pub output: Option<PathBuf>,
    /// Output format (csv, bin, oracle-general); from the output name when omitted.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Number of requests.
    #[arg(long, default_value_t = 1_000_000)]
    pub requests: u64,
    /// Number of distinct objects.
    #[arg(long, default_value_t = 100_000)]
    pub objects: u64,
    /// Bytes per object and per request (object i is at offset i * size).
    #[arg(long, default_value = "4096")]
    pub size: String,
    /// Random seed.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Fraction of writes, in [0, 1].
    #[arg(long, default_value_t = 0.0)]
    pub write_ratio: f64,
    /// Number of processes (pids 1..=N).
    #[arg(long, default_value_t = 1)]
    pub processes: u32,
    /// Group the objects into N files of consecutive objects (0: no files).
    #[arg(long, default_value_t = 0)]
    pub files: u64,
    /// Arrival process.
    #[arg(long, value_enum, default_value = "fixed")]
    pub arrival: ArrivalArg,
    /// Inter-arrival time (fixed) or its mean (poisson), e.g. 100us, 1ms.
    #[arg(long, default_value = "100us")]
    pub interarrival: String,
    /// Zipf skew exponent.
    #[arg(long)]
    pub alpha: Option<f64>,
    /// A generator parameter key=value (repeatable), e.g. --param scatter=yes.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
}

fn list(out: &Output) -> anyhow::Result<()> {
    let mut text = String::new();
    for g in GENERATORS {
        text += &format!("{:<10} {}\n", g.name, g.summary);
        for (p, doc) in g.params {
            text += &format!("{:<10}   {p}: {doc}\n", "");
        }
    }
    text += "\nCommon options: --requests --objects --size --seed --write-ratio --processes --files --arrival --interarrival\n";
    out.print(&text)
}

pub fn run(args: Args, out: &Output) -> anyhow::Result<()> {
    if args.list {
        return list(out);
    }
    let (Some(name), Some(output)) = (args.generator.as_deref(), args.output.as_ref()) else {
        anyhow::bail!("give a generator and --output (or --list)");
    };
    let object_size = match Size::parse("--size", &args.size)? {
        Size::Count(n) | Size::Bytes(n) => n,
    };
    let gap = parse_duration_ns("--interarrival", &args.interarrival)?;
    let arrival = match args.arrival {
        ArrivalArg::Fixed => Arrival::Fixed { interarrival_ns: gap },
        ArrivalArg::Poisson => Arrival::Poisson { mean_ns: gap as f64 },
    };
    let common = Common {
        requests: args.requests,
        objects: args.objects,
        object_size,
        seed: args.seed,
        write_ratio: args.write_ratio,
        processes: args.processes,
        files: args.files,
        arrival,
    };
    let mut pairs = Vec::new();
    if let Some(a) = args.alpha {
        pairs.push(("alpha".to_string(), a.to_string()));
    }
    for kv in &args.params {
        let (k, v) = kv.split_once('=').ok_or_else(|| anyhow::anyhow!("--param: `{kv}` is not key=value"))?;
        pairs.push((k.trim().to_string(), v.trim().to_string()));
    }
    let format = args.format.as_deref().map(|n| super::convert::named_format("--format", n)).transpose()?;
    let format = write::output_format(output, format)?;
    let mut reader = workload::build(name, &common, GenParams::new(name, pairs))?;
    let start = std::time::Instant::now();
    let n = write::write_atomic(&mut reader, output, format)?;
    out.print(&format!(
        "{name}: {n} requests over {} objects -> {} ({format}) in {:.2} s\n",
        common.objects,
        output.display(),
        start.elapsed().as_secs_f64()
    ))
}
