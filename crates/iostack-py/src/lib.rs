//! Python bindings: a thin layer over the `iostack` core and the command line.

use pyo3::prelude::*;

mod timed;

/// Runs the `iostack` command line with `argv` (program name first); returns the exit code.
#[pyfunction]
fn main(py: Python<'_>, argv: Vec<String>) -> i32 {
    py.allow_threads(|| iostack_cli::run(argv))
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(main, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    timed::register(m)?;
    Ok(())
}
