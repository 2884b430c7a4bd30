//! Counters and locality metrics.
