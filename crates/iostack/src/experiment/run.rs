//! Running an experiment's tasks: one task's runs ([`run_task`]), the local backend (all cores,
//! [`run_local`]) and the sweep around any backend ([`execute`]): resume, append rows as they
//! finish, record failures, and the final table in point order.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::{Kind, PointSpec, Task, TraceSpec};
use crate::engine::series::Interval;
use crate::engine::sim::{check_runs, sweep_pairs, FileTrace, Mode, SweepConfig, TraceSource};
use crate::engine::timed::StackConfig;
use crate::error::{ConfigError, Error};
use crate::table::{self, cell_text, Appender, Row};
use crate::trace::{Format, ReaderOptions, TraceReader};
use crate::units::Size;
use crate::workload::{self, Common, GenParams};

/// A generated workload from `zipf:alpha=1,objects=1000,requests=100000,seed=7`: the generator
/// (`iostack gen --list`), its parameters, and the settings every generator takes (`requests`,
/// `objects`, `size`, `seed`, `write_ratio`, `processes`, `files`).
pub fn generator(spec: &str) -> Result<Box<dyn TraceReader>, ConfigError> {
    let (name, params) = spec.split_once(':').unwrap_or((spec, ""));
    let mut common = Common::default();
    let mut rest = Vec::new();
    for kv in params.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, v) = kv.split_once('=').ok_or_else(|| ConfigError::new(name, format!("`{kv}` is not key=value")))?;
        let (k, v) = (k.trim(), v.trim());
        let num = |what: &str| -> Result<u64, ConfigError> { v.parse().map_err(|_| ConfigError::new(format!("{name}.{k}"), format!("`{v}` is not {what}"))) };
        match k {
            "requests" => common.requests = num("a count")?,
            "objects" => common.objects = num("a count")?,
            "size" | "object_size" => common.object_size = Size::parse(&format!("{name}.{k}"), v)?.in_units(1),
            "seed" => common.seed = num("a seed")?,
            "processes" => common.processes = num("a count")? as u32,
            "files" => common.files = num("a count")?,
            "write_ratio" => common.write_ratio = v.parse().map_err(|_| ConfigError::new(format!("{name}.{k}"), format!("`{v}` is not a number")))?,
            _ => rest.push((k.to_string(), v.to_string())),
        }
    }
    workload::build(name, &common, GenParams::new(name, rest))
}

/// A task's trace, opened as often as the runs need.
struct Source<'a> {
    spec: &'a TraceSpec,
    format: Option<Format>,
    options: ReaderOptions,
}

impl Source<'_> {
    fn open(&self) -> Result<Box<dyn TraceReader>, Error> {
        match self.spec {
            TraceSpec::File { path, .. } => Ok(crate::trace::open(path, self.format, &self.options)?),
            TraceSpec::Gen { spec } => Ok(generator(spec.strip_prefix("gen:").unwrap_or(spec))?),
        }
    }
}

impl TraceSource for Source<'_> {
    fn open(&self) -> Result<Box<dyn TraceReader>, Error> {
        Source::open(self)
    }
    fn name(&self) -> String {
        self.spec.name().to_string()
    }
    fn format(&self) -> String {
        match (self.spec, self.format) {
            (_, Some(f)) => f.name().to_string(),
            (TraceSpec::Gen { .. }, None) => "generated".into(),
            (TraceSpec::File { path, .. }, None) => FileTrace::new(path, None, self.options.clone()).map(|t| t.format()).unwrap_or_default(),
        }
    }
}

fn text(v: &Value) -> String {
    cell_text(v)
}

fn flag(options: &Map<String, Value>, name: &str) -> Result<bool, ConfigError> {
    match options.get(name) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(v) => match text(v).as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            t => Err(ConfigError::new(name, format!("`{t}` is not true or false"))),
        },
    }
}

fn reader_options(options: &Map<String, Value>) -> Result<(Option<Format>, ReaderOptions), ConfigError> {
    let format = options.get("format").map(|v| Format::from_name(&text(v))).transpose()?;
    let csv_mapping = options.get("mapping").map(|v| crate::trace::CsvMapping::parse(&text(v))).transpose()?;
    Ok((format, ReaderOptions { skip_invalid: flag(options, "skip_invalid")?, csv_mapping, ..Default::default() }))
}

/// The cell of a sweep's row that holds the run's series (`interval` set), as JSON text: a list
/// of the intervals' objects, as in the run's JSON result (`series.unit` and `series.width` are
/// cells of their own).
pub const SERIES_CELL: &str = "series.points";

/// The row of a point: its label (trace, axis values, size as given), then the result.
fn row_of(point: &PointSpec, result: Result<Row, String>) -> (usize, Row) {
    let mut row = Row::new();
    for (n, v) in &point.label {
        row.set(n.clone(), v.clone());
    }
    match result {
        Ok(r) => {
            for (n, v) in r.cells {
                // The label names the trace as the experiment does.
                if n != "trace" {
                    row.set(n, v);
                }
            }
        }
        Err(e) => row.set("error", e),
    }
    (point.index, row)
}

/// Runs the points of `task`: its rows, by point index, failures as rows with an `error`.
/// `threads` bounds the worker threads of a sim task (each run is single-threaded whatever it
/// is, so the rows do not depend on it).
pub fn run_task(task: &Task, threads: usize) -> Vec<(usize, Row)> {
    match task.kind {
        Kind::Sim => run_sim_task(task, threads),
        Kind::Run => task.points.iter().map(|p| row_of(p, run_timed_point(&task.trace, p).map_err(|e| e.to_string()))).collect(),
    }
}

fn run_sim_task(task: &Task, threads: usize) -> Vec<(usize, Row)> {
    let Some(first) = task.points.first() else { return Vec::new() };
    let setup = || -> Result<(Source<'_>, SweepConfig, u64), Error> {
        let o = &first.options;
        let unit_size = flag(o, "unit_size")?;
        let page = match o.get("page_size") {
            None => 4096,
            Some(v) => Size::parse("page_size", &text(v))?.in_units(1),
        };
        let mode = match o.get("mode").map(text).as_deref().unwrap_or("object") {
            "object" => Mode::Object { unit_size },
            "block" if unit_size => return Err(ConfigError::new("unit_size", "applies to object mode only (block mode counts blocks)").into()),
            "block" => Mode::Block { page_size: page },
            m => return Err(ConfigError::unknown("mode", "mode", m, &["object", "block"]).into()),
        };
        let (format, options) = reader_options(o)?;
        let mut cfg = SweepConfig::new(mode);
        cfg.threads = threads.max(1);
        cfg.interval = o.get("interval").map(|v| Interval::parse("interval", &text(v))).transpose()?;
        Ok((Source { spec: &task.trace, format, options }, cfg, page))
    };
    let (source, cfg, page) = match setup() {
        Ok(s) => s,
        Err(e) => return task.points.iter().map(|p| row_of(p, Err(e.to_string()))).collect(),
    };
    // Each point's policy and size are checked alone, so that one bad value fails only its runs.
    let mut rows: Vec<(usize, Row)> = Vec::new();
    let mut pairs = Vec::new();
    let mut good = Vec::new();
    for p in &task.points {
        let policy = p.options.get("policy").map(text).unwrap_or_else(|| "lru".into());
        let Some(size) = p.options.get("cache_size").map(text) else {
            rows.push(row_of(p, Err("cache_size: no cache size given".into())));
            continue;
        };
        match check_runs(std::slice::from_ref(&policy), std::slice::from_ref(&size), cfg.mode) {
            Ok(_) => {
                pairs.push((policy, size));
                good.push(p);
            }
            Err(e) => rows.push(row_of(p, Err(e.to_string()))),
        }
    }
    if !pairs.is_empty() {
        match sweep_pairs(&source, &pairs, &cfg, page, &mut |_| {}) {
            Ok(results) => {
                for (p, r) in good.iter().zip(&results) {
                    let mut row = table::flatten(r, "");
                    if let Some(s) = &r.series {
                        row.set(SERIES_CELL, serde_json::to_string(&s.points).expect("series serialize"));
                    }
                    rows.push(row_of(p, Ok(row)));
                }
            }
            Err(e) => rows.extend(good.iter().map(|p| row_of(p, Err(e.to_string())))),
        }
    }
    rows.sort_by_key(|(i, _)| *i);
    rows
}

fn run_timed_point(trace: &TraceSpec, p: &PointSpec) -> Result<Row, Error> {
    let mut config = Map::new();
    for (k, v) in &p.options {
        match k.as_str() {
            "format" | "mapping" | "skip_invalid" => {}
            "cache_size" => {
                config.insert("cache".into(), Value::from(text(v)));
            }
            "cache" | "max_request" | "think" | "dirty_expire" | "flush_interval" | "interval" => {
                config.insert(k.clone(), Value::from(text(v)));
            }
            _ => {
                config.insert(k.clone(), v.clone());
            }
        }
    }
    let config: StackConfig = serde_json::from_value(Value::Object(config)).map_err(|e| ConfigError::new("config", e.to_string()))?;
    let (format, options) = reader_options(&p.options)?;
    let source = Source { spec: trace, format, options };
    let report = crate::engine::footprint::run_timed(&config, &mut || source.open())?;
    let mut row = Row::new();
    row.set("cache_size", report.resolved.get("cache_blocks").cloned().unwrap_or_default());
    row.set("cache_unit", "blocks");
    row.extend(table::flatten(&report, ""));
    if let Some(s) = &report.series {
        row.set(SERIES_CELL, serde_json::to_string(&s.points).expect("series serialize"));
    }
    Ok(row)
}

/// Runs `tasks` on this machine: `jobs` workers (0: one per core) take tasks in order; each
/// task's rows go to `done` as soon as it finishes (on the calling thread).
pub fn run_local(tasks: Vec<Task>, jobs: usize, done: &mut dyn FnMut(Vec<(usize, Row)>)) {
    let cores = if jobs == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { jobs };
    let workers = cores.clamp(1, tasks.len().max(1));
    // Sim tasks fan out over threads of their own; share the cores among the tasks at once.
    let threads = (cores / workers).max(1);
    let next = AtomicUsize::new(0);
    let tasks = Arc::new(tasks);
    let (tx, rx) = crossbeam_channel::unbounded::<Vec<(usize, Row)>>();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let (tx, tasks, next) = (tx.clone(), tasks.clone(), &next);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(task) = tasks.get(i) else { break };
                if tx.send(run_task(task, threads)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for rows in rx {
            done(rows);
        }
    });
}

/// How a sweep writes its results.
#[derive(Debug, Clone, Default)]
pub struct SweepSettings {
    /// The table the rows are appended to as runs finish (csv, jsonl or parquet).
    pub output: Option<PathBuf>,
    /// Skip the points whose rows are already in `output` (failed ones are run again).
    pub resume: bool,
}

/// A run that failed: the cells that identify it and its error.
#[derive(Debug, Clone)]
pub struct Failure {
    pub point: String,
    pub error: String,
}

/// What a sweep did.
#[derive(Debug, Clone)]
pub struct SweepOutcome {
    /// Every row of the grid in point order (resumed ones included), then rows of the output
    /// that are not points of this grid.
    pub rows: Vec<Row>,
    pub total: usize,
    /// Points skipped because their rows were already in the output.
    pub skipped: usize,
    pub failures: Vec<Failure>,
}

/// Runs the tasks of a sweep through `backend` (which calls its argument with each finished
/// task's rows): skips the points already in the output when resuming, appends each task's rows
/// to the output at once, reports progress as (points done, total, failed), and leaves the output
/// in point order at the end.
pub fn execute(
    tasks: Vec<Task>,
    settings: &SweepSettings,
    backend: impl FnOnce(Vec<Task>, &mut dyn FnMut(Vec<(usize, Row)>)),
    progress: &mut dyn FnMut(usize, usize, usize),
) -> Result<SweepOutcome, Error> {
    let mut appender = match &settings.output {
        Some(p) => Some(Appender::open(p, settings.resume).map_err(Error::Io)?),
        None => None,
    };
    let labels: Vec<(usize, Vec<String>, String)> =
        tasks.iter().flat_map(|t| &t.points).map(|p| (p.index, p.label.iter().map(|(n, _)| n.clone()).collect(), p.key())).collect();
    let total = labels.len();
    let key_of = |row: &Row, names: &[String]| names.iter().map(|n| row.get(n).map(cell_text).unwrap_or_default()).collect::<Vec<_>>().join("\u{1f}");
    // Points already in the output, and the rows that hold them.
    let mut have: std::collections::HashMap<String, Row> = std::collections::HashMap::new();
    let mut foreign: Vec<Row> = Vec::new();
    if let Some(a) = &appender {
        let wanted: HashSet<&str> = labels.iter().map(|(_, _, k)| k.as_str()).collect();
        let names: Vec<Vec<String>> = {
            let mut v: Vec<Vec<String>> = labels.iter().map(|(_, n, _)| n.clone()).collect();
            v.sort();
            v.dedup();
            v
        };
        for row in a.rows() {
            let failed = row.get("error").is_some_and(|e| !cell_text(e).is_empty());
            match names.iter().map(|n| key_of(row, n)).find(|k| wanted.contains(k.as_str())) {
                Some(k) if !failed => {
                    have.insert(k, row.clone());
                }
                Some(_) => {}
                None => foreign.push(row.clone()),
            }
        }
    }
    let skipped = have.len();
    let todo: Vec<Task> = tasks
        .into_iter()
        .filter_map(|mut t| {
            t.points.retain(|p| !have.contains_key(&p.key()));
            (!t.points.is_empty()).then_some(t)
        })
        .collect();
    let mut rows: Vec<Option<Row>> = vec![None; total];
    let position: std::collections::HashMap<usize, usize> = labels.iter().enumerate().map(|(i, (idx, _, _))| (*idx, i)).collect();
    for (i, (_, _, k)) in labels.iter().enumerate() {
        if let Some(r) = have.remove(k) {
            rows[i] = Some(r);
        }
    }
    let (mut done, mut failed) = (skipped, 0);
    let mut write_error: Option<std::io::Error> = None;
    progress(done, total, failed);
    backend(todo, &mut |batch: Vec<(usize, Row)>| {
        done += batch.len();
        failed += batch.iter().filter(|(_, r)| r.get("error").is_some()).count();
        if let (Some(a), None) = (&mut appender, &write_error) {
            if let Err(e) = a.append(batch.iter().map(|(_, r)| r.clone()).collect()) {
                write_error = Some(e);
            }
        }
        for (idx, r) in batch {
            if let Some(&i) = position.get(&idx) {
                rows[i] = Some(r);
            }
        }
        progress(done, total, failed);
    });
    if let Some(e) = write_error {
        return Err(Error::Io(e));
    }
    let mut out: Vec<Row> = rows.into_iter().flatten().collect();
    let failures = out
        .iter()
        .filter_map(|r| {
            r.get("error").map(|e| Failure {
                point: r.cells.iter().take_while(|(n, _)| n != "error").filter(|(n, _)| !n.contains('.')).take(6).map(|(n, v)| format!("{n}={}", cell_text(v))).collect::<Vec<_>>().join(" "),
                error: cell_text(e),
            })
        })
        .collect();
    out.extend(foreign);
    if let Some(p) = &settings.output {
        table::write(p, &out).map_err(Error::Io)?;
    }
    Ok(SweepOutcome { rows: out, total, skipped, failures })
}

/// The folder relative trace paths of an experiment file are taken from.
pub fn experiment_dir(path: &Path) -> PathBuf {
    path.parent().filter(|p| !p.as_os_str().is_empty()).map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiment::Experiment;

    const EXP: &str = r#"
        [experiment]
        kind = "sim"
        traces = ["gen:zipf:alpha=1,objects=2000,requests=30000,seed=1", "gen:uniform:objects=500,requests=10000,seed=2"]
        cache_size = ["1%", "10%", 64]
        [base]
        unit_size = true
        [axes]
        policy = ["lru", "arc", "nosuch"]
    "#;

    fn tasks() -> Vec<Task> {
        Experiment::parse(EXP, "exp.toml", Path::new(".")).unwrap().plan()
    }

    #[test]
    fn an_interrupted_sweep_resumes_to_the_same_table() {
        let dir = tempfile::tempdir().unwrap();
        for ext in ["csv", "jsonl", "parquet"] {
            let whole = dir.path().join(format!("whole.{ext}"));
            let cut = dir.path().join(format!("cut.{ext}"));
            let settings = |p: &Path, resume| SweepSettings { output: Some(p.to_path_buf()), resume };
            let full = execute(tasks(), &settings(&whole, false), |t, done| run_local(t, 2, done), &mut |_, _, _| {}).unwrap();
            assert_eq!((full.total, full.failures.len()), (18, 6));
            // Interrupted: the backend stops after its first task (the rows of that task are in
            // the file; the table is not rewritten at the end).
            let partial = std::panic::catch_unwind(|| {
                execute(tasks(), &settings(&cut, false), |t, done| {
                    done(run_task(&t[1], 1));
                    panic!("interrupted");
                }, &mut |_, _, _| {})
            });
            assert!(partial.is_err());
            assert_eq!(table::read(&cut).unwrap().len(), 9);
            let mut seen = Vec::new();
            let resumed = execute(tasks(), &settings(&cut, true), |t, done| {
                seen.extend(t.iter().flat_map(|t| t.points.iter().map(|p| p.index)));
                run_local(t, 3, done)
            }, &mut |_, _, _| {}).unwrap();
            // The second trace's good runs were not run again; the failed ones were.
            assert_eq!(resumed.skipped, 6);
            assert_eq!(seen.len(), 12);
            assert_eq!(std::fs::read(&whole).unwrap(), std::fs::read(&cut).unwrap(), "{ext}");
            let text = |rows: &[Row]| rows.iter().map(|r| r.cells.iter().map(|(n, v)| format!("{n}={}", cell_text(v))).collect::<Vec<_>>()).collect::<Vec<_>>();
            assert_eq!(text(&resumed.rows), text(&full.rows), "{ext}");
        }
    }

    #[test]
    fn rows_do_not_depend_on_the_number_of_workers() {
        let mut outs = Vec::new();
        for jobs in [1, 4] {
            let mut rows = Vec::new();
            run_local(tasks(), jobs, &mut |b| rows.extend(b));
            rows.sort_by_key(|(i, _)| *i);
            outs.push(rows);
        }
        assert_eq!(outs[0], outs[1]);
        let (_, r) = &outs[0][1];
        assert_eq!(r.get("cache_size_spec"), Some(&Value::from("10%")));
        assert_eq!(r.get("cache_size"), Some(&Value::from(189u64)));
        assert!(r.get("miss_ratio").unwrap().as_f64().unwrap() > 0.0);
        assert!(cell_text(outs[0][2].1.get("error").unwrap_or(&Value::Null)).is_empty());
        assert!(cell_text(outs[0][6].1.get("error").unwrap()).contains("nosuch"));
    }
}
