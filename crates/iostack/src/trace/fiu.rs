//! FIU traces (Koller and Rangaswami, "I/O Deduplication", FAST 2010; SNIA IOTTA): blank-separated
//! lines `ts_ns pid process lba size R|W major minor md5`.
//!
//! - ts_ns: nanoseconds (since boot of the traced host); shifted so that the first request is at 0.
//! - lba: 512-byte sectors; offset = lba * 512.
//! - size: 512-byte sectors; length = size * 512.
//! - device: `major << 20 | minor` (dev_t encoding).
//! - The process name may contain blanks: fields are taken from both ends of the line.
//! - md5 (content hash) is not used.

use super::parse::{parse_u64, sectors_to_bytes, split_ws, FieldError, LineParser, TimeShift};
use super::{Op, Request};

#[derive(Default)]
pub struct FiuParser {
    clock: TimeShift,
}

impl LineParser for FiuParser {
    #[inline]
    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Request>, FieldError> {
        let mut f = [&b""[..]; 24];
        let n = split_ws(line, &mut f);
        if !(9..=24).contains(&n) {
            return Err(FieldError::new("line", format!("{n} fields; expected ts pid process lba size R|W major minor md5")));
        }
        let e = n - 6; // index of lba
        let ts = parse_u64(f[0]).ok_or_else(|| FieldError::not_number("ts", f[0]))?;
        let pid = parse_u64(f[1]).ok_or_else(|| FieldError::not_number("pid", f[1]))?;
        let pid = u32::try_from(pid).map_err(|_| FieldError::out_of_range("pid", pid))?;
        let lba = parse_u64(f[e]).ok_or_else(|| FieldError::not_number("lba", f[e]))?;
        let size = parse_u64(f[e + 1]).ok_or_else(|| FieldError::not_number("size", f[e + 1]))?;
        let op = match f[e + 2] {
            b"R" | b"r" => Op::Read,
            b"W" | b"w" => Op::Write,
            other => return Err(FieldError::new("op", format!("`{}` is not R or W", super::parse::show(other)))),
        };
        let major = parse_u64(f[e + 3]).ok_or_else(|| FieldError::not_number("major", f[e + 3]))?;
        let minor = parse_u64(f[e + 4]).ok_or_else(|| FieldError::not_number("minor", f[e + 4]))?;
        if major >= 1 << 12 {
            return Err(FieldError::out_of_range("major", major));
        }
        if minor >= 1 << 20 {
            return Err(FieldError::out_of_range("minor", minor));
        }
        Ok(Some(Request {
            time_ns: self.clock.apply(ts),
            offset: sectors_to_bytes("lba", lba, 512)?,
            length: sectors_to_bytes("size", size, 512)?,
            pid,
            device: ((major as u32) << 20) | minor as u32,
            op,
            file: None,
        }))
    }
}
