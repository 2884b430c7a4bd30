//! Bindings of `iostack analyze` (the trace characterisation and locality metrics) and of
//! `iostack repro` for the Python entry point's `--plot`.
//!
//! Both functions take the command line's own arguments, so the Python API, the Python entry
//! point and the Rust binary share one parser and one set of defaults. Reports cross as JSON
//! (the same document `iostack analyze --json` prints); `iostack.analysis` turns it into
//! DataFrames and `iostack.plots` draws it.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Analyses a trace as `iostack analyze` would with `argv` (program name first); returns the
/// report as JSON, or raises ValueError with the command's error message.
#[pyfunction]
fn analyze_json(py: Python<'_>, argv: Vec<String>) -> PyResult<String> {
    let rep = py.allow_threads(|| iostack_cli::analyze_report_from_argv(argv)).map_err(PyValueError::new_err)?;
    serde_json::to_string(&rep).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Runs `iostack analyze` with `argv` (program name first) as the command line does, printing
/// its output, with `--plot` left to the caller; returns (exit code, report JSON or None).
#[pyfunction]
fn analyze_cli(py: Python<'_>, argv: Vec<String>) -> (i32, Option<String>) {
    py.allow_threads(|| iostack_cli::analyze_capture(argv))
}

/// Runs `iostack repro` with `argv` (program name first) as the command line does, printing its
/// output, with `--plot` left to the caller; returns (exit code, report JSON or None). The exit
/// code is 1 when a check differs from the paper; the report still comes back to be plotted.
#[pyfunction]
fn repro_cli(py: Python<'_>, argv: Vec<String>) -> (i32, Option<String>) {
    py.allow_threads(|| iostack_cli::repro_capture(argv))
}

/// Adds the functions of this file to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(analyze_json, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_cli, m)?)?;
    m.add_function(wrap_pyfunction!(repro_cli, m)?)?;
    Ok(())
}
