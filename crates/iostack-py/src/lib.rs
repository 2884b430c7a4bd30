//! Python bindings: a thin layer over the `iostack` core and the command line.
//!
//! The pure-Python package (`python/iostack`) normalises arguments (lists, DataFrames, dtypes)
//! and builds DataFrames; this module does the work with the GIL released. Errors keep the core's
//! message: configuration and trace errors become `ValueError`, a missing file
//! `FileNotFoundError`, other I/O failures `OSError`.

use std::path::PathBuf;

use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use iostack::engine::sim::{sweep, FileTrace, MemoryTrace, Mode, RunSpec, SimResult, SweepConfig, TraceSource};
use iostack::error::{Error, TraceError};
use iostack::trace::{read_all, Format, Op, ReaderOptions, Request};
use iostack::units::Size;

mod analyze;

mod timed;

/// Runs the `iostack` command line with `argv` (program name first); returns the exit code.
/// Arguments are OS strings (Python's file-system encoding, with its surrogate escapes), so a
/// file name that is not UTF-8 reaches the command line as the bytes it is.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<std::ffi::OsString>) -> i32 {
    py.allow_threads(|| iostack_cli::run(argv))
}

/// Maps a core error to the Python exception a user expects, with the same message.
fn to_py(err: Error, path: Option<&std::path::Path>) -> PyErr {
    let msg = err.to_string();
    match &err {
        Error::Io(e) if e.kind() == std::io::ErrorKind::NotFound => PyFileNotFoundError::new_err(msg),
        Error::Io(_) => PyOSError::new_err(msg),
        Error::Trace(t) => trace_to_py(t, path),
        Error::Config(_) => PyValueError::new_err(msg),
    }
}

fn trace_to_py(t: &TraceError, path: Option<&std::path::Path>) -> PyErr {
    let msg = t.to_string();
    if t.location == iostack::error::Location::File {
        if let Some(p) = path {
            match std::fs::metadata(p) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return PyFileNotFoundError::new_err(msg),
                Err(_) => return PyOSError::new_err(msg),
                Ok(m) if m.is_dir() => return PyOSError::new_err(msg),
                Ok(_) => {}
            }
        }
    }
    PyValueError::new_err(msg)
}

fn parse_format(format: Option<&str>) -> PyResult<Option<Format>> {
    format.map(Format::from_name).transpose().map_err(|e| PyValueError::new_err(e.to_string()))
}

/// In-memory requests from numpy arrays (all the same length; `op` is 1 for writes).
#[allow(clippy::too_many_arguments)]
fn requests_from_arrays(
    offset: PyReadonlyArray1<'_, u64>,
    length: PyReadonlyArray1<'_, u64>,
    time_ns: PyReadonlyArray1<'_, u64>,
    op: PyReadonlyArray1<'_, u8>,
    pid: PyReadonlyArray1<'_, u32>,
    device: PyReadonlyArray1<'_, u32>,
) -> PyResult<Vec<Request>> {
    let (offset, length, time_ns, op, pid, device) =
        (offset.as_slice()?, length.as_slice()?, time_ns.as_slice()?, op.as_slice()?, pid.as_slice()?, device.as_slice()?);
    let n = offset.len();
    for (name, len) in [("length", length.len()), ("time_ns", time_ns.len()), ("op", op.len()), ("pid", pid.len()), ("device", device.len())] {
        if len != n {
            return Err(PyValueError::new_err(format!("column `{name}` has {len} values but `offset` has {n}")));
        }
    }
    Ok((0..n)
        .map(|i| Request {
            time_ns: time_ns[i],
            offset: offset[i],
            length: length[i],
            pid: pid[i],
            device: device[i],
            op: if op[i] != 0 { Op::Write } else { Op::Read },
            file: None,
        })
        .collect())
}

fn result_dict<'py>(py: Python<'py>, r: &SimResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("trace", &r.trace)?;
    d.set_item("format", &r.format)?;
    d.set_item("policy", &r.policy)?;
    d.set_item("cache_size", r.cache_size)?;
    d.set_item("cache_unit", &r.cache_unit)?;
    d.set_item("mode", &r.mode)?;
    d.set_item("unit_size", r.unit_size)?;
    d.set_item("page_size", r.page_size)?;
    d.set_item("requests", r.requests)?;
    d.set_item("hits", r.hits)?;
    d.set_item("miss_ratio", r.miss_ratio)?;
    d.set_item("byte_miss_ratio", r.byte_miss_ratio)?;
    if let (Some(b), Some(bh), Some(bm)) = (r.blocks, r.block_hits, r.block_miss_ratio) {
        d.set_item("blocks", b)?;
        d.set_item("block_hits", bh)?;
        d.set_item("block_miss_ratio", bm)?;
    }
    d.set_item("skipped", r.skipped)?;
    d.set_item("cached_objects", r.cached_objects)?;
    d.set_item("metadata_bytes_per_object", r.metadata_bytes_per_object)?;
    Ok(d)
}

/// Simulates every (policy, cache size) pair over one trace; returns one dict per run, policies
/// outer and sizes inner. `trace` is a path; or pass `path=None` and the request arrays.
/// `cache_sizes` are strings as on the command line (`489`, `64MiB`).
#[pyfunction]
#[pyo3(signature = (path, policies, cache_sizes, mode="object", unit_size=false, page_size=4096, format=None, skip_invalid=false, threads=0, arrays=None, name=None))]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    path: Option<PathBuf>,
    policies: Vec<String>,
    cache_sizes: Vec<String>,
    mode: &str,
    unit_size: bool,
    page_size: u64,
    format: Option<&str>,
    skip_invalid: bool,
    threads: usize,
    arrays: Option<(
        PyReadonlyArray1<'py, u64>,
        PyReadonlyArray1<'py, u64>,
        PyReadonlyArray1<'py, u64>,
        PyReadonlyArray1<'py, u8>,
        PyReadonlyArray1<'py, u32>,
        PyReadonlyArray1<'py, u32>,
    )>,
    name: Option<String>,
) -> PyResult<Bound<'py, PyList>> {
    let err = |e: iostack::ConfigError| PyValueError::new_err(e.to_string());
    let mode = match mode.to_ascii_lowercase().as_str() {
        "object" => Mode::Object { unit_size },
        "block" => {
            if unit_size {
                return Err(PyValueError::new_err("unit_size: applies to object mode only (block mode counts blocks)"));
            }
            if page_size == 0 {
                return Err(PyValueError::new_err("page_size: the page size must be at least 1 byte"));
            }
            Mode::Block { page_size }
        }
        other => return Err(PyValueError::new_err(format!("mode: unknown mode `{other}`; valid: object, block"))),
    };
    if policies.is_empty() {
        return Err(PyValueError::new_err("policy: no policy given"));
    }
    let mut caps = Vec::new();
    for text in &cache_sizes {
        caps.push(mode.capacity(Size::parse("cache_size", text).map_err(err)?, text).map_err(err)?);
    }
    if caps.is_empty() {
        return Err(PyValueError::new_err("cache_size: no cache size given"));
    }
    let runs: Vec<RunSpec> =
        policies.iter().flat_map(|p| caps.iter().map(move |&c| RunSpec { policy: p.clone(), capacity: c })).collect();
    let format = parse_format(format)?;
    let source: Box<dyn TraceSource> = match (path.as_ref(), arrays) {
        (Some(p), None) => {
            let options = ReaderOptions { skip_invalid, ..Default::default() };
            let p2 = p.clone();
            Box::new(py.allow_threads(move || FileTrace::new(p2, format, options)).map_err(|e| trace_to_py(&e, Some(p)))?)
        }
        (None, Some((o, l, t, op, pid, dev))) => {
            let reqs = requests_from_arrays(o, l, t, op, pid, dev)?;
            Box::new(MemoryTrace::new(reqs, name.unwrap_or_else(|| "<memory>".to_string())))
        }
        _ => return Err(PyValueError::new_err("give either a trace path or request arrays")),
    };
    let mut cfg = SweepConfig::new(mode);
    cfg.threads = threads;
    let results = py.allow_threads(|| sweep(&*source, &runs, &cfg, page_size, &mut |_| {})).map_err(|e| to_py(e, path.as_deref()))?;
    let out = PyList::empty(py);
    for r in &results {
        out.append(result_dict(py, r)?)?;
    }
    Ok(out)
}

/// Reads a whole trace into numpy arrays: `time_ns`, `offset`, `length` (uint64), `op`
/// (uint8, 1 = write), `pid`, `device` (uint32), and `file_id`, `file_offset` (int64, -1 when a
/// request has no file) when any request names a file. Also `skipped` (an int).
#[pyfunction]
#[pyo3(signature = (path, format=None, skip_invalid=false))]
fn read_trace<'py>(py: Python<'py>, path: PathBuf, format: Option<&str>, skip_invalid: bool) -> PyResult<Bound<'py, PyDict>> {
    let format = parse_format(format)?;
    let options = ReaderOptions { skip_invalid, ..Default::default() };
    let (reqs, skipped) = py
        .allow_threads(|| -> Result<(Vec<Request>, u64), TraceError> {
            let mut reader = iostack::trace::open(&path, format, &options)?;
            let reqs = read_all(&mut *reader)?;
            Ok((reqs, reader.skipped()))
        })
        .map_err(|e| trace_to_py(&e, Some(&path)))?;
    let d = PyDict::new(py);
    d.set_item("time_ns", reqs.iter().map(|r| r.time_ns).collect::<Vec<u64>>().into_pyarray(py))?;
    d.set_item("offset", reqs.iter().map(|r| r.offset).collect::<Vec<u64>>().into_pyarray(py))?;
    d.set_item("length", reqs.iter().map(|r| r.length).collect::<Vec<u64>>().into_pyarray(py))?;
    d.set_item("op", reqs.iter().map(|r| r.op.is_write() as u8).collect::<Vec<u8>>().into_pyarray(py))?;
    d.set_item("pid", reqs.iter().map(|r| r.pid).collect::<Vec<u32>>().into_pyarray(py))?;
    d.set_item("device", reqs.iter().map(|r| r.device).collect::<Vec<u32>>().into_pyarray(py))?;
    if reqs.iter().any(|r| r.file.is_some()) {
        let id: Vec<i64> = reqs.iter().map(|r| r.file.map_or(-1, |f| f.id as i64)).collect();
        let off: Vec<i64> = reqs.iter().map(|r| r.file.map_or(-1, |f| f.offset as i64)).collect();
        d.set_item("file_id", id.into_pyarray(py))?;
        d.set_item("file_offset", off.into_pyarray(py))?;
    }
    d.set_item("skipped", skipped)?;
    Ok(d)
}

/// Names of the registered policies.
#[pyfunction]
fn policies() -> Vec<&'static str> {
    iostack::cache::POLICIES.iter().map(|p| p.name).collect()
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(policies, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    analyze::register(m)?;
    timed::register(m)?;
    Ok(())
}
