//! A timed run over time (`interval` in the stack configuration, `--interval` on `iostack run`).
//!
//! Intervals are spans of the run's virtual time (from the first request's trace time, as
//! `elapsed_ns`): fixed widths of time (`1h`, `10s`), or, with `100000req`, from the issue of
//! request `k N` to the issue of request `(k + 1) N` (requests counted in issue order). Whatever
//! happens at a time falls in the interval holding that time: block references and hits when a
//! request is issued, device requests and their service time when they are dispatched, response
//! times when requests complete (as `iostat` counts a request when it completes).
//!
//! The engine's running counters are cumulative, so the series keeps a snapshot of them at the
//! start of the current interval and reports the differences when the interval ends; only the
//! response-time histogram is per interval (cleared at its end, bucket by bucket, see
//! [`LogHistogram::take_summary`]). The engine calls [`SeriesCounter::at`] with each event's
//! time before handling it and [`SeriesCounter::issue`] before each request; a run without an
//! interval keeps no counter and pays one test per event. Intervals in which nothing was
//! issued, dispatched or completed are left out.

use serde::{Deserialize, Serialize};

use super::report::{LogHistogram, Percentiles};
use crate::engine::series::Interval;

/// The cumulative counters a series takes differences of.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Snapshot {
    pub requests: u64,
    pub completed: u64,
    pub accesses: u64,
    pub hits: u64,
    pub device_requests: u64,
    pub device_busy_ns: u64,
}

/// Per-interval figures while the run goes on.
#[derive(Debug)]
pub(crate) struct SeriesCounter {
    interval: Interval,
    /// The current interval: its index and the virtual time it started.
    index: u64,
    start_ns: u64,
    /// Time-width intervals: where the current one ends (`u64::MAX` for request counts).
    pub next_ns: u64,
    issued: u64,
    at_start: Snapshot,
    response: LogHistogram,
    touched: Vec<u32>,
    points: Vec<TimedSeriesPoint>,
}

impl SeriesCounter {
    pub fn new(interval: Interval) -> SeriesCounter {
        let next_ns = match interval {
            Interval::Time(w) => w,
            Interval::Requests(_) => u64::MAX,
        };
        SeriesCounter {
            interval,
            index: 0,
            start_ns: 0,
            next_ns,
            issued: 0,
            at_start: Snapshot::default(),
            response: LogHistogram::default(),
            touched: Vec::new(),
            points: Vec::new(),
        }
    }

    /// An event at `now` (time intervals): closes the current interval when `now` is past it.
    /// `now` is at least `next_ns` (the engine tests that first).
    pub fn at(&mut self, now: u64, counts: Snapshot) {
        if let Interval::Time(w) = self.interval {
            self.close(now.min(self.next_ns), counts);
            self.index = now / w;
            self.start_ns = self.index * w;
            self.next_ns = self.start_ns.saturating_add(w);
        }
    }

    /// A request is about to be issued at `now` (request-count intervals start at issues).
    #[inline]
    pub fn issue(&mut self, now: u64, counts: impl FnOnce() -> Snapshot) {
        if let Interval::Requests(n) = self.interval {
            if self.issued > 0 && self.issued % n == 0 {
                self.close(now, counts());
                self.index = self.issued / n;
                self.start_ns = now;
            }
        }
        self.issued += 1;
    }

    /// A request completed with response time `ns`.
    #[inline]
    pub fn response(&mut self, ns: u64) {
        self.response.record_touching(ns, &mut self.touched);
    }

    /// Ends the current interval at `end_ns` with the counters as they are now.
    fn close(&mut self, end_ns: u64, counts: Snapshot) {
        let a = self.at_start;
        self.at_start = counts;
        let response = self.response.take_summary(&mut self.touched);
        if counts == a && response.count == 0 {
            return;
        }
        let accesses = counts.accesses - a.accesses;
        let hits = counts.hits - a.hits;
        self.points.push(TimedSeriesPoint {
            start: match self.interval {
                Interval::Time(_) => self.start_ns,
                Interval::Requests(n) => self.index * n,
            },
            start_ns: self.start_ns,
            end_ns: end_ns.max(self.start_ns),
            requests: counts.requests - a.requests,
            completed: counts.completed - a.completed,
            accesses,
            hits,
            hit_ratio: (accesses > 0).then(|| hits as f64 / accesses as f64),
            miss_ratio: (accesses > 0).then(|| (accesses - hits) as f64 / accesses as f64),
            device_requests: counts.device_requests - a.device_requests,
            device_busy_ns: counts.device_busy_ns - a.device_busy_ns,
            response,
        });
    }

    /// The series, the last interval ending at `end_ns` (the run's last event).
    pub fn finish(mut self, end_ns: u64, counts: Snapshot) -> TimedSeries {
        let end = match self.interval {
            Interval::Time(_) => end_ns.min(self.next_ns),
            Interval::Requests(_) => end_ns,
        };
        self.close(end, counts);
        // An idle event after the run's end (a flusher wake-up) may have closed the last
        // interval at its boundary: it ends with the run.
        if let Some(last) = self.points.last_mut() {
            last.end_ns = last.end_ns.min(end_ns).max(last.start_ns);
        }
        TimedSeries { unit: self.interval.unit().to_string(), width: self.interval.width(), points: self.points }
    }
}

/// A timed run over time (`series` in the result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimedSeries {
    /// `ns` (intervals of virtual time) or `requests` (of issued requests).
    pub unit: String,
    /// Interval width in `unit`.
    pub width: u64,
    pub points: Vec<TimedSeriesPoint>,
}

/// One interval of a timed run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimedSeriesPoint {
    /// Start in `unit`: virtual time in ns, or the index of the interval's first request.
    pub start: u64,
    /// The interval's span of virtual time (the last one ends at the run's last event).
    pub start_ns: u64,
    pub end_ns: u64,
    /// Requests the processes issued, and requests that completed.
    pub requests: u64,
    pub completed: u64,
    /// Block references of the page cache and their hits; the ratios are `null` without any.
    pub accesses: u64,
    pub hits: u64,
    pub hit_ratio: Option<f64>,
    pub miss_ratio: Option<f64>,
    /// Device requests dispatched, and the sum of their service times (I/O time).
    pub device_requests: u64,
    pub device_busy_ns: u64,
    /// Response times of the requests that completed in the interval.
    pub response: Percentiles,
}

impl TimedSeries {
    /// The series as text lines for the run's table.
    pub fn table(&self) -> String {
        use std::fmt::Write;
        let mut s = String::new();
        let what = if self.unit == "ns" { format!("{} s", self.width as f64 / 1e9) } else { format!("{} requests", self.width) };
        let _ = writeln!(s, "series    per interval of {what}:");
        let _ = writeln!(s, "          {:>11}  {:>9}  {:>9}  {:>9}  {:>9}  {:>12}  {:>10}  {:>10}", "start (s)", "requests", "completed", "hit ratio", "dev. req", "I/O time (s)", "resp p50", "resp p99");
        let ms = |ns: u64| format!("{:.3}ms", ns as f64 / 1e6);
        for p in &self.points {
            let _ = writeln!(s, "          {:>11.3}  {:>9}  {:>9}  {:>9}  {:>9}  {:>12.3}  {:>10}  {:>10}", p.start_ns as f64 / 1e9, p.requests, p.completed,
                p.hit_ratio.map_or("-".to_string(), |h| format!("{h:.4}")), p.device_requests, p.device_busy_ns as f64 / 1e9,
                ms(p.response.p50_ns), ms(p.response.p99_ns));
        }
        s
    }
}
