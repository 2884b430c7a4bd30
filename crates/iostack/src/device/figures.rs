//! A small deterministic measurement of a device, for `iostack devices --measure`, the tests and
//! `docs/devices.md`.
//!
//! Three figures, each from a closed loop (the next request is handed over when the previous one
//! finishes) on a fresh device:
//! - random 4 KiB reads: `RANDOM_READS` reads at 4 KiB-aligned positions drawn uniformly over the
//!   whole device by a seeded PCG; mean service time (finish - start).
//! - sequential reads: `SEQ_BYTES` from sector 0 (the outer zone of a disk) in 128 KiB requests;
//!   bytes over elapsed time, MB/s (10^6 bytes).
//! - cache re-read: `REREADS` times, a 4 KiB read at a random position, 100 ms of idle time, then
//!   a 4 KiB read of the data right after it (which the drive has read ahead); mean service time
//!   of the second read.

use super::{Device, DeviceRequest, SECTOR};
use rand::{Rng, SeedableRng};

pub const RANDOM_READS: u64 = 2000;
pub const SEQ_BYTES: u64 = 256 << 20;
pub const SEQ_REQUEST: u64 = 128 << 10;
pub const REREADS: u64 = 200;
/// Seed of the position generator.
pub const SEED: u64 = 0x10_57AC;

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Figures {
    /// Mean service time of a random 4 KiB read, ms.
    pub random_read_4k_ms: f64,
    /// Sequential read rate from the start of the device in 128 KiB requests, MB/s.
    pub sequential_read_mbs: f64,
    /// Mean service time of a 4 KiB read of just-read-ahead data, ms.
    pub cache_reread_ms: f64,
    /// Fraction of those re-reads served from the device's cache.
    pub cache_reread_hit_ratio: f64,
}

/// Measures a device built by `make` (called once per figure, so each starts fresh).
pub fn measure(mut make: impl FnMut() -> Box<dyn Device>) -> Figures {
    let span = |d: &dyn Device| d.capacity_sectors().unwrap_or(1 << 31) / 8;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(SEED);

    let mut d = make();
    let blocks = span(d.as_ref());
    let (mut t, mut total) = (0u64, 0u64);
    for _ in 0..RANDOM_READS {
        let s = d.service(&DeviceRequest::read(rng.gen_range(0..blocks) * 8, 8), t);
        total += s.finish_ns - s.start_ns;
        t = s.finish_ns;
    }
    let random_read_4k_ms = total as f64 / RANDOM_READS as f64 / 1e6;

    let mut d = make();
    let per = SEQ_REQUEST / SECTOR;
    let mut t = 0;
    for i in 0..SEQ_BYTES / SEQ_REQUEST {
        t = d.service(&DeviceRequest::read(i * per, per), t).finish_ns;
    }
    let sequential_read_mbs = SEQ_BYTES as f64 / (t as f64 / 1e9) / 1e6;

    let mut d = make();
    let (mut t, mut total, mut hits) = (0u64, 0u64, 0u64);
    for _ in 0..REREADS {
        let x = rng.gen_range(0..blocks.saturating_sub(2).max(1)) * 8;
        let first = d.service(&DeviceRequest::read(x, 8), t);
        let again = d.service(&DeviceRequest::read(x + 8, 8), first.finish_ns + 100_000_000);
        total += again.finish_ns - again.start_ns;
        hits += again.cache_hit as u64;
        t = again.finish_ns;
    }
    Figures {
        random_read_4k_ms,
        sequential_read_mbs,
        cache_reread_ms: total as f64 / REREADS as f64 / 1e6,
        cache_reread_hit_ratio: hits as f64 / REREADS as f64,
    }
}

/// Measures a preset or spec.
pub fn measure_spec(spec: &str) -> Result<Figures, crate::error::ConfigError> {
    super::build(spec)?;
    Ok(measure(|| super::build(spec).expect("spec built once already")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::hdd::Hdd;
    use crate::device::{build, Spec, PRESETS};

    #[test]
    fn random_4k_reads_cost_seek_plus_half_rotation_plus_transfer() {
        for (name, f) in crate::device::hdd::PRESETS {
            let p = f();
            let d = Hdd::from_spec(Spec::parse(&format!("hdd:{name}")).unwrap()).unwrap();
            let spt_mid = d.sectors_per_track(d.capacity_sectors().unwrap() / 2) as f64;
            let rev = d.revolution_ns() / 1e6;
            let expected = p.overhead_ms + p.seek_avg_ms + rev / 2.0 + 8.0 / spt_mid * rev;
            let got = measure_spec(&format!("hdd:{name}")).unwrap().random_read_4k_ms;
            let err = (got - expected).abs() / expected;
            assert!(err < 0.04, "{name}: measured {got:.3} ms, expected {expected:.3} ms");
        }
    }

    #[test]
    fn sequential_reads_approach_the_media_rate() {
        for (name, f) in crate::device::hdd::PRESETS {
            let p = f();
            let fig = measure_spec(&format!("hdd:{name}")).unwrap();
            // Track and head switches cost a little of the outer-zone media rate, nothing more.
            let ratio = fig.sequential_read_mbs / p.rate_outer_mbs;
            assert!(ratio > 0.8 && ratio <= 1.01, "{name}: {} MB/s vs {} MB/s", fig.sequential_read_mbs, p.rate_outer_mbs);
            // Without the drive's read-ahead, every request waits for about half a revolution
            // or more: at least 30 % slower, and more than that half revolution adds to a
            // request's media time (which matters on slow disks, where a 128 KiB request takes
            // several revolutions: 70 ms on the RZ56).
            let off = measure_spec(&format!("hdd:{name},read_ahead=off")).unwrap();
            let media_s = SEQ_REQUEST as f64 / (p.rate_outer_mbs * 1e6);
            let half_rev_s = 30.0 / p.rpm;
            let limit = 0.7f64.max(media_s / (media_s + half_rev_s));
            assert!(off.sequential_read_mbs < limit * fig.sequential_read_mbs, "{name}: {} vs {}", off.sequential_read_mbs, fig.sequential_read_mbs);
        }
    }

    #[test]
    fn rereading_read_ahead_data_hits_the_drive_cache() {
        for (name, f) in crate::device::hdd::PRESETS {
            let p = f();
            let on = measure_spec(&format!("hdd:{name}")).unwrap();
            assert_eq!(on.cache_reread_hit_ratio, 1.0, "{name}");
            // A hit costs the overhead and the transfer over the interface (0.8 ms of 4 KiB on
            // the RZ56's 5 MB/s bus), and no mechanical delay.
            let hit_ms = p.overhead_ms + 4096.0 / (p.interface_mbs * 1e6) * 1e3;
            assert!(on.cache_reread_ms < hit_ms + 0.1, "{name}: {} vs {hit_ms}", on.cache_reread_ms);
            let off = measure_spec(&format!("hdd:{name},cache=off")).unwrap();
            assert_eq!(off.cache_reread_hit_ratio, 0.0);
            assert!(off.cache_reread_ms > 1.0, "{name}: {}", off.cache_reread_ms);
        }
    }

    #[test]
    fn deterministic_and_one_request_at_a_time() {
        for p in PRESETS {
            assert_eq!(measure_spec(p.name).unwrap(), measure_spec(p.name).unwrap());
            let mut d = build(p.name).unwrap();
            let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
            let (mut now, mut prev_finish) = (0u64, 0u64);
            let cap = d.capacity_sectors().unwrap_or(1 << 30);
            for i in 0..3000u64 {
                now += rng.gen_range(0..4_000_000);
                let sector = if i % 3 == 0 { rng.gen_range(0..cap) } else { (i * 64) % cap };
                let req = if rng.gen_bool(0.3) {
                    DeviceRequest::write(sector, 1 + rng.gen_range(0..256))
                } else {
                    DeviceRequest::read(sector, 1 + rng.gen_range(0..512))
                };
                let s = d.service(&req, now);
                assert!(s.start_ns >= now && s.start_ns >= prev_finish && s.finish_ns >= s.start_ns, "{}: {s:?}", p.name);
                prev_finish = s.finish_ns;
            }
        }
    }
}
