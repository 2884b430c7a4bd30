//! `iostack._core.sweep` and `sweep_task`: experiments from Python (wrapped by `iostack.sweep`).
//!
//! The local backend runs in Rust with the GIL released. Another backend (Ray) is a Python
//! callable that takes the tasks as JSON texts and yields each finished task's rows as JSON;
//! resuming, appending to the output, progress and the final table are the same code as
//! `iostack sweep` either way.

use std::path::PathBuf;

use iostack::experiment::{self, Experiment, SweepSettings, Task};
use iostack::table::{row_to_json, Row};
use iostack_cli::sweep_command::{echo, Progress};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;

fn value_err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Rows of a task as JSON: `[[index, {row}], ...]`.
fn rows_json(rows: &[(usize, Row)]) -> String {
    let items: Vec<String> = rows.iter().map(|(i, r)| format!("[{i},{}]", row_to_json(r))).collect();
    format!("[{}]", items.join(","))
}

fn rows_from_json(text: &str) -> Result<Vec<(usize, Row)>, String> {
    // Rows are flat; `OrderedMap` keeps their column order.
    let v: Vec<(usize, iostack::table::OrderedMap)> = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(v.into_iter().map(|(i, r)| (i, Row { cells: r.0 })).collect())
}

/// Runs one task (its JSON, as the runner gets it) and returns its rows as JSON.
#[pyfunction]
#[pyo3(signature = (task, threads=1))]
fn sweep_task(py: Python<'_>, task: String, threads: usize) -> PyResult<String> {
    let task: Task = serde_json::from_str(&task).map_err(value_err)?;
    Ok(py.allow_threads(|| rows_json(&experiment::run_task(&task, threads))))
}

/// Runs the experiment in `text` (TOML or JSON; relative traces from `dir`). Returns
/// `(rows, failures, total, skipped, echo)`: the table as a JSON array of objects (columns in
/// order), the failures as `[[point, error], ...]`, and the resolved experiment as JSON.
#[pyfunction]
#[pyo3(signature = (text, origin, dir, output=None, resume=false, jobs=0, quiet=true, runner=None, dry_run=false))]
#[allow(clippy::too_many_arguments)]
fn sweep(
    py: Python<'_>,
    text: String,
    origin: String,
    dir: PathBuf,
    output: Option<PathBuf>,
    resume: bool,
    jobs: usize,
    quiet: bool,
    runner: Option<PyObject>,
    dry_run: bool,
) -> PyResult<(String, Vec<(String, String)>, usize, usize, String)> {
    if let Some(p) = &output {
        iostack::table::TableFormat::from_path("output", p).map_err(value_err)?;
    }
    let exp = Experiment::parse(&text, &origin, &dir).map_err(value_err)?;
    let tasks = exp.plan();
    let echoed = echo(&exp, &tasks);
    if dry_run {
        return Ok(("[]".into(), Vec::new(), tasks.iter().map(|t| t.points.len()).sum(), 0, echoed));
    }
    if let Some(p) = &output {
        let side = PathBuf::from(format!("{}.experiment.json", p.display()));
        iostack::table::write_atomically(&side, |f| std::io::Write::write_all(f, echoed.as_bytes())).map_err(|e| PyOSError::new_err(e.to_string()))?;
    }
    let settings = SweepSettings { output, resume };
    let total = tasks.iter().map(|t| t.points.len()).sum();
    let mut runner_error: Option<PyErr> = None;
    let outcome = py.allow_threads(|| {
        let mut progress = Progress::new(total, quiet);
        let outcome = experiment::execute(
            tasks,
            &settings,
            |todo, done| match &runner {
                None => experiment::run_local(todo, jobs, done),
                Some(r) => {
                    let texts: Vec<String> = todo.iter().map(|t| serde_json::to_string(t).expect("tasks serialize")).collect();
                    let result = Python::with_gil(|py| -> PyResult<()> {
                        let it = r.call1(py, (texts,))?;
                        for item in it.bind(py).try_iter()? {
                            let s: String = item?.extract()?;
                            let rows = rows_from_json(&s).map_err(value_err)?;
                            done(rows);
                        }
                        Ok(())
                    });
                    if let Err(e) = result {
                        runner_error = Some(e);
                    }
                }
            },
            &mut |d, t, f| progress.update(d, t, f),
        );
        progress.finish();
        outcome
    });
    if let Some(e) = runner_error {
        return Err(e);
    }
    let outcome = outcome.map_err(|e| crate::to_py(e, None))?;
    let rows: Vec<String> = outcome.rows.iter().map(row_to_json).collect();
    let failures = outcome.failures.iter().map(|f| (f.point.clone(), f.error.clone())).collect();
    Ok((format!("[{}]", rows.join(",")), failures, outcome.total, outcome.skipped, echoed))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(sweep_task, m)?)
}
