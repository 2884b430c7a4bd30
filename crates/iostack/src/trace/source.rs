//! The bytes of a trace file, read through a buffer (and a decoder when it is compressed).
//!
//! Files are read, never memory-mapped: a mapped file that another process truncates kills the
//! reader with SIGBUS, while a read simply ends early; a plain file that ends before the length
//! it had when opened is reported as an error naming the file.
//!
//! Compression is recognised by the first bytes of the file (zstd `28 b5 2f fd`, xz
//! `fd 37 7a 58 5a 00`, gzip `1f 8b`, bzip2 `BZh`), never by the extension alone, so a renamed
//! file still opens. The content (decoded if compressed) goes into a buffer that is refilled as
//! the reader consumes it, so memory stays constant in the trace's length. Readers see one interface either
//! way: lines ([`Source::next_line`]) for text formats and runs of whole records
//! ([`Source::records`]) for binary ones, both borrowed from the buffer without copying.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::error::TraceError;

/// How the file is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compression {
    None,
    Zstd,
    Xz,
    Gzip,
    Bzip2,
}

impl Compression {
    /// Recognises a compressed stream by its magic bytes.
    pub fn from_magic(head: &[u8]) -> Compression {
        if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Compression::Zstd
        } else if head.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0x00]) {
            Compression::Xz
        } else if head.starts_with(&[0x1f, 0x8b]) {
            Compression::Gzip
        } else if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
            Compression::Bzip2
        } else {
            Compression::None
        }
    }

    /// The usual file extension (without the dot), for stripping before name-based detection.
    pub fn extension(self) -> Option<&'static str> {
        match self {
            Compression::None => None,
            Compression::Zstd => Some("zst"),
            Compression::Xz => Some("xz"),
            Compression::Gzip => Some("gz"),
            Compression::Bzip2 => Some("bz2"),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Zstd => "zstd",
            Compression::Xz => "xz",
            Compression::Gzip => "gzip",
            Compression::Bzip2 => "bzip2",
        }
    }
}

/// Reads up to 6 bytes (enough for every compression magic).
fn read_head(r: &mut impl Read, path: &Path) -> Result<([u8; 6], usize), TraceError> {
    let mut head = [0u8; 6];
    let mut got = 0;
    while got < head.len() {
        match r.read(&mut head[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(TraceError::io(path, &e)),
        }
    }
    Ok((head, got))
}

/// Longest line a text reader accepts; longer means the file is not text (and would otherwise
/// grow the buffer without bound).
const MAX_LINE: usize = 16 << 20;

/// Size of the decode buffer of a compressed stream; lines longer than this grow it.
const STREAM_BUFFER: usize = 1 << 20;

enum Data {
    /// A decoded window of a compressed stream.
    Stream { buf: Vec<u8>, decoder: Box<dyn Read + Send> },
    /// An empty file (which cannot be mapped on every platform) or in-memory bytes.
    Owned(Vec<u8>),
}

/// What [`Source::records`] found.
pub enum Records<'a> {
    /// One or more whole records.
    Some(&'a [u8]),
    /// The end of the file, after whole records.
    End,
    /// The file ends `len` bytes into a record.
    Partial(usize),
}

/// A trace file's bytes, positioned at the next unread byte.
pub struct Source {
    data: Data,
    /// Next unread byte of the buffer.
    pos: usize,
    /// End of the valid bytes of the buffer.
    end: usize,
    /// No more bytes can be read into the buffer.
    eof: bool,
    path: PathBuf,
    compression: Compression,
    /// Byte length of the decompressed content, when known without reading it (plain files).
    known_len: Option<u64>,
    /// Bytes the decoder has delivered so far.
    delivered: u64,
}

impl Source {
    /// Opens `path`, decompressing transparently.
    /// `-` is the standard input (streamed; its format is detected from the content only).
    pub fn open(path: &Path) -> Result<Source, TraceError> {
        if path == Path::new("-") {
            let mut stdin = io::stdin();
            let (head, got) = read_head(&mut stdin, path)?;
            return Source::streamed(path, Box::new(io::Cursor::new(head[..got].to_vec()).chain(stdin)), &head[..got], None);
        }
        let mut file = File::open(path).map_err(|e| TraceError::io(path, &e))?;
        let (head, got) = read_head(&mut file, path)?;
        let meta = file.metadata().map_err(|e| TraceError::io(path, &e))?;
        // The bytes already read for the magic go first, so pipes work too.
        let known = if meta.is_file() { Some(meta.len()) } else { None };
        Source::streamed(path, Box::new(io::Cursor::new(head[..got].to_vec()).chain(file)), &head[..got], known)
    }

    /// A source decoding `raw` (which starts with `head`), uncompressed length `known` if known.
    fn streamed(path: &Path, raw: Box<dyn Read + Send>, head: &[u8], known: Option<u64>) -> Result<Source, TraceError> {
        let compression = Compression::from_magic(head);
        let buffered = io::BufReader::with_capacity(1 << 16, raw);
        let decoder: Box<dyn Read + Send> = match compression {
            // Empty files (which cannot be mapped portably), pipes and devices.
            Compression::None => Box::new(buffered),
            Compression::Zstd => {
                let mut d = zstd::stream::read::Decoder::with_buffer(buffered).map_err(|e| TraceError::io(path, &e))?;
                // Large-window frames (zstd --long) need a larger limit than the default.
                let _ = d.window_log_max(31);
                Box::new(d)
            }
            Compression::Xz => Box::new(xz2::read::XzDecoder::new_multi_decoder(buffered)),
            Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(buffered)),
            Compression::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(buffered)),
        };
        let mut source = Source::stream(path.to_path_buf(), compression, decoder);
        if compression == Compression::None {
            source.known_len = known;
        }
        Ok(source)
    }

    fn stream(path: PathBuf, compression: Compression, decoder: Box<dyn Read + Send>) -> Source {
        Source {
            data: Data::Stream { buf: vec![0; STREAM_BUFFER], decoder },
            pos: 0,
            end: 0,
            eof: false,
            path,
            compression,
            known_len: None,
            delivered: 0,
        }
    }

    /// A source over bytes already in memory (tests; the path is only used in messages).
    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Source {
        let end = bytes.len();
        Source {
            known_len: Some(end as u64),
            data: Data::Owned(bytes),
            pos: 0,
            end,
            eof: true,
            path: path.to_path_buf(),
            compression: Compression::None,
            delivered: end as u64,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn compression(&self) -> Compression {
        self.compression
    }

    /// Length of the (decompressed) content when known up front: plain files only.
    pub fn known_len(&self) -> Option<u64> {
        self.known_len
    }

    #[inline]
    fn buf(&self) -> &[u8] {
        match &self.data {
            Data::Stream { buf, .. } => buf,
            Data::Owned(v) => v,
        }
    }

    fn io_err(&self, e: &io::Error) -> TraceError {
        TraceError::file(&self.path, format!("cannot read ({} stream): {e}", self.compression.name()))
    }

    /// Reads until at least `want` unread bytes are buffered or the stream ends. Moves unread
    /// bytes to the front of the buffer and grows it when needed.
    fn fill(&mut self, want: usize) -> Result<(), TraceError> {
        if self.eof || self.end - self.pos >= want {
            return Ok(());
        }
        let (pos, end) = (self.pos, self.end);
        let Data::Stream { buf, decoder } = &mut self.data else { return Ok(()) };
        if pos > 0 {
            buf.copy_within(pos..end, 0);
        }
        let mut end = end - pos;
        if buf.len() < want {
            buf.resize(want.next_power_of_two(), 0);
        }
        let mut failure = None;
        let mut eof = false;
        while end < want {
            match decoder.read(&mut buf[end..]) {
                Ok(0) => {
                    eof = true;
                    break;
                }
                Ok(n) => {
                    end += n;
                    self.delivered += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        self.pos = 0;
        self.end = end;
        self.eof = eof;
        if let Some(e) = failure {
            self.eof = true;
            return Err(self.io_err(&e));
        }
        if eof && self.compression == Compression::None {
            if let Some(len) = self.known_len.filter(|&len| self.delivered < len) {
                self.end = self.pos;
                return Err(TraceError::file(
                    &self.path,
                    format!("the file shrank while it was read ({len} bytes when opened, {} read): it was truncated or replaced", self.delivered),
                ));
            }
        }
        Ok(())
    }

    #[cold]
    fn long_line(&self) -> TraceError {
        TraceError::file(&self.path, format!("a line longer than {} MiB: not a text trace (wrong --format?)", MAX_LINE >> 20))
    }

    /// Up to `n` bytes from the current position, without consuming them (for detection).
    pub fn peek(&mut self, n: usize) -> Result<&[u8], TraceError> {
        self.fill(n)?;
        let end = self.end.min(self.pos + n);
        Ok(&self.buf()[self.pos..end])
    }

    /// The next line without its terminator (`\n` or `\r\n`), or `None` at the end.
    #[inline]
    pub fn next_line(&mut self) -> Result<Option<&[u8]>, TraceError> {
        let mut searched = 0;
        let (start, stop) = loop {
            let found = memchr::memchr(b'\n', &self.buf()[self.pos + searched..self.end]);
            match found {
                Some(i) => {
                    let start = self.pos;
                    let nl = start + searched + i;
                    self.pos = nl + 1;
                    break (start, nl);
                }
                None if self.eof => {
                    if self.pos == self.end {
                        return Ok(None);
                    }
                    let start = self.pos;
                    self.pos = self.end;
                    break (start, self.end);
                }
                None => {
                    searched = self.end - self.pos;
                    if searched > MAX_LINE {
                        self.eof = true;
                        self.pos = self.end;
                        return Err(self.long_line());
                    }
                    let cap = match &self.data {
                        Data::Stream { buf, .. } => buf.len(),
                        _ => 0,
                    };
                    // Ask for more than is buffered; double the buffer when a line fills it.
                    let want = if searched + 1 > cap / 2 { cap * 2 } else { cap };
                    self.fill(want.max(searched + 1))?;
                }
            }
        };
        if stop - start > MAX_LINE {
            self.eof = true;
            self.pos = self.end;
            return Err(self.long_line());
        }
        let mut line = &self.buf()[start..stop];
        if let [rest @ .., b'\r'] = line {
            line = rest;
        }
        Ok(Some(line))
    }

    /// Whole records of `size` bytes from the current position (at least one unless at the end);
    /// the caller consumes what it used with [`Source::consume`].
    #[inline]
    pub fn records(&mut self, size: usize) -> Result<Records<'_>, TraceError> {
        if self.end - self.pos < size {
            let cap = match &self.data {
                Data::Stream { buf, .. } => buf.len(),
                _ => 0,
            };
            self.fill(cap.max(size))?;
        }
        let avail = self.end - self.pos;
        if avail == 0 {
            return Ok(Records::End);
        }
        if avail < size {
            return Ok(Records::Partial(avail));
        }
        let whole = avail - avail % size;
        Ok(Records::Some(&self.buf()[self.pos..self.pos + whole]))
    }

    /// The buffered bytes not yet read (for parsers that decode several lines in one go and
    /// then [`Source::consume`] them). A streamed source may end this window mid-line.
    #[inline]
    pub fn buffered(&self) -> &[u8] {
        &self.buf()[self.pos..self.end]
    }

    /// Marks `n` buffered bytes as read.
    #[inline]
    pub fn consume(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn lines_of(mut s: Source) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        while let Some(l) = s.next_line().unwrap() {
            out.push(l.to_vec());
        }
        out
    }

    #[test]
    fn lines_across_compressions() {
        let text: Vec<u8> = (0..100_000).flat_map(|i| format!("{i},x\r\n").into_bytes()).collect();
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("t.txt");
        std::fs::write(&plain, &text).unwrap();
        let gz = dir.path().join("t.gz");
        let mut e = flate2::write::GzEncoder::new(File::create(&gz).unwrap(), flate2::Compression::fast());
        e.write_all(&text).unwrap();
        e.finish().unwrap();
        let zst = dir.path().join("t.renamed");
        std::fs::write(&zst, zstd::encode_all(&text[..], 1).unwrap()).unwrap();
        let xz = dir.path().join("t.xz");
        let mut e = xz2::write::XzEncoder::new(File::create(&xz).unwrap(), 1);
        e.write_all(&text).unwrap();
        e.finish().unwrap();
        let bz = dir.path().join("t.bz2");
        let mut e = bzip2::write::BzEncoder::new(File::create(&bz).unwrap(), bzip2::Compression::fast());
        e.write_all(&text).unwrap();
        e.finish().unwrap();
        let expect = lines_of(Source::open(&plain).unwrap());
        assert_eq!(expect.len(), 100_000);
        assert_eq!(expect[7], b"7,x");
        for (p, c) in [(&gz, Compression::Gzip), (&zst, Compression::Zstd), (&xz, Compression::Xz), (&bz, Compression::Bzip2)] {
            let s = Source::open(p).unwrap();
            assert_eq!(s.compression(), c);
            assert_eq!(lines_of(s), expect, "{}", p.display());
        }
    }

    #[test]
    fn long_lines_grow_the_buffer() {
        let long = vec![b'a'; 3 * STREAM_BUFFER];
        let mut text = long.clone();
        text.extend_from_slice(b"\nb");
        let zipped = zstd::encode_all(&text[..], 1).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.zst");
        std::fs::write(&p, zipped).unwrap();
        let lines = lines_of(Source::open(&p).unwrap());
        assert_eq!(lines, vec![long, b"b".to_vec()]);
    }

    #[cfg(unix)]
    #[test]
    fn pipes_are_streamed() {
        use std::process::Command;
        // A FIFO cannot be mapped or reopened; the bytes read for the magic must not be lost.
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("p");
        let ok = Command::new("mkfifo").arg(&fifo).status().map(|s| s.success()).unwrap_or(false);
        if !ok {
            return;
        }
        let f2 = fifo.clone();
        let writer = std::thread::spawn(move || std::fs::write(&f2, b"abcdefgh\n12\n").unwrap());
        let lines = lines_of(Source::open(&fifo).unwrap());
        writer.join().unwrap();
        assert_eq!(lines, vec![b"abcdefgh".to_vec(), b"12".to_vec()]);
    }

    #[test]
    fn endless_lines_are_refused() {
        let zipped = zstd::encode_all(&vec![b'x'; MAX_LINE + 10][..], 1).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("l.zst");
        std::fs::write(&p, zipped).unwrap();
        let mut s = Source::open(&p).unwrap();
        match s.next_line() {
            Err(e) => assert!(e.to_string().contains("not a text trace"), "{e}"),
            Ok(l) => panic!("a {}-byte line was accepted", l.map_or(0, |l| l.len())),
        }
        assert!(s.next_line().unwrap().is_none());
    }

    #[test]
    fn a_file_truncated_while_read_is_an_error_not_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("t.csv");
        let text: Vec<u8> = (0..400_000).flat_map(|i| format!("{i}\n").into_bytes()).collect();
        std::fs::write(&p, &text).unwrap();
        let mut s = Source::open(&p).unwrap();
        assert_eq!(s.next_line().unwrap(), Some(&b"0"[..]));
        std::fs::OpenOptions::new().write(true).open(&p).unwrap().set_len(1000).unwrap();
        let e = loop {
            match s.next_line() {
                Ok(Some(_)) => {}
                Ok(None) => panic!("the shrunken file read as complete"),
                Err(e) => break e,
            }
        };
        assert!(e.to_string().contains("shrank") && e.to_string().contains("t.csv"), "{e}");
    }

    #[test]
    fn partial_records() {
        let mut s = Source::from_bytes(Path::new("m"), vec![0; 70]);
        match s.records(32).unwrap() {
            Records::Some(b) => {
                assert_eq!(b.len(), 64);
                s.consume(64)
            }
            _ => panic!(),
        }
        assert!(matches!(s.records(32).unwrap(), Records::Partial(6)));
    }
}
