//! The four extreme-locality workloads of Fox, Lojpur and Wang, Section 5 ("Extreme
//! localities"): every combination of high and low temporal locality with high and low spatial
//! locality, built from files read sequentially, as the paper built them on the FSU trace.
//!
//! Layout: the objects are split into files of consecutive objects as `--files` says (see
//! [`super::Common`]); without `--files`, every object is a file of its own. A file is always read
//! whole, object after object (the paper's replays read files sequentially, "references within a
//! file remain sequential"). The generators differ only in which file comes next:
//!
//! - `hot-near` (high temporal, high spatial): "two 1-MB files ... read alternatively and
//!   repeatedly" -- files 0 and 1, which are neighbours on the disk.
//! - `hot-far` (high temporal, low spatial): the files "sorted ... based on their starting block
//!   numbers", then "the first and the last files" read alternately: the same two-file working
//!   set, at the two ends of the disk.
//! - `cold-near` (low temporal, high spatial): "reading files in the order of increasing block
//!   numbers": a sweep over every file, repeated when the requests outlast it.
//! - `cold-far` (low temporal, low spatial): the paper shuffles "the reference ordering of files
//!   randomly"; here every sweep visits all files once in a fresh seeded random order, so it
//!   differs from `cold-near` only in order, as in the paper.
//!
//! The paper's front-end streams also hold directory and i-node references, which it shows raise
//! stack affinity and lower block affinity (Section 5); these generators produce the data
//! references only, so their affinities are the pure effect of the order of the files. Request
//! timing comes from the common settings (the paper used exponential inter-arrivals with the
//! trace's mean: `--arrival poisson`).

use rand::seq::SliceRandom;
use rand_pcg::Pcg64Mcg;

use super::{Common, GenParams, GeneratorInfo, ObjectSampler};
use crate::error::ConfigError;

/// Most files `cold-far` shuffles (its order takes 4 bytes a file).
const MAX_SHUFFLED_FILES: u64 = 1 << 24;

/// Which file comes next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    HotNear,
    HotFar,
    ColdNear,
    ColdFar,
}

pub const HOT_NEAR: GeneratorInfo = GeneratorInfo {
    name: "hot-near",
    summary: "high temporal, high spatial locality: two neighbouring files read alternately (Fox et al. Section 5)",
    params: &[],
    common: super::COMMON,
    build: |c, p| Ok(super::sampled("hot-near", c, build(c, p, Case::HotNear)?)),
};

pub const HOT_FAR: GeneratorInfo = GeneratorInfo {
    name: "hot-far",
    summary: "high temporal, low spatial locality: the first and last files read alternately (Fox et al. Section 5)",
    params: &[],
    common: super::COMMON,
    build: |c, p| Ok(super::sampled("hot-far", c, build(c, p, Case::HotFar)?)),
};

pub const COLD_NEAR: GeneratorInfo = GeneratorInfo {
    name: "cold-near",
    summary: "low temporal, high spatial locality: all files in increasing block order, repeated (Fox et al. Section 5)",
    params: &[],
    common: super::COMMON,
    build: |c, p| Ok(super::sampled("cold-near", c, build(c, p, Case::ColdNear)?)),
};

pub const COLD_FAR: GeneratorInfo = GeneratorInfo {
    name: "cold-far",
    summary: "low temporal, low spatial locality: all files in a shuffled order, reshuffled every sweep (Fox et al. Section 5)",
    params: &[],
    common: super::COMMON,
    build: |c, p| Ok(super::sampled("cold-far", c, build(c, p, Case::ColdFar)?)),
};

/// Reads whole files in the order its case prescribes.
pub struct ExtremeLocality {
    case: Case,
    objects: u64,
    per_file: u64,
    files: u64,
    /// Position in the current file, and the file.
    file: u64,
    within: u64,
    /// Step of the file order (index into the two-file cycle or the sweep).
    step: u64,
    order: Vec<u32>,
}

impl ExtremeLocality {
    pub fn new(case: Case, objects: u64, files: u64) -> ExtremeLocality {
        let per_file = if files == 0 { 1 } else { objects.div_ceil(files) };
        let files = objects.div_ceil(per_file);
        ExtremeLocality { case, objects, per_file, files, file: 0, within: 0, step: 0, order: Vec::new() }
    }

    fn file_len(&self, f: u64) -> u64 {
        self.per_file.min(self.objects - f * self.per_file)
    }

    /// The file of step `step` of the order.
    fn file_at(&mut self, step: u64, rng: &mut Pcg64Mcg) -> u64 {
        match self.case {
            Case::HotNear => step % 2 % self.files,
            Case::HotFar => {
                if step % 2 == 0 {
                    0
                } else {
                    self.files - 1
                }
            }
            Case::ColdNear => step % self.files,
            Case::ColdFar => {
                let i = (step % self.files) as usize;
                if i == 0 {
                    if self.order.is_empty() {
                        self.order = (0..self.files as u32).collect();
                    }
                    self.order.shuffle(rng);
                }
                self.order[i] as u64
            }
        }
    }
}

impl ObjectSampler for ExtremeLocality {
    #[inline]
    fn next_object(&mut self, rng: &mut Pcg64Mcg) -> u64 {
        if self.within == 0 {
            self.file = self.file_at(self.step, rng);
            self.step += 1;
        }
        let obj = self.file * self.per_file + self.within;
        self.within += 1;
        if self.within == self.file_len(self.file) {
            self.within = 0;
        }
        obj
    }
}

fn build(common: &Common, _params: &mut GenParams, case: Case) -> Result<Box<dyn ObjectSampler>, ConfigError> {
    let g = ExtremeLocality::new(case, common.objects, common.files);
    // cold-far keeps its shuffled order of the files in memory.
    let max = if case == Case::ColdFar { MAX_SHUFFLED_FILES } else { u32::MAX as u64 };
    if g.files > max {
        return Err(ConfigError::new("--files", format!("{} files is out of range (at most {max}; give --files to group objects into fewer files)", g.files)));
    }
    Ok(Box::new(g))
}

#[cfg(test)]
mod tests {
    use super::super::{build as build_workload, Common, GenParams};
    use crate::metrics::{Granularity, LocalityProbe, ProbeConfig};
    use crate::trace::read_all;

    fn objects(name: &str, c: &Common) -> Vec<u64> {
        let mut r = build_workload(name, c, GenParams::default()).unwrap();
        read_all(r.as_mut()).unwrap().iter().map(|r| r.offset / c.object_size).collect()
    }

    #[test]
    fn orders() {
        let c = Common { requests: 12, objects: 8, files: 4, ..Default::default() };
        assert_eq!(objects("hot-near", &c), vec![0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3]);
        assert_eq!(objects("hot-far", &c), vec![0, 1, 6, 7, 0, 1, 6, 7, 0, 1, 6, 7]);
        assert_eq!(objects("cold-near", &c), vec![0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3]);
        let far = objects("cold-far", &c);
        // Each sweep visits every file once, whole and in order within the file.
        let mut first: Vec<u64> = far[..8].to_vec();
        first.sort();
        assert_eq!(first, (0..8).collect::<Vec<_>>());
        assert!(far.chunks(2).all(|p| p[0] % 2 == 0 && p[1] == p[0] + 1));
        assert_ne!(&far[..8], &[0, 1, 2, 3, 4, 5, 6, 7]);
        assert_eq!(far, objects("cold-far", &c), "seeded");
    }

    /// Section 5: the high-temporal cases score a higher stack affinity than the low-temporal
    /// ones, and the high-spatial cases a higher block affinity than the low-spatial ones, at
    /// the front end.
    #[test]
    fn front_end_affinities_separate_the_four_cases() {
        for files in [0, 25_000, 1000] {
            let c = Common { requests: 200_000, objects: 100_000, files, ..Default::default() };
            let aff = |name: &str| {
                let mut r = build_workload(name, &c, GenParams::default()).unwrap();
                let mut p = LocalityProbe::new(ProbeConfig { granularity: Granularity::Bytes(4096), ..Default::default() });
                for q in read_all(r.as_mut()).unwrap() {
                    p.observe_request(&q);
                }
                let rep = p.report();
                (rep.stack_affinity.mean.unwrap(), rep.block_affinity.mean.unwrap(), rep.stack_affinity.median.unwrap(), rep.block_affinity.median.unwrap())
            };
            let (hn, hf, cn, cf) = (aff("hot-near"), aff("hot-far"), aff("cold-near"), aff("cold-far"));
            let msg = format!("files={files}: hot-near {hn:?} hot-far {hf:?} cold-near {cn:?} cold-far {cf:?}");
            for hot in [hn, hf] {
                for cold in [cn, cf] {
                    assert!(hot.0 > cold.0, "stack affinity, {msg}");
                }
            }
            for near in [hn, cn] {
                for far in [hf, cf] {
                    assert!(near.1 > far.1, "block affinity, {msg}");
                }
            }
        }
    }
}
