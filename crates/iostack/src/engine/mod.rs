//! Engines that drive requests through the stack.
//!
//! - [`sim`]: the miss-ratio engine. No time: requests go through the cache only, in object mode
//!   (one request is one object, libCacheSim's semantics) or block mode (requests split into
//!   pages keyed by device and block number).
//! - [`timed`]: the timed stack (page cache, prefetcher, scheduler, devices) in virtual time.
//! - [`series`]: results per interval of time or of requests (`--interval`).

pub mod footprint;
pub mod future;
pub mod processes;
pub mod series;
pub mod sim;
pub mod timed;
