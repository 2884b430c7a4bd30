//! Trace characterisation beyond locality: popularity and its Zipf fit, one-hit wonders,
//! inter-arrival and reuse times, activity and footprint over time, and a per-process
//! breakdown. These are the statistics libCacheSim's `traceAnalyzer` reports (popularity,
//! request rate, sizes, reuse) gathered in the same single pass as the locality metrics.
//!
//! - **Popularity** counts references per unit (block, object or file, the analysis's
//!   granularity), sorts the counts into a rank-frequency curve and fits Zipf's law,
//!   `count(rank) ~ rank^-alpha`, by least squares on `log10 count` against `log10 rank`. The
//!   fit uses ranks spaced evenly in `log10 rank` (20 per decade, each distinct rank once), so
//!   that every decade weighs the same: fitted on every rank, the long tail of a real trace
//!   (thousands of units at counts 1 and 2) would decide alpha alone. `r2` says how well a
//!   straight line fits; a trace whose popularity is not Zipf-like shows it there.
//! - **One-hit wonders** are units referenced exactly once; their ratio is over distinct units
//!   (libCacheSim's definition).
//! - **Reuse time** is the time (ns) between two references to the same unit; **inter-arrival**
//!   the time between consecutive requests. Both are log2 histograms with mean and median.
//! - **Over time**: the trace is cut into intervals whose width doubles as the trace goes on, so
//!   that there are at most [`MAX_INTERVALS`] whatever its length: once by time, once by request
//!   count (traces without timestamps still get a timeline). Each interval holds requests, reads,
//!   writes, bytes, units seen for the first time (the footprint's growth) and a log2 histogram
//!   of the requests' LRU stack distances (the largest over a request's units): the data of a
//!   reuse-distance heatmap. The last interval is usually partial: its `span` says how much of it
//!   the trace covers, and rates use the span, not the width. Time intervals are at least four
//!   mean inter-arrival times wide, so that a sparse trace's rate does not alternate between 0
//!   and the peak.
//! - **Processes**: requests, reads, writes, bytes and the sequential fraction of each pid (the
//!   first [`MAX_PROCESSES`] pids seen; later ones are summed in one row with `pid: null`).

use serde::{Deserialize, Serialize};

use super::affinity::{log2_bucket, log2_buckets, Bucket, DistanceDistribution};
use super::probe::Granularity;
use crate::cache::{block_key, KeyMap};
use crate::trace::{Op, Request};

/// Intervals kept per timeline; more and their width doubles.
pub const MAX_INTERVALS: usize = 128;
/// Processes reported one by one.
pub const MAX_PROCESSES: usize = 4096;
/// Rank-frequency points per decade of rank (in the report and in the fit).
const RANKS_PER_DECADE: f64 = 20.0;

/// Popularity of units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Popularity {
    /// Fitted Zipf exponent (`count ~ rank^-alpha`); `null` with fewer than 3 distinct ranks.
    pub zipf_alpha: Option<f64>,
    /// Coefficient of determination of the fit in log-log space.
    pub zipf_r2: Option<f64>,
    /// Rank-frequency points the fit used.
    pub fit_points: u64,
    pub distinct_units: u64,
    /// Units referenced once.
    pub one_hit_wonders: u64,
    /// One-hit wonders over distinct units.
    pub one_hit_wonder_ratio: Option<f64>,
    /// References of the most popular unit.
    pub max_count: u64,
    /// The rank-frequency curve at ranks spaced evenly in log10 (20 per decade, and the last).
    pub rank_frequency: Vec<RankCount>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankCount {
    /// 1 = most popular.
    pub rank: u64,
    pub count: u64,
}

/// A distribution of times in ns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimeDistribution {
    pub count: u64,
    pub mean_ns: Option<f64>,
    pub median_ns: Option<f64>,
    /// Log2 buckets, in ns.
    pub histogram: Vec<Bucket>,
}

/// One interval of a timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelinePoint {
    /// Start, in the timeline's unit (ns from the first request, or request index).
    pub start: u64,
    /// How much of the interval the trace covers (the width, except for the last interval).
    pub span: u64,
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Units referenced for the first time in this interval.
    pub new_units: u64,
    /// Distinct units referenced so far (the footprint at the end of the interval).
    pub footprint_units: u64,
    /// Requests per second over the span (time timelines with a span > 0 only).
    pub request_rate: Option<f64>,
    /// Bytes per second over the span.
    pub byte_rate: Option<f64>,
    /// Log2 buckets (`lo` of each) of the requests' LRU stack distance; first references
    /// apart.
    pub stack_distance_histogram: Vec<Bucket>,
    pub first_references: u64,
}

/// Activity over the trace, in intervals of one width.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timeline {
    /// `ns` or `requests`.
    pub unit: String,
    pub width: u64,
    pub points: Vec<TimelinePoint>,
}

/// What one process did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProcessRow {
    /// `null`: every process after the first [`MAX_PROCESSES`].
    pub pid: Option<u32>,
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Requests that start where the process's previous request on the same device ended.
    pub sequential_fraction: Option<f64>,
    pub first_time_ns: u64,
    pub last_time_ns: u64,
}

/// Everything this module reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Characterisation {
    pub popularity: Popularity,
    pub inter_arrival: TimeDistribution,
    pub reuse_time: TimeDistribution,
    pub over_time: Timeline,
    pub over_requests: Timeline,
    pub processes: Vec<ProcessRow>,
}

/// Requests, reads and writes, by count and bytes.
#[derive(Clone, Copy, Default)]
struct Mix {
    requests: u64,
    reads: u64,
    writes: u64,
    read_bytes: u64,
    write_bytes: u64,
}

impl Mix {
    fn add(&mut self, r: &Request) {
        self.requests += 1;
        match r.op {
            Op::Read => {
                self.reads += 1;
                self.read_bytes += r.length;
            }
            Op::Write => {
                self.writes += 1;
                self.write_bytes += r.length;
            }
        }
    }

    fn merge(&mut self, o: &Mix) {
        self.requests += o.requests;
        self.reads += o.reads;
        self.writes += o.writes;
        self.read_bytes += o.read_bytes;
        self.write_bytes += o.write_bytes;
    }
}

#[derive(Clone)]
struct Interval {
    mix: Mix,
    new_units: u64,
    first: u64,
    sd: [u64; 65],
}

impl Default for Interval {
    fn default() -> Self {
        Interval { mix: Mix::default(), new_units: 0, first: 0, sd: [0; 65] }
    }
}

impl Interval {
    fn merge(&mut self, o: &Interval) {
        self.mix.merge(&o.mix);
        self.new_units += o.new_units;
        self.first += o.first;
        for (a, b) in self.sd.iter_mut().zip(o.sd.iter()) {
            *a += b;
        }
    }
}

/// Intervals whose width doubles (pairs merge) whenever a position falls past the last one.
struct DoublingBins {
    width: u64,
    bins: Vec<Interval>,
}

impl DoublingBins {
    fn new(width: u64) -> Self {
        DoublingBins { width, bins: Vec::new() }
    }

    fn double(&mut self) {
        let old = std::mem::take(&mut self.bins);
        for pair in old.chunks(2) {
            let mut m = pair[0].clone();
            if let Some(b) = pair.get(1) {
                m.merge(b);
            }
            self.bins.push(m);
        }
        self.width *= 2;
    }

    /// These intervals, doubled until they are at least `min_width` wide (or one is left).
    fn coarsened(&self, min_width: u64) -> DoublingBins {
        let mut b = DoublingBins { width: self.width, bins: self.bins.clone() };
        while b.width < min_width && b.bins.len() > 1 {
            b.double();
        }
        b
    }

    fn at(&mut self, pos: u64) -> &mut Interval {
        while pos / self.width >= MAX_INTERVALS as u64 {
            self.double();
        }
        let i = (pos / self.width) as usize;
        if self.bins.len() <= i {
            self.bins.resize(i + 1, Interval::default());
        }
        &mut self.bins[i]
    }

    fn report(&self, unit: &str, end: u64, per_second: bool) -> Timeline {
        let mut footprint = 0;
        let points = self
            .bins
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let start = i as u64 * self.width;
                let span = if i + 1 == self.bins.len() { end.saturating_sub(start).min(self.width) } else { self.width };
                footprint += b.new_units;
                let secs = span as f64 / 1e9;
                let rate = |x: u64| (per_second && span > 0).then(|| x as f64 / secs);
                let m = &b.mix;
                TimelinePoint {
                    start,
                    span,
                    requests: m.requests,
                    reads: m.reads,
                    writes: m.writes,
                    read_bytes: m.read_bytes,
                    write_bytes: m.write_bytes,
                    new_units: b.new_units,
                    footprint_units: footprint,
                    request_rate: rate(m.requests),
                    byte_rate: rate(m.read_bytes + m.write_bytes),
                    stack_distance_histogram: log2_buckets(&b.sd),
                    first_references: b.first,
                }
            })
            .collect();
        Timeline { unit: unit.to_string(), width: self.width, points }
    }
}

#[derive(Default)]
struct Process {
    mix: Mix,
    sequential: u64,
    prev_end: Option<(u32, u64)>,
    first_time: u64,
    last_time: u64,
}

impl Process {
    fn add(&mut self, r: &Request) {
        if self.mix.requests == 0 {
            self.first_time = r.time_ns;
        }
        self.mix.add(r);
        if self.prev_end == Some((r.device, r.offset)) {
            self.sequential += 1;
        }
        self.prev_end = Some((r.device, r.offset + r.length));
        self.first_time = self.first_time.min(r.time_ns);
        self.last_time = self.last_time.max(r.time_ns);
    }

    fn row(&self, pid: Option<u32>) -> ProcessRow {
        let m = &self.mix;
        ProcessRow {
            pid,
            requests: m.requests,
            reads: m.reads,
            writes: m.writes,
            read_bytes: m.read_bytes,
            write_bytes: m.write_bytes,
            sequential_fraction: (m.requests > 0).then(|| self.sequential as f64 / m.requests as f64),
            first_time_ns: self.first_time,
            last_time_ns: self.last_time,
        }
    }
}

/// Per unit: references, and the time of the last one.
#[derive(Clone, Copy)]
struct UnitStats {
    count: u32,
    last_time: u64,
}

/// Accumulates a [`Characterisation`] request by request.
pub struct Characteriser {
    granularity: Granularity,
    units: KeyMap<UnitStats>,
    reuse_time: DistanceDistribution,
    inter_arrival: DistanceDistribution,
    first_time: Option<u64>,
    prev_time: Option<u64>,
    last_time: u64,
    requests: u64,
    by_time: DoublingBins,
    by_request: DoublingBins,
    processes: KeyMap<Process>,
    other_processes: Process,
}

impl Characteriser {
    pub fn new(granularity: Granularity) -> Self {
        Characteriser {
            granularity,
            units: KeyMap::default(),
            reuse_time: DistanceDistribution::new(1 << 16),
            inter_arrival: DistanceDistribution::new(1 << 16),
            first_time: None,
            prev_time: None,
            last_time: 0,
            requests: 0,
            // 1 ms and 1 request to start with; both double as needed.
            by_time: DoublingBins::new(1_000_000),
            by_request: DoublingBins::new(1),
            processes: KeyMap::default(),
            other_processes: Process::default(),
        }
    }

    /// One request, with the largest LRU stack distance of its units (`None`: some unit was
    /// referenced for the first time) as the locality probe measured it. Requests without a file
    /// at file granularity count everywhere but in popularity and reuse.
    pub fn feed(&mut self, r: &Request, max_stack_distance: Option<u64>) {
        let t0 = *self.first_time.get_or_insert(r.time_ns);
        if let Some(p) = self.prev_time {
            self.inter_arrival.record_value(r.time_ns.saturating_sub(p));
        }
        self.prev_time = Some(r.time_ns);
        self.last_time = self.last_time.max(r.time_ns);
        let mut new_units = 0;
        let mut touch = |key: u64| {
            let e = self.units.entry(key).or_insert(UnitStats { count: 0, last_time: r.time_ns });
            if e.count == 0 {
                new_units += 1;
            } else {
                self.reuse_time.record_value(r.time_ns.saturating_sub(e.last_time));
            }
            e.count = e.count.saturating_add(1);
            e.last_time = r.time_ns;
        };
        match self.granularity {
            Granularity::Bytes(unit) => {
                let (first, end) = r.block_range(unit.max(1));
                for b in first..end {
                    touch(block_key(r.device, b));
                }
            }
            Granularity::Object => touch(r.offset),
            Granularity::File => {
                if let Some(f) = r.file {
                    touch(f.id);
                }
            }
        }
        let index = self.requests;
        self.requests += 1;
        for bin in [self.by_time.at(r.time_ns.saturating_sub(t0)), self.by_request.at(index)] {
            bin.mix.add(r);
            bin.new_units += new_units;
            match max_stack_distance {
                Some(d) => bin.sd[log2_bucket(d)] += 1,
                None => bin.first += 1,
            }
        }
        let n = self.processes.len();
        match self.processes.get_mut(&(r.pid as u64)) {
            Some(p) => p.add(r),
            None if n < MAX_PROCESSES => self.processes.entry(r.pid as u64).or_default().add(r),
            None => self.other_processes.add(r),
        }
    }

    pub fn report(&self) -> Characterisation {
        let mut counts: Vec<u64> = self.units.values().map(|u| u.count as u64).collect();
        counts.sort_unstable_by(|a, b| b.cmp(a));
        let mut processes: Vec<ProcessRow> = {
            let mut pids: Vec<&u64> = self.processes.keys().collect();
            pids.sort_unstable();
            pids.into_iter().map(|&pid| self.processes[&pid].row(Some(pid as u32))).collect()
        };
        if self.other_processes.mix.requests > 0 {
            processes.push(self.other_processes.row(None));
        }
        // The trace is taken to end one mean inter-arrival time after its last request, the time
        // that request stands for; ending at the last request would cut the last interval short
        // by that much and inflate its rates.
        let duration = self.last_time.saturating_sub(self.first_time.unwrap_or(0));
        let tail = self.inter_arrival.mean(None).map_or(1, |m| (m.round() as u64).max(1));
        Characterisation {
            popularity: popularity(&counts),
            inter_arrival: times(&self.inter_arrival),
            reuse_time: times(&self.reuse_time),
            // Intervals shorter than a few inter-arrival times would alternate between empty
            // and full, and their rates between 0 and twice the true rate.
            over_time: self.by_time.coarsened(tail.saturating_mul(4)).report("ns", duration.saturating_add(tail), true),
            over_requests: self.by_request.report("requests", self.requests, false),
            processes,
        }
    }
}

fn times(d: &DistanceDistribution) -> TimeDistribution {
    TimeDistribution { count: d.count(), mean_ns: d.mean(None), median_ns: d.median(None), histogram: log2_buckets(d.log2_counts()) }
}

/// The ranks (1-based) at which the curve is sampled: 20 per decade, each once, and the last.
fn sample_ranks(n: u64) -> Vec<u64> {
    let mut ranks = Vec::new();
    let mut k = 0.0f64;
    loop {
        let r = 10f64.powf(k / RANKS_PER_DECADE).round() as u64;
        if r > n {
            break;
        }
        if ranks.last() != Some(&r) {
            ranks.push(r);
        }
        k += 1.0;
    }
    if n > 0 && ranks.last() != Some(&n) {
        ranks.push(n);
    }
    ranks
}

/// Popularity from the reference counts of all units, sorted in decreasing order.
pub fn popularity(counts: &[u64]) -> Popularity {
    let n = counts.len() as u64;
    let ones = counts.iter().rev().take_while(|&&c| c == 1).count() as u64;
    let rank_frequency: Vec<RankCount> = sample_ranks(n).into_iter().map(|rank| RankCount { rank, count: counts[rank as usize - 1] }).collect();
    let (alpha, r2) = zipf_fit(&rank_frequency);
    Popularity {
        zipf_alpha: alpha,
        zipf_r2: r2,
        fit_points: if alpha.is_some() { rank_frequency.len() as u64 } else { 0 },
        distinct_units: n,
        one_hit_wonders: ones,
        one_hit_wonder_ratio: (n > 0).then(|| ones as f64 / n as f64),
        max_count: counts.first().copied().unwrap_or(0),
        rank_frequency,
    }
}

/// Least-squares slope of `log10 count` on `log10 rank`, negated, and the fit's r².
fn zipf_fit(points: &[RankCount]) -> (Option<f64>, Option<f64>) {
    if points.len() < 3 {
        return (None, None);
    }
    let xy: Vec<(f64, f64)> = points.iter().map(|p| ((p.rank as f64).log10(), (p.count as f64).log10())).collect();
    let n = xy.len() as f64;
    let (mx, my) = (xy.iter().map(|p| p.0).sum::<f64>() / n, xy.iter().map(|p| p.1).sum::<f64>() / n);
    let sxx: f64 = xy.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = xy.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let syy: f64 = xy.iter().map(|p| (p.1 - my).powi(2)).sum();
    if sxx == 0.0 {
        return (None, None);
    }
    let slope = sxy / sxx;
    let r2 = if syy == 0.0 { 1.0 } else { (sxy * sxy) / (sxx * syy) };
    (Some(-slope), Some(r2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_zipf_counts_fit_their_alpha() {
        for alpha in [0.6, 0.8, 1.0, 1.2] {
            let counts: Vec<u64> = (1..=20_000u64).map(|r| (1e7 * (r as f64).powf(-alpha)).round() as u64).collect();
            let p = popularity(&counts);
            assert!((p.zipf_alpha.unwrap() - alpha).abs() < 0.01, "{alpha}: {:?}", p.zipf_alpha);
            assert!(p.zipf_r2.unwrap() > 0.999);
        }
    }

    #[test]
    fn one_hit_wonders_and_ranks() {
        let p = popularity(&[9, 4, 1, 1, 1]);
        assert_eq!((p.distinct_units, p.one_hit_wonders, p.max_count), (5, 3, 9));
        assert_eq!(p.one_hit_wonder_ratio, Some(0.6));
        assert_eq!(p.rank_frequency.first(), Some(&RankCount { rank: 1, count: 9 }));
        assert_eq!(p.rank_frequency.last(), Some(&RankCount { rank: 5, count: 1 }));
        assert!(popularity(&[]).zipf_alpha.is_none());
    }

    #[test]
    fn timelines_reuse_and_processes() {
        let mut c = Characteriser::new(Granularity::Bytes(4096));
        // 1003 requests, one per ms, to 10 blocks in turn; pids 1 and 2 alternate.
        for i in 0..1003u64 {
            let mut r = Request::read((i % 10) * 4096, 4096).at(i * 1_000_000);
            r.pid = 1 + (i % 2) as u32;
            if i % 4 == 0 {
                r.op = Op::Write;
            }
            c.feed(&r, if i < 10 { None } else { Some(9) });
        }
        let rep = c.report();
        assert_eq!(rep.popularity.distinct_units, 10);
        assert_eq!(rep.popularity.one_hit_wonders, 0);
        assert_eq!(rep.reuse_time.count, 993);
        assert!((rep.reuse_time.median_ns.unwrap() / 10_000_000.0 - 1.0).abs() < 0.01, "{:?}", rep.reuse_time);
        assert!((rep.inter_arrival.median_ns.unwrap() / 1_000_000.0 - 1.0).abs() < 0.01, "{:?}", rep.inter_arrival);
        for t in [&rep.over_time, &rep.over_requests] {
            assert!(t.points.len() <= MAX_INTERVALS);
            assert_eq!(t.points.iter().map(|p| p.requests).sum::<u64>(), 1003);
            assert_eq!(t.points.last().unwrap().footprint_units, 10);
            assert_eq!(t.points.iter().map(|p| p.first_references).sum::<u64>(), 10);
        }
        // One request per ms is 1000 requests per second in every interval, the partial last
        // one included.
        let pts = &rep.over_time.points;
        assert!(pts.iter().all(|p| (p.request_rate.unwrap() - 1000.0).abs() < 1e-6), "{pts:?}");
        assert!(pts.last().unwrap().span < rep.over_time.width);
        assert_eq!(rep.processes.len(), 2);
        assert_eq!((rep.processes[0].pid, rep.processes[0].requests, rep.processes[0].writes), (Some(1), 502, 251));
    }
}
