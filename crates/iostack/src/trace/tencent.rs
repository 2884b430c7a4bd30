//! Tencent Cloud Block Storage traces (Zhang et al., "OSCA", ATC 2020; SNIA IOTTA): CSV lines
//! `Timestamp,Offset,Size,IOType,VolumeID`, no header.
//!
//! - Timestamp: Unix seconds; converted to ns and shifted so that the first request is at 0.
//!   The traces are merged from many volumes and not strictly sorted: a request stamped before
//!   the first one is put at time 0.
//! - Offset, Size: 512-byte sectors.
//! - IOType: 0 = read, 1 = write.
//! - VolumeID: the device.

use super::parse::{parse_u64, sectors_to_bytes, split_delim, trim, FieldError, LineParser, TimeShift};
use super::{Op, Request};

#[derive(Default)]
pub struct TencentParser {
    clock: TimeShift,
}

impl LineParser for TencentParser {
    #[inline]
    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Request>, FieldError> {
        let mut f = [&b""[..]; 5];
        let n = split_delim(line, b',', &mut f);
        if n != 5 {
            return Err(FieldError::new("line", format!("{n} fields; expected Timestamp,Offset,Size,IOType,VolumeID")));
        }
        let ts = parse_u64(f[0]).ok_or_else(|| FieldError::not_number("Timestamp", f[0]))?;
        let offset = parse_u64(f[1]).ok_or_else(|| FieldError::not_number("Offset", f[1]))?;
        let size = parse_u64(f[2]).ok_or_else(|| FieldError::not_number("Size", f[2]))?;
        let op = match trim(f[3]) {
            b"0" => Op::Read,
            b"1" => Op::Write,
            other => return Err(FieldError::new("IOType", format!("`{}` is not 0 (read) or 1 (write)", super::parse::show(other)))),
        };
        let vol = parse_u64(f[4]).ok_or_else(|| FieldError::not_number("VolumeID", f[4]))?;
        let vol = u32::try_from(vol).map_err(|_| FieldError::out_of_range("VolumeID", vol))?;
        Ok(Some(Request {
            time_ns: self.clock.apply(super::parse::to_ns("Timestamp", ts, 1_000_000_000)?),
            offset: sectors_to_bytes("Offset", offset, 512)?,
            length: sectors_to_bytes("Size", size, 512)?,
            pid: 0,
            device: vol,
            op,
            file: None,
        }))
    }
}
