//! `iostack gen GENERATOR`: writes a synthetic workload as a trace file.
//!
//! `iostack gen zipf --alpha 1.0 --objects 1000000 --requests 10000000 --seed 7 -o z.oracleGeneral.bin`.
//! The output format comes from `--format` or the output name (`*.csv`, `*.iostack`/`*.bin`,
//! `*.oracleGeneral.bin`). `iostack gen --list` lists the generators and their parameters.

use std::path::PathBuf;

use anyhow::Context;

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
    /// Output file; `-` streams the trace to standard output (iostack binary unless `--format csv`).
    #[arg(short, long, required_unless_present = "list")]
    pub output: Option<PathBuf>,
    /// Output format (csv, bin, oracle-general); from the output name when omitted.
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    // The common settings are optional so that giving one a generator does not read is an
    // error rather than silently ignored; defaults are those of `workload::Common`.
    /// Number of requests [default: 1000000].
    #[arg(long)]
    pub requests: Option<u64>,
    /// Number of distinct objects [default: 100000].
    #[arg(long)]
    pub objects: Option<u64>,
    /// Bytes per object and per request (object i is at offset i * size) [default: 4096].
    #[arg(long)]
    pub size: Option<String>,
    /// Random seed [default: 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Fraction of writes, in [0, 1] [default: 0].
    #[arg(long)]
    pub write_ratio: Option<f64>,
    /// Number of processes (pids 1..=N) [default: 1].
    #[arg(long)]
    pub processes: Option<u32>,
    /// Group the objects into N files of consecutive objects (0: no files) [default: 0].
    #[arg(long)]
    pub files: Option<u64>,
    /// Arrival process [default: fixed].
    #[arg(long, value_enum)]
    pub arrival: Option<ArrivalArg>,
    /// Inter-arrival time (fixed) or its mean (poisson), e.g. 100us, 1ms [default: 100us].
    #[arg(long)]
    pub interarrival: Option<String>,
    /// Zipf skew exponent.
    #[arg(long)]
    pub alpha: Option<f64>,
    /// A generator parameter key=value (repeatable), e.g. --param scatter=yes.
    #[arg(long = "param", value_name = "KEY=VALUE")]
    pub params: Vec<String>,
    /// Where the acfs-* generators write their hints file [default: OUTPUT.hints.toml].
    #[arg(long, value_name = "PATH")]
    pub hints_out: Option<PathBuf>,
}

fn list(out: &Output) -> anyhow::Result<()> {
    let mut text = String::new();
    for g in GENERATORS {
        text += &format!("{:<12} {}\n", g.name, g.summary);
        for (p, doc) in g.params {
            text += &format!("{:<12}   {p}: {doc}\n", "");
        }
        let common: Vec<String> = g.common.iter().map(|c| format!("--{c}")).collect();
        text += &format!("{:<12}   common options it reads: {}\n", "", common.join(" "));
    }
    out.print(&text)
}

pub fn run(args: Args, out: &Output) -> anyhow::Result<()> {
    if args.list {
        return list(out);
    }
    let (Some(name), Some(output)) = (args.generator.as_deref(), args.output.as_ref()) else {
        anyhow::bail!("give a generator and --output (or --list)");
    };
    let info = workload::generator(name)?;
    let given = [
        ("requests", args.requests.is_some()),
        ("objects", args.objects.is_some()),
        ("size", args.size.is_some()),
        ("seed", args.seed.is_some()),
        ("write-ratio", args.write_ratio.is_some()),
        ("processes", args.processes.is_some()),
        ("files", args.files.is_some()),
        ("arrival", args.arrival.is_some()),
        ("interarrival", args.interarrival.is_some()),
    ];
    if let Some((opt, _)) = given.iter().find(|(opt, g)| *g && !info.common.contains(opt)) {
        let reads: Vec<String> = info.common.iter().map(|c| format!("--{c}")).collect();
        anyhow::bail!("--{opt}: generator `{}` does not use it (it reads {}; its own settings are --param KEY=VALUE, see --list)", info.name, reads.join(" "));
    }
    let d = Common::default();
    let object_size = match args.size.as_deref() {
        None => d.object_size,
        Some(s) => match Size::parse("--size", s)? {
            Size::Count(n) | Size::Bytes(n) => n,
        },
    };
    let gap = parse_duration_ns("--interarrival", args.interarrival.as_deref().unwrap_or("100us"))?;
    let arrival = match args.arrival.unwrap_or(ArrivalArg::Fixed) {
        ArrivalArg::Fixed => Arrival::Fixed { interarrival_ns: gap },
        ArrivalArg::Poisson => Arrival::Poisson { mean_ns: gap as f64 },
    };
    let common = Common {
        requests: args.requests.unwrap_or(d.requests),
        objects: args.objects.unwrap_or(d.objects),
        object_size,
        seed: args.seed.unwrap_or(d.seed),
        write_ratio: args.write_ratio.unwrap_or(d.write_ratio),
        processes: args.processes.unwrap_or(d.processes),
        files: args.files.unwrap_or(d.files),
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
    let start = std::time::Instant::now();
    let acfs = workload::acfs::NAMES.contains(&info.name);
    if args.hints_out.is_some() && !acfs {
        anyhow::bail!("--hints-out: generator `{}` writes no hints (only the acfs-* generators do)", info.name);
    }
    if acfs && args.hints_out.is_none() && write::is_stdout(output) {
        anyhow::bail!("--hints-out: the trace goes to standard output, so name the hints file `{}` writes", info.name);
    }
    let (mut reader, hints) = if acfs {
        // The workload and the hints its application gives, from one generation.
        common.validate()?;
        let mut params = GenParams::new(name, pairs);
        let (reqs, hints) = workload::acfs::generate(info.name, &common, &mut params)?;
        let valid: Vec<&str> = info.params.iter().map(|(n, _)| *n).collect();
        params.finish(&valid)?;
        (Box::new(iostack::trace::VecReader::new(reqs)) as Box<dyn iostack::trace::TraceReader>, Some(hints))
    } else {
        (workload::build(name, &common, GenParams::new(name, pairs))?, None)
    };
    let hints_path = hints.as_ref().map(|_| {
        args.hints_out.clone().unwrap_or_else(|| {
            let mut p = output.clone().into_os_string();
            p.push(".hints.toml");
            PathBuf::from(p)
        })
    });
    // The hints are written whole beside their final name first, and put in place only once
    // the trace is: a failure leaves neither file changed.
    let hints_tmp = hints_path.as_ref().map(|p| p.with_extension("toml.partial"));
    if let (Some(h), Some(tmp), Some(path)) = (&hints, &hints_tmp, &hints_path) {
        std::fs::write(tmp, h.to_toml()).with_context(|| format!("{}: writing the hints", path.display()))?;
    }
    let n = match write::write_atomic(reader.as_mut(), output, format) {
        Ok(n) => n,
        Err(e) => {
            if let Some(tmp) = &hints_tmp {
                let _ = std::fs::remove_file(tmp);
            }
            return Err(e.into());
        }
    };
    if let (Some(tmp), Some(path)) = (&hints_tmp, &hints_path) {
        std::fs::rename(tmp, path).with_context(|| format!("{}: writing the hints", path.display()))?;
    }
    let over = if info.common.contains(&"objects") { format!(" over {} objects", common.objects) } else { String::new() };
    let hints_note = hints_path.map_or(String::new(), |p| format!(", hints -> {}", p.display()));
    let summary = format!("{name}: {n} requests{over} -> {} ({format}){hints_note} in {:.2} s\n", output.display(), start.elapsed().as_secs_f64());
    if write::is_stdout(output) {
        // The trace itself went to standard output.
        eprint!("{summary}");
        Ok(())
    } else {
        out.print(&summary)
    }
}
