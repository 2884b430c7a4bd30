//! The scan of a batch: what the timed engine learns from a batch of requests before it replays
//! it, computed where the batch is decoded.
//!
//! Before it replays a batch the engine needs three things from it: the block key of each
//! request's first page (it starts loading the cache's entries a few requests ahead), where
//! trace time goes backwards (the report warns of it, and such a batch is replayed without the
//! shortcuts that assume order), and whether every request has the same pid (the closed-loop
//! look-ahead then bisects instead of scanning). That is one pass over every request of the
//! batch, and on the engine's thread it is also the first touch of 288 KiB that the reader's
//! thread has just written: the engine waits for every line to come over from the other core.
//!
//! The pass depends on the stream alone (and the page size), so
//! [`super::background::BackgroundReader::scanning`] makes it on the reader's thread, beside the
//! decoding, and hands the scan over with its batch ([`super::TraceReader::take_scan`]). A
//! consumer that gets none (another reader, or a batch taken in pieces) makes it itself with
//! [`BatchScan::scan`]: the same function of the same requests, so nothing a run computes
//! depends on which thread scanned.

use super::{PageSize, Request};
use crate::cache::{block_key, Key};

/// What one pass over a batch finds (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BatchScan {
    /// The block key of each request's first page, in the batch's order.
    pub keys: Vec<Key>,
    /// The largest device number in the batch.
    pub max_device: u32,
    /// Whether every request of the batch has the first one's pid.
    pub one_pid: bool,
    /// Requests whose raw trace time is below the largest raw time before them in the stream.
    pub backwards: u64,
    /// The first of them: its place in the batch, and the largest raw time before it.
    pub first_backwards: Option<(usize, u64)>,
    /// The largest raw trace time of the stream up to the end of the batch.
    pub max_raw_ns: u64,
}

impl BatchScan {
    /// Scans `batch`, which comes after requests whose largest raw trace time is `max_raw_ns` (0
    /// before the first), keying pages of `pages`. Reuses `self`'s storage.
    pub fn scan(&mut self, batch: &[Request], pages: PageSize, max_raw_ns: u64) {
        self.keys.clear();
        self.keys.reserve(batch.len());
        let pid0 = batch.first().map_or(0, |r| r.pid);
        // The bits that differ from the first pid, or'ed; the largest device number; the
        // running maximum of trace times in a local (one compare per request).
        let (mut pids, mut max_device, mut max_raw) = (0u32, 0u32, max_raw_ns);
        let (mut backwards, mut first_backwards) = (0u64, None);
        for (i, r) in batch.iter().enumerate() {
            self.keys.push(block_key(r.device, pages.page_of(r.offset)));
            pids |= r.pid ^ pid0;
            max_device = max_device.max(r.device);
            if r.time_ns < max_raw {
                backwards += 1;
                if first_backwards.is_none() {
                    first_backwards = Some((i, max_raw));
                }
            } else {
                max_raw = r.time_ns;
            }
        }
        self.max_device = max_device;
        self.one_pid = pids == 0;
        self.backwards = backwards;
        self.first_backwards = first_backwards;
        self.max_raw_ns = max_raw;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(t: u64, offset: u64, pid: u32, device: u32) -> Request {
        let mut r = Request::read(offset, 4096).at(t);
        r.pid = pid;
        r.device = device;
        r
    }

    #[test]
    fn finds_keys_order_pids_and_devices() {
        let batch = [req(10, 0, 1, 0), req(30, 8192, 1, 2), req(20, 4096, 1, 0), req(25, 4096 * 9, 1, 1), req(40, 0, 1, 0)];
        let mut s = BatchScan::default();
        s.scan(&batch, PageSize::new(4096), 0);
        assert_eq!(s.keys, vec![block_key(0, 0), block_key(2, 2), block_key(0, 1), block_key(1, 9), block_key(0, 0)]);
        assert_eq!(s.max_device, 2);
        assert!(s.one_pid);
        // 20 and 25 fall below 30; the first is at place 2.
        assert_eq!((s.backwards, s.first_backwards, s.max_raw_ns), (2, Some((2, 30)), 40));
    }

    #[test]
    fn the_running_maximum_carries_over_from_the_batches_before() {
        let batch = [req(5, 0, 1, 0), req(7, 0, 2, 0)];
        let mut s = BatchScan::default();
        s.scan(&batch, PageSize::new(512), 6);
        assert_eq!((s.backwards, s.first_backwards, s.max_raw_ns), (1, Some((0, 6)), 7));
        assert!(!s.one_pid);
        // Scanned again with other requests, nothing of the first scan remains.
        s.scan(&batch[1..], PageSize::new(512), 0);
        assert_eq!((s.keys.len(), s.backwards, s.first_backwards, s.one_pid), (1, 0, None, true));
    }

    #[test]
    fn scanning_in_batches_of_any_size_adds_up_to_one_scan() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let reqs: Vec<Request> = (0..5000).map(|_| req(rng.gen_range(0..1000), rng.gen_range(0..1 << 30), rng.gen_range(0..3), rng.gen_range(0..4))).collect();
        let pages = PageSize::new(4096);
        let mut whole = BatchScan::default();
        whole.scan(&reqs, pages, 0);
        for size in [1, 7, 64, 4096] {
            let (mut keys, mut backwards, mut first, mut max_raw) = (Vec::new(), 0, None, 0);
            let mut s = BatchScan::default();
            for (n, chunk) in reqs.chunks(size).enumerate() {
                s.scan(chunk, pages, max_raw);
                keys.extend_from_slice(&s.keys);
                backwards += s.backwards;
                if first.is_none() {
                    first = s.first_backwards.map(|(i, m)| (n * size + i, m));
                }
                max_raw = s.max_raw_ns;
            }
            assert_eq!((keys, backwards, first, max_raw), (whole.keys.clone(), whole.backwards, whole.first_backwards, whole.max_raw_ns), "batches of {size}");
        }
    }
}
