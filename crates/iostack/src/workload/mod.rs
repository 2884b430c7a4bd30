//! Seeded generators of synthetic workloads.
//!
//! A workload is the request stream of [`Common`] settings (how many requests over how many
//! objects of what size, by how many processes, how they arrive, which fraction writes, how the
//! objects group into files) driven by one [`ObjectSampler`], the part that makes a generator
//! what it is: which object the next request touches. The result is a [`SyntheticReader`], a
//! [`TraceReader`] like any trace file, so generated workloads go wherever traces go (simulation,
//! conversion, writing).
//!
//! Generators come in two kinds behind one shape, [`GeneratorInfo`]: its `build` takes
//! [`Common`] and the generator's own [`GenParams`] and returns a [`TraceReader`], and its
//! `common` field names the common settings it reads (the CLI rejects the others). Most
//! generators only choose *which object* each request touches: they implement
//! [`ObjectSampler`] and wrap it with [`sampled`], which applies the request model below and
//! reads every common setting. Whole-request generators (`spc2`, `mixed-files`) lay out and
//! time their own requests (several blocks per request, files, per-process streams) and read
//! only the common settings they list (the seed; `spc2` also the request count).
//!
//! Adding a generator: one file with its generator and a `GeneratorInfo`, plus one line in
//! [`GENERATORS`]. The `gen` command of the CLI lists and runs whatever is registered there.
//!
//! Request model of every object-sampling generator:
//! - object `i` is at byte offset `i * size` on device 0 (`size`, default 4096, is the length of
//!   every request);
//! - time: fixed inter-arrival (request `k` at `k * interarrival`) or Poisson arrivals
//!   (exponential gaps of mean `interarrival`); default fixed, 100 us;
//! - op: write with probability `write_ratio` (default 0), else read;
//! - pid: uniform among `processes` pids 1..=processes (default 1);
//! - files (`files` > 0): objects are split into `files` runs of consecutive objects, run `f`
//!   being file `f`; a request carries its file, its offset in the file and the file size (the
//!   whole run), so file sizes are consistent with every access.
//!
//! Determinism: the same settings and seed give the same stream. The object sequence has its
//! own random stream, seeded by `seed` alone, so changing the write ratio, processes or arrivals
//! does not change which objects are touched.

use std::path::{Path, PathBuf};

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use crate::error::{ConfigError, TraceError};
use crate::trace::{FileRef, Op, Request, TraceReader};

pub mod uniform;
pub mod extremes;
pub mod zipf;
pub mod spc2;
pub mod mixed_files;
pub mod streams;
pub mod tac;
pub mod stride;
pub mod ior;
pub mod lkr;
pub mod composite;
pub mod acfs;

/// How requests arrive.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Arrival {
    /// Request `k` at `k * interarrival_ns`.
    Fixed { interarrival_ns: u64 },
    /// Exponentially distributed gaps with mean `mean_ns` (a Poisson process).
    Poisson { mean_ns: f64 },
}

/// Settings shared by every generator.
#[derive(Debug, Clone, PartialEq)]
pub struct Common {
    pub requests: u64,
    pub objects: u64,
    /// Bytes per object (and per request).
    pub object_size: u64,
    pub seed: u64,
    /// Fraction of requests that are writes, in [0, 1].
    pub write_ratio: f64,
    /// Number of issuing processes (pids 1..=processes).
    pub processes: u32,
    /// Number of files the objects are grouped into (0: requests carry no file).
    pub files: u64,
    pub arrival: Arrival,
}

impl Default for Common {
    fn default() -> Self {
        Common {
            requests: 1_000_000,
            objects: 100_000,
            object_size: 4096,
            seed: 0,
            write_ratio: 0.0,
            processes: 1,
            files: 0,
            arrival: Arrival::Fixed { interarrival_ns: 100_000 },
        }
    }
}

/// Ranges of the common settings (documented in `docs/reliability.md`): wide enough for any
/// real experiment, narrow enough that no setting makes a generator allocate or run without
/// bound.
pub const MAX_REQUESTS: u64 = 1 << 40;
pub const MAX_OBJECTS: u64 = 1 << 40;
pub const MAX_OBJECT_SIZE: u64 = 1 << 30;
pub const MAX_PROCESSES: u32 = 1 << 16;
/// Generators that build their whole workload in memory (`spc2`, `mixed-files`, `acfs-*`)
/// produce at most this many requests (about 1 GiB of requests).
pub const MAX_HELD_REQUESTS: u64 = 1 << 24;
/// Address space and block size of the generators that lay out a disk of blocks.
pub const MAX_BLOCKS: u64 = 1 << 40;
pub const MAX_BLOCK_BYTES: u64 = 1 << 20;
/// Bytes of one file of the generators that lay out files per process (`tac`, `stride`, `ior`,
/// `air`, `aip`): 1 TiB.
pub const MAX_FILE_SIZE: u64 = 1 << 40;
/// Bytes of one read of those generators: 512 B to 64 MiB.
pub const MIN_READ: u64 = 512;
pub const MAX_READ: u64 = 64 << 20;
/// One day.
pub const MAX_INTERARRIVAL_NS: u64 = 86_400_000_000_000;

impl Common {
    /// Checks the settings against their ranges; errors name the option, the value and the range.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let range = |opt: &str, v: u64, min: u64, max: u64| {
            if (min..=max).contains(&v) {
                Ok(())
            } else {
                Err(ConfigError::new(opt, format!("{v} is out of range ({min} to {max})")))
            }
        };
        range("--requests", self.requests, 1, MAX_REQUESTS)?;
        range("--objects", self.objects, 1, MAX_OBJECTS)?;
        range("--size", self.object_size, 1, MAX_OBJECT_SIZE)?;
        range("--processes", self.processes as u64, 1, MAX_PROCESSES as u64)?;
        match self.arrival {
            Arrival::Fixed { interarrival_ns } => range("--interarrival", interarrival_ns, 0, MAX_INTERARRIVAL_NS)?,
            Arrival::Poisson { mean_ns } => {
                if !(mean_ns.is_finite() && (0.0..=MAX_INTERARRIVAL_NS as f64).contains(&mean_ns)) {
                    return Err(ConfigError::new("--interarrival", format!("{mean_ns} ns is out of range (0 to one day)")));
                }
            }
        }
        if self.objects.checked_mul(self.object_size).is_none() {
            return Err(ConfigError::new("--objects", "objects * size overflows a 64-bit byte offset"));
        }
        if !(0.0..=1.0).contains(&self.write_ratio) {
            return Err(ConfigError::new("--write-ratio", format!("{} is out of range (0 to 1)", self.write_ratio)));
        }
        if self.files > self.objects {
            return Err(ConfigError::new("--files", format!("{} files for {} objects; at most one file per object", self.files, self.objects)));
        }
        Ok(())
    }
}

/// Generator-specific parameters (`alpha=1.0`, ...): typed getters, and [`GenParams::finish`]
/// rejects any parameter the generator did not take.
#[derive(Debug, Clone, Default)]
pub struct GenParams {
    generator: String,
    pairs: Vec<(String, String, bool)>,
}

impl GenParams {
    pub fn new(generator: &str, pairs: impl IntoIterator<Item = (String, String)>) -> GenParams {
        GenParams { generator: generator.to_string(), pairs: pairs.into_iter().map(|(k, v)| (k.to_ascii_lowercase(), v, false)).collect() }
    }

    /// Parses `key=value,key=value`.
    pub fn parse(generator: &str, text: &str) -> Result<GenParams, ConfigError> {
        let mut pairs = Vec::new();
        for kv in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').ok_or_else(|| ConfigError::new("--param", format!("`{kv}` is not key=value")))?;
            pairs.push((k.trim().to_string(), v.trim().to_string()));
        }
        Ok(GenParams::new(generator, pairs))
    }

    fn take(&mut self, key: &str) -> Option<String> {
        self.pairs.iter_mut().rev().find(|(k, _, _)| k == key).map(|(_, v, used)| {
            *used = true;
            v.clone()
        })
    }

    fn err(&self, key: &str, msg: String) -> ConfigError {
        ConfigError::new(format!("{}.{key}", self.generator), msg)
    }

    pub fn f64(&mut self, key: &str, default: f64) -> Result<f64, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| self.err(key, format!("`{v}` is not a number"))),
        }
    }

    pub fn u64(&mut self, key: &str, default: u64) -> Result<u64, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v.parse::<u64>().map_err(|_| self.err(key, format!("`{v}` is not a non-negative integer"))),
        }
    }

    /// A whole number within `min..=max` (its documented range).
    pub fn u64_in(&mut self, key: &str, default: u64, min: u64, max: u64) -> Result<u64, ConfigError> {
        let v = self.u64(key, default)?;
        self.within(key, v, min, max)
    }

    /// A number within `min..=max` (its documented range); NaN and infinities are refused.
    pub fn f64_in(&mut self, key: &str, default: f64, min: f64, max: f64) -> Result<f64, ConfigError> {
        let v = self.f64(key, default)?;
        if !(min..=max).contains(&v) {
            return Err(self.err(key, format!("{} is out of range ({} to {})", short(v), short(min), short(max))));
        }
        Ok(v)
    }

    /// A size in bytes within `min..=max` (its documented range).
    pub fn bytes_in(&mut self, key: &str, default: u64, min: u64, max: u64) -> Result<u64, ConfigError> {
        let v = self.bytes(key, default)?;
        if !(min..=max).contains(&v) {
            return Err(self.err(key, format!("{v} bytes is out of range ({min} to {max} bytes)")));
        }
        Ok(v)
    }

    /// A duration of at most `max_ns`, in nanoseconds.
    pub fn duration_in(&mut self, key: &str, default: u64, max_ns: u64) -> Result<u64, ConfigError> {
        let v = self.duration_ns(key, default)?;
        if v > max_ns {
            return Err(self.err(key, format!("{}s is out of range (at most {}s)", v as f64 / 1e9, max_ns as f64 / 1e9)));
        }
        Ok(v)
    }

    fn within(&self, key: &str, v: u64, min: u64, max: u64) -> Result<u64, ConfigError> {
        if !(min..=max).contains(&v) {
            return Err(self.err(key, format!("{v} is out of range ({min} to {max})")));
        }
        Ok(v)
    }

    /// An error about parameter `key`, naming the generator and the parameter.
    pub fn error(&self, key: &str, msg: impl Into<String>) -> ConfigError {
        self.err(key, msg.into())
    }

    /// A duration with its unit (`9.5ms`, `2s`; a bare number is an error), in nanoseconds.
    pub fn duration_ns(&mut self, key: &str, default: u64) -> Result<u64, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => crate::units::parse_duration_ns(key, &v).map_err(|e| self.err(key, e.to_string())),
        }
    }

    /// A size (`8KiB`, `1GiB`; a plain number is bytes).
    pub fn bytes(&mut self, key: &str, default: u64) -> Result<u64, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match crate::units::Size::parse(&format!("{}.{key}", self.generator), &v)? {
                crate::units::Size::Bytes(b) | crate::units::Size::Count(b) => Ok(b),
            },
        }
    }

    /// A text value.
    pub fn text(&mut self, key: &str) -> Option<String> {
        self.take(key)
    }

    pub fn bool(&mut self, key: &str, default: bool) -> Result<bool, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => Ok(true),
                "0" | "false" | "no" | "off" => Ok(false),
                _ => Err(self.err(key, format!("`{v}` is not yes or no"))),
            },
        }
    }

    /// Fails on any parameter no getter took, listing the generator's parameters.
    pub fn finish(&self, valid: &[&str]) -> Result<(), ConfigError> {
        if let Some((k, _, _)) = self.pairs.iter().find(|(_, _, used)| !used) {
            let list = if valid.is_empty() { "none".to_string() } else { valid.join(", ") };
            return Err(self.err(k, format!("unknown parameter of generator `{}` (its parameters: {list})", self.generator)));
        }
        Ok(())
    }
}

/// A number as a person would write it: `0.25`, `1e308`.
fn short(x: f64) -> String {
    if x != 0.0 && !(1e-3..1e6).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// Chooses the object of each request: the heart of a generator.
pub trait ObjectSampler: Send {
    /// The next object, in `0..objects`. `rng` is the object stream's own generator.
    fn next_object(&mut self, rng: &mut Pcg64Mcg) -> u64;
}

/// Builds a generator's sampler from the common settings and its own parameters.
pub type BuildSampler = fn(&Common, &mut GenParams) -> Result<Box<dyn ObjectSampler>, ConfigError>;

/// Builds a generator's workload from the common settings and its own parameters.
pub type BuildWorkload = fn(&Common, &mut GenParams) -> Result<Box<dyn TraceReader>, ConfigError>;

/// One registered generator.
pub struct GeneratorInfo {
    pub name: &'static str,
    pub summary: &'static str,
    /// The generator's own parameters, with a one-line description each.
    pub params: &'static [(&'static str, &'static str)],
    /// The common settings it reads, by option name (see [`COMMON`]).
    pub common: &'static [&'static str],
    pub build: BuildWorkload,
}

/// Every common setting, by the name of its CLI option; object-sampling generators read all.
pub const COMMON: &[&str] = &["requests", "objects", "size", "seed", "write-ratio", "processes", "files", "arrival", "interarrival"];

/// The workload of an object sampler under the common request model.
pub fn sampled(name: &str, common: &Common, sampler: Box<dyn ObjectSampler>) -> Box<dyn TraceReader> {
    Box::new(SyntheticReader::new(name, common.clone(), sampler))
}

/// Every generator, in the order `iostack gen --list` shows them.
pub const GENERATORS: &[GeneratorInfo] = &[zipf::INFO, uniform::INFO,
    extremes::HOT_NEAR, extremes::HOT_FAR, extremes::COLD_NEAR, extremes::COLD_FAR,
    spc2::INFO, mixed_files::INFO,
    tac::INFO, stride::INFO, ior::INFO, lkr::INFO, composite::AIR, composite::AIP,
    acfs::CS1, acfs::CS2, acfs::CS3, acfs::DIN, acfs::GLI, acfs::PSEL1, acfs::PSEL2, acfs::ANDREW];

/// The generator called `name`; the error lists the valid names.
pub fn generator(name: &str) -> Result<&'static GeneratorInfo, ConfigError> {
    GENERATORS.iter().find(|g| g.name.eq_ignore_ascii_case(name)).ok_or_else(|| {
        let names: Vec<&str> = GENERATORS.iter().map(|g| g.name).collect();
        ConfigError::unknown("GENERATOR", "generator", name, &names)
    })
}

/// Builds the workload of generator `name` with `common` settings and its own `params`.
pub fn build(name: &str, common: &Common, mut params: GenParams) -> Result<Box<dyn TraceReader>, ConfigError> {
    let info = generator(name)?;
    common.validate()?;
    let reader = (info.build)(common, &mut params)?;
    let valid: Vec<&str> = info.params.iter().map(|(n, _)| *n).collect();
    params.finish(&valid)?;
    Ok(reader)
}

/// Seeds of the two random streams: objects, and everything else.
const AUX_STREAM: u64 = 0x9e37_79b9_7f4a_7c15;

/// A generated workload, read like a trace.
pub struct SyntheticReader {
    common: Common,
    sampler: Box<dyn ObjectSampler>,
    objects_rng: Pcg64Mcg,
    aux_rng: Pcg64Mcg,
    produced: u64,
    clock_ns: f64,
    /// Objects per file (the last file may hold fewer).
    per_file: u64,
    /// `write_ratio` as a threshold on a u64 draw (exact for 0 and 1).
    write_threshold: u64,
    path: PathBuf,
}

impl SyntheticReader {
    pub fn new(name: &str, common: Common, sampler: Box<dyn ObjectSampler>) -> SyntheticReader {
        let per_file = if common.files == 0 { 0 } else { common.objects.div_ceil(common.files) };
        let write_threshold = if common.write_ratio >= 1.0 { u64::MAX } else { (common.write_ratio * 2f64.powi(64)) as u64 };
        SyntheticReader {
            objects_rng: Pcg64Mcg::seed_from_u64(common.seed),
            aux_rng: Pcg64Mcg::seed_from_u64(common.seed ^ AUX_STREAM),
            sampler,
            produced: 0,
            clock_ns: 0.0,
            per_file,
            write_threshold,
            path: PathBuf::from(format!("<{name} workload>")),
            common,
        }
    }

    #[inline]
    fn make(&mut self) -> Request {
        let c = &self.common;
        let obj = self.sampler.next_object(&mut self.objects_rng);
        debug_assert!(obj < c.objects);
        let time_ns = match c.arrival {
            Arrival::Fixed { interarrival_ns } => self.produced.saturating_mul(interarrival_ns),
            Arrival::Poisson { mean_ns } => {
                if self.produced > 0 {
                    // Inverse-CDF draw of an exponential gap; 1 - u is in (0, 1].
                    let u: f64 = self.aux_rng.gen();
                    self.clock_ns += -(1.0 - u).ln() * mean_ns;
                }
                self.clock_ns.min(u64::MAX as f64) as u64
            }
        };
        let draw: u64 = self.aux_rng.gen();
        let op = if c.write_ratio >= 1.0 || draw < self.write_threshold {
            Op::Write
        } else {
            Op::Read
        };
        let pid = if c.processes > 1 { 1 + self.aux_rng.gen_range(0..c.processes) } else { 1 };
        let file = if let Some(f) = obj.checked_div(self.per_file) {
            let first = f * self.per_file;
            let count = self.per_file.min(c.objects - first);
            Some(FileRef { id: f, offset: (obj - first) * c.object_size, size: Some(count * c.object_size) })
        } else {
            None
        };
        self.produced += 1;
        Request { time_ns, offset: obj * c.object_size, length: c.object_size, pid, device: 0, op, file }
    }
}

impl TraceReader for SyntheticReader {
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        if self.produced >= self.common.requests {
            return Ok(None);
        }
        Ok(Some(self.make()))
    }

    fn read_batch(&mut self, buf: &mut Vec<Request>, max: usize) -> Result<usize, TraceError> {
        let n = (self.common.requests - self.produced).min(max as u64) as usize;
        buf.reserve(n);
        for _ in 0..n {
            let r = self.make();
            buf.push(r);
        }
        Ok(n)
    }

    fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::read_all;

    fn gen(name: &str, c: &Common, params: &str) -> Vec<Request> {
        let mut r = build(name, c, GenParams::parse(name, params).unwrap()).unwrap();
        read_all(r.as_mut()).unwrap()
    }

    #[test]
    fn deterministic_and_seeded() {
        let c = Common { requests: 10_000, objects: 1000, seed: 7, write_ratio: 0.3, processes: 4, ..Default::default() };
        let a = gen("zipf", &c, "alpha=0.9");
        assert_eq!(a, gen("zipf", &c, "alpha=0.9"));
        assert_ne!(a, gen("zipf", &Common { seed: 8, ..c.clone() }, "alpha=0.9"));
        // The object stream does not depend on the other settings.
        let b = gen("zipf", &Common { write_ratio: 0.0, processes: 1, ..c.clone() }, "alpha=0.9");
        assert!(a.iter().zip(&b).all(|(x, y)| x.offset == y.offset));
        let writes = a.iter().filter(|r| r.op == Op::Write).count() as f64 / a.len() as f64;
        assert!((writes - 0.3).abs() < 0.02, "{writes}");
        assert!(a.iter().all(|r| (1..=4).contains(&r.pid) && r.length == 4096 && r.offset % 4096 == 0 && r.offset < 1000 * 4096));
        assert_eq!(a[5].time_ns, 500_000);
    }

    #[test]
    fn write_ratio_extremes() {
        let c = Common { requests: 2000, objects: 10, write_ratio: 1.0, ..Default::default() };
        assert!(gen("uniform", &c, "").iter().all(|r| r.op == Op::Write));
        let c = Common { write_ratio: 0.0, ..c };
        assert!(gen("uniform", &c, "").iter().all(|r| r.op == Op::Read));
    }

    #[test]
    fn files_are_consistent() {
        let c = Common { requests: 5000, objects: 1003, files: 10, object_size: 512, ..Default::default() };
        let v = gen("uniform", &c, "");
        let mut sizes = std::collections::HashMap::new();
        for r in &v {
            let f = r.file.unwrap();
            let size = f.size.unwrap();
            assert!(f.offset + r.length <= size);
            assert_eq!(*sizes.entry(f.id).or_insert(size), size);
            // The file's bytes are one run of the device.
            assert_eq!(r.offset - f.offset, f.id * 101 * 512);
        }
        assert_eq!(sizes.len(), 10);
        assert_eq!(sizes[&9], (1003 - 9 * 101) * 512);
    }

    #[test]
    fn poisson_arrivals() {
        let c = Common { requests: 20_000, objects: 10, arrival: Arrival::Poisson { mean_ns: 1000.0 }, ..Default::default() };
        let v = gen("uniform", &c, "");
        assert_eq!(v[0].time_ns, 0);
        assert!(v.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
        let mean = v.last().unwrap().time_ns as f64 / (v.len() - 1) as f64;
        assert!((mean - 1000.0).abs() < 30.0, "{mean}");
    }

    #[test]
    fn bad_settings() {
        let e = build("zipf", &Common::default(), GenParams::parse("zipf", "alpah=1").unwrap()).err().unwrap().to_string();
        assert!(e.contains("zipf.alpah") && e.contains("alpha"), "{e}");
        let e = build("nope", &Common::default(), GenParams::default()).err().unwrap().to_string();
        assert!(e.contains("zipf") && e.contains("uniform"), "{e}");
        assert!(build("uniform", &Common { write_ratio: 1.5, ..Default::default() }, GenParams::default()).is_err());
        assert!(build("uniform", &Common { objects: 0, ..Default::default() }, GenParams::default()).is_err());
    }
}
