//! `iostack repro`: run a paper reproduction and print the paper's figure beside iostack's.
//!
//! `iostack repro --list` lists them; `iostack repro NAME` prints the tables, every check (the
//! paper's value, iostack's, the tolerance it was judged by) and the verdict; `--json` prints the
//! whole report, with the full configuration it was built from. The exit code is 1 exactly when
//! a check disagrees with the paper. Long reproductions show a progress bar on stderr when it is
//! a terminal. `--plot DIR` draws the paper's figures with matplotlib: the Python package's
//! `iostack` command does it (through [`capture`]); this binary says so.

use std::io::IsTerminal as _;
use std::path::PathBuf;

use crate::Output;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Reproduction to run (see --list).
    pub name: Option<String>,
    /// List the reproductions.
    #[arg(long)]
    pub list: bool,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Draw the reproduction's figures (PNG, paper's values overlaid) into DIR; needs the
    /// Python package's `iostack` command (matplotlib).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,
}

fn list(args: &Args, out: &Output) -> anyhow::Result<()> {
    let mut text = String::new();
    for r in iostack::repro::REPROS {
        text += &format!("{:<18} {}\n", r.name, r.title);
    }
    if args.name.is_none() && !args.list {
        text += "\nusage: iostack repro NAME [--json] [--plot DIR]\n";
    }
    out.print(&text)
}

/// Runs the named reproduction, with a progress bar on stderr when it is a terminal.
pub fn report(name: &str) -> anyhow::Result<iostack::repro::Report> {
    let info = iostack::repro::find(name).ok_or_else(|| {
        let names: Vec<&str> = iostack::repro::REPROS.iter().map(|r| r.name).collect();
        anyhow::anyhow!("NAME: unknown reproduction `{name}`; valid: {}", names.join(", "))
    })?;
    if info.quick || !std::io::stderr().is_terminal() {
        return Ok((info.run)(&iostack::repro::Progress::none()));
    }
    let bar = indicatif::ProgressBar::new(0);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} runs, {elapsed} ({msg})")
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.set_prefix(info.name);
    let hook = |done: u64, total: u64, what: &str| {
        bar.set_length(total);
        bar.set_position(done);
        bar.set_message(what.to_string());
    };
    let report = (info.run)(&iostack::repro::Progress::new(&hook));
    bar.finish_and_clear();
    Ok(report)
}

fn print(report: &iostack::repro::Report, json: bool, out: &Output) -> anyhow::Result<()> {
    if json {
        out.print(&(serde_json::to_string_pretty(report)? + "\n"))
    } else {
        out.print(&report.to_text())
    }
}

fn verdict(report: &iostack::repro::Report) -> anyhow::Result<()> {
    if !report.ok() {
        let n = report.checks.iter().filter(|c| !c.ok).count();
        anyhow::bail!("{}: {n} of {} check(s) differ from the paper", report.name, report.checks.len());
    }
    Ok(())
}

pub fn run(args: Args, out: &Output) -> anyhow::Result<()> {
    let Some(name) = args.name.as_deref().filter(|_| !args.list) else { return list(&args, out) };
    if let Some(dir) = &args.plot {
        anyhow::bail!(
            "--plot {}: figures are drawn with matplotlib by the Python package; install it (`pip install iostack`) and run its `iostack` command, or use --json and plot the report's `figures` yourself",
            dir.display()
        );
    }
    let report = report(name)?;
    print(&report, args.json, out)?;
    verdict(&report)
}

#[derive(clap::Parser, Debug)]
#[command(name = "iostack repro")]
struct Standalone {
    #[command(flatten)]
    args: Args,
}

/// Runs `iostack repro NAME ...` (`argv` with the program name first) as the command line does,
/// printing its tables or JSON, but accepting `--plot DIR`, and returns the exit code and the
/// report as JSON for the caller to plot (the Python entry point). The exit code is the
/// command's: 1 when a check differs (the report is still returned, to be plotted).
pub fn capture(argv: Vec<String>) -> (i32, Option<String>) {
    use clap::Parser as _;
    let rest: Vec<String> = argv.iter().take(1).cloned().chain(argv.iter().skip(2).cloned()).collect();
    let args = match Standalone::try_parse_from(rest) {
        Ok(s) => s.args,
        Err(e) => {
            let _ = e.print();
            return (e.exit_code(), None);
        }
    };
    let out = Output::stdout();
    let Some(name) = args.name.as_deref().filter(|_| !args.list) else {
        return match list(&args, &out) {
            Ok(()) => (0, None),
            Err(e) => {
                eprintln!("iostack: error: {e:#}");
                (1, None)
            }
        };
    };
    let report = match report(name).and_then(|r| print(&r, args.json, &out).map(|_| r)) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("iostack: error: {e:#}");
            return (1, None);
        }
    };
    let json = serde_json::to_string(&report).ok();
    match verdict(&report) {
        Ok(()) => (0, json),
        Err(e) => {
            eprintln!("iostack: error: {e:#}");
            (1, json)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iostack::repro::{Check, Report};

    fn report(oks: &[bool]) -> Report {
        Report {
            name: "t".into(),
            title: String::new(),
            source: String::new(),
            config: serde_json::Value::Null,
            tables: Vec::new(),
            checks: oks.iter().map(|&ok| Check::new("c", "1", "2", "exact", ok)).collect(),
            notes: Vec::new(),
            figures: Vec::new(),
        }
    }

    /// The command fails exactly when a check differs.
    #[test]
    fn verdict_fails_exactly_when_a_check_differs() {
        assert!(verdict(&report(&[])).is_ok());
        assert!(verdict(&report(&[true, true])).is_ok());
        let e = verdict(&report(&[true, false, false])).unwrap_err().to_string();
        assert!(e.contains("2 of 3"), "{e}");
        assert!(report(&[false]).to_text().contains("DIFFERS (1 of 1 checks differ)"));
    }
}
