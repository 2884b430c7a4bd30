//! Device ids as the simulators key them.
//!
//! A cache key is one `u64`: in block mode the block number in the low [`BLOCK_BITS`] bits and
//! a device in the 16 bits above (`cache::block_key`), so that the keys of one device sort in
//! disk order (DULO and SplitLRU read the block number back). A trace's own device ids do not
//! fit in 16 bits: CSV and DiskSim ids are any `u32`, blkparse's are dev_t numbers
//! (`major << 20 | minor`, so 8,0 and 259,0 agree in their low bits), MSR and FIU ids are
//! host or volume numbers. Truncating them would make distinct devices share blocks.
//!
//! So every engine numbers the devices of a run densely, 0, 1, 2, ... in the order they first
//! appear, through [`DenseDevices`], a reader that rewrites `Request::device` and checks what
//! the key cannot hold: more than [`MAX_DEVICES`] distinct devices, or a block number of
//! [`BLOCK_BITS`] bits or more, is an error naming the request, never a silent alias. The
//! numbering is a [`DeviceTable`] that several passes over one trace share (so they agree) and
//! that reports use to give the trace's own ids back. A trace with one device gets index 0,
//! whose keys are exactly what they were (in object mode, the plain offset: libCacheSim's key).

use std::path::Path;
use std::sync::{Arc, Mutex};

use crate::cache::BLOCK_BITS;
use crate::error::{Location, TraceError};

use super::{Request, TraceReader};

/// Distinct devices one run can key apart (the 16 bits above a block number).
pub const MAX_DEVICES: usize = 1 << (64 - BLOCK_BITS);

/// Largest block (or, for several devices in object mode, byte offset) a key holds, plus one.
pub const BLOCK_LIMIT: u64 = 1 << BLOCK_BITS;

/// Dense device numbers in first-seen order, shared by the passes over one trace and by
/// whatever maps them back. Cloning shares the table.
#[derive(Debug, Clone, Default)]
pub struct DeviceTable {
    inner: Arc<Mutex<Numbering>>,
}

#[derive(Debug, Default)]
struct Numbering {
    index: rustc_hash::FxHashMap<u32, u32>,
    ids: Vec<u32>,
}

impl DeviceTable {
    pub fn new() -> DeviceTable {
        DeviceTable::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Numbering> {
        // The table is only ever appended to, so a thread that panicked left it consistent.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The dense number of trace device `id`, assigning the next one when it is new; `None`
    /// when [`MAX_DEVICES`] are already numbered.
    pub fn dense(&self, id: u32) -> Option<u32> {
        let mut n = self.lock();
        if let Some(&d) = n.index.get(&id) {
            return Some(d);
        }
        if n.ids.len() >= MAX_DEVICES {
            return None;
        }
        let d = n.ids.len() as u32;
        n.ids.push(id);
        n.index.insert(id, d);
        Some(d)
    }

    /// The trace's own id of dense device `dense` (`dense` itself if it was never assigned).
    pub fn trace_id(&self, dense: u32) -> u32 {
        self.lock().ids.get(dense as usize).copied().unwrap_or(dense)
    }

    /// The trace ids numbered so far, by dense number.
    pub fn ids(&self) -> Vec<u32> {
        self.lock().ids.clone()
    }

    /// How many devices are numbered.
    pub fn len(&self) -> usize {
        self.lock().ids.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What the keys of a run are made of, for the checks [`DenseDevices`] makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeySpace {
    /// One key per request, its offset (with the device above bit [`BLOCK_BITS`] once the trace
    /// has a second device, so offsets must then stay below [`BLOCK_LIMIT`]).
    Offsets,
    /// One key per block of this many bytes: block numbers must stay below [`BLOCK_LIMIT`].
    Blocks(u64),
}

/// Requests asked of the inner reader at a time by [`DenseDevices::read_batch`]: 256 requests
/// are 18 KiB, which stay in a 32 KiB first-level data cache until they are numbered.
const NUMBER_CHUNK: usize = 256;

/// A reader that numbers devices densely (see the module comment) and refuses what the keys
/// cannot hold.
pub struct DenseDevices<R> {
    inner: R,
    table: DeviceTable,
    space: KeySpace,
    /// Trace id -> dense number, a copy of the shared table's entries this reader has met.
    local: rustc_hash::FxHashMap<u32, u32>,
    last: Option<(u32, u32)>,
    /// Requests returned so far (for messages).
    seen: u64,
    /// Largest offset seen (object mode: it must fit below the device bits once a second
    /// device appears).
    max_offset: u64,
    several: bool,
    /// With block keys, the first byte past the last keyable block (`None`: every byte is), so
    /// that the common case checks a request without a division.
    byte_limit: Option<u64>,
}

/// Whether `r`'s last byte lies below `byte_limit` (`None`: no limit).
#[inline(always)]
fn fits_below(byte_limit: Option<u64>, r: &Request) -> bool {
    match byte_limit {
        Some(limit) => r.offset.saturating_add(r.length.max(1) - 1) < limit,
        None => true,
    }
}

impl<R: TraceReader> DenseDevices<R> {
    pub fn new(inner: R, table: &DeviceTable, space: KeySpace) -> Self {
        let several = table.len() > 1;
        let byte_limit = match space {
            KeySpace::Blocks(page) => BLOCK_LIMIT.checked_mul(page.max(1)),
            KeySpace::Offsets => None,
        };
        DenseDevices { inner, table: table.clone(), space, local: Default::default(), last: None, seen: 0, max_offset: 0, several, byte_limit }
    }

    /// [`DenseDevices::number_any`], with the common case (the device of the request before,
    /// blocks that fit) inline.
    #[inline(always)]
    fn number(&mut self, r: &mut Request, n: u64) -> Result<(), TraceError> {
        if let (Some((id, d)), KeySpace::Blocks(_)) = (self.last, self.space) {
            if id == r.device && fits_below(self.byte_limit, r) {
                r.device = d;
                return Ok(());
            }
        }
        self.number_any(r, n)
    }

    /// [`DenseDevices::number`] on the requests `buf[start..]`; on an error, the place of the
    /// request refused.
    fn number_batch(&mut self, buf: &mut [Request], start: usize) -> Result<(), (usize, TraceError)> {
        // The common case first: every request of the batch on the device of the request before
        // and its blocks within the keys' range, checked in one pass without a branch per
        // request (`span`, the OR of all offsets and lengths, bounds both, and below half the
        // limit their sum stays below it). Otherwise the requests go one by one below.
        if let (Some((id, d)), KeySpace::Blocks(_)) = (self.last, self.space) {
            let half = self.byte_limit.map_or(u64::MAX, |l| l / 2);
            let batch = &mut buf[start..];
            let (mut differ, mut span) = (0u32, 0u64);
            for r in batch.iter() {
                differ |= r.device ^ id;
                span |= r.offset | r.length;
            }
            if differ == 0 && span < half {
                if d != id {
                    batch.iter_mut().for_each(|r| r.device = d);
                }
                self.seen += batch.len() as u64;
                return Ok(());
            }
        }
        // `number` on each request, with its common case (the device of the request before,
        // blocks that fit) as one tight scan over the run of such requests, the state in locals.
        let seen0 = self.seen;
        let mut i = start;
        while i < buf.len() {
            if let (Some((id, d)), KeySpace::Blocks(_)) = (self.last, self.space) {
                let limit = self.byte_limit;
                for r in &mut buf[i..] {
                    if r.device != id || !fits_below(limit, r) {
                        break;
                    }
                    r.device = d;
                    i += 1;
                }
                if i == buf.len() {
                    break;
                }
            }
            let seen = seen0 + (i - start) as u64 + 1;
            self.seen = seen;
            self.number_any(&mut buf[i], seen).map_err(|e| (i, e))?;
            i += 1;
        }
        self.seen = seen0 + (buf.len() - start) as u64;
        Ok(())
    }

    fn error(&self, n: u64, field: &str, message: String) -> TraceError {
        TraceError::new(self.inner.path(), Location::Request(n), Some(field), message)
    }

    fn number_any(&mut self, r: &mut Request, n: u64) -> Result<(), TraceError> {
        let dense = match self.last {
            Some((id, d)) if id == r.device => d,
            _ => {
                let d = match self.local.get(&r.device) {
                    Some(&d) => d,
                    None => {
                        let d = self.table.dense(r.device).ok_or_else(|| {
                            self.error(n, "device", format!("more than {MAX_DEVICES} distinct devices in one trace: iostack keys at most {MAX_DEVICES}"))
                        })?;
                        self.local.insert(r.device, d);
                        d
                    }
                };
                self.last = Some((r.device, d));
                d
            }
        };
        let device = r.device;
        r.device = dense;
        match self.space {
            KeySpace::Blocks(page) => {
                let page = page.max(1);
                let last = r.offset.saturating_add(r.length.max(1) - 1) / page;
                if last >= BLOCK_LIMIT {
                    return Err(self.error(
                        n,
                        "offset",
                        format!("byte {} of device {device} is block {last} of {page} bytes; blocks are keyed below 2^{BLOCK_BITS}", r.offset.saturating_add(r.length.max(1) - 1)),
                    ));
                }
            }
            KeySpace::Offsets => {
                self.max_offset = self.max_offset.max(r.offset);
                self.several |= dense > 0;
                if self.several && self.max_offset >= BLOCK_LIMIT {
                    return Err(self.error(
                        n,
                        "offset",
                        format!(
                            "offset {} with several devices in the trace: object keys hold the device above offsets below 2^{BLOCK_BITS} (256 TiB)",
                            self.max_offset
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

impl<R: TraceReader> TraceReader for DenseDevices<R> {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        match self.inner.next_request()? {
            Some(mut r) => {
                self.seen += 1;
                self.number(&mut r, self.seen)?;
                Ok(Some(r))
            }
            None => Ok(None),
        }
    }

    fn read_batch(&mut self, buf: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        // Asked of the inner reader in chunks small enough that the numbering's pass finds the
        // requests just decoded still in the first-level cache (a whole batch of 4,096 requests
        // is 288 KiB: read back, every line of it missed). A chunk shorter than asked ends the
        // batch, as the inner reader's short batch did.
        let mut total = 0;
        loop {
            let want = (max - total).min(NUMBER_CHUNK);
            let start = buf.len();
            // The requests the inner reader appended before an error of its own are numbered
            // too, and on an error here only those before the refused request stay: the batch
            // holds what a reader asked one request at a time would have returned.
            let read = self.inner.read_batch(buf, want);
            if let Err((at, e)) = self.number_batch(buf, start) {
                buf.truncate(at);
                return Err(e);
            }
            let n = read?;
            total += n;
            if n < want || total == max {
                return Ok(total);
            }
        }
    }

    fn skipped(&self) -> u64 {
        self.inner.skipped()
    }

    fn carries_files(&self) -> bool {
        self.inner.carries_files()
    }

    fn take_events(&mut self, out: &mut Vec<super::ProcessEvent>) {
        self.inner.take_events(out)
    }

    fn carries_events(&self) -> bool {
        self.inner.carries_events()
    }

    fn path(&self) -> &Path {
        self.inner.path()
    }
}

/// The key of object mode: the offset, with the dense device above [`BLOCK_BITS`] (so a trace
/// of one device keys by its plain offset, as libCacheSim does). Requests read through
/// [`DenseDevices`] with [`KeySpace::Offsets`] never alias.
#[inline(always)]
pub fn object_key(r: &Request) -> u64 {
    object_key_of(r.offset, r.device)
}

/// [`object_key`] of a request at `offset` on `device`.
#[inline(always)]
pub fn object_key_of(offset: u64, device: u32) -> u64 {
    offset | ((device as u64) << BLOCK_BITS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{read_all, VecReader};

    fn on(device: u32, offset: u64) -> Request {
        let mut r = Request::read(offset, 4096);
        r.device = device;
        r
    }

    #[test]
    fn devices_are_numbered_in_first_seen_order_and_mapped_back() {
        let table = DeviceTable::new();
        let reqs = vec![on(131072, 0), on(0, 0), on(65536, 0), on(0, 4096), on(8 << 20, 0), on(259 << 20, 0)];
        let got = read_all(&mut DenseDevices::new(VecReader::new(reqs), &table, KeySpace::Blocks(4096))).unwrap();
        assert_eq!(got.iter().map(|r| r.device).collect::<Vec<_>>(), vec![0, 1, 2, 1, 3, 4]);
        assert_eq!(table.ids(), vec![131072, 0, 65536, 8 << 20, 259 << 20]);
        assert_eq!(table.trace_id(2), 65536);
        // A second pass over the same trace agrees.
        let again = read_all(&mut DenseDevices::new(VecReader::new(vec![on(65536, 0)]), &table, KeySpace::Blocks(4096))).unwrap();
        assert_eq!(again[0].device, 2);
    }

    #[test]
    fn keys_that_cannot_hold_a_block_are_refused() {
        let table = DeviceTable::new();
        let far = on(0, u64::MAX - 4095);
        let e = read_all(&mut DenseDevices::new(VecReader::new(vec![on(0, 0), far]), &table, KeySpace::Blocks(1))).unwrap_err();
        assert_eq!(e.location, Location::Request(2));
        assert!(e.to_string().contains("2^48"), "{e}");
        // 4 KiB blocks hold every offset below 2^60.
        assert!(read_all(&mut DenseDevices::new(VecReader::new(vec![on(0, 1 << 59)]), &DeviceTable::new(), KeySpace::Blocks(4096))).is_ok());
    }

    #[test]
    fn object_keys_keep_full_offsets_for_one_device_only() {
        let one = vec![on(5, u64::MAX - 1), on(5, 3)];
        let got = read_all(&mut DenseDevices::new(VecReader::new(one), &DeviceTable::new(), KeySpace::Offsets)).unwrap();
        assert_eq!(object_key(&got[0]), u64::MAX - 1);
        let two = vec![on(5, 1 << 50), on(6, 3)];
        let e = read_all(&mut DenseDevices::new(VecReader::new(two), &DeviceTable::new(), KeySpace::Offsets)).unwrap_err();
        assert!(e.to_string().contains("several devices"), "{e}");
        let ok = read_all(&mut DenseDevices::new(VecReader::new(vec![on(0, 7), on(65536, 7)]), &DeviceTable::new(), KeySpace::Offsets)).unwrap();
        assert_ne!(object_key(&ok[0]), object_key(&ok[1]));
    }

    /// Requests read through `DenseDevices` in batches of `size`: those returned, and the error.
    fn batched(reqs: &[Request], space: KeySpace, size: usize) -> (Vec<Request>, Option<TraceError>) {
        let mut r = DenseDevices::new(VecReader::new(reqs.to_vec()), &DeviceTable::new(), space);
        let mut out = Vec::new();
        loop {
            match r.read_batch(&mut out, size) {
                Ok(0) => return (out, None),
                Ok(_) => {}
                Err(e) => return (out, Some(e)),
            }
        }
    }

    #[test]
    fn batches_are_numbered_and_refused_as_single_requests_are() {
        // Runs of one device (whose batches take the whole-batch check) with offsets and
        // lengths on both sides of half the keys' limit and up to its last block, a second
        // device, then a request whose last byte is past the limit.
        let limit = BLOCK_LIMIT * 4096;
        let mut reqs = Vec::new();
        for i in 0..60u64 {
            let device = if i % 17 == 9 { 65543 } else { 7 };
            let offset = match i % 5 {
                0 => i * 4096,
                1 => limit / 2 - 4096,
                2 => limit / 2,
                3 => limit - 4096,
                _ => limit - 8192 + i,
            };
            let mut r = on(device, offset);
            r.length = if i % 7 == 0 { 0 } else { 4096 };
            reqs.push(r);
        }
        let mut past = on(7, limit - 100);
        past.length = 200;
        reqs.push(past);
        reqs.push(on(7, 0));
        for space in [KeySpace::Blocks(4096), KeySpace::Blocks(512)] {
            // One request at a time.
            let mut r = DenseDevices::new(VecReader::new(reqs.clone()), &DeviceTable::new(), space);
            let mut want = Vec::new();
            let want_err = loop {
                match r.next_request() {
                    Ok(Some(r)) => want.push(r),
                    Ok(None) => panic!("a request past the limit is refused"),
                    Err(e) => break e.to_string(),
                }
            };
            for size in [1, 2, 3, 7, 16, 61, 1000] {
                let (got, err) = batched(&reqs, space, size);
                assert_eq!(got, want, "batches of {size}");
                assert_eq!(err.expect("the same error").to_string(), want_err, "batches of {size}");
            }
        }
        let (got, _) = batched(&reqs, KeySpace::Blocks(4096), 1000);
        assert_eq!(got.iter().map(|r| r.device).collect::<Vec<_>>(), (0..60).map(|i| u32::from(i % 17 == 9)).collect::<Vec<_>>());
    }

    #[test]
    fn too_many_devices_is_an_error() {
        let reqs: Vec<Request> = (0..=MAX_DEVICES as u32).map(|d| on(d * 3, 0)).collect();
        let e = read_all(&mut DenseDevices::new(VecReader::new(reqs), &DeviceTable::new(), KeySpace::Blocks(4096))).unwrap_err();
        assert_eq!(e.location, Location::Request(MAX_DEVICES as u64 + 1));
    }
}
