//! `iostack policies`: the replacement policies and what they do.

use crate::Output;

#[derive(clap::Args, Debug)]
pub struct Args {}

pub fn run(_args: Args, out: &Output) -> anyhow::Result<()> {
    let mut text = String::new();
    for p in iostack::cache::POLICIES {
        let aliases = if p.aliases.is_empty() { String::new() } else { format!(" (also {})", p.aliases.join(", ")) };
        text += &format!("{:<12} {}{}\n", p.name, p.summary, aliases);
    }
    out.print(&text)
}
