//! Observers for the stack's boundaries: a dump of the stream to a trace file, a record of it in
//! memory, and a locality probe ([`crate::metrics::LocalityProbe`]).

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::mpsc::{channel, sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

use super::engine::BoundaryObserver;
use crate::error::Error;
use crate::metrics::probe_request::Recorder;
use crate::metrics::{LocalityProbe, LocalityReport, ProbeConfig, ProbeRequest};
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
        serde_json::to_value(self.probe.report(0)).map_err(|e| e.to_string())
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
        self.probe.borrow_mut().report(0)
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
const BATCH: usize = 4096;
/// Batches in flight per probe: enough that the probe's bursts (its key table doubling, its
/// time axis compacting: tens of milliseconds on large traces) do not stop the engine, which
/// runs on meanwhile; few enough that a probe thread that falls behind holds about 3 MiB of
/// records (these 16, the one it measures and those being filled; the engine then waits). With 4 the engine waited through every burst: 5 %
/// more wall time on a 10M-request run on two CPUs (`docs/performance.md`, "Eighth round").
const IN_FLIGHT: usize = 16;

/// What a probe's thread measures: a [`LocalityProbe`] of one or more streams, behind one
/// interface so that a thread can hold either.
pub trait ProbeStreams: Send + std::any::Any {
    /// Streams the probe measures.
    fn streams(&self) -> usize;
    fn observe_batch_in(&mut self, s: usize, batch: &[ProbeRequest]);
    fn observe_in(&mut self, s: usize, r: &ProbeRequest);
    /// Stream `to` (never fed) measures on from where `from` is.
    fn copy_stream(&mut self, from: usize, to: usize);
    fn report_of(&self, s: usize) -> LocalityReport;
    /// A copy of the probe with `streams` (at least as many as it has) streams.
    fn copy_with(&self, streams: usize) -> Box<dyn ProbeStreams>;
    /// Stream `to` (never fed) measures on from where stream `s` of `other` is.
    fn adopt(&mut self, to: usize, other: &dyn ProbeStreams, s: usize);
    fn as_any(&self) -> &dyn std::any::Any;
}

impl<const N: usize> ProbeStreams for LocalityProbe<N> {
    fn streams(&self) -> usize {
        N
    }
    fn observe_batch_in(&mut self, s: usize, batch: &[ProbeRequest]) {
        LocalityProbe::observe_batch_in(self, s, batch);
    }
    fn observe_in(&mut self, s: usize, r: &ProbeRequest) {
        LocalityProbe::observe_in(self, s, r);
    }
    fn copy_stream(&mut self, from: usize, to: usize) {
        LocalityProbe::copy_stream(self, from, to);
    }
    fn report_of(&self, s: usize) -> LocalityReport {
        LocalityProbe::report_of(self, s)
    }
    fn copy_with(&self, streams: usize) -> Box<dyn ProbeStreams> {
        match streams {
            n if n == N => Box::new(self.clone()),
            2 => Box::new(self.widen::<2>()),
            n => panic!("a probe of {N} streams cannot become one of {n}"),
        }
    }
    fn adopt(&mut self, to: usize, other: &dyn ProbeStreams, s: usize) {
        if let Some(one) = other.as_any().downcast_ref::<LocalityProbe<1>>() {
            LocalityProbe::adopt(self, to, one, s);
        } else if let Some(two) = other.as_any().downcast_ref::<LocalityProbe<2>>() {
            LocalityProbe::adopt(self, to, two, s);
        } else {
            panic!("probes of {} streams are not made", other.streams());
        }
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// The most streams one probe thread measures ([`ProbeThread::with_streams`]).
pub const MAX_STREAMS: usize = 2;

fn new_probe(config: ProbeConfig, streams: usize) -> Box<dyn ProbeStreams> {
    match streams {
        1 => Box::new(LocalityProbe::new(config)),
        2 => Box::new(LocalityProbe::<2>::with_streams(config)),
        n => panic!("probes of {n} streams are not made"),
    }
}

/// A [`LocalityProbe`] fed in batches on a thread of its own, so that measuring a boundary costs
/// the engine's thread one copy of each request. The probe sees exactly the requests observed, in
/// order, so its report is the one an inline probe would make, whatever the number of threads
/// or how they are scheduled. Where no thread can be started the probe runs inline.
///
/// A thread may measure several streams (a probe of several streams, sharing one key table):
/// each stream has its own batch, and the batches go to the thread in the order they fill.
pub struct ProbeThread {
    state: ProbeState,
    streams: usize,
    /// The probe's configuration (threads forked from this one measure with it).
    config: ProbeConfig,
    /// What the probe reads of a request.
    recorder: Recorder,
}

/// What the engine's thread sends a probe's thread.
enum ToProbe {
    /// Requests of a stream to measure, in order.
    Batch(usize, Vec<ProbeRequest>),
    /// Send a copy of the probe, with this many streams, as it is after the batches before
    /// (see [`ProbeThread::fork`]).
    Fork(usize, SyncSender<Box<dyn ProbeStreams>>),
    /// [`ProbeStreams::copy_stream`].
    CopyStream(usize, usize),
    /// [`ProbeStreams::adopt`] of stream `.1` of the probe that will come (from another thread)
    /// into stream `.0`.
    Adopt(usize, usize, Receiver<Box<dyn ProbeStreams>>),
}

enum ProbeState {
    Running {
        /// Each stream's batch being filled.
        batches: Vec<Vec<ProbeRequest>>,
        to_probe: SyncSender<ToProbe>,
        /// Emptied batches coming back for reuse.
        recycled: Receiver<Vec<ProbeRequest>>,
        thread: JoinHandle<Box<dyn ProbeStreams>>,
    },
    /// Measured inline: the thread has finished (its probe joined back) or never started.
    Inline(Box<dyn ProbeStreams>),
}

impl ProbeThread {
    pub fn new(config: ProbeConfig) -> ProbeThread {
        Self::with_streams(config, 1)
    }

    /// A probe thread measuring `streams` (1 to [`MAX_STREAMS`]) streams.
    pub fn with_streams(config: ProbeConfig, streams: usize) -> ProbeThread {
        Self::start(config, streams, move || new_probe(config, streams), || new_probe(config, streams))
    }

    /// Streams the thread measures.
    pub fn streams(&self) -> usize {
        self.streams
    }

    /// A probe thread that measures on from where `self` is now: its probe starts as a copy of
    /// `self`'s, with `streams` streams, after every request `self` observed so far (copied on
    /// `self`'s thread, in order, so the engine's thread does not wait for it).
    pub fn fork(&mut self, streams: usize) -> ProbeThread {
        if let ProbeState::Inline(p) = &self.state {
            let copy = p.copy_with(streams);
            let fallback = p.copy_with(streams);
            return Self::start(self.config, streams, move || copy, move || fallback);
        }
        self.send_all();
        let ProbeState::Running { to_probe, .. } = &mut self.state else { return self.fork(streams) };
        let (send_copy, copy) = sync_channel::<Box<dyn ProbeStreams>>(1);
        if to_probe.send(ToProbe::Fork(streams, send_copy)).is_err() {
            self.join();
            return self.fork(streams);
        }
        // If the copy never comes (the source's thread panicked), the source's join raises
        // that panic; this probe then measures from empty, which nobody reads.
        let empty = move || new_probe(ProbeConfig::default(), streams);
        let source = to_probe.clone();
        Self::start(self.config, streams, move || copy.recv().unwrap_or_else(|_| empty()), move || {
            // No thread: ask again, and wait here for the copy (the first request for it went
            // with the closure that could not start).
            let (send_copy, copy) = sync_channel::<Box<dyn ProbeStreams>>(1);
            match source.send(ToProbe::Fork(streams, send_copy)) {
                Ok(()) => copy.recv().unwrap_or_else(|_| empty()),
                Err(_) => empty(),
            }
        })
    }

    /// Stream `to` (never fed) measures on from where stream `from` is now.
    pub fn copy_stream(&mut self, from: usize, to: usize) {
        self.send_batch(from);
        match &mut self.state {
            ProbeState::Running { to_probe, .. } => {
                if to_probe.send(ToProbe::CopyStream(from, to)).is_err() {
                    self.join();
                }
            }
            ProbeState::Inline(p) => p.copy_stream(from, to),
        }
    }

    /// A copy of the probe, as it is after every request observed so far, to come through the
    /// receiver (made on the probe's thread, in order).
    fn copy(&mut self) -> Receiver<Box<dyn ProbeStreams>> {
        let (send_copy, copy) = sync_channel::<Box<dyn ProbeStreams>>(1);
        self.send_all();
        match &mut self.state {
            ProbeState::Running { to_probe, .. } => {
                if let Err(std::sync::mpsc::SendError(ToProbe::Fork(_, send_copy))) = to_probe.send(ToProbe::Fork(self.streams, send_copy)) {
                    self.join();
                    if let ProbeState::Inline(p) = &self.state {
                        let _ = send_copy.send(p.copy_with(self.streams));
                    }
                }
            }
            ProbeState::Inline(p) => {
                let _ = send_copy.send(p.copy_with(self.streams));
            }
        }
        copy
    }

    /// Stream `to` (never fed) measures on from where stream `s` of `source`, another probe
    /// thread of the same configuration, is now.
    pub fn adopt(&mut self, to: usize, source: &mut ProbeThread, s: usize) {
        let copy = source.copy();
        match &mut self.state {
            ProbeState::Running { to_probe, .. } => {
                if let Err(std::sync::mpsc::SendError(ToProbe::Adopt(to, s, copy))) = to_probe.send(ToProbe::Adopt(to, s, copy)) {
                    self.join();
                    if let (ProbeState::Inline(p), Ok(other)) = (&mut self.state, copy.recv()) {
                        p.adopt(to, other.as_ref(), s);
                    }
                }
            }
            ProbeState::Inline(p) => {
                if let Ok(other) = copy.recv() {
                    p.adopt(to, other.as_ref(), s);
                }
            }
        }
    }

    /// Starts a thread measuring from the probe `first` makes on it; `inline` makes the probe
    /// where no thread can be started.
    fn start(config: ProbeConfig, streams: usize, first: impl FnOnce() -> Box<dyn ProbeStreams> + Send + 'static, inline: impl FnOnce() -> Box<dyn ProbeStreams>) -> ProbeThread {
        let (to_probe, messages) = sync_channel::<ToProbe>(IN_FLIGHT);
        let (give_back, recycled) = channel::<Vec<ProbeRequest>>();
        let spawned = std::thread::Builder::new().name("iostack-probe".into()).spawn(move || {
            let mut probe = first();
            for message in messages {
                match message {
                    ToProbe::Batch(s, mut batch) => {
                        probe.observe_batch_in(s, &batch);
                        batch.clear();
                        let _ = give_back.send(batch);
                    }
                    ToProbe::Fork(streams, to) => {
                        let _ = to.send(probe.copy_with(streams));
                    }
                    ToProbe::CopyStream(from, to) => probe.copy_stream(from, to),
                    ToProbe::Adopt(to, s, other) => {
                        // No copy: its thread panicked, and joining it raises that.
                        if let Ok(other) = other.recv() {
                            probe.adopt(to, other.as_ref(), s);
                        }
                    }
                }
            }
            probe
        });
        let state = match spawned {
            Ok(thread) => ProbeState::Running { batches: (0..streams).map(|_| Vec::with_capacity(BATCH)).collect(), to_probe, recycled, thread },
            Err(_) => ProbeState::Inline(inline()),
        };
        ProbeThread { state, streams, config, recorder: Recorder::new(&config) }
    }

    #[inline]
    pub fn observe(&mut self, r: &Request) {
        self.observe_request_in(0, r);
    }

    /// A request of stream `s`.
    #[inline(always)]
    pub fn observe_request_in(&mut self, s: usize, r: &Request) {
        let recorder = self.recorder;
        self.observe_made_in(s, || recorder.record(r));
    }

    /// A request of stream `s`, as its record ([`ProbeRequest::of`] with the probe's
    /// configuration).
    #[inline]
    pub fn observe_in(&mut self, s: usize, r: &ProbeRequest) {
        self.observe_made_in(s, || *r);
    }

    /// A record of stream `s`, which `make` builds where it goes: in place in the batch, so
    /// the engine's thread writes each record once.
    #[inline(always)]
    fn observe_made_in(&mut self, s: usize, make: impl FnOnce() -> ProbeRequest) {
        match &mut self.state {
            ProbeState::Running { batches, .. } => {
                let batch = &mut batches[s];
                batch.push(make());
                if batch.len() == BATCH {
                    self.send_batch(s);
                }
            }
            ProbeState::Inline(p) => {
                p.observe_in(s, &make());
            }
        }
    }

    /// Observes `requests` of stream `s` in order, as [`ProbeThread::observe_in`] on each
    /// would, copying them into the batch in bulk.
    pub fn observe_all_in(&mut self, s: usize, mut requests: &[ProbeRequest]) {
        while !requests.is_empty() {
            match &mut self.state {
                ProbeState::Running { batches, .. } => {
                    let batch = &mut batches[s];
                    let take = (BATCH - batch.len()).min(requests.len());
                    batch.extend_from_slice(&requests[..take]);
                    requests = &requests[take..];
                    if batch.len() == BATCH {
                        self.send_batch(s);
                    }
                }
                ProbeState::Inline(p) => {
                    for r in requests {
                        p.observe_in(s, r);
                    }
                    return;
                }
            }
        }
    }

    /// Hands stream `s`'s batch, if not empty, to the probe's thread and starts the next.
    fn send_batch(&mut self, s: usize) {
        let ProbeState::Running { batches, to_probe, recycled, .. } = &mut self.state else { return };
        if batches[s].is_empty() {
            return;
        }
        let next = recycled.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let full = std::mem::replace(&mut batches[s], next);
        if to_probe.send(ToProbe::Batch(s, full)).is_err() {
            // The thread is gone (it panicked): joining it raises its panic here.
            self.join();
        }
    }

    /// Hands every stream's batch to the probe's thread.
    fn send_all(&mut self) {
        for s in 0..self.streams {
            self.send_batch(s);
        }
    }

    /// The probe, once every request observed so far is measured (the thread, if any, ends;
    /// later requests are measured inline).
    pub fn probe(&mut self) -> &mut dyn ProbeStreams {
        self.join();
        match &mut self.state {
            ProbeState::Inline(p) => p.as_mut(),
            ProbeState::Running { .. } => unreachable!("joined above"),
        }
    }

    /// The report of stream `s` after every request observed (the thread ends).
    pub fn report(&mut self, s: usize) -> LocalityReport {
        self.probe().report_of(s)
    }

    fn join(&mut self) {
        let state = std::mem::replace(&mut self.state, ProbeState::Inline(new_probe(ProbeConfig::default(), 1)));
        self.state = match state {
            ProbeState::Running { batches, to_probe, recycled, thread } => {
                for (s, batch) in batches.into_iter().enumerate() {
                    if !batch.is_empty() {
                        let _ = to_probe.send(ToProbe::Batch(s, batch));
                    }
                }
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
