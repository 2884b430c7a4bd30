//! ARC `.lis` traces (Megiddo and Modha, "ARC: A Self-Tuning, Low Overhead Replacement Cache",
//! FAST 2003): lines `start_block n_blocks ignored request_no`.
//!
//! A line is one request for `n_blocks` consecutive blocks from `start_block`. The ARC paper and
//! its results count every block as one reference ("page" in the paper), so the reader expands a
//! line into `n_blocks` requests of one block each, in ascending order; the reference results in
//! `reference/` (libCacheSim) are computed on the same expansion.
//!
//! Block unit: the ARC paper gives cache sizes in 512-byte pages (its tables list a cache of
//! `c` pages next to a space of `c * 512` bytes, e.g. 32768 pages = 16 MB), so a block is 512
//! bytes: request `i` of a line is a read of 512 bytes at offset `(start_block + i) * 512`.
//! Simulated with a 512-byte page (or in object mode), one block is one cache entry, as in the
//! paper. The traces have no times; every request is at time 0. The third field (always 0 in
//! the published traces) and the request number are not used; the third and fourth fields may be
//! absent.

use super::parse::{parse_u64, sectors_to_bytes, split_ws, FieldError, LineParser};
use super::{Op, Request};

/// Bytes per ARC block.
pub const LIS_BLOCK: u64 = 512;

#[derive(Default)]
pub struct LisParser {
    /// Next block still owed by the current line, and how many remain after it.
    next_block: u64,
    remaining: u64,
}

#[inline]
fn block(b: u64) -> Request {
    Request { time_ns: 0, offset: b * LIS_BLOCK, length: LIS_BLOCK, pid: 0, device: 0, op: Op::Read, file: None }
}

impl LineParser for LisParser {
    #[inline]
    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Request>, FieldError> {
        let mut f = [&b""[..]; 4];
        let n = split_ws(line, &mut f);
        if !(2..=4).contains(&n) {
            return Err(FieldError::new("line", format!("{n} fields; expected start_block n_blocks [ignored request_no]")));
        }
        let start = parse_u64(f[0]).ok_or_else(|| FieldError::not_number("start_block", f[0]))?;
        let count = parse_u64(f[1]).ok_or_else(|| FieldError::not_number("n_blocks", f[1]))?;
        if count == 0 {
            return Ok(None);
        }
        // Every block of the line must have a byte offset.
        let last = start.checked_add(count - 1).ok_or_else(|| FieldError::out_of_range("n_blocks", count))?;
        sectors_to_bytes("start_block", last, LIS_BLOCK)?;
        self.next_block = start + 1;
        self.remaining = count - 1;
        Ok(Some(block(start)))
    }

    #[inline]
    fn pending(&mut self) -> Option<Request> {
        if self.remaining == 0 {
            return None;
        }
        let r = block(self.next_block);
        self.next_block += 1;
        self.remaining -= 1;
        Some(r)
    }
}
