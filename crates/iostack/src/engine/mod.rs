//! Engines that drive requests through the stack.
//!
//! - [`sim`]: the miss-ratio engine. No time: requests go through the cache only, in object mode
//!   (one request is one object, libCacheSim's semantics) or block mode (requests split into
//!   pages keyed by device and block number).

pub mod footprint;
pub mod future;
pub mod processes;
pub mod sim;
pub mod timed;
