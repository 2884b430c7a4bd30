//! `iostack._core.run_timed`: the timed stack from Python (wrapped by `iostack.run`).

use std::path::Path;

use iostack::engine::timed::{self, Boundary, BoundaryObserver, DumpObserver, StackConfig};
use iostack::trace::{self, CsvMapping, Format, ReaderOptions};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;

fn value_err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Replays `trace` through the stack described by `config` (a JSON object with the fields of
/// the `iostack run` config; missing fields take their defaults) and returns the result as JSON.
/// `dumps` maps boundaries (front, cache, sched, device) to trace files to write; `locality`,
/// when given, overrides the config's `locality` (probes at the four boundaries).
#[pyfunction]
#[pyo3(signature = (trace, config, dumps=Vec::new(), locality=None, format=None, mapping=None, skip_invalid=false))]
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
    py.allow_threads(move || {
        // Check the stack and the trace before creating any output file.
        let stack = timed::TimedRun::new(&config).map_err(value_err)?;
        drop(trace::open(Path::new(&trace), format, &options).map_err(value_err)?);
        let mut observers: Vec<(Boundary, Box<dyn BoundaryObserver>)> = Vec::new();
        for (layer, path) in &dumps {
            let b = Boundary::parse(layer).ok_or_else(|| value_err(format!("dump: unknown layer `{layer}`; valid: front, cache, sched, device")))?;
            if let (Ok(a), Ok(t)) = (std::fs::canonicalize(path), std::fs::canonicalize(&trace)) {
                if a == t {
                    return Err(value_err(format!("dump: {path} is the trace being read")));
                }
            }
            observers.push((b, Box::new(DumpObserver::create(Path::new(path)).map_err(|e| PyOSError::new_err(e.to_string()))?)));
        }
        let path = Path::new(&trace);
        let mut open = || -> Result<Box<dyn trace::TraceReader>, iostack::error::Error> { Ok(trace::open(path, format, &options)?) };
        let report = timed::run_built(stack, &mut open, observers).map_err(|e| match e {
            iostack::error::Error::Config(c) => value_err(c),
            other => PyOSError::new_err(other.to_string()),
        })?;
        serde_json::to_string(&report).map_err(value_err)
    })
}

/// Adds the timed-stack functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_timed, m)?)
}
