//! `iostack._core.kdsim_train` and `kdsim_accuracy`: KDSim's table training and virtual-disk
//! accuracy from Python (wrapped by `iostack.kdsim_train` and `iostack.kdsim_accuracy`), the
//! same code as `iostack kdsim train` and `iostack kdsim accuracy --json`.

use std::path::{Path, PathBuf};

use iostack::engine::timed::StackConfig;
use iostack::kdsim::accuracy::{self, AccuracyConfig};
use iostack::kdsim::train::{self, TrainConfig};
use iostack::trace::{Format, ReaderOptions};
use pyo3::exceptions::{PyFileNotFoundError, PyValueError};
use pyo3::prelude::*;

fn value_err(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Trains a table against `device` and writes it to `output`; returns a JSON summary.
#[pyfunction]
#[pyo3(signature = (device, output, samples=64, seed=0, values_per_cell=64, capacity=None, gap="0ns".to_string(), mixed=false))]
#[allow(clippy::too_many_arguments)]
fn kdsim_train(
    py: Python<'_>,
    device: String,
    output: PathBuf,
    samples: u32,
    seed: u64,
    values_per_cell: usize,
    capacity: Option<String>,
    gap: String,
    mixed: bool,
) -> PyResult<String> {
    let mut dev = iostack::device::build(&device).map_err(value_err)?;
    let capacity_bytes = match capacity.as_deref() {
        None => None,
        Some(s) => Some(match iostack::units::Size::parse("capacity", s).map_err(value_err)? {
            iostack::units::Size::Bytes(b) | iostack::units::Size::Count(b) => b,
        }),
    };
    let gap_ns = iostack::units::parse_duration_ns("gap", &gap).map_err(value_err)?;
    let cfg = TrainConfig { samples, seed, values_per_cell, capacity_bytes, gap_ns, mixed };
    py.allow_threads(move || {
        let (table, sum) = train::train(dev.as_mut(), &cfg, &mut |_, _| {}).map_err(value_err)?;
        table.save(&output).map_err(|e| crate::to_py(e, Some(&output)))?;
        let v = serde_json::json!({
            "device": dev.name(),
            "output": output.display().to_string(),
            "requests": sum.requests,
            "cells": sum.cells,
            "unreachable": sum.unreachable,
            "moves": sum.moves,
            "columns": table.columns(),
            "capacity_bytes": table.capacity_bytes(),
            "values_per_cell": table.values_per_cell(),
            "device_ns": sum.device_ns,
        });
        Ok(v.to_string())
    })
}

/// Replays `trace` with the virtual disk beside `device`; returns the JSON of
/// `iostack kdsim accuracy --json`. `stack` is a JSON object of stack fields (sched, cache,
/// policy, prefetch, max_request).
#[pyfunction]
#[pyo3(signature = (trace, stack, table=None, window=1000, size_blind=false, values_per_cell=64, save_table=None, format=None))]
#[allow(clippy::too_many_arguments)]
fn kdsim_accuracy(
    py: Python<'_>,
    trace: PathBuf,
    stack: String,
    table: Option<PathBuf>,
    window: u64,
    size_blind: bool,
    values_per_cell: usize,
    save_table: Option<PathBuf>,
    format: Option<String>,
) -> PyResult<String> {
    if !trace.exists() {
        return Err(PyFileNotFoundError::new_err(format!("{}: no such file", trace.display())));
    }
    if let Some(t) = &table {
        if !t.exists() {
            return Err(PyFileNotFoundError::new_err(format!("table: {}: no such file", t.display())));
        }
    }
    let config = StackConfig::parse(&stack, "stack").map_err(value_err)?;
    let format = format.as_deref().map(Format::from_name).transpose().map_err(value_err)?;
    let acc = AccuracyConfig { table, window, size_blind, values_per_cell };
    py.allow_threads(move || {
        let options = ReaderOptions::default();
        let path: &Path = &trace;
        let (report, result, learned) =
            accuracy::run_with_table(&config, &acc, &mut || Ok(iostack::trace::open(path, format, &options)?)).map_err(|e| crate::to_py(e, Some(path)))?;
        if let Some(p) = &save_table {
            learned.save(p).map_err(|e| crate::to_py(e, Some(p)))?;
        }
        Ok(accuracy::report_json(path, &report, &acc, &result).to_string())
    })
}

/// Adds the KDSim functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(kdsim_train, m)?)?;
    m.add_function(wrap_pyfunction!(kdsim_accuracy, m)?)
}
