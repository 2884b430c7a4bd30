//! A locality probe: a passive observer of the request stream crossing one boundary.
//!
//! Fox, Lojpur and Wang measure stack and block affinity "at the data path front end before
//! going through the file system cache, and at the back end before requests are forwarded to
//! disk" (Section 4), and read the transformation each component makes from the difference
//! (Sections 5 and 9). A [`LocalityProbe`] is that measuring point: give it each request that
//! crosses the boundary (offset, length, time, device) and ask for a [`LocalityReport`] at the
//! end. It never changes the stream. The timed engine puts one at the front end, after the page
//! cache, after the scheduler and at the device:
//!
//! ```
//! use iostack::metrics::{LocalityProbe, ProbeConfig, Granularity};
//! let mut front = LocalityProbe::new(ProbeConfig { granularity: Granularity::Bytes(4096), ..Default::default() });
//! front.observe(0, 8192, 0, 0);
//! front.observe(4096, 4096, 1_000, 0);
//! let report = front.report();
//! assert_eq!(report.references, 3);
//! assert_eq!(report.stack_distance.histogram[0].count, 1); // the second 4 KiB block again, on top
//! ```
//!
//! Granularity (Section 3): the stream is analysed in units of 512-byte sectors, 4 KiB blocks,
//! larger blocks, or whole files. A request covering several units is one reference per unit, in
//! order (see [`super::block_distance`]); at file granularity a request is one reference to its
//! file, positioned on the disk at the file's first block (the request's device offset minus its
//! offset within the file, in 4 KiB blocks), and requests without a file are counted apart.
//!
//! Per reference the probe pays one hash lookup and one O(log n) stack-distance query
//! ([`super::stack_distance`]); memory is proportional to the number of distinct units.

use serde::{Deserialize, Serialize};

use super::affinity::{affinity_fast, Affinity, DistanceDistribution, DistanceSummary};
use super::block_distance::BlockDistance;
use super::probe_request::{ProbeRequest, Recorder};
use super::recent_affinity::RecentAffinities;
use super::series::{IntervalSpec, Series, SeriesReport};
use super::stack_distance::{FirstReference, StackDistance};
use crate::cache::block_key;
use crate::trace::devices::object_key_of;
use crate::trace::{PageSize, Request};

/// The unit references are counted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "bytes")]
pub enum Granularity {
    /// Units of this many bytes (512: sectors; 4096: blocks; more: larger blocks).
    Bytes(u64),
    /// Whole files (requests must carry a [`crate::trace::FileRef`]).
    File,
    /// One reference per request, keyed by its start offset whatever its length (the object
    /// mode of the miss-ratio engine, libCacheSim's view of a block trace); positions for block
    /// distance in 4 KiB blocks.
    Object,
}

impl Default for Granularity {
    fn default() -> Self {
        Granularity::Bytes(4096)
    }
}

/// Position unit of files at file granularity.
pub const FILE_POSITION_UNIT: u64 = 4096;

impl Granularity {
    /// Parses `sector`, `block`, `file`, or a size (`4096`, `64KiB`).
    pub fn parse(option: &str, text: &str) -> Result<Granularity, crate::ConfigError> {
        match text.trim() {
            "sector" => Ok(Granularity::Bytes(512)),
            "block" | "page" => Ok(Granularity::Bytes(4096)),
            "file" => Ok(Granularity::File),
            "object" => Ok(Granularity::Object),
            t => match crate::units::Size::parse(option, t)? {
                crate::units::Size::Count(0) | crate::units::Size::Bytes(0) => Err(crate::ConfigError::new(option, "the unit must be at least 1 byte")),
                crate::units::Size::Count(n) | crate::units::Size::Bytes(n) => Ok(Granularity::Bytes(n)),
            },
        }
    }

    /// A short name for reports: `512B`, `4096B`, `file`.
    pub fn label(&self) -> String {
        match self {
            Granularity::Bytes(n) => format!("{n}B"),
            Granularity::File => "file".to_string(),
            Granularity::Object => "object".to_string(),
        }
    }
}

/// How a probe measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct ProbeConfig {
    pub granularity: Granularity,
    pub first_reference: FirstReference,
    pub interval: IntervalSpec,
}

/// Per-key state kept next to the stack entry.
#[derive(Debug, Clone, Copy, Default)]
struct KeyInfo {
    /// Index of the key's previous reference, plus one.
    last_ref: u64,
    /// Base interval of the previous reference, plus one ([`Series::reference`]).
    last_interval: u64,
}

/// What one request looked like to the probe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestLocality {
    /// References (units) the request made; 0 when it was not counted (no file at file
    /// granularity).
    pub references: u64,
    /// The largest stack distance among them, `None` if any was a first reference. An LRU cache
    /// of `c` units serves the whole request exactly when this is below `c`.
    pub max_stack_distance: Option<u64>,
}

/// What a probe accumulates for one stream (besides its stack).
#[derive(Clone)]
struct StreamState {
    block: BlockDistance,
    stack_dist: DistanceDistribution,
    block_dist: DistanceDistribution,
    reuse_dist: DistanceDistribution,
    series: Series,
    /// Affinities of the latest references, for the probe's other streams (`N` > 1).
    recent: RecentAffinities,
    requests: u64,
    references: u64,
    bytes: u64,
    without_file: u64,
}

impl StreamState {
    /// The state of a stream of a probe of `streams` streams.
    fn new(config: &ProbeConfig, streams: usize) -> StreamState {
        let mut st = StreamState {
            block: BlockDistance::new(),
            stack_dist: DistanceDistribution::new(usize::MAX),
            block_dist: DistanceDistribution::new(1 << 16),
            reuse_dist: DistanceDistribution::new(1 << 16),
            series: Series::new(config.interval),
            recent: RecentAffinities::default(),
            requests: 0,
            references: 0,
            bytes: 0,
            without_file: 0,
        };
        st.share_affinities(streams);
        st
    }

    /// Keeps the affinities of its latest references where the probe has other streams.
    fn share_affinities(&mut self, streams: usize) {
        if streams > 1 {
            self.recent.start();
        }
    }
}

/// Observes a request stream and measures its locality. A clone measures on from the same
/// state (how boundaries that saw the same stream until they diverged share one probe).
///
/// A probe of `N` > 1 streams measures `N` streams at once, each exactly as a probe of its own
/// would (`*_in` methods, stream `0..N`), with one key table for all
/// ([`StackDistance`] of `N` streams): streams of the same data seen at neighbouring boundaries
/// then pay the cache miss on a key's entry once. The methods without a stream act on stream 0.
#[derive(Clone)]
pub struct LocalityProbe<const N: usize = 1> {
    config: ProbeConfig,
    /// The unit at byte granularity, with its shift decided once (a 64-bit division per
    /// request costs tens of cycles).
    unit: PageSize,
    recorder: Recorder,
    stack: StackDistance<KeyInfo, N>,
    streams: [StreamState; N],
    /// Inside [`LocalityProbe::observe_batch_in`]: exact counts are deferred to the end of the
    /// batch.
    batching: bool,
}

impl LocalityProbe {
    pub fn new(config: ProbeConfig) -> LocalityProbe {
        Self::with_streams(config)
    }
}

impl<const N: usize> LocalityProbe<N> {
    /// A probe of `N` streams.
    pub fn with_streams(config: ProbeConfig) -> LocalityProbe<N> {
        let config = ProbeConfig { granularity: match config.granularity { Granularity::Bytes(0) => Granularity::Bytes(1), g => g }, ..config };
        let unit = PageSize::new(match config.granularity {
            Granularity::Bytes(u) => u,
            Granularity::File | Granularity::Object => FILE_POSITION_UNIT,
        });
        LocalityProbe { config, unit, recorder: Recorder::new(&config), stack: StackDistance::streams(), streams: std::array::from_fn(|_| StreamState::new(&config, N)), batching: false }
    }

    pub fn config(&self) -> &ProbeConfig {
        &self.config
    }

    /// One request crossing the boundary: `length` bytes at byte `offset` of `device`, at
    /// `time_ns`. At file granularity use [`LocalityProbe::observe_request`], which knows the file.
    #[inline]
    pub fn observe(&mut self, offset: u64, length: u64, time_ns: u64, device: u32) -> RequestLocality {
        let mut r = Request::read(offset, length).at(time_ns);
        r.device = device;
        self.observe_request(&r)
    }

    /// One request crossing the boundary.
    #[inline]
    pub fn observe_request(&mut self, r: &Request) -> RequestLocality {
        self.observe_request_in(0, r)
    }

    /// One request of stream `s`.
    #[inline]
    pub fn observe_request_in(&mut self, s: usize, r: &Request) -> RequestLocality {
        let rec = self.recorder.record(r);
        self.observe_in(s, &rec)
    }

    /// The record of `r` this probe reads ([`ProbeRequest::of`] with its configuration).
    #[inline]
    pub fn record(&self, r: &Request) -> ProbeRequest {
        self.recorder.record(r)
    }

    /// One request of stream `s`, as its record ([`LocalityProbe::record`]).
    #[inline(always)]
    pub fn observe_in(&mut self, s: usize, r: &ProbeRequest) -> RequestLocality {
        let (first, end) = match self.config.granularity {
            Granularity::Bytes(_) => self.unit.span(r.offset, r.length),
            Granularity::Object => {
                let st = &mut self.streams[s];
                st.requests += 1;
                st.bytes += r.length;
                st.series.begin_request(r.time_ns);
                let bd = st.block.access(r.device, r.offset / FILE_POSITION_UNIT);
                let d = self.reference(s, object_key_of(r.offset, r.device), bd);
                return RequestLocality { references: 1, max_stack_distance: d };
            }
            Granularity::File => {
                if !r.counted {
                    self.streams[s].without_file += 1;
                    return RequestLocality { references: 0, max_stack_distance: Some(0) };
                }
                let start = r.offset / FILE_POSITION_UNIT;
                let st = &mut self.streams[s];
                st.requests += 1;
                st.bytes += r.length;
                st.series.begin_request(r.time_ns);
                let bd = st.block.access(r.device, start);
                let d = self.reference(s, r.file, bd);
                return RequestLocality { references: 1, max_stack_distance: d };
            }
        };
        let st = &mut self.streams[s];
        st.requests += 1;
        st.bytes += r.length;
        st.series.begin_request(r.time_ns);
        let mut bd = st.block.access_range(r.device, first, end);
        let mut max = Some(0u64);
        for b in first..end {
            let d = self.reference(s, block_key(r.device, b), bd);
            max = match (max, d) {
                (Some(m), Some(d)) => Some(m.max(d)),
                _ => None,
            };
            bd = 1;
        }
        RequestLocality { references: end - first, max_stack_distance: max }
    }

    #[inline(always)]
    fn reference(&mut self, s: usize, key: u64, block_distance: u64) -> Option<u64> {
        let index = self.streams[s].references;
        self.streams[s].references += 1;
        let (d, info) = self.stack.access_in(s, key);
        // Another stream of this probe is the same data at a neighbouring boundary: its
        // reference `index` most often had the same distances, whose affinities it kept.
        let (stack_affinity, block_affinity) = if N > 1 {
            let other = &self.streams[(s + 1) % N].recent;
            (d.map(|d| other.stack_affinity(index, d)), other.block_affinity(index, block_distance))
        } else {
            (d.map(affinity_fast), affinity_fast(block_distance))
        };
        let st = &mut self.streams[s];
        if N > 1 {
            st.recent.remember(index, d.unwrap_or(0), stack_affinity.unwrap_or(0.0), block_distance, block_affinity);
        }
        match (d, stack_affinity) {
            (Some(d), Some(a)) => {
                if self.batching {
                    st.stack_dist.record_deferred(d, a);
                } else {
                    st.stack_dist.record_with_affinity(d, a);
                }
                // References strictly between the two uses.
                if self.batching {
                    st.reuse_dist.record_deferred(index - info.last_ref, 0.0);
                } else {
                    st.reuse_dist.record_value(index - info.last_ref);
                }
            }
            _ => {
                st.stack_dist.record_first();
                st.reuse_dist.record_first();
            }
        }
        info.last_ref = index + 1;
        info.last_interval = st.series.reference(stack_affinity, block_affinity, info.last_interval);
        if self.batching {
            st.block_dist.record_deferred(block_distance, block_affinity);
        } else {
            st.block_dist.record_with_affinity(block_distance, block_affinity);
        }
        d
    }

    /// Observes a batch of requests in order (the same as [`LocalityProbe::observe_request`] on
    /// each), fetching each request's stack entry a few requests ahead so that the cache misses
    /// of cold keys overlap the work on the requests before, and adding the exact counts of the
    /// stack, block and reuse distances at the end of the batch
    /// ([`DistanceDistribution::record_deferred`]: each array spans hundreds of KiB to megabytes,
    /// so nearly every count would otherwise wait on memory).
    pub fn observe_batch(&mut self, batch: &[ProbeRequest]) {
        self.observe_batch_in(0, batch);
    }

    /// [`LocalityProbe::observe_batch`] on stream `s`.
    pub fn observe_batch_in(&mut self, s: usize, batch: &[ProbeRequest]) {
        self.batching = true;
        const AHEAD: usize = 8;
        for r in batch.iter().take(AHEAD) {
            self.prefetch(r);
        }
        for (i, r) in batch.iter().enumerate() {
            if let Some(next) = batch.get(i + AHEAD) {
                self.prefetch(next);
            }
            self.observe_in(s, r);
        }
        let st = &mut self.streams[s];
        st.stack_dist.apply_deferred();
        st.block_dist.apply_deferred();
        st.reuse_dist.apply_deferred();
        self.batching = false;
    }

    /// Hints the CPU to fetch the stack entry of the first unit of `r`, a request the caller
    /// will observe soon (callers holding a batch prefetch a few requests ahead).
    #[inline]
    pub fn prefetch(&self, r: &ProbeRequest) {
        let key = match self.config.granularity {
            Granularity::Bytes(_) => block_key(r.device, self.unit.page_of(r.offset)),
            Granularity::Object => object_key_of(r.offset, r.device),
            Granularity::File if r.counted => r.file,
            Granularity::File => return,
        };
        self.stack.prefetch(key);
    }

    /// Makes stream `to` measure on from where stream `from` is (as a clone of a probe of
    /// one stream would); `to` must not have observed anything.
    pub fn copy_stream(&mut self, from: usize, to: usize) {
        self.stack.copy_stream(from, to);
        self.streams[to] = self.streams[from].clone();
    }

    /// Makes stream `to` (which has observed nothing) measure on from where stream `s` of
    /// `other`, a probe of the same configuration, is.
    pub fn adopt<const M: usize>(&mut self, to: usize, other: &LocalityProbe<M>, s: usize) {
        debug_assert_eq!(self.config, other.config);
        self.stack.adopt(to, &other.stack, s);
        self.streams[to] = other.streams[s].clone();
        self.streams[to].share_affinities(N);
    }

    /// The same probe with `M` >= `N` streams; streams `N..M` have observed nothing.
    pub fn widen<const M: usize>(&self) -> LocalityProbe<M> {
        LocalityProbe {
            config: self.config,
            unit: self.unit,
            recorder: self.recorder,
            stack: self.stack.widen(),
            streams: std::array::from_fn(|s| {
                let mut st = if s < N { self.streams[s].clone() } else { StreamState::new(&self.config, M) };
                st.share_affinities(M);
                st
            }),
            batching: false,
        }
    }

    /// Distinct units referenced so far.
    pub fn distinct(&self) -> u64 {
        self.stack.distinct_in(0)
    }

    /// The stack distances so far (for the miss-ratio curve).
    pub fn stack_distances(&self) -> &DistanceDistribution {
        &self.streams[0].stack_dist
    }

    /// The block distances so far.
    pub fn block_distances(&self) -> &DistanceDistribution {
        &self.streams[0].block_dist
    }

    /// Bytes of memory the probe holds.
    pub fn memory_bytes(&self) -> usize {
        self.stack.memory_bytes() + self.streams.iter().map(|st| st.stack_dist.exact_counts().len() * 8).sum::<usize>()
    }

    /// The locality of the stream seen so far.
    pub fn report(&self) -> LocalityReport {
        self.report_of(0)
    }

    /// The locality of stream `s` so far.
    pub fn report_of(&self, s: usize) -> LocalityReport {
        let st = &self.streams[s];
        let distinct = self.stack.distinct_in(s);
        let first = self.config.first_reference;
        let m = first.max_value(distinct);
        LocalityReport {
            granularity: self.config.granularity,
            first_reference: first,
            requests: st.requests,
            references: st.references,
            bytes: st.bytes,
            distinct_units: distinct,
            footprint_bytes: match self.config.granularity {
                Granularity::Bytes(u) => Some(distinct * u),
                Granularity::File | Granularity::Object => None,
            },
            without_file: st.without_file,
            stack_affinity: st.stack_dist.affinity(m),
            // Block distance has no first references: the first is measured from block 0.
            block_affinity: st.block_dist.affinity(None),
            stack_distance: st.stack_dist.summary(first, distinct),
            block_distance: st.block_dist.summary(FirstReference::Exclude, distinct),
            reuse_distance: st.reuse_dist.summary(FirstReference::Exclude, distinct),
            series: st.series.report(first, distinct),
        }
    }
}

/// The locality of one request stream (serializable; affinities of an empty stream are `null`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LocalityReport {
    pub granularity: Granularity,
    pub first_reference: FirstReference,
    pub requests: u64,
    /// References in units of the granularity.
    pub references: u64,
    pub bytes: u64,
    pub distinct_units: u64,
    /// Distinct units times the unit size (`null` at file granularity).
    pub footprint_bytes: Option<u64>,
    /// Requests without a file, not counted at file granularity.
    pub without_file: u64,
    pub stack_affinity: Affinity,
    pub block_affinity: Affinity,
    pub stack_distance: DistanceSummary,
    pub block_distance: DistanceSummary,
    /// References between two uses of the same unit (first references left out).
    pub reuse_distance: DistanceSummary,
    pub series: SeriesReport,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(seq: &[u64]) -> LocalityReport {
        let mut p = LocalityProbe::new(ProbeConfig { granularity: Granularity::Bytes(1), ..Default::default() });
        for &b in seq {
            p.observe(b, 1, 0, 0);
        }
        p.report()
    }

    #[test]
    fn paper_block_affinity_examples() {
        // Section 3: 1..5, 1001..1005 "yields a 90% spatial locality"; 1, 50, ..., 450 "61%".
        let a = blocks(&[1, 2, 3, 4, 5, 1001, 1002, 1003, 1004, 1005]);
        let m = a.block_affinity.mean.unwrap();
        assert!((m - 0.90).abs() < 0.005, "{m}");
        // The paper's mean block distance for this stream is 100.5 (Section 2.1).
        assert_eq!(a.block_distance.mean, Some(100.5));
        let mut seq = vec![1];
        seq.extend((1..10).map(|i| i * 50));
        let b = blocks(&seq);
        let m = b.block_affinity.mean.unwrap();
        assert!((m - 0.60).abs() < 0.01, "{m}");
        assert_eq!(b.block_distance.mean, Some(45.0));
    }

    #[test]
    fn paper_stack_distance_example() {
        // Files A, B, C, then B (Figure 2.2): B's distance is 1.
        let mut p = LocalityProbe::new(ProbeConfig { granularity: Granularity::File, first_reference: FirstReference::Exclude, ..Default::default() });
        for (i, id) in [1u64, 2, 3, 2].into_iter().enumerate() {
            let mut r = Request::read(id * 1_000_000, 4096).at(i as u64);
            r.file = Some(crate::trace::FileRef { id, offset: 0, size: None });
            p.observe_request(&r);
        }
        let r = p.report();
        assert_eq!(r.stack_distance.first_references, 3);
        assert_eq!(r.stack_distance.median, Some(1.0));
        assert_eq!(r.stack_affinity.mean, Some(1.0 / 11f64.log10()));
    }

    #[test]
    fn empty_stream_has_no_affinity() {
        let p = LocalityProbe::new(ProbeConfig::default());
        let r = p.report();
        assert_eq!(r.stack_affinity.mean, None);
        assert_eq!(r.block_affinity.median, None);
        let json = serde_json::to_value(&r).unwrap();
        assert!(json["stack_affinity"]["mean"].is_null());
        assert!(json["block_affinity"]["median"].is_null());
    }

    #[test]
    fn multi_block_requests_are_one_reference_per_block() {
        let mut p = LocalityProbe::new(ProbeConfig { first_reference: FirstReference::Exclude, ..Default::default() });
        let a = p.observe(0, 16384, 0, 0); // blocks 0..4
        assert_eq!(a, RequestLocality { references: 4, max_stack_distance: None });
        let b = p.observe(4096, 8192, 1, 0); // blocks 1, 2: depths 2 and 2
        assert_eq!(b, RequestLocality { references: 2, max_stack_distance: Some(2) });
        let r = p.report();
        assert_eq!(r.references, 6);
        assert_eq!(r.distinct_units, 4);
        // Block distances: 0 (first at block 0), 1, 1, 1, |1 - 3| = 2, 1.
        assert_eq!(r.block_distance.mean, Some(6.0 / 6.0));
    }

    #[test]
    fn batches_measure_as_requests_one_at_a_time() {
        // Distances on both sides of the exact limits (65,536 for block and reuse distances).
        let requests: Vec<Request> = (0..30_000u64)
            .map(|i| Request::read((i * 7_919 % 90_000) * 4096 + (i % 3) * 1_000_000_000, 4096 * (1 + i % 4)).at(i))
            .collect();
        let mut one = LocalityProbe::new(ProbeConfig::default());
        for r in &requests {
            one.observe_request(r);
        }
        let mut batched = LocalityProbe::new(ProbeConfig::default());
        let records: Vec<ProbeRequest> = requests.iter().map(|r| batched.record(r)).collect();
        for chunk in records.chunks(777) {
            batched.observe_batch(chunk);
        }
        assert_eq!(batched.report(), one.report());
        assert_eq!(batched.block_distances().exact_counts(), one.block_distances().exact_counts());
    }

    #[test]
    fn streams_sharing_a_table_measure_as_probes_of_their_own() {
        // Stream 1 is stream 0 with neighbours swapped and a shift, in batches, forked from
        // stream 0 midway (copy_stream), then widened and adopted into another probe.
        let config = ProbeConfig::default();
        let a: Vec<ProbeRequest> =
            (0..20_000u64).map(|i| ProbeRequest::of(&Request::read((i * 7_919 % 70_000) * 4096, 4096 * (1 + i % 3)).at(i), &config)).collect();
        let mut b = a.clone();
        for i in (10_001..20_000).step_by(7) {
            b.swap(i, i - 1);
        }
        for r in &mut b[15_000..] {
            r.offset += 8192;
        }
        let own = |s: &[ProbeRequest]| {
            let mut p = LocalityProbe::new(ProbeConfig::default());
            for chunk in s.chunks(500) {
                p.observe_batch(chunk);
            }
            p.report()
        };
        let mut two = LocalityProbe::<2>::with_streams(ProbeConfig::default());
        for chunk in a[..10_000].chunks(500) {
            two.observe_batch_in(0, chunk);
        }
        two.copy_stream(0, 1);
        let mut one = LocalityProbe::new(ProbeConfig::default());
        for chunk in a[..10_000].chunks(500) {
            one.observe_batch(chunk);
        }
        let mut widened = one.widen::<2>();
        let mut adopted = LocalityProbe::<2>::with_streams(ProbeConfig::default());
        adopted.adopt(1, &one, 0);
        for (ca, cb) in a[10_000..].chunks(500).zip(b[10_000..].chunks(500)) {
            two.observe_batch_in(0, ca);
            two.observe_batch_in(1, cb);
            widened.observe_batch_in(0, cb);
            adopted.observe_batch_in(0, ca);
            adopted.observe_batch_in(1, cb);
        }
        assert_eq!(two.report_of(0), own(&a));
        assert_eq!(two.report_of(1), own(&b));
        assert_eq!(widened.report_of(0), own(&b));
        assert_eq!(widened.report_of(1).references, 0);
        // Adopted stream 1 continues `a`'s first half with `b`'s second; stream 0 measures
        // `a`'s second half alone.
        let mut cont = a[..10_000].to_vec();
        cont.extend_from_slice(&b[10_000..]);
        assert_eq!(adopted.report_of(1), own(&cont));
        assert_eq!(adopted.report_of(0), own(&a[10_000..]));
    }

    #[test]
    fn first_reference_options() {
        let seq = [1u64, 2, 1];
        let run = |f| {
            let mut p = LocalityProbe::new(ProbeConfig { granularity: Granularity::Bytes(1), first_reference: f, ..Default::default() });
            for &b in &seq {
                p.observe(b, 1, 0, 0);
            }
            p.report().stack_affinity.mean.unwrap()
        };
        let one = 1.0 / 11f64.log10();
        assert!((run(FirstReference::Exclude) - one).abs() < 1e-12);
        let with_max = |m: f64| (2.0 / (10.0 + m).log10() + one) / 3.0;
        assert!((run(FirstReference::Distinct) - with_max(2.0)).abs() < 1e-12);
        assert!((run(FirstReference::Max(1000)) - with_max(1000.0)).abs() < 1e-12);
    }
}
