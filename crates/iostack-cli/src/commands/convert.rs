//! `iostack convert IN OUT`: rewrites a trace in another format.
//!
//! The output format comes from `--to` or the output name (`*.csv`, `*.iostack`/`*.bin`,
//! `*.oracleGeneral.bin`). The output is written to a temporary file and renamed at the end, so a
//! failure leaves no partial output; the input is never written.

use std::path::PathBuf;

use crate::Output;
use iostack::trace::{self, BlkparseEvent, CsvMapping, Format, ReaderOptions};

#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum EventArg {
    /// Queued (as issued by the file system).
    Q,
    /// Dispatched to the driver.
    D,
    /// Completed.
    C,
}

impl From<EventArg> for BlkparseEvent {
    fn from(e: EventArg) -> BlkparseEvent {
        match e {
            EventArg::Q => BlkparseEvent::Queue,
            EventArg::D => BlkparseEvent::Dispatch,
            EventArg::C => BlkparseEvent::Complete,
        }
    }
}

/// The format called `name`, errors naming `option`.
pub fn named_format(option: &str, name: &str) -> Result<Format, iostack::ConfigError> {
    Format::from_name(name).map_err(|mut e| {
        e.option = option.to_string();
        e
    })
}

/// Options shared by commands that read a trace.
#[derive(clap::Args, Debug, Clone)]
pub struct ReadArgs {
    /// Input format (see `iostack formats`); detected when omitted.
    #[arg(long = "from", alias = "format", value_name = "FORMAT")]
    pub from: Option<String>,
    /// Skip malformed lines or records (counted) instead of stopping at the first one.
    #[arg(long)]
    pub skip_invalid: bool,
    /// blkparse: which event is the request stream.
    #[arg(long, value_enum, default_value = "q")]
    pub blkparse_event: EventArg,
    /// generic-csv column mapping, e.g. `offset=4,length=5,op=3,time=0,time_unit=100ns`.
    #[arg(long, value_name = "MAPPING")]
    pub mapping: Option<String>,
}

impl ReadArgs {
    /// The input format (None: detect) and reader options.
    pub fn options(&self) -> anyhow::Result<(Option<Format>, ReaderOptions)> {
        let mut format = self.from.as_deref().map(|n| named_format("--from", n)).transpose()?;
        let csv_mapping = self.mapping.as_deref().map(CsvMapping::parse).transpose()?;
        if csv_mapping.is_some() && format.is_none() {
            format = Some(Format::GenericCsv);
        }
        if csv_mapping.is_some() && format != Some(Format::GenericCsv) {
            anyhow::bail!("--mapping: a column mapping applies to --from generic-csv only");
        }
        Ok((format, ReaderOptions { skip_invalid: self.skip_invalid, blkparse_event: self.blkparse_event.into(), csv_mapping }))
    }
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Input trace.
    pub input: PathBuf,
    /// Output file.
    pub output: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Output format: csv, bin or oracle-general; from the output name when omitted.
    #[arg(long = "to", value_name = "FORMAT")]
    pub to: Option<String>,
}

pub fn run(args: Args, out: &Output) -> anyhow::Result<()> {
    let (from, options) = args.read.options()?;
    let to = args.to.as_deref().map(|n| named_format("--to", n)).transpose()?;
    let start = std::time::Instant::now();
    let stats = trace::write::convert(&args.input, from, &options, &args.output, to)?;
    let secs = start.elapsed().as_secs_f64();
    let mut line = format!(
        "{} ({}) -> {} ({}): {} requests in {:.2} s",
        args.input.display(),
        stats.input_format,
        args.output.display(),
        stats.output_format,
        stats.requests,
        secs
    );
    if options.skip_invalid {
        line += &format!(", {} malformed lines or records skipped", stats.skipped);
    }
    line.push('\n');
    out.print(&line)
}
