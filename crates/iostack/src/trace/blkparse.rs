//! blkparse's default text output (blktrace, Linux block layer tracing):
//!
//! ```text
//!   8,16   5        2     0.000001850 18615  Q   R 1444645666 + 256 [java]
//!   maj,min cpu  sequence  sec.nsec    pid  action RWBS sector + nsectors [process]
//! ```
//!
//! A trace holds several events per I/O: A (remap), Q (queued: the request as the file system
//! issued it), G, P, I, M/F (merged), D (dispatched to the driver, after the scheduler merged and
//! reordered), C (completed), and more. One action stands for the request stream, chosen with
//! [`ReaderOptions::blkparse_event`](super::ReaderOptions): Q by default (what the application
//! asked, before the stack changed it), D (what the disk was asked) or C. Lines of other actions,
//! events that move no data (RWBS without R or W: flushes, discards), `m` message lines and the
//! per-CPU and total summaries blkparse prints at the end are passed over; a line of the chosen
//! action whose fields are malformed (device, cpu, sequence, time, pid, a sector without `+ nsectors`)
//! is an error naming the line and field, or is counted and skipped with `--skip-invalid`.
//!
//! Mapping: time = sec.nsec (already relative to the start of tracing) in ns; device =
//! `major << 20 | minor` (the kernel's dev_t encoding); pid from the line; op from RWBS;
//! offset = sector * 512; length = nsectors * 512. The process name is not kept (requests carry
//! the pid).

use super::parse::{parse_scaled, parse_u64, sectors_to_bytes, show, split_ws, FieldError, LineParser};
use super::{BlkparseEvent, Op, Request};

pub struct BlkparseParser {
    action: u8,
}

impl BlkparseParser {
    pub fn new(event: BlkparseEvent) -> BlkparseParser {
        let action = match event {
            BlkparseEvent::Queue => b'Q',
            BlkparseEvent::Dispatch => b'D',
            BlkparseEvent::Complete => b'C',
        };
        BlkparseParser { action }
    }
}

/// `maj,min` as a dev_t. `Ok(None)` when the field is not a device at all (no comma: the
/// per-CPU and total summaries); an error when it looks like one but is malformed.
#[inline]
fn device(s: &[u8]) -> Result<Option<u32>, FieldError> {
    let Some(comma) = memchr::memchr(b',', s) else { return Ok(None) };
    let maj = parse_u64(&s[..comma]).ok_or_else(|| FieldError::new("device", format!("`{}` is not major,minor", show(s))))?;
    let min = parse_u64(&s[comma + 1..]).ok_or_else(|| FieldError::new("device", format!("`{}` is not major,minor", show(s))))?;
    // dev_t: 12 bits of major, 20 of minor.
    if maj >= 1 << 12 || min >= 1 << 20 {
        return Err(FieldError::new("device", format!("`{}`: a major below 4096 and a minor below 2^20 expected", show(s))));
    }
    Ok(Some(((maj as u32) << 20) | min as u32))
}

impl LineParser for BlkparseParser {
    #[inline]
    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Request>, FieldError> {
        let mut f = [&b""[..]; 11];
        let n = split_ws(line, &mut f);
        // An event line: device, cpu, sequence, time, pid, action, ... Lines of other actions
        // and summary lines (whose sixth field is never a one-letter action) are passed over.
        if n < 6 || f[5] != [self.action] {
            return Ok(None);
        }
        let Some(dev) = device(f[0])? else { return Ok(None) };
        if parse_u64(f[1]).is_none() {
            return Err(FieldError::not_number("cpu", f[1]));
        }
        if parse_u64(f[2]).is_none() {
            return Err(FieldError::not_number("sequence", f[2]));
        }
        if n < 7 {
            return Err(FieldError::missing("rwbs"));
        }
        let rwbs = f[6];
        let op = if rwbs.contains(&b'R') {
            Op::Read
        } else if rwbs.contains(&b'W') {
            Op::Write
        } else {
            // Flushes (`FN`), discards (`D`) and other events that move no data.
            return Ok(None);
        };
        // An event without a sector range ends with the process name: `Q FWS [jbd2]` (a flush
        // or barrier carrying no data), `C WS 1950885322 [0]` (a flush's completion: a sector
        // and no count).
        if n < 8 || f[7].starts_with(b"[") || (n >= 9 && f[8].starts_with(b"[")) {
            return Ok(None);
        }
        if n < 9 || f[8] != b"+" {
            return Err(FieldError::new("+", format!("`sector + nsectors` expected after the sector, found `{}`", show(f.get(8).copied().filter(|_| n >= 9).unwrap_or(b"")))));
        }
        if n < 10 {
            return Err(FieldError::missing("nsectors"));
        }
        let time_ns = parse_scaled(f[3], 9).ok_or_else(|| FieldError::not_number("time", f[3]))?;
        let pid = parse_u64(f[4]).ok_or_else(|| FieldError::not_number("pid", f[4]))?;
        let pid = u32::try_from(pid).map_err(|_| FieldError::out_of_range("pid", pid))?;
        let sector = parse_u64(f[7]).ok_or_else(|| FieldError::not_number("sector", f[7]))?;
        let count = parse_u64(f[9]).ok_or_else(|| FieldError::not_number("nsectors", f[9]))?;
        Ok(Some(Request {
            time_ns,
            offset: sectors_to_bytes("sector", sector, 512)?,
            length: sectors_to_bytes("nsectors", count, 512)?,
            pid,
            device: dev,
            op,
            file: None,
        }))
    }
}
