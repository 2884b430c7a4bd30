//! UMass Trace Repository / Storage Performance Council traces (Financial1/2, WebSearch1-3):
//! CSV lines `ASU,LBA,Size,Opcode,Timestamp[,optional fields]`, no header.
//!
//! - ASU (application specific unit): the device.
//! - LBA: 512-byte sectors; offset = LBA * 512.
//! - Size: bytes.
//! - Opcode: `R`/`r` read, `W`/`w` write.
//! - Timestamp: seconds (with a fraction) from the start of the trace; kept as is (ns).

use super::parse::{parse_scaled, parse_u64, sectors_to_bytes, split_delim, FieldError, LineParser};
use super::Request;

pub struct SpcParser;

impl LineParser for SpcParser {
    #[inline]
    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Request>, FieldError> {
        let mut f = [&b""[..]; 5];
        let n = split_delim(line, b',', &mut f);
        if n < 5 {
            return Err(FieldError::new("line", format!("{n} fields; expected ASU,LBA,Size,Opcode,Timestamp")));
        }
        let asu = parse_u64(f[0]).ok_or_else(|| FieldError::not_number("ASU", f[0]))?;
        let asu = u32::try_from(asu).map_err(|_| FieldError::out_of_range("ASU", asu))?;
        let lba = parse_u64(f[1]).ok_or_else(|| FieldError::not_number("LBA", f[1]))?;
        let size = parse_u64(f[2]).ok_or_else(|| FieldError::not_number("Size", f[2]))?;
        let op = super::csv::parse_op_name(f[3])
            .ok_or_else(|| FieldError::new("Opcode", format!("`{}` is not R or W", super::parse::show(f[3]))))?;
        let time_ns = parse_scaled(f[4], 9).ok_or_else(|| FieldError::not_number("Timestamp", f[4]))?;
        Ok(Some(Request {
            time_ns,
            offset: sectors_to_bytes("LBA", lba, 512)?,
            length: size,
            pid: 0,
            device: asu,
            op,
            file: None,
        }))
    }
}
