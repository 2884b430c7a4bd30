//! A trace reader that decodes on its own thread, a few batches ahead of its consumer.
//!
//! The timed engine runs on one thread and asks for requests one batch at a time; decoding them
//! (parsing text, decompressing, building `Request`s) is work the engine would otherwise wait
//! for. [`BackgroundReader`] moves it to a second thread: the thread fills batches from the
//! inner reader and hands them over through a bounded channel, and the consumer hands the
//! emptied vectors back, so that in steady state no batch is allocated. The requests, their
//! order, errors (at the same place in the stream) and the skipped count are those of the inner
//! reader, so nothing a simulation computes depends on whether it reads in the background.
//! [`BackgroundReader::scanning`] also makes each batch's [`BatchScan`] on the thread, the
//! engine's own pass over the batch (see [`super::scan`]).

use std::path::{Path, PathBuf};
use std::thread::JoinHandle;

use crossbeam_channel::{Receiver, Sender};

use super::scan::BatchScan;
use super::{PageSize, ProcessEvent, Request, TraceReader};
use crate::error::{Location, TraceError};

/// Requests per batch the thread decodes.
const BATCH: usize = 4096;
/// Batches decoded ahead of the consumer.
const AHEAD: usize = 4;

/// The process events read with a batch, and whether the trace can carry any.
type Events = (Vec<ProcessEvent>, bool);

enum Message {
    /// A batch, its scan (when the reader scans), and the inner reader's skipped count after it.
    Batch(Vec<Request>, Option<BatchScan>, u64, Events),
    /// The end of the trace, the final skipped count and the last events.
    End(u64, Events),
    /// The inner reader failed; nothing follows.
    Failed(TraceError),
}

/// Reads a trace on a background thread (see the module documentation).
pub struct BackgroundReader {
    rx: Receiver<Message>,
    recycle: Sender<(Vec<Request>, BatchScan)>,
    /// The batch being handed out, and the position of its next request.
    current: Vec<Request>,
    pos: usize,
    /// The scan of `current` (while `scan_of_current`), or of the batch `read_batch` last
    /// handed out whole (while `scan_handed`); otherwise storage to recycle.
    scan: BatchScan,
    scan_of_current: bool,
    scan_handed: bool,
    path: PathBuf,
    carries_files: bool,
    skipped: u64,
    events: Vec<ProcessEvent>,
    carries_events: bool,
    /// The end, or an error, was received: nothing more comes.
    done: bool,
    worker: Option<JoinHandle<()>>,
}

impl BackgroundReader {
    /// Starts reading `inner` on a new thread.
    pub fn spawn(inner: Box<dyn TraceReader>) -> BackgroundReader {
        Self::start(inner, None)
    }

    /// Starts reading `inner` on a new thread, which also scans each batch with pages of
    /// `pages` ([`BatchScan::scan`]); a consumer that takes a batch whole gets its scan from
    /// [`TraceReader::take_scan`].
    pub fn scanning(inner: Box<dyn TraceReader>, pages: PageSize) -> BackgroundReader {
        Self::start(inner, Some(pages))
    }

    fn start(mut inner: Box<dyn TraceReader>, pages: Option<PageSize>) -> BackgroundReader {
        let path = inner.path().to_path_buf();
        let carries_files = inner.carries_files();
        let (tx, rx) = crossbeam_channel::bounded(AHEAD);
        let (recycle, recycled) = crossbeam_channel::bounded::<(Vec<Request>, BatchScan)>(AHEAD + 2);
        // The largest raw trace time read so far, which the next batch's scan starts from.
        let mut max_raw_ns = 0;
        let worker = std::thread::Builder::new()
            .name("iostack-trace-reader".into())
            .spawn(move || loop {
                let (mut buf, mut scan) = recycled.try_recv().unwrap_or_else(|_| (Vec::with_capacity(BATCH), BatchScan::default()));
                buf.clear();
                let mut scanned = |buf: &[Request]| {
                    pages.map(|pages| {
                        scan.scan(buf, pages, max_raw_ns);
                        max_raw_ns = scan.max_raw_ns;
                        std::mem::take(&mut scan)
                    })
                };
                let events = |inner: &mut Box<dyn TraceReader>| {
                    let mut v = Vec::new();
                    inner.take_events(&mut v);
                    (v, inner.carries_events())
                };
                // A send fails only when the consumer is gone: then stop reading.
                match inner.read_batch(&mut buf, BATCH) {
                    Ok(0) => {
                        let _ = tx.send(Message::End(inner.skipped(), events(&mut inner)));
                        return;
                    }
                    Ok(_) => {
                        let scan = scanned(&buf);
                        if tx.send(Message::Batch(buf, scan, inner.skipped(), events(&mut inner))).is_err() {
                            return;
                        }
                    }
                    Err(e) => {
                        // The requests decoded before the error come first, as they would
                        // from a reader asked one request at a time.
                        if !buf.is_empty() && tx.send(Message::Batch(buf, None, inner.skipped(), events(&mut inner))).is_err() {
                            return;
                        }
                        let _ = tx.send(Message::Failed(e));
                        return;
                    }
                }
            })
            .expect("cannot start the trace reader thread");
        BackgroundReader {
            rx,
            recycle,
            current: Vec::new(),
            pos: 0,
            scan: BatchScan::default(),
            scan_of_current: false,
            scan_handed: false,
            path,
            carries_files,
            skipped: 0,
            events: Vec::new(),
            carries_events: false,
            done: false,
            worker: Some(worker),
        }
    }

    /// Makes `current` hold at least one request not handed out yet; `false` at the end.
    fn next_batch(&mut self) -> Result<bool, TraceError> {
        while self.pos == self.current.len() {
            if self.done {
                return Ok(false);
            }
            let msg = self.rx.recv().unwrap_or_else(|_| {
                Message::Failed(TraceError::new(&self.path, Location::File, None, "the trace reader thread stopped unexpectedly"))
            });
            match msg {
                Message::Batch(batch, scan, skipped, (mut events, carries)) => {
                    self.skipped = skipped;
                    self.events.append(&mut events);
                    self.carries_events = carries;
                    let old = std::mem::replace(&mut self.current, batch);
                    self.pos = 0;
                    self.scan_of_current = scan.is_some();
                    let old_scan = match scan {
                        Some(scan) => std::mem::replace(&mut self.scan, scan),
                        None => BatchScan::default(),
                    };
                    // Full when the thread is ahead by more than it can use: then let it go.
                    let _ = self.recycle.try_send((old, old_scan));
                }
                Message::End(skipped, (mut events, carries)) => {
                    self.skipped = skipped;
                    self.events.append(&mut events);
                    self.carries_events = carries;
                    self.done = true;
                }
                Message::Failed(e) => {
                    self.done = true;
                    return Err(e);
                }
            }
        }
        Ok(true)
    }
}

impl TraceReader for BackgroundReader {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        self.scan_handed = false;
        if !self.next_batch()? {
            return Ok(None);
        }
        self.scan_of_current = false;
        self.pos += 1;
        Ok(Some(self.current[self.pos - 1]))
    }

    fn read_batch(&mut self, buf: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        self.scan_handed = false;
        if max == 0 || !self.next_batch()? {
            return Ok(0);
        }
        let rest = self.current.len() - self.pos;
        if self.pos == 0 && buf.is_empty() && rest <= max {
            // The whole batch: swap vectors instead of copying, and its scan goes with it.
            std::mem::swap(buf, &mut self.current);
            self.current.clear();
            self.pos = 0;
            self.scan_handed = std::mem::take(&mut self.scan_of_current);
            return Ok(rest);
        }
        // A part of the batch: its scan is no one's.
        self.scan_of_current = false;
        let n = rest.min(max);
        buf.extend_from_slice(&self.current[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }

    fn take_scan(&mut self, into: &mut BatchScan) -> bool {
        if !std::mem::take(&mut self.scan_handed) {
            return false;
        }
        // The caller's old scan stays here, to be recycled with the next batch.
        std::mem::swap(into, &mut self.scan);
        true
    }

    fn skipped(&self) -> u64 {
        self.skipped
    }

    fn carries_files(&self) -> bool {
        self.carries_files
    }

    fn take_events(&mut self, out: &mut Vec<ProcessEvent>) {
        out.append(&mut self.events);
    }

    fn carries_events(&self) -> bool {
        self.carries_events
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for BackgroundReader {
    fn drop(&mut self) {
        // Closing the channel stops the thread at its next hand-over.
        let (_, closed) = crossbeam_channel::bounded(0);
        drop(std::mem::replace(&mut self.rx, closed));
        if let Some(w) = self.worker.take() {
            let _ = w.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{read_all, VecReader};

    fn requests(n: u64) -> Vec<Request> {
        (0..n).map(|i| Request::read(i * 4096, 4096).at(i)).collect()
    }

    /// A reader that fails at request `at`, with `skipped` counted.
    struct FailsAt {
        inner: VecReader,
        seen: u64,
        at: u64,
    }

    impl TraceReader for FailsAt {
        fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
            self.seen += 1;
            if self.seen == self.at {
                return Err(crate::trace::record_error(Path::new("t.bin"), self.at, "offset", "bad"));
            }
            self.inner.next_request()
        }
        fn skipped(&self) -> u64 {
            3
        }
        fn path(&self) -> &Path {
            Path::new("t.bin")
        }
    }

    #[test]
    fn same_requests_in_the_same_order() {
        for n in [0, 1, BATCH as u64 - 1, BATCH as u64, 3 * BATCH as u64 + 17] {
            let want = requests(n);
            let mut r = BackgroundReader::spawn(Box::new(VecReader::new(want.clone())));
            assert_eq!(read_all(&mut r).unwrap(), want, "{n} requests");
            assert_eq!(r.read_batch(&mut Vec::new(), 10).unwrap(), 0);
        }
    }

    #[test]
    fn batches_of_any_size_and_single_requests_mix() {
        let want = requests(10_000);
        let mut r = BackgroundReader::spawn(Box::new(VecReader::new(want.clone())));
        let mut got = Vec::new();
        let mut k = 0usize;
        loop {
            k += 1;
            if k % 3 == 0 {
                match r.next_request().unwrap() {
                    Some(q) => got.push(q),
                    None => break,
                }
            } else if r.read_batch(&mut got, 1 + (k * 977) % 5000).unwrap() == 0 {
                break;
            }
        }
        assert_eq!(got, want);
    }

    #[test]
    fn an_error_arrives_after_the_requests_before_it() {
        let mut r = BackgroundReader::spawn(Box::new(FailsAt { inner: VecReader::new(requests(10_000)), seen: 0, at: 5000 }));
        let mut got = Vec::new();
        let err = loop {
            match r.read_batch(&mut got, 1000) {
                Ok(0) => panic!("the error was lost"),
                Ok(_) => {}
                Err(e) => break e,
            }
        };
        assert_eq!(got.len(), 4999);
        assert_eq!(err.to_string(), crate::trace::record_error(Path::new("t.bin"), 5000, "offset", "bad").to_string());
        assert_eq!(r.read_batch(&mut got, 1000).unwrap(), 0);
    }

    #[test]
    fn skipped_count_and_metadata_come_through() {
        let mut r = BackgroundReader::spawn(Box::new(FailsAt { inner: VecReader::new(requests(10)), seen: 0, at: u64::MAX }));
        assert_eq!(r.path(), Path::new("t.bin"));
        assert!(r.carries_files());
        assert_eq!(read_all(&mut r).unwrap().len(), 10);
        assert_eq!(r.skipped(), 3);
    }

    #[test]
    fn a_scanning_reader_hands_each_whole_batch_its_own_scan() {
        // Times that go back now and then, several pids and devices.
        let want: Vec<Request> = (0..3 * BATCH as u64 + 100)
            .map(|i| {
                let mut r = Request::read((i * 7919 % 5000) * 4096, 4096).at(if i % 1000 == 999 { i - 500 } else { i });
                r.pid = (i / 3000) as u32;
                r.device = (i % 3) as u32;
                r
            })
            .collect();
        let pages = PageSize::new(4096);
        let mut r = BackgroundReader::scanning(Box::new(VecReader::new(want.clone())), pages);
        let (mut got, mut max_raw, mut scans) = (Vec::new(), 0, 0);
        loop {
            let mut batch = Vec::new();
            if r.read_batch(&mut batch, BATCH).unwrap() == 0 {
                break;
            }
            let mut inline = BatchScan::default();
            inline.scan(&batch, pages, max_raw);
            let mut handed = BatchScan::default();
            assert!(r.take_scan(&mut handed), "a whole batch comes with its scan");
            assert_eq!(handed, inline);
            assert!(!r.take_scan(&mut handed), "a scan is handed once");
            max_raw = inline.max_raw_ns;
            scans += 1;
            got.extend(batch);
        }
        assert_eq!((got, scans), (want.clone(), 4));
        // Batches taken in pieces, or requests one at a time: no scan is handed, and the
        // caller scans itself.
        let mut r = BackgroundReader::scanning(Box::new(VecReader::new(want)), pages);
        let mut part = Vec::new();
        assert_eq!(r.read_batch(&mut part, 10).unwrap(), 10);
        assert!(!r.take_scan(&mut BatchScan::default()));
        assert!(r.next_request().unwrap().is_some());
        assert!(!r.take_scan(&mut BatchScan::default()));
        let mut rest = Vec::new();
        assert_eq!(r.read_batch(&mut rest, BATCH).unwrap(), BATCH - 11);
        assert!(!r.take_scan(&mut BatchScan::default()), "the rest of a batch taken in pieces");
        let mut next = Vec::new();
        assert_eq!(r.read_batch(&mut next, BATCH).unwrap(), BATCH);
        assert!(r.take_scan(&mut BatchScan::default()), "the next whole batch");
    }

    #[test]
    fn dropping_early_stops_the_thread() {
        let mut r = BackgroundReader::spawn(Box::new(VecReader::new(requests(1_000_000))));
        assert!(r.next_request().unwrap().is_some());
        drop(r); // joins the thread; a hang here is the failure
    }
}
