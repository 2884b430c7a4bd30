//! Seeded generators of synthetic workloads.
