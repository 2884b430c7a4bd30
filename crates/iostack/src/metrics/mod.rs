//! Counters and locality metrics.
//!
//! Locality metrics follow Fox, Lojpur and Wang, "Quantifying temporal and spatial localities in
//! storage workloads and transformations by data path components" (papers/004): stack distance
//! and block distance (Section 2), stack and block affinity (Section 3), measured by passive
//! probes at each boundary of the data path (Section 4).
//!
//! - [`stack_distance`]: LRU stack depth per reference in O(log n).
//! - [`block_distance`]: distance from the previous reference on the same device.
//! - [`affinity`]: `1 / log10(10 + d)`, and distance distributions (mean, median, histograms).
//! - [`series`]: affinities and working set per time or request interval.
//! - [`mrc`]: the LRU miss-ratio curve of every size from the stack-distance histogram.
//! - [`shards`]: the miss-ratio curve from a hash-sampled stream (SHARDS), fixed rate or size.
//! - [`probe`]: [`LocalityProbe`], the observer the engines place at each boundary.
//! - [`probe_request`]: [`probe_request::ProbeRequest`], the part of a request a probe reads.
//! - [`recent_affinity`]: affinities one stream of a probe computed, reused by another.
//! - [`characterise`]: popularity and its Zipf fit, reuse and inter-arrival times, activity and
//!   footprint over time, processes.
//! - [`workload`]: whole-trace characterisation behind `iostack analyze`.

pub mod affinity;
pub mod block_distance;
pub mod characterise;
pub mod mrc;
pub mod probe;
pub mod probe_request;
pub mod recent_affinity;
pub mod series;
pub mod shards;
pub mod stack_distance;
pub mod workload;

pub use affinity::{affinity, Affinity, DistanceDistribution, DistanceSummary};
pub use mrc::{MissRatioCurve, MrcPoint};
pub use probe::{Granularity, LocalityProbe, LocalityReport, ProbeConfig, RequestLocality};
pub use probe_request::ProbeRequest;
pub use series::{IntervalSpec, SeriesReport};
pub use shards::{MrcSampling, SampledMrc, SamplingReport};
pub use stack_distance::{FirstReference, StackDistance};
pub use workload::{analyze, AnalysisConfig, AnalysisReport, WorkloadAnalyzer};
