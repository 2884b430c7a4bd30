//! Uniform random workload: every object equally likely, independently for each request (no
//! locality at all; the baseline against which skew and sequentiality are measured).

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::{Common, GenParams, GeneratorInfo, ObjectSampler};
use crate::error::ConfigError;

pub const INFO: GeneratorInfo = GeneratorInfo {
    name: "uniform",
    summary: "every object equally likely, independently per request",
    params: &[],
    common: super::COMMON,
    build: |c, p| Ok(super::sampled("uniform", c, build(c, p)?)),
};

pub struct Uniform {
    objects: u64,
}

impl ObjectSampler for Uniform {
    #[inline]
    fn next_object(&mut self, rng: &mut Pcg64Mcg) -> u64 {
        rng.gen_range(0..self.objects)
    }
}

fn build(common: &Common, _params: &mut GenParams) -> Result<Box<dyn ObjectSampler>, ConfigError> {
    Ok(Box::new(Uniform { objects: common.objects }))
}
