//! Seeded generators of synthetic workloads.

pub mod spc2;
