//! Byte-level parsing shared by the text readers, and the two reader frames every format plugs
//! into: [`TextReader`] (one line at a time through a [`LineParser`]) and [`RecordReader`]
//! (fixed-size binary records through a [`RecordDecoder`]).
//!
//! Lines are borrowed slices of the source buffer and fields are sub-slices of them; numbers are
//! parsed from bytes directly. Nothing is allocated per line unless the line is malformed, when
//! the error message is built.

use std::path::Path;

use super::source::{Records, Source};
use super::{Request, TraceReader};
use crate::error::{Location, TraceError};

/// A field that could not be decoded: which one and why. The frame adds the file and the line or
/// record number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub field: &'static str,
    pub message: String,
}

impl FieldError {
    pub fn new(field: &'static str, message: impl Into<String>) -> FieldError {
        FieldError { field, message: message.into() }
    }

    /// `` `12x` is not a number ``.
    #[cold]
    pub fn not_number(field: &'static str, text: &[u8]) -> FieldError {
        FieldError::new(field, format!("`{}` is not a number", show(text)))
    }

    #[cold]
    pub fn missing(field: &'static str) -> FieldError {
        FieldError::new(field, "missing")
    }

    #[cold]
    pub fn out_of_range(field: &'static str, what: impl std::fmt::Display) -> FieldError {
        FieldError::new(field, format!("{what} is out of range"))
    }
}

/// Field text for a message: lossy UTF-8, shortened.
pub fn show(text: &[u8]) -> String {
    let s = String::from_utf8_lossy(text);
    if s.chars().count() > 40 {
        let cut: String = s.chars().take(40).collect();
        format!("{cut}...")
    } else {
        s.into_owned()
    }
}

#[inline]
pub fn trim(mut s: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = s {
        s = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = s {
        s = rest;
    }
    s
}

/// Strips one pair of surrounding double quotes.
#[inline]
pub fn unquote(s: &[u8]) -> &[u8] {
    match s {
        [b'"', inner @ .., b'"'] => inner,
        _ => s,
    }
}

/// A decimal unsigned integer (surrounding blanks allowed, optional leading `+`).
#[inline]
pub fn parse_u64(s: &[u8]) -> Option<u64> {
    let s = trim(s);
    let s = s.strip_prefix(b"+").unwrap_or(s);
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// The run of up to 19 decimal digits at the start of `s` (which cannot overflow a u64) and its
/// length (0 when `s` does not start with a digit); `None` when the run is longer (left to the
/// checked parser).
#[inline(always)]
pub fn leading_digits(s: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        if i == 19 {
            return None;
        }
        v = v * 10 + d as u64;
        i += 1;
    }
    Some((v, i))
}

/// A decimal signed integer.
#[inline]
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    let s = trim(s);
    match s {
        [b'-', rest @ ..] => {
            let v = parse_u64(rest)?;
            if v <= i64::MAX as u64 + 1 {
                Some((v as i64).wrapping_neg())
            } else {
                None
            }
        }
        _ => parse_u64(s).and_then(|v| i64::try_from(v).ok()),
    }
}

/// A hexadecimal unsigned integer, with or without `0x`.
#[inline]
pub fn parse_hex(s: &[u8]) -> Option<u64> {
    let s = trim(s);
    let s = s.strip_prefix(b"0x").or_else(|| s.strip_prefix(b"0X")).unwrap_or(s);
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v: u64 = 0;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | d as u64;
    }
    Some(v)
}

/// A non-negative decimal number `int[.frac]` scaled by `10^decimals` exactly (extra fraction
/// digits are truncated): `parse_scaled(b"1.5", 9) == Some(1_500_000_000)`. Used for times in
/// seconds with a fraction, without the rounding of a float.
#[inline]
pub fn parse_scaled(s: &[u8], decimals: u32) -> Option<u64> {
    let s = trim(s);
    let (int, frac) = match memchr::memchr(b'.', s) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, &s[s.len()..]),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let int_v = if int.is_empty() { 0 } else { parse_u64(int)? };
    let mut frac_v: u64 = 0;
    let mut digits = 0;
    for &c in frac {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        if digits < decimals {
            frac_v = frac_v * 10 + d as u64;
            digits += 1;
        }
    }
    let scale = 10u64.checked_pow(decimals)?;
    frac_v *= 10u64.pow(decimals - digits);
    int_v.checked_mul(scale)?.checked_add(frac_v)
}

/// A floating-point number (decimal or exponent notation).
#[inline]
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    let s = trim(s);
    if s.is_empty() {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// Splits `line` at `delim` into `out`; returns the number of fields in the line (which may
/// exceed `out.len()`; the extra fields are not stored).
#[inline]
pub fn split_delim<'a>(line: &'a [u8], delim: u8, out: &mut [&'a [u8]]) -> usize {
    // A plain loop: trace lines are short, shorter than a vectorised search needs to pay off.
    let mut n = 0;
    let mut start = 0;
    for (i, &c) in line.iter().enumerate() {
        if c == delim {
            if n < out.len() {
                out[n] = &line[start..i];
            }
            n += 1;
            start = i + 1;
        }
    }
    if n < out.len() {
        out[n] = &line[start..];
    }
    n + 1
}

/// Splits `line` at runs of spaces and tabs (leading and trailing blanks ignored); returns the
/// number of fields, like [`split_delim`].
#[inline]
pub fn split_ws<'a>(line: &'a [u8], out: &mut [&'a [u8]]) -> usize {
    let mut n = 0;
    let mut i = 0;
    let len = line.len();
    while i < len {
        while i < len && (line[i] == b' ' || line[i] == b'\t') {
            i += 1;
        }
        if i == len {
            break;
        }
        let start = i;
        while i < len && line[i] != b' ' && line[i] != b'\t' {
            i += 1;
        }
        if n < out.len() {
            out[n] = &line[start..i];
        }
        n += 1;
    }
    n
}

/// Shifts a trace's clock so that its first request is at time 0.
///
/// Traces stamp requests on their own epoch (Unix time, Windows FILETIME, a host's uptime);
/// iostack keeps the spacing and drops the epoch. A request stamped before the first one (traces
/// merged from several hosts are not always sorted) is put at 0 rather than going negative.
#[derive(Debug, Clone, Copy, Default)]
pub struct TimeShift {
    base: Option<u64>,
}

impl TimeShift {
    #[inline]
    pub fn apply(&mut self, t_ns: u64) -> u64 {
        let base = *self.base.get_or_insert(t_ns);
        t_ns.saturating_sub(base)
    }

    /// For clocks with signed values.
    #[inline]
    pub fn apply_signed(&mut self, t_ns: i128) -> u64 {
        // Map onto u64 order-preservingly: shift by 2^63 after clamping to the i64 range.
        let clamped = t_ns.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        self.apply((clamped as u64) ^ (1 << 63))
    }
}

/// Converts `value * unit_ns` to whole nanoseconds, checking the range.
#[inline]
pub fn to_ns(field: &'static str, value: u64, unit_ns: u64) -> Result<u64, FieldError> {
    value.checked_mul(unit_ns).ok_or_else(|| FieldError::out_of_range(field, value))
}

/// Byte offset of a sector number.
#[inline]
pub fn sectors_to_bytes(field: &'static str, sectors: u64, sector: u64) -> Result<u64, FieldError> {
    sectors.checked_mul(sector).ok_or_else(|| FieldError::out_of_range(field, sectors))
}

/// Longest request a reader accepts: 4 GiB. No block device transfers more in one request, and
/// a larger length is a wrong unit or a corrupt field; accepting it would make block-mode and
/// timed runs walk billions of pages (a terabyte is 2^28 of them).
pub const MAX_REQUEST_BYTES: u64 = 1 << 32;

/// Latest request time a reader accepts: 2^62 ns (146 years), so that the timed engine's clock,
/// which adds service and think times (at most [`crate::units::MAX_DURATION_NS`]) to it, cannot
/// wrap.
pub const MAX_TIME_NS: u64 = 1 << 62;

/// The checks every reader makes on every request, whatever its format: the byte range ends
/// within 2^64, the length is at most [`MAX_REQUEST_BYTES`], the time at most [`MAX_TIME_NS`].
#[inline(always)]
pub fn check_request(r: Request) -> Result<Request, FieldError> {
    if in_range(&r) {
        Ok(r)
    } else {
        Err(range_error(&r))
    }
}

/// Whether `r` passes [`check_request`] (the test alone, for the readers' loops, which build
/// the error out of line).
#[inline(always)]
pub fn in_range(r: &Request) -> bool {
    r.length <= MAX_REQUEST_BYTES && r.offset.checked_add(r.length).is_some() && r.time_ns <= MAX_TIME_NS
}

/// The error [`check_request`] gives a request out of range: its first field out of range.
#[cold]
#[inline(never)]
fn range_error(r: &Request) -> FieldError {
    if r.length > MAX_REQUEST_BYTES {
        FieldError::new("length", format!("{} bytes: longer than the 4 GiB a request may have (wrong unit?)", r.length))
    } else if r.offset.checked_add(r.length).is_none() {
        FieldError::new("offset", format!("{} + {} bytes ends beyond 2^64", r.offset, r.length))
    } else {
        debug_assert!(r.time_ns > MAX_TIME_NS);
        FieldError::new("time", format!("{} ns is beyond 2^62 ns (146 years)", r.time_ns))
    }
}

/// [`check_request`] on a decoded request, if any.
#[inline(always)]
fn checked(r: Result<Option<Request>, FieldError>) -> Result<Option<Request>, FieldError> {
    match r {
        Ok(Some(r)) => check_request(r).map(Some),
        other => other,
    }
}

/// Decodes one line of a text format.
pub trait LineParser: Send {
    /// The request of `line` (1-based `line_no`), or `None` when the line holds none (a header,
    /// another event type, a summary). Blank lines and lines starting with `#` never reach it.
    fn parse(&mut self, line: &[u8], line_no: u64) -> Result<Option<Request>, FieldError>;

    /// A request still owed by the last parsed line (formats whose one line stands for several
    /// requests); asked before every new line.
    #[inline]
    fn pending(&mut self) -> Option<Request> {
        None
    }

    /// An error about the whole trace to report at its end (e.g. a required header never seen).
    fn finish(&mut self) -> Option<String> {
        None
    }

    /// The process event of the line `parse` just took without a request (formats that carry
    /// process events; its `before` is filled in by the reader).
    fn take_event(&mut self) -> Option<super::ProcessEvent> {
        None
    }

    /// Whether the trace can carry process events (known once its header was read).
    fn carries_events(&self) -> bool {
        false
    }

    /// Whether the parser has a [`LineParser::parse_plain`] fast path. A parser that has one
    /// never owes [`LineParser::pending`] requests.
    const PLAIN_FAST_PATH: bool = false;

    /// The fast path: decodes the line at the start of `buf` when it has the format's plain
    /// shape (no blanks, quotes, empty fields or other rarities; numbers that cannot overflow),
    /// returning the request and the bytes the line takes with its `\n` or `\r\n`. Returns
    /// `None` for anything else (an unusual or invalid line, a header, a line that does not end
    /// within `buf`), and [`LineParser::parse`] then decides the line, with its exact errors.
    /// Must give the same request as `parse` for every line it accepts.
    #[inline]
    fn parse_plain(&mut self, _buf: &[u8]) -> Option<(Request, usize)> {
        None
    }
}

/// A text trace: lines from a [`Source`] decoded by a [`LineParser`].
pub struct TextReader<P: LineParser> {
    source: Source,
    parser: P,
    line_no: u64,
    skip_invalid: bool,
    skipped: u64,
    done: bool,
    /// Requests handed out, and the process events read (placed after that many requests).
    returned: u64,
    events: Vec<super::ProcessEvent>,
}

impl<P: LineParser> TextReader<P> {
    pub fn new(source: Source, parser: P, skip_invalid: bool) -> Self {
        TextReader { source, parser, line_no: 0, skip_invalid, skipped: 0, done: false, returned: 0, events: Vec::new() }
    }

    #[inline]
    fn next(&mut self) -> Result<Option<Request>, TraceError> {
        if let Some(r) = self.parser.pending() {
            return match check_request(r) {
                Ok(r) => {
                    self.returned += 1;
                    Ok(Some(r))
                }
                Err(_) if self.skip_invalid => {
                    self.skipped += 1;
                    self.next()
                }
                Err(e) => {
                    self.done = true;
                    Err(TraceError::new(self.source.path(), Location::Line(self.line_no), Some(e.field), e.message))
                }
            };
        }
        if self.done {
            return Ok(None);
        }
        loop {
            let Some(line) = self.source.next_line()? else {
                self.done = true;
                if let Some(msg) = self.parser.finish() {
                    return Err(TraceError::file(self.source.path(), msg));
                }
                return Ok(None);
            };
            self.line_no += 1;
            // A UTF-8 byte-order mark, as some Windows tools write, is not part of the header.
            let line = if self.line_no == 1 { line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line) } else { line };
            let first = line.iter().position(|&c| c != b' ' && c != b'\t');
            let Some(first) = first else { continue };
            if line[first] == b'#' {
                continue;
            }
            match checked(self.parser.parse(line, self.line_no)) {
                Ok(Some(r)) => {
                    self.returned += 1;
                    return Ok(Some(r));
                }
                Ok(None) => {
                    if let Some(mut e) = self.parser.take_event() {
                        e.before = self.returned;
                        self.events.push(e);
                    }
                    continue;
                }
                Err(e) => {
                    if self.skip_invalid {
                        self.skipped += 1;
                        continue;
                    }
                    self.done = true;
                    return Err(TraceError::new(
                        self.source.path(),
                        Location::Line(self.line_no),
                        Some(e.field),
                        e.message,
                    ));
                }
            }
        }
    }
}

impl<P: LineParser> TraceReader for TextReader<P> {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        self.next()
    }

    fn read_batch(&mut self, buf: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        let mut n = 0;
        buf.reserve(max.min(1 << 16));
        while n < max {
            // Plain lines are decoded in a run straight from the buffered bytes; the first line
            // (byte-order mark, header) and every line the fast path declines go one at a time
            // through `next`, which keeps all the checks and messages.
            if P::PLAIN_FAST_PATH && self.line_no > 0 && !self.done {
                let data = self.source.buffered();
                let mut used = 0;
                let start = n;
                while n < max {
                    match self.parser.parse_plain(&data[used..]) {
                        // A request out of range goes through `next`, which names its line.
                        Some((r, len)) if in_range(&r) => {
                            buf.push(r);
                            used += len;
                            n += 1;
                        }
                        _ => break,
                    }
                }
                self.source.consume(used);
                self.line_no += (n - start) as u64;
                self.returned += (n - start) as u64;
                if n == max {
                    break;
                }
            }
            match self.next()? {
                Some(r) => {
                    buf.push(r);
                    n += 1;
                }
                None => break,
            }
        }
        Ok(n)
    }

    fn skipped(&self) -> u64 {
        self.skipped
    }

    fn take_events(&mut self, out: &mut Vec<super::ProcessEvent>) {
        out.append(&mut self.events);
    }

    fn carries_events(&self) -> bool {
        self.parser.carries_events()
    }

    fn path(&self) -> &Path {
        self.source.path()
    }
}

/// Decodes one fixed-size record of a binary format.
pub trait RecordDecoder: Send {
    /// Bytes per record (at most 64).
    const SIZE: usize;
    /// Whether a record can name a file.
    const CARRIES_FILES: bool = false;
    /// The request of `rec` (1-based `record_no`), or `None` when the record holds no request
    /// (e.g. a SCSI command that moves no data).
    fn decode(&mut self, rec: &[u8], record_no: u64) -> Result<Option<Request>, FieldError>;
}

/// A binary trace of fixed-size records.
pub struct RecordReader<D: RecordDecoder> {
    source: Source,
    decoder: D,
    record_no: u64,
    skip_invalid: bool,
    skipped: u64,
    done: bool,
}

impl<D: RecordDecoder> RecordReader<D> {
    /// Fails at once when the file's length is known and is not a whole number of records.
    pub fn new(source: Source, decoder: D, skip_invalid: bool) -> Result<Self, TraceError> {
        Self::with_offset(source, decoder, skip_invalid, 0)
    }

    /// Like [`RecordReader::new`] for a file whose records start after a `header` of bytes
    /// (already consumed from `source`).
    pub fn with_offset(source: Source, decoder: D, skip_invalid: bool, header: u64) -> Result<Self, TraceError> {
        if let Some(len) = source.known_len() {
            let body = len.saturating_sub(header);
            if body % D::SIZE as u64 != 0 && !skip_invalid {
                return Err(partial_error(source.path(), body / D::SIZE as u64 + 1, body % D::SIZE as u64, D::SIZE));
            }
        }
        Ok(RecordReader { source, decoder, record_no: 0, skip_invalid, skipped: 0, done: false })
    }

    fn fail(&mut self, e: FieldError) -> TraceError {
        self.done = true;
        TraceError::new(self.source.path(), Location::Record(self.record_no), Some(e.field), e.message)
    }
}

fn partial_error(path: &Path, record: u64, len: u64, size: usize) -> TraceError {
    TraceError::new(
        path,
        Location::Record(record),
        None,
        format!("the file ends {len} bytes into this record (records are {size} bytes; the file is truncated or not in this format)"),
    )
}

impl<D: RecordDecoder> RecordReader<D> {
    #[inline]
    fn fill(&mut self, buf: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        let mut n = 0;
        while n < max && !self.done {
            let records = match self.source.records(D::SIZE)? {
                Records::Some(b) => b,
                Records::End => {
                    self.done = true;
                    break;
                }
                Records::Partial(len) => {
                    self.done = true;
                    if self.skip_invalid {
                        self.skipped += 1;
                        break;
                    }
                    return Err(partial_error(self.source.path(), self.record_no + 1, len as u64, D::SIZE));
                }
            };
            // The records still wanted, decoded straight into the vector's spare room, with the
            // count, the record number and the bytes used kept in locals (set once per run).
            let take = (records.len() / D::SIZE).min(max - n);
            let first_no = self.record_no;
            let mut taken = take;
            let mut written = 0;
            let mut skipped = 0;
            let mut failure = None;
            buf.reserve(take);
            let slots = &mut buf.spare_capacity_mut()[..take];
            for (i, rec) in records[..take * D::SIZE].chunks_exact(D::SIZE).enumerate() {
                let e = match self.decoder.decode(rec, first_no + i as u64 + 1) {
                    Ok(Some(r)) if in_range(&r) => {
                        slots[written].write(r);
                        written += 1;
                        continue;
                    }
                    Ok(None) => continue,
                    Ok(Some(r)) => range_error(&r),
                    Err(e) => e,
                };
                if self.skip_invalid {
                    skipped += 1;
                } else {
                    failure = Some(e);
                    taken = i + 1;
                    break;
                }
            }
            // SAFETY: the first `written` spare slots were initialised by the loop above.
            unsafe { buf.set_len(buf.len() + written) };
            n += written;
            self.skipped += skipped;
            self.record_no = first_no + taken as u64;
            self.source.consume(taken * D::SIZE);
            if let Some(e) = failure {
                return Err(self.fail(e));
            }
        }
        Ok(n)
    }
}

impl<D: RecordDecoder> TraceReader for RecordReader<D> {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        while !self.done {
            let rec: [u8; 64] = match self.source.records(D::SIZE)? {
                Records::Some(b) => {
                    let mut rec = [0u8; 64];
                    rec[..D::SIZE].copy_from_slice(&b[..D::SIZE]);
                    rec
                }
                Records::End => {
                    self.done = true;
                    break;
                }
                Records::Partial(len) => {
                    self.done = true;
                    if self.skip_invalid {
                        self.skipped += 1;
                        break;
                    }
                    return Err(partial_error(self.source.path(), self.record_no + 1, len as u64, D::SIZE));
                }
            };
            self.source.consume(D::SIZE);
            self.record_no += 1;
            match checked(self.decoder.decode(&rec[..D::SIZE], self.record_no)) {
                Ok(Some(r)) => return Ok(Some(r)),
                Ok(None) => {}
                Err(_) if self.skip_invalid => self.skipped += 1,
                Err(e) => return Err(self.fail(e)),
            }
        }
        Ok(None)
    }

    fn read_batch(&mut self, buf: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        self.fill(buf, max)
    }

    fn skipped(&self) -> u64 {
        self.skipped
    }

    fn carries_files(&self) -> bool {
        D::CARRIES_FILES
    }
    fn path(&self) -> &Path {
        self.source.path()
    }
}

#[inline]
pub fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

#[inline]
pub fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

#[inline]
pub fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_u64(b" 42 "), Some(42));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"12x"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_i64(b"-1"), Some(-1));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_hex(b"2a"), Some(0x2a));
        assert_eq!(parse_hex(b"0x28"), Some(0x28));
        assert_eq!(parse_scaled(b"1456095145.133076000", 9), Some(1_456_095_145_133_076_000));
        assert_eq!(parse_scaled(b"0.5", 9), Some(500_000_000));
        assert_eq!(parse_scaled(b"3", 3), Some(3000));
        assert_eq!(parse_scaled(b"1.23456", 3), Some(1234));
        assert_eq!(parse_scaled(b".", 3), None);
        assert_eq!(parse_scaled(b"-1", 3), None);
        assert_eq!(parse_f64(b"1e3"), Some(1000.0));
    }

    #[test]
    fn splitting() {
        let mut f = [&b""[..]; 3];
        assert_eq!(split_delim(b"a,b,,d", b',', &mut f), 4);
        assert_eq!(f, [&b"a"[..], b"b", b""]);
        assert_eq!(split_ws(b"  8,16   5  1 ", &mut f), 3);
        assert_eq!(f, [&b"8,16"[..], b"5", b"1"]);
    }

    #[test]
    fn time_shift() {
        let mut t = TimeShift::default();
        assert_eq!(t.apply(100), 0);
        assert_eq!(t.apply(150), 50);
        assert_eq!(t.apply(90), 0);
        let mut t = TimeShift::default();
        assert_eq!(t.apply_signed(-5), 0);
        assert_eq!(t.apply_signed(5), 10);
    }
}
