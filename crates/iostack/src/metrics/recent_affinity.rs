//! The affinities a stream computed for its latest references, for another stream of the same
//! data to take instead of computing them again.
//!
//! A probe of several streams ([`super::LocalityProbe`] of `N` > 1) measures the same data seen
//! at neighbouring boundaries: below the page cache, its output and the scheduler's, which
//! differ only where the scheduler merges or reorders requests. So the n-th reference of one
//! stream has, nearly always, the same stack and block distance as the n-th reference of the
//! other, and the affinity of a large distance costs a `log10` (about 90 instructions, the
//! largest single cost of a reference after the table miss). Each stream keeps the distances and
//! affinities of its last [`RING`] references by reference number; the other, at its n-th
//! reference, takes the affinity stored at n when the distance stored there is its own.
//!
//! A stored affinity is the one [`affinity_fast`] gave for the stored distance, so taking it
//! for an equal distance gives the same `f64`, bit for bit, however the streams are aligned:
//! alignment only decides how often the distance is found. Entries start at distance 0, which
//! is never looked up (the table serves small distances).

use super::affinity::{affinity_fast, AFFINITY_TABLE_LEN};

/// References a stream remembers: more than a batch of requests of the other stream (a probe's
/// thread takes each stream's batches in turn, so the streams are about a batch apart).
pub const RING: usize = 1 << 13;

/// One reference: its stack and block distance and their affinities.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    stack: u64,
    stack_affinity: f64,
    block: u64,
    block_affinity: f64,
}

/// The distances and affinities of a stream's last [`RING`] references, by reference number.
#[derive(Debug, Clone, Default)]
pub struct RecentAffinities {
    /// [`RING`] entries once [`RecentAffinities::start`]ed, else empty (probes of one stream
    /// keep none).
    seen: Vec<Seen>,
}

impl RecentAffinities {
    /// Makes room for the entries (once; [`RecentAffinities::remember`] must come after).
    pub fn start(&mut self) {
        if self.seen.is_empty() {
            self.seen = vec![Seen::default(); RING];
        }
    }

    /// The affinity of stack distance `d` for reference `n` of another stream: this stream's
    /// at its reference `n` if the distance is the same, else computed.
    #[inline(always)]
    pub fn stack_affinity(&self, n: u64, d: u64) -> f64 {
        self.affinity(n, d, |e| (e.stack, e.stack_affinity))
    }

    /// [`RecentAffinities::stack_affinity`] of a block distance.
    #[inline(always)]
    pub fn block_affinity(&self, n: u64, d: u64) -> f64 {
        self.affinity(n, d, |e| (e.block, e.block_affinity))
    }

    /// The affinity of distance `d` for reference `n`: the one `stored` finds at `n` when its
    /// distance is `d`, else computed (and always for the table's distances).
    #[inline(always)]
    fn affinity(&self, n: u64, d: u64, stored: impl Fn(&Seen) -> (u64, f64)) -> f64 {
        if (d as usize) < AFFINITY_TABLE_LEN {
            return affinity_fast(d);
        }
        match self.seen.get(n as usize % RING).map(stored) {
            Some((distance, affinity)) if distance == d => affinity,
            _ => affinity_fast(d),
        }
    }

    /// This stream's reference `n` had stack distance `stack` (0 for a first reference) and
    /// block distance `block`, whose affinities (as [`affinity_fast`] gives them) follow.
    /// Panics unless [`RecentAffinities::start`]ed.
    #[inline(always)]
    pub fn remember(&mut self, n: u64, stack: u64, stack_affinity: f64, block: u64, block_affinity: f64) {
        self.seen[n as usize % RING] = Seen { stack, stack_affinity, block, block_affinity };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::affinity::affinity;

    #[test]
    fn equal_distances_are_taken_and_others_computed() {
        let mut a = RecentAffinities::default();
        // Nothing kept: computed.
        assert_eq!(a.stack_affinity(5, 70_000).to_bits(), affinity(70_000).to_bits());
        a.start();
        assert_eq!(a.stack_affinity(5, 70_000).to_bits(), affinity(70_000).to_bits());
        a.remember(5, 70_000, 0.25, 2_000_000, 0.125);
        // Equal distances take what was stored (deliberately not the true affinity here, so
        // that the test sees where the value came from).
        assert_eq!(a.stack_affinity(5, 70_000), 0.25);
        assert_eq!(a.block_affinity(5, 2_000_000), 0.125);
        assert_eq!(a.stack_affinity(5 + RING as u64, 70_000), 0.25);
        // Other distances, other references, and small distances are computed.
        assert_eq!(a.stack_affinity(5, 70_001).to_bits(), affinity(70_001).to_bits());
        assert_eq!(a.block_affinity(6, 2_000_000).to_bits(), affinity(2_000_000).to_bits());
        a.remember(7, 3, 0.5, 4, 0.5);
        assert_eq!(a.stack_affinity(7, 3).to_bits(), affinity(3).to_bits());
        assert_eq!(a.block_affinity(7, 4).to_bits(), affinity(4).to_bits());
        // A fresh ring holds distance 0, which is never looked up.
        assert_eq!(a.stack_affinity(8, 0).to_bits(), affinity(0).to_bits());
    }

    #[test]
    fn a_later_reference_overwrites_its_slot() {
        let mut a = RecentAffinities::default();
        a.start();
        a.remember(1, 5_000, 0.3, 6_000, 0.4);
        a.remember(1 + RING as u64, 5_001, 0.6, 6_001, 0.7);
        assert_eq!(a.stack_affinity(1, 5_000).to_bits(), affinity(5_000).to_bits());
        assert_eq!(a.stack_affinity(1, 5_001), 0.6);
        assert_eq!(a.block_affinity(1, 6_001), 0.7);
    }
}
