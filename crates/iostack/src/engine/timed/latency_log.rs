//! `--latency-log PATH`: every device request of a timed run with the times blktrace records for
//! it, its Q (queued: entered the I/O scheduler), D (dispatched to the device) and C (completed)
//! events, so that the per-request latencies btt derives (Q2D, D2C, Q2C) can be computed from
//! it, or the log compared with a blktrace of a real system.
//!
//! CSV with a header, one line per dispatched request, in completion order:
//!
//! ```text
//! device,sector,sectors,op,pid,cause,sync,queue_ns,dispatch_ns,start_ns,complete_ns
//! ```
//!
//! `device` is the trace's device id, `sector` and `sectors` are in 512-byte sectors, `op` is
//! `R` or `W` (blktrace's RWBS letter), `pid` the process the request is for, `cause` is
//! `demand`, `prefetch` or `writeback`, `sync` whether a process waits for it. Times are the
//! run's virtual nanoseconds (0 is the first request's trace time): `queue_ns` is when the
//! request entered the scheduler (the earliest of its parts when the scheduler merged several,
//! as a back-merged request keeps its first Q), `dispatch_ns` when the scheduler handed it to
//! the device (D), `start_ns` when the device began serving it (later than D only when the
//! device holds several requests, `queue_depth` > 1), `complete_ns` when it completed (C).
//!
//! The file is written beside `PATH` under a temporary name and renamed into place when the run
//! completes, as a dump is: a run that fails leaves no partial log and an existing file is
//! replaced only by a complete one.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, TraceError};
use crate::sched::{Cause, IoRequest};
use crate::trace::write::OutputFile;

/// The header line of the log.
pub const HEADER: &str = "device,sector,sectors,op,pid,cause,sync,queue_ns,dispatch_ns,start_ns,complete_ns";

/// The log being written.
pub struct LatencyLog {
    path: PathBuf,
    out: OutputFile,
    writer: BufWriter<std::fs::File>,
    rows: u64,
    error: Option<std::io::Error>,
}

impl LatencyLog {
    /// A log to `path`, through a temporary file until [`LatencyLog::finish`].
    pub fn create(path: &Path) -> Result<LatencyLog, Error> {
        let out = OutputFile::new(path)?;
        let file = std::fs::File::create(out.path()).map_err(|e| TraceError::io(path, &e))?;
        let mut writer = BufWriter::with_capacity(1 << 16, file);
        writeln!(writer, "{HEADER}").map_err(|e| TraceError::io(path, &e))?;
        Ok(LatencyLog { path: path.to_path_buf(), out, writer, rows: 0, error: None })
    }

    /// One completed request; `device` is the trace's id, `sectors_per_block` converts blocks.
    pub(crate) fn record(&mut self, r: &IoRequest, device: u32, sectors_per_block: u64, dispatch_ns: u64, start_ns: u64, complete_ns: u64) {
        if self.error.is_some() {
            return;
        }
        let cause = match r.cause {
            Cause::Demand => "demand",
            Cause::Prefetch => "prefetch",
            Cause::Writeback => "writeback",
        };
        let op = if r.op.is_write() { 'W' } else { 'R' };
        let res = writeln!(
            self.writer,
            "{device},{},{},{op},{},{cause},{},{},{dispatch_ns},{start_ns},{complete_ns}",
            r.block * sectors_per_block,
            r.blocks as u64 * sectors_per_block,
            r.pid,
            r.sync as u8,
            r.arrival_ns,
        );
        match res {
            Ok(()) => self.rows += 1,
            Err(e) => self.error = Some(e),
        }
    }

    /// Completes the file and moves it into place; the number of requests written.
    pub fn finish(mut self) -> Result<u64, Error> {
        let io = |e: std::io::Error| -> Error { TraceError::io(&self.path, &e).into() };
        if let Some(e) = self.error.take() {
            return Err(io(e));
        }
        self.writer.flush().map_err(io)?;
        self.writer.get_ref().sync_all().map_err(io)?;
        self.out.commit()?;
        Ok(self.rows)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}
