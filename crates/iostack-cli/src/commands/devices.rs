//! `iostack devices`: the device presets, their parameters and, on request, measured figures.

use crate::Output;
use iostack::device;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Device specs to show (e.g. `hdd:st3400620as,cache=off`); all presets when none is given.
    pub specs: Vec<String>,
    /// Print JSON: one object per device with its name, summary, parameters (and figures).
    #[arg(long)]
    pub json: bool,
    /// Also measure each device with the fixed, seeded workload of `docs/devices.md` (random 4 KiB
    /// read time, sequential MB/s, time to re-read data the drive has read ahead).
    #[arg(long)]
    pub measure: bool,
}

pub fn run(args: Args, out: &Output) -> anyhow::Result<()> {
    let specs: Vec<(String, &str)> = if args.specs.is_empty() {
        device::PRESETS.iter().map(|p| (p.name.to_string(), p.summary)).collect()
    } else {
        args.specs.iter().map(|s| (s.clone(), device::PRESETS.iter().find(|p| p.name == s).map_or("", |p| p.summary))).collect()
    };
    let mut items = Vec::new();
    for (spec, summary) in &specs {
        let dev = device::build(spec)?;
        let figures = if args.measure { Some(device::figures::measure_spec(spec)?) } else { None };
        items.push((dev.name(), spec.clone(), *summary, dev.parameters(), figures));
    }
    if args.json {
        let v: Vec<_> = items
            .iter()
            .map(|(name, spec, summary, params, figures)| {
                serde_json::json!({"name": name, "spec": spec, "summary": summary, "parameters": params, "figures": figures})
            })
            .collect();
        return out.print(&(serde_json::to_string_pretty(&v)? + "\n"));
    }
    let mut text = String::new();
    for (name, spec, summary, params, figures) in &items {
        text += &format!("{name}  {summary}\n");
        if spec != name {
            text += &format!("  spec: {spec}\n");
        }
        if let Some(o) = params.as_object() {
            for (k, v) in o {
                if k == "model" || k == "preset" {
                    continue;
                }
                let shown = match v {
                    serde_json::Value::String(s) => s.clone(),
                    serde_json::Value::Object(m) => {
                        m.iter().map(|(a, b)| format!("{a}={b}")).collect::<Vec<_>>().join(", ")
                    }
                    other => other.to_string(),
                };
                text += &format!("  {k:<24} {shown}\n");
            }
        }
        if let Some(f) = figures {
            text += &format!(
                "  measured: random 4 KiB read {:.3} ms, sequential read {:.1} MB/s, re-read of read-ahead data {:.3} ms ({:.0}% hits)\n",
                f.random_read_4k_ms,
                f.sequential_read_mbs,
                f.cache_reread_ms,
                100.0 * f.cache_reread_hit_ratio
            );
        }
        text += "\n";
    }
    out.print(&text)
}

#[cfg(test)]
mod tests {
    #[test]
    fn lists_presets_and_rejects_unknown_ones() {
        assert_eq!(crate::run(["iostack", "devices"]), 0);
        assert_eq!(crate::run(["iostack", "devices", "--json", "hdd:wd7200,cache=off"]), 0);
        assert_eq!(crate::run(["iostack", "devices", "hdd:nosuch"]), 1);
        assert_eq!(crate::run(["iostack", "devices", "hdd:wd7200,segments=zero"]), 1);
    }
}
