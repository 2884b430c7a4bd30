//! KDSim: an in-kernel disk simulator (González-Férez, Piernas and Cortes, "Improving I/O
//! performance through an in-kernel disk simulator", Computer Journal 59(10), 2016, §3;
//! `papers/001_7a98b81f1a8601b2.txt`; spec `specs/kdsim-redcap.md`).
//!
//! The disk model is the table of [`crate::device::table`]; this module holds what is built on it:
//! - [`train`]: the off-line training program (§3.3, l.114-116), run against any device model;
//!   the result is what experiments start from, as the paper's kernel loads trained tables at boot.

pub mod train;
