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
//! `file_offset` and `file_size` are only meaningful with `file`.

use super::format::CSV_COLUMNS;
use super::parse::{parse_u64, split_delim, trim, unquote, FieldError, LineParser};
use super::{FileRef, Op, Request};

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
    cols: [Option<usize>; 9],
    n_cols: usize,
    header_seen: bool,
}

impl CsvParser {
    pub fn new() -> CsvParser {
        CsvParser { cols: [None; 9], n_cols: 0, header_seen: false }
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
        let c = &self.cols;
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
}
