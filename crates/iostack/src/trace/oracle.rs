//! libCacheSim oracleGeneral binary traces: packed little-endian 24-byte records
//! `u32 time, u64 obj_id, u32 obj_size, i64 next_access_vtime` (next_access_vtime is -1 when the
//! object is not requested again).
//!
//! Block traces converted by libCacheSim keep the logical block number (512-byte sectors) as the
//! object id, so iostack reads obj_id as a sector number: offset = obj_id * 512, length =
//! obj_size bytes. This is the same mapping as the vscsi reader's, so a trace read in either form
//! gives the same offsets and the same cache keys. Time is in seconds (libCacheSim's clock time),
//! converted to ns and shifted so that the first record is at 0. The format has no operation;
//! every request is a read. `next_access_vtime` is not read (iostack computes the future itself).

use super::parse::{le_u32, le_u64, sectors_to_bytes, FieldError, RecordDecoder, TimeShift};
use super::{Op, Request};

pub const SECTOR: u64 = 512;

/// Whether every one of the first (up to 64) records has a plausible next-access field: -1, or a
/// position after the record's own and below 2^40.
pub fn looks_like(head: &[u8]) -> bool {
    let n = (head.len() / 24).min(64);
    n > 0
        && (0..n).all(|i| {
            let next = le_u64(head, i * 24 + 16) as i64;
            next == -1 || (next > i as i64 && next < 1 << 40)
        })
}

#[derive(Default)]
pub struct OracleGeneral {
    clock: TimeShift,
}

impl RecordDecoder for OracleGeneral {
    const SIZE: usize = 24;
    #[inline]
    fn decode(&mut self, rec: &[u8], _record_no: u64) -> Result<Option<Request>, FieldError> {
        let time_s = le_u32(rec, 0) as u64;
        let obj_id = le_u64(rec, 4);
        let size = le_u32(rec, 12) as u64;
        Ok(Some(Request {
            time_ns: self.clock.apply(time_s * 1_000_000_000),
            offset: sectors_to_bytes("obj_id", obj_id, SECTOR)?,
            length: size,
            pid: 0,
            device: 0,
            op: Op::Read,
            file: None,
        }))
    }
}
