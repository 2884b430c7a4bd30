//! KDSim: an in-kernel disk simulator (González-Férez, Piernas and Cortes, "Improving I/O
//! performance through an in-kernel disk simulator", Computer Journal 59(10), 2016, §3;
//! `papers/001_7a98b81f1a8601b2.txt`; spec `specs/kdsim-redcap.md`).
//!
//! The disk model is the table of [`crate::device::table`]; this module holds what is built on it:
//! - [`train`]: the off-line training program (§3.3, l.114-116), run against any device model;
//!   the result is what experiments start from, as the paper's kernel loads trained tables at boot.

//! - [`virtual_disk`]: the virtual disk (§3.2): copies of the real requests, shared, waiting and
//!   process queues with the dependency rules R1-R4, its own scheduler, timed by the table;
//! - [`accuracy`]: the virtual disk run beside a real (modelled) one, its table updated from the
//!   real service times, and the per-window difference of their I/O times (Fig. 3, Table 1);
//! - [`window`]: the window comparison of two systems' per-block times (§4.1, condition (1)) that
//!   ADA and any other on-line choice between two alternatives decide on;
//! - [`controller`]: the generic controller on that comparison (switches, their verification,
//!   the report) behind the scheduler (`sched::select`) and readahead (`prefetch::select`)
//!   selectors.

pub mod accuracy;
pub mod controller;
pub mod train;
pub mod virtual_disk;
pub mod window;
