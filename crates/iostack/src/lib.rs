//! iostack: a simulator and measurement tool for the storage I/O stack.
//!
//! The crate models the read path of a storage stack, from a trace or a generated workload down to
//! a device, and measures what each component does to locality, to the number and shape of disk
//! requests, and to I/O time:
//!
//! ```text
//! trace / workload  ->  page cache (policy + prefetcher)  ->  I/O scheduler  ->  disk-side layer  ->  device
//! ```
//!
//! Module map, following the data path:
//! - [`trace`]: the [`trace::Request`] model, one reader per trace format, writers, detection.
//! - [`workload`]: seeded generators of synthetic traces.
//! - [`cache`]: the [`cache::Policy`] trait and one module per replacement policy.
//! - [`engine`]: the miss-ratio engine (object and block mode) and, later, the timed engine.
//! - [`metrics`]: counters and locality metrics.
//! - [`model`]: the papers' theoretical models, run exactly (ACFS's prefetching and caching model).
//! - [`units`]: parsing of sizes such as `64MiB`.
//! - [`table`]: results as rows, written as CSV, JSON, JSON Lines or Parquet.
//!
//! The crate knows nothing of Python or of the command line; those live in `iostack-py` and
//! `iostack-cli`.

pub mod blk;
pub mod cache;
pub mod device;
pub mod engine;
pub mod error;
pub mod experiment;
pub mod hints;
pub mod kdsim;
pub mod layer;
pub mod metrics;
pub mod model;
pub mod repro;
pub mod prefetch;
pub mod sched;
pub mod table;
pub mod trace;
#[doc(hidden)]
pub mod testing;
pub mod units;
pub mod workload;

pub use error::{ConfigError, TraceError};
