//! Requests and traces.
//!
//! A [`Request`] is one I/O as the application (or the trace) issued it: a time, a process, an
//! operation, a byte range on a device, and optionally the file it belongs to. Every reader turns
//! its format into this one model, so the rest of iostack never sees a format.
//!
//! Readers stream: they hold at most a buffer of the file in memory (binary formats are read
//! through a memory map), so a trace of any length is read in constant memory. They report a
//! malformed line or record as a [`TraceError`] naming the file, the line or record number and
//! the field, or count and skip it when [`ReaderOptions::skip_invalid`] is set.

use std::path::{Path, PathBuf};

use crate::error::{Location, TraceError};

pub mod alibaba;
pub mod background;
pub mod bin;
pub mod blkparse;
pub mod csv;
pub mod devices;
pub mod disksim;
pub mod fiu;
pub mod format;
pub mod generic;
pub mod lis;
pub mod msr;
pub mod oracle;
pub mod parse;
pub mod plain;
pub mod scan;
pub mod source;
pub mod spc;
pub mod systor;
pub mod tencent;
pub mod vscsi;
pub mod write;

pub use format::{Format, FormatInfo, FORMATS};
use parse::{RecordReader, TextReader};
use source::Source;

/// Opens a trace for streaming.
///
/// `format` is the trace's format; `None` detects it from the content and the file name (see
/// [`format`] for the rules) and fails with a message asking for `--format` when they do not
/// decide (a `csv_mapping` in `options` implies generic CSV). Compressed files (zstd, xz, gzip,
/// bzip2) are decompressed on the fly, recognised by their magic bytes. The path `-` is the
/// standard input.
pub fn open(path: &Path, format: Option<Format>, options: &ReaderOptions) -> Result<Box<dyn TraceReader>, TraceError> {
    open_with_format(path, format, options).map(|(r, _)| r)
}

/// Like [`open`], also returning the format used (the detected one when `format` is `None`).
/// The path `-` is the standard input.
pub fn open_with_format(
    path: &Path,
    format: Option<Format>,
    options: &ReaderOptions,
) -> Result<(Box<dyn TraceReader>, Format), TraceError> {
    open_from(Source::open(path)?, path, format, options)
}

/// Detects the format of `source` (named `name`) unless given, and opens its reader.
fn open_from(mut source: Source, name: &Path, format: Option<Format>, options: &ReaderOptions) -> Result<(Box<dyn TraceReader>, Format), TraceError> {
    let detected = match format {
        Some(f) => format::Detected::Format(f),
        // A column mapping only makes sense for generic CSV.
        None if options.csv_mapping.is_some() => format::Detected::Format(Format::GenericCsv),
        None => {
            let (head, len) = detection_input(&mut source)?;
            format::detect(name, head, len)?
        }
    };
    let format = match detected {
        format::Detected::Format(f) => f,
        format::Detected::CloudPhysicsCsv => Format::GenericCsv,
    };
    Ok((open_source(source, detected, options)?, format))
}

/// Like [`open_with_format`] over (uncompressed) bytes already in memory, named `name`
/// for detection and messages: what the fuzz targets and tests feed every reader through.
pub fn open_bytes(
    name: &Path,
    bytes: Vec<u8>,
    format: Option<Format>,
    options: &ReaderOptions,
) -> Result<(Box<dyn TraceReader>, Format), TraceError> {
    open_from(Source::from_bytes(name, bytes), name, format, options)
}

/// The format [`open`] would use for `path` without `--format`.
pub fn detect_format(path: &Path) -> Result<Format, TraceError> {
    let mut source = Source::open(path)?;
    let (head, len) = detection_input(&mut source)?;
    Ok(match format::detect(path, head, len)? {
        format::Detected::Format(f) => f,
        format::Detected::CloudPhysicsCsv => Format::GenericCsv,
    })
}

/// The first bytes of `source` for format detection, and the length of its content when known:
/// a plain file's size, or the whole content when it ends within the look-ahead (a pipe, or a
/// compressed file, of a few records), so that the same bytes are recognised alike from a file,
/// from standard input and from an archive (a single 32-byte vscsi record is not a multiple of
/// oracleGeneral's 24 bytes).
fn detection_input(source: &mut Source) -> Result<(&[u8], Option<u64>), TraceError> {
    const LOOK_AHEAD: usize = 64 * 1024;
    let known = source.known_len();
    let head = source.peek(LOOK_AHEAD)?;
    let len = known.or((head.len() < LOOK_AHEAD).then_some(head.len() as u64));
    Ok((head, len))
}

fn open_source(mut source: Source, detected: format::Detected, options: &ReaderOptions) -> Result<Box<dyn TraceReader>, TraceError> {
    let skip = options.skip_invalid;
    let format = match detected {
        format::Detected::Format(f) => f,
        format::Detected::CloudPhysicsCsv => Format::GenericCsv,
    };
    Ok(match format {
        Format::Csv => Box::new(TextReader::new(source, csv::CsvParser::new(), skip)),
        Format::Plain => Box::new(TextReader::new(source, plain::PlainParser, skip)),
        Format::Lis => Box::new(TextReader::new(source, lis::LisParser::default(), skip)),
        Format::Msr => Box::new(TextReader::new(source, msr::MsrParser::default(), skip)),
        Format::Spc => Box::new(TextReader::new(source, spc::SpcParser, skip)),
        Format::Blkparse => Box::new(TextReader::new(source, blkparse::BlkparseParser::new(options.blkparse_event), skip)),
        Format::Fiu => Box::new(TextReader::new(source, fiu::FiuParser::default(), skip)),
        Format::Alibaba => Box::new(TextReader::new(source, alibaba::AlibabaParser::default(), skip)),
        Format::Tencent => Box::new(TextReader::new(source, tencent::TencentParser::default(), skip)),
        Format::Systor => Box::new(TextReader::new(source, systor::SystorParser::default(), skip)),
        Format::Disksim => Box::new(TextReader::new(source, disksim::DisksimParser, skip)),
        Format::GenericCsv => {
            let mapping = match &options.csv_mapping {
                Some(m) => m.clone(),
                None => {
                    let head = source.peek(4096)?;
                    let first = head.split(|&c| c == b'\n').next().unwrap_or(b"");
                    let first = first.strip_suffix(b"\r").unwrap_or(first);
                    if first.eq_ignore_ascii_case(b"version,time,op,size,lbn") {
                        CsvMapping::parse(generic::CLOUDPHYSICS_MAPPING).expect("the built-in mapping parses")
                    } else {
                        return Err(TraceError::file(
                            source.path(),
                            "the generic-csv format needs a column mapping (--mapping offset=COL,...; see docs/formats.md)",
                        ));
                    }
                }
            };
            let parser = generic::GenericParser::new(mapping).map_err(|e| TraceError::file(source.path(), e.to_string()))?;
            Box::new(TextReader::new(source, parser, skip))
        }
        Format::Bin => {
            let head = source.peek(bin::HEADER_SIZE)?;
            if let Err(msg) = bin::check_header(head) {
                return Err(TraceError::new(source.path(), Location::File, Some("header"), msg));
            }
            source.consume(bin::HEADER_SIZE);
            Box::new(RecordReader::with_offset(source, bin::BinDecoder, skip, bin::HEADER_SIZE as u64)?)
        }
        Format::OracleGeneral => Box::new(RecordReader::new(source, oracle::OracleGeneral::default(), skip)?),
        Format::Vscsi => {
            let version = vscsi::looks_like(source.peek(8 * 40)?);
            match version {
                Some(2) => Box::new(RecordReader::new(source, vscsi::VscsiV2::default(), skip)?),
                Some(_) => Box::new(RecordReader::new(source, vscsi::VscsiV1::default(), skip)?),
                None if source.peek(1)?.is_empty() => Box::new(RecordReader::new(source, vscsi::VscsiV1::default(), skip)?),
                None => {
                    return Err(TraceError::new(
                        source.path(),
                        Location::Record(1),
                        Some("ver"),
                        "no vscsi version (1 or 2) in the version field of the first records",
                    ))
                }
            }
        }
    })
}

/// Read or write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
}

impl Op {
    pub fn is_write(self) -> bool {
        self == Op::Write
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Read => "R",
            Op::Write => "W",
        }
    }
}

/// The file a request belongs to, when the trace knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileRef {
    /// File identity (inode number, path hash, or generator-assigned id).
    pub id: u64,
    /// Byte offset of the request within the file.
    pub offset: u64,
    /// File size in bytes, when known.
    pub size: Option<u64>,
}

/// One I/O request.
///
/// Units: time in nanoseconds from the start of the trace (or from the trace's own epoch: readers
/// keep the trace's clock, shifted so that it does not go negative), byte offset and byte length
/// on `device`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub time_ns: u64,
    /// Byte offset on the device.
    pub offset: u64,
    /// Length in bytes.
    pub length: u64,
    /// Issuing process (0 when the trace does not say).
    pub pid: u32,
    /// Device or volume (0 when the trace has one device).
    pub device: u32,
    pub op: Op,
    pub file: Option<FileRef>,
}

impl Request {
    /// A read of `length` bytes at `offset` on device 0 by process 0 at time 0.
    pub fn read(offset: u64, length: u64) -> Request {
        Request { time_ns: 0, offset, length, pid: 0, device: 0, op: Op::Read, file: None }
    }

    /// The same request at another time.
    pub fn at(mut self, time_ns: u64) -> Request {
        self.time_ns = time_ns;
        self
    }

    /// First and one-past-last block of `page_size` bytes that the request touches.
    /// A zero-length request touches the one block holding its offset.
    #[inline]
    pub fn block_range(&self, page_size: u64) -> (u64, u64) {
        PageSize::new(page_size).block_range(self)
    }
}

/// The page (of `page_size` bytes) holding byte `offset`.
#[inline]
pub fn page_of(offset: u64, page_size: u64) -> u64 {
    PageSize::new(page_size).page_of(offset)
}

/// A page size, with what turns byte offsets into pages decided once: a shift for the usual
/// power-of-two sizes, since a 64-bit division costs tens of cycles and simulators ask this
/// several times a request. A loop over many requests keeps one of these instead of testing
/// the size on every call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageSize {
    size: u64,
    /// log2 of `size` when it is a power of two, else `NOT_POW2`.
    shift: u32,
}

impl PageSize {
    const NOT_POW2: u32 = u32::MAX;

    #[inline]
    pub fn new(size: u64) -> PageSize {
        // `is_power_of_two` counts bits, which takes a dozen instructions on x86-64 without POPCNT.
        let shift = if size != 0 && size & (size - 1) == 0 { size.trailing_zeros() } else { Self::NOT_POW2 };
        PageSize { size, shift }
    }

    /// The page holding byte `offset`.
    #[inline(always)]
    pub fn page_of(self, offset: u64) -> u64 {
        if self.shift != Self::NOT_POW2 {
            offset >> self.shift
        } else {
            offset / self.size
        }
    }

    /// First and one-past-last page that `r` touches; a zero-length request touches the one
    /// page holding its offset.
    #[inline(always)]
    pub fn block_range(self, r: &Request) -> (u64, u64) {
        self.span(r.offset, r.length)
    }

    /// [`PageSize::block_range`] of `length` bytes at `offset`.
    #[inline(always)]
    pub fn span(self, offset: u64, length: u64) -> (u64, u64) {
        let first = self.page_of(offset);
        let end = if length == 0 { first + 1 } else { self.page_of(offset + length - 1) + 1 };
        (first, end)
    }
}

/// What happens to a process at a [`ProcessEvent`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ProcessEventKind {
    /// The process `pid` is created by `ppid`.
    Fork,
    /// `ppid` waits for its child `pid` to exit before it goes on.
    Wait,
    /// `pid` exits.
    Exit,
    /// `ppid`, a benchmark's launcher that issues no requests itself, launches `pid` as one of
    /// the benchmark's processes: the replay relaunches the benchmark (its launched processes
    /// and every process they fork) each time it completes while another launcher's benchmark
    /// has not completed once (the KDSim paper's AIP, l.197; `docs/timed.md`).
    Launch,
}

impl ProcessEventKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ProcessEventKind::Fork => "fork",
            ProcessEventKind::Wait => "wait",
            ProcessEventKind::Exit => "exit",
            ProcessEventKind::Launch => "launch",
        }
    }

    /// `fork`, `wait`, `exit`, `launch`, any case.
    pub fn parse(s: &[u8]) -> Option<ProcessEventKind> {
        [ProcessEventKind::Fork, ProcessEventKind::Wait, ProcessEventKind::Exit, ProcessEventKind::Launch].into_iter().find(|k| s.eq_ignore_ascii_case(k.as_str().as_bytes()))
    }
}

/// A process event of a trace: a fork, a wait for a child, an exit (what KDSim's dependency
/// rule R4 needs, paper l.106, and what tells an application-controlled cache that a process is
/// gone).
///
/// Every event names a process `pid` and its parent `ppid`: a fork creates `pid` as a child of
/// `ppid`; a wait is `ppid` waiting for its child `pid`; an exit is `pid`'s (with `ppid` 0 when
/// the trace does not say); a launch is `pid` started by its benchmark's launcher `ppid`, and
/// comes before `pid`'s first request. It takes effect at its place in the trace: after the
/// requests of the process acting (the parent for a fork or a wait, `pid` for an exit or a
/// launch) that come before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ProcessEvent {
    /// Requests of the trace before the event.
    pub before: u64,
    pub time_ns: u64,
    pub kind: ProcessEventKind,
    pub pid: u32,
    pub ppid: u32,
}

impl ProcessEvent {
    /// The process whose stream the event belongs to: the parent of a fork or a wait, the
    /// process exiting.
    pub fn actor(&self) -> u32 {
        match self.kind {
            ProcessEventKind::Fork | ProcessEventKind::Wait => self.ppid,
            ProcessEventKind::Exit | ProcessEventKind::Launch => self.pid,
        }
    }
}

/// How a reader treats its input.
#[derive(Debug, Clone, Default)]
pub struct ReaderOptions {
    /// Count and skip malformed lines or records instead of failing on the first one.
    pub skip_invalid: bool,
    /// For blkparse text: which event stands for a request.
    pub blkparse_event: BlkparseEvent,
    /// For the generic CSV format: which column holds which field.
    pub csv_mapping: Option<CsvMapping>,
}

/// Which blkparse action is taken as the request stream.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BlkparseEvent {
    /// `Q`: requests as queued by the file system (before merging and scheduling).
    #[default]
    Queue,
    /// `D`: requests as dispatched to the driver (after the scheduler).
    Dispatch,
    /// `C`: completions.
    Complete,
}

/// Column mapping of the generic CSV format: which column holds which field, and the units.
///
/// Parsed from a mapping string by [`CsvMapping::parse`] (syntax in [`generic`] and
/// docs/formats.md), e.g. `offset=4,length=5,op=3,time=0,time_unit=100ns,header=yes`.
/// Columns are 0-based indices; columns given by header name are kept in `names` and resolved to
/// indices when the reader reads the header.
#[derive(Debug, Clone, PartialEq)]
pub struct CsvMapping {
    pub time: Option<usize>,
    pub offset: usize,
    pub length: Option<usize>,
    pub op: Option<usize>,
    pub pid: Option<usize>,
    pub device: Option<usize>,
    pub file: Option<usize>,
    pub has_header: bool,
    /// Field separator; `b' '` splits at runs of blanks (spaces and tabs).
    pub delimiter: u8,
    /// Multiplier from the offset column to bytes (1 for bytes, 512 for sectors).
    pub offset_unit: u64,
    /// Multiplier from the length column to bytes.
    pub length_unit: u64,
    /// Multiplier from the time column to nanoseconds.
    pub time_unit_ns: f64,
    /// How the op column encodes reads and writes.
    pub op_values: OpValues,
    /// Length in bytes of every request when there is no length column.
    pub default_length: u64,
    /// Shift times so that the first request is at 0 (for absolute clocks such as Unix time).
    pub shift_time: bool,
    /// Fields given by column name: (field, column name), resolved against the header.
    pub names: Vec<(String, String)>,
}

impl Default for CsvMapping {
    fn default() -> Self {
        CsvMapping {
            time: None,
            offset: 0,
            length: None,
            op: None,
            pid: None,
            device: None,
            file: None,
            has_header: false,
            delimiter: b',',
            offset_unit: 1,
            length_unit: 1,
            time_unit_ns: 1.0,
            op_values: OpValues::Names,
            default_length: csv::DEFAULT_LENGTH,
            shift_time: true,
            names: Vec::new(),
        }
    }
}

/// How a generic CSV op column says read or write.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OpValues {
    /// `R`/`W`/`read`/`write`, any case.
    #[default]
    Names,
    /// SCSI command codes in hex (`28` READ(10), `2a` WRITE(10), ...); other commands skipped.
    Scsi,
    /// `0` read, `1` write.
    ZeroReadOneWrite,
    /// `1` read, `0` write.
    OneReadZeroWrite,
    /// DiskSim flags: bit 0 set means read.
    Flags,
}

/// A streaming source of requests.
///
/// Contract: `next_request` returns the requests of the trace in file order, then `Ok(None)`
/// forever. An `Err` names the file, the line or record and the field; after an error the reader
/// may be left at any position and callers stop reading. With `skip_invalid`, malformed lines or
/// records are not returned as errors but counted in [`TraceReader::skipped`].
pub trait TraceReader: Send {
    /// The next request, or `None` at the end of the trace.
    fn next_request(&mut self) -> Result<Option<Request>, TraceError>;

    /// Appends up to `max` requests to `buf`; returns how many were appended (0 at the end).
    /// Readers override this when they can decode a batch faster than one call at a time.
    fn read_batch(&mut self, buf: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        let mut n = 0;
        while n < max {
            match self.next_request()? {
                Some(r) => {
                    buf.push(r);
                    n += 1;
                }
                None => break,
            }
        }
        Ok(n)
    }

    /// Malformed lines or records skipped so far (only with `skip_invalid`).
    fn skipped(&self) -> u64 {
        0
    }

    /// Whether requests of this trace can name a file (`Request::file`). `false` is a promise
    /// that none does, which lets a caller skip work that only files need (the timed stack's
    /// first pass over the trace, for example); when in doubt, `true`.
    fn carries_files(&self) -> bool {
        true
    }

    /// Moves the process events read so far (see [`ProcessEvent`]) to `out`, in trace order.
    /// A reader may hand out an event before the requests preceding it (its `before` says where
    /// it stands); every event that precedes a request handed out has been handed out by then,
    /// and the events after the last request once the reader has returned the end. Formats
    /// without process events have none.
    fn take_events(&mut self, _out: &mut Vec<ProcessEvent>) {}

    /// Whether the trace can carry process events (for writers choosing their columns); asked
    /// after the first request was read. `false` is a promise that [`TraceReader::take_events`]
    /// never gives any.
    fn carries_events(&self) -> bool {
        false
    }

    /// The file being read, for messages.
    fn path(&self) -> &Path;

    /// Moves into `into` the scan ([`scan::BatchScan`]) of the batch the last
    /// [`TraceReader::read_batch`] call returned, when this reader made one for exactly that
    /// batch (a reader that scans as it decodes, [`background::BackgroundReader::scanning`]);
    /// `false`, leaving `into` as it was, otherwise, and then the caller scans the batch itself.
    /// Ask right after `read_batch`: a scan belongs to one batch.
    fn take_scan(&mut self, into: &mut scan::BatchScan) -> bool {
        let _ = into;
        false
    }
}

/// A boxed reader is a reader, so `&mut Box<dyn TraceReader>` can be passed where a reader is
/// expected; a borrowed reader is one too, so a wrapper such as [`devices::DenseDevices`] can
/// sit on top of a reader it does not own.
macro_rules! forwarding_reader {
    ($($ty:ty),*) => {$(
        impl<R: TraceReader + ?Sized> TraceReader for $ty {
            fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
                (**self).next_request()
            }
            fn read_batch(&mut self, buf: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
                (**self).read_batch(buf, max)
            }
            fn skipped(&self) -> u64 {
                (**self).skipped()
            }
            fn carries_files(&self) -> bool {
                (**self).carries_files()
            }
            fn take_events(&mut self, out: &mut Vec<ProcessEvent>) {
                (**self).take_events(out)
            }
            fn carries_events(&self) -> bool {
                (**self).carries_events()
            }
            fn path(&self) -> &Path {
                (**self).path()
            }
            fn take_scan(&mut self, into: &mut scan::BatchScan) -> bool {
                (**self).take_scan(into)
            }
        }
    )*};
}
forwarding_reader!(Box<R>, &mut R);

/// A reader over requests already in memory (tests, generated workloads, Python arrays).
pub struct VecReader {
    requests: std::vec::IntoIter<Request>,
    events: Vec<ProcessEvent>,
    has_events: bool,
    path: PathBuf,
}

impl VecReader {
    pub fn new(requests: Vec<Request>) -> Self {
        VecReader { requests: requests.into_iter(), events: Vec::new(), has_events: false, path: PathBuf::from("<memory>") }
    }

    /// Requests with process events (each placed by its `before`, in trace order).
    pub fn with_events(requests: Vec<Request>, events: Vec<ProcessEvent>) -> Self {
        VecReader { has_events: !events.is_empty(), events, ..VecReader::new(requests) }
    }
}

impl TraceReader for VecReader {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        Ok(self.requests.next())
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

/// Reads a whole trace into memory (for tests and small traces; simulation streams instead).
pub fn read_all(reader: &mut dyn TraceReader) -> Result<Vec<Request>, TraceError> {
    let mut out = Vec::new();
    while reader.read_batch(&mut out, 1 << 16)? > 0 {}
    Ok(out)
}

/// An error at a line of a text trace.
pub fn line_error(path: &Path, line: u64, field: &str, message: impl Into<String>) -> TraceError {
    TraceError::new(path, Location::Line(line), Some(field), message)
}

/// An error at a record of a binary trace.
pub fn record_error(path: &Path, record: u64, field: &str, message: impl Into<String>) -> TraceError {
    TraceError::new(path, Location::Record(record), Some(field), message)
}
