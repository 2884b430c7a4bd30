//! Zipf workload: the object of popularity rank `r` (1-based) is requested with probability
//! proportional to `1 / r^alpha`, independently for each request (the independent reference
//! model with Zipf-like popularity, as in Breslau et al., "Web Caching and Zipf-like
//! Distributions", INFOCOM 1999). `alpha = 0` is uniform; web and block workloads are usually
//! fitted with alpha between 0.6 and 1.2.
//!
//! Sampling uses Walker's alias method (Vose's construction): after an O(n) table build, each
//! draw is one uniform index and one comparison, so ten million requests over a million objects
//! take well under a second. The table holds a 64-bit threshold and a 32-bit alias per object.
//!
//! Placement: by default the object of rank `r` is object `r - 1`, so popular objects are at low
//! offsets, next to each other. With `scatter=yes` ranks are placed by a seeded random
//! permutation instead, so that popularity carries no spatial locality (relevant in block mode,
//! where neighbouring objects share pages and prefetchers exploit adjacency).

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{Common, GenParams, GeneratorInfo, ObjectSampler};
use crate::error::ConfigError;

pub const INFO: GeneratorInfo = GeneratorInfo {
    name: "zipf",
    summary: "Zipf popularity: rank r requested with probability proportional to 1/r^alpha",
    params: &[("alpha", "skew exponent, >= 0 (default 1.0)"), ("scatter", "place ranks by a seeded random permutation (default no)")],
    common: super::COMMON,
    build: |c, p| Ok(super::sampled("zipf", c, build(c, p)?)),
};

/// The weights and alias tables take about 24 bytes an object: 2^24 objects is 400 MiB.
const MAX_OBJECTS: u64 = 1 << 24;
/// Past this skew every request goes to rank 1 in double precision anyway.
const MAX_ALPHA: f64 = 100.0;

/// Walker/Vose alias table over `n` outcomes.
pub struct AliasTable {
    /// Column `i` keeps outcome `i` when a uniform u64 draw is below `threshold[i]`, else gives
    /// `alias[i]`.
    threshold: Vec<u64>,
    alias: Vec<u32>,
}

impl AliasTable {
    /// From weights (not necessarily normalised, all finite and >= 0, not all 0).
    pub fn new(weights: &[f64]) -> AliasTable {
        let n = weights.len();
        let total: f64 = weights.iter().sum();
        let mut scaled: Vec<f64> = weights.iter().map(|w| w * n as f64 / total).collect();
        let mut alias: Vec<u32> = (0..n as u32).collect();
        let mut small: Vec<u32> = Vec::new();
        let mut large: Vec<u32> = Vec::new();
        for (i, &p) in scaled.iter().enumerate() {
            if p < 1.0 {
                small.push(i as u32);
            } else {
                large.push(i as u32);
            }
        }
        while let (Some(&s), Some(&l)) = (small.last(), large.last()) {
            small.pop();
            alias[s as usize] = l;
            scaled[l as usize] -= 1.0 - scaled[s as usize];
            if scaled[l as usize] < 1.0 {
                large.pop();
                small.push(l);
            }
        }
        // Leftovers are 1 up to rounding: they always keep their own outcome.
        for i in large.into_iter().chain(small) {
            scaled[i as usize] = 1.0;
        }
        let threshold = scaled
            .iter()
            .map(|&p| if p >= 1.0 { u64::MAX } else { (p * 2f64.powi(64)) as u64 })
            .collect();
        AliasTable { threshold, alias }
    }

    #[inline]
    pub fn sample(&self, rng: &mut Pcg64Mcg) -> u64 {
        let n = self.threshold.len() as u64;
        let i = rng.gen_range(0..n) as usize;
        let u: u64 = rng.gen();
        if u < self.threshold[i] || self.threshold[i] == u64::MAX {
            i as u64
        } else {
            self.alias[i] as u64
        }
    }
}

pub struct Zipf {
    table: AliasTable,
    /// Object of each rank (0-based), when scattered.
    placement: Option<Vec<u32>>,
}

impl Zipf {
    pub fn new(objects: u64, alpha: f64, scatter_seed: Option<u64>) -> Result<Zipf, ConfigError> {
        if objects > MAX_OBJECTS {
            return Err(ConfigError::new("--objects", format!("the zipf generator supports at most {MAX_OBJECTS} objects")));
        }
        if !(alpha >= 0.0 && alpha.is_finite()) {
            return Err(ConfigError::new("--alpha", format!("{alpha} is not a finite exponent >= 0")));
        }
        let weights: Vec<f64> = (1..=objects).map(|r| (r as f64).powf(-alpha)).collect();
        let placement = scatter_seed.map(|seed| {
            let mut p: Vec<u32> = (0..objects as u32).collect();
            p.shuffle(&mut Pcg64Mcg::seed_from_u64(seed));
            p
        });
        Ok(Zipf { table: AliasTable::new(&weights), placement })
    }
}

impl ObjectSampler for Zipf {
    #[inline]
    fn next_object(&mut self, rng: &mut Pcg64Mcg) -> u64 {
        let rank = self.table.sample(rng);
        match &self.placement {
            None => rank,
            Some(p) => p[rank as usize] as u64,
        }
    }
}

fn build(common: &Common, params: &mut GenParams) -> Result<Box<dyn ObjectSampler>, ConfigError> {
    let alpha = params.f64_in("alpha", 1.0, 0.0, MAX_ALPHA)?;
    let scatter = params.bool("scatter", false)?;
    // The permutation has its own seed so that it does not consume the object stream.
    let scatter_seed = scatter.then(|| common.seed.wrapping_mul(0xd1b5_4a32_d192_ed03) ^ 0x5ca7);
    Ok(Box::new(Zipf::new(common.objects, alpha, scatter_seed)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frequencies_follow_zipf() {
        let n = 100u64;
        let alpha = 1.0;
        let mut z = Zipf::new(n, alpha, None).unwrap();
        let mut rng = Pcg64Mcg::seed_from_u64(1);
        let draws = 1_000_000;
        let mut counts = vec![0u64; n as usize];
        for _ in 0..draws {
            counts[z.next_object(&mut rng) as usize] += 1;
        }
        let h: f64 = (1..=n).map(|r| (r as f64).powf(-alpha)).sum();
        for r in [1usize, 2, 10, 50, 100] {
            let expect = draws as f64 * (r as f64).powf(-alpha) / h;
            let got = counts[r - 1] as f64;
            assert!((got - expect).abs() < 5.0 * expect.sqrt() + 5.0, "rank {r}: {got} vs {expect}");
        }
    }

    #[test]
    fn alias_exact_on_simple_weights() {
        let t = AliasTable::new(&[1.0, 0.0, 3.0]);
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        let mut c = [0u32; 3];
        for _ in 0..100_000 {
            c[t.sample(&mut rng) as usize] += 1;
        }
        assert_eq!(c[1], 0);
        assert!((c[0] as f64 / 100_000.0 - 0.25).abs() < 0.01, "{c:?}");
    }

    #[test]
    fn scatter_is_a_permutation() {
        let z = Zipf::new(1000, 1.0, Some(5)).unwrap();
        let mut p = z.placement.clone().unwrap();
        assert_ne!(p[..10], (0..10).collect::<Vec<u32>>()[..]);
        p.sort_unstable();
        assert_eq!(p, (0..1000).collect::<Vec<u32>>());
    }
}
