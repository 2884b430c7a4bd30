//! Observers for the stack's boundaries: a dump of the stream to a trace file, a record of it in
//! memory, and a locality probe ([`crate::metrics::LocalityProbe`]).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::engine::BoundaryObserver;
use crate::error::Error;
use crate::metrics::{LocalityProbe, LocalityReport, ProbeConfig};
use crate::trace::write::{self, TraceWriter};
use crate::trace::{Format, Request};

/// Keeps every request crossing a boundary in memory, in the order it crossed; clones share
/// the list, so the caller keeps one and hands the run another.
#[derive(Clone, Default)]
pub struct RequestRecorder(pub Rc<RefCell<Vec<Request>>>);

impl BoundaryObserver for RequestRecorder {
    fn observe(&mut self, r: &Request) {
        self.0.borrow_mut().push(*r);
    }
    fn finish(&mut self) -> Result<serde_json::Value, String> {
        Ok(serde_json::Value::Null)
    }
}

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

/// Measures the locality (stack and block distance, affinity) of the stream crossing a boundary,
/// on its own thread ([`ProbeThread`]).
pub struct ProbeObserver {
    probe: ProbeThread,
}

impl ProbeObserver {
    pub fn new(config: ProbeConfig) -> ProbeObserver {
        ProbeObserver { probe: ProbeThread::new(config) }
    }
}

impl BoundaryObserver for ProbeObserver {
    #[inline]
    fn observe(&mut self, r: &Request) {
        self.probe.observe(r);
    }
    fn finish(&mut self) -> Result<serde_json::Value, String> {
        serde_json::to_value(self.probe.probe().report()).map_err(|e| e.to_string())
    }
}

/// A locality probe whose report the owner reads after the run, through a clone kept outside
/// the engine (how [`super::TimedRun`] fills [`super::BoundaryLocality`]). Its `finish` adds
/// nothing to the report's `probes`.
#[derive(Clone)]
pub struct SharedProbe {
    probe: Rc<RefCell<ProbeThread>>,
}

impl SharedProbe {
    pub fn new(config: ProbeConfig) -> SharedProbe {
        SharedProbe { probe: Rc::new(RefCell::new(ProbeThread::new(config))) }
    }

    /// The locality of the stream so far; waits for the probe's thread to measure every request
    /// observed, and ends it (observe nothing after asking for the report).
    pub fn report(&self) -> LocalityReport {
        self.probe.borrow_mut().probe().report()
    }
}

impl BoundaryObserver for SharedProbe {
    #[inline]
    fn observe(&mut self, r: &Request) {
        self.probe.borrow_mut().observe(r);
    }
    fn finish(&mut self) -> Result<serde_json::Value, String> {
        Ok(serde_json::Value::Null)
    }
}

/// Requests handed to a probe's thread at once: large enough that the hand-over (one channel
/// message) costs nothing per request, small enough to stay in the L2 cache.
const BATCH: usize = 2048;
/// Batches in flight per probe: bounds the memory a probe that falls behind holds (the engine
/// then waits for it) at a few hundred KiB.
const IN_FLIGHT: usize = 4;

/// A [`LocalityProbe`] fed in batches on a thread of its own, so that measuring a boundary costs
/// the engine's thread one copy of each request. The probe sees exactly the requests observed, in
/// order, so its report is the one an inline probe would make, whatever the number of threads
/// or how they are scheduled. Where no thread can be started the probe runs inline.
pub struct ProbeThread {
    state: ProbeState,
}

/// What the engine's thread sends a probe's thread.
enum ToProbe {
    /// Requests to measure, in order.
    Batch(Vec<Request>),
    /// Send a copy of the probe as it is after the batches before (see [`ProbeThread::fork`]).
    Fork(SyncSender<LocalityProbe>),
}

enum ProbeState {
    Running {
        batch: Vec<Request>,
        to_probe: SyncSender<ToProbe>,
        /// Emptied batches coming back for reuse.
        recycled: Receiver<Vec<Request>>,
        thread: JoinHandle<LocalityProbe>,
    },
    /// Measured inline: the thread has finished (its probe joined back) or never started.
    Inline(LocalityProbe),
}

impl ProbeThread {
    pub fn new(config: ProbeConfig) -> ProbeThread {
        Self::start(move || LocalityProbe::new(config), || LocalityProbe::new(config))
    }

    /// A probe thread that measures on from where `self` is now: its probe starts as a copy of
    /// `self`'s after every request `self` observed so far (copied on `self`'s thread, in order,
    /// so the engine's thread does not wait for it).
    pub fn fork(&mut self) -> ProbeThread {
        match &mut self.state {
            ProbeState::Running { batch, to_probe, recycled, .. } => {
                let next = recycled.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
                let pending = std::mem::replace(batch, next);
                let (send_copy, copy) = sync_channel::<LocalityProbe>(1);
                if to_probe.send(ToProbe::Batch(pending)).is_err() || to_probe.send(ToProbe::Fork(send_copy)).is_err() {
                    self.join();
                    return self.fork();
                }
                // If the copy never comes (the source's thread panicked), the source's join
                // raises that panic; this probe then measures from empty, which nobody reads.
                let empty = || LocalityProbe::new(ProbeConfig::default());
                let source = to_probe.clone();
                Self::start(move || copy.recv().unwrap_or_else(|_| empty()), move || {
                    // No thread: ask again, and wait here for the copy (the first request for
                    // it went with the closure that could not start).
                    let (send_copy, copy) = sync_channel::<LocalityProbe>(1);
                    match source.send(ToProbe::Fork(send_copy)) {
                        Ok(()) => copy.recv().unwrap_or_else(|_| empty()),
                        Err(_) => empty(),
                    }
                })
            }
            ProbeState::Inline(p) => {
                let copy = p.clone();
                let fallback = p.clone();
                Self::start(move || copy, move || fallback)
            }
        }
    }

    /// Starts a thread measuring from the probe `first` makes on it; `inline` makes the probe
    /// where no thread can be started.
    fn start(first: impl FnOnce() -> LocalityProbe + Send + 'static, inline: impl FnOnce() -> LocalityProbe) -> ProbeThread {
        let (to_probe, messages) = sync_channel::<ToProbe>(IN_FLIGHT);
        let (give_back, recycled) = channel::<Vec<Request>>();
        let spawned = std::thread::Builder::new().name("iostack-probe".into()).spawn(move || {
            let mut probe = first();
            for message in messages {
                match message {
                    ToProbe::Batch(mut batch) => {
                        probe.observe_batch(&batch);
                        batch.clear();
                        let _ = give_back.send(batch);
                    }
                    ToProbe::Fork(to) => {
                        let _ = to.send(probe.clone());
                    }
                }
            }
            probe
        });
        let state = match spawned {
            Ok(thread) => ProbeState::Running { batch: Vec::with_capacity(BATCH), to_probe, recycled, thread },
            Err(_) => ProbeState::Inline(inline()),
        };
        ProbeThread { state }
    }

    #[inline]
    pub fn observe(&mut self, r: &Request) {
        match &mut self.state {
            ProbeState::Running { batch, .. } => {
                batch.push(*r);
                if batch.len() == BATCH {
                    self.send_batch();
                }
            }
            ProbeState::Inline(p) => {
                p.observe_request(r);
            }
        }
    }

    /// Observes `requests` in order, as [`ProbeThread::observe`] on each would, copying them
    /// into the batch in bulk.
    pub fn observe_all(&mut self, mut requests: &[Request]) {
        while !requests.is_empty() {
            match &mut self.state {
                ProbeState::Running { batch, .. } => {
                    let take = (BATCH - batch.len()).min(requests.len());
                    batch.extend_from_slice(&requests[..take]);
                    requests = &requests[take..];
                    if batch.len() == BATCH {
                        self.send_batch();
                    }
                }
                ProbeState::Inline(p) => {
                    for r in requests {
                        p.observe_request(r);
                    }
                    return;
                }
            }
        }
    }

    /// Hands the batch to the probe's thread and starts the next.
    fn send_batch(&mut self) {
        let ProbeState::Running { batch, to_probe, recycled, .. } = &mut self.state else { return };
        let next = recycled.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let full = std::mem::replace(batch, next);
        if to_probe.send(ToProbe::Batch(full)).is_err() {
            // The thread is gone (it panicked): joining it raises its panic here.
            self.join();
        }
    }

    /// The probe, once every request observed so far is measured (the thread, if any, ends;
    /// later requests are measured inline).
    pub fn probe(&mut self) -> &mut LocalityProbe {
        self.join();
        match &mut self.state {
            ProbeState::Inline(p) => p,
            ProbeState::Running { .. } => unreachable!("joined above"),
        }
    }

    fn join(&mut self) {
        let state = std::mem::replace(&mut self.state, ProbeState::Inline(LocalityProbe::new(ProbeConfig::default())));
        self.state = match state {
            ProbeState::Running { batch, to_probe, recycled, thread } => {
                let _ = to_probe.send(ToProbe::Batch(batch));
                drop(to_probe);
                drop(recycled);
                match thread.join() {
                    Ok(probe) => ProbeState::Inline(probe),
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            inline => inline,
        };
    }
}
