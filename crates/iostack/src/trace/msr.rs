//! MSR Cambridge block traces (Narayanan et al., "Write Off-Loading", FAST 2008; SNIA IOTTA):
//! CSV lines `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`, no header.
//!
//! - Timestamp: Windows FILETIME, 100 ns ticks since 1601; converted to ns and shifted so that
//!   the first request is at 0.
//! - Type: `Read` or `Write` (any case).
//! - Offset, Size: bytes.
//! - ResponseTime (100 ns ticks) is not used: iostack computes service times itself.
//! - Device: each trace file covers one host's volumes (`hm_0.csv` is host `hm`, disk 0). The
//!   reader numbers host names in order of first appearance (0, 1, ...) and gives device
//!   `host_index * 65536 + DiskNumber`: a one-host trace keeps its disk numbers as device ids,
//!   and traces of several hosts concatenated keep their volumes apart. [`MsrParser::hosts`]
//!   gives the host names in index order.

use super::parse::{parse_u64, split_delim, trim, FieldError, LineParser, TimeShift};
use super::{Op, Request};

#[derive(Default)]
pub struct MsrParser {
    clock: TimeShift,
    hosts: Vec<Vec<u8>>,
    /// Index of the host of the previous line (lines of one host come in runs).
    last_host: usize,
}

impl MsrParser {
    /// Host names in the order of their index in device ids.
    pub fn hosts(&self) -> impl Iterator<Item = String> + '_ {
        self.hosts.iter().map(|h| String::from_utf8_lossy(h).into_owned())
    }

    #[inline]
    fn host_index(&mut self, name: &[u8]) -> Result<u32, FieldError> {
        if self.hosts.get(self.last_host).is_some_and(|h| h == name) {
            return Ok(self.last_host as u32);
        }
        let i = match self.hosts.iter().position(|h| h == name) {
            Some(i) => i,
            None => {
                if self.hosts.len() >= 65_535 {
                    return Err(FieldError::new("Hostname", "more than 65535 host names"));
                }
                self.hosts.push(name.to_vec());
                self.hosts.len() - 1
            }
        };
        self.last_host = i;
        Ok(i as u32)
    }
}

impl LineParser for MsrParser {
    #[inline]
    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Request>, FieldError> {
        let mut f = [&b""[..]; 7];
        let n = split_delim(line, b',', &mut f);
        if n != 7 {
            return Err(FieldError::new(
                "line",
                format!("{n} fields; expected 7 (Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime)"),
            ));
        }
        let ticks = parse_u64(f[0]).ok_or_else(|| FieldError::not_number("Timestamp", f[0]))?;
        let disk = parse_u64(f[2]).ok_or_else(|| FieldError::not_number("DiskNumber", f[2]))?;
        if disk > 0xffff {
            return Err(FieldError::out_of_range("DiskNumber", disk));
        }
        let t = trim(f[3]);
        let op = if t.eq_ignore_ascii_case(b"read") {
            Op::Read
        } else if t.eq_ignore_ascii_case(b"write") {
            Op::Write
        } else {
            return Err(FieldError::new("Type", format!("`{}` is not Read or Write", super::parse::show(t))));
        };
        let offset = parse_u64(f[4]).ok_or_else(|| FieldError::not_number("Offset", f[4]))?;
        let length = parse_u64(f[5]).ok_or_else(|| FieldError::not_number("Size", f[5]))?;
        let host = self.host_index(trim(f[1]))?;
        let ns = super::parse::to_ns("Timestamp", ticks, 100)?;
        Ok(Some(Request {
            time_ns: self.clock.apply(ns),
            offset,
            length,
            pid: 0,
            device: (host << 16) | disk as u32,
            op,
            file: None,
        }))
    }
}
