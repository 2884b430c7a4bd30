//! Locality over time: affinities and working set per interval.
//!
//! Fox, Lojpur and Wang plot affinities over time (Section 6, Figures 6.1 and 6.2): "the affinity
//! values within each time interval are averaged". A [`Series`] cuts the stream into intervals,
//! of a fixed duration, of a fixed number of requests, or adaptively, and keeps per interval the
//! sums needed for the mean stack and block affinities, the number of first references, and the
//! working set (distinct keys referenced in the interval, Denning's W(t, T) with T the interval).
//!
//! Adaptive intervals: without a width from the user, intervals start one request wide and double
//! whenever there would be more than [`MAX_POINTS`] of them; pairs of neighbours are merged. Sums
//! merge by addition, but the working set of two merged intervals is not the sum of theirs (a key
//! in both counts once). So each interval keeps, for every doubling level `L`, how many of its
//! keys were not referenced earlier in the enclosing aligned block of `2^L` base intervals: a key
//! whose previous reference was in base interval `p` and is now referenced in base interval `i`
//! is new for every level `L <= msb(i xor p)` (the levels at which `p` and `i` fall in different
//! blocks). The working set of a merged interval at level `L` is then the sum of its parts' counts
//! at level `L`, exactly.

use serde::{Deserialize, Serialize};

use super::affinity::affinity;
use super::stack_distance::FirstReference;

/// Upper bound on the number of adaptive intervals kept while reading.
pub const MAX_POINTS: usize = 512;
/// Upper bound on the number of adaptive intervals reported (merged at report time, exactly).
pub const REPORT_POINTS: usize = 128;

/// How the stream is cut into intervals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", tag = "unit", content = "width")]
pub enum IntervalSpec {
    /// Request-count intervals whose width doubles to keep at most [`MAX_POINTS`] of them while
    /// reading and [`REPORT_POINTS`] in the report.
    #[default]
    Auto,
    /// Intervals of this many nanoseconds of trace time.
    Time(u64),
    /// Intervals of this many requests.
    Requests(u64),
}

impl IntervalSpec {
    /// Parses `auto`, a duration (`10s`, `3600s`, `500ms`) or a request count (`100000req`).
    pub fn parse(option: &str, text: &str) -> Result<IntervalSpec, crate::ConfigError> {
        let t = text.trim();
        if t == "auto" {
            return Ok(IntervalSpec::Auto);
        }
        let spec = if let Some(n) = t.strip_suffix("req").or_else(|| t.strip_suffix("requests")) {
            let n: u64 = n.trim().replace('_', "").parse().map_err(|_| crate::ConfigError::new(option, format!("`{text}` is not a request count such as 100000req")))?;
            IntervalSpec::Requests(n)
        } else {
            IntervalSpec::Time(crate::units::parse_duration_ns(option, t)?)
        };
        match spec {
            IntervalSpec::Requests(0) | IntervalSpec::Time(0) => Err(crate::ConfigError::new(option, "the interval must be longer than 0")),
            s => Ok(s),
        }
    }
}

#[derive(Debug, Clone)]
struct Acc {
    requests: u64,
    references: u64,
    stack_count: u64,
    stack_first: u64,
    stack_sum: f64,
    block_count: u64,
    block_sum: f64,
    /// New keys per level (see the module comment); a single entry with fixed widths.
    new_at_level: Vec<u64>,
}

impl Acc {
    fn new(levels: usize) -> Acc {
        Acc { requests: 0, references: 0, stack_count: 0, stack_first: 0, stack_sum: 0.0, block_count: 0, block_sum: 0.0, new_at_level: vec![0; levels] }
    }
    fn merge(&mut self, o: &Acc) {
        self.requests += o.requests;
        self.references += o.references;
        self.stack_count += o.stack_count;
        self.stack_first += o.stack_first;
        self.stack_sum += o.stack_sum;
        self.block_count += o.block_count;
        self.block_sum += o.block_sum;
        for (a, b) in self.new_at_level.iter_mut().zip(&o.new_at_level) {
            *a += b;
        }
    }
}

/// Per-interval locality accumulator.
#[derive(Debug, Clone)]
pub struct Series {
    spec: IntervalSpec,
    base_width: u64,
    level: u32,
    origin: Option<u64>,
    /// Position of the current request on the axis (ns from the first request, or its index).
    last_x: u64,
    requests_seen: u64,
    current_base: u64,
    current: usize,
    points: Vec<Acc>,
    levels: usize,
}

impl Series {
    pub fn new(spec: IntervalSpec) -> Series {
        let (base_width, levels) = match spec {
            IntervalSpec::Auto => (1, 64),
            IntervalSpec::Time(w) | IntervalSpec::Requests(w) => (w.max(1), 1),
        };
        Series { spec, base_width, level: 0, origin: None, last_x: 0, requests_seen: 0, current_base: 0, current: 0, points: Vec::new(), levels }
    }

    /// Starts a request at `time_ns`; returns the base interval index used for the working set.
    /// Trace time that goes backwards is taken as no time passing.
    #[inline(always)]
    pub fn begin_request(&mut self, time_ns: u64) -> u64 {
        // Adaptive intervals, inside the intervals already made: the common case, without a
        // call (this runs once a request per probe).
        if self.spec == IntervalSpec::Auto {
            let base = self.requests_seen;
            let idx = (base >> self.level) as usize;
            if idx < self.points.len() {
                self.requests_seen += 1;
                self.current = idx;
                self.current_base = base;
                self.points[idx].requests += 1;
                return base;
            }
        }
        self.begin_any_request(time_ns)
    }

    /// [`Series::begin_request`] in every case.
    #[inline(never)]
    fn begin_any_request(&mut self, time_ns: u64) -> u64 {
        let x = match self.spec {
            IntervalSpec::Time(_) => {
                let o = *self.origin.get_or_insert(time_ns);
                self.last_x = self.last_x.max(time_ns.saturating_sub(o));
                self.last_x
            }
            _ => self.requests_seen,
        };
        self.requests_seen += 1;
        // Adaptive intervals start one request wide: no 64-bit division, which costs tens of
        // cycles, once a request per probe.
        let base = if self.base_width == 1 { x } else { x / self.base_width };
        let mut idx = (base >> self.level) as usize;
        if self.spec == IntervalSpec::Auto {
            while idx >= MAX_POINTS {
                self.double();
                idx = (base >> self.level) as usize;
            }
        } else if idx >= self.points.len() && idx - self.points.len() > (1 << 24) {
            // A fixed width so small that the series would hold millions of empty intervals:
            // keep counting in the last one rather than exhausting memory.
            idx = self.points.len().max(1) - 1;
        }
        if idx >= self.points.len() {
            let levels = self.levels;
            self.points.resize_with(idx + 1, || Acc::new(levels));
        }
        self.current = idx;
        self.current_base = base;
        self.points[idx].requests += 1;
        base
    }

    fn double(&mut self) {
        let pts = std::mem::take(&mut self.points);
        let mut out: Vec<Acc> = Vec::with_capacity(pts.len() / 2 + 1);
        for pair in pts.chunks(2) {
            let mut a = pair[0].clone();
            if let Some(b) = pair.get(1) {
                a.merge(b);
            }
            out.push(a);
        }
        self.points = out;
        self.level += 1;
    }

    /// A reference of the current request, with its stack affinity (`None` for a first
    /// reference) and block affinity. `prev_base` is the base interval of the key's previous
    /// reference plus one (0 for a first reference); returns the value to store for the key.
    #[inline(always)]
    pub fn reference(&mut self, stack_affinity: Option<f64>, block_affinity: f64, prev_base: u64) -> u64 {
        let p = &mut self.points[self.current];
        p.references += 1;
        match stack_affinity {
            Some(a) => {
                p.stack_count += 1;
                p.stack_sum += a;
            }
            None => p.stack_first += 1,
        }
        p.block_count += 1;
        p.block_sum += block_affinity;
        let i = self.current_base;
        let lvl = self.level;
        let new_level = if prev_base == 0 { Some(63) } else {
            let prev = prev_base - 1;
            ((prev >> lvl) != (i >> lvl)).then(|| 63 - (prev ^ i).leading_zeros())
        };
        if let Some(top) = new_level {
            if self.levels == 1 {
                p.new_at_level[0] += 1;
            } else {
                p.new_at_level[top as usize] += 1;
            }
        }
        i + 1
    }

    /// The intervals as reported, first references priced with `first` and `distinct`.
    pub fn report(&self, first: FirstReference, distinct: u64) -> SeriesReport {
        if self.spec == IntervalSpec::Auto && self.points.len() > REPORT_POINTS {
            let mut merged = self.clone();
            while merged.points.len() > REPORT_POINTS {
                merged.double();
            }
            return merged.report(first, distinct);
        }
        let m = first.max_value(distinct);
        let width = self.base_width << self.level;
        let (unit, width_out) = match self.spec {
            IntervalSpec::Time(_) => ("ns", width),
            _ => ("requests", width),
        };
        let lvl = self.level as usize;
        let points = self
            .points
            .iter()
            .enumerate()
            .map(|(k, a)| {
                let (n, s) = match m {
                    Some(m) => (a.stack_count + a.stack_first, a.stack_sum + a.stack_first as f64 * affinity(m)),
                    None => (a.stack_count, a.stack_sum),
                };
                let ws = if self.levels == 1 { a.new_at_level[0] } else { a.new_at_level[lvl..].iter().sum() };
                SeriesPoint {
                    start: k as u64 * width + self.origin.unwrap_or(0) * (unit == "ns") as u64,
                    requests: a.requests,
                    references: a.references,
                    first_references: a.stack_first,
                    working_set: ws,
                    stack_affinity: (n > 0).then(|| s / n as f64),
                    block_affinity: (a.block_count > 0).then(|| a.block_sum / a.block_count as f64),
                }
            })
            .collect();
        SeriesReport { unit: unit.to_string(), width: width_out, points }
    }
}

/// One interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// Start of the interval: trace time in ns (unit `ns`) or request index (unit `requests`).
    pub start: u64,
    pub requests: u64,
    pub references: u64,
    pub first_references: u64,
    /// Distinct keys referenced in the interval.
    pub working_set: u64,
    /// Mean affinities in the interval; `null` when the interval has no reference.
    pub stack_affinity: Option<f64>,
    pub block_affinity: Option<f64>,
}

/// Intervals over the stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesReport {
    /// `ns` (trace time) or `requests`.
    pub unit: String,
    /// Interval width in `unit`.
    pub width: u64,
    pub points: Vec<SeriesPoint>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::KeyMap;

    /// Feeds keys one reference per request and returns the working sets.
    fn working_sets(spec: IntervalSpec, keys: &[u64]) -> Vec<u64> {
        let mut s = Series::new(spec);
        let mut last: KeyMap<u64> = KeyMap::default();
        for &k in keys {
            s.begin_request(0);
            let prev = last.get(&k).copied().unwrap_or(0);
            let v = s.reference(None, 1.0, prev);
            last.insert(k, v);
        }
        s.report(FirstReference::Exclude, 0).points.iter().map(|p| p.working_set).collect()
    }

    #[test]
    fn adaptive_working_set_is_exact_after_merges() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let keys: Vec<u64> = (0..5000).map(|_| rng.gen_range(0..400)).collect();
        let got = working_sets(IntervalSpec::Auto, &keys);
        assert!(got.len() <= REPORT_POINTS && got.len() > REPORT_POINTS / 4);
        let width = keys.len().div_ceil(got.len()).next_power_of_two();
        let want: Vec<u64> = keys.chunks(width).map(|c| c.iter().collect::<std::collections::HashSet<_>>().len() as u64).collect();
        assert_eq!(got, want);
        let fixed = working_sets(IntervalSpec::Requests(100), &keys);
        let want: Vec<u64> = keys.chunks(100).map(|c| c.iter().collect::<std::collections::HashSet<_>>().len() as u64).collect();
        assert_eq!(fixed, want);
    }

    #[test]
    fn time_intervals() {
        let mut s = Series::new(IntervalSpec::Time(5_000_000_000));
        // Trace clock starting at 100 s; one request per second, one going back in time.
        for (i, t) in [100u64, 101, 102, 103, 104, 105, 103, 107, 110, 111].into_iter().enumerate() {
            s.begin_request(t * 1_000_000_000);
            s.reference(Some(1.0), 0.5, if i % 2 == 0 { 0 } else { 1 });
        }
        let r = s.report(FirstReference::Exclude, 0);
        assert_eq!(r.unit, "ns");
        let starts: Vec<u64> = r.points.iter().map(|p| p.start / 1_000_000_000).collect();
        assert_eq!(starts, vec![100, 105, 110]);
        let counts: Vec<u64> = r.points.iter().map(|p| p.requests).collect();
        // The request stamped 103 after 105 counts as no time passing (still in [105, 110)).
        assert_eq!(counts, vec![5, 3, 2]);
        assert!(r.points.iter().all(|p| p.stack_affinity == Some(1.0) && p.block_affinity == Some(0.5)));
    }

    #[test]
    fn parse() {
        assert_eq!(IntervalSpec::parse("--interval", "auto").unwrap(), IntervalSpec::Auto);
        assert_eq!(IntervalSpec::parse("--interval", "1000req").unwrap(), IntervalSpec::Requests(1000));
        assert_eq!(IntervalSpec::parse("--interval", "2s").unwrap(), IntervalSpec::Time(2_000_000_000));
        assert!(IntervalSpec::parse("--interval", "0req").is_err());
        assert!(IntervalSpec::parse("--interval", "x").is_err());
    }
}
