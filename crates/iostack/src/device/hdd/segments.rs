//! The drive's cache segments and the two indexes that answer each request's questions
//! without a scan (see "Bookkeeping" in the module comment of `hdd`).

/// One segment of the drive's cache: sectors `[start, end)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Segment {
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) valid: bool,
}

/// Most segments a lookup scans with one branch-free pass building a bit mask.
const MASK_SCAN_MAX: usize = 64;

/// No segment, in the recency links.
const NIL: u32 = u32::MAX;

/// The drive's cache segments, with two indexes kept in step with them so that the two
/// questions every request asks cost no scan of all segments:
///
/// - "Which valid segment holds `[a, b)`?" A random read almost never finds one. Sector space
///   is cut into buckets of `2^shift` sectors, at least a segment's size, and `holders` counts
///   for each bucket (folded modulo the table's size) the valid segments that start in it. A
///   segment no longer than a bucket that holds sector `a` starts in `a`'s bucket or the one
///   before, so a read for which both count nobody is in no segment. Only the others (a few
///   percent of random reads, and every hit) scan the segments as before, so the answer is
///   always the lowest-index valid segment holding the range.
/// - "Which segment does a miss reuse?" The lowest-index invalid one (`free`, a bit set), else
///   the least recently used: `links` chain the segments in order of last use, most recent at
///   `mru`, so the answer is `lru`. A segment becomes valid only through [`Segments::fill`],
///   which uses it, so once none is invalid the order is that of last use of valid segments.
///
/// Every change of a segment's range or validity goes through [`Segments::set`], which updates
/// `holders` and `free`; recency changes only through [`Segments::touch`].
#[derive(Debug, Clone)]
pub(super) struct Segments {
    segs: Vec<Segment>,
    /// Bit `i % 64` of word `i / 64` set: segment `i` is invalid.
    free: Vec<u64>,
    /// Recency order: each segment's neighbours, towards `mru` and towards `lru`.
    links: Vec<Link>,
    mru: u32,
    lru: u32,
    /// Valid segments starting in each bucket; bucket `x >> shift` is counted at
    /// `(x >> shift) & slot_mask`.
    holders: Vec<u32>,
    shift: u32,
    slot_mask: u64,
    /// Valid segments longer than a bucket, counted here instead. The model never makes one
    /// (a segment ends at most a segment's size after its start), but if there is any, every
    /// lookup scans.
    wide: u32,
}

/// A segment's neighbours in the recency order (`NIL`: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Link {
    newer: u32,
    older: u32,
}

/// Where [`Segments::holders`] counts a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Counted {
    /// Invalid: nowhere.
    No,
    /// In the bucket it starts in.
    Bucket(u64),
    /// In `wide`.
    Wide,
}

impl Segments {
    /// `n` invalid segments of `seg_sectors` sectors each.
    pub(super) fn new(n: usize, seg_sectors: u64) -> Segments {
        assert!(n < NIL as usize, "too many segments");
        // 128 slots per segment: a read far from every segment still finds one counted in its
        // two buckets (folded together with others) about once in 64, for reads spread over
        // the disk.
        let slots = (n.max(1) * 128).next_power_of_two().clamp(64, 1 << 16);
        Segments {
            segs: vec![Segment::default(); n],
            free: (0..n.div_ceil(64)).map(|w| if (w + 1) * 64 <= n { u64::MAX } else { (1 << (n % 64)) - 1 }).collect(),
            links: (0..n as u32).map(|i| Link { newer: i.checked_sub(1).unwrap_or(NIL), older: if i + 1 == n as u32 { NIL } else { i + 1 } }).collect(),
            mru: if n == 0 { NIL } else { 0 },
            lru: if n == 0 { NIL } else { n as u32 - 1 },
            holders: vec![0; slots],
            shift: seg_sectors.max(1).next_power_of_two().trailing_zeros(),
            slot_mask: slots as u64 - 1,
            wide: 0,
        }
    }

    pub(super) fn len(&self) -> usize {
        self.segs.len()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    pub(super) fn get(&self, i: usize) -> Segment {
        self.segs[i]
    }

    /// Segment `i` now holds `[start, end)` and is the most recently used.
    pub(super) fn fill(&mut self, i: usize, start: u64, end: u64) {
        self.set(i, Segment { start, end, valid: true });
        self.touch(i);
    }

    pub(super) fn set_start(&mut self, i: usize, start: u64) {
        self.set(i, Segment { start, ..self.segs[i] });
    }

    pub(super) fn set_end(&mut self, i: usize, end: u64) {
        self.set(i, Segment { end, ..self.segs[i] });
    }

    /// Invalidates every valid segment overlapping `[a, b)`.
    pub(super) fn invalidate_overlapping(&mut self, a: u64, b: u64) {
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            if s.valid && a < s.end && s.start < b {
                self.set(i, Segment { valid: false, ..s });
            }
        }
    }

    /// The one place a segment's range or validity changes: keeps `holders` and `free` in step.
    #[inline(always)]
    pub(super) fn set(&mut self, i: usize, new: Segment) {
        let old = self.segs[i];
        let (was, now) = (self.counted(&old), self.counted(&new));
        if was != now {
            self.count(was, false);
            self.count(now, true);
        }
        if old.valid != new.valid {
            self.free[i / 64] ^= 1 << (i % 64);
        }
        self.segs[i] = new;
    }

    #[inline(always)]
    fn counted(&self, s: &Segment) -> Counted {
        if !s.valid {
            Counted::No
        } else if s.end.saturating_sub(s.start) > 1 << self.shift {
            Counted::Wide
        } else {
            Counted::Bucket(s.start >> self.shift)
        }
    }

    #[inline(always)]
    fn count(&mut self, c: Counted, add: bool) {
        let n = match c {
            Counted::No => return,
            Counted::Wide => &mut self.wide,
            Counted::Bucket(b) => &mut self.holders[(b & self.slot_mask) as usize],
        };
        *n = if add { *n + 1 } else { *n - 1 };
    }

    /// Marks segment `i` as the most recently used.
    #[inline(always)]
    pub(super) fn touch(&mut self, i: usize) {
        let me = i as u32;
        if self.mru == me {
            return;
        }
        // Unlink (`i` has a newer neighbour, since it is not the most recent).
        let Link { newer, older } = self.links[i];
        self.links[newer as usize].older = older;
        if older == NIL {
            self.lru = newer;
        } else {
            self.links[older as usize].newer = newer;
        }
        // Link in front.
        self.links[self.mru as usize].newer = me;
        self.links[i] = Link { newer: NIL, older: self.mru };
        self.mru = me;
    }

    /// The segment a miss reuses: the first invalid one, else the least recently used.
    #[inline]
    pub(super) fn victim(&self) -> usize {
        match self.free.iter().position(|&w| w != 0) {
            Some(w) => w * 64 + self.free[w].trailing_zeros() as usize,
            None => self.lru as usize,
        }
    }

    /// The first valid segment holding all of `[a, b)`.
    #[inline]
    pub(super) fn holding(&self, a: u64, b: u64) -> Option<usize> {
        // A segment holding a non-empty `[a, b)` has sector `a`: if it is no longer than a
        // bucket, it starts in `a`'s bucket or the one before.
        let bucket = a >> self.shift;
        let here = self.holders[(bucket & self.slot_mask) as usize];
        let before = self.holders[(bucket.wrapping_sub(1) & self.slot_mask) as usize];
        if a < b && self.wide == 0 && here | before == 0 {
            return None;
        }
        self.scan_holding(a, b)
    }

    /// `holding` by a scan over all segments. Branch-free for up to `MASK_SCAN_MAX` segments
    /// (each comparison is as likely true as false, so branches would mispredict).
    pub(super) fn scan_holding(&self, a: u64, b: u64) -> Option<usize> {
        if self.segs.len() > MASK_SCAN_MAX {
            return self.segs.iter().position(|s| s.valid & (s.start <= a) & (b <= s.end));
        }
        let mut mask = 0u64;
        for (i, s) in self.segs.iter().enumerate() {
            let holds = s.valid & (s.start <= a) & (b <= s.end);
            mask |= (holds as u64) << i;
        }
        (mask != 0).then(|| mask.trailing_zeros() as usize)
    }
}

#[cfg(test)]
impl Segments {
    /// Checks that the indexes agree with the segments they index.
    pub(super) fn check_indexes(&self) {
        let mut holders = vec![0u32; self.holders.len()];
        let mut wide = 0;
        for (i, s) in self.segs.iter().enumerate() {
            match self.counted(s) {
                Counted::No => assert!(!s.valid),
                Counted::Wide => wide += 1,
                Counted::Bucket(b) => holders[(b & self.slot_mask) as usize] += 1,
            }
            assert_eq!(self.free[i / 64] >> (i % 64) & 1 == 1, !s.valid, "free bit of {i}");
        }
        assert_eq!(holders, self.holders);
        assert_eq!(wide, self.wide);
        // The recency links form one list over all segments.
        let mut seen = vec![false; self.len()];
        let (mut at, mut newer) = (self.mru, NIL);
        while at != NIL {
            assert!(!std::mem::replace(&mut seen[at as usize], true), "segment {at} twice in the recency list");
            assert_eq!(self.links[at as usize].newer, newer);
            (newer, at) = (at, self.links[at as usize].older);
        }
        assert_eq!(newer, self.lru);
        assert!(seen.iter().all(|&x| x), "a segment missing from the recency list");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The segment table as it was before its indexes: a vector scanned on every question, with
    /// a use clock for recency.
    #[derive(Default)]
    struct PlainSegments {
        segs: Vec<(Segment, u64)>,
        clock: u64,
    }

    impl PlainSegments {
        fn touch(&mut self, i: usize) {
            self.clock += 1;
            self.segs[i].1 = self.clock;
        }

        /// The first valid segment holding `[a, b)`.
        fn holding(&self, a: u64, b: u64) -> Option<usize> {
            self.segs.iter().position(|(s, _)| s.valid && s.start <= a && b <= s.end)
        }

        /// The first invalid segment, else the least recently used (invalid ones count as used at
        /// time 0).
        fn victim(&self) -> usize {
            let (mut best, mut best_use) = (0, u64::MAX);
            for (i, (s, last_use)) in self.segs.iter().enumerate() {
                let used = if s.valid { *last_use } else { 0 };
                if used < best_use {
                    (best, best_use) = (i, used);
                }
            }
            best
        }
    }

    #[test]
    fn segment_indexes_agree_with_plain_scans() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        for (n, seg) in [(1, 64), (3, 561), (16, 2048), (16, 100), (64, 8), (70, 16), (130, 5)] {
            let mut fast = Segments::new(n, seg);
            let mut plain = PlainSegments { segs: vec![(Segment::default(), 0); n], clock: 0 };
            // A small address space, so that segments overlap and lookups often hit.
            let space = seg * (n as u64 + 4) * 2;
            let some = |rng: &mut rand_pcg::Pcg64| rng.gen_range(0..space);
            for step in 0..20_000 {
                let i = rng.gen_range(0..n);
                match rng.gen_range(0..10) {
                    // Mostly what the drive does: a miss fills the victim with at most a
                    // segment's sectors; but also longer ranges (counted as wide).
                    0..=3 => {
                        let i = if rng.gen_bool(0.8) { fast.victim() } else { i };
                        let start = some(&mut rng);
                        let len = if rng.gen_bool(0.9) { rng.gen_range(1..=seg) } else { rng.gen_range(1..=4 * seg) };
                        fast.fill(i, start, start + len);
                        plain.segs[i].0 = Segment { start, end: start + len, valid: true };
                        plain.touch(i);
                    }
                    // A read-ahead moving a segment's start forward (possibly past its end, as
                    // `slide` does while a read-ahead runs) or stopping it at some end.
                    4 | 5 => {
                        let s = fast.get(i);
                        let start = s.start + rng.gen_range(0..=2 * seg);
                        fast.set_start(i, start);
                        plain.segs[i].0.start = start;
                    }
                    6 | 7 => {
                        let s = fast.get(i);
                        let end = s.start + rng.gen_range(0..=seg + 2);
                        fast.set_end(i, end);
                        plain.segs[i].0.end = end;
                    }
                    8 => {
                        let a = some(&mut rng);
                        let b = a + rng.gen_range(1..=2 * seg);
                        fast.invalidate_overlapping(a, b);
                        for (s, _) in &mut plain.segs {
                            if s.valid && a < s.end && s.start < b {
                                s.valid = false;
                            }
                        }
                    }
                    _ => {
                        if fast.get(i).valid {
                            fast.touch(i);
                            plain.touch(i);
                        }
                    }
                }
                for (j, (s, _)) in plain.segs.iter().enumerate() {
                    assert_eq!(fast.get(j), *s, "segment {j}");
                }
                assert_eq!(fast.victim(), plain.victim(), "victim, {n} segments, step {step}");
                // Lookups at random places and at the edges of segments.
                for _ in 0..8 {
                    let (a, b) = if rng.gen_bool(0.5) {
                        let a = some(&mut rng);
                        (a, a + rng.gen_range(1..=seg + 1))
                    } else {
                        let s = fast.get(rng.gen_range(0..n));
                        let a = s.start + rng.gen_range(0..=seg) - rng.gen_range(0..=1).min(s.start);
                        let b = if rng.gen_bool(0.5) { s.end.max(a + 1) } else { a + rng.gen_range(1..=seg) };
                        (a, b)
                    };
                    assert_eq!(fast.holding(a, b), plain.holding(a, b), "holding [{a}, {b}), {n} segments, step {step}");
                }
                if step % 64 == 0 {
                    fast.check_indexes();
                }
            }
            fast.check_indexes();
        }
    }
}
