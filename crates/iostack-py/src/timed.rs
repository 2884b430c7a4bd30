//! `iostack._core.run_timed`: the timed stack from Python (wrapped by `iostack.run`).

use std::path::Path;

use iostack::engine::timed::{self, StackConfig};
use iostack::trace::{CsvMapping, Format, ReaderOptions};
use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyType;

use crate::policy::{take_failure, Failure, PyPolicy};

fn value_err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Replays `trace` through the stack described by `config` (a JSON object with the fields of
/// the `iostack run` config; missing fields take their defaults) and returns the result as JSON.
/// `dumps` maps boundaries (front, cache, sched, device) to trace files to write; `locality`,
/// when given, overrides the config's `locality` (probes at the four boundaries).
/// `policy_class`, when given, is an `iostack.Policy` subclass that replaces the config's policy
/// (whose name is then only echoed); one instance is built with the cache's capacity in blocks.
#[pyfunction]
#[pyo3(signature = (trace, config, dumps=Vec::new(), locality=None, format=None, mapping=None, skip_invalid=false, policy_class=None))]
#[allow(clippy::too_many_arguments)]
fn run_timed(
    py: Python<'_>,
    trace: String,
    config: String,
    dumps: Vec<(String, String)>,
    locality: Option<bool>,
    format: Option<String>,
    mapping: Option<String>,
    skip_invalid: bool,
    policy_class: Option<Bound<'_, PyType>>,
) -> PyResult<String> {
    if trace != "-" && !Path::new(&trace).exists() {
        return Err(PyFileNotFoundError::new_err(format!("{trace}: no such file")));
    }
    let mut config = StackConfig::parse(&config, "config").map_err(value_err)?;
    if let Some(l) = locality {
        config.locality = l;
    }
    config.resolve().map_err(value_err)?;
    let format = format.as_deref().map(Format::from_name).transpose().map_err(value_err)?;
    let csv_mapping = mapping.as_deref().map(CsvMapping::parse).transpose().map_err(value_err)?;
    let options = ReaderOptions { skip_invalid, csv_mapping, ..Default::default() };
    let dumps = dumps.iter().map(|(layer, path)| timed::Dump::new(layer, path)).collect::<Result<Vec<_>, _>>().map_err(value_err)?;
    let failure = Failure::default();
    let policy = match &policy_class {
        None => None,
        Some(cls) => Some(PyPolicy::new(cls, config.resolve().map_err(value_err)?.cache_blocks, failure.clone())?),
    };
    let out = py.allow_threads(move || {
        let stack = match policy {
            None => timed::TimedRun::new(&config),
            Some(p) => timed::TimedRun::with_policy(&config, |_| Ok(Box::new(p))),
        }
        .map_err(value_err)?;
        let path = Path::new(&trace);
        let report = timed::run_stack_file(stack, path, format, &options, &dumps).map_err(|e| crate::to_py(e, Some(path)))?;
        serde_json::to_string(&report).map_err(value_err)
    });
    match take_failure(&failure) {
        Some(e) => Err(e),
        None => out,
    }
}

/// Adds the timed-stack functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_timed, m)?)
}
