//! Stack and block affinity, and the distribution of a distance.
//!
//! Fox, Lojpur and Wang (Section 3, equations 1 and 2) turn a distance `d` (stack distance for
//! temporal locality, block distance for spatial locality) into an affinity
//!
//! ```text
//! affinity = 1 / log10(10 + d)
//! ```
//!
//! which is 1 (100 %) at distance 0 and falls toward 0 by orders of magnitude of the distance, so
//! that large distances (first references, big disks) all push toward the same floor. A stream's
//! affinity is the mean over its references (the paper's block-affinity examples in Section 3 are
//! means: references 1, 2, 3, 4, 5, 1001, ..., 1005 give about 90 %, and 1, 50, 100, ..., 450
//! about 61 %); Section 5 reports medians too, because a median is robust to a few distant
//! references. Both are kept here.
//!
//! [`DistanceDistribution`] accumulates one distance per reference: the sum of affinities (for an
//! exact mean), counts of exact values for small distances (every value for stack distances,
//! which the miss-ratio curve needs) and log-linear buckets above (relative width 1/128) for the
//! median, and a log2 histogram for display. First references have no distance; they are counted
//! apart and priced at report time with the Max chosen by [`FirstReference`], because the
//! default Max (the number of distinct keys) is only known at the end of the stream.

use serde::{Deserialize, Serialize};

use super::stack_distance::FirstReference;

/// Affinity of one distance: `1 / log10(10 + d)` (Section 3, equations 1 and 2).
#[inline]
pub fn affinity(distance: u64) -> f64 {
    if distance == super::stack_distance::INFINITE_DISTANCE {
        return 0.0; // the limit of 1/log10(10 + d)
    }
    1.0 / (10.0 + distance as f64).log10()
}

/// Affinities of small distances, computed once (most distances of real streams are small).
struct AffinityTable([f64; TABLE]);
const TABLE: usize = 1024;
/// Distances below this are read from a table by [`affinity_fast`].
pub const AFFINITY_TABLE_LEN: usize = TABLE;

static AFFINITY_TABLE: std::sync::LazyLock<AffinityTable> = std::sync::LazyLock::new(|| {
    let mut t = [0.0; TABLE];
    for (d, v) in t.iter_mut().enumerate() {
        *v = affinity(d as u64);
    }
    AffinityTable(t)
});

/// [`affinity`] through a table for small distances.
#[inline]
pub fn affinity_fast(distance: u64) -> f64 {
    if (distance as usize) < TABLE {
        AFFINITY_TABLE.0[distance as usize]
    } else {
        affinity(distance)
    }
}

/// Hints the CPU to fetch the cache line of `value`.
#[inline(always)]
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, and `value` is a valid reference.
    unsafe {
        core::arch::x86_64::_mm_prefetch(value as *const T as *const i8, core::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// Index of the log2 bucket of `d`: bucket 0 holds 0, bucket k >= 1 holds `[2^(k-1), 2^k)`.
#[inline]
pub fn log2_bucket(d: u64) -> usize {
    (64 - d.leading_zeros()) as usize
}

/// Lower and upper (exclusive) bound of log2 bucket `k`.
pub fn log2_bucket_bounds(k: usize) -> (u64, u64) {
    match k {
        0 => (0, 1),
        64 => (1 << 63, u64::MAX),
        _ => (1u64 << (k - 1), 1u64 << k),
    }
}

/// One bucket of a log2 histogram: values in `[lo, hi)`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Bucket {
    pub lo: u64,
    pub hi: u64,
    pub count: u64,
}

/// Non-empty buckets of a 65-bucket log2 histogram.
pub fn log2_buckets(counts: &[u64; 65]) -> Vec<Bucket> {
    counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(k, &c)| {
            let (lo, hi) = log2_bucket_bounds(k);
            Bucket { lo, hi, count: c }
        })
        .collect()
}

/// Mean and median affinity of a stream; both absent (JSON `null`) when there was no reference
/// to measure, never 0 or NaN.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Affinity {
    pub mean: Option<f64>,
    pub median: Option<f64>,
}

/// Log-linear buckets: exact below 2^SUB_BITS, then 2^SUB_BITS buckets per power of two.
const SUB_BITS: u32 = 7;

#[inline]
fn fine_index(d: u64) -> usize {
    if d < (1 << SUB_BITS) {
        return d as usize;
    }
    let msb = 63 - d.leading_zeros(); // >= SUB_BITS
    let shift = msb - SUB_BITS;
    let sub = (d >> shift) as usize & ((1 << SUB_BITS) - 1);
    (((msb - SUB_BITS + 1) as usize) << SUB_BITS) + sub
}

/// Smallest value of fine bucket `i`.
fn fine_lower(i: usize) -> u64 {
    if i < (1 << SUB_BITS) {
        return i as u64;
    }
    let octave = (i >> SUB_BITS) as u32 - 1; // msb - SUB_BITS
    let sub = (i & ((1 << SUB_BITS) - 1)) as u64;
    ((1u64 << SUB_BITS) | sub) << octave
}

/// Distribution of one distance over a reference stream.
#[derive(Debug, Clone)]
pub struct DistanceDistribution {
    /// Exact counts of distances `0..exact.len()`; grows on demand up to `exact_limit`.
    exact: Vec<u64>,
    exact_limit: usize,
    /// Log-linear buckets of distances at or above `exact_limit`.
    fine: Vec<u64>,
    log2: [u64; 65],
    /// References with a distance.
    count: u64,
    /// First references (no distance).
    first: u64,
    affinity_sum: f64,
    distance_sum: f64,
    /// Exact counts recorded by [`DistanceDistribution::record_deferred`] and not yet added.
    deferred: Vec<u32>,
}

impl DistanceDistribution {
    /// `exact_limit`: distances below it are counted one value at a time (use `usize::MAX` for
    /// stack distances, which are bounded by the number of distinct keys).
    pub fn new(exact_limit: usize) -> Self {
        DistanceDistribution { exact: Vec::new(), exact_limit, fine: Vec::new(), log2: [0; 65], count: 0, first: 0, affinity_sum: 0.0, distance_sum: 0.0, deferred: Vec::new() }
    }

    /// Records a reference at distance `d`.
    #[inline]
    pub fn record(&mut self, d: u64) {
        self.record_with_affinity(d, affinity_fast(d));
    }

    /// Records a value whose affinity means nothing (reuse distances, request sizes): the
    /// distribution's affinity is then not meaningful.
    #[inline]
    pub fn record_value(&mut self, d: u64) {
        self.record_with_affinity(d, 0.0);
    }

    /// Records a reference at distance `d` whose affinity the caller already computed.
    #[inline]
    pub fn record_with_affinity(&mut self, d: u64, affinity: f64) {
        self.count += 1;
        self.affinity_sum += affinity;
        self.distance_sum += d as f64;
        self.log2[log2_bucket(d)] += 1;
        let du = d as usize;
        if du < self.exact.len() {
            self.exact[du] += 1;
        } else if (d as u128) < self.exact_limit as u128 {
            self.grow_exact(du);
            self.exact[du] += 1;
        } else {
            let i = fine_index(d);
            if i >= self.fine.len() {
                self.fine.resize(i + 1, 0);
            }
            self.fine[i] += 1;
        }
    }

    /// [`DistanceDistribution::record_with_affinity`], except that the exact count, when it
    /// falls in the part already allocated, is only noted, to be added by
    /// [`DistanceDistribution::apply_deferred`] (which must run before the distribution is
    /// read or merged). Adding a batch of counts at once lets their cache misses overlap: the
    /// exact counts of stack distances span the whole footprint, megabytes on large traces.
    #[inline]
    pub fn record_deferred(&mut self, d: u64, affinity: f64) {
        if d < self.exact.len() as u64 && d <= u32::MAX as u64 {
            self.count += 1;
            self.affinity_sum += affinity;
            self.distance_sum += d as f64;
            self.log2[log2_bucket(d)] += 1;
            self.deferred.push(d as u32);
        } else {
            self.record_with_affinity(d, affinity);
        }
    }

    /// Adds the exact counts [`DistanceDistribution::record_deferred`] noted.
    pub fn apply_deferred(&mut self) {
        const AHEAD: usize = 16;
        let exact = &mut self.exact[..];
        for (i, &d) in self.deferred.iter().enumerate() {
            if let Some(&next) = self.deferred.get(i + AHEAD) {
                prefetch(&exact[next as usize]);
            }
            exact[d as usize] += 1;
        }
        self.deferred.clear();
    }

    #[cold]
    fn grow_exact(&mut self, d: usize) {
        let n = (d + 1).max(self.exact.len() * 2).max(64).min(self.exact_limit);
        self.exact.resize(n, 0);
    }

    /// Records a first reference.
    #[inline]
    pub fn record_first(&mut self) {
        self.first += 1;
    }

    /// Adds another distribution with the same `exact_limit`.
    pub fn merge(&mut self, o: &DistanceDistribution) {
        if self.exact.len() < o.exact.len() {
            self.exact.resize(o.exact.len(), 0);
        }
        for (a, b) in self.exact.iter_mut().zip(&o.exact) {
            *a += b;
        }
        if self.fine.len() < o.fine.len() {
            self.fine.resize(o.fine.len(), 0);
        }
        for (a, b) in self.fine.iter_mut().zip(&o.fine) {
            *a += b;
        }
        for (a, b) in self.log2.iter_mut().zip(&o.log2) {
            *a += b;
        }
        self.count += o.count;
        self.first += o.first;
        self.affinity_sum += o.affinity_sum;
        self.distance_sum += o.distance_sum;
    }

    /// References with a distance.
    pub fn count(&self) -> u64 {
        self.count
    }
    /// First references.
    pub fn first(&self) -> u64 {
        self.first
    }
    /// Exact counts of small distances (index = distance).
    pub fn exact_counts(&self) -> &[u64] {
        &self.exact
    }
    /// Counts of distances at or above the exact limit.
    pub fn beyond_exact(&self) -> u64 {
        self.fine.iter().sum()
    }
    /// The 65 log2 buckets (first references not included).
    pub fn log2_counts(&self) -> &[u64; 65] {
        &self.log2
    }
    pub fn affinity_sum(&self) -> f64 {
        self.affinity_sum
    }

    /// The `rank`-th smallest distance (0-based) among recorded distances; values in the
    /// log-linear range are reported as their bucket's lower bound (within 1/128 of the truth).
    fn value_at_rank(&self, rank: u64) -> u64 {
        let mut seen = 0u64;
        for (d, &c) in self.exact.iter().enumerate() {
            seen += c;
            if seen > rank {
                return d as u64;
            }
        }
        for (i, &c) in self.fine.iter().enumerate() {
            seen += c;
            if seen > rank {
                return fine_lower(i).max(self.exact_limit as u64);
            }
        }
        u64::MAX
    }

    /// Median distance, with first references counted at `first_max` (or left out when `None`).
    /// For an even count, the mean of the two middle values. `None` when nothing was counted.
    pub fn median(&self, first_max: Option<u64>) -> Option<f64> {
        let firsts = if first_max.is_some() { self.first } else { 0 };
        let n = self.count + firsts;
        if n == 0 {
            return None;
        }
        let at = |r: u64| -> f64 {
            if r < self.count {
                self.value_at_rank(r) as f64
            } else {
                // First references sort after every distance: Max is at least the number of
                // distinct keys, above any stack depth.
                first_max.unwrap_or(0) as f64
            }
        };
        Some(if n % 2 == 1 { at(n / 2) } else { (at(n / 2 - 1) + at(n / 2)) / 2.0 })
    }

    /// Mean distance (first references at `first_max`, or left out).
    pub fn mean(&self, first_max: Option<u64>) -> Option<f64> {
        let (n, s) = match first_max {
            Some(m) => (self.count + self.first, self.distance_sum + self.first as f64 * m as f64),
            None => (self.count, self.distance_sum),
        };
        (n > 0).then(|| s / n as f64)
    }

    /// Mean and median affinity, first references priced at `first_max` (or left out).
    pub fn affinity(&self, first_max: Option<u64>) -> Affinity {
        let (n, s) = match first_max {
            Some(m) => (self.count + self.first, self.affinity_sum + self.first as f64 * affinity(m)),
            None => (self.count, self.affinity_sum),
        };
        if n == 0 {
            return Affinity::default();
        }
        let median = self.median_affinity(first_max);
        Affinity { mean: Some(s / n as f64), median }
    }

    /// Median of the per-reference affinities. Affinity falls as distance grows, so this is the
    /// affinity at the median rank; for an even count, the mean of the two middle affinities.
    fn median_affinity(&self, first_max: Option<u64>) -> Option<f64> {
        let firsts = if first_max.is_some() { self.first } else { 0 };
        let n = self.count + firsts;
        if n == 0 {
            return None;
        }
        let at = |r: u64| -> f64 {
            if r < self.count {
                affinity(self.value_at_rank(r))
            } else {
                affinity(first_max.unwrap_or(0))
            }
        };
        Some(if n % 2 == 1 { at(n / 2) } else { (at(n / 2 - 1) + at(n / 2)) / 2.0 })
    }

    /// Summary for reports.
    pub fn summary(&self, first: FirstReference, distinct: u64) -> DistanceSummary {
        let m = first.max_value(distinct);
        DistanceSummary {
            references: self.count,
            first_references: self.first,
            first_reference_max: m,
            mean: self.mean(m),
            median: self.median(m),
            histogram: log2_buckets(&self.log2),
        }
    }
}

/// A distance distribution as reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DistanceSummary {
    /// References with a distance (not first references).
    pub references: u64,
    pub first_references: u64,
    /// The Max first references counted as (`null` when they were left out).
    pub first_reference_max: Option<u64>,
    pub mean: Option<f64>,
    pub median: Option<f64>,
    /// Log2 buckets of the distances of non-first references.
    pub histogram: Vec<Bucket>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affinity_bounds() {
        assert_eq!(affinity(0), 1.0);
        assert!((affinity(90) - 0.5).abs() < 1e-12);
        for d in [0u64, 1, 5, 1023, 1024, 1 << 40] {
            assert_eq!(affinity_fast(d), affinity(d));
        }
    }

    #[test]
    fn fine_buckets_are_ordered_and_tight() {
        let mut last = 0;
        for d in (0..200_000u64).chain([u64::MAX / 3, u64::MAX]) {
            let i = fine_index(d);
            assert!(i >= last);
            last = i;
            let lo = fine_lower(i);
            assert!(lo <= d && (d - lo) as f64 <= d as f64 / 128.0, "{d} -> {lo}");
        }
    }

    #[test]
    fn empty_is_absent() {
        let d = DistanceDistribution::new(1 << 16);
        assert_eq!(d.affinity(Some(10)), Affinity { mean: None, median: None });
        assert_eq!(d.mean(None), None);
        assert_eq!(d.median(None), None);
        let s = serde_json::to_string(&d.affinity(None)).unwrap();
        assert_eq!(s, r#"{"mean":null,"median":null}"#);
    }

    #[test]
    fn median_even_odd_and_first_references() {
        let mut d = DistanceDistribution::new(4);
        for x in [5, 1, 3] {
            d.record(x);
        }
        assert_eq!(d.median(None), Some(3.0));
        d.record(1000);
        assert_eq!(d.median(None), Some(4.0));
        d.record_first();
        assert_eq!(d.median(Some(1 << 20)), Some(5.0));
        assert_eq!(d.median(None), Some(4.0));
        assert_eq!(d.mean(None), Some((5.0 + 1.0 + 3.0 + 1000.0) / 4.0));
    }
}
