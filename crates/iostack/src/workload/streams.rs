//! Per-process request streams over laid-out files, merged into one trace.
//!
//! The benchmarks of the KDSim/REDCAP paper (TAC, strided reads, IOR-R, LKR and their
//! compositions, González-Férez et al., Computer Journal 59(10), 2016, §5, l.181-197) are
//! processes each reading its own files. A benchmark here is a set of per-process [`Stream`]s over
//! [`FileMap`]s placed on the disk; [`Merged`] reads them as one trace, one request of each
//! process in turn. The turn order matters for the timed stack: it replays each pid closed loop
//! and starts a process when the trace reader first reaches it, so every process's first request
//! is near the start of the trace and all processes start at once, as the paper's parallel runs
//! do. Requests carry time 0 (no think time) and their file, so per-file readahead sees files.
//!
//! A stream may also carry process events ([`Step::Event`]): a stream is a sequence of processes
//! that run one after another (LKR's `find` and the `cat` it forks and waits for); the events
//! come out of [`Merged`] in place, before the stream's next request.

use std::path::{Path, PathBuf};

use crate::error::TraceError;
use crate::trace::{FileRef, Op, ProcessEvent, ProcessEventKind, Request, TraceReader};

/// Bytes per file-system block.
pub const BLOCK: u64 = 4096;

/// A file on the disk: its extents (first file block, disk block, blocks).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMap {
    pub id: u64,
    /// Size in bytes.
    pub bytes: u64,
    pub extents: Vec<(u64, u64, u64)>,
}

impl FileMap {
    /// A file of `bytes` in one extent starting at disk block `at`.
    pub fn contiguous(id: u64, bytes: u64, at: u64) -> FileMap {
        FileMap { id, bytes, extents: vec![(0, at, bytes.div_ceil(BLOCK))] }
    }

    pub fn blocks(&self) -> u64 {
        self.bytes.div_ceil(BLOCK)
    }

    /// The disk block after its last extent.
    pub fn end_block(&self) -> u64 {
        self.extents.iter().map(|e| e.1 + e.2).max().unwrap_or(0)
    }

    /// The reads of `len` bytes at file offset `off` (clipped to the file), one per extent
    /// touched, for process `pid`.
    pub fn read(&self, off: u64, len: u64, pid: u32, out: &mut impl Extend<Request>) {
        let end = (off + len).min(self.bytes);
        let mut at = off;
        while at < end {
            let fb = at / BLOCK;
            let i = self.extents.partition_point(|e| e.0 <= fb) - 1;
            let (first, disk, n) = self.extents[i];
            let extent_end = ((first + n) * BLOCK).min(end);
            out.extend(std::iter::once(Request {
                time_ns: 0,
                offset: disk * BLOCK + (at - first * BLOCK),
                length: extent_end - at,
                pid,
                device: 0,
                op: Op::Read,
                file: Some(FileRef { id: self.id, offset: at, size: Some(self.bytes) }),
            }));
            at = extent_end;
        }
    }
}

impl FileMap {
    /// [`FileMap::read`] as a list (one request unless the read crosses extents).
    pub fn read_one(&self, off: u64, len: u64, pid: u32) -> Vec<Request> {
        let mut v = Vec::with_capacity(1);
        self.read(off, len, pid, &mut v);
        v
    }
}

/// One process's requests, in issue order.
pub type Stream = Box<dyn Iterator<Item = Request> + Send>;

/// A request or a process event of a [`ProcStream`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Io(Request),
    /// An event; its `before` is filled in by [`Merged`].
    Event(ProcessEvent),
}

impl Step {
    /// A process event with no time.
    pub fn event(kind: ProcessEventKind, pid: u32, ppid: u32) -> Step {
        Step::Event(ProcessEvent { before: 0, time_ns: 0, kind, pid, ppid })
    }
}

/// Requests and process events of processes that run one after another, in issue order.
pub type ProcStream = Box<dyn Iterator<Item = Step> + Send>;

/// A stream of requests as a [`ProcStream`].
pub fn steps(s: Stream) -> ProcStream {
    Box::new(s.map(Step::Io))
}

/// The pid of the first child process a generator forks (LKR's `cat`s): above every pid the
/// generators give their own processes (at most 5 × 2^16), so that children never take one.
pub const CHILD_PID_BASE: u32 = 1 << 20;

/// A raw (no file) 4 KiB read of disk block `block`: metadata such as inode-table and directory
/// blocks.
pub fn metadata_read(block: u64, pid: u32) -> Request {
    Request { time_ns: 0, offset: block * BLOCK, length: BLOCK, pid, device: 0, op: Op::Read, file: None }
}

/// Per-process streams read as one trace, one request of each live stream in turn (a stream's
/// process events come out in place and take no turn).
pub struct Merged {
    streams: Vec<ProcStream>,
    turn: usize,
    path: PathBuf,
    /// Requests handed out, and events met, not yet taken.
    returned: u64,
    events: Vec<ProcessEvent>,
    /// Whether the streams may carry events.
    has_events: bool,
}

impl Merged {
    pub fn new(name: &str, streams: Vec<Stream>) -> Merged {
        Merged { has_events: false, ..Merged::with_events(name, streams.into_iter().map(steps).collect()) }
    }

    /// Streams that may carry process events.
    pub fn with_events(name: &str, streams: Vec<ProcStream>) -> Merged {
        Merged { streams, turn: 0, path: PathBuf::from(format!("<{name} workload>")), returned: 0, events: Vec::new(), has_events: true }
    }
}

impl TraceReader for Merged {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        while !self.streams.is_empty() {
            if self.turn >= self.streams.len() {
                self.turn = 0;
            }
            match self.streams[self.turn].next() {
                Some(Step::Io(r)) => {
                    self.turn += 1;
                    self.returned += 1;
                    return Ok(Some(r));
                }
                Some(Step::Event(mut e)) => {
                    e.before = self.returned;
                    self.events.push(e);
                }
                None => {
                    // Finished: drop it; the next stream takes its turn.
                    drop(self.streams.remove(self.turn));
                }
            }
        }
        Ok(None)
    }

    fn take_events(&mut self, out: &mut Vec<ProcessEvent>) {
        out.append(&mut self.events);
    }

    fn carries_events(&self) -> bool {
        self.has_events
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

/// Where one benchmark's files go and which ids and pids it uses, so that compositions (AIR, AIP)
/// place benchmarks side by side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// First free disk block.
    pub block: u64,
    /// First file id.
    pub file_id: u64,
    /// The pid of process 0; process `p` is `pid + p`.
    pub pid: u32,
    /// The pid of the next child process a benchmark forks.
    pub child_pid: u32,
}

impl Placement {
    /// One contiguous file of `bytes` per process, one after another (created one at a time);
    /// the placement moves past them.
    pub fn contiguous_files(&mut self, processes: u32, bytes: u64) -> Vec<FileMap> {
        let blocks = bytes.div_ceil(BLOCK);
        let files = (0..processes as u64).map(|p| FileMap::contiguous(self.file_id + p, bytes, self.block + p * blocks)).collect();
        self.block += processes as u64 * blocks;
        self.file_id += processes as u64;
        files
    }
}

impl Default for Placement {
    fn default() -> Self {
        Placement { block: 0, file_id: 1, pid: 1, child_pid: CHILD_PID_BASE }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::read_all;

    #[test]
    fn reads_split_at_extents_and_streams_take_turns() {
        let f = FileMap { id: 7, bytes: 5 * BLOCK + 100, extents: vec![(0, 100, 2), (2, 500, 4)] };
        let mut v = Vec::new();
        f.read(BLOCK, 3 * BLOCK, 3, &mut v);
        assert_eq!(v.iter().map(|r| (r.offset, r.length)).collect::<Vec<_>>(), vec![(101 * BLOCK, BLOCK), (500 * BLOCK, 2 * BLOCK)]);
        assert_eq!(v[1].file.unwrap().offset, 2 * BLOCK);
        v.clear();
        f.read(5 * BLOCK, BLOCK, 3, &mut v);
        assert_eq!((v[0].offset, v[0].length), (503 * BLOCK, 100), "the tail of the file");
        let a: Stream = Box::new((0..3).map(|i| metadata_read(i, 1)));
        let b: Stream = Box::new((10..11).map(|i| metadata_read(i, 2)));
        let all = read_all(&mut Merged::new("t", vec![a, b])).unwrap();
        assert_eq!(all.iter().map(|r| (r.pid, r.offset / BLOCK)).collect::<Vec<_>>(), vec![(1, 0), (2, 10), (1, 1), (1, 2)]);
    }
}
