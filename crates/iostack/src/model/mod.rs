//! Theoretical models from the papers, run exactly as the papers define them (not through the
//! simulated stack): small, fully specified machines whose answers the papers print.
//!
//! - [`acfs`]: the integrated prefetching and caching model of Cao, Felten, Karlin and Li
//!   (K cache blocks, fetch time F, one fetch at a time), with demand fetching,
//!   controlled-aggressive prefetching and the exhaustive optimum.

pub mod acfs;
