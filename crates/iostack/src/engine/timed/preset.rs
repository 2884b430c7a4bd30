//! Named stack presets: the six file system configurations of the ACFS paper (Cao, Felten,
//! Karlin and Li, ACM TOCS, papers/002, §5.2, l.881-911; `specs/acfs.md` §1.7).
//!
//! A preset sets a group of [`StackConfig`] keys at once; the echoed config shows every key it
//! set, together with `preset`, so a result still re-runs exactly. Keys given explicitly beside
//! a preset override it: in a config file, the file's own keys override the file's `preset`; on
//! the command line (and in Python), `--preset` overrides the config file's keys, and every
//! other flag (keyword) overrides the preset.
//!
//! Every ACFS preset runs the paper's machine: 8 KiB blocks (l.209), a 6.4 MiB cache (the Ultrix
//! default, a tenth of the memory, in binary megabytes as memory is sized: 819 blocks; the
//! paper's other size is 12 MB, `--cache 12MiB`), one device request per block (the
//! Ultrix 4.3 buffer cache reads and writes one block at a time), an FCFS driver (`noop`: the
//! Ultrix driver, l.729-737), and closed-loop processes whose think time is the trace's gap
//! between a process's requests (the CPU time between file accesses). They differ in policy and
//! prefetcher:
//!
//! | preset | paper | policy | prefetch |
//! |---|---|---|---|
//! | `acfs-1` | global LRU with one-block lookahead | `lru` | `obl:seq` |
//! | `acfs-2` | + application prefetching | `lrusp:calls=off` | `ca:b=1` |
//! | `acfs-3` | + scheduling | `lrusp:calls=off` | `ca:b=16` |
//! | `acfs-4` | AC caching | `lrusp` | `obl:seq` |
//! | `acfs-5` | AC caching + prefetching | `lrusp` | `ca:b=1` |
//! | `acfs-6` | all three | `lrusp` | `ca:b=16` |
//!
//! Configurations 2 and 3 keep LRU-SP allocation but use LRU for every application's blocks
//! (l.898-901): `lrusp:calls=off` ignores the caching calls of the hints while `ca` follows
//! their prefetch lists. Scheduling is the prototype's (l.729-737): the prefetcher sends each
//! batch of at most B prefetches sorted by block number to the FCFS driver, and B = 1 is no
//! scheduling (l.1002-1003); `--sched batch:16` sorts demand requests with them, as the design
//! of §2.2 says. Processes without a prefetch list keep one-block lookahead under `ca` (J6).
//! Configurations 2 to 6 take their applications' hints from `--hints`.

use serde_json::{json, Value};

use super::StackConfig;
use crate::error::ConfigError;

/// One preset: its name, what it is, and the config keys it sets.
#[derive(Debug)]
pub struct Preset {
    pub name: &'static str,
    pub summary: &'static str,
    pub policy: &'static str,
    pub prefetch: &'static str,
    pub sched: &'static str,
}

/// The keys every ACFS preset sets besides policy, prefetch and sched, with their values.
fn machine() -> [(&'static str, Value); 4] {
    [("page_size", json!(8192)), ("cache", json!("6.4MiB")), ("max_request", json!("8KiB")), ("think", json!("trace"))]
}

/// Every preset.
pub const PRESETS: &[Preset] = &[
    Preset { name: "acfs-1", summary: "ACFS configuration 1: global LRU with Ultrix one-block lookahead", policy: "lru", prefetch: "obl:seq", sched: "noop" },
    Preset { name: "acfs-2", summary: "ACFS configuration 2: + application prefetching (LRU for every application)", policy: "lrusp:calls=off", prefetch: "ca:b=1", sched: "noop" },
    Preset { name: "acfs-3", summary: "ACFS configuration 3: + scheduling (sorted batches of 16 prefetches)", policy: "lrusp:calls=off", prefetch: "ca:b=16", sched: "noop" },
    Preset { name: "acfs-4", summary: "ACFS configuration 4: application-controlled caching (LRU-SP)", policy: "lrusp", prefetch: "obl:seq", sched: "noop" },
    Preset { name: "acfs-5", summary: "ACFS configuration 5: AC caching + controlled-aggressive prefetching", policy: "lrusp", prefetch: "ca:b=1", sched: "noop" },
    Preset { name: "acfs-6", summary: "ACFS configuration 6: AC caching + prefetching + scheduling", policy: "lrusp", prefetch: "ca:b=16", sched: "noop" },
];

/// The names of the presets.
pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

/// Looks a preset up by name (case-insensitive); `option` names where it was given.
pub fn find(option: &str, name: &str) -> Result<&'static Preset, ConfigError> {
    PRESETS.iter().find(|p| p.name.eq_ignore_ascii_case(name.trim())).ok_or_else(|| ConfigError::unknown(option, "preset", name, &names()))
}

impl Preset {
    /// The config keys the preset sets, with their values (as in a config file).
    pub fn settings(&self) -> Vec<(&'static str, Value)> {
        let mut s = vec![("policy", json!(self.policy)), ("prefetch", json!(self.prefetch)), ("sched", json!(self.sched))];
        s.extend(machine());
        s
    }

    /// Sets the preset's keys in `c`, and `c.preset` to its name.
    pub fn apply(&self, c: &mut StackConfig) {
        let mut v = serde_json::to_value(&*c).expect("a config serializes");
        let obj = v.as_object_mut().expect("a config is an object");
        for (k, val) in self.settings() {
            obj.insert(k.to_string(), val);
        }
        obj.insert("preset".into(), json!(self.name));
        *c = serde_json::from_value(v).expect("a preset's settings are valid config values");
    }

    /// The paper's configuration number (1 to 6).
    pub fn number(&self) -> usize {
        PRESETS.iter().position(|p| p.name == self.name).expect("a listed preset") + 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_set_their_keys_and_name_themselves() {
        for p in PRESETS {
            let mut c = StackConfig::default();
            p.apply(&mut c);
            assert_eq!((c.policy.as_str(), c.prefetch.as_str(), c.sched.as_str()), (p.policy, p.prefetch, p.sched));
            assert_eq!((c.page_size, c.cache.as_str(), c.max_request.as_str(), c.think.as_str()), (8192, "6.4MiB", "8KiB", "trace"));
            assert_eq!(c.preset.as_deref(), Some(p.name));
            assert_eq!(c.resolve().unwrap().cache_blocks, 819);
        }
        assert_eq!(find("--preset", "ACFS-6").unwrap().number(), 6);
        let e = find("--preset", "acfs-7").unwrap_err().to_string();
        assert!(e.contains("--preset") && e.contains("acfs-7") && e.contains("acfs-1"), "{e}");
    }

    #[test]
    fn a_files_own_keys_override_its_preset_and_the_echo_reruns() {
        let c = StackConfig::parse("preset = \"acfs-4\"\ncache = \"12MB\"\npolicy = \"lrusp:swap=off\"\n", "c.toml").unwrap();
        assert_eq!((c.policy.as_str(), c.prefetch.as_str(), c.cache.as_str(), c.page_size), ("lrusp:swap=off", "obl:seq", "12MB", 8192));
        let echoed = serde_json::to_string(&serde_json::json!({ "config": c })).unwrap();
        assert_eq!(StackConfig::parse(&echoed, "r.json").unwrap(), c);
        assert_eq!(StackConfig::parse(&c.to_toml(), "t").unwrap(), c);
        let e = StackConfig::parse("policy = \"lru\"\npreset = \"acfs-9\"\n", "c.toml").unwrap_err().to_string();
        assert!(e.starts_with("c.toml: key `preset`, line 2") && e.contains("acfs-9"), "{e}");
        // Without a preset nothing changes and nothing is echoed.
        assert!(!StackConfig::default().to_toml().contains("preset"));
    }
}
