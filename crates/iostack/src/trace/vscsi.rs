//! VMware vscsi traces (as distributed by CloudPhysics and read by libCacheSim).
//!
//! Little-endian records of two versions, told apart by the version byte (the high byte of the
//! `ver` field):
//!
//! - v1, 32 bytes: `u32 sn, u32 len, u32 nSG, u16 cmd, u16 ver, u64 lbn, u64 ts_us`;
//! - v2, 40 bytes: `u16 cmd, u16 ver, u32 sn, u32 len, u32 nSG, u64 lbn, u64 ts_us, u64 rt_us`.
//!
//! Mapping: offset = lbn * 512 (the logical block number counts 512-byte sectors), length = len
//! bytes, time = ts_us * 1000 shifted so that the first record is at 0, op from the SCSI command
//! (READ 6/10/12/16 = 0x08/0x28/0xa8/0x88, WRITE 6/10/12/16 = 0x0a/0x2a/0xaa/0x8a). Records of
//! other commands (INQUIRY, TEST UNIT READY, ...) move no data and are passed over.

use super::parse::{le_u16, le_u32, le_u64, sectors_to_bytes, FieldError, RecordDecoder, TimeShift};
use super::{Op, Request};

pub const SECTOR: u64 = 512;

/// The operation of a SCSI command, `None` when it moves no data.
#[inline]
pub fn scsi_op(cmd: u8) -> Option<Op> {
    match cmd {
        0x08 | 0x28 | 0xa8 | 0x88 => Some(Op::Read),
        0x0a | 0x2a | 0xaa | 0x8a => Some(Op::Write),
        _ => None,
    }
}

/// The vscsi version whose version field every one of the first (up to 8) records carries.
pub fn looks_like(head: &[u8]) -> Option<u8> {
    let check = |size: usize, at: usize, version: u16| {
        let n = (head.len() / size).min(8);
        n > 0 && (0..n).all(|i| le_u16(head, i * size + at) >> 8 == version)
    };
    if check(40, 2, 2) {
        Some(2)
    } else if check(32, 14, 1) {
        Some(1)
    } else {
        None
    }
}

#[inline]
fn request(cmd: u16, len: u32, lbn: u64, ts_us: u64, clock: &mut TimeShift) -> Result<Option<Request>, FieldError> {
    let Some(op) = scsi_op(cmd as u8) else { return Ok(None) };
    let t = ts_us.checked_mul(1000).ok_or_else(|| FieldError::out_of_range("ts", ts_us))?;
    Ok(Some(Request {
        time_ns: clock.apply(t),
        offset: sectors_to_bytes("lbn", lbn, SECTOR)?,
        length: len as u64,
        pid: 0,
        device: 0,
        op,
        file: None,
    }))
}

#[derive(Default)]
pub struct VscsiV1 {
    clock: TimeShift,
}

impl RecordDecoder for VscsiV1 {
    const SIZE: usize = 32;
    #[inline]
    fn decode(&mut self, rec: &[u8], _record_no: u64) -> Result<Option<Request>, FieldError> {
        let ver = le_u16(rec, 14);
        if ver >> 8 != 1 {
            return Err(FieldError::new("ver", format!("version {} in a vscsi v1 trace", ver >> 8)));
        }
        request(le_u16(rec, 12), le_u32(rec, 4), le_u64(rec, 16), le_u64(rec, 24), &mut self.clock)
    }
}

#[derive(Default)]
pub struct VscsiV2 {
    clock: TimeShift,
}

impl RecordDecoder for VscsiV2 {
    const SIZE: usize = 40;
    #[inline]
    fn decode(&mut self, rec: &[u8], _record_no: u64) -> Result<Option<Request>, FieldError> {
        let ver = le_u16(rec, 2);
        if ver >> 8 != 2 {
            return Err(FieldError::new("ver", format!("version {} in a vscsi v2 trace", ver >> 8)));
        }
        request(le_u16(rec, 0), le_u32(rec, 8), le_u64(rec, 16), le_u64(rec, 24), &mut self.clock)
    }
}
