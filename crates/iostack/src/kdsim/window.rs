//! The window comparison behind KDSim's decisions (KDSim paper §4.1, condition (1), l.162-167;
//! spec §1.6, K2-K4).
//!
//! Two systems are compared while a workload runs: the one running (measured) and the one not
//! running (played by the virtual disk). Each request a side completes adds its *time per block*
//! T_i / B_i to that side. At a check, each side's value is the sum of T_i / B_i over the last N
//! requests it completed (N = 1000 in the paper), and the candidate side wins iff its sum is
//! strictly smaller than the baseline's (a tie keeps the baseline; condition (1) is a strict
//! "<"). It is a sum of per-request times per block, not a ratio of sums: a request of one block
//! weighs as much as one of 32.
//!
//! - *Cadence* (K2): `tumbling` checks after every N-th request the caller counts (the first
//!   check at N), `sliding` after every request once N have been counted.
//! - *Which requests count* is the caller's business (ADA counts completed original reads, K3).
//! - *A lagging side* (K4): each side holds the last N values *it has completed* at check time;
//!   nothing from the future. A side that has completed fewer than N is scaled to N from its
//!   mean (sum × N / count), so that a side that lags is not favoured by its missing requests;
//!   a side with none gives no decision (the caller keeps its state).
//!
//! Times are held as integer picoseconds per block, so sliding sums are exact and runs are
//! deterministic. Nothing here knows about REDCAP: the comparator decides between any two
//! alternatives (two caches, two schedulers, two readahead settings).

use std::collections::VecDeque;

use crate::error::ConfigError;

/// When checks happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Cadence {
    /// After every N-th counted request.
    Tumbling,
    /// After every counted request once N have been counted.
    Sliding,
}

impl Cadence {
    pub fn parse(option: &str, v: &str) -> Result<Cadence, ConfigError> {
        match v {
            "tumbling" => Ok(Cadence::Tumbling),
            "sliding" => Ok(Cadence::Sliding),
            other => Err(ConfigError::unknown(option, "cadence", other, &["tumbling", "sliding"])),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Cadence::Tumbling => "tumbling",
            Cadence::Sliding => "sliding",
        }
    }
}

/// The two sides compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The alternative whose adoption is decided (e.g. REDCAP on).
    Candidate,
    /// What it is compared with (e.g. the normal system).
    Baseline,
}

/// The last N values of one side.
#[derive(Debug, Clone, Default)]
struct Ring {
    values: VecDeque<u64>,
    sum: u128,
    completed: u64,
}

impl Ring {
    fn push(&mut self, ps_per_block: u64, n: usize) {
        if self.values.len() == n {
            self.sum -= self.values.pop_front().expect("a full ring") as u128;
        }
        self.values.push_back(ps_per_block);
        self.sum += ps_per_block as u128;
        self.completed += 1;
    }

    /// The window's sum scaled to `n` values, in picoseconds; `None` when empty.
    fn scaled(&self, n: usize) -> Option<f64> {
        (!self.values.is_empty()).then(|| self.sum as f64 * n as f64 / self.values.len() as f64)
    }
}

/// One check's sums and outcome.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Check {
    /// Counted requests at the check.
    pub request: u64,
    /// Σ T/B over each side's window, in milliseconds per block (scaled to N when a side has
    /// fewer; `None`: no request completed on that side yet).
    pub candidate_ms: Option<f64>,
    pub baseline_ms: Option<f64>,
    /// Values in each side's window.
    pub candidate_requests: usize,
    pub baseline_requests: usize,
    /// Whether the candidate wins (strictly smaller sum); `None` without a decision.
    pub candidate_wins: Option<bool>,
}

/// Compares the last `window` per-block times of two sides.
#[derive(Debug, Clone)]
pub struct WindowComparator {
    window: usize,
    cadence: Cadence,
    candidate: Ring,
    baseline: Ring,
    counted: u64,
}

impl WindowComparator {
    /// `window` requests per side (at least 1).
    pub fn new(window: usize, cadence: Cadence) -> Result<WindowComparator, ConfigError> {
        if window == 0 {
            return Err(ConfigError::new("window", "a window holds at least one request"));
        }
        Ok(WindowComparator { window, cadence, candidate: Ring::default(), baseline: Ring::default(), counted: 0 })
    }

    pub fn window(&self) -> usize {
        self.window
    }

    pub fn cadence(&self) -> Cadence {
        self.cadence
    }

    /// A request of `blocks` blocks completed on `side`, taking `time_ns`. A request of no
    /// blocks is ignored (it has no time per block).
    pub fn record(&mut self, side: Side, time_ns: f64, blocks: u64) {
        if blocks == 0 {
            return;
        }
        let ps = (time_ns.max(0.0) * 1000.0 / blocks as f64).round() as u64;
        let ring = match side {
            Side::Candidate => &mut self.candidate,
            Side::Baseline => &mut self.baseline,
        };
        ring.push(ps, self.window);
    }

    /// Requests each side has completed in all.
    pub fn completed(&self, side: Side) -> u64 {
        match side {
            Side::Candidate => self.candidate.completed,
            Side::Baseline => self.baseline.completed,
        }
    }

    /// Counts one request (the caller's clock for the cadence); a check when one is due.
    pub fn count(&mut self) -> Option<Check> {
        self.counted += 1;
        let n = self.window as u64;
        let due = match self.cadence {
            Cadence::Tumbling => self.counted % n == 0,
            Cadence::Sliding => self.counted >= n,
        };
        due.then(|| self.check())
    }

    /// The comparison now, whatever the cadence.
    pub fn check(&self) -> Check {
        let c = self.candidate.scaled(self.window);
        let b = self.baseline.scaled(self.window);
        Check {
            request: self.counted,
            candidate_ms: c.map(|v| v / 1e9),
            baseline_ms: b.map(|v| v / 1e9),
            candidate_requests: self.candidate.values.len(),
            baseline_requests: self.baseline.values.len(),
            candidate_wins: match (c, b) {
                (Some(c), Some(b)) => Some(c < b),
                _ => None,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(w: &mut WindowComparator, side: Side, ms: &[f64]) {
        for &m in ms {
            w.record(side, m * 1e6, 1);
        }
    }

    #[test]
    fn tumbling_checks_after_every_nth_request() {
        let mut w = WindowComparator::new(3, Cadence::Tumbling).unwrap();
        let due: Vec<u64> = (0..10).filter_map(|_| w.count()).map(|c| c.request).collect();
        assert_eq!(due, vec![3, 6, 9]);
    }

    #[test]
    fn sliding_checks_after_every_request_once_full() {
        let mut w = WindowComparator::new(3, Cadence::Sliding).unwrap();
        let due: Vec<u64> = (0..6).filter_map(|_| w.count()).map(|c| c.request).collect();
        assert_eq!(due, vec![3, 4, 5, 6]);
    }

    #[test]
    fn sums_of_per_block_times_not_ratio_of_sums() {
        let mut w = WindowComparator::new(2, Cadence::Tumbling).unwrap();
        // Candidate: 1 ms for 1 block + 32 ms for 32 blocks = 1 + 1 = 2 ms/block summed.
        w.record(Side::Candidate, 1e6, 1);
        w.record(Side::Candidate, 32e6, 32);
        // Baseline: 0.5 ms for 1 block + 2 ms for 1 block = 2.5 (ratio of sums would be 33/33 = 1 vs 2.5/2).
        w.record(Side::Baseline, 0.5e6, 1);
        w.record(Side::Baseline, 2e6, 1);
        let c = w.check();
        assert_eq!(c.candidate_ms, Some(2.0));
        assert_eq!(c.baseline_ms, Some(2.5));
        assert_eq!(c.candidate_wins, Some(true));
    }

    #[test]
    fn only_the_last_n_values_count() {
        let mut w = WindowComparator::new(2, Cadence::Sliding).unwrap();
        feed(&mut w, Side::Candidate, &[100.0, 1.0, 1.0]);
        feed(&mut w, Side::Baseline, &[1.5, 1.5]);
        let c = w.check();
        assert_eq!(c.candidate_ms, Some(2.0));
        assert_eq!(c.candidate_wins, Some(true));
        assert_eq!(w.completed(Side::Candidate), 3);
    }

    #[test]
    fn a_tie_keeps_the_baseline() {
        let mut w = WindowComparator::new(2, Cadence::Tumbling).unwrap();
        feed(&mut w, Side::Candidate, &[1.0, 2.0]);
        feed(&mut w, Side::Baseline, &[2.0, 1.0]);
        assert_eq!(w.check().candidate_wins, Some(false));
    }

    #[test]
    fn a_lagging_side_is_scaled_to_the_window_and_an_empty_one_gives_no_decision() {
        let mut w = WindowComparator::new(4, Cadence::Tumbling).unwrap();
        feed(&mut w, Side::Baseline, &[1.0, 1.0, 1.0, 1.0]);
        assert_eq!(w.check().candidate_wins, None);
        // One candidate request of 0.9 ms stands for 4 × 0.9 = 3.6 < 4.
        feed(&mut w, Side::Candidate, &[0.9]);
        let c = w.check();
        assert_eq!((c.candidate_requests, c.baseline_requests), (1, 4));
        assert!((c.candidate_ms.unwrap() - 3.6).abs() < 1e-9);
        assert_eq!(c.candidate_wins, Some(true));
    }

    #[test]
    fn bad_settings_are_refused() {
        assert!(WindowComparator::new(0, Cadence::Tumbling).is_err());
        assert!(Cadence::parse("--ada cadence", "hopping").unwrap_err().to_string().contains("tumbling"));
        assert_eq!(Cadence::parse("x", "sliding").unwrap(), Cadence::Sliding);
    }
}
