//! Prefetchers: decide which blocks to read before they are asked for.

pub mod readahead;
