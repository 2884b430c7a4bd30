//! Linux readahead, as in `mm/readahead.c` of Linux 6.12, as a self-contained state machine.
//!
//! # What it models
//!
//! Linux reads files through the page cache in pages of 4 KiB. When a `read()` finds a page that
//! is not cached, or a cached page that carries the `PG_readahead` flag (the "marker"), the kernel
//! asks the readahead code how much more than the request to read. The answer depends on one small
//! per-open-file structure, `struct file_ra_state` (here [`FileRaState`]):
//!
//! ```text
//!                        |<----- async_size ---------|
//!     |------------------- size -------------------->|
//!     |==================#===========================|
//!     ^start             ^page marked with PG_readahead
//! ```
//!
//! `start`, `size` and `async_size` describe the most recent readahead; `ra_pages` is the largest
//! window (`read_ahead_kb` of the block device divided by the page size; 128 KiB = 32 pages by
//! default, `VM_READAHEAD_PAGES`); `prev_pos` is where the previous read ended. The window is read
//! as one batch of pages (already cached pages are skipped), and the first page of its last
//! `async_size` pages gets the marker. When the application later touches the marked page, the
//! next window is started while the application still consumes the current one ("readahead
//! pipelining"), so a sequential reader never waits for the disk once the pipeline is full.
//!
//! # Synchronous readahead: a miss (`page_cache_sync_ra`)
//!
//! On a miss at page `index` for a request of `req_count` pages ([`Readahead::on_sync_miss`]):
//!
//! 1. With readahead disabled (`ra_pages == 0`) the kernel still reads through the readahead path
//!    but only one page; with `POSIX_FADV_RANDOM` (`FMODE_RANDOM`) it reads exactly the request
//!    (`force_page_cache_ra`, capped at `max(io_pages, ra_pages)`). The state is untouched.
//! 2. `max_pages` is `ra_pages`, except that a request larger than `ra_pages` may use up to the
//!    device's optimal I/O size `io_pages` (`ractl_max_pages`).
//! 3. Start of file (`index == 0`), an oversized read (`req_count > max_pages`), or a sequential
//!    miss (`index - prev_index <= 1`, where `prev_index` is the page holding `prev_pos`: the same
//!    page for unaligned reads, the next one for sequential reads) starts a fresh window at
//!    `index` whose size is `get_init_ra_size(req_count, max_pages)`: the request rounded up to a
//!    power of two, times 4 if it is at most `max/32`, times 2 if at most `max/4`, else `max`. The
//!    async part is what was not requested (`size - req_count`), or half the window when the
//!    request filled it.
//! 4. Otherwise the page cache is asked for the traces a sequential stream would have left:
//!    the number of contiguously cached pages just before `index` (`page_cache_prev_miss`, looking
//!    back at most `max_pages`). This is "context readahead": it recognises a stream even when
//!    several readers share one `struct file` and overwrite each other's `prev_pos`.
//!    If that history is no longer than the request, the read is a standalone random read: only the
//!    requested pages are read, without a marker, and the state is left alone. If the history goes
//!    back to the first page of the file, it counts double (a whole-file read). The window is then
//!    `[index, index + min(history + req_count, max_pages))` with `async_size = 1`.
//!
//! # Asynchronous readahead: a marker hit (`page_cache_async_ra`)
//!
//! When a read reaches a cached page carrying the marker ([`Readahead::on_marker_hit`]), the marker
//! is cleared and:
//!
//! 1. If the page is where the state put its marker (`start + size - async_size`), the reader is
//!    the stream the state describes: the window moves forward (`start += size`) and grows by
//!    `get_next_ra_size` (x4 while below `max/16`, x2 while at most `max/2`, else `max`, but never
//!    shrinking), and all of it is asynchronous (`async_size = size`).
//! 2. Otherwise the marker belongs to another stream of the same file (interleaved readers): the
//!    previous window's async size is recovered from the cache as the distance from the marked page
//!    to the first uncached page after it (`page_cache_next_miss`, at most `max_pages` away; if no
//!    hole is found that close, nothing is read). The new window starts at that hole, its size is
//!    that distance plus the request, ramped up by `get_next_ra_size`, all asynchronous.
//!
//! # Reading a window (`page_cache_ra_order` -> `do_page_cache_ra` -> `page_cache_ra_unbounded`)
//!
//! The window's pages that are not already cached are read; nothing is read past the last page of
//! the file (`i_size`), and the window is clamped there while the state keeps the unclamped size.
//! The marker goes on page `start + n - async_size` where `n` is the clamped count, only when that
//! page is newly read (an already cached page is never marked) and `async_size` is neither 0 nor
//! larger than `n`. [`Window::read_range`] and [`Window::marker`] compute exactly this.
//!
//! # The read loop (`filemap_read` / `filemap_get_pages`)
//!
//! A `read()` of pages `[index, last)` walks the pages in order: at the first uncached page it runs
//! synchronous readahead with the rest of the request as `req_count`; it then takes the run of
//! cached pages, which ends after the first marked page, and if that run ends on a marked page it
//! runs asynchronous readahead for it with `req_count = last - page`. Finally `prev_pos` becomes the
//! end of the read. [`Readahead::read`] does this loop against a [`ReadaheadTarget`] (the caller's
//! page cache for that file). A caller with its own read loop can call the two entry points
//! directly and maintain `prev_pos` with [`FileRaState::record_read`].
//!
//! # Scope
//!
//! All folios are single pages (order 0), as for a file system without large folios (ext4 in
//! 6.12); with large folios Linux aligns windows to folio sizes and marks folios, not pages.
//! Memory-mapped faults use a different path (`do_sync_mmap_readahead`, read-around) that is not
//! modelled; neither is `blk_cgroup_congested()` (taken as false). A device without a file
//! system (a raw block device read through its page cache) is one file whose size is the device
//! size; callers without any size pass `eof = None`.

/// Default `ra_pages`: `VM_READAHEAD_PAGES`, 128 KiB of 4 KiB pages (`read_ahead_kb` = 128).
pub const DEFAULT_RA_PAGES: u64 = 32;

/// Why a window was issued; for statistics and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RaKind {
    /// Synchronous: start of file, oversized read, or sequential miss (fresh window).
    Initial,
    /// Synchronous: context readahead from the cached history before the miss.
    Context,
    /// Synchronous: a standalone random read, only the requested pages, no marker.
    Random,
    /// Synchronous with readahead disabled or `POSIX_FADV_RANDOM`: only the request (or one page).
    Forced,
    /// Asynchronous: the marker the state expected; the window moves forward and grows.
    Sequential,
    /// Asynchronous: a marker of another stream (interleaved readers); size recovered from the cache.
    Interleaved,
}

/// One readahead decision: read pages `[start, start + size)` that are not cached, and mark page
/// `start + size - async_size` (see [`Window::read_range`] and [`Window::marker`] for the clamping
/// at end of file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Window {
    pub start: u64,
    pub size: u64,
    pub async_size: u64,
    pub kind: RaKind,
}

impl Window {
    /// The pages actually read: `[start, end)`, clamped at the end of file (`eof` = file size in
    /// pages). Empty when `start` is at or past the end of file.
    pub fn read_range(&self, eof: Option<u64>) -> (u64, u64) {
        let end = self.start.saturating_add(self.size);
        match eof {
            Some(e) if self.start >= e => (self.start, self.start),
            Some(e) => (self.start, end.min(e)),
            None => (self.start, end),
        }
    }

    /// Number of pages in [`Window::read_range`].
    pub fn read_len(&self, eof: Option<u64>) -> u64 {
        let (s, e) = self.read_range(eof);
        e - s
    }

    /// The page to mark with `PG_readahead`, if any: `start + n - async_size` for the clamped
    /// count `n`, when `0 < async_size <= n`. The caller must not mark a page that was already
    /// cached before this window (Linux only marks pages it adds).
    pub fn marker(&self, eof: Option<u64>) -> Option<u64> {
        let n = self.read_len(eof);
        if self.async_size == 0 || self.async_size > n {
            return None;
        }
        Some(self.start + n - self.async_size)
    }
}

/// Per-open-file readahead state: Linux's `struct file_ra_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct FileRaState {
    /// First page of the most recent readahead window.
    pub start: u64,
    /// Pages in the most recent window.
    pub size: u64,
    /// Pages at the end of that window that are read asynchronously; the marker is on the first.
    pub async_size: u64,
    /// Largest window in pages (`read_ahead_kb` / 4 KiB); 0 disables readahead.
    pub ra_pages: u64,
    /// Page holding `prev_pos`, the position just after the previous read; `u64::MAX` before the
    /// first read (Linux: `prev_pos = -1`).
    pub prev_index: u64,
    /// `POSIX_FADV_RANDOM` was given: read exactly what is asked.
    pub random: bool,
}

impl FileRaState {
    /// A fresh state (`file_ra_state_init`).
    pub fn new(ra_pages: u64) -> FileRaState {
        FileRaState { start: 0, size: 0, async_size: 0, ra_pages, prev_index: u64::MAX, random: false }
    }

    /// Records a read of `pages` pages from page `first`: `prev_pos` becomes the byte after it.
    pub fn record_read(&mut self, first: u64, pages: u64) {
        self.prev_index = first.saturating_add(pages);
    }

    /// Records a read that ended just before byte `end` (exclusive), for byte-granular callers.
    pub fn record_read_end_byte(&mut self, end: u64, page_size: u64) {
        self.prev_index = end / page_size.max(1);
    }
}

/// Read-only view of one file's page cache, as the readahead code queries it.
pub trait PageLookup {
    /// Page `index` is in the page cache (up to date, or being read).
    fn contains(&self, index: u64) -> bool;

    /// `page_cache_prev_miss`: the first page not cached, searching backwards from `index` over at
    /// most `max_scan` pages. When all are cached, `index - max_scan`; when the search passes page
    /// 0 with everything cached, `u64::MAX`.
    fn prev_miss(&self, index: u64, max_scan: u64) -> u64 {
        let mut i = index;
        for _ in 0..max_scan {
            if !self.contains(i) {
                return i;
            }
            if i == 0 {
                return u64::MAX;
            }
            i -= 1;
        }
        i
    }

    /// `page_cache_next_miss`: the first page not cached, searching forwards from `index` over at
    /// most `max_scan` pages; `index + max_scan` when all are cached.
    fn next_miss(&self, index: u64, max_scan: u64) -> u64 {
        let mut i = index;
        for _ in 0..max_scan {
            if !self.contains(i) {
                return i;
            }
            i = i.wrapping_add(1);
            if i == 0 {
                return 0;
            }
        }
        i
    }
}

/// A file's page cache that [`Readahead::read`] can drive.
pub trait ReadaheadTarget: PageLookup {
    /// Tests and clears `PG_readahead` on cached page `index`.
    fn test_clear_marker(&mut self, index: u64) -> bool;
    /// Reads `window`: adds the pages of [`Window::read_range`] that are not cached (issuing the
    /// I/O) and marks [`Window::marker`] if that page was added by this call.
    fn submit(&mut self, window: &Window, eof: Option<u64>);
}

/// The readahead algorithm's configuration; the per-file state lives in [`FileRaState`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Readahead {
    /// Default `ra_pages` for new files (`read_ahead_kb` / 4 KiB).
    pub ra_pages: u64,
    /// The device's optimal I/O size in pages (`bdi->io_pages`, from `max_sectors_kb`); lets a
    /// request larger than `ra_pages` be read in one window of up to this size.
    pub io_pages: u64,
    /// Context readahead (step 4 of a synchronous miss), which Linux added after the first
    /// ondemand readahead of 2.6.23. Without it a miss that is neither at the start of the file,
    /// oversized nor sequential is a standalone random read, as in that early ondemand readahead.
    pub context: bool,
}

impl Default for Readahead {
    fn default() -> Self {
        Readahead::new(DEFAULT_RA_PAGES)
    }
}

/// `get_init_ra_size`: the first window for a request of `size` pages.
pub fn init_ra_size(size: u64, max: u64) -> u64 {
    let newsize = size.max(1).next_power_of_two();
    if newsize <= max / 32 {
        newsize * 4
    } else if newsize <= max / 4 {
        newsize * 2
    } else {
        max
    }
}

/// `get_next_ra_size`: the window after one of `cur` pages.
pub fn next_ra_size(cur: u64, max: u64) -> u64 {
    if cur < max / 16 {
        4 * cur
    } else if cur <= max / 2 {
        2 * cur
    } else {
        max
    }
}

impl Readahead {
    /// Readahead with windows of at most `ra_pages` pages; `io_pages` defaults to `ra_pages`.
    pub fn new(ra_pages: u64) -> Readahead {
        Readahead { ra_pages, io_pages: ra_pages, context: true }
    }

    /// Sets the device's optimal I/O size in pages (`max_sectors_kb` / 4).
    pub fn with_io_pages(mut self, io_pages: u64) -> Readahead {
        self.io_pages = io_pages;
        self
    }

    /// Turns context readahead on or off.
    pub fn with_context(mut self, context: bool) -> Readahead {
        self.context = context;
        self
    }

    /// The state of a newly opened file.
    pub fn file_state(&self) -> FileRaState {
        FileRaState::new(self.ra_pages)
    }

    /// `ractl_max_pages`.
    fn max_pages(&self, ra: &FileRaState, req: u64) -> u64 {
        let mut max = ra.ra_pages;
        if req > max && self.io_pages > max {
            max = req.min(self.io_pages);
        }
        max
    }

    /// Synchronous readahead (`page_cache_sync_ra`) for a miss at page `index` of a read that
    /// still wants `req_pages` pages. Returns the pages to read, or `None` when nothing is read
    /// (the miss is at or past the end of file). Updates `ra` as Linux does.
    pub fn on_sync_miss(
        &self,
        ra: &mut FileRaState,
        index: u64,
        req_pages: u64,
        eof: Option<u64>,
        cache: &impl PageLookup,
    ) -> Option<Window> {
        let window = self.sync_window(ra, index, req_pages.max(1), cache);
        (window.read_len(eof) > 0).then_some(window)
    }

    fn sync_window(&self, ra: &mut FileRaState, index: u64, mut req: u64, cache: &impl PageLookup) -> Window {
        let mut forced = ra.random;
        if ra.ra_pages == 0 {
            req = 1;
            forced = true;
        }
        if forced {
            let n = req.min(self.io_pages.max(ra.ra_pages).max(1));
            return Window { start: index, size: n, async_size: 0, kind: RaKind::Forced };
        }
        let max = self.max_pages(ra, req);
        if index == 0 || req > max || index.wrapping_sub(ra.prev_index) <= 1 {
            ra.start = index;
            ra.size = init_ra_size(req, max);
            ra.async_size = if ra.size > req { ra.size - req } else { ra.size >> 1 };
            return Window { start: ra.start, size: ra.size, async_size: ra.async_size, kind: RaKind::Initial };
        }
        if !self.context {
            return Window { start: index, size: req, async_size: 0, kind: RaKind::Random };
        }
        let miss = cache.prev_miss(index - 1, max);
        let mut contig = index.wrapping_sub(miss).wrapping_sub(1);
        if contig <= req {
            return Window { start: index, size: req, async_size: 0, kind: RaKind::Random };
        }
        if miss == u64::MAX {
            contig *= 2;
        }
        ra.start = index;
        ra.size = (contig + req).min(max);
        ra.async_size = 1;
        Window { start: ra.start, size: ra.size, async_size: ra.async_size, kind: RaKind::Context }
    }

    /// Asynchronous readahead (`page_cache_async_ra`) for a read reaching page `index`, which
    /// carried the marker (the caller has cleared it), with `req_pages` pages of the read left from
    /// `index` on. Returns the pages to read, or `None` when Linux reads nothing.
    pub fn on_marker_hit(
        &self,
        ra: &mut FileRaState,
        index: u64,
        req_pages: u64,
        eof: Option<u64>,
        cache: &impl PageLookup,
    ) -> Option<Window> {
        if ra.ra_pages == 0 {
            return None;
        }
        let req = req_pages.max(1);
        let max = self.max_pages(ra, req);
        let expected = ra.start.wrapping_add(ra.size).wrapping_sub(ra.async_size);
        let kind = if index == expected {
            ra.start += ra.size;
            ra.size = ra.size.max(next_ra_size(ra.size, max));
            RaKind::Sequential
        } else {
            let start = cache.next_miss(index + 1, max);
            if start == 0 || start - index > max {
                return None;
            }
            ra.start = start;
            ra.size = next_ra_size(start - index + req, max);
            RaKind::Interleaved
        };
        ra.async_size = ra.size;
        let window = Window { start: ra.start, size: ra.size, async_size: ra.async_size, kind };
        (window.read_len(eof) > 0).then_some(window)
    }

    /// One buffered `read()` of `count` pages from page `index` (`filemap_read`): runs synchronous
    /// readahead at each uncached page and asynchronous readahead at each marked page, submitting
    /// every window to `cache`, then records the read in `ra`. The read stops at the end of file.
    /// Returns the number of windows submitted.
    pub fn read(
        &self,
        ra: &mut FileRaState,
        index: u64,
        count: u64,
        eof: Option<u64>,
        cache: &mut impl ReadaheadTarget,
    ) -> usize {
        let mut last = index.saturating_add(count.max(1));
        if let Some(e) = eof {
            last = last.min(e);
        }
        let mut windows = 0;
        let mut pos = index;
        while pos < last {
            if !cache.contains(pos) {
                if let Some(w) = self.on_sync_miss(ra, pos, last - pos, eof, cache) {
                    cache.submit(&w, eof);
                    windows += 1;
                }
                if !cache.contains(pos) {
                    // Linux then reads the page alone (`filemap_create_folio`); only possible if
                    // the target declined the window.
                    let w = Window { start: pos, size: 1, async_size: 0, kind: RaKind::Forced };
                    cache.submit(&w, eof);
                    windows += 1;
                }
            }
            // The batch of cached pages ends after the first marked one (`filemap_get_read_batch`).
            while pos < last && cache.contains(pos) {
                let page = pos;
                pos += 1;
                if cache.test_clear_marker(page) {
                    if let Some(w) = self.on_marker_hit(ra, page, last - page, eof, cache) {
                        cache.submit(&w, eof);
                        windows += 1;
                    }
                    break;
                }
            }
        }
        if last > index {
            ra.record_read(index, last - index);
        }
        windows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};

    /// A page cache of one file without eviction, recording the windows it was given.
    #[derive(Default)]
    struct Cache {
        pages: BTreeSet<u64>,
        markers: BTreeSet<u64>,
        windows: Vec<Window>,
        reads: BTreeMap<u64, u64>,
    }

    impl PageLookup for Cache {
        fn contains(&self, index: u64) -> bool {
            self.pages.contains(&index)
        }
    }

    impl ReadaheadTarget for Cache {
        fn test_clear_marker(&mut self, index: u64) -> bool {
            self.markers.remove(&index)
        }
        fn submit(&mut self, w: &Window, eof: Option<u64>) {
            self.windows.push(*w);
            let (s, e) = w.read_range(eof);
            let mut added = BTreeSet::new();
            for p in s..e {
                if self.pages.insert(p) {
                    added.insert(p);
                    *self.reads.entry(p).or_default() += 1;
                }
            }
            if let Some(m) = w.marker(eof) {
                if added.contains(&m) {
                    self.markers.insert(m);
                }
            }
        }
    }

    fn triples(ws: &[Window]) -> Vec<(u64, u64, u64)> {
        ws.iter().map(|w| (w.start, w.size, w.async_size)).collect()
    }

    #[test]
    fn window_sizes() {
        // get_init_ra_size for max 32: 1-2 pages -> 4 (16 KiB), 3-4 -> 8, 5-8 -> 16, >8 -> 32.
        let t: Vec<u64> = [1, 2, 3, 4, 5, 8, 9, 32, 100].iter().map(|&s| init_ra_size(s, 32)).collect();
        assert_eq!(t, vec![4, 4, 8, 8, 16, 16, 32, 32, 32]);
        let n: Vec<u64> = [1, 2, 4, 8, 16, 17, 32].iter().map(|&c| next_ra_size(c, 32)).collect();
        assert_eq!(n, vec![4, 4, 8, 16, 32, 32, 32]);
    }

    #[test]
    fn one_page_sequential_reads_ramp_up() {
        let ra = Readahead::default();
        let mut st = ra.file_state();
        let mut c = Cache::default();
        for p in 0..200 {
            ra.read(&mut st, p, 1, None, &mut c);
        }
        let expected = vec![(0, 4, 3), (4, 8, 8), (12, 16, 16), (28, 32, 32), (60, 32, 32), (92, 32, 32), (124, 32, 32), (156, 32, 32), (188, 32, 32), (220, 32, 32)];
        assert_eq!(triples(&c.windows), expected);
        assert_eq!(c.windows[0].kind, RaKind::Initial);
        assert!(c.windows[1..].iter().all(|w| w.kind == RaKind::Sequential));
        // Markers sit on the first page of each async part: 1, 4, 12, 28, 60, ...
        assert_eq!(c.windows[0].marker(None), Some(1));
        assert_eq!(c.windows[3].marker(None), Some(28));
        assert!(c.reads.values().all(|&n| n == 1), "no page is read twice");
    }

    #[test]
    fn larger_sequential_requests() {
        // 16 KiB reads (4 pages): first window 8 pages with 4 async, then 16, 32, 32.
        let ra = Readahead::default();
        let mut st = ra.file_state();
        let mut c = Cache::default();
        for i in 0..20 {
            ra.read(&mut st, i * 4, 4, None, &mut c);
        }
        assert_eq!(triples(&c.windows)[..5], [(0, 8, 4), (8, 16, 16), (24, 32, 32), (56, 32, 32), (88, 32, 32)]);
        // A first read as large as the window: get_init_ra_size gives max, async = half; the read
        // itself then passes the marker at 16 and starts the next window.
        let mut st = ra.file_state();
        let mut c = Cache::default();
        ra.read(&mut st, 0, 32, None, &mut c);
        assert_eq!(triples(&c.windows), vec![(0, 32, 16), (32, 32, 32)]);
    }

    #[test]
    fn sequential_miss_in_middle_of_file_starts_fresh_window() {
        let ra = Readahead::default();
        let mut st = ra.file_state();
        let mut c = Cache::default();
        ra.read(&mut st, 1000, 1, None, &mut c); // random first read: only the page
        assert_eq!(c.windows[0].kind, RaKind::Random);
        assert_eq!(triples(&c.windows), vec![(1000, 1, 0)]);
        ra.read(&mut st, 1001, 1, None, &mut c); // prev_index == 1001: sequential miss
        assert_eq!(c.windows[1].kind, RaKind::Initial);
        assert_eq!(triples(&c.windows)[1], (1001, 4, 3));
    }

    #[test]
    fn random_reads_issue_no_readahead() {
        let ra = Readahead::default();
        let mut st = ra.file_state();
        let mut c = Cache::default();
        let mut x: u64 = 12345;
        let mut read = 0;
        for _ in 0..500 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let p = 1 + (x >> 33) % 1_000_000;
            if c.contains(p) || c.contains(p - 1) || c.contains(p + 1) || p.abs_diff(st.prev_index) <= 1 {
                continue; // keep the test about isolated reads
            }
            ra.read(&mut st, p, 2, None, &mut c);
            read += 1;
        }
        assert!(read > 400);
        assert!(c.windows.iter().all(|w| w.kind == RaKind::Random && w.size == 2 && w.marker(None).is_none()));
        assert_eq!(c.pages.len(), 2 * read);
    }

    #[test]
    fn eof_clamps_windows_and_markers() {
        let ra = Readahead::default();
        // File of 10 pages read one page at a time.
        let mut st = ra.file_state();
        let mut c = Cache::default();
        for p in 0..12 {
            ra.read(&mut st, p, 1, Some(10), &mut c);
        }
        assert_eq!(c.pages, (0..10).collect());
        assert!(c.reads.values().all(|&n| n == 1));
        // Windows (0,4,3) then (4,8,8): the second is clamped to pages 4..10 and, since its
        // async size (8) exceeds the 6 pages read, gets no marker.
        assert_eq!(triples(&c.windows), vec![(0, 4, 3), (4, 8, 8)]);
        assert_eq!(c.windows[1].read_range(Some(10)), (4, 10));
        assert_eq!(c.windows[1].marker(Some(10)), None);
        // A miss past the end reads nothing.
        let mut st = ra.file_state();
        assert_eq!(ra.on_sync_miss(&mut st, 10, 1, Some(10), &Cache::default()), None);
        assert_eq!(ra.on_sync_miss(&mut st, 0, 1, Some(0), &Cache::default()), None);
        // Clamped window whose async part still fits: marker moves with the clamp.
        let w = Window { start: 0, size: 16, async_size: 4, kind: RaKind::Initial };
        assert_eq!(w.marker(Some(10)), Some(6));
    }

    #[test]
    fn interleaved_readers_of_one_file_both_ramp_up() {
        // Two sequential readers share one struct file (one state): A from page 0, B from 10000.
        let ra = Readahead::default();
        let mut st = ra.file_state();
        let mut c = Cache::default();
        for i in 0..1000 {
            ra.read(&mut st, i, 1, None, &mut c);
            ra.read(&mut st, 10_000 + i, 1, None, &mut c);
        }
        let a: Vec<_> = c.windows.iter().filter(|w| w.start < 10_000).copied().collect();
        let b: Vec<_> = c.windows.iter().filter(|w| w.start >= 10_000).copied().collect();
        // Both streams reach full 32-page windows and everything they read was read ahead once.
        assert!(a.iter().filter(|w| w.size == 32).count() >= 10, "{a:?}");
        assert!(b.iter().filter(|w| w.size == 32).count() >= 10, "{b:?}");
        assert!(c.reads.values().all(|&n| n == 1));
        // B's stream is recognised from the cache (context / interleaved), not from prev_pos.
        assert!(b.iter().any(|w| w.kind == RaKind::Context || w.kind == RaKind::Interleaved));
        // Few synchronous windows: after ramp-up every window is asynchronous.
        let sync = c.windows.iter().filter(|w| matches!(w.kind, RaKind::Initial | RaKind::Context | RaKind::Random)).count();
        assert!(sync <= 6, "{sync} synchronous windows: {:?}", &c.windows[..12]);
    }

    #[test]
    fn context_readahead_window_from_history() {
        // Pages 100..120 cached (another reader's history), miss at 120 with a stale prev_pos.
        let ra = Readahead::default();
        let mut st = ra.file_state();
        st.prev_index = 5000;
        let mut c = Cache::default();
        c.pages.extend(100..120);
        let w = ra.on_sync_miss(&mut st, 120, 1, None, &c).unwrap();
        assert_eq!((w.start, w.size, w.async_size, w.kind), (120, 21, 1, RaKind::Context));
        assert_eq!(w.marker(None), Some(140));
        // History from the start of the file counts double (capped at max).
        let mut st = ra.file_state();
        st.prev_index = 5000;
        let mut c = Cache::default();
        c.pages.extend(0..6);
        let w = ra.on_sync_miss(&mut st, 6, 1, None, &c).unwrap();
        assert_eq!((w.start, w.size, w.kind), (6, 13, RaKind::Context));
        // Too little history: random, state untouched.
        let mut st = ra.file_state();
        st.prev_index = 5000;
        let before = st;
        let mut c = Cache::default();
        c.pages.insert(119);
        let w = ra.on_sync_miss(&mut st, 120, 1, None, &c).unwrap();
        assert_eq!(w.kind, RaKind::Random);
        assert_eq!(st, before);
    }

    #[test]
    fn without_context_readahead_a_miss_after_cached_pages_is_random() {
        // The history of `context_readahead_window_from_history`, without context readahead: only the
        // request is read and the state is left alone; the start of a file and sequential misses
        // still open a window.
        let ra = Readahead::default().with_context(false);
        let mut st = ra.file_state();
        st.prev_index = 5000;
        let before = st;
        let mut c = Cache::default();
        c.pages.extend(100..120);
        let w = ra.on_sync_miss(&mut st, 120, 2, None, &c).unwrap();
        assert_eq!((w.start, w.size, w.async_size, w.kind), (120, 2, 0, RaKind::Random));
        assert_eq!(st, before);
        let mut st = ra.file_state();
        assert_eq!(ra.on_sync_miss(&mut st, 0, 1, None, &c).unwrap().kind, RaKind::Initial);
        st.prev_index = 119;
        assert_eq!(ra.on_sync_miss(&mut st, 120, 1, None, &c).unwrap().kind, RaKind::Initial);
    }

    #[test]
    fn marker_of_other_stream_recovers_size_from_cache() {
        let ra = Readahead::default();
        let mut st = ra.file_state();
        st.start = 0;
        st.size = 4;
        st.async_size = 3; // expects marker at 1
        let mut c = Cache::default();
        c.pages.extend(500..516); // another stream's window: marker was at 500, 16 pages cached
        let w = ra.on_marker_hit(&mut st, 500, 1, None, &c).unwrap();
        // old async size 16 + 1 requested = 17 -> next_ra_size = 32.
        assert_eq!((w.start, w.size, w.async_size, w.kind), (516, 32, 32, RaKind::Interleaved));
        // No hole within max_pages after the marker: nothing.
        let mut c = Cache::default();
        c.pages.extend(500..600);
        assert_eq!(ra.on_marker_hit(&mut st, 500, 1, None, &c), None);
    }

    #[test]
    fn disabled_and_fadvise_random() {
        let ra = Readahead::new(0);
        let mut st = ra.file_state();
        let mut c = Cache::default();
        ra.read(&mut st, 0, 3, None, &mut c);
        assert_eq!(triples(&c.windows), vec![(0, 1, 0), (1, 1, 0), (2, 1, 0)]);
        let ra = Readahead::default();
        let mut st = ra.file_state();
        st.random = true;
        let mut c = Cache::default();
        ra.read(&mut st, 0, 8, None, &mut c);
        assert_eq!(triples(&c.windows), vec![(0, 8, 0)]);
        assert!(c.windows.iter().all(|w| w.kind == RaKind::Forced));
    }

    #[test]
    fn oversized_read_uses_io_pages() {
        let ra = Readahead::default().with_io_pages(256);
        let mut st = ra.file_state();
        let mut c = Cache::default();
        ra.read(&mut st, 0, 100, None, &mut c);
        // max_pages = min(100, 256) = 100; init size = max = 100; async = half.
        assert_eq!(triples(&c.windows)[0], (0, 100, 50));
    }

    #[test]
    fn lookup_helpers_follow_linux() {
        let mut c = Cache::default();
        c.pages.extend(0..10);
        assert_eq!(c.prev_miss(9, 32), u64::MAX); // wrapped past page 0
        assert_eq!(c.prev_miss(9, 4), 5); // no hole in range: index - max_scan
        c.pages.remove(&3);
        assert_eq!(c.prev_miss(9, 32), 3);
        assert_eq!(c.next_miss(4, 32), 10);
        assert_eq!(c.next_miss(4, 3), 7);
    }

    #[test]
    fn deterministic() {
        let run = || {
            let ra = Readahead::default();
            let mut st = ra.file_state();
            let mut c = Cache::default();
            for i in 0..300u64 {
                let p = if i % 3 == 0 { i * 7919 % 5000 } else { i };
                ra.read(&mut st, p, 1 + i % 4, Some(6000), &mut c);
            }
            triples(&c.windows)
        };
        assert_eq!(run(), run());
    }
}
