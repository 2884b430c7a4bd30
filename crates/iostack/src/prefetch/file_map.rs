//! Where each block of a file lies on its device, as the trace shows it: the file system's
//! block map (4.3BSD's `bmap`) for prefetchers whose "next block" is the file's next logical
//! block, wherever the file system put it.
//!
//! The map is learned in a pass over the trace before the run: every request that names a file
//! places its pages (file page `i` of file `f` is device block `b` of device `d`), which is what
//! the file system's allocation decided, not a prediction of accesses. A page placed twice at
//! different blocks (a file rewritten elsewhere) keeps the place the trace shows first. A page
//! the trace never touches has no place: [`FileMap::next_place`] then assumes it follows the
//! page before it on the device, the contiguous layout the block-number prefetchers take for
//! granted, so that a trace whose files are contiguous is read exactly as without a map.
//!
//! Contiguous stretches of a file are kept as one run, so a map of contiguous files costs a
//! run per file; a file spread every other block costs a run per block.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::trace::{PageSize, Request};

/// A stretch of a file's pages that lie one after another on one device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    device: u32,
    block: u64,
    pages: u64,
}

/// File pages to device blocks (see the module's comment).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileMap {
    /// Per file id, runs by their first page, disjoint.
    files: FxHashMap<u64, BTreeMap<u64, Run>>,
}

impl FileMap {
    /// The map of a whole trace (requests with device ids as the engine numbers them).
    pub fn of_requests<'a>(requests: impl IntoIterator<Item = &'a Request>, page_size: u64) -> FileMap {
        let mut m = FileMap::default();
        let ps = PageSize::new(page_size);
        for r in requests {
            m.add_request(r, ps);
        }
        m
    }

    /// Places the pages of request `r` (nothing for a request without a file). The request's
    /// first block is its file offset's page, the next blocks the following pages, as the
    /// engine shows them to prefetchers ([`super::FileView::index`]).
    pub fn add_request(&mut self, r: &Request, ps: PageSize) {
        let Some(f) = r.file else { return };
        let (first, end) = ps.block_range(r);
        self.add(f.id, ps.page_of(f.offset), r.device, first, end - first);
    }

    /// Places pages `index..index + pages` of `file` at blocks `block..` of `device`, except
    /// those already placed.
    pub fn add(&mut self, file: u64, index: u64, device: u32, block: u64, pages: u64) {
        let runs = self.files.entry(file).or_default();
        let end = index.saturating_add(pages);
        let mut i = index;
        while i < end {
            if let Some((&s, r)) = runs.range(..=i).next_back() {
                if s + r.pages > i {
                    // Placed already: the first place stays.
                    i = s + r.pages;
                    continue;
                }
            }
            let next = runs.range(i..).next().map_or(u64::MAX, |(&s, _)| s);
            let piece_end = end.min(next);
            let run = Run { device, block: block + (i - index), pages: piece_end - i };
            insert_merged(runs, i, run);
            i = piece_end;
        }
    }

    /// Where page `index` of `file` lies, if the trace showed it.
    pub fn place(&self, file: u64, index: u64) -> Option<(u32, u64)> {
        let (&s, r) = self.files.get(&file)?.range(..=index).next_back()?;
        (index - s < r.pages).then(|| (r.device, r.block + (index - s)))
    }

    /// Where the page after page `index` of `file` lies, page `index` being at `block` of
    /// `device`: its place in the map, else the block after `block`.
    #[inline]
    pub fn next_place(&self, file: u64, index: u64, device: u32, block: u64) -> (u32, u64) {
        self.place(file, index + 1).unwrap_or((device, block + 1))
    }

    /// Files with at least one placed page.
    #[cfg(test)]
    fn files(&self) -> usize {
        self.files.len()
    }

    /// Runs of contiguous pages over all files.
    #[cfg(test)]
    fn runs(&self) -> usize {
        self.files.values().map(BTreeMap::len).sum()
    }
}

/// Inserts `run` at page `at` (where no run covers it), joined with the runs before and after
/// when the three lie one after another both in the file and on the device.
fn insert_merged(runs: &mut BTreeMap<u64, Run>, at: u64, mut run: Run) {
    let mut start = at;
    if let Some((&s, prev)) = runs.range(..at).next_back() {
        if s + prev.pages == at && prev.device == run.device && prev.block + prev.pages == run.block {
            start = s;
            run = Run { device: prev.device, block: prev.block, pages: prev.pages + run.pages };
        }
    }
    let end = start + run.pages;
    if let Some(next) = runs.get(&end).copied() {
        if next.device == run.device && run.block + run.pages == next.block {
            runs.remove(&end);
            run.pages += next.pages;
        }
    }
    runs.insert(start, run);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::FileRef;

    fn read(file: u64, index: u64, block: u64, pages: u64) -> Request {
        let mut r = Request::read(block * 4096, pages * 4096);
        r.file = Some(FileRef { id: file, offset: index * 4096, size: None });
        r
    }

    #[test]
    fn contiguous_files_are_one_run_each() {
        let reqs: Vec<Request> = (0..10).map(|i| read(1, i, 100 + i, 1)).chain((0..5).map(|i| read(2, i * 2, 500 + i * 2, 2))).collect();
        let m = FileMap::of_requests(&reqs, 4096);
        assert_eq!((m.files(), m.runs()), (2, 2));
        assert_eq!(m.place(1, 7), Some((0, 107)));
        assert_eq!(m.place(2, 9), Some((0, 509)));
        assert_eq!(m.place(1, 10), None);
        assert_eq!(m.place(3, 0), None);
    }

    #[test]
    fn spread_blocks_keep_their_places_and_the_first_place_wins() {
        // Every other block, written out of order, then page 2 seen elsewhere.
        let mut reqs: Vec<Request> = [3, 0, 2, 1].iter().map(|&i| read(7, i, 40 + 2 * i, 1)).collect();
        reqs.push(read(7, 2, 900, 1));
        let m = FileMap::of_requests(&reqs, 4096);
        assert_eq!(m.runs(), 4);
        assert_eq!((0..4).map(|i| m.place(7, i).unwrap().1).collect::<Vec<_>>(), vec![40, 42, 44, 46]);
        // A request over placed and unplaced pages places only the new ones.
        let mut m = m;
        m.add(7, 3, 0, 300, 3);
        assert_eq!(m.place(7, 3), Some((0, 46)));
        assert_eq!(m.place(7, 4), Some((0, 301)));
        assert_eq!(m.place(7, 5), Some((0, 302)));
    }

    #[test]
    fn an_unseen_page_follows_the_one_before() {
        let m = FileMap::of_requests(&[read(1, 0, 10, 1), read(1, 1, 12, 1)], 4096);
        assert_eq!(m.next_place(1, 0, 0, 10), (0, 12), "seen: where the trace put it");
        assert_eq!(m.next_place(1, 1, 0, 12), (0, 13), "never seen: the next device block");
        assert_eq!(m.next_place(9, 4, 3, 70), (3, 71), "an unknown file too");
    }

    #[test]
    fn runs_join_when_a_gap_is_filled() {
        let mut m = FileMap::default();
        m.add(1, 0, 0, 100, 2);
        m.add(1, 3, 0, 103, 2);
        assert_eq!(m.runs(), 2);
        m.add(1, 2, 0, 102, 1);
        assert_eq!(m.runs(), 1);
        assert_eq!(m.place(1, 4), Some((0, 104)));
        // A page on another device does not join.
        m.add(1, 5, 1, 105, 1);
        assert_eq!(m.runs(), 2);
        assert_eq!(m.place(1, 5), Some((1, 105)));
    }
}
