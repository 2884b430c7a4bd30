//! iostack's compact binary trace format, made for fast re-reads through a memory map.
//!
//! Layout (all integers little-endian):
//!
//! ```text
//! header, 16 bytes:
//!   0  [u8; 8]  magic "IOSTKTRC"
//!   8  u16      version (1)
//!   10 u16      record size in bytes (56)
//!   12 u32      reserved, 0
//! records, 56 bytes each, back to back until the end of the file:
//!   0  u64  time_ns
//!   8  u64  offset (bytes)
//!   16 u32  length (bytes)
//!   20 u32  pid
//!   24 u32  device
//!   28 u32  flags: bit 0 write, bit 1 file present, bit 2 file size present; other bits 0
//!   32 u64  file id        (0 when no file)
//!   40 u64  file offset    (0 when no file)
//!   48 u64  file size      (0 when unknown)
//! ```
//!
//! Every [`Request`] field round-trips, except that lengths are limited to 4 GiB - 1 (larger
//! requests do not occur in block traces; the writer refuses them). Times are kept as written.

use super::parse::{le_u16, le_u32, le_u64, FieldError, RecordDecoder};
use super::{FileRef, Op, Request};

pub use super::format::BIN_MAGIC;

pub const BIN_VERSION: u16 = 1;
pub const HEADER_SIZE: usize = 16;
pub const RECORD_SIZE: usize = 56;

pub const FLAG_WRITE: u32 = 1;
pub const FLAG_FILE: u32 = 2;
pub const FLAG_FILE_SIZE: u32 = 4;

/// The 16-byte header.
pub fn header() -> [u8; HEADER_SIZE] {
    let mut h = [0u8; HEADER_SIZE];
    h[..8].copy_from_slice(BIN_MAGIC);
    h[8..10].copy_from_slice(&BIN_VERSION.to_le_bytes());
    h[10..12].copy_from_slice(&(RECORD_SIZE as u16).to_le_bytes());
    h
}

/// Checks a header; the error says what is wrong.
pub fn check_header(h: &[u8]) -> Result<(), String> {
    if h.len() < HEADER_SIZE {
        return Err(format!("{} bytes; the iostack binary header alone is {HEADER_SIZE}", h.len()));
    }
    if &h[..8] != BIN_MAGIC {
        return Err("no IOSTKTRC magic: not an iostack binary trace".into());
    }
    let v = le_u16(h, 8);
    if v != BIN_VERSION {
        return Err(format!("iostack binary version {v}; this build reads version {BIN_VERSION}"));
    }
    let size = le_u16(h, 10) as usize;
    if size != RECORD_SIZE {
        return Err(format!("record size {size} in the header; version {BIN_VERSION} records are {RECORD_SIZE} bytes"));
    }
    Ok(())
}

/// Encodes one request; `None` when its length does not fit in 32 bits.
#[inline]
pub fn encode(r: &Request, out: &mut [u8; RECORD_SIZE]) -> Option<()> {
    let length = u32::try_from(r.length).ok()?;
    let mut flags = if r.op == Op::Write { FLAG_WRITE } else { 0 };
    let (fid, foff, fsize) = match r.file {
        None => (0, 0, 0),
        Some(f) => {
            flags |= FLAG_FILE;
            if f.size.is_some() {
                flags |= FLAG_FILE_SIZE;
            }
            (f.id, f.offset, f.size.unwrap_or(0))
        }
    };
    out[0..8].copy_from_slice(&r.time_ns.to_le_bytes());
    out[8..16].copy_from_slice(&r.offset.to_le_bytes());
    out[16..20].copy_from_slice(&length.to_le_bytes());
    out[20..24].copy_from_slice(&r.pid.to_le_bytes());
    out[24..28].copy_from_slice(&r.device.to_le_bytes());
    out[28..32].copy_from_slice(&flags.to_le_bytes());
    out[32..40].copy_from_slice(&fid.to_le_bytes());
    out[40..48].copy_from_slice(&foff.to_le_bytes());
    out[48..56].copy_from_slice(&fsize.to_le_bytes());
    Some(())
}

#[derive(Default)]
pub struct BinDecoder;

impl RecordDecoder for BinDecoder {
    const SIZE: usize = RECORD_SIZE;
    const CARRIES_FILES: bool = true;
    #[inline]
    fn decode(&mut self, rec: &[u8], _record_no: u64) -> Result<Option<Request>, FieldError> {
        let flags = le_u32(rec, 28);
        if flags & !(FLAG_WRITE | FLAG_FILE | FLAG_FILE_SIZE) != 0 {
            return Err(FieldError::new("flags", format!("unknown flag bits {flags:#x}")));
        }
        let file = if flags & FLAG_FILE != 0 {
            Some(FileRef {
                id: le_u64(rec, 32),
                offset: le_u64(rec, 40),
                size: if flags & FLAG_FILE_SIZE != 0 { Some(le_u64(rec, 48)) } else { None },
            })
        } else {
            None
        };
        Ok(Some(Request {
            time_ns: le_u64(rec, 0),
            offset: le_u64(rec, 8),
            length: le_u32(rec, 16) as u64,
            pid: le_u32(rec, 20),
            device: le_u32(rec, 24),
            op: if flags & FLAG_WRITE != 0 { Op::Write } else { Op::Read },
            file,
        }))
    }
}
