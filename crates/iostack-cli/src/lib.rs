//! The `iostack` command line, as a library so that the Python package runs the very same code.
//!
//! One module per subcommand under `commands/`, each with an `Args` struct (clap) and a
//! `run(args, &Output) -> anyhow::Result<()>`. Errors are printed as one line on stderr and give
//! exit code 1; usage errors give clap's exit code 2. Nothing here panics on user input.

use clap::{Parser, Subcommand};

mod commands;
pub mod output;

pub use output::Output;
pub use commands::analyze::capture as analyze_capture;
pub use commands::analyze::report_from_argv as analyze_report_from_argv;

#[derive(Parser, Debug)]
#[command(name = "iostack", version, about = "Simulate and measure the storage I/O stack", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Miss-ratio simulation of one or more policies and cache sizes over a trace.
    Sim(commands::sim::Args),
    /// List the replacement policies.
    Policies(commands::policies::Args),
    /// Characterise a trace: footprint, mix, sizes, runs, distances, affinities, LRU MRC.
    Analyze(commands::analyze::Args),
    /// Replay a trace through the timed stack: cache, prefetcher, scheduler, device.
    Run(commands::run::Args),
    /// List the trace formats iostack reads and writes.
    Formats(commands::formats::Args),
    /// Convert a trace to another format (csv, bin, oracle-general).
    Convert(commands::convert::Args),
    /// Generate a synthetic workload (zipf, uniform, ...) as a trace file.
    Gen(commands::gen::Args),
    /// Compare the policies on a generated Zipf workload (a few seconds, no trace needed).
    Demo(commands::demo::Args),
    /// List the device presets and their parameters (--measure for measured figures).
    Devices(commands::devices::Args),
    /// Run a paper reproduction: the paper's figure beside iostack's.
    Repro(commands::repro::Args),
    /// KDSim: train a table disk model, measure the virtual disk's accuracy.
    Kdsim(commands::kdsim::Args),
    /// Run a paper's theoretical model exactly (acfs: prefetching and caching with K and F).
    Model(commands::model::Args),
    /// Write one self-contained HTML report of results (the Python package's command).
    Report(commands::report::Args),
}

/// Runs the command line with `args` (including the program name); returns the exit code.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return e.exit_code();
        }
    };
    let out = Output::stdout();
    let result = match cli.command {
        Command::Sim(a) => commands::sim::run(a, &out),
        Command::Policies(a) => commands::policies::run(a, &out),
        Command::Analyze(a) => commands::analyze::run(a, &out),
        Command::Run(a) => commands::run::run(a, &out),
        Command::Formats(a) => commands::formats::run(a, &out),
        Command::Convert(a) => commands::convert::run(a, &out),
        Command::Gen(a) => commands::gen::run(a, &out),
        Command::Demo(a) => commands::demo::run(a, &out),
        Command::Devices(a) => commands::devices::run(a, &out),
        Command::Repro(a) => commands::repro::run(a, &out),
        Command::Kdsim(a) => commands::kdsim::run(a, &out),
        Command::Model(a) => commands::model::run(a, &out),
        Command::Report(a) => commands::report::run(a),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("iostack: error: {e:#}");
            1
        }
    }
}
