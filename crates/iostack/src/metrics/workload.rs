//! Whole-trace characterisation: what `iostack analyze` reports.
//!
//! One pass over the trace, no simulation. Besides the locality of Fox, Lojpur and Wang
//! (stack and block distance and affinity, Sections 2 and 3, through a [`LocalityProbe`]) it
//! gathers the aggregate statistics their Section 2.5 lists as the usual description of a
//! workload: footprint (unique bytes), read/write mix, request sizes, sequential runs, reuse
//! distances, and the working set over time. The LRU miss-ratio curve of every cache size comes
//! from the stack-distance histogram (Mattson's stack algorithm, [`super::mrc`]); in block mode
//! it is given both per block and per request (a request hits when all its blocks hit, the
//! request-level count of the miss-ratio engine), both equal to LRU simulation at every size.

use serde::{Deserialize, Serialize};

use super::characterise::{Characterisation, Characteriser};
use super::affinity::{log2_bucket, log2_buckets, Affinity, Bucket, DistanceDistribution};
use super::mrc::{MissRatioCurve, MrcPoint};
use super::shards::{MrcSampling, SampledMrc, SamplingReport};
use crate::trace::devices::{DenseDevices, DeviceTable, KeySpace};
use super::probe::{Granularity, LocalityProbe, LocalityReport, ProbeConfig};
use super::series::IntervalSpec;
use super::stack_distance::FirstReference;
use crate::error::{ConfigError, Error};
use crate::trace::{Op, Request, TraceReader};

/// How to analyse a trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnalysisConfig {
    /// Units of analysis: `Bytes(page_size)` is block mode, `Object` the miss-ratio engine's
    /// object mode with unit sizes, `File` whole files.
    pub granularity: Granularity,
    pub first_reference: FirstReference,
    pub interval: IntervalSpec,
    /// Cache sizes (in units) at which to report the miss-ratio curve; `None` for the default
    /// (powers of two up to the size where only first references miss).
    pub mrc_sizes: Option<Vec<u64>>,
    /// Estimate the curve from a hash-sampled stream (SHARDS, [`super::shards`]) instead of
    /// every reference; `None` for the exact curve.
    #[serde(default)]
    pub mrc_sampling: Option<MrcSampling>,
}

impl Default for AnalysisConfig {
    fn default() -> Self {
        AnalysisConfig { granularity: Granularity::Bytes(4096), first_reference: FirstReference::Distinct, interval: IntervalSpec::Auto, mrc_sizes: None, mrc_sampling: None }
    }
}

/// Reads and writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct OpMix {
    pub reads: u64,
    pub writes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Reads over all requests (`null` for an empty trace).
    pub read_fraction: Option<f64>,
    /// Bytes read over all bytes requested (`null` when no bytes were requested).
    #[serde(default)]
    pub read_byte_fraction: Option<f64>,
}

/// Request sizes in bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SizeStats {
    pub mean: Option<f64>,
    pub median: Option<f64>,
    pub min: Option<u64>,
    pub max: Option<u64>,
    /// Log2 buckets of the request length in bytes.
    pub histogram: Vec<Bucket>,
}

/// Runs of requests that each start where the previous one ended on the same device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SequentialStats {
    pub runs: u64,
    /// Requests that continue the previous one.
    pub sequential_requests: u64,
    pub sequential_fraction: Option<f64>,
    /// Mean run length in requests (a lone request is a run of 1).
    pub mean_run_requests: Option<f64>,
    pub mean_run_bytes: Option<f64>,
    pub longest_run_requests: u64,
    /// Log2 buckets of run lengths in requests.
    pub run_length_histogram: Vec<Bucket>,
}

/// Everything `iostack analyze` reports about a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnalysisReport {
    pub trace: String,
    /// `block`, `object` or `file`.
    pub mode: String,
    /// Bytes per unit in block mode.
    pub page_size: Option<u64>,
    pub requests: u64,
    /// Malformed records skipped (with `--skip-invalid`).
    pub skipped_invalid: u64,
    pub first_time_ns: Option<u64>,
    pub last_time_ns: Option<u64>,
    pub devices: u64,
    pub ops: OpMix,
    pub request_size: SizeStats,
    /// Distinct units referenced.
    pub footprint_units: u64,
    /// Distinct units times the page size (block mode only).
    pub footprint_bytes: Option<u64>,
    pub sequential: SequentialStats,
    pub stack_affinity: Affinity,
    pub block_affinity: Affinity,
    /// LRU miss ratio per unit (block or object) at each requested cache size.
    pub mrc: Vec<MrcPoint>,
    /// Block mode: LRU miss ratio per request (a request hits when all its blocks hit); not
    /// estimated from a sample (`null` with `mrc_sampling`).
    pub mrc_requests: Option<Vec<MrcPoint>>,
    /// How `mrc` was sampled; `null` for the exact curve.
    #[serde(default)]
    pub mrc_sampling: Option<SamplingReport>,
    /// Distances, histograms and the series over time.
    pub locality: LocalityReport,
    /// Popularity, inter-arrival and reuse times, activity over time, processes.
    #[serde(flatten)]
    pub characterisation: Characterisation,
}

/// Accumulates an [`AnalysisReport`] request by request.
pub struct WorkloadAnalyzer {
    config: AnalysisConfig,
    probe: LocalityProbe,
    /// Per-request maximum stack distance (block mode).
    request_dist: DistanceDistribution,
    ops: OpMix,
    sizes: DistanceDistribution,
    size_min: u64,
    size_max: u64,
    first_time: Option<u64>,
    last_time: u64,
    devices: crate::cache::KeyMap<()>,
    /// End of the previous request and its device.
    prev_end: Option<(u32, u64)>,
    run_requests: u64,
    run_bytes: u64,
    runs: u64,
    run_bytes_total: u64,
    longest_run: u64,
    run_hist: [u64; 65],
    sequential_requests: u64,
    character: Characteriser,
    /// The sampled miss-ratio curve (`--mrc-sampling`).
    sampler: Option<SampledMrc>,
}

impl WorkloadAnalyzer {
    pub fn new(config: AnalysisConfig) -> Result<WorkloadAnalyzer, ConfigError> {
        if config.granularity == Granularity::Bytes(0) {
            return Err(ConfigError::new("--page-size", "the page size must be at least 1 byte"));
        }
        if let Some(s) = &config.mrc_sizes {
            if s.contains(&0) {
                return Err(ConfigError::new("--mrc-sizes", "cache sizes must be at least 1"));
            }
        }
        check_sampling(&config)?;
        let granularity = config.granularity;
        let sampler = config.mrc_sampling.map(|s| SampledMrc::new(s, granularity));
        let probe = LocalityProbe::new(ProbeConfig { granularity: config.granularity, first_reference: config.first_reference, interval: config.interval });
        Ok(WorkloadAnalyzer {
            config,
            probe,
            request_dist: DistanceDistribution::new(usize::MAX),
            ops: OpMix::default(),
            sizes: DistanceDistribution::new(1 << 17),
            size_min: u64::MAX,
            size_max: 0,
            first_time: None,
            last_time: 0,
            devices: Default::default(),
            prev_end: None,
            run_requests: 0,
            run_bytes: 0,
            runs: 0,
            run_bytes_total: 0,
            longest_run: 0,
            run_hist: [0; 65],
            sequential_requests: 0,
            character: Characteriser::new(granularity),
            sampler,
        })
    }

    /// One request of the trace.
    #[inline]
    pub fn feed(&mut self, r: &Request) {
        let loc = self.probe.observe_request(r);
        if let Some(s) = &mut self.sampler {
            s.observe_request(r);
        }
        self.character.feed(r, loc.max_stack_distance);
        if loc.references > 0 {
            match loc.max_stack_distance {
                Some(d) => self.request_dist.record(d),
                None => self.request_dist.record_first(),
            }
        }
        match r.op {
            Op::Read => {
                self.ops.reads += 1;
                self.ops.read_bytes += r.length;
            }
            Op::Write => {
                self.ops.writes += 1;
                self.ops.write_bytes += r.length;
            }
        }
        self.sizes.record_value(r.length);
        self.size_min = self.size_min.min(r.length);
        self.size_max = self.size_max.max(r.length);
        self.first_time.get_or_insert(r.time_ns);
        self.last_time = self.last_time.max(r.time_ns);
        if self.devices.len() < 1 << 20 {
            self.devices.insert(r.device as u64, ());
        }
        if self.prev_end == Some((r.device, r.offset)) {
            self.sequential_requests += 1;
            self.run_requests += 1;
            self.run_bytes += r.length;
        } else {
            self.close_run();
            self.run_requests = 1;
            self.run_bytes = r.length;
        }
        self.prev_end = Some((r.device, r.offset + r.length));
    }

    fn close_run(&mut self) {
        if self.run_requests > 0 {
            self.runs += 1;
            self.run_bytes_total += self.run_bytes;
            self.longest_run = self.longest_run.max(self.run_requests);
            self.run_hist[log2_bucket(self.run_requests)] += 1;
        }
        self.run_requests = 0;
        self.run_bytes = 0;
    }

    /// The probe (for its stack distances).
    pub fn probe(&self) -> &LocalityProbe {
        &self.probe
    }

    /// The report; `trace` names the input, `skipped` counts skipped malformed records.
    pub fn report(mut self, trace: &str, skipped: u64) -> AnalysisReport {
        self.close_run();
        let requests = self.ops.reads + self.ops.writes;
        self.ops.read_fraction = (requests > 0).then(|| self.ops.reads as f64 / requests as f64);
        let bytes = self.ops.read_bytes + self.ops.write_bytes;
        self.ops.read_byte_fraction = (bytes > 0).then(|| self.ops.read_bytes as f64 / bytes as f64);
        let locality = self.probe.report();
        let (mrc, mrc_sampling, sizes) = match &self.sampler {
            Some(s) => {
                let curve = s.curve();
                let sizes = self.config.mrc_sizes.clone().unwrap_or_else(|| curve.default_sizes());
                (curve.points(&sizes), s.report(), sizes)
            }
            None => {
                let curve = MissRatioCurve::from_distances(self.probe.stack_distances());
                let sizes = self.config.mrc_sizes.clone().unwrap_or_else(|| curve.default_sizes());
                (curve.points(&sizes), None, sizes)
            }
        };
        let (mode, page_size) = mode_of(self.config.granularity);
        let mrc_requests = match (page_size, &mrc_sampling) {
            (Some(_), None) => Some(MissRatioCurve::from_distances(&self.request_dist).points(&sizes)),
            _ => None,
        };
        let seq_runs = self.runs;
        AnalysisReport {
            trace: trace.to_string(),
            mode: mode.to_string(),
            page_size,
            requests,
            skipped_invalid: skipped,
            first_time_ns: self.first_time,
            last_time_ns: self.first_time.map(|_| self.last_time),
            devices: self.devices.len() as u64,
            ops: self.ops,
            request_size: SizeStats {
                mean: self.sizes.mean(None),
                median: self.sizes.median(None),
                min: (requests > 0).then_some(self.size_min),
                max: (requests > 0).then_some(self.size_max),
                histogram: log2_buckets(self.sizes.log2_counts()),
            },
            footprint_units: locality.distinct_units,
            footprint_bytes: page_size.map(|p| p * locality.distinct_units),
            sequential: SequentialStats {
                runs: seq_runs,
                sequential_requests: self.sequential_requests,
                sequential_fraction: (requests > 0).then(|| self.sequential_requests as f64 / requests as f64),
                mean_run_requests: (seq_runs > 0).then(|| requests as f64 / seq_runs as f64),
                mean_run_bytes: (seq_runs > 0).then(|| self.run_bytes_total as f64 / seq_runs as f64),
                longest_run_requests: self.longest_run,
                run_length_histogram: log2_buckets(&self.run_hist),
            },
            stack_affinity: locality.stack_affinity,
            block_affinity: locality.block_affinity,
            mrc,
            mrc_requests,
            mrc_sampling,
            locality,
            characterisation: self.character.report(),
        }
    }
}

/// How many requests ahead the stack entry of a request is prefetched.
const PREFETCH_DISTANCE: usize = 8;

/// `block`, `object` or `file`, and the page size in block mode.
fn mode_of(granularity: Granularity) -> (&'static str, Option<u64>) {
    match granularity {
        Granularity::Bytes(p) => ("block", Some(p)),
        Granularity::Object => ("object", None),
        Granularity::File => ("file", None),
    }
}

fn check_sampling(config: &AnalysisConfig) -> Result<(), ConfigError> {
    match &config.mrc_sampling {
        Some(s) => s.validate("--mrc-sampling"),
        None => Ok(()),
    }
}

/// Reads every request of `reader`, devices numbered densely (keys hold a 16-bit device number,
/// so devices are numbered in the order they appear), and gives each batch to `f`; returns the
/// trace's name and the malformed records skipped.
fn read_batches(reader: &mut dyn TraceReader, granularity: Granularity, mut f: impl FnMut(&[Request])) -> Result<(String, u64), Error> {
    let space = match granularity {
        Granularity::Bytes(unit) => KeySpace::Blocks(unit),
        Granularity::Object | Granularity::File => KeySpace::Offsets,
    };
    let reader = &mut DenseDevices::new(reader, &DeviceTable::new(), space);
    let mut buf = Vec::with_capacity(1 << 14);
    loop {
        buf.clear();
        if reader.read_batch(&mut buf, 1 << 14)? == 0 {
            break;
        }
        f(&buf);
    }
    Ok((reader.path().display().to_string(), reader.skipped()))
}

/// Analyses a whole trace.
pub fn analyze(reader: &mut dyn TraceReader, config: AnalysisConfig) -> Result<AnalysisReport, Error> {
    let granularity = config.granularity;
    let mut a = WorkloadAnalyzer::new(config)?;
    let (name, skipped) = read_batches(reader, granularity, |buf| {
        for (i, r) in buf.iter().enumerate() {
            if let Some(ahead) = buf.get(i + PREFETCH_DISTANCE) {
                a.probe.prefetch(&a.probe.record(ahead));
            }
            a.feed(r);
        }
    })?;
    Ok(a.report(&name, skipped))
}

/// The miss-ratio curve alone (`iostack analyze --mrc-only`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CurveReport {
    pub trace: String,
    pub mode: String,
    pub page_size: Option<u64>,
    pub requests: u64,
    pub skipped_invalid: u64,
    /// References in units of the analysis.
    pub references: u64,
    /// LRU miss ratio per unit at each cache size.
    pub mrc: Vec<MrcPoint>,
    /// How `mrc` was sampled; `null` for the exact curve.
    pub mrc_sampling: Option<SamplingReport>,
}

/// The LRU miss-ratio curve of a trace and nothing else: one stack query per reference (per
/// sampled reference with `mrc_sampling`), none of the other metrics of [`analyze`], so its
/// time and memory are those of the curve alone. `first_reference` and `interval` are unused.
pub fn miss_ratio_curve(reader: &mut dyn TraceReader, config: AnalysisConfig) -> Result<CurveReport, Error> {
    if config.granularity == Granularity::Bytes(0) {
        return Err(ConfigError::new("--page-size", "the page size must be at least 1 byte").into());
    }
    check_sampling(&config)?;
    if config.mrc_sizes.as_ref().is_some_and(|s| s.contains(&0)) {
        return Err(ConfigError::new("--mrc-sizes", "cache sizes must be at least 1").into());
    }
    let mut m = match config.mrc_sampling {
        Some(s) => SampledMrc::new(s, config.granularity),
        None => SampledMrc::exact(config.granularity),
    };
    let mut requests = 0u64;
    let (name, skipped) = read_batches(reader, config.granularity, |buf| {
        requests += buf.len() as u64;
        for r in buf {
            m.observe_request(r);
        }
    })?;
    let curve = m.curve();
    let sizes = config.mrc_sizes.clone().unwrap_or_else(|| curve.default_sizes());
    let (mode, page_size) = mode_of(config.granularity);
    Ok(CurveReport {
        trace: name,
        mode: mode.to_string(),
        page_size,
        requests,
        skipped_invalid: skipped,
        references: m.references(),
        mrc: curve.points(&sizes),
        mrc_sampling: m.report(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::sim::{simulate, Mode};
    use crate::trace::VecReader;

    fn zipfish(n: usize, seed: u64) -> Vec<Request> {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        (0..n)
            .map(|i| {
                let x: f64 = rng.gen();
                let block = (x.powi(4) * 5000.0) as u64;
                let len = 512 * rng.gen_range(1..=20u64);
                let mut r = Request::read(block * 4096 + rng.gen_range(0..8) * 512, len).at(i as u64 * 1000);
                if rng.gen_bool(0.3) {
                    r.op = Op::Write;
                }
                r.device = rng.gen_range(0..2);
                r
            })
            .collect()
    }

    #[test]
    fn mrc_equals_lru_simulation_in_both_modes() {
        let reqs = zipfish(30_000, 5);
        let sizes = vec![1, 7, 64, 300, 1000, 4000, 20_000];
        for (g, mode) in [(Granularity::Object, Mode::Object { unit_size: true }), (Granularity::Bytes(4096), Mode::Block { page_size: 4096 }), (Granularity::Bytes(512), Mode::Block { page_size: 512 })] {
            let cfg = AnalysisConfig { granularity: g, mrc_sizes: Some(sizes.clone()), ..Default::default() };
            let rep = analyze(&mut VecReader::new(reqs.clone()), cfg).unwrap();
            for (i, &c) in sizes.iter().enumerate() {
                let sim = simulate(&mut VecReader::new(reqs.clone()), "lru", c, mode).unwrap();
                match mode {
                    Mode::Object { .. } => assert_eq!(rep.mrc[i].misses, sim.requests - sim.hits, "{g:?} size {c}"),
                    Mode::Block { .. } => {
                        assert_eq!(rep.mrc[i].misses, sim.blocks - sim.block_hits, "{g:?} size {c}");
                        assert_eq!(rep.mrc_requests.as_ref().unwrap()[i].misses, sim.requests - sim.hits, "{g:?} size {c}");
                    }
                }
            }
        }
    }

    #[test]
    fn sampled_and_curve_only_analyses() {
        let reqs = zipfish(30_000, 8);
        let sizes = vec![1, 7, 64, 300, 1000, 4000, 20_000];
        for g in [Granularity::Object, Granularity::Bytes(4096), Granularity::Bytes(512)] {
            let exact = analyze(&mut VecReader::new(reqs.clone()), AnalysisConfig { granularity: g, mrc_sizes: Some(sizes.clone()), ..Default::default() }).unwrap();
            assert!(exact.mrc_sampling.is_none());
            // Rate 1 samples every key: the exact curve, reported as sampled.
            let cfg = AnalysisConfig { granularity: g, mrc_sizes: Some(sizes.clone()), mrc_sampling: Some(MrcSampling::Rate { rate: 1.0, seed: 3 }), ..Default::default() };
            let one = analyze(&mut VecReader::new(reqs.clone()), cfg.clone()).unwrap();
            assert_eq!(one.mrc, exact.mrc, "{g:?}");
            assert_eq!(one.mrc_requests, None);
            let s = one.mrc_sampling.as_ref().unwrap();
            assert_eq!((s.kind.as_str(), s.rate, s.references, s.sampled_references), ("rate", 1.0, exact.locality.references, exact.locality.references));
            // Everything but the curve is the exact analysis.
            assert_eq!(one.locality, exact.locality);
            // The curve alone: the same points, exact or sampled.
            let alone = miss_ratio_curve(&mut VecReader::new(reqs.clone()), cfg).unwrap();
            assert_eq!(alone.mrc, exact.mrc);
            assert_eq!((alone.requests, alone.references), (exact.requests, exact.locality.references));
            let alone = miss_ratio_curve(&mut VecReader::new(reqs.clone()), AnalysisConfig { granularity: g, mrc_sizes: Some(sizes.clone()), ..Default::default() }).unwrap();
            assert_eq!(alone.mrc, exact.mrc);
            assert!(alone.mrc_sampling.is_none());
            let half = AnalysisConfig { granularity: g, mrc_sizes: Some(sizes.clone()), mrc_sampling: Some(MrcSampling::Size { keys: 500, seed: 0 }), ..Default::default() };
            let a = analyze(&mut VecReader::new(reqs.clone()), half.clone()).unwrap();
            let b = miss_ratio_curve(&mut VecReader::new(reqs.clone()), half).unwrap();
            assert_eq!(a.mrc, b.mrc);
            assert_eq!(a.mrc_sampling, b.mrc_sampling);
            assert!(a.mrc_sampling.unwrap().rate < 1.0);
        }
        let bad = AnalysisConfig { mrc_sampling: Some(MrcSampling::Rate { rate: f64::NAN, seed: 0 }), ..Default::default() };
        assert!(analyze(&mut VecReader::new(vec![]), bad.clone()).unwrap_err().to_string().contains("--mrc-sampling"));
        assert!(miss_ratio_curve(&mut VecReader::new(vec![]), bad).unwrap_err().to_string().contains("--mrc-sampling"));
    }

    #[test]
    fn aggregate_statistics() {
        let mut reqs = vec![Request::read(0, 4096), Request::read(4096, 4096), Request::read(8192, 8192), Request::read(0, 512)];
        reqs[1].op = Op::Write;
        let rep = analyze(&mut VecReader::new(reqs), AnalysisConfig::default()).unwrap();
        assert_eq!(rep.requests, 4);
        assert_eq!((rep.ops.reads, rep.ops.writes, rep.ops.write_bytes), (3, 1, 4096));
        assert_eq!(rep.footprint_units, 4);
        assert_eq!(rep.footprint_bytes, Some(4 * 4096));
        assert_eq!(rep.sequential.runs, 2);
        assert_eq!(rep.sequential.sequential_requests, 2);
        assert_eq!(rep.sequential.longest_run_requests, 3);
        assert_eq!(rep.request_size.max, Some(8192));
        assert_eq!(rep.request_size.median, Some(4096.0));
    }

    #[test]
    fn empty_trace() {
        let rep = analyze(&mut VecReader::new(vec![]), AnalysisConfig::default()).unwrap();
        assert_eq!(rep.stack_affinity, Affinity { mean: None, median: None });
        assert_eq!(rep.block_affinity, Affinity { mean: None, median: None });
        assert!(rep.mrc.iter().all(|p| p.misses == 0));
        let v = serde_json::to_value(&rep).unwrap();
        assert!(v["stack_affinity"]["mean"].is_null());
    }
}
