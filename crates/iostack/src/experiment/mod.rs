//! Experiments: a grid of runs (traces x stacks x cache sizes) from one file, run on all cores,
//! one table row per run, resumable.
//!
//! An experiment file (TOML, or JSON with the same shape) names the traces, a base
//! configuration, the axes to vary and the cache sizes (docs/experiments.md):
//!
//! ```toml
//! [experiment]
//! kind = "sim"                       # or "run"
//! traces = ["traces/*.csv"]          # relative to the experiment file
//! cache_size = ["1%", "5%", 1000]
//! [base]                             # any option of the command
//! mode = "block"
//! [axes]                             # lists to combine
//! policy = ["lru", "arc", "dulo"]
//! ```
//!
//! [`Experiment::plan`] expands it into points (every trace x the cartesian product of the axes
//! x the cache sizes, or the explicit `points`), and groups them into [`Task`]s: a task is the
//! unit of work handed to a worker, self-contained (serializable, so a Ray worker runs it from
//! its JSON). For `sim`, the points of a task share a trace and every option but the policy and
//! the cache size, so they run in lockstep over one read of the trace (the miss-ratio engine's
//! sweep); for `run`, a task is one timed run. [`run_task`] runs a task single-threaded per run,
//! so its rows are the same on any machine and at any thread count. `sweep` (in `run.rs`) runs
//! the tasks, appends rows to the output as they finish, skips points already there on resume,
//! and records failures as rows with an `error`.

mod run;

pub use run::{execute, experiment_dir, generator, run_local, run_task, Failure, SweepOutcome, SweepSettings};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::ConfigError;
use crate::table::cell_text;

/// What each run of an experiment is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// The miss-ratio engine (`iostack sim`).
    Sim,
    /// The timed stack (`iostack run`).
    Run,
}

/// The most points one experiment may have.
pub const MAX_POINTS: usize = 1_000_000;

/// Options of `iostack sim` an experiment may set (besides the cache size).
pub const SIM_OPTIONS: &[&str] = &["policy", "mode", "unit_size", "page_size", "format", "skip_invalid", "interval"];
/// Options of `iostack run` an experiment may set besides the stack configuration's fields.
pub const RUN_TRACE_OPTIONS: &[&str] = &["format", "mapping", "skip_invalid"];

/// Where a run's requests come from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "source", rename_all = "lowercase")]
pub enum TraceSpec {
    /// A trace file (absolute, or as resolved against the experiment file's folder). `name` is
    /// how rows name it: the path as matched, relative to the experiment file.
    File { path: PathBuf, name: String },
    /// A generated workload: `gen:zipf:alpha=1,objects=100000,requests=1000000,seed=7` (the
    /// generators and parameters of `iostack gen`).
    Gen { spec: String },
}

impl TraceSpec {
    pub fn name(&self) -> &str {
        match self {
            TraceSpec::File { name, .. } => name,
            TraceSpec::Gen { spec } => spec,
        }
    }
}

/// One run of the grid: its position, the cells that identify it in the table (trace, each
/// axis's value, the cache size as given), and its options (the base, then the point's values).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointSpec {
    pub index: usize,
    pub label: Vec<(String, Value)>,
    pub options: Map<String, Value>,
}

impl PointSpec {
    /// The text that identifies the point in a table (for resuming).
    pub fn key(&self) -> String {
        self.label.iter().map(|(_, v)| cell_text(v)).collect::<Vec<_>>().join("\u{1f}")
    }
}

/// A unit of work: points that run together over one trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub kind: Kind,
    pub trace: TraceSpec,
    pub points: Vec<PointSpec>,
}

/// An experiment as read from its file, with its traces resolved.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    pub kind: Kind,
    /// The traces as the file names them (paths, globs, generator specs).
    pub traces: Vec<String>,
    /// The traces they resolve to, in order (globs expanded and sorted).
    pub resolved_traces: Vec<TraceSpec>,
    pub cache_size: Vec<Value>,
    pub base: Map<String, Value>,
    /// Axes in the order of the file.
    pub axes: Vec<(String, Vec<Value>)>,
    /// Explicit points (each a table of option values) instead of the cartesian product.
    pub points: Vec<Map<String, Value>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Header {
    kind: Kind,
    traces: Vec<String>,
    #[serde(default)]
    cache_size: Option<Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    experiment: Header,
    #[serde(default)]
    base: Map<String, Value>,
    #[serde(default)]
    axes: crate::table::OrderedMap,
    #[serde(default)]
    points: Vec<Map<String, Value>>,
}

impl Experiment {
    /// Reads an experiment from TOML or JSON text (JSON if it starts with `{`); `origin` names
    /// it in errors and `dir` is the folder relative trace paths are taken from.
    pub fn parse(text: &str, origin: &str, dir: &Path) -> Result<Experiment, ConfigError> {
        let t = text.trim_start();
        let file: File = if t.starts_with('{') {
            serde_json::from_str(t).map_err(|e| ConfigError::new(origin, format!("not a valid experiment: {e}")))?
        } else {
            toml::from_str(t).map_err(|e| ConfigError::new(origin, format!("not a valid experiment: {e}")))?
        };
        let h = file.experiment;
        let cache_size = match h.cache_size {
            None => Vec::new(),
            Some(Value::Array(v)) => v,
            Some(v) => vec![v],
        };
        let mut axes = Vec::new();
        for (name, v) in file.axes.0 {
            let values = match v {
                Value::Array(v) if !v.is_empty() => v,
                Value::Array(_) => return Err(ConfigError::new(origin, format!("axis `{name}` has no values"))),
                v => vec![v],
            };
            axes.push((canonical(h.kind, &name), values));
        }
        let base: Map<String, Value> = file.base.into_iter().map(|(k, v)| (canonical(h.kind, &k), v)).collect();
        let points: Vec<Map<String, Value>> =
            file.points.into_iter().map(|p| p.into_iter().map(|(k, v)| (canonical(h.kind, &k), v)).collect()).collect();
        let mut exp = Experiment { kind: h.kind, traces: h.traces, resolved_traces: Vec::new(), cache_size, base, axes, points };
        exp.check_names(origin)?;
        exp.resolved_traces = resolve_traces(&exp.traces, dir, origin)?;
        exp.check_size(origin)?;
        Ok(exp)
    }

    /// The number of points the grid has (traces x combinations x cache sizes), if it fits.
    pub fn point_count(&self) -> Option<usize> {
        let combos = if self.points.is_empty() {
            self.axes.iter().try_fold(1usize, |n, (_, v)| n.checked_mul(v.len()))?
        } else {
            self.points.len()
        };
        self.resolved_traces.len().checked_mul(combos)?.checked_mul(self.cache_size.len().max(1))
    }

    /// A grid too large to plan (a typo in an axis can multiply it) is refused before any
    /// memory is spent on it.
    fn check_size(&self, origin: &str) -> Result<(), ConfigError> {
        match self.point_count() {
            Some(n) if n <= MAX_POINTS => Ok(()),
            n => Err(ConfigError::new(
                origin,
                format!(
                    "the grid has {} points ({} traces x {} axis combinations x {} cache sizes), more than the limit of {MAX_POINTS}",
                    n.map_or("too many".to_string(), |n| n.to_string()),
                    self.resolved_traces.len(),
                    if self.points.is_empty() {
                        self.axes.iter().map(|(_, v)| v.len().to_string()).collect::<Vec<_>>().join(" x ")
                    } else {
                        self.points.len().to_string()
                    },
                    self.cache_size.len().max(1)
                ),
            )),
        }
    }

    /// Every option name must be one the kind of run takes.
    fn check_names(&self, origin: &str) -> Result<(), ConfigError> {
        let valid = valid_options(self.kind);
        let names = self.base.keys().chain(self.axes.iter().map(|(n, _)| n)).chain(self.points.iter().flat_map(|p| p.keys()));
        for n in names {
            if !valid.iter().any(|v| v == n) {
                return Err(ConfigError::unknown(origin, "option", n, &valid.iter().map(String::as_str).collect::<Vec<_>>()));
            }
        }
        if self.traces.is_empty() {
            return Err(ConfigError::new(origin, "`traces` names no trace"));
        }
        Ok(())
    }

    /// The points of the grid in order (traces outer, then the axes in file order, the cache
    /// sizes inner; or the explicit points per trace), grouped into tasks.
    pub fn plan(&self) -> Vec<Task> {
        // The option sets, each with the names of the cells that identify it.
        let mut combos: Vec<Vec<(String, Value)>> = vec![Vec::new()];
        if self.points.is_empty() {
            for (name, values) in &self.axes {
                combos = combos
                    .into_iter()
                    .flat_map(|c| values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push((name.clone(), v.clone()));
                        c
                    }))
                    .collect();
            }
        } else {
            combos = self.points.iter().map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect()).collect();
        }
        let sizes: Vec<Option<&Value>> = if self.cache_size.is_empty() { vec![None] } else { self.cache_size.iter().map(Some).collect() };
        let mut tasks: Vec<Task> = Vec::new();
        // Sim points sharing a trace and every option but policy and size share a task.
        let mut groups: BTreeMap<(usize, String), usize> = BTreeMap::new();
        let mut index = 0;
        for (ti, trace) in self.resolved_traces.iter().enumerate() {
            for combo in &combos {
                for size in &sizes {
                    let mut options = self.base.clone();
                    let mut label = vec![("trace".to_string(), Value::from(trace.name()))];
                    for (k, v) in combo {
                        options.insert(k.clone(), v.clone());
                        if k != "cache_size" {
                            label.push((k.clone(), v.clone()));
                        }
                    }
                    if let Some(s) = size {
                        options.insert("cache_size".into(), (*s).clone());
                    }
                    if let Some(s) = options.get("cache_size") {
                        label.push(("cache_size_spec".into(), Value::from(cell_text(s))));
                    }
                    let point = PointSpec { index, label, options };
                    index += 1;
                    let task = match self.kind {
                        Kind::Sim => {
                            let mut shared = point.options.clone();
                            shared.remove("policy");
                            shared.remove("cache_size");
                            let key = (ti, Value::Object(shared).to_string());
                            *groups.entry(key).or_insert_with(|| {
                                tasks.push(Task { kind: self.kind, trace: trace.clone(), points: Vec::new() });
                                tasks.len() - 1
                            })
                        }
                        Kind::Run => {
                            tasks.push(Task { kind: self.kind, trace: trace.clone(), points: Vec::new() });
                            tasks.len() - 1
                        }
                    };
                    tasks[task].points.push(point);
                }
            }
        }
        tasks
    }
}

/// The options a kind of run takes, as experiment keys.
pub fn valid_options(kind: Kind) -> Vec<String> {
    let mut v: Vec<String> = vec!["cache_size".into()];
    match kind {
        Kind::Sim => v.extend(SIM_OPTIONS.iter().map(|s| s.to_string())),
        Kind::Run => {
            let fields = serde_json::to_value(crate::engine::timed::StackConfig::default()).expect("config serializes");
            v.extend(fields.as_object().expect("an object").keys().filter(|k| *k != "cache").cloned());
            // Optional fields, absent from the default's serialization.
            for k in ["redcap", "interval"] {
                if !v.iter().any(|x| x == k) {
                    v.push(k.to_string());
                }
            }
            v.extend(RUN_TRACE_OPTIONS.iter().map(|s| s.to_string()));
        }
    }
    v
}

/// Option names as the command line spells them are accepted too (`page-size`); the timed
/// stack's `cache` is the experiment's `cache_size`.
fn canonical(kind: Kind, name: &str) -> String {
    let n = name.trim().trim_start_matches("--").replace('-', "_");
    match (kind, n.as_str()) {
        (_, "cache") => "cache_size".into(),
        _ => n,
    }
}

/// Paths, globs (`*`, `?`, `[...]`, matched in sorted order) and generator specs (`gen:...`).
fn resolve_traces(traces: &[String], dir: &Path, origin: &str) -> Result<Vec<TraceSpec>, ConfigError> {
    let mut out = Vec::new();
    for t in traces {
        if let Some(spec) = t.strip_prefix("gen:") {
            run::generator(spec).map_err(|e| ConfigError::new(origin, format!("trace `{t}`: {e}")))?;
            out.push(TraceSpec::Gen { spec: t.clone() });
            continue;
        }
        let full = if Path::new(t).is_absolute() { PathBuf::from(t) } else { dir.join(t) };
        if t.contains(['*', '?', '[']) {
            let pattern = full.to_string_lossy().into_owned();
            let mut matched: Vec<PathBuf> = glob::glob(&pattern)
                .map_err(|e| ConfigError::new(origin, format!("trace pattern `{t}`: {e}")))?
                .filter_map(Result::ok)
                .filter(|p| p.is_file())
                .collect();
            matched.sort();
            if matched.is_empty() {
                return Err(ConfigError::new(origin, format!("trace pattern `{t}` matches no file (in {})", dir.display())));
            }
            for p in matched {
                let name = p.strip_prefix(dir).map(|r| r.to_path_buf()).unwrap_or_else(|_| p.clone()).display().to_string();
                out.push(TraceSpec::File { path: p, name });
            }
        } else {
            if !full.is_file() {
                return Err(ConfigError::new(origin, format!("trace `{t}`: no such file ({})", full.display())));
            }
            out.push(TraceSpec::File { path: full, name: t.clone() });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXP: &str = r#"
        [experiment]
        kind = "sim"
        traces = ["gen:zipf:alpha=1,objects=1000,requests=20000,seed=1", "gen:zipf:alpha=0.8,objects=1000,requests=20000,seed=2"]
        cache_size = ["1%", "10%", 50]
        [base]
        unit-size = true
        [axes]
        policy = ["lru", "arc"]
        mode = ["object"]
    "#;

    #[test]
    fn plans_the_cartesian_product_in_order() {
        let exp = Experiment::parse(EXP, "exp.toml", Path::new(".")).unwrap();
        assert_eq!(exp.axes.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["policy", "mode"]);
        let tasks = exp.plan();
        // One task per trace: policies and sizes share it.
        assert_eq!(tasks.len(), 2);
        let points: Vec<&PointSpec> = tasks.iter().flat_map(|t| &t.points).collect();
        assert_eq!(points.len(), 2 * 2 * 3);
        assert!(points.iter().enumerate().all(|(i, p)| p.index == i));
        let names: Vec<&str> = points[0].label.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["trace", "policy", "mode", "cache_size_spec"]);
        assert_eq!(points[1].options["cache_size"], Value::from("10%"));
        assert_eq!(points[3].options["policy"], Value::from("arc"));
        assert_eq!(points[0].options["unit_size"], Value::from(true));
    }

    #[test]
    fn bad_experiments_name_what_is_wrong() {
        let e = Experiment::parse(&EXP.replace("mode = [", "modes = ["), "exp.toml", Path::new(".")).unwrap_err().to_string();
        assert!(e.contains("exp.toml") && e.contains("modes") && e.contains("policy"), "{e}");
        let e = Experiment::parse(&EXP.replace("gen:zipf:alpha=1,", "nosuch/*.csv\", \"gen:zipf:alpha=1,"), "exp.toml", Path::new(".")).unwrap_err().to_string();
        assert!(e.contains("matches no file"), "{e}");
        let e = Experiment::parse(&EXP.replace("kind = \"sim\"", "kind = \"simulate\""), "exp.toml", Path::new(".")).unwrap_err().to_string();
        assert!(e.contains("exp.toml") && e.contains("simulate"), "{e}");
    }

    #[test]
    fn a_grid_too_large_to_plan_is_refused() {
        let exp = Experiment::parse(EXP, "exp.toml", Path::new(".")).unwrap();
        assert_eq!(exp.point_count(), Some(2 * 2 * 3));
        // Five more axes of ten values: 2 traces x 2 x 1 x 10^5 x 3 sizes, past the limit.
        let ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
        let more: String = ["page_size", "interval", "format", "unit_size", "skip_invalid"].iter().map(|k| format!("{k} = {ten}\n")).collect();
        let big = EXP.replace("mode = [\"object\"]", &format!("mode = [\"object\"]\n{more}"));
        let e = Experiment::parse(&big, "exp.toml", Path::new(".")).unwrap_err().to_string();
        assert!(e.contains("exp.toml") && e.contains("1200000 points (2 traces x 2 x 1 x 10 x 10 x 10 x 10 x 10 axis combinations x 3 cache sizes)") && e.contains("limit of 1000000"), "{e}");
        // A product past usize (600^7 combinations) is refused the same way, without wrapping.
        let wide = format!("[{}]", (0..600).map(|i| i.to_string()).collect::<Vec<_>>().join(", "));
        let more: String = ["page_size", "interval", "format", "unit_size", "skip_invalid", "cache_size", "policy"].iter().map(|k| format!("{k} = {wide}\n")).collect();
        let e = Experiment::parse(&EXP.replace("policy = [\"lru\", \"arc\"]", &more), "exp.toml", Path::new(".")).unwrap_err().to_string();
        assert!(e.contains("too many points") && e.contains("600 x 600"), "{e}");
    }
}
