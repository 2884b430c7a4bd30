//! Trace writers: iostack CSV, iostack binary, and libCacheSim oracleGeneral.
//!
//! [`create`] opens a writer on a path; [`convert`] streams a reader into a writer the safe way:
//! it refuses to write over its input, writes to a temporary file beside the output and renames
//! it over the output only when everything was written, so a failure (a malformed input line, a
//! full disk, an interrupt) never leaves a half-written output and never touches the input.
//!
//! CSV and binary outputs whose name ends in `.zst`, `.gz`, `.xz` or `.bz2` are compressed;
//! oracleGeneral is not (libCacheSim maps it, and its next-access field is patched in place).

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::format::Format;
use super::{bin, Op, ProcessEvent, ReaderOptions, Request, TraceReader};
use crate::error::{ConfigError, Error, Location, TraceError};

/// A sink of requests in one format.
pub trait TraceWriter {
    fn write(&mut self, r: &Request) -> Result<(), TraceError>;

    fn write_all(&mut self, rs: &[Request]) -> Result<(), TraceError> {
        for r in rs {
            self.write(r)?;
        }
        Ok(())
    }

    /// Completes the file (flushes, patches what needs the whole trace); returns the number of
    /// requests written.
    fn finish(self: Box<Self>) -> Result<u64, TraceError>;

    /// The trace has process events: called before the first request is written.
    fn enable_events(&mut self) -> Result<(), TraceError> {
        Ok(())
    }

    /// Writes a process event (after the requests written so far). Formats that cannot hold
    /// one refuse it.
    fn write_event(&mut self, e: &ProcessEvent) -> Result<(), TraceError> {
        Err(TraceError::new(
            Path::new("<output>"),
            Location::File,
            Some("event"),
            format!("the output format cannot hold process events (a {} of process {}); write csv", e.kind.as_str(), e.pid),
        ))
    }
}

/// Formats iostack can write.
pub const WRITABLE: &[Format] = &[Format::Csv, Format::Bin, Format::OracleGeneral];

/// The output format a file name asks for: `*.oracleGeneral.bin` / `*.oracleGeneral`
/// oracleGeneral, `*.csv` iostack CSV, `*.iostack` / `*.bin` iostack binary (a compression
/// extension after these is allowed for CSV and binary).
pub fn format_for_output(path: &Path) -> Option<Format> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    let (stem, _) = split_compression(&name);
    if stem.ends_with(".oraclegeneral.bin") || stem.ends_with(".oraclegeneral") {
        Some(Format::OracleGeneral)
    } else if stem.ends_with(".csv") {
        Some(Format::Csv)
    } else if stem.ends_with(".iostack") || stem.ends_with(".bin") {
        Some(Format::Bin)
    } else {
        None
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum OutCompression {
    None,
    Zstd,
    Gzip,
    Xz,
    Bzip2,
}

fn split_compression(name: &str) -> (&str, OutCompression) {
    for (ext, c) in [(".zst", OutCompression::Zstd), (".gz", OutCompression::Gzip), (".xz", OutCompression::Xz), (".bz2", OutCompression::Bzip2)] {
        if let Some(stem) = name.strip_suffix(ext) {
            return (stem, c);
        }
    }
    (name, OutCompression::None)
}

/// The output format for `path`: `format` when given, else from the name; the error lists the
/// choices.
pub fn output_format(path: &Path, format: Option<Format>) -> Result<Format, ConfigError> {
    let f = match format {
        Some(f) => f,
        // Standard output has no name to go by: iostack binary, the most compact and fastest.
        None if is_stdout(path) => Format::Bin,
        None => format_for_output(path).ok_or_else(|| {
            ConfigError::new(
                "--to",
                format!(
                    "cannot tell the output format from the name `{}`; name it *.csv, *.iostack (or *.bin) or *.oracleGeneral.bin, or give --to csv|bin|oracle-general",
                    path.display()
                ),
            )
        })?,
    };
    if !WRITABLE.contains(&f) {
        return Err(ConfigError::new("--to", format!("iostack cannot write {f}; it writes csv, bin and oracle-general")));
    }
    Ok(f)
}

/// Where a CSV or binary writer's bytes go: the file, through a compressor when the name asks for
/// one. Unlike a boxed `Write` (whose compressors finish when dropped, ignoring any error), the
/// end of the stream is written by [`Sink::finish`], which reports every failure: a full disk
/// never leaves a silently truncated `.gz`.
enum Sink {
    Plain(BufWriter<File>),
    Zstd(zstd::stream::write::Encoder<'static, BufWriter<File>>),
    Gzip(flate2::write::GzEncoder<BufWriter<File>>),
    Xz(xz2::write::XzEncoder<BufWriter<File>>),
    Bzip2(bzip2::write::BzEncoder<BufWriter<File>>),
    /// Standard output (`-`): streamed uncompressed, nothing to sync.
    Stdout(BufWriter<io::Stdout>),
}

impl Sink {
    fn new(path: &Path, file: File) -> Result<Sink, TraceError> {
        let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
        let w = BufWriter::with_capacity(1 << 20, file);
        Ok(match split_compression(&name).1 {
            OutCompression::None => Sink::Plain(w),
            OutCompression::Zstd => Sink::Zstd(zstd::stream::write::Encoder::new(w, 3).map_err(|e| TraceError::io(path, &e))?),
            OutCompression::Gzip => Sink::Gzip(flate2::write::GzEncoder::new(w, flate2::Compression::default())),
            OutCompression::Xz => Sink::Xz(xz2::write::XzEncoder::new(w, 6)),
            OutCompression::Bzip2 => Sink::Bzip2(bzip2::write::BzEncoder::new(w, bzip2::Compression::default())),
        })
    }

    #[inline]
    fn out(&mut self) -> &mut dyn Write {
        match self {
            Sink::Plain(w) => w,
            Sink::Zstd(w) => w,
            Sink::Gzip(w) => w,
            Sink::Xz(w) => w,
            Sink::Bzip2(w) => w,
            Sink::Stdout(w) => w,
        }
    }

    /// Ends the compressed stream, flushes every buffer and syncs the file to disk.
    fn finish(self) -> io::Result<()> {
        let buffered = match self {
            Sink::Stdout(mut w) => return w.flush(),
            Sink::Plain(w) => w,
            Sink::Zstd(w) => w.finish()?,
            Sink::Gzip(w) => w.finish()?,
            Sink::Xz(w) => w.finish()?,
            Sink::Bzip2(w) => w.finish()?,
        };
        let file = buffered.into_inner().map_err(|e| e.into_error())?;
        sync_if_regular(&file)
    }
}

/// `fsync` for a regular file (devices and pipes have nothing to sync, and refuse it).
fn sync_if_regular(file: &File) -> io::Result<()> {
    if file.metadata()?.is_file() {
        file.sync_all()?;
    }
    Ok(())
}

/// Opens a writer of `format` that writes `path` (created or truncated). `name` is the output
/// the user named: it decides the compression and is what messages name (it is `path` itself
/// except when writing to a temporary file).
pub(crate) fn create_named(path: &Path, name: &Path, format: Format) -> Result<Box<dyn TraceWriter>, Error> {
    let format = output_format(name, Some(format))?;
    // Read access too for oracleGeneral, whose writer maps the file to patch it (the others open
    // write-only, as a pipe written through needs).
    let file = fs::OpenOptions::new()
        .read(format == Format::OracleGeneral)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| TraceError::io(name, &e))?;
    Ok(match format {
        Format::Csv => Box::new(CsvWriter::new(name, Sink::new(name, file)?)?),
        Format::Bin => Box::new(BinWriter::new(name, Sink::new(name, file)?)?),
        Format::OracleGeneral => {
            let lower = name.to_string_lossy().to_ascii_lowercase();
            if split_compression(&lower).1 != OutCompression::None {
                return Err(ConfigError::new("--to", "oracleGeneral output cannot be compressed (libCacheSim maps the file)").into());
            }
            Box::new(OracleWriter::new(name, file))
        }
        _ => unreachable!("output_format admits only writable formats"),
    })
}

/// Opens a writer of `format` on `path` (created or truncated).
pub fn create(path: &Path, format: Format) -> Result<Box<dyn TraceWriter>, Error> {
    create_named(path, path, format)
}

/// iostack CSV: header `time_ns,pid,op,offset,length,device,file,file_offset,file_size`; the file
/// columns are empty for requests without a file, `file_size` empty when unknown. A trace with
/// process events gets two more columns, `event,ppid`, empty on request lines; an event line
/// has `time_ns`, `pid`, `event` and `ppid` and the request columns empty.
pub struct CsvWriter {
    out: Sink,
    path: PathBuf,
    line: Vec<u8>,
    n: u64,
    /// The header is written before the first line (or at the end of an empty trace).
    started: bool,
    events: bool,
}

pub const CSV_HEADER: &str = "time_ns,pid,op,offset,length,device,file,file_offset,file_size\n";
/// The header of a trace with process events.
pub const CSV_HEADER_EVENTS: &str = "time_ns,pid,op,offset,length,device,file,file_offset,file_size,event,ppid\n";

impl CsvWriter {
    fn new(path: &Path, out: Sink) -> Result<CsvWriter, TraceError> {
        Ok(CsvWriter { out, path: path.to_path_buf(), line: Vec::with_capacity(128), n: 0, started: false, events: false })
    }

    #[cold]
    fn start(&mut self) -> Result<(), TraceError> {
        self.started = true;
        let header = if self.events { CSV_HEADER_EVENTS } else { CSV_HEADER };
        self.out.out().write_all(header.as_bytes()).map_err(|e| TraceError::io(&self.path, &e))
    }
}

impl TraceWriter for CsvWriter {
    fn enable_events(&mut self) -> Result<(), TraceError> {
        debug_assert!(!self.started, "events enabled after the header");
        self.events = true;
        Ok(())
    }

    fn write_event(&mut self, e: &ProcessEvent) -> Result<(), TraceError> {
        if !self.events {
            return Err(TraceError::new(&self.path, Location::File, Some("event"), "a process event in a trace written without event columns"));
        }
        if !self.started {
            self.start()?;
        }
        let line = format!("{},{},,,,,,,,{},{}\n", e.time_ns, e.pid, e.kind.as_str(), e.ppid);
        self.out.out().write_all(line.as_bytes()).map_err(|e| TraceError::io(&self.path, &e))
    }

    #[inline]
    fn write(&mut self, r: &Request) -> Result<(), TraceError> {
        if !self.started {
            self.start()?;
        }
        let mut b = itoa::Buffer::new();
        let l = &mut self.line;
        l.clear();
        l.extend_from_slice(b.format(r.time_ns).as_bytes());
        l.push(b',');
        l.extend_from_slice(b.format(r.pid).as_bytes());
        l.push(b',');
        l.push(if r.op == Op::Write { b'W' } else { b'R' });
        l.push(b',');
        l.extend_from_slice(b.format(r.offset).as_bytes());
        l.push(b',');
        l.extend_from_slice(b.format(r.length).as_bytes());
        l.push(b',');
        l.extend_from_slice(b.format(r.device).as_bytes());
        l.push(b',');
        if let Some(f) = r.file {
            l.extend_from_slice(b.format(f.id).as_bytes());
            l.push(b',');
            l.extend_from_slice(b.format(f.offset).as_bytes());
            l.push(b',');
            if let Some(s) = f.size {
                l.extend_from_slice(b.format(s).as_bytes());
            }
        } else {
            l.extend_from_slice(b",,");
        }
        if self.events {
            l.extend_from_slice(b",,");
        }
        l.push(b'\n');
        self.n += 1;
        self.out.out().write_all(l).map_err(|e| TraceError::io(&self.path, &e))
    }

    fn finish(mut self: Box<Self>) -> Result<u64, TraceError> {
        if !self.started {
            self.start()?;
        }
        let this = *self;
        this.out.finish().map_err(|e| TraceError::io(&this.path, &e))?;
        Ok(this.n)
    }
}

/// iostack binary (layout in [`bin`]).
pub struct BinWriter {
    out: Sink,
    path: PathBuf,
    n: u64,
}

impl BinWriter {
    fn new(path: &Path, mut out: Sink) -> Result<BinWriter, TraceError> {
        out.out().write_all(&bin::header()).map_err(|e| TraceError::io(path, &e))?;
        Ok(BinWriter { out, path: path.to_path_buf(), n: 0 })
    }
}

impl TraceWriter for BinWriter {
    #[inline]
    fn write(&mut self, r: &Request) -> Result<(), TraceError> {
        let mut rec = [0u8; bin::RECORD_SIZE];
        self.n += 1;
        bin::encode(r, &mut rec).ok_or_else(|| {
            TraceError::new(&self.path, Location::Record(self.n), Some("length"), format!("{} bytes does not fit the binary format's 32-bit length", r.length))
        })?;
        self.out.out().write_all(&rec).map_err(|e| TraceError::io(&self.path, &e))
    }

    fn finish(self: Box<Self>) -> Result<u64, TraceError> {
        let this = *self;
        this.out.finish().map_err(|e| TraceError::io(&this.path, &e))?;
        Ok(this.n)
    }
}

/// libCacheSim oracleGeneral: obj_id = offset / 512, obj_size = length, time = whole seconds of
/// time_ns. Records are written with a placeholder next-access field; `finish` maps the file and
/// fills it in one backward pass (memory: one map entry per distinct object), with libCacheSim's
/// convention: the 1-based position of the next request for the same obj_id, -1 if none.
pub struct OracleWriter {
    out: BufWriter<File>,
    path: PathBuf,
    n: u64,
}

impl OracleWriter {
    pub fn new(path: &Path, file: File) -> OracleWriter {
        OracleWriter { out: BufWriter::with_capacity(1 << 20, file), path: path.to_path_buf(), n: 0 }
    }
}

impl TraceWriter for OracleWriter {
    #[inline]
    fn write(&mut self, r: &Request) -> Result<(), TraceError> {
        self.n += 1;
        let err = |field: &str, msg: String| TraceError::new(&self.path, Location::Record(self.n), Some(field), msg);
        let secs = r.time_ns / 1_000_000_000;
        let time = u32::try_from(secs).map_err(|_| err("time", format!("{secs} s does not fit oracleGeneral's 32-bit time")))?;
        let size = u32::try_from(r.length).map_err(|_| err("obj_size", format!("{} bytes does not fit oracleGeneral's 32-bit size", r.length)))?;
        let mut rec = [0u8; 24];
        rec[0..4].copy_from_slice(&time.to_le_bytes());
        rec[4..12].copy_from_slice(&(r.offset / 512).to_le_bytes());
        rec[12..16].copy_from_slice(&size.to_le_bytes());
        rec[16..24].copy_from_slice(&(-1i64).to_le_bytes());
        self.out.write_all(&rec).map_err(|e| TraceError::io(&self.path, &e))
    }

    fn finish(self: Box<Self>) -> Result<u64, TraceError> {
        let path = self.path;
        let file = self.out.into_inner().map_err(|e| TraceError::io(&path, e.error()))?;
        if self.n == 0 {
            sync_if_regular(&file).map_err(|e| TraceError::io(&path, &e))?;
            return Ok(0);
        }
        // SAFETY: the file was just written by this writer and is not shared.
        let mut map = unsafe { memmap2::MmapMut::map_mut(&file) }.map_err(|e| TraceError::io(&path, &e))?;
        let mut next: rustc_hash::FxHashMap<u64, i64> = Default::default();
        for (i, rec) in map.chunks_exact_mut(24).enumerate().rev() {
            let id = u64::from_le_bytes(rec[4..12].try_into().expect("8 bytes"));
            let vtime = i as i64 + 1;
            let after = next.insert(id, vtime).unwrap_or(-1);
            rec[16..24].copy_from_slice(&after.to_le_bytes());
        }
        map.flush().map_err(|e| TraceError::io(&path, &e))?;
        drop(map);
        sync_if_regular(&file).map_err(|e| TraceError::io(&path, &e))?;
        Ok(self.n)
    }
}

/// What a conversion did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConvertStats {
    pub input_format: Format,
    pub output_format: Format,
    pub requests: u64,
    /// Malformed input lines or records skipped (with `skip_invalid`).
    pub skipped: u64,
}

/// Whether two paths are the same file (also through links), when both exist.
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (fs::metadata(a), fs::metadata(b)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// What an output path names, for telling whether two outputs are one file before either
/// exists: its directory resolved (links, `.` and `..`), then its name, with a symbolic link
/// followed when the file exists.
pub fn output_identity(p: &Path) -> PathBuf {
    if let Ok(c) = fs::canonicalize(p) {
        return c;
    }
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let dir = fs::canonicalize(parent).unwrap_or_else(|_| parent.to_path_buf());
    match p.file_name() {
        Some(n) => dir.join(n),
        None => dir,
    }
}

/// Prefix of the temporary files iostack writes outputs to: `.NAME.tmp-PID` beside `NAME`. A run
/// killed outright (SIGKILL) can leave one; the next run writing `NAME` removes those whose
/// process is gone.
pub const TEMP_MARK: &str = ".tmp-";

/// A temporary file beside `output` (same directory, so a rename moves it into place), to write
/// the output whole before it replaces whatever `output` held: `.NAME.tmp-PID`.
pub fn temp_beside(output: &Path) -> Result<PathBuf, Error> {
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = output.file_name().ok_or_else(|| ConfigError::new("OUTPUT", format!("`{}` is not a file name", output.display())))?;
    let prefix = format!(".{}{TEMP_MARK}", name.to_string_lossy());
    remove_stale_temps(&dir, &prefix);
    Ok(dir.join(format!("{prefix}{}", std::process::id())))
}

/// Removes `dir/PREFIX<pid>` files whose process no longer runs (left by a killed run).
fn remove_stale_temps(dir: &Path, prefix: &str) {
    let Ok(entries) = fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix(prefix)).and_then(|p| p.parse::<u32>().ok()) else { continue };
        if pid != std::process::id() && !process_alive(pid) {
            let _ = fs::remove_file(e.path());
        }
    }
}

/// Whether `output` names standard output (`-`).
pub fn is_stdout(output: &Path) -> bool {
    output.as_os_str() == "-"
}

/// Streams `reader` to standard output as CSV or iostack binary, uncompressed, as it is read
/// (constant memory whatever the length). oracleGeneral cannot be streamed: its next-access
/// field is filled in from the whole file.
fn write_stdout(reader: &mut dyn TraceReader, format: Format) -> Result<u64, Error> {
    let name = Path::new("<standard output>");
    let out = Sink::Stdout(BufWriter::with_capacity(1 << 20, io::stdout()));
    let w: Box<dyn TraceWriter> = match format {
        Format::Csv => Box::new(CsvWriter::new(name, out)?),
        Format::Bin => Box::new(BinWriter::new(name, out)?),
        _ => {
            return Err(ConfigError::new(
                "--format",
                format!("{format} cannot be written to standard output (its next-access field needs the whole file); stream csv or bin"),
            )
            .into())
        }
    };
    copy(reader, w)
}

/// Writes every request of `reader`, and its process events in place, to `w` and finishes it;
/// returns the number of requests written.
fn copy(reader: &mut dyn TraceReader, mut w: Box<dyn TraceWriter>) -> Result<u64, Error> {
    let mut buf = Vec::with_capacity(1 << 14);
    let mut events: Vec<ProcessEvent> = Vec::new();
    let (mut first, mut written) = (true, 0u64);
    loop {
        buf.clear();
        let n = reader.read_batch(&mut buf, 1 << 14)?;
        if std::mem::take(&mut first) && reader.carries_events() {
            w.enable_events()?;
        }
        reader.take_events(&mut events);
        if events.is_empty() {
            w.write_all(&buf)?;
            written += n as u64;
        } else {
            let mut e = events.iter().peekable();
            for r in &buf {
                while let Some(ev) = e.next_if(|ev| ev.before <= written) {
                    w.write_event(ev)?;
                }
                w.write(r)?;
                written += 1;
            }
            // At the end, the events after the last request.
            let rest: Vec<ProcessEvent> = e.copied().collect();
            events = rest;
            if n == 0 {
                for ev in &events {
                    w.write_event(ev)?;
                }
                events.clear();
            }
        }
        if n == 0 {
            break;
        }
    }
    Ok(w.finish()?)
}

fn process_alive(pid: u32) -> bool {
    if cfg!(target_os = "linux") {
        Path::new(&format!("/proc/{pid}")).exists()
    } else {
        // Without /proc, keep the file: removing another run's output would be worse.
        true
    }
}

/// An output file being written: to a temporary file beside it, synced and renamed over it when
/// complete (so a failure or an interrupt never leaves a half-written output, and an existing
/// file keeps its content until the new one is whole); or, for a character device or a FIFO,
/// the target itself (written through, never replaced). A symbolic link is followed: its target
/// is written, the link stays. Directories, block devices and sockets are refused. Dropped
/// before [`OutputFile::commit`], it removes its temporary file.
pub struct OutputFile {
    /// The path the user named (for messages).
    pub name: PathBuf,
    /// Where the bytes go.
    writing: PathBuf,
    /// The path the temporary file is renamed to; `None` when writing through.
    target: Option<PathBuf>,
    committed: bool,
}

impl OutputFile {
    pub fn new(output: &Path) -> Result<OutputFile, Error> {
        let refuse = |what: &str| -> Error {
            ConfigError::new("OUTPUT", format!("`{}` is {what}; iostack writes trace files to regular files, character devices and pipes", output.display())).into()
        };
        let mut real = output.to_path_buf();
        if fs::symlink_metadata(output).is_ok_and(|m| m.file_type().is_symlink()) {
            real = fs::canonicalize(output).map_err(|_| refuse("a symbolic link to a missing file"))?;
        }
        if let Ok(m) = fs::metadata(&real) {
            let t = m.file_type();
            if t.is_dir() {
                return Err(refuse("a directory"));
            }
            if !t.is_file() {
                #[cfg(unix)]
                {
                    use std::os::unix::fs::FileTypeExt;
                    if t.is_char_device() || t.is_fifo() {
                        return Ok(OutputFile { name: output.to_path_buf(), writing: real, target: None, committed: false });
                    }
                }
                return Err(refuse("neither a regular file, a character device nor a pipe (a block device or a socket)"));
            }
        }
        let tmp = temp_beside(&real)?;
        temps::register(&tmp);
        Ok(OutputFile { name: output.to_path_buf(), writing: tmp, target: Some(real), committed: false })
    }

    /// The path to open and write.
    pub fn path(&self) -> &Path {
        &self.writing
    }

    /// Moves the complete output into place (the writer has synced it).
    pub fn commit(&mut self) -> Result<(), Error> {
        if let Some(target) = &self.target {
            fs::rename(&self.writing, target).map_err(|e| TraceError::io(&self.name, &e))?;
            temps::unregister(&self.writing);
            // The rename itself reaches the disk with the directory.
            if let Some(dir) = target.parent().filter(|d| !d.as_os_str().is_empty()) {
                if let Ok(d) = File::open(dir) {
                    let _ = d.sync_all();
                }
            }
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if !self.committed && self.target.is_some() {
            let _ = fs::remove_file(&self.writing);
            temps::unregister(&self.writing);
        }
    }
}

/// The temporary files being written by this process, so that an interrupt (SIGINT, SIGTERM)
/// removes them before the process exits.
pub mod temps {
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    static TEMPS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

    pub fn register(p: &Path) {
        TEMPS.lock().unwrap_or_else(|e| e.into_inner()).push(p.to_path_buf());
    }

    pub fn unregister(p: &Path) {
        TEMPS.lock().unwrap_or_else(|e| e.into_inner()).retain(|q| q != p);
    }

    /// Removes every temporary file still registered (on an interrupt).
    pub fn remove_all() {
        let list = std::mem::take(&mut *TEMPS.lock().unwrap_or_else(|e| e.into_inner()));
        for p in list {
            let _ = std::fs::remove_file(p);
        }
    }
}

/// Streams `reader` into a new `output` of `format` (see [`OutputFile`]: through a temporary
/// file renamed at the end, or written through to a device or pipe).
pub fn write_atomic(reader: &mut dyn TraceReader, output: &Path, format: Format) -> Result<u64, Error> {
    if is_stdout(output) {
        return write_stdout(reader, format);
    }
    let mut out = OutputFile::new(output)?;
    let n = copy(reader, create_named(out.path(), output, format)?)?;
    out.commit()?;
    Ok(n)
}

/// Converts `input` (format detected when `None`; `-` is the standard input) into `output`
/// (format from its name when `None`). Refuses to write over the input.
pub fn convert(
    input: &Path,
    input_format: Option<Format>,
    options: &ReaderOptions,
    output: &Path,
    output_format_: Option<Format>,
) -> Result<ConvertStats, Error> {
    if same_file(input, output) || input == output {
        return Err(ConfigError::new("OUTPUT", format!("`{}` is the input; write the conversion to another file", output.display())).into());
    }
    let out_format = output_format(output, output_format_)?;
    let (mut reader, in_format) = super::open_with_format(input, input_format, options)?;
    let requests = write_atomic(&mut *reader, output, out_format)?;
    Ok(ConvertStats { input_format: in_format, output_format: out_format, requests, skipped: reader.skipped() })
}

#[cfg(test)]
mod event_tests {
    use super::*;

    /// A trace with process events converts to CSV and back unchanged; a format without them
    /// refuses the events and leaves no output.
    #[test]
    fn process_events_round_trip_through_csv() {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join("in.csv");
        let text = "time_ns,pid,op,offset,length,device,file,file_offset,file_size,event,ppid\n0,1,R,0,4096,0,,,,,\n0,7,,,,,,,,fork,1\n0,7,,,,,,,,wait,1\n0,7,R,4096,4096,0,,,,,\n0,7,,,,,,,,exit,1\n";
        std::fs::write(&src, text).unwrap();
        let out = dir.path().join("out.csv.zst");
        let stats = convert(&src, None, &ReaderOptions::default(), &out, None).unwrap();
        assert_eq!(stats.requests, 2);
        let back = dir.path().join("back.csv");
        convert(&out, None, &ReaderOptions::default(), &back, None).unwrap();
        assert_eq!(std::fs::read_to_string(&back).unwrap(), text);
        let e = convert(&src, None, &ReaderOptions::default(), &dir.path().join("o.iostack"), None).err().unwrap().to_string();
        assert!(e.contains("cannot hold process events"), "{e}");
        assert!(!dir.path().join("o.iostack").exists());
    }
}
