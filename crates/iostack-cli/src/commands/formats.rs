//! `iostack formats`: the trace formats iostack reads and writes.

use crate::Output;
use iostack::trace::{write::WRITABLE, FORMATS};

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args, out: &Output) -> anyhow::Result<()> {
    let mut text = format!("{:<15} {:<7} {:<6} {}\n", "NAME", "DETECT", "WRITE", "DESCRIPTION");
    for f in FORMATS {
        let detect = if f.detectable { "yes" } else { "no" };
        let write = if WRITABLE.contains(&f.format) { "yes" } else { "no" };
        let aliases = if f.aliases.is_empty() { String::new() } else { format!(" (also: {})", f.aliases.join(", ")) };
        text += &format!("{:<15} {:<7} {:<6} {}{}\n", f.name, detect, write, f.summary, aliases);
    }
    text += "\nCompressed files (.zst, .xz, .gz, .bz2) are read transparently, recognised by their magic bytes.\n";
    text += "Formats marked DETECT are recognised from the content or the file name; give --format otherwise.\n";
    out.print(&text)
}
