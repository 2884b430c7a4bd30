//! Plain block ids, one per line (e.g. the CloudPhysics `.txt` export of libCacheSim).
//!
//! Each id is taken as a 512-byte sector number, the unit of the block traces these lists are
//! extracted from, so the same trace read from its vscsi or oracleGeneral form gives the same
//! offsets: offset = id * 512, length = 512, a read at time 0 on device 0.

use super::parse::{parse_u64, sectors_to_bytes, split_ws, FieldError, LineParser};
use super::{Op, Request};

/// Bytes per id of a plain trace.
pub const PLAIN_UNIT: u64 = 512;

pub struct PlainParser;

impl LineParser for PlainParser {
    #[inline]
    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Request>, FieldError> {
        let mut f = [&b""[..]; 1];
        let n = split_ws(line, &mut f);
        if n != 1 {
            return Err(FieldError::new("id", format!("{n} fields; a plain trace has one id per line")));
        }
        let id = parse_u64(f[0]).ok_or_else(|| FieldError::not_number("id", f[0]))?;
        Ok(Some(Request {
            time_ns: 0,
            offset: sectors_to_bytes("id", id, PLAIN_UNIT)?,
            length: PLAIN_UNIT,
            pid: 0,
            device: 0,
            op: Op::Read,
            file: None,
        }))
    }
}
