//! `iostack repro`: run a paper reproduction and print the paper's figure beside iostack's.
//!
//! `iostack repro --list` lists them; `iostack repro NAME` prints the tables and the checks;
//! `--json` prints the whole report, with the full configuration it was built from. The exit
//! code is 1 when a check disagrees with the paper.

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
}

pub fn run(args: Args, out: &Output) -> anyhow::Result<()> {
    if args.list || args.name.is_none() {
        let mut text = String::new();
        for r in iostack::repro::REPROS {
            text += &format!("{:<16} {}\n", r.name, r.title);
        }
        if args.name.is_none() && !args.list {
            text += "\nusage: iostack repro NAME [--json]\n";
        }
        return out.print(&text);
    }
    let name = args.name.unwrap();
    let info = iostack::repro::find(&name).ok_or_else(|| {
        let names: Vec<&str> = iostack::repro::REPROS.iter().map(|r| r.name).collect();
        anyhow::anyhow!("--name: unknown reproduction `{name}`; valid: {}", names.join(", "))
    })?;
    let report = (info.run)();
    if args.json {
        out.print(&(serde_json::to_string_pretty(&report)? + "\n"))?;
    } else {
        out.print(&report.to_text())?;
    }
    if !report.ok() {
        let n = report.checks.iter().filter(|c| !c.ok).count();
        anyhow::bail!("{}: {n} check(s) differ from the paper", report.name);
    }
    Ok(())
}
