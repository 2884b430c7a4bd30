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
use pyo3::types::{PyDict, PyList, PyType};

use iostack::cache::Policy;
use iostack::engine::sim::{sweep_sizes, sweep_with, CacheSize, FileTrace, MemoryTrace, Mode, RunSpec, SimResult, SweepConfig, TraceSource};
use iostack::error::{Error, TraceError};
use iostack::trace::{read_all, CsvMapping, Format, Op, ReaderOptions, Request};

mod analyze;
mod kdsim;
mod policy;

mod sweep;
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

/// A configuration error with the options named as Python spells them.
fn py_config_err(c: &iostack::ConfigError) -> PyErr {
    PyValueError::new_err(c.to_string().replacen("--cache", "cache_size", 1).replacen("--policy", "policy", 1))
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
    // The checks every trace reader makes (length at most 4 GiB, the range within 2^64, time
    // within 2^62 ns): a terabyte-long row would make block-mode runs walk billions of pages.
    (0..n)
        .map(|i| {
            let r = Request {
                time_ns: time_ns[i],
                offset: offset[i],
                length: length[i],
                pid: pid[i],
                device: device[i],
                op: if op[i] != 0 { Op::Write } else { Op::Read },
                file: None,
            };
            iostack::trace::parse::check_request(r)
                .map_err(|e| PyValueError::new_err(format!("row {i}: column `{}`: {}", e.field, e.message)))
        })
        .collect()
}

fn result_dict<'py>(py: Python<'py>, r: &SimResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("trace", &r.trace)?;
    d.set_item("format", &r.format)?;
    d.set_item("policy", &r.policy)?;
    d.set_item("cache_size", r.cache_size)?;
    d.set_item("cache_size_spec", &r.cache_size_spec)?;
    if let Some(fp) = r.footprint {
        d.set_item("footprint", fp)?;
    }
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
    d.set_item("requests_larger_than_cache", r.requests_larger_than_cache)?;
    d.set_item("skipped", r.skipped)?;
    d.set_item("cached_objects", r.cached_objects)?;
    d.set_item("metadata_bytes_per_object", r.metadata_bytes_per_object)?;
    if let Some(series) = &r.series {
        // As JSON text, which the Python layer turns into a table.
        d.set_item("series", serde_json::to_string(series).map_err(|e| PyValueError::new_err(e.to_string()))?)?;
    }
    if let Some(procs) = &r.processes {
        let list = PyList::empty(py);
        for p in procs {
            let e = PyDict::new(py);
            e.set_item("pid", p.pid)?;
            e.set_item("requests", p.requests)?;
            e.set_item("hits", p.hits)?;
            e.set_item("misses", p.misses)?;
            e.set_item("miss_ratio", p.miss_ratio)?;
            if let (Some(b), Some(bh), Some(bm)) = (p.blocks, p.block_hits, p.block_misses) {
                e.set_item("blocks", b)?;
                e.set_item("block_hits", bh)?;
                e.set_item("block_misses", bm)?;
            }
            list.append(e)?;
        }
        d.set_item("processes", list)?;
    }
    Ok(d)
}

/// Simulates every (policy, cache size) pair over one trace; returns one dict per run, policies
/// outer and sizes inner. `trace` is a path; or pass `path=None` and the request arrays.
/// `cache_sizes` are strings as on the command line (`489`, `64MiB`).
#[pyfunction]
#[pyo3(signature = (path, policies, cache_sizes, mode="object", unit_size=false, page_size=4096, format=None, skip_invalid=false, threads=0, arrays=None, name=None, files=None, hints=None, hints_json=None, per_process=false, mapping=None, interval=None))]
#[allow(clippy::too_many_arguments)]
fn simulate<'py>(
    py: Python<'py>,
    path: Option<PathBuf>,
    policies: Vec<Bound<'py, PyAny>>,
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
    files: Option<(PyReadonlyArray1<'py, i64>, PyReadonlyArray1<'py, u64>)>,
    hints: Option<String>,
    hints_json: Option<String>,
    per_process: bool,
    mapping: Option<&str>,
    interval: Option<&str>,
) -> PyResult<Bound<'py, PyList>> {
    let interval = interval.map(|t| iostack::engine::series::Interval::parse("interval", t)).transpose().map_err(|c| py_config_err(&c))?;
    let err = |e: iostack::ConfigError| PyValueError::new_err(e.to_string());
    let hints = match (hints, hints_json) {
        (Some(h), None) => Some(iostack::hints::HintsSpec::parse(&h).map_err(err)?),
        (None, Some(j)) => Some(iostack::hints::HintsSpec::File(iostack::hints::Hints::parse_json(&j, "hints").map_err(err)?)),
        (None, None) => None,
        (Some(_), Some(_)) => return Err(PyValueError::new_err("hints: give a path, an oracle spec or a mapping, not two")),
    };
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
    if cache_sizes.is_empty() {
        return Err(PyValueError::new_err("cache_size: no cache size given"));
    }
    // A policy is a registered name or a Python class. Names take every kind of size, relative
    // ones included; with a class among them, the runs are built here (each class instance with
    // the GIL, in the order of the runs) and sizes must be absolute.
    let classes: Vec<Option<Bound<'py, PyType>>> = policies.iter().map(|p| p.downcast::<PyType>().ok().cloned()).collect();
    let names: Vec<String> = policies
        .iter()
        .zip(&classes)
        .map(|(p, c)| match c {
            Some(cls) => policy::class_name(cls.as_any()),
            None => p.extract::<String>(),
        })
        .collect::<PyResult<_>>()?;
    let failure = policy::Failure::default();
    let mut built: Option<(Vec<RunSpec>, Vec<Option<Box<dyn Policy>>>)> = None;
    if classes.iter().all(Option::is_none) {
        iostack::engine::sim::check_runs(&names, &cache_sizes, mode).map_err(|c| py_config_err(&c))?;
    } else {
        let (mut runs, mut boxes) = (Vec::new(), Vec::new());
        for (cls, name) in classes.iter().zip(&names) {
            for text in &cache_sizes {
                let CacheSize::Absolute(size) = CacheSize::parse("cache_size", text).map_err(|c| py_config_err(&c))? else {
                    return Err(PyValueError::new_err(
                        "cache_size: sizes relative to the trace (`1%`, `0.01`) are not available with a Python policy class; give counts or byte sizes",
                    ));
                };
                let c = mode.capacity(size, text).map_err(|c| py_config_err(&c))?;
                match cls {
                    Some(cls) => {
                        if c == 0 {
                            return Err(PyValueError::new_err("cache_size: the cache size must be at least 1"));
                        }
                        boxes.push(Some(Box::new(policy::PyPolicy::new(cls, c, failure.clone())?) as Box<dyn Policy>));
                    }
                    None => boxes.push(None),
                }
                runs.push(RunSpec { policy: name.clone(), capacity: c });
            }
        }
        built = Some((runs, boxes));
    }
    let format = parse_format(format)?;
    let source: Box<dyn TraceSource> = match (path.as_ref(), arrays) {
        (Some(p), None) => {
            let csv_mapping = mapping.map(CsvMapping::parse).transpose().map_err(|e| PyValueError::new_err(e.to_string()))?;
            let options = ReaderOptions { skip_invalid, csv_mapping, ..Default::default() };
            let p2 = p.clone();
            Box::new(py.allow_threads(move || FileTrace::new(p2, format, options)).map_err(|e| trace_to_py(&e, Some(p)))?)
        }
        (None, Some((o, l, t, op, pid, dev))) => {
            let mut reqs = requests_from_arrays(o, l, t, op, pid, dev)?;
            if let Some((ids, offs)) = files {
                let (ids, offs) = (ids.as_slice()?, offs.as_slice()?);
                if ids.len() != reqs.len() || offs.len() != reqs.len() {
                    return Err(PyValueError::new_err("columns `file_id` and `file_offset` must be as long as `offset`"));
                }
                for (r, (&id, &off)) in reqs.iter_mut().zip(ids.iter().zip(offs)) {
                    if id >= 0 {
                        r.file = Some(iostack::trace::FileRef { id: id as u64, offset: off, size: None });
                    }
                }
            }
            Box::new(MemoryTrace::new(reqs, name.unwrap_or_else(|| "<memory>".to_string())))
        }
        _ => return Err(PyValueError::new_err("give either a trace path or request arrays")),
    };
    let mut cfg = SweepConfig::new(mode);
    cfg.threads = threads;
    cfg.per_process = per_process;
    cfg.interval = interval;
    cfg.hints = hints.map(std::sync::Arc::new);
    let results = match built {
        None => py.allow_threads(|| sweep_sizes(&*source, &names, &cache_sizes, &cfg, page_size, &mut |_| {})),
        Some((runs, mut boxes)) => py.allow_threads(|| {
            let mut build = |i: usize, spec: &RunSpec| match boxes[i].take() {
                Some(p) => Ok(p),
                None => iostack::cache::build(&spec.policy, spec.capacity),
            };
            sweep_with(&*source, &runs, &cfg, page_size, None, &mut |_| {}, &mut build)
        }),
    };
    if let Some(e) = policy::take_failure(&failure) {
        return Err(e);
    }
    let results = results.map_err(|e| match e {
        // Option names as Python spells them.
        Error::Config(c) => py_config_err(&c),
        e => to_py(e, path.as_deref()),
    })?;
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
    m.add_class::<policy::PyAccess>()?;
    analyze::register(m)?;
    timed::register(m)?;
    kdsim::register(m)?;
    sweep::register(m)?;
    Ok(())
}
