//! The configuration of a timed stack: what each layer is and its parameters.
//!
//! A [`StackConfig`] is plain data (serde): it is built from command-line flags, a TOML file or
//! JSON (Python dicts), and echoed unchanged in every result, so `--config` accepts the echoed
//! configuration as it is and re-runs it exactly. Components are named by specs
//! (`name:param=value,...`) that their registries parse; sizes and durations are strings with
//! units (`64MiB`, `9.5ms`). Every field has a default, so a file may give only what it changes.

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::units::{parse_duration_ns, Size};

/// Replay discipline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Replay {
    /// A process issues its next request when its previous one completed, plus think time.
    #[default]
    Closed,
    /// Requests are issued at their trace timestamps, whatever the completions.
    Open,
}

/// Which process a request belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Processes {
    /// The trace's pid (0 when the trace has none: one process).
    #[default]
    Trace,
    /// One process issues everything.
    One,
    /// One process per device (volume).
    Device,
}

/// What a write does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum WritePolicy {
    /// Buffered: blocks become dirty and are written on eviction and by the flusher.
    #[default]
    Back,
    /// The write goes to the device at once and the process waits for it.
    Through,
}

/// Where file sizes come from when the trace does not give them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum FileSizes {
    /// The largest extent accessed in each file (and on each device, for requests without a
    /// file) over the whole trace, found by a first pass over it.
    #[default]
    Infer,
    /// Unknown: prefetchers are not cut at the end of a file without a size in the trace.
    Unknown,
}

/// Think time of closed-loop processes between a completion and the next issue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Think {
    None,
    /// The gap between the process's consecutive requests in the trace.
    Trace,
    Fixed(u64),
}

/// A whole timed stack.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StackConfig {
    /// Replacement policy spec (`iostack policies`).
    pub policy: String,
    /// Cache size: `64MiB` (bytes) or a plain number of blocks of `page_size`.
    pub cache: String,
    /// Block (page) size in bytes.
    pub page_size: u64,
    /// Prefetcher spec: `none`, `obl`, `pm:N`, `pa:N`, `linux[:max=128KiB]`.
    pub prefetch: String,
    /// Scheduler spec: `noop`, `cscan`, `sstf`, `deadline[:read_expire=..]`, `batch:B`.
    pub sched: String,
    /// Device spec (`iostack devices`), e.g. `hdd:st3400620as`, `fixed:9.5ms`, for every device
    /// id of the trace; or a map from the trace's device ids to specs, each id with its own
    /// device and scheduler: `0=hdd:wd7200,1=ssd:x25m` (see [`StackConfig::devices`]).
    pub device: String,
    /// Disk-side layers between the scheduler and the device, top first (none yet).
    pub layers: Vec<String>,
    /// Requests the device holds at once (dispatched, not completed).
    pub queue_depth: u32,
    /// Largest request after merging (`512KiB`, or a number of blocks).
    pub max_request: String,
    pub replay: Replay,
    /// Closed-loop think time: `none`, `trace` (the trace's gaps per process) or a duration.
    pub think: String,
    pub processes: Processes,
    pub write_policy: WritePolicy,
    /// Age at which the flusher writes a dirty block back (Linux `dirty_expire_centisecs`).
    pub dirty_expire: String,
    /// Period of the flusher (Linux `dirty_writeback_centisecs`).
    pub flush_interval: String,
    pub file_sizes: FileSizes,
    /// Seed for randomized components (none of the current ones draws random numbers).
    pub seed: u64,
    /// Measure locality (stack and block distance, affinity) of the streams crossing the four
    /// boundaries (front, cache, sched, device), in units of `page_size` (Fox et al. Section 4:
    /// the difference between boundaries is what each component does to locality). On by
    /// default; off saves the probes' time and memory.
    pub locality: bool,
    /// REDCAP between the page cache and the scheduler (`crate::blk::redcap`): `on` (the paper's
    /// 512 × 128 KiB, 5 µs per block copied) or `size=64MiB,segment=128KiB,hit=5us`; absent: none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub redcap: Option<String>,
    /// The preset the config started from (`acfs-1` .. `acfs-6`, see [`super::preset`]): it
    /// set its keys, which the echo shows; keys given beside it override it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<String>,
    /// Application hints for an application-controlled policy (`lrusp`) and the `ca`
    /// prefetcher: a path to a TOML hints file, `oracle:lookahead=N`, or the hints themselves
    /// in the file's layout (`{ process = [...] }`; see docs/policies.md). Needs `processes =
    /// "trace"`. Absent: no hints.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hints: Option<HintsConfig>,
    /// Count cache references, hits and misses per process (under `processes` in the result).
    /// Always on with an application-controlled policy.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub per_process: bool,
    /// ADA switching REDCAP on and off (`crate::blk::ada`; needs `redcap`): `on` or
    /// `window=1000,cadence=tumbling|sliding,table=PATH,blocks=requested|fetched`; absent: REDCAP
    /// always active.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ada: Option<String>,
    /// Choose the scheduler on line between two (`crate::sched::select`):
    /// `A,B[,window=1000][,cadence=tumbling|sliding][,table=PATH]`, A running first, KDSim's
    /// virtual disk playing the other; takes the place of `sched`. Absent: `sched` throughout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sched_select: Option<String>,
    /// Choose the readahead setting on line between two prefetchers (`crate::prefetch::select`):
    /// `A,B,table=PATH[,window=1000][,cadence=tumbling|sliding]...`, A running first, a shadow
    /// page cache on KDSim's virtual disk playing the other; takes the place of `prefetch`.
    /// Absent: `prefetch` throughout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefetch_select: Option<String>,
    /// Also measure locality at the device per disk request (one reference per request, keyed by
    /// its start: the unit of Fox et al.'s affinity figures), beside the per-block `device`
    /// probe, with first references counted as this rule (`distinct`, `infinite`, `exclude` or a
    /// fixed Max); absent: not measured. Needs `locality`. Reported as
    /// `locality.device_per_request`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_request_locality: Option<String>,
    /// Report figures per interval of virtual time (`1h`, `10s`) or of issued requests
    /// (`100000req`) under `series` in the result; absent: no series.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<String>,
    /// Blocks cached when the run starts, with no I/O and outside every count and time:
    /// `BLOCKS[@PID]`, BLOCKS a comma list of `[DEV:]FIRST[-LAST]` block numbers (units of
    /// `page_size`, device 0 unless given), loaded in that order (the last is the most recent)
    /// as if process PID (default 0, the pid of a trace without pids) had read them; at most the
    /// cache's size. Absent: the cache starts empty. See [`StackConfig::preload_blocks`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preload: Option<String>,
    /// CPUs the processes share for their think time (closed loop; see
    /// [`super::cpu`]): 1 to [`MAX_CPUS`]. Absent: every process has a CPU of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    /// The round-robin time quantum with `cpus` (a duration; absent: 4.3BSD's 100 ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_quantum: Option<String>,
}

/// The most CPUs `cpus` takes.
pub const MAX_CPUS: u32 = 4096;

/// The parsed `preload`: device and block of each block, in load order, and the owner's pid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preload {
    pub blocks: Vec<(u32, u64)>,
    pub pid: u32,
}

/// Where a stack's hints come from: a spec (`h.toml`, `oracle:lookahead=N`) or the hints
/// written into the config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum HintsConfig {
    Spec(String),
    Inline(serde_json::Value),
}

impl HintsConfig {
    /// The hints this names (reading the file, checking the layout).
    pub fn load(&self) -> Result<crate::hints::HintsSpec, ConfigError> {
        match self {
            HintsConfig::Spec(s) => crate::hints::HintsSpec::parse(s),
            HintsConfig::Inline(v) => Ok(crate::hints::HintsSpec::File(crate::hints::Hints::parse_json(&v.to_string(), "config `hints`")?)),
        }
    }
}

impl Default for StackConfig {
    fn default() -> Self {
        StackConfig {
            policy: "lru".into(),
            cache: "64MiB".into(),
            page_size: 4096,
            prefetch: "linux".into(),
            sched: "cscan".into(),
            device: "hdd:st3400620as".into(),
            layers: Vec::new(),
            queue_depth: 1,
            max_request: "512KiB".into(),
            replay: Replay::Closed,
            think: "none".into(),
            processes: Processes::Trace,
            write_policy: WritePolicy::Back,
            dirty_expire: "30s".into(),
            flush_interval: "5s".into(),
            file_sizes: FileSizes::Infer,
            seed: 0,
            locality: true,
            redcap: None,
            preset: None,
            hints: None,
            per_process: false,
            ada: None,
            sched_select: None,
            prefetch_select: None,
            device_request_locality: None,
            interval: None,
            preload: None,
            cpus: None,
            cpu_quantum: None,
        }
    }
}

/// The numbers a config resolves to.
#[derive(Debug, Clone, Copy)]
pub struct Resolved {
    pub cache_blocks: u64,
    pub max_request_blocks: u32,
    pub think: Think,
    pub dirty_expire_ns: u64,
    pub flush_interval_ns: u64,
    pub interval: Option<crate::engine::series::Interval>,
    /// `cpus` and the quantum in ns; `None`: a CPU per process.
    pub cpus: Option<(u32, u64)>,
}

/// The 1-based line of `text` (TOML or JSON) where `key` is set, if one is found.
fn line_of_key(text: &str, key: &str) -> Option<usize> {
    text.lines().position(|l| {
        let l = l.trim_start();
        let rest = l.strip_prefix(&format!("\"{key}\"")).or_else(|| l.strip_prefix(key));
        rest.is_some_and(|r| {
            let r = r.trim_start();
            r.starts_with('=') || r.starts_with(':')
        })
    })
    .map(|i| i + 1)
}

impl StackConfig {
    /// Reads a config from TOML or JSON text (JSON if it starts with `{`). A whole echoed result
    /// (with `config` inside) is accepted too, so a result file re-runs as it is.
    pub fn parse(text: &str, origin: &str) -> Result<StackConfig, ConfigError> {
        let t = text.trim_start();
        let value: serde_json::Value = if t.starts_with('{') {
            serde_json::from_str(t).map_err(|e| ConfigError::new(origin, format!("not valid JSON: {e}")))?
        } else {
            let v: toml::Value = toml::from_str(t).map_err(|e| ConfigError::new(origin, format!("not valid TOML: {e}")))?;
            serde_json::to_value(v).map_err(|e| ConfigError::new(origin, e.to_string()))?
        };
        let mut value = match value.get("config") {
            Some(inner) if inner.is_object() => inner.clone(),
            _ => value,
        };
        // A preset sets its keys first; the text's own keys override them.
        if let Some(name) = value.get("preset").filter(|v| !v.is_null()) {
            let at = |msg: String| {
                let line = line_of_key(text, "preset").map(|n| format!(", line {n}")).unwrap_or_default();
                ConfigError::new(format!("{origin}: key `preset`{line}"), msg)
            };
            let name = name.as_str().ok_or_else(|| at(format!("expected a preset name (a string), got {name}")))?;
            let preset = super::preset::find("preset", name).map_err(|e| at(e.message))?;
            let mut base = serde_json::Map::new();
            for (k, v) in preset.settings() {
                base.insert(k.to_string(), v);
            }
            if let Some(obj) = value.as_object() {
                base.extend(obj.clone());
            }
            base.insert("preset".into(), serde_json::Value::from(preset.name));
            value = serde_json::Value::Object(base);
        }
        serde_json::from_value(value.clone()).map_err(|e| {
            // serde names the type that did not fit, not the key: find the key whose value
            // alone fails, and its line in the text.
            if let Some(obj) = value.as_object() {
                for (k, v) in obj {
                    let one = serde_json::Value::Object([(k.clone(), v.clone())].into_iter().collect());
                    if let Err(e) = serde_json::from_value::<StackConfig>(one) {
                        let line = line_of_key(text, k).map(|n| format!(", line {n}")).unwrap_or_default();
                        return ConfigError::new(format!("{origin}: key `{k}`{line}"), e.to_string());
                    }
                }
            }
            ConfigError::new(origin, e.to_string())
        })
    }

    /// The config as TOML.
    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }

    /// The devices `device` names: one spec for every device id (`[(None, spec)]`), or, when
    /// it starts with `ID=`, one per device id: `0=hdd:wd7200,1=ssd:x25m,cache=off` (a comma
    /// followed by `ID=` starts the next device; other commas belong to the spec before, so
    /// device parameters keep their `key=value` form). Ids are listed in the order given.
    pub fn devices(&self) -> Result<Vec<(Option<u32>, String)>, ConfigError> {
        parse_devices(&self.device)
    }

    /// Checks and converts the sizes and durations.
    pub fn resolve(&self) -> Result<Resolved, ConfigError> {
        self.devices()?;
        if self.page_size < 512 || self.page_size % 512 != 0 {
            return Err(ConfigError::new("--page-size", format!("{} is not a positive multiple of 512 bytes", self.page_size)));
        }
        let cache_blocks = Size::parse("--cache", &self.cache)?.in_units(self.page_size);
        if cache_blocks == 0 {
            return Err(ConfigError::new("--cache", format!("`{}` is less than one page of {} bytes", self.cache, self.page_size)));
        }
        let max_request_blocks = Size::parse("--max-request", &self.max_request)?.in_units(self.page_size);
        if max_request_blocks == 0 || max_request_blocks > u32::MAX as u64 {
            return Err(ConfigError::new("--max-request", format!("`{}` must be between one page and 2^32 pages", self.max_request)));
        }
        if self.queue_depth == 0 {
            return Err(ConfigError::new("--queue-depth", "the device queue depth must be at least 1"));
        }
        let think = match self.think.trim() {
            "none" | "0" | "" => Think::None,
            "trace" => Think::Trace,
            d => Think::Fixed(crate::units::parse_per_request_ns("--think", d)?),
        };
        let dirty_expire_ns = parse_duration_ns("--dirty-expire", &self.dirty_expire)?;
        let flush_interval_ns = parse_duration_ns("--flush-interval", &self.flush_interval)?;
        if flush_interval_ns < 1_000_000 {
            return Err(ConfigError::new("--flush-interval", "the flusher interval must be at least 1ms (it wakes every interval)"));
        }
        let interval = self.interval.as_deref().map(|t| crate::engine::series::Interval::parse("--interval", t)).transpose()?;
        if let Some(p) = self.preload_blocks()? {
            if p.blocks.len() as u64 > cache_blocks {
                return Err(ConfigError::new(
                    "--preload",
                    format!("{} blocks do not fit in the cache of {cache_blocks} blocks", p.blocks.len()),
                ));
            }
        }
        let cpus = self.resolve_cpus()?;
        Ok(Resolved { cache_blocks, max_request_blocks: max_request_blocks as u32, think, dirty_expire_ns, flush_interval_ns, interval, cpus })
    }

    /// `cpus` and `cpu_quantum`, checked.
    fn resolve_cpus(&self) -> Result<Option<(u32, u64)>, ConfigError> {
        let Some(n) = self.cpus else {
            return match &self.cpu_quantum {
                Some(_) => Err(ConfigError::new("--cpu-quantum", "is the quantum of processes sharing CPUs: give --cpus too")),
                None => Ok(None),
            };
        };
        if n == 0 || n > MAX_CPUS {
            return Err(ConfigError::new("--cpus", format!("{n} is out of range: give 1 to {MAX_CPUS} CPUs (omit it for a CPU per process)")));
        }
        if self.replay != Replay::Closed {
            return Err(ConfigError::new("--cpus", "processes share CPUs for their think time, which only closed-loop replay has: open-loop replay issues at the trace's times"));
        }
        let quantum = match &self.cpu_quantum {
            None => super::cpu::QUANTUM_NS,
            Some(q) => {
                let ns = parse_duration_ns("--cpu-quantum", q)?;
                if ns == 0 {
                    return Err(ConfigError::new("--cpu-quantum", format!("`{q}`: the quantum must be longer than 0")));
                }
                ns
            }
        };
        Ok(Some((n, quantum)))
    }
}

impl StackConfig {
    /// The blocks `preload` names, checked: numbers, ranges (FIRST ≤ LAST), no block twice.
    pub fn preload_blocks(&self) -> Result<Option<Preload>, ConfigError> {
        let Some(spec) = self.preload.as_deref() else { return Ok(None) };
        let bad = |m: String| ConfigError::new("--preload", m);
        let (list, pid) = match spec.rsplit_once('@') {
            Some((l, p)) => (l, p.trim().parse::<u32>().map_err(|_| bad(format!("pid `{}` in `{spec}` is not a number", p.trim())))?),
            None => (spec, 0),
        };
        let mut blocks = Vec::new();
        let mut seen = rustc_hash::FxHashSet::default();
        for part in list.split(',') {
            let part = part.trim();
            if part.is_empty() {
                return Err(bad(format!("empty entry in `{spec}`: expected [DEV:]FIRST[-LAST] block numbers")));
            }
            let (dev, range) = match part.split_once(':') {
                Some((d, r)) => (d.trim().parse::<u32>().map_err(|_| bad(format!("device `{d}` in `{part}` is not a number")))?, r),
                None => (0, part),
            };
            let num = |t: &str| t.trim().parse::<u64>().map_err(|_| bad(format!("block `{}` in `{part}` is not a number", t.trim())));
            let (first, last) = match range.split_once('-') {
                Some((a, b)) => (num(a)?, num(b)?),
                None => (num(range)?, num(range)?),
            };
            if first > last {
                return Err(bad(format!("range `{part}` ends before it starts")));
            }
            if last >= crate::trace::devices::BLOCK_LIMIT {
                return Err(bad(format!("block {last} in `{part}` is beyond the largest block number")));
            }
            if last - first >= 1 << 32 {
                return Err(bad(format!("range `{part}` is larger than any cache")));
            }
            for b in first..=last {
                if !seen.insert((dev, b)) {
                    return Err(bad(format!("block {b} of device {dev} is named twice")));
                }
                blocks.push((dev, b));
            }
        }
        Ok(Some(Preload { blocks, pid }))
    }
}

/// `ID=` at the start of `part`: the id.
fn device_id(part: &str) -> Option<&str> {
    let (id, _) = part.split_once('=')?;
    let id = id.trim();
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())).then_some(id)
}

fn parse_devices(spec: &str) -> Result<Vec<(Option<u32>, String)>, ConfigError> {
    let spec = spec.trim();
    if device_id(spec).is_none() {
        return Ok(vec![(None, spec.to_string())]);
    }
    let mut out: Vec<(Option<u32>, String)> = Vec::new();
    for part in spec.split(',') {
        match device_id(part) {
            Some(id) => {
                let n: u32 = id.parse().map_err(|_| ConfigError::new("--device", format!("device id `{id}` is not a number below 2^32")))?;
                if out.iter().any(|(i, _)| *i == Some(n)) {
                    return Err(ConfigError::new("--device", format!("device id {n} is given twice in `{spec}`")));
                }
                let (_, rest) = part.split_once('=').expect("an id");
                out.push((Some(n), rest.trim().to_string()));
            }
            None => {
                let (_, last) = out.last_mut().expect("the spec starts with an id");
                last.push(',');
                last.push_str(part.trim());
            }
        }
    }
    if let Some((id, _)) = out.iter().find(|(_, s)| s.is_empty()) {
        return Err(ConfigError::new("--device", format!("device id {} has no device spec in `{spec}`", id.unwrap_or(0))));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_device_maps() {
        let d = |s: &str| parse_devices(s);
        assert_eq!(d("hdd:wd7200").unwrap(), [(None, "hdd:wd7200".to_string())]);
        assert_eq!(d("hdd:st3400620as,cache=off,segments=16").unwrap(), [(None, "hdd:st3400620as,cache=off,segments=16".to_string())]);
        assert_eq!(
            d("0=hdd:wd7200,cache=off, 1=ssd:x25m").unwrap(),
            [(Some(0), "hdd:wd7200,cache=off".to_string()), (Some(1), "ssd:x25m".to_string())]
        );
        assert_eq!(d("7=fixed:1ms").unwrap(), [(Some(7), "fixed:1ms".to_string())]);
        assert!(d("0=hdd:wd7200,0=ssd:x25m").unwrap_err().to_string().contains("device id 0 is given twice"));
        assert!(d("0=,1=ssd:x25m").unwrap_err().to_string().contains("device id 0 has no device spec"));
        assert!(d("99999999999=ssd:x25m").unwrap_err().to_string().contains("--device"));
    }

    #[test]
    fn round_trips_through_toml_and_json() {
        let mut c = StackConfig::default();
        c.cache = "8".into();
        c.prefetch = "pm:4".into();
        let toml = c.to_toml();
        assert_eq!(StackConfig::parse(&toml, "t").unwrap(), c);
        let json = serde_json::to_string(&serde_json::json!({ "config": c })).unwrap();
        assert_eq!(StackConfig::parse(&json, "j").unwrap(), c);
        assert_eq!(StackConfig::parse("policy = \"arc\"", "t").unwrap().policy, "arc");
        assert!(StackConfig::parse("polcy = \"arc\"", "t").unwrap_err().to_string().contains("polcy"));
    }

    #[test]
    fn type_errors_name_the_key_and_line() {
        let e = StackConfig::parse("policy = \"lru\"\nqueue_depth = \"4\"\n", "c.toml").unwrap_err().to_string();
        assert!(e.starts_with("c.toml: key `queue_depth`, line 2: invalid type: string \"4\", expected u32"), "{e}");
        let e = StackConfig::parse("{\n  \"policy\": \"lru\",\n  \"queue_depth\": 99999999999\n}", "c.json").unwrap_err().to_string();
        assert!(e.starts_with("c.json: key `queue_depth`, line 3:"), "{e}");
        let e = StackConfig::parse("{\"config\": {\"locality\": \"no\"}}", "r.json").unwrap_err().to_string();
        assert!(e.contains("key `locality`") && e.contains("expected a boolean"), "{e}");
    }

    #[test]
    fn resolves_units() {
        let mut c = StackConfig::default();
        assert_eq!(c.resolve().unwrap().cache_blocks, 16384);
        c.cache = "8".into();
        assert_eq!(c.resolve().unwrap().cache_blocks, 8);
        c.think = "2ms".into();
        assert_eq!(c.resolve().unwrap().think, Think::Fixed(2_000_000));
        c.cache = "100B".into();
        assert!(c.resolve().is_err());
    }
}
