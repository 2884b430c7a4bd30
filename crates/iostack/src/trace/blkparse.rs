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
//! action whose fields are malformed is an error.
//!
//! Mapping: time = sec.nsec (already relative to the start of tracing) in ns; device =
//! `major << 20 | minor` (the kernel's dev_t encoding); pid from the line; op from RWBS;
//! offset = sector * 512; length = nsectors * 512. The process name is not kept (requests carry
//! the pid).

use super::parse::{parse_scaled, parse_u64, sectors_to_bytes, split_ws, FieldError, LineParser};
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

/// `maj,min` as a dev_t, or `None` when the field is not a device (summary lines).
#[inline]
fn device(s: &[u8]) -> Option<u32> {
    let comma = memchr::memchr(b',', s)?;
    let maj = parse_u64(&s[..comma])?;
    let min = parse_u64(&s[comma + 1..])?;
    if maj >= 1 << 12 || min >= 1 << 20 {
        return None;
    }
    Some(((maj as u32) << 20) | min as u32)
}

impl LineParser for BlkparseParser {
    #[inline]
    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Request>, FieldError> {
        let mut f = [&b""[..]; 11];
        let n = split_ws(line, &mut f);
        // An event line: device, cpu, sequence, time, pid, action, ...
        if n < 6 || f[5] != [self.action] {
            return Ok(None);
        }
        let Some(dev) = device(f[0]) else { return Ok(None) };
        if parse_u64(f[1]).is_none() || parse_u64(f[2]).is_none() {
            return Ok(None);
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
        if n < 10 || f[8] != b"+" {
            // E.g. `Q R [proc]` with no sector range (a barrier without data).
            return Ok(None);
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
