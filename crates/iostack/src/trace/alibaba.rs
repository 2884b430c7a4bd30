//! Alibaba Cloud block traces (Li et al., IISWC 2020): CSV lines
//! `device_id,opcode,offset,length,timestamp`, no header.
//!
//! - device_id: the virtual disk; the device.
//! - opcode: `R` or `W`.
//! - offset, length: bytes.
//! - timestamp: microseconds (Unix epoch); converted to ns and shifted so that the first request
//!   is at 0.

use super::parse::{parse_u64, split_delim, FieldError, LineParser, TimeShift};
use super::Request;

#[derive(Default)]
pub struct AlibabaParser {
    clock: TimeShift,
}

impl LineParser for AlibabaParser {
    #[inline]
    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Request>, FieldError> {
        let mut f = [&b""[..]; 5];
        let n = split_delim(line, b',', &mut f);
        if n != 5 {
            return Err(FieldError::new("line", format!("{n} fields; expected device_id,opcode,offset,length,timestamp")));
        }
        let dev = parse_u64(f[0]).ok_or_else(|| FieldError::not_number("device_id", f[0]))?;
        let dev = u32::try_from(dev).map_err(|_| FieldError::out_of_range("device_id", dev))?;
        let op = super::csv::parse_op_name(f[1])
            .ok_or_else(|| FieldError::new("opcode", format!("`{}` is not R or W", super::parse::show(f[1]))))?;
        let offset = parse_u64(f[2]).ok_or_else(|| FieldError::not_number("offset", f[2]))?;
        let length = parse_u64(f[3]).ok_or_else(|| FieldError::not_number("length", f[3]))?;
        let us = parse_u64(f[4]).ok_or_else(|| FieldError::not_number("timestamp", f[4]))?;
        let ns = super::parse::to_ns("timestamp", us, 1000)?;
        Ok(Some(Request { time_ns: self.clock.apply(ns), offset, length, pid: 0, device: dev, op, file: None }))
    }
}
