//! Application hints: what ACFS's applications tell the kernel about their own caching and
//! future accesses (Cao et al., papers/002, §4.1: five caching calls and two prefetch calls).
//!
//! A hints file is TOML, one `[[process]]` table per managing process:
//!
//! ```toml
//! [[process]]
//! pid = 1
//! policy = "mru"                 # policy of priority level 0 (lru or mru)
//! files = { 7 = 1, 8 = 1 }       # file id -> long-term priority (set_priority)
//! levels = { 1 = "mru" }         # priority level -> policy (set_policy)
//! temp = [ { at = 100, file = 7, first = 0, last = 15, prio = -1 } ]   # set_temppri before
//!                                # the process's request number `at` (0-based)
//! file_list = [7, 8, 9]          # files read whole, in order (FileList)
//! block_list = [[7, 0, 15], [9, 4, 4]]   # [file, first block, last block] chunks (BlockList)
//! ```
//!
//! A process with no table is oblivious. Priorities are signed (lower is replaced first, default
//! 0); blocks are counted in the cache's blocks (the page size in block mode). The prefetch
//! lists together hold at most [`MAX_LIST_ENTRIES`] entries per process, the paper's accessList
//! limit (l.698-700). [`Hints::validate`] checks a file against the trace it is used with:
//! every pid and file must appear in it.
//!
//! [`HintsSpec::Oracle`] is an ideal application instead of a file: every process knows its own
//! next `lookahead` references and gives each cached block the temporary priority that
//! expresses optimal replacement within that window (minus the position of its next reference,
//! l.562-565; blocks not referenced within the window lowest of all).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::cache::{CacheControl, LevelPolicy};
use crate::error::ConfigError;

/// Most entries (files and block chunks) a process's prefetch lists may hold (l.698-700).
pub const MAX_LIST_ENTRIES: usize = 5000;

/// A temporary priority set at a position of the process's request stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TempHint {
    /// The process's request number (0-based) before which the call is made.
    pub at: u64,
    pub file: u64,
    pub first: u64,
    pub last: u64,
    pub prio: i32,
}

/// One managing process's hints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessHints {
    pub pid: u32,
    /// Policy of priority level 0.
    pub policy: LevelPolicy,
    /// Long-term priorities of files.
    #[serde(default)]
    pub files: BTreeMap<u64, i32>,
    /// Policies of other priority levels.
    #[serde(default)]
    pub levels: BTreeMap<i32, LevelPolicy>,
    #[serde(default)]
    pub temp: Vec<TempHint>,
    /// Files read whole, in order.
    #[serde(default)]
    pub file_list: Vec<u64>,
    /// (file, first block, last block) chunks, in order.
    #[serde(default)]
    pub block_list: Vec<(u64, u64, u64)>,
}

impl ProcessHints {
    /// The caching calls the process makes at its start, in order: its level policies, then its
    /// files' priorities.
    pub fn initial_controls(&self) -> Vec<CacheControl> {
        let pid = self.pid;
        let mut out = vec![CacheControl::SetPolicy { pid, prio: 0, policy: self.policy }];
        out.extend(self.levels.iter().map(|(&prio, &policy)| CacheControl::SetPolicy { pid, prio, policy }));
        out.extend(self.files.iter().map(|(&file, &prio)| CacheControl::SetPriority { pid, file, prio }));
        out
    }
}

/// The hints of every managing process, from one source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hints {
    /// Where they came from (a path, or `python`), for messages.
    pub source: String,
    pub processes: Vec<ProcessHints>,
}

/// Where a run's hints come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HintsSpec {
    File(Hints),
    /// Every process knows its next `lookahead` references.
    Oracle { lookahead: u64 },
}

impl HintsSpec {
    /// `oracle:lookahead=N`, or a path to a TOML hints file.
    pub fn parse(arg: &str) -> Result<HintsSpec, ConfigError> {
        if let Some(rest) = arg.strip_prefix("oracle") {
            let rest = rest.strip_prefix(':').unwrap_or(rest);
            let n = rest
                .strip_prefix("lookahead=")
                .ok_or_else(|| ConfigError::new("--hints", format!("`{arg}`: expected oracle:lookahead=N")))?;
            let lookahead = n
                .parse::<u64>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| ConfigError::new("--hints", format!("`{arg}`: lookahead `{n}` is not a whole number of at least 1")))?;
            return Ok(HintsSpec::Oracle { lookahead });
        }
        Ok(HintsSpec::File(Hints::load(Path::new(arg))?))
    }
}

/// The raw TOML layout: map keys are strings in TOML, converted and checked after parsing so
/// that errors name the entry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    process: Vec<RawProcess>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProcess {
    pid: i64,
    policy: String,
    #[serde(default)]
    files: BTreeMap<String, i64>,
    #[serde(default)]
    levels: BTreeMap<String, String>,
    #[serde(default)]
    temp: Vec<TempHint>,
    #[serde(default)]
    file_list: Vec<u64>,
    #[serde(default)]
    block_list: Vec<Vec<i64>>,
}

fn err(source: &str, msg: impl std::fmt::Display) -> ConfigError {
    ConfigError::new("--hints", format!("{source}: {msg}"))
}

fn prio(source: &str, at: &str, v: i64) -> Result<i32, ConfigError> {
    i32::try_from(v).map_err(|_| err(source, format!("{at}: priority {v} is out of range")))
}

fn level_policy(source: &str, at: &str, p: &str) -> Result<LevelPolicy, ConfigError> {
    LevelPolicy::parse(p).ok_or_else(|| err(source, format!("{at}: policy `{p}` is not lru or mru")))
}

impl Hints {
    /// Reads a TOML hints file.
    pub fn load(path: &Path) -> Result<Hints, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| err(&path.display().to_string(), e))?;
        Hints::parse_toml(&text, &path.display().to_string())
    }

    /// Parses TOML hints; `source` names them in errors.
    pub fn parse_toml(text: &str, source: &str) -> Result<Hints, ConfigError> {
        let raw: RawFile = toml::from_str(text).map_err(|e| err(source, e.to_string().trim_end()))?;
        Hints::from_raw(raw, source)
    }

    /// Parses hints in the TOML file's layout written as JSON (`{"process": [{"pid": 1, ...}]}`,
    /// map keys as strings), as the Python API passes them.
    pub fn parse_json(text: &str, source: &str) -> Result<Hints, ConfigError> {
        let raw: RawFile = serde_json::from_str(text).map_err(|e| err(source, e))?;
        Hints::from_raw(raw, source)
    }

    fn from_raw(raw: RawFile, source: &str) -> Result<Hints, ConfigError> {
        let mut processes: Vec<ProcessHints> = Vec::new();
        for (i, p) in raw.process.into_iter().enumerate() {
            let at = format!("[[process]] {} (pid {})", i + 1, p.pid);
            let pid = u32::try_from(p.pid).map_err(|_| err(source, format!("{at}: pid {} is out of range", p.pid)))?;
            if processes.iter().any(|q| q.pid == pid) {
                return Err(err(source, format!("{at}: pid {pid} has a table already")));
            }
            let policy = level_policy(source, &format!("{at}: policy"), &p.policy)?;
            let mut files = BTreeMap::new();
            for (k, v) in &p.files {
                let f = k.parse::<u64>().map_err(|_| err(source, format!("{at}: files: `{k}` is not a file id")))?;
                files.insert(f, prio(source, &format!("{at}: files.{k}"), *v)?);
            }
            let mut levels = BTreeMap::new();
            for (k, v) in &p.levels {
                let l = k.parse::<i32>().map_err(|_| err(source, format!("{at}: levels: `{k}` is not a priority level")))?;
                levels.insert(l, level_policy(source, &format!("{at}: levels.{k}"), v)?);
            }
            for (j, t) in p.temp.iter().enumerate() {
                if t.first > t.last {
                    return Err(err(source, format!("{at}: temp[{j}]: first block {} is after last block {}", t.first, t.last)));
                }
            }
            let mut block_list = Vec::with_capacity(p.block_list.len());
            for (j, c) in p.block_list.iter().enumerate() {
                let here = format!("{at}: block_list[{j}]");
                let &[f, a, b] = c.as_slice() else {
                    return Err(err(source, format!("{here}: expected [file, first_block, last_block], got {} numbers", c.len())));
                };
                if f < 0 || a < 0 || b < 0 {
                    return Err(err(source, format!("{here}: negative number in {c:?}")));
                }
                if a > b {
                    return Err(err(source, format!("{here}: first block {a} is after last block {b}")));
                }
                block_list.push((f as u64, a as u64, b as u64));
            }
            let entries = p.file_list.len() + block_list.len();
            if entries > MAX_LIST_ENTRIES {
                return Err(err(
                    source,
                    format!("{at}: the prefetch lists hold {entries} entries, more than the limit of {MAX_LIST_ENTRIES}"),
                ));
            }
            processes.push(ProcessHints { pid, policy, files, levels, temp: p.temp, file_list: p.file_list, block_list });
        }
        Ok(Hints { source: source.to_string(), processes })
    }

    /// Checks the hints against the trace they are used with: every pid, and every file they
    /// name, must appear in it (as a request's process, and as a file of a request).
    pub fn validate(&self, facts: &TraceFacts) -> Result<(), ConfigError> {
        for (i, p) in self.processes.iter().enumerate() {
            let at = format!("[[process]] {} (pid {})", i + 1, p.pid);
            if !facts.pids.contains_key(&p.pid) {
                return Err(err(&self.source, format!("{at}: pid {} makes no request in the trace", p.pid)));
            }
            let named = p
                .files
                .keys()
                .map(|&f| (f, "files".to_string()))
                .chain(p.temp.iter().enumerate().map(|(j, t)| (t.file, format!("temp[{j}]"))))
                .chain(p.file_list.iter().enumerate().map(|(j, &f)| (f, format!("file_list[{j}]"))))
                .chain(p.block_list.iter().enumerate().map(|(j, c)| (c.0, format!("block_list[{j}]"))));
            for (f, what) in named {
                if !facts.files.contains(&f) {
                    return Err(err(&self.source, format!("{at}: {what}: file {f} appears in no request of the trace")));
                }
            }
        }
        Ok(())
    }
}

/// What hints are checked against: the processes and files of a trace.
#[derive(Debug, Clone, Default)]
pub struct TraceFacts {
    /// Requests per process.
    pub pids: BTreeMap<u32, u64>,
    pub files: rustc_hash::FxHashSet<u64>,
}

impl TraceFacts {
    pub fn add(&mut self, r: &crate::trace::Request) {
        *self.pids.entry(r.pid).or_default() += 1;
        if let Some(f) = r.file {
            self.files.insert(f.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"
[[process]]
pid = 1
policy = "mru"
files = { 7 = 1, 8 = -2 }
levels = { 1 = "lru" }
temp = [ { at = 3, file = 7, first = 0, last = 4, prio = -1 } ]
file_list = [7, 8]
block_list = [[7, 0, 3], [8, 2, 2]]

[[process]]
pid = 2
policy = "lru"
"#;

    #[test]
    fn parses_a_full_file() {
        let h = Hints::parse_toml(GOOD, "h.toml").unwrap();
        assert_eq!(h.processes.len(), 2);
        let p = &h.processes[0];
        assert_eq!(p.policy, LevelPolicy::Mru);
        assert_eq!(p.files[&8], -2);
        assert_eq!(p.levels[&1], LevelPolicy::Lru);
        assert_eq!(p.block_list, vec![(7, 0, 3), (8, 2, 2)]);
        assert_eq!(p.initial_controls().len(), 4);
        let mut facts = TraceFacts::default();
        facts.pids.insert(1, 10);
        facts.pids.insert(2, 10);
        facts.files.extend([7, 8]);
        h.validate(&facts).unwrap();
        facts.files.remove(&8);
        let e = h.validate(&facts).unwrap_err().to_string();
        assert!(e.contains("h.toml") && e.contains("pid 1") && e.contains("file 8"), "{e}");
        facts.files.insert(8);
        facts.pids.remove(&2);
        let e = h.validate(&facts).unwrap_err().to_string();
        assert!(e.contains("[[process]] 2 (pid 2)") && e.contains("no request"), "{e}");
    }

    #[test]
    fn bad_hints_name_the_entry() {
        let cases = [
            ("[[process]]\npid = 1\npolicy = \"lfu\"\n", "policy `lfu` is not lru or mru"),
            ("[[process]]\npid = 1\npolicy = \"lru\"\nlevels = { 2 = \"clock\" }\n", "levels.2"),
            ("[[process]]\npid = 1\npolicy = \"lru\"\nblock_list = [[7, 5, 3]]\n", "block_list[0]: first block 5 is after last block 3"),
            ("[[process]]\npid = 1\npolicy = \"lru\"\nblock_list = [[7, 5]]\n", "block_list[0]: expected [file, first_block, last_block]"),
            ("[[process]]\npid = 1\npolicy = \"lru\"\ntemp = [{ at = 0, file = 1, first = 9, last = 2, prio = 0 }]\n", "temp[0]"),
            ("[[process]]\npid = 1\npolicy = \"lru\"\nfiles = { x = 1 }\n", "`x` is not a file id"),
            ("[[process]]\npid = 1\npolicy = \"lru\"\n[[process]]\npid = 1\npolicy = \"mru\"\n", "pid 1 has a table already"),
            ("[[process]]\npid = 1\npolicy = \"lru\"\ncolour = 3\n", "colour"),
            ("[[process]]\npid = -4\npolicy = \"lru\"\n", "out of range"),
        ];
        for (text, want) in cases {
            let e = Hints::parse_toml(text, "h.toml").unwrap_err().to_string();
            assert!(e.starts_with("--hints: h.toml") && e.contains(want), "{want}: {e}");
        }
        let long: Vec<String> = (0..5001).map(|i| i.to_string()).collect();
        let text = format!("[[process]]\npid = 1\npolicy = \"lru\"\nfile_list = [{}]\n", long.join(","));
        let e = Hints::parse_toml(&text, "h.toml").unwrap_err().to_string();
        assert!(e.contains("5001 entries") && e.contains("5000"), "{e}");
    }

    #[test]
    fn json_has_the_same_layout() {
        let h = Hints::parse_json(r#"{"process": [{"pid": 3, "policy": "MRU", "files": {"7": 2}, "block_list": [[7, 0, 1]]}]}"#, "python").unwrap();
        assert_eq!(h.processes[0].files[&7], 2);
        assert_eq!(h.processes[0].policy, LevelPolicy::Mru);
        let e = Hints::parse_json(r#"{"process": [{"pid": 3, "policy": "lfu"}]}"#, "python").unwrap_err().to_string();
        assert!(e.contains("python: [[process]] 1 (pid 3): policy"), "{e}");
    }

    #[test]
    fn oracle_spec() {
        assert_eq!(HintsSpec::parse("oracle:lookahead=64").unwrap(), HintsSpec::Oracle { lookahead: 64 });
        assert!(HintsSpec::parse("oracle:lookahead=0").is_err());
        assert!(HintsSpec::parse("oracle:depth=3").is_err());
        let e = HintsSpec::parse("/nonexistent/h.toml").unwrap_err().to_string();
        assert!(e.contains("/nonexistent/h.toml"), "{e}");
    }
}
