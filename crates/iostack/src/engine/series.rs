//! Results over time: `--interval 1h` or `--interval 100000req` on `iostack sim` and `iostack
//! run` cut the request stream into fixed intervals, of trace time or of requests, and report
//! hit and miss ratios per interval (and, for a timed run, device requests, I/O time and response
//! percentiles: `engine::timed::series`).
//!
//! An [`IntervalClock`] assigns each request, in stream order, to its interval: request `i`
//! (counting from 0) to `i / N` with `Nreq`, or the request stamped `t` to `(t - t0) / W` with a
//! duration `W`, `t0` being the first request's time. Trace time that goes backwards counts as no
//! time passing (as everywhere in iostack), so intervals never go back. Intervals in which
//! nothing happened are left out of the report rather than listed empty: a trace with a long
//! quiet gap and a short width would otherwise fill memory with empty rows.
//!
//! The miss-ratio engine keeps per interval the same counters as for the whole run
//! ([`SimCounts`]): a run with a series feeds each batch in slices that end where an interval
//! ends, through the same code as without one, and adds each slice's counts to its interval. A
//! run without `--interval` does none of this.

use serde::{Deserialize, Serialize};

use crate::engine::sim::SimCounts;
use crate::error::ConfigError;
use crate::metrics::series::IntervalSpec;

/// A fixed interval width: trace time, or a number of requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interval {
    /// This many nanoseconds.
    Time(u64),
    /// This many requests.
    Requests(u64),
}

impl Interval {
    /// Parses a duration with its unit (`1h`, `10s`, `500ms`; see [`crate::units::parse_duration`])
    /// or a request count (`100000req`).
    pub fn parse(option: &str, text: &str) -> Result<Interval, ConfigError> {
        match IntervalSpec::parse(option, text)? {
            IntervalSpec::Auto => Err(ConfigError::new(
                option,
                "give the interval's width: a duration (`1h`, `10s`) or a number of requests (`100000req`)",
            )),
            IntervalSpec::Time(w) => Ok(Interval::Time(w)),
            IntervalSpec::Requests(n) => Ok(Interval::Requests(n)),
        }
    }

    /// The unit of `start` and `width` in a report: `ns` or `requests`.
    pub fn unit(self) -> &'static str {
        match self {
            Interval::Time(_) => "ns",
            Interval::Requests(_) => "requests",
        }
    }

    pub fn width(self) -> u64 {
        match self {
            Interval::Time(w) | Interval::Requests(w) => w,
        }
    }
}

/// Assigns the requests of a stream, in order, to their intervals (see the module comment).
#[derive(Debug, Clone)]
pub struct IntervalClock {
    interval: Interval,
    origin: Option<u64>,
    /// The latest time seen, relative to the origin.
    last: u64,
    seen: u64,
}

impl IntervalClock {
    pub fn new(interval: Interval) -> IntervalClock {
        IntervalClock { interval, origin: None, last: 0, seen: 0 }
    }

    /// The interval of the next request of the stream, stamped `time_ns`.
    #[inline]
    pub fn next(&mut self, time_ns: u64) -> u64 {
        self.seen += 1;
        match self.interval {
            Interval::Requests(n) => (self.seen - 1) / n,
            Interval::Time(w) => {
                let o = *self.origin.get_or_insert(time_ns);
                self.last = self.last.max(time_ns.saturating_sub(o));
                self.last / w
            }
        }
    }

    /// Start of interval `i`: a trace time in ns (the first request's time plus `i` widths), or
    /// the index of its first request.
    pub fn start(&self, i: u64) -> u64 {
        match self.interval {
            Interval::Requests(n) => i * n,
            Interval::Time(w) => self.origin.unwrap_or(0) + i * w,
        }
    }
}

/// Per-interval counts of one miss-ratio run, kept while it is fed.
#[derive(Debug, Clone)]
pub struct SimSeriesCounter {
    pub(crate) clock: IntervalClock,
    points: Vec<(u64, SimCounts)>,
}

impl SimSeriesCounter {
    pub fn new(interval: Interval) -> SimSeriesCounter {
        SimSeriesCounter { clock: IntervalClock::new(interval), points: Vec::new() }
    }

    /// Adds `counts` to interval `i` (intervals come in order).
    pub(crate) fn add(&mut self, i: u64, counts: &SimCounts) {
        match self.points.last_mut() {
            Some((j, c)) if *j == i => c.add(counts),
            _ => self.points.push((i, counts.clone())),
        }
    }

    /// The series as reported; block figures only in block mode.
    pub fn report(&self, block: bool) -> SimSeries {
        let points = self
            .points
            .iter()
            .map(|(i, c)| SimSeriesPoint {
                start: self.clock.start(*i),
                requests: c.requests,
                hits: c.hits,
                hit_ratio: 1.0 - c.miss_ratio(),
                miss_ratio: c.miss_ratio(),
                byte_miss_ratio: c.byte_miss_ratio(),
                blocks: block.then_some(c.blocks),
                block_hits: block.then_some(c.block_hits),
                block_miss_ratio: block.then(|| c.block_miss_ratio()),
            })
            .collect();
        SimSeries { unit: self.clock.interval.unit().to_string(), width: self.clock.interval.width(), points }
    }
}

/// Hit and miss ratios over time of one miss-ratio run (`series` in `iostack sim --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimSeries {
    /// `ns` (intervals of trace time) or `requests`.
    pub unit: String,
    /// Interval width in `unit`.
    pub width: u64,
    /// The intervals with requests, in order.
    pub points: Vec<SimSeriesPoint>,
}

/// One interval of a miss-ratio run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SimSeriesPoint {
    /// Start of the interval: trace time in ns (unit `ns`), or index of its first request.
    pub start: u64,
    pub requests: u64,
    /// Requests that hit (every block of the request, in block mode).
    pub hits: u64,
    pub hit_ratio: f64,
    pub miss_ratio: f64,
    pub byte_miss_ratio: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_hits: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_miss_ratio: Option<f64>,
}

/// Where `--output FILE` puts the series table: beside `FILE`, with `.series` before the
/// extension (`results.csv` -> `results.series.csv`).
pub fn series_path(path: &std::path::Path) -> std::path::PathBuf {
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.series.{}", ext.to_string_lossy()),
        None => format!("{stem}.series"),
    };
    path.with_file_name(name)
}

/// The rows of a series table: one per interval, each the cells of `lead` (what names the run:
/// trace, policy, cache size, ...), then `unit` and `width`, then the interval's fields
/// flattened to dotted names (`start`, `hit_ratio`, `response.p99_ns`, ...).
pub fn series_rows<P: Serialize>(lead: &crate::table::Row, unit: &str, width: u64, points: &[P]) -> Vec<crate::table::Row> {
    points
        .iter()
        .map(|p| {
            let mut row = lead.clone();
            row.set("unit", unit);
            row.set("width", width);
            row.extend(crate::table::flatten(p, ""));
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn series_tables_sit_beside_the_output() {
        use std::path::Path;
        assert_eq!(series_path(Path::new("out/results.csv")), Path::new("out/results.series.csv"));
        assert_eq!(series_path(Path::new("r.parquet")), Path::new("r.series.parquet"));
    }

    #[test]
    fn parses_widths() {
        assert_eq!(Interval::parse("--interval", "1h").unwrap(), Interval::Time(3_600_000_000_000));
        assert_eq!(Interval::parse("--interval", "100000req").unwrap(), Interval::Requests(100_000));
        assert_eq!(Interval::parse("--interval", "250ms").unwrap(), Interval::Time(250_000_000));
        for bad in ["auto", "0req", "0s", "10", "1 fortnight", "-1s"] {
            let e = Interval::parse("--interval", bad).unwrap_err().to_string();
            assert!(e.contains("--interval"), "{bad}: {e}");
        }
    }

    #[test]
    fn clock_cuts_by_time_and_by_count() {
        let mut c = IntervalClock::new(Interval::Time(10));
        // Starting at 100; a time going back (103 after 112) stays in the latest interval.
        let got: Vec<u64> = [100, 105, 109, 110, 112, 103, 131].iter().map(|&t| c.next(t)).collect();
        assert_eq!(got, vec![0, 0, 0, 1, 1, 1, 3]);
        assert_eq!(c.start(3), 130);
        let mut c = IntervalClock::new(Interval::Requests(3));
        let got: Vec<u64> = (0..7).map(|_| c.next(0)).collect();
        assert_eq!(got, vec![0, 0, 0, 1, 1, 1, 2]);
        assert_eq!(c.start(2), 6);
    }

    /// Per-interval counts equal what runs over each interval's requests alone would count,
    /// given the cache state they start with: checked by feeding one run request by request
    /// and cutting its counts by hand, at batch sizes that do and do not align with intervals.
    #[test]
    fn sim_series_matches_counts_cut_by_hand() {
        use crate::engine::sim::{sweep, MemoryTrace, Mode, RunSpec, SimRun, SweepConfig};
        use crate::trace::Request;
        let reqs: Vec<Request> = (0..5000u64)
            .map(|i| {
                let key = (i * 7919 % 613) * (i % 5) % 400;
                Request::read(key * 4096, 4096 * (1 + i % 2)).at(1_000_000 + i * 3 + (i % 11) * 2)
            })
            .collect();
        let src = MemoryTrace::new(reqs.clone(), "mem");
        for mode in [Mode::Object { unit_size: true }, Mode::Block { page_size: 4096 }] {
            for interval in [Interval::Requests(333), Interval::Time(1000)] {
                let runs = vec![RunSpec { policy: "lru".into(), capacity: 50 }, RunSpec { policy: "arc".into(), capacity: 120 }];
                let mut cfg = SweepConfig::new(mode);
                cfg.interval = Some(interval);
                cfg.batch_size = 97;
                let got = sweep(&src, &runs, &cfg, 4096, &mut |_| {}).unwrap();
                cfg.interval = None;
                let plain = sweep(&src, &runs, &cfg, 4096, &mut |_| {}).unwrap();
                for ((g, p), spec) in got.iter().zip(&plain).zip(&runs) {
                    // The run itself is the same with or without a series.
                    assert_eq!((g.hits, g.requests, g.block_hits), (p.hits, p.requests, p.block_hits));
                    let series = g.series.as_ref().expect("a series");
                    assert_eq!(series.unit, interval.unit());
                    // By hand: one request at a time, counts cut at each interval's start.
                    let mut run = SimRun::new(&spec.policy, spec.capacity, mode).unwrap();
                    let mut clock = IntervalClock::new(interval);
                    let mut want: Vec<(u64, u64, u64)> = Vec::new();
                    for r in &reqs {
                        let i = clock.next(r.time_ns);
                        let before = run.counts.clone();
                        run.feed(r, u64::MAX);
                        let start = clock.start(i);
                        if want.last().map(|w| w.0) != Some(start) {
                            want.push((start, 0, 0));
                        }
                        let w = want.last_mut().unwrap();
                        w.1 += 1;
                        w.2 += run.counts.hits - before.hits;
                    }
                    let have: Vec<(u64, u64, u64)> = series.points.iter().map(|p| (p.start, p.requests, p.hits)).collect();
                    assert_eq!(have, want, "{mode:?} {interval:?} {}", spec.policy);
                    assert_eq!(series.points.iter().map(|p| p.hits).sum::<u64>(), g.hits);
                    assert!(series.points.iter().all(|p| (p.hit_ratio + p.miss_ratio - 1.0).abs() < 1e-12));
                    assert_eq!(series.points[0].block_miss_ratio.is_some(), matches!(mode, Mode::Block { .. }));
                }
            }
        }
    }
}
