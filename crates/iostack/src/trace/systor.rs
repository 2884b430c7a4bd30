//! SNIA SYSTOR'17 traces (Lee et al., "Understanding Storage Traffic Characteristics on
//! Enterprise Virtual Desktop Infrastructure", SYSTOR 2017): CSV with the header
//! `Timestamp,Response,IOType,LUN,Offset,Size`.
//!
//! - Timestamp: Unix seconds with a fraction; converted to ns exactly and shifted so that the
//!   first request is at 0 (the traces are not strictly sorted; earlier stamps go to 0).
//! - Response: seconds; not used.
//! - IOType: `R` or `W`.
//! - LUN: the device.
//! - Offset, Size: bytes.

use super::parse::{parse_scaled, parse_u64, split_delim, trim, FieldError, LineParser, TimeShift};
use super::Request;

#[derive(Default)]
pub struct SystorParser {
    clock: TimeShift,
}

impl LineParser for SystorParser {
    #[inline]
    fn parse(&mut self, line: &[u8], line_no: u64) -> Result<Option<Request>, FieldError> {
        let mut f = [&b""[..]; 6];
        let n = split_delim(line, b',', &mut f);
        if line_no == 1 && trim(f[0]).eq_ignore_ascii_case(b"timestamp") {
            return Ok(None);
        }
        if n != 6 {
            return Err(FieldError::new("line", format!("{n} fields; expected Timestamp,Response,IOType,LUN,Offset,Size")));
        }
        let ts = parse_scaled(f[0], 9).ok_or_else(|| FieldError::not_number("Timestamp", f[0]))?;
        let op = super::csv::parse_op_name(f[2])
            .ok_or_else(|| FieldError::new("IOType", format!("`{}` is not R or W", super::parse::show(f[2]))))?;
        let lun = parse_u64(f[3]).ok_or_else(|| FieldError::not_number("LUN", f[3]))?;
        let lun = u32::try_from(lun).map_err(|_| FieldError::out_of_range("LUN", lun))?;
        let offset = parse_u64(f[4]).ok_or_else(|| FieldError::not_number("Offset", f[4]))?;
        let length = parse_u64(f[5]).ok_or_else(|| FieldError::not_number("Size", f[5]))?;
        Ok(Some(Request { time_ns: self.clock.apply(ts), offset, length, pid: 0, device: lun, op, file: None }))
    }
}
