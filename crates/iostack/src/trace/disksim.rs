//! DiskSim / MQSim ASCII traces: blank-separated lines `arrival device lba size flags`.
//!
//! This is the MQSim flavour (e.g. MQSim's `traces/wsrch-small.trace`): arrival is an integer
//! number of nanoseconds from the start of the trace, kept as is. The lba and size count 512-byte
//! sectors (offset = lba * 512, length = size * 512). Bit 0 of flags is 1 for a read and 0 for a
//! write, as in DiskSim. DiskSim's own ASCII traces give the arrival time in milliseconds with a
//! fraction; read those with `generic-csv` and `time=0,time_unit=ms,device=1,offset=2,
//! offset_unit=512,length=3,length_unit=512,op=4,op_values=disksim,delimiter=space`.

use super::parse::{parse_u64, sectors_to_bytes, split_ws, FieldError, LineParser};
use super::{Op, Request};

pub struct DisksimParser;

/// Bit 0 of DiskSim request flags: 1 = read.
#[inline]
pub fn disksim_op(flags: u64) -> Op {
    if flags & 1 == 1 {
        Op::Read
    } else {
        Op::Write
    }
}

impl LineParser for DisksimParser {
    #[inline]
    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Request>, FieldError> {
        let mut f = [&b""[..]; 5];
        let n = split_ws(line, &mut f);
        if n != 5 {
            return Err(FieldError::new("line", format!("{n} fields; expected arrival device lba size flags")));
        }
        let t = parse_u64(f[0]).ok_or_else(|| FieldError::not_number("arrival", f[0]))?;
        let dev = parse_u64(f[1]).ok_or_else(|| FieldError::not_number("device", f[1]))?;
        let dev = u32::try_from(dev).map_err(|_| FieldError::out_of_range("device", dev))?;
        let lba = parse_u64(f[2]).ok_or_else(|| FieldError::not_number("lba", f[2]))?;
        let size = parse_u64(f[3]).ok_or_else(|| FieldError::not_number("size", f[3]))?;
        let flags = parse_u64(f[4]).ok_or_else(|| FieldError::not_number("flags", f[4]))?;
        Ok(Some(Request {
            time_ns: t,
            offset: sectors_to_bytes("lba", lba, 512)?,
            length: sectors_to_bytes("size", size, 512)?,
            pid: 0,
            device: dev,
            op: disksim_op(flags),
            file: None,
        }))
    }
}
