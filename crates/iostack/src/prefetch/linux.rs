//! linux: Linux's readahead (mm/readahead.c) driving the timed page cache, per open file.
//!
//! The state machine itself is [`super::readahead`] (Linux 6.12: initial, sequential, context,
//! random and interleaved windows, markers, end-of-file clamping). This module connects it to
//! the engine's demand stream the way `filemap_read` does: a missed page runs synchronous
//! readahead with the rest of the request as its size; a cached page carrying the marker (which
//! the engine clears as it reports it) runs asynchronous readahead; the last page of a request
//! records where the read ended (`prev_pos`). The window's pages become one fetch, with the
//! marker on the page the window names (the engine marks it only if the page is newly read).
//!
//! Files: each (process, file) pair has its own state, as each process opens a file itself.
//! Files come from the trace (file id, offset, size); a request without a file uses its device
//! as the file, as Linux does for reads of a raw block device. The file size (`i_size`) is the
//! trace's, or the engine's inference (the largest extent accessed in the file over the trace),
//! or unknown (no end-of-file clamping). A file is taken to be contiguous on disk: page `i` of
//! the file is at the disk block of the accessed page shifted by `i - index`.
//!
//! Parameters: `max` (`read_ahead_kb`, default 128 KiB = 32 pages of 4 KiB; a plain number
//! counts pages), `io` (the device's optimal I/O size, `max_sectors_kb`, default equal to
//! `max`) and `context` (`on`, the default, or `off`: no context readahead, as in the early
//! ondemand readahead of Linux 2.6.23, so a miss neither at the start of a file, oversized nor
//! sequential reads only the request whatever the cache holds before it).

use crate::error::ConfigError;
use super::readahead::{FileRaState, PageLookup, Readahead, Window, DEFAULT_RA_PAGES};
use super::{BlockPresence, DemandAccess, Fetch, FileView, Prefetcher, PrefetcherInfo};

pub const INFO: PrefetcherInfo = PrefetcherInfo {
    name: "linux",
    aliases: &["readahead", "ra"],
    summary: "Linux 6.12 readahead per open file (linux:max=128KiB,io=...,context=on|off)",
    build: |spec, page| {
        let max_bytes = spec.size_bytes("max", DEFAULT_RA_PAGES * 4096, page)?;
        let ra_pages = max_bytes / page;
        let io_bytes = spec.size_bytes("io", ra_pages * page, page)?;
        for (key, bytes) in [("max", max_bytes), ("io", io_bytes)] {
            if bytes > super::MAX_READAHEAD_BYTES {
                return Err(ConfigError::new(format!("--prefetch linux.{key}"), format!("{bytes} bytes is more than the 64 MiB a readahead window may have")));
            }
        }
        let io_pages = io_bytes / page;
        let context = spec.choice("context", "on", &["on", "off"])? == "on";
        Ok(Box::new(LinuxReadahead::new(Readahead::new(ra_pages).with_io_pages(io_pages).with_context(context))))
    },
};

/// An open file: (process, whether the file is a raw device, file or device id).
type OpenFile = (u32, bool, u64);

pub struct LinuxReadahead {
    ra: Readahead,
    /// Index into `states` of each open file.
    files: hashbrown::HashMap<OpenFile, u32, rustc_hash::FxBuildHasher>,
    states: Vec<FileRaState>,
    /// The file of the last access and its state's index: reads come in runs on one file, and
    /// most accesses only record where the read ended, so this saves a hash lookup on each.
    last: Option<(OpenFile, u32)>,
}

impl LinuxReadahead {
    pub fn new(ra: Readahead) -> Self {
        LinuxReadahead { ra, files: Default::default(), states: Vec::new(), last: None }
    }

    /// The state of `file`, opened now if it is new.
    #[inline(always)]
    fn state(&mut self, file: OpenFile) -> &mut FileRaState {
        let i = match self.last {
            Some((f, i)) if f == file => i,
            _ => self.switch_to(file),
        };
        &mut self.states[i as usize]
    }

    /// Makes `file` the last one accessed, opening it if it is new; returns its state's index.
    #[inline(never)]
    fn switch_to(&mut self, file: OpenFile) -> u32 {
        let next = self.states.len() as u32;
        let i = *self.files.entry(file).or_insert(next);
        if i == next {
            self.states.push(self.ra.file_state());
        }
        self.last = Some((file, i));
        i
    }
}

/// One file's pages, as seen through the engine's cache for one access.
struct FilePages<'a> {
    a: &'a DemandAccess,
    cache: &'a dyn BlockPresence,
}

impl FilePages<'_> {
    #[inline]
    fn block(&self, index: u64) -> u64 {
        self.a.block.wrapping_sub(self.a.file.index).wrapping_add(index)
    }

    fn fetch(&self, w: &Window, eof: Option<u64>, out: &mut Vec<Fetch>) {
        let (s, e) = w.read_range(eof);
        if e <= s {
            return;
        }
        let n = (e - s).min(u32::MAX as u64) as u32;
        out.push(Fetch { device: self.a.device, block: self.block(s), blocks: n, marker: w.marker(eof).map(|m| self.block(m)) });
    }
}

impl PageLookup for FilePages<'_> {
    fn contains(&self, index: u64) -> bool {
        self.cache.is_cached(self.a.device, self.block(index))
    }
}

impl Prefetcher for LinuxReadahead {
    fn name(&self) -> String {
        format!("linux:max={},io={}", self.ra.ra_pages, self.ra.io_pages)
    }

    #[inline]
    fn on_access(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        if a.hit && !a.marker {
            self.on_plain_hit(a.pid, &a.file, a.req_pages);
            return;
        }
        self.on_miss_or_marker(a, cache, out);
    }

    /// Nothing to decide, only `prev_pos` at the end of a read. Small, so that an engine
    /// compiled for this prefetcher inlines it.
    #[inline(always)]
    fn on_plain_hit(&mut self, pid: u32, file: &FileView, req_pages: u64) -> bool {
        if req_pages <= 1 {
            self.state((pid, file.is_device, file.id)).record_read(file.index, 1);
        }
        true
    }
}

impl LinuxReadahead {
    /// A miss runs synchronous readahead, a hit on the marker asynchronous readahead.
    #[inline(never)]
    fn on_miss_or_marker(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        let key = (a.pid, a.file.is_device, a.file.id);
        let last_page = a.req_pages <= 1;
        let index = a.file.index;
        let eof = (a.file.size_pages != u64::MAX).then_some(a.file.size_pages);
        let pages = FilePages { a, cache };
        let ra_cfg = self.ra;
        let ra = self.state(key);
        let window = if a.hit {
            ra_cfg.on_marker_hit(ra, index, a.req_pages, eof, &pages)
        } else {
            ra_cfg.on_sync_miss(ra, index, a.req_pages, eof, &pages)
        };
        if let Some(w) = window {
            pages.fetch(&w, eof, out);
        }
        if last_page {
            ra.record_read(index, 1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prefetch::FileView;

    struct Nothing;
    impl BlockPresence for Nothing {
        fn is_cached(&self, _d: u32, _b: u64) -> bool {
            false
        }
    }

    fn access(index: u64, hit: bool, marker: bool, size: u64) -> DemandAccess {
        DemandAccess {
            device: 0,
            block: 1000 + index,
            file: FileView { id: 7, is_device: false, index, size_pages: size },
            req_pages: 1,
            hit,
            in_flight: false,
            marker,
            prefetch_hit: hit,
            pid: 0,
            time_ns: 0,
        }
    }

    #[test]
    fn initial_window_and_ramp_up() {
        let mut ra = LinuxReadahead::new(Readahead::new(32));
        let mut out = Vec::new();
        // Page 0 of a large file: 4-page window, marker on page 1.
        ra.on_access(&access(0, false, false, 1000), &Nothing, &mut out);
        assert_eq!(out, vec![Fetch { device: 0, block: 1000, blocks: 4, marker: Some(1001) }]);
        out.clear();
        // Marker hit on page 1: next window [4, 12), all async, marker on its first page.
        ra.on_access(&access(1, true, true, 1000), &Nothing, &mut out);
        assert_eq!(out, vec![Fetch { device: 0, block: 1004, blocks: 8, marker: Some(1004) }]);
        out.clear();
        ra.on_access(&access(4, true, true, 1000), &Nothing, &mut out);
        assert_eq!(out, vec![Fetch { device: 0, block: 1012, blocks: 16, marker: Some(1012) }]);
        out.clear();
        ra.on_access(&access(12, true, true, 1000), &Nothing, &mut out);
        assert_eq!(out, vec![Fetch { device: 0, block: 1028, blocks: 32, marker: Some(1028) }]);
    }

    #[test]
    fn eof_cuts_the_window_and_its_marker() {
        let mut ra = LinuxReadahead::new(Readahead::new(32));
        let mut out = Vec::new();
        ra.on_access(&access(0, false, false, 1), &Nothing, &mut out);
        assert_eq!(out, vec![Fetch { device: 0, block: 1000, blocks: 1, marker: None }]);
    }

    #[test]
    fn a_hit_records_where_the_read_ended() {
        // A random miss at page 10, a plain hit at page 20, then a miss at page 21: the hit
        // moved `prev_pos` to 21, so the miss is sequential and gets the initial window (it
        // would be a lone random read had the hit not been recorded). The hit is reported
        // through `on_access` and through the engine's entry for plain hits.
        for through_plain_hit in [false, true] {
            let mut ra = LinuxReadahead::new(Readahead::new(32));
            let mut out = Vec::new();
            ra.on_access(&access(10, false, false, 1000), &Nothing, &mut out);
            assert_eq!(out, vec![Fetch { device: 0, block: 1010, blocks: 1, marker: None }]);
            out.clear();
            let hit = access(20, true, false, 1000);
            if through_plain_hit {
                assert!(ra.on_plain_hit(hit.pid, &hit.file, hit.req_pages));
            } else {
                ra.on_access(&hit, &Nothing, &mut out);
                assert!(out.is_empty());
            }
            ra.on_access(&access(21, false, false, 1000), &Nothing, &mut out);
            assert_eq!(out, vec![Fetch { device: 0, block: 1021, blocks: 4, marker: Some(1022) }], "through_plain_hit={through_plain_hit}");
        }
    }

    #[test]
    fn random_read_reads_only_the_request() {
        let mut ra = LinuxReadahead::new(Readahead::new(32));
        let mut out = Vec::new();
        ra.on_access(&access(500, false, false, 1000), &Nothing, &mut out);
        assert_eq!(out, vec![Fetch { device: 0, block: 1500, blocks: 1, marker: None }]);
        out.clear();
        // The next page is a sequential miss: initial window.
        ra.on_access(&access(501, false, false, 1000), &Nothing, &mut out);
        assert_eq!(out, vec![Fetch { device: 0, block: 1501, blocks: 4, marker: Some(1502) }]);
    }
}
