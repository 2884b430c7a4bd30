//! Observers for the stack's boundaries: a dump of the stream to a trace file, and a locality
//! probe ([`crate::metrics::LocalityProbe`]).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use super::engine::BoundaryObserver;
use crate::error::Error;
use crate::metrics::{LocalityProbe, LocalityReport, ProbeConfig};
use crate::trace::write::{self, TraceWriter};
use crate::trace::{Format, Request};

/// Writes every request crossing a boundary to a trace file (iostack CSV unless the file name
/// asks for another writable format, e.g. `.bin`, or a compressed `.csv.zst`).
pub struct DumpObserver {
    path: PathBuf,
    /// Where the dump is written until it is complete (see `write::OutputFile`).
    out: write::OutputFile,
    writer: Option<Box<dyn TraceWriter>>,
    error: Option<String>,
}

impl DumpObserver {
    /// A dump to `path`, written to a temporary file beside it and renamed over it when the run
    /// finishes (or written through to a character device or pipe): a run that fails leaves no
    /// half-written dump, and `path`'s old content, if any, stays until the new one is complete.
    pub fn create(path: &Path) -> Result<DumpObserver, Error> {
        let format = write::format_for_output(path).unwrap_or(Format::Csv);
        let out = write::OutputFile::new(path)?;
        let writer = write::create_named(out.path(), path, format)?;
        Ok(DumpObserver { path: path.to_path_buf(), out, writer: Some(writer), error: None })
    }

    fn complete(&mut self) -> Result<u64, String> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        let n = match self.writer.take() {
            Some(w) => w.finish().map_err(|e| e.to_string())?,
            None => 0,
        };
        self.out.commit().map_err(|e| format!("{}: {e}", self.path.display()))?;
        Ok(n)
    }
}

impl BoundaryObserver for DumpObserver {
    fn observe(&mut self, r: &Request) {
        if self.error.is_some() {
            return;
        }
        if let Some(w) = self.writer.as_mut() {
            if let Err(e) = w.write(r) {
                self.error = Some(e.to_string());
            }
        }
    }
    fn finish(&mut self) -> Result<serde_json::Value, String> {
        let n = self.complete()?;
        Ok(serde_json::json!({ "dump": self.path.display().to_string(), "requests": n }))
    }
}

/// Measures the locality (stack and block distance, affinity) of the stream crossing a boundary.
pub struct ProbeObserver {
    probe: LocalityProbe,
}

impl ProbeObserver {
    pub fn new(config: ProbeConfig) -> ProbeObserver {
        ProbeObserver { probe: LocalityProbe::new(config) }
    }
}

impl BoundaryObserver for ProbeObserver {
    #[inline]
    fn observe(&mut self, r: &Request) {
        self.probe.observe_request(r);
    }
    fn finish(&mut self) -> Result<serde_json::Value, String> {
        serde_json::to_value(self.probe.report()).map_err(|e| e.to_string())
    }
}

/// A locality probe whose report the owner reads after the run, through a clone kept outside
/// the engine (how [`super::TimedRun`] fills [`super::BoundaryLocality`]). Its `finish` adds
/// nothing to the report's `probes`.
#[derive(Clone)]
pub struct SharedProbe {
    probe: Rc<RefCell<LocalityProbe>>,
}

impl SharedProbe {
    pub fn new(config: ProbeConfig) -> SharedProbe {
        SharedProbe { probe: Rc::new(RefCell::new(LocalityProbe::new(config))) }
    }

    pub fn report(&self) -> LocalityReport {
        self.probe.borrow().report()
    }
}

impl BoundaryObserver for SharedProbe {
    #[inline]
    fn observe(&mut self, r: &Request) {
        self.probe.borrow_mut().observe_request(r);
    }
    fn finish(&mut self) -> Result<serde_json::Value, String> {
        Ok(serde_json::Value::Null)
    }
}
