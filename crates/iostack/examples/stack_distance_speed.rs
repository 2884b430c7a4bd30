//! Throughput of the stack-distance engine and of a full locality probe on a Zipf stream.
//!
//! `cargo run --release -p iostack --example stack_distance_speed -- [requests] [objects] [alpha]`
//! (defaults: 10,000,000 requests over 1,000,000 objects, alpha 1.0). Prints one JSON line.

use std::time::Instant;

use iostack::metrics::{LocalityProbe, ProbeConfig, Granularity, StackDistance, MissRatioCurve};
use rand::SeedableRng;
use rand_distr::Distribution;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10_000_000);
    let objects: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1_000_000);
    let alpha: f64 = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(42);
    let zipf = rand_distr::Zipf::new(objects, alpha).expect("valid Zipf parameters");
    let keys: Vec<u64> = (0..n).map(|_| zipf.sample(&mut rng) as u64 - 1).collect();

    let t = Instant::now();
    let mut sd: StackDistance = StackDistance::new();
    let mut checksum = 0u64;
    for &k in &keys {
        checksum = checksum.wrapping_add(sd.access(k).0.unwrap_or(7));
    }
    let sd_s = t.elapsed().as_secs_f64();

    let t = Instant::now();
    let mut probe = LocalityProbe::new(ProbeConfig { granularity: Granularity::Object, ..Default::default() });
    for (i, &k) in keys.iter().enumerate() {
        probe.observe(k * 4096, 4096, i as u64 * 1000, 0);
    }
    let mrc = MissRatioCurve::from_distances(probe.stack_distances());
    let report = probe.report();
    let probe_s = t.elapsed().as_secs_f64();
    println!(
        "{{\"requests\": {n}, \"distinct\": {}, \"stack_distance_seconds\": {sd_s:.3}, \"stack_distance_refs_per_s\": {:.0}, \"probe_seconds\": {probe_s:.3}, \"probe_refs_per_s\": {:.0}, \"compactions\": {}, \"stack_affinity\": {:.4}, \"miss_ratio_at_1pct\": {:.4}, \"checksum\": {checksum}}}",
        sd.distinct(),
        n as f64 / sd_s,
        n as f64 / probe_s,
        sd.compactions(),
        report.stack_affinity.mean.unwrap_or(f64::NAN),
        mrc.miss_ratio(sd.distinct() / 100).unwrap_or(f64::NAN),
    );
}
