//! iostack CSV: a header line naming the columns, then one request per line.
//!
//! Columns, in any order, any subset that includes `offset`:
//!
//! | column | unit | default when absent or empty |
//! |---|---|---|
//! | `time_ns` | nanoseconds (kept as written, not shifted) | 0 |
//! | `pid` | process id | 0 |
//! | `op` | `R`/`W` (also `read`/`write`, any case) | `R` |
//! | `offset` | bytes on the device | required |
//! | `length` | bytes | 4096 ([`DEFAULT_LENGTH`]: one page, the usual unit of a block trace) |
//! | `device` | device id | 0 |
//! | `file` | file id | no file |
//! | `file_offset` | bytes within the file | 0 |
//! | `file_size` | bytes | unknown |
//!
//! | `event` | `fork`, `wait`, `exit` or `launch` (any case): the line is a process event, not a request | a request |
//! | `ppid` | parent process id (a launch's: the benchmark's launcher), on event lines only | 0 |
//!
//! `file_offset` and `file_size` are only meaningful with `file`. An event line (see
//! [`ProcessEvent`]) names the process in `pid` and its parent in `ppid` (required for `fork`,
//! `wait` and `launch`), may give `time_ns`, and leaves every request column empty.

use super::format::CSV_COLUMNS;
use super::parse::{leading_digits as digits, parse_u64, split_delim, trim, unquote, FieldError, LineParser};
use super::{FileRef, Op, ProcessEvent, ProcessEventKind, Request};

/// Length of a request whose trace does not say.
pub const DEFAULT_LENGTH: u64 = 4096;

/// Parses `R`, `W`, `read`, `write` in any case.
#[inline]
pub fn parse_op_name(s: &[u8]) -> Option<Op> {
    let s = trim(s);
    if s.eq_ignore_ascii_case(b"r") || s.eq_ignore_ascii_case(b"read") {
        Some(Op::Read)
    } else if s.eq_ignore_ascii_case(b"w") || s.eq_ignore_ascii_case(b"write") {
        Some(Op::Write)
    } else {
        None
    }
}

const MAX_COLS: usize = 16;

pub struct CsvParser {
    /// Column index of each of CSV_COLUMNS, once the header is read.
    cols: [Option<usize>; N_COLUMNS],
    n_cols: usize,
    header_seen: bool,
    /// For each column of the line, in order, which of CSV_COLUMNS it holds (the action table
    /// of the fast path, resolved once from the header).
    order: [u8; N_COLUMNS],
    /// The process event of the last line, until the reader takes it.
    event: Option<ProcessEvent>,
}

const N_COLUMNS: usize = 11;

impl CsvParser {
    pub fn new() -> CsvParser {
        CsvParser { cols: [None; N_COLUMNS], n_cols: 0, header_seen: false, order: [0; N_COLUMNS], event: None }
    }

    /// An event line: `kind` of process `pid` (required) with parent `ppid`; request columns
    /// empty.
    fn event_line(&mut self, f: &[&[u8]; MAX_COLS], kind: &[u8]) -> Result<(), FieldError> {
        let c = &self.cols;
        let kind = ProcessEventKind::parse(kind)
            .ok_or_else(|| FieldError::new("event", format!("`{}` is not fork, wait, exit or launch", super::parse::show(kind))))?;
        for (k, name) in [(F_OP, "op"), (F_OFFSET, "offset"), (F_LENGTH, "length"), (F_DEVICE, "device"), (F_FILE, "file"), (F_FILE_OFFSET, "file_offset"), (F_FILE_SIZE, "file_size")] {
            if c[k].is_some_and(|i| !trim(f[i]).is_empty()) {
                return Err(FieldError::new(name, format!("a {} event line leaves the request columns empty", kind.as_str())));
            }
        }
        let pid = match num(f, c[F_PID], "pid")? {
            None => return Err(FieldError::new("pid", format!("a {} event names its process", kind.as_str()))),
            Some(v) => u32::try_from(v).map_err(|_| FieldError::out_of_range("pid", v))?,
        };
        let ppid = match num(f, c[F_PPID], "ppid")? {
            None if kind == ProcessEventKind::Exit => 0,
            None => return Err(FieldError::new("ppid", format!("a {} event names the parent process", kind.as_str()))),
            Some(v) => u32::try_from(v).map_err(|_| FieldError::out_of_range("ppid", v))?,
        };
        if kind != ProcessEventKind::Exit && ppid == pid {
            return Err(FieldError::new("ppid", format!("process {pid} cannot be its own parent")));
        }
        let time_ns = num(f, c[F_TIME], "time_ns")?.unwrap_or(0);
        self.event = Some(ProcessEvent { before: 0, time_ns, kind, pid, ppid });
        Ok(())
    }

    fn header(&mut self, line: &[u8]) -> Result<(), FieldError> {
        let mut f = [&b""[..]; MAX_COLS];
        let n = split_delim(line, b',', &mut f);
        if n > CSV_COLUMNS.len() {
            return Err(FieldError::new("header", format!("{n} columns; iostack CSV has at most {}", CSV_COLUMNS.len())));
        }
        for (i, name) in f[..n].iter().enumerate() {
            let name = String::from_utf8_lossy(trim(unquote(trim(name)))).to_ascii_lowercase();
            let Some(k) = CSV_COLUMNS.iter().position(|c| *c == name) else {
                return Err(FieldError::new(
                    "header",
                    format!("unknown column `{name}` (valid: {})", CSV_COLUMNS.join(", ")),
                ));
            };
            if self.cols[k].is_some() {
                return Err(FieldError::new("header", format!("column `{name}` appears twice")));
            }
            self.cols[k] = Some(i);
            self.order[i] = k as u8;
        }
        if self.cols[3].is_none() {
            return Err(FieldError::new("header", "no `offset` column (the header must name the columns, e.g. time_ns,pid,op,offset,length)"));
        }
        self.n_cols = n;
        self.header_seen = true;
        Ok(())
    }
}

impl Default for CsvParser {
    fn default() -> Self {
        Self::new()
    }
}

#[inline]
fn num(f: &[&[u8]; MAX_COLS], col: Option<usize>, name: &'static str) -> Result<Option<u64>, FieldError> {
    match col {
        None => Ok(None),
        Some(i) => {
            let s = trim(f[i]);
            if s.is_empty() {
                return Ok(None);
            }
            parse_u64(s).map(Some).ok_or_else(|| FieldError::not_number(name, s))
        }
    }
}

#[inline]
fn num32(f: &[&[u8]; MAX_COLS], col: Option<usize>, name: &'static str) -> Result<u32, FieldError> {
    match num(f, col, name)? {
        None => Ok(0),
        Some(v) => u32::try_from(v).map_err(|_| FieldError::out_of_range(name, v)),
    }
}

impl LineParser for CsvParser {
    #[inline]
    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Request>, FieldError> {
        if !self.header_seen {
            self.header(line)?;
            return Ok(None);
        }
        let mut f = [&b""[..]; MAX_COLS];
        let n = split_delim(line, b',', &mut f);
        if n != self.n_cols {
            return Err(FieldError::new("line", format!("{n} fields, the header names {}", self.n_cols)));
        }
        if let Some(i) = self.cols[F_EVENT] {
            let kind = trim(f[i]);
            if !kind.is_empty() {
                self.event_line(&f, kind)?;
                return Ok(None);
            }
        }
        let c = &self.cols;
        if c[F_PPID].is_some_and(|i| !trim(f[i]).is_empty()) {
            return Err(FieldError::new("ppid", "a request line has no ppid (it belongs to fork, wait, exit and launch lines)"));
        }
        let offset = num(&f, c[3], "offset")?.ok_or_else(|| FieldError::missing("offset"))?;
        let op = match c[2] {
            None => Op::Read,
            Some(i) => {
                let s = trim(f[i]);
                if s.is_empty() {
                    Op::Read
                } else {
                    parse_op_name(s).ok_or_else(|| FieldError::new("op", format!("`{}` is not R or W", super::parse::show(s))))?
                }
            }
        };
        let file = match num(&f, c[6], "file")? {
            None => None,
            Some(id) => Some(FileRef {
                id,
                offset: num(&f, c[7], "file_offset")?.unwrap_or(0),
                size: num(&f, c[8], "file_size")?,
            }),
        };
        Ok(Some(Request {
            time_ns: num(&f, c[0], "time_ns")?.unwrap_or(0),
            offset,
            length: num(&f, c[4], "length")?.unwrap_or(DEFAULT_LENGTH),
            pid: num32(&f, c[1], "pid")?,
            device: num32(&f, c[5], "device")?,
            op,
            file,
        }))
    }

    fn finish(&mut self) -> Option<String> {
        None
    }

    fn take_event(&mut self) -> Option<ProcessEvent> {
        self.event.take()
    }

    fn carries_events(&self) -> bool {
        self.cols[F_EVENT].is_some()
    }

    const PLAIN_FAST_PATH: bool = true;

    /// Plain lines: numbers of at most 19 digits with nothing around them (empty fields take
    /// their defaults), `op` a single `R`/`W`/`r`/`w`. Anything else goes to `parse`.
    #[inline]
    fn parse_plain(&mut self, buf: &[u8]) -> Option<(Request, usize)> {
        if !self.header_seen {
            return None;
        }
        // Field values by CSV_COLUMNS index (absent or empty columns keep their defaults), and
        // which of them were given.
        let mut v = [0u64; N_COLUMNS];
        v[F_LENGTH] = DEFAULT_LENGTH;
        let mut given = 0u32;
        let mut op = Op::Read;
        let mut p = 0;
        let n = self.n_cols;
        for (i, &field) in self.order[..n].iter().enumerate() {
            let field = field as usize;
            if field == F_EVENT || field == F_PPID {
                // Empty on a request line; anything else is for `parse`.
                if !matches!(*buf.get(p)?, b',' | b'\n' | b'\r') {
                    return None;
                }
            } else if field == F_OP {
                match *buf.get(p)? {
                    b'R' | b'r' => p += 1,
                    b'W' | b'w' => {
                        op = Op::Write;
                        p += 1;
                    }
                    b',' | b'\n' | b'\r' => {}
                    _ => return None,
                }
            } else {
                let (value, len) = digits(buf.get(p..)?)?;
                if len > 0 {
                    v[field] = value;
                    given |= 1 << field;
                    p += len;
                }
            }
            let t = *buf.get(p)?;
            if i + 1 < n {
                if t != b',' {
                    return None;
                }
                p += 1;
            } else if t == b'\n' {
                p += 1;
            } else if t == b'\r' && buf.get(p + 1) == Some(&b'\n') {
                p += 2;
            } else {
                return None;
            }
        }
        let (pid, device) = (v[F_PID], v[F_DEVICE]);
        if given & (1 << F_OFFSET) == 0 || pid > u32::MAX as u64 || device > u32::MAX as u64 {
            return None;
        }
        let file = if given & (1 << F_FILE) != 0 {
            Some(FileRef {
                id: v[F_FILE],
                offset: v[F_FILE_OFFSET],
                size: if given & (1 << F_FILE_SIZE) != 0 { Some(v[F_FILE_SIZE]) } else { None },
            })
        } else {
            None
        };
        Some((
            Request { time_ns: v[F_TIME], offset: v[F_OFFSET], length: v[F_LENGTH], pid: pid as u32, device: device as u32, op, file },
            p,
        ))
    }
}

// Indices into CSV_COLUMNS.
const F_TIME: usize = 0;
const F_PID: usize = 1;
const F_OP: usize = 2;
const F_OFFSET: usize = 3;
const F_LENGTH: usize = 4;
const F_DEVICE: usize = 5;
const F_FILE: usize = 6;
const F_FILE_OFFSET: usize = 7;
const F_FILE_SIZE: usize = 8;
const F_EVENT: usize = 9;
const F_PPID: usize = 10;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::parse::TextReader;
    use crate::trace::source::Source;
    use crate::trace::TraceReader;
    use proptest::prelude::*;

    const HEADER: &[u8] = b"time_ns,pid,op,offset,length,device,file,file_offset,file_size";

    fn parser(header: &[u8]) -> CsvParser {
        let mut p = CsvParser::new();
        assert_eq!(p.parse(header, 1), Ok(None));
        p
    }

    /// The fast path accepts a line only when `parse` gives the same request, and takes the
    /// line with its terminator.
    fn agrees(header: &[u8], line: &[u8]) {
        let mut p = parser(header);
        for end in [&b"\n"[..], b"\r\n"] {
            let mut buf = line.to_vec();
            buf.extend_from_slice(end);
            buf.extend_from_slice(b"1,2,3\n");
            if let Some((r, used)) = p.parse_plain(&buf) {
                assert_eq!(used, line.len() + end.len(), "{:?}", String::from_utf8_lossy(line));
                assert_eq!(p.parse(line, 2), Ok(Some(r)), "{:?}", String::from_utf8_lossy(line));
            }
            // Without its terminator the line is not known to be whole.
            assert_eq!(p.parse_plain(line), None);
        }
    }

    #[test]
    fn plain_lines_take_the_fast_path() {
        let mut p = parser(HEADER);
        let (r, used) = p.parse_plain(b"5,7,W,8192,512,1,3,4,9\nrest").unwrap();
        assert_eq!(used, 23);
        assert_eq!(
            r,
            Request { time_ns: 5, pid: 7, op: Op::Write, offset: 8192, length: 512, device: 1, file: Some(FileRef { id: 3, offset: 4, size: Some(9) }) }
        );
        let (r, _) = p.parse_plain(b"0,1,R,1757184,4096,0,,,\n").unwrap();
        assert_eq!((r.offset, r.length, r.file), (1757184, 4096, None));
        let (r, _) = p.parse_plain(b",,,0,,,3,,\r\n").unwrap();
        assert_eq!((r.time_ns, r.op, r.length, r.file), (0, Op::Read, DEFAULT_LENGTH, Some(FileRef { id: 3, offset: 0, size: None })));
    }

    #[test]
    fn unusual_lines_go_to_the_checked_parser() {
        let mut p = parser(b"op,offset,pid");
        for line in [
            &b"Read,0,1\n"[..],
            b"R, 0,1\n",
            b"R,\"0\",1\n",
            b"R,+0,1\n",
            b"R,,1\n",
            b"R,0,4294967296\n",
            b"R,18446744073709551615,1\n",
            b"R,12x,1\n",
            b"R,0,1,\n",
            b"R,0\n",
            b"# R,0,1\n",
            b"\n",
            b"R,0,1\r",
            b"R,0,1",
        ] {
            assert_eq!(p.parse_plain(line), None, "{:?}", String::from_utf8_lossy(line));
        }
        assert!(p.parse_plain(b"w,9999999999999999999,4294967295\n").is_some());
    }

    #[test]
    fn fast_and_checked_agree_on_tricky_lines() {
        for line in [
            &b"1,2,R,3,4,5,6,7,8"[..],
            b"1,2,r,3,4,5,6,7,8",
            b"1,2,write,3,4,5,6,7,8",
            b"1,2,,3,,,,,",
            b",,,0,,,,,",
            b"1,2,R,,4,5,6,7,8",
            b"1,2,R,3,4,5,,7,8",
            b"1,2,R,3,4,5,6,,",
            b"1,99999999999,R,3,4,5,6,7,8",
            b"1,2,R,3,4,99999999999,6,7,8",
            b"9999999999999999999,2,R,3,4,5,6,7,8",
            b"99999999999999999999,2,R,3,4,5,6,7,8",
            b"1 ,2,R,3,4,5,6,7,8",
            b"1,2,R,3,4,5,6,7",
            b"1,2,R,3,4,5,6,7,8,9",
        ] {
            agrees(HEADER, line);
        }
    }

    proptest! {
        #[test]
        fn fast_and_checked_agree(
            fields in proptest::collection::vec(
                prop_oneof![
                    Just(String::new()),
                    (0u64..u64::MAX).prop_map(|v| v.to_string()),
                    (0u64..100).prop_map(|v| v.to_string()),
                    Just("R".to_string()),
                    Just("w".to_string()),
                    Just(" 7".to_string()),
                    Just("x".to_string()),
                ],
                9,
            )
        ) {
            agrees(HEADER, fields.join(",").as_bytes());
            agrees(b"offset,op,length", fields[..3].join(",").as_bytes());
        }
    }

    /// Whole-reader check: requests, skips and error lines are the same whether lines take the
    /// fast path or not, across the refills of a compressed stream.
    #[test]
    fn reader_runs_match_line_by_line() {
        let mut text = HEADER.to_vec();
        text.push(b'\n');
        for i in 0..150_000u64 {
            let line = match i % 1000 {
                7 => "# a comment".to_string(),
                8 => String::new(),
                9 => format!(" {i},1,R,{},4096,0,,,", i * 4096),
                10 => format!("{i},1,read,{},4096,0,,,", i * 4096),
                11 => format!("{i},1,R,bad,4096,0,,,"),
                _ => format!("{i},{},{},{},{},0,{},,", i % 7, if i % 3 == 0 { 'W' } else { 'R' }, i * 4096, 512 * (i % 9), i % 5),
            };
            text.extend_from_slice(line.as_bytes());
            text.extend_from_slice(if i % 2 == 0 { b"\n" } else { b"\r\n" });
        }
        let dir = tempfile::tempdir().unwrap();
        let zst = dir.path().join("t.csv.zst");
        std::fs::write(&zst, zstd::encode_all(&text[..], 1).unwrap()).unwrap();
        let plain = dir.path().join("t.csv");
        std::fs::write(&plain, &text).unwrap();

        // Reference: the checked parser, line by line.
        let mut expect = Vec::new();
        let mut p = CsvParser::new();
        let mut bad = Vec::new();
        for (k, line) in text.split(|&c| c == b'\n').enumerate() {
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if line.is_empty() || line.starts_with(b"#") {
                continue;
            }
            match p.parse(line, k as u64 + 1) {
                Ok(Some(r)) => expect.push(r),
                Ok(None) => {}
                Err(_) => bad.push(k as u64 + 1),
            }
        }
        assert_eq!(bad.len(), 150);

        for path in [&plain, &zst] {
            let mut r = TextReader::new(Source::open(path).unwrap(), CsvParser::new(), true);
            let mut got = Vec::new();
            while r.read_batch(&mut got, 777).unwrap() > 0 {}
            assert_eq!(got, expect);
            assert_eq!(r.skipped(), 150);
            let mut r = TextReader::new(Source::open(path).unwrap(), CsvParser::new(), false);
            let mut got = Vec::new();
            let e = loop {
                match r.read_batch(&mut got, 4096) {
                    Ok(0) => panic!("no error"),
                    Ok(_) => {}
                    Err(e) => break e.to_string(),
                }
            };
            assert!(e.ends_with(&format!("line {}: field `offset`: `bad` is not a number", bad[0])), "{e}");
            assert_eq!(got, expect[..got.len()]);
        }
    }
}

#[cfg(test)]
mod event_tests {
    use crate::trace::{open_bytes, read_all, Format, ProcessEvent, ProcessEventKind, ReaderOptions};
    use std::path::Path;

    fn read(text: &str) -> Result<(Vec<crate::trace::Request>, Vec<ProcessEvent>), String> {
        let (mut r, _) = open_bytes(Path::new("t.csv"), text.as_bytes().to_vec(), Some(Format::Csv), &ReaderOptions::default()).map_err(|e| e.to_string())?;
        let reqs = read_all(&mut *r).map_err(|e| e.to_string())?;
        let mut ev = Vec::new();
        r.take_events(&mut ev);
        Ok((reqs, ev))
    }

    #[test]
    fn event_lines_are_placed_among_the_requests() {
        let text = "time_ns,pid,op,offset,event,ppid\n1,1,R,0,,\n2,7,,,fork,1\n3,7,,,WAIT,1\n4,7,R,4096,,\n5,7,,,exit,\n6,1,R,8192,,\n";
        let (reqs, ev) = read(text).unwrap();
        assert_eq!(reqs.len(), 3);
        let e = |before, time_ns, kind, pid, ppid| ProcessEvent { before, time_ns, kind, pid, ppid };
        assert_eq!(ev, vec![e(1, 2, ProcessEventKind::Fork, 7, 1), e(1, 3, ProcessEventKind::Wait, 7, 1), e(2, 5, ProcessEventKind::Exit, 7, 0)]);
    }

    #[test]
    fn malformed_event_lines_name_line_and_field() {
        let h = "time_ns,pid,op,offset,event,ppid\n0,1,R,0,,\n";
        for (line, field, what) in [
            ("1,7,,,spawn,1", "event", "`spawn` is not fork, wait, exit or launch"),
            ("1,7,,,fork,", "ppid", "names the parent"),
            ("1,,,,exit,", "pid", "names its process"),
            ("1,7,R,,fork,1", "op", "request columns empty"),
            ("1,7,,0,fork,1", "offset", "request columns empty"),
            ("1,7,,,fork,7", "ppid", "its own parent"),
            ("1,7,,,fork,x", "ppid", "not a number"),
            ("1,7,R,0,,1", "ppid", "a request line has no ppid"),
        ] {
            let e = read(&format!("{h}{line}\n")).unwrap_err();
            assert!(e.contains("t.csv") && e.contains("line 3") && e.contains(&format!("field `{field}`")) && e.contains(what), "{line}: {e}");
        }
    }
}
