//! The SPC-2-like workload of Varki, Hubbe and Merchant (`papers/003_0e822c5faac48388.txt`,
//! Section 5, "Workload"), which follows earlier prefetching papers in building a cache workload
//! from the SPC-2 specification's sequence generators.
//!
//! N independent generators run concurrently, all starting at time 0; each issues one-block read
//! requests with exponentially distributed inter-arrival times, and the workload is their requests
//! merged in time order. There are three kinds of generator:
//!
//! - *single sequential*: one run of contiguous blocks from a random start (234, 235, 236, ...);
//! - *multiple sequential*: runs of contiguous blocks, each from a new random start, with run
//!   lengths drawn from a Poisson distribution (100, 101, ..., 4567, 4568, ...);
//! - *random*: uniformly random blocks (45, 1982, 99999, ...).
//!
//! The paper does not give the Poisson mean or the arrival rate; the defaults here are a mean run
//! of 8 blocks and a mean inter-arrival of 2 s per generator (50 requests/s from 100 generators,
//! a load its disk can serve). The address space is its Cheetah 9LP disk: 17,783,240 blocks of
//! 512 bytes (DiskSim's block, Table 5). The same configuration and seed always give the same
//! workload; scaling the inter-arrival mean scales all times and keeps the request order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp, Poisson};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::trace::{Op, Request};

/// `iostack gen spc2`: the request count and seed are the common `--requests` and `--seed`.
pub const INFO: super::GeneratorInfo = super::GeneratorInfo {
    name: "spc2",
    summary: "SPC-2-like mix of sequential, multi-run sequential and random one-block readers, Poisson arrivals (Varki et al. Section 5)",
    params: &[
        ("single", "single-sequential generators (default 0)"),
        ("multiple", "multiple-sequential generators (default 90)"),
        ("random", "random generators (default 10)"),
        ("mean_run", "mean Poisson run length of multiple-sequential generators, blocks (default 8)"),
        ("mean_gap", "mean inter-arrival time of each generator (default 2s)"),
        ("disk_blocks", "address space in blocks (default 17783240, the Cheetah 9LP)"),
        ("block_bytes", "bytes per block (default 512)"),
    ],
    common: &["requests", "seed"],
    build: |c, p| {
        let d = Spc2Config::default();
        if c.requests > super::MAX_HELD_REQUESTS {
            return Err(ConfigError::new("--requests", format!("{} is out of range for spc2, which holds its workload in memory (1 to {})", c.requests, super::MAX_HELD_REQUESTS)));
        }
        let cfg = Spc2Config {
            single: p.u64_in("single", d.single as u64, 0, MAX_GENERATORS)? as u32,
            multiple: p.u64_in("multiple", d.multiple as u64, 0, MAX_GENERATORS)? as u32,
            random: p.u64_in("random", d.random as u64, 0, MAX_GENERATORS)? as u32,
            mean_run: p.f64_in("mean_run", d.mean_run, MIN_MEAN_RUN, MAX_MEAN_RUN)?,
            mean_gap_ns: p.duration_in("mean_gap", d.mean_gap_ns, super::MAX_INTERARRIVAL_NS)?,
            disk_blocks: p.u64_in("disk_blocks", d.disk_blocks, 2, super::MAX_BLOCKS)?,
            block_bytes: p.u64_in("block_bytes", d.block_bytes, 1, super::MAX_BLOCK_BYTES)?,
            requests: c.requests,
            seed: c.seed,
        };
        Ok(Box::new(crate::trace::VecReader::new(cfg.requests()?)))
    },
};

/// Ranges of the parameters (documented in `docs/reliability.md`).
const MAX_GENERATORS: u64 = 1 << 16;
const MIN_MEAN_RUN: f64 = 0.001;
const MAX_MEAN_RUN: f64 = 1e6;

/// Configuration of the SPC-2-like mix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Spc2Config {
    /// Number of single-sequential, multiple-sequential and random generators.
    pub single: u32,
    pub multiple: u32,
    pub random: u32,
    /// Total requests (the paper: 100,000).
    pub requests: u64,
    /// Address space in blocks.
    pub disk_blocks: u64,
    /// Mean of the Poisson run length of multiple-sequential generators (runs have at least 1).
    pub mean_run: f64,
    /// Mean inter-arrival time of each generator (ns).
    pub mean_gap_ns: u64,
    /// Bytes per block in the emitted requests.
    pub block_bytes: u64,
    pub seed: u64,
}

impl Default for Spc2Config {
    fn default() -> Self {
        Spc2Config {
            single: 0,
            multiple: 90,
            random: 10,
            requests: 100_000,
            disk_blocks: 17_783_240,
            mean_run: 8.0,
            mean_gap_ns: 2_000_000_000,
            block_bytes: 512,
            seed: 1,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Single,
    Multiple,
    Random,
}

struct Generator {
    kind: Kind,
    rng: Pcg64Mcg,
    next_block: u64,
    left_in_run: u64,
}

impl Spc2Config {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.single + self.multiple + self.random == 0 {
            return Err(ConfigError::new("spc2", "needs at least one generator"));
        }
        if self.disk_blocks < 2 {
            return Err(ConfigError::new("spc2.disk_blocks", "the address space needs at least 2 blocks"));
        }
        if !(self.mean_run > 0.0 && self.mean_run.is_finite()) {
            return Err(ConfigError::new("spc2.mean_run", format!("the mean run length must be positive, not {}", self.mean_run)));
        }
        if self.mean_gap_ns == 0 || self.block_bytes == 0 {
            return Err(ConfigError::new("spc2.mean_gap_ns", "the inter-arrival time and block size must be positive"));
        }
        if self.disk_blocks.checked_mul(self.block_bytes).is_none() {
            return Err(ConfigError::new("spc2.disk_blocks", "disk_blocks * block_bytes overflows a 64-bit byte offset"));
        }
        Ok(())
    }

    /// The workload as block numbers with their issue times and generator ids, in time order.
    pub fn blocks(&self) -> Result<Vec<(u64, u64, u32)>, ConfigError> {
        self.validate()?;
        let n = (self.single + self.multiple + self.random) as usize;
        let exp = Exp::new(1.0 / self.mean_gap_ns as f64).expect("positive rate");
        let poisson = Poisson::new(self.mean_run).expect("positive mean");
        let mut gens: Vec<Generator> = (0..n)
            .map(|i| {
                let kind = if i < self.single as usize {
                    Kind::Single
                } else if i < (self.single + self.multiple) as usize {
                    Kind::Multiple
                } else {
                    Kind::Random
                };
                let rng = Pcg64Mcg::seed_from_u64(self.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03));
                Generator { kind, rng, next_block: 0, left_in_run: 0 }
            })
            .collect();
        let mut heap: BinaryHeap<Reverse<(u64, u32)>> = BinaryHeap::with_capacity(n);
        for (i, g) in gens.iter_mut().enumerate() {
            let t = exp.sample(&mut g.rng) as u64;
            heap.push(Reverse((t, i as u32)));
            if g.kind == Kind::Single {
                g.next_block = g.rng.gen_range(0..self.disk_blocks);
                g.left_in_run = u64::MAX;
            }
        }
        let mut out = Vec::with_capacity(self.requests as usize);
        while (out.len() as u64) < self.requests {
            let Reverse((t, i)) = heap.pop().expect("generators never stop");
            let g = &mut gens[i as usize];
            let block = match g.kind {
                Kind::Random => g.rng.gen_range(0..self.disk_blocks),
                Kind::Single | Kind::Multiple => {
                    if g.left_in_run == 0 {
                        let len: f64 = poisson.sample(&mut g.rng);
                        g.left_in_run = (len as u64).max(1);
                        g.next_block = g.rng.gen_range(0..self.disk_blocks);
                    }
                    let b = g.next_block % self.disk_blocks;
                    g.next_block = b + 1;
                    g.left_in_run -= 1;
                    b
                }
            };
            out.push((t, block, i));
            let gap = exp.sample(&mut g.rng) as u64;
            heap.push(Reverse((t + gap.max(1), i)));
        }
        Ok(out)
    }

    /// The workload as one-block read requests (pid = generator).
    pub fn requests(&self) -> Result<Vec<Request>, ConfigError> {
        Ok(self
            .blocks()?
            .into_iter()
            .map(|(t, b, g)| Request { time_ns: t, offset: b * self.block_bytes, length: self.block_bytes, pid: g, device: 0, op: Op::Read, file: None })
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_time_ordered_and_shaped() {
        let cfg = Spc2Config { requests: 20_000, ..Default::default() };
        let a = cfg.blocks().unwrap();
        assert_eq!(a, cfg.blocks().unwrap());
        assert_ne!(a, Spc2Config { seed: 2, ..cfg.clone() }.blocks().unwrap());
        assert!(a.windows(2).all(|w| w[0].0 <= w[1].0));
        // Multiple-sequential generators continue their runs: most of their requests follow
        // their previous one; random ones almost never do.
        let mut last = vec![u64::MAX; 100];
        let (mut seq, mut seq_total, mut rnd, mut rnd_total) = (0, 0, 0, 0);
        for &(_, b, g) in &a {
            let cont = last[g as usize].wrapping_add(1) == b;
            if g < 90 {
                seq_total += 1;
                seq += cont as u32;
            } else {
                rnd_total += 1;
                rnd += cont as u32;
            }
            last[g as usize] = b;
        }
        let f = seq as f64 / seq_total as f64;
        // Poisson(8) runs of at least 1: about 1 - 1/8 of requests continue a run.
        assert!(f > 0.8 && f < 0.92, "{f}");
        assert!(rnd < rnd_total / 100);
        // Each generator gets its share (equal rates).
        assert!((seq_total as f64 / a.len() as f64 - 0.9).abs() < 0.02);
    }

    #[test]
    fn rejects_bad_configs() {
        assert!(Spc2Config { multiple: 0, random: 0, ..Default::default() }.blocks().is_err());
        assert!(Spc2Config { mean_run: 0.0, ..Default::default() }.blocks().is_err());
    }
}
