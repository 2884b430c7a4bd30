//! The LRU miss-ratio curve of every cache size, from one pass.
//!
//! Mattson, Gecsei, Slutz and Traiger (1970): LRU is a stack algorithm, so the content of an LRU
//! cache of `c` entries is always the top `c` entries of the LRU stack. A reference at stack
//! distance `d` (its depth, 0 on top; see [`super::stack_distance`], the same stack as Fox,
//! Lojpur and Wang's Section 2.2) therefore hits in every cache of more than `d` entries and
//! misses in the others, and a first reference misses everywhere. With `H[d]` the number of
//! references at distance `d` and `F` the number of first references, the misses of a cache of
//! `c` entries are
//!
//! ```text
//! misses(c) = F + sum over d >= c of H[d]
//! ```
//!
//! so one histogram gives the whole curve. Cumulative sums make each size an O(1) lookup.

use serde::{Deserialize, Serialize};

use super::affinity::DistanceDistribution;

/// One point of a miss-ratio curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MrcPoint {
    /// Cache size in entries (objects or blocks).
    pub cache_size: u64,
    pub miss_ratio: f64,
    pub misses: u64,
}

/// The LRU miss-ratio curve of a reference stream.
#[derive(Debug, Clone)]
pub struct MissRatioCurve {
    /// `hits_below[c]`: references at a distance below `c` (hits of a cache of `c` entries).
    hits_below: Vec<u64>,
    total: u64,
}

impl MissRatioCurve {
    /// The curve of the references whose stack distances are in `dist` (which must count every
    /// distance exactly, as a probe's stack distances do).
    pub fn from_distances(dist: &DistanceDistribution) -> MissRatioCurve {
        assert_eq!(dist.beyond_exact(), 0, "a miss-ratio curve needs exact stack distances");
        let counts = dist.exact_counts();
        let mut hits_below = Vec::with_capacity(counts.len() + 1);
        let mut s = 0u64;
        hits_below.push(0);
        for &c in counts {
            s += c;
            hits_below.push(s);
        }
        MissRatioCurve { hits_below, total: dist.count() + dist.first() }
    }

    /// References counted.
    pub fn references(&self) -> u64 {
        self.total
    }

    /// The smallest cache that reaches the lowest miss ratio (only first references miss).
    pub fn saturation_size(&self) -> u64 {
        (self.hits_below.len() as u64 - 1).max(1)
    }

    /// Misses of an LRU cache of `cache_size` entries.
    pub fn misses(&self, cache_size: u64) -> u64 {
        let i = (cache_size as usize).min(self.hits_below.len() - 1);
        self.total - self.hits_below[i]
    }

    /// Miss ratio of an LRU cache of `cache_size` entries (`None` for an empty stream).
    pub fn miss_ratio(&self, cache_size: u64) -> Option<f64> {
        (self.total > 0).then(|| self.misses(cache_size) as f64 / self.total as f64)
    }

    /// The curve at `sizes`.
    pub fn points(&self, sizes: &[u64]) -> Vec<MrcPoint> {
        sizes
            .iter()
            .map(|&c| MrcPoint { cache_size: c, miss_ratio: self.miss_ratio(c).unwrap_or(0.0), misses: self.misses(c) })
            .collect()
    }

    /// Default sizes: powers of two from 1 up to the saturation size, then the saturation size
    /// itself (where the curve reaches its floor).
    pub fn default_sizes(&self) -> Vec<u64> {
        default_sizes(self.saturation_size())
    }
}

/// Powers of two below `saturation`, then `saturation` itself.
pub fn default_sizes(saturation: u64) -> Vec<u64> {
    let mut v: Vec<u64> = (0..64).map(|k| 1u64 << k).take_while(|&c| c < saturation).collect();
    v.push(saturation);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{build, Access};
    use crate::metrics::stack_distance::StackDistance;

    #[test]
    fn equals_lru_simulation_at_every_size() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let keys: Vec<u64> = (0..20_000).map(|_| { let x: f64 = rng.gen(); (x * x * x * 2000.0) as u64 }).collect();
        let mut sd: StackDistance = StackDistance::new();
        let mut dist = DistanceDistribution::new(usize::MAX);
        for &k in &keys {
            match sd.access(k).0 {
                Some(d) => dist.record(d),
                None => dist.record_first(),
            }
        }
        let mrc = MissRatioCurve::from_distances(&dist);
        for c in [1u64, 2, 3, 10, 64, 100, 500, 1000, 1999, 2000, 5000] {
            let mut lru = build("lru", c).unwrap();
            let misses = keys.iter().enumerate().filter(|(i, &k)| !lru.get(&Access::unit(k, *i as u64))).count() as u64;
            assert_eq!(mrc.misses(c), misses, "cache size {c}");
        }
        let sizes = mrc.default_sizes();
        assert_eq!(*sizes.last().unwrap(), mrc.saturation_size());
        assert_eq!(mrc.misses(mrc.saturation_size()), dist.first());
    }
}
