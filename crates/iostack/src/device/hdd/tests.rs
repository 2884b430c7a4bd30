use super::*;
use rand::{Rng, SeedableRng};
use crate::device::build;

fn hdd(spec: &str) -> Hdd {
    Hdd::from_spec(Spec::parse(spec).unwrap()).unwrap()
}

#[test]
fn seek_curve_meets_its_three_points() {
    for (name, f) in PRESETS {
        let p = f();
        let d = hdd(&format!("hdd:{name}"));
        let c = d.seek_curve();
        assert!((c.time_ns(1) - p.seek_t2t_ms * 1e6).abs() < 1.0, "{name}");
        assert!((c.time_ns(c.max_d) - p.seek_full_ms * 1e6).abs() < 1e3, "{name}");
        assert!((c.weighted_mean_ns() - p.seek_avg_ms * 1e6).abs() < 1e4, "{name}: {}", c.weighted_mean_ns());
        // Monotone and continuous at the knee.
        let k = c.knee as u64;
        assert!(c.time_ns(k + 1) >= c.time_ns(k) && c.time_ns(k) >= c.time_ns(k.saturating_sub(1).max(1)));
    }
    assert!(SeekCurve::fit(1e6, 9e6, 10e6, 10_000).is_err(), "average too close to full stroke");
    assert!(SeekCurve::fit(5e6, 4e6, 10e6, 10_000).is_err());
}

#[test]
fn geometry_covers_capacity_and_zones_decrease() {
    for (name, _) in PRESETS {
        let d = hdd(&format!("hdd:{name}"));
        let last = d.zones.last().unwrap();
        let end = last.first_lba + last.cyls * last.spt * d.p.surfaces as u64;
        assert!(end >= d.capacity, "{name}");
        assert!(d.zones.windows(2).all(|w| w[0].spt >= w[1].spt), "{name}");
        // Every sector maps to a place and back in order.
        let mut prev = None;
        for lba in [0, 1, d.zones[0].spt - 1, d.zones[0].spt, d.capacity / 2, d.capacity - 1] {
            let pl = d.locate(lba);
            assert!(pl.sector < d.zones[pl.zone].spt);
            if let Some(q) = prev {
                assert!((pl.cyl, pl.head, pl.sector) > q || pl.cyl > q.0);
            }
            prev = Some((pl.cyl, pl.head, pl.sector));
        }
    }
}

#[test]
fn track_skew_avoids_a_lost_revolution() {
    // A transfer crossing a track boundary costs the head switch, not a revolution; crossing
    // into the next cylinder costs the track-to-track seek.
    let d0 = hdd("hdd:wd7200,cache=off");
    let (spt, sn) = (d0.zones[0].spt, d0.zones[0].sector_ns);
    let span = |n: u64, first: u64| {
        let mut d = d0.clone();
        let s = d.service(&DeviceRequest::read(first, n), 50_000_000);
        (s.finish_ns - s.start_ns) as f64
    };
    let within = span(spt - 1, 1);
    let across = span(spt, 1);
    assert!(across - within < d0.head_switch_ns + 2.0 * sn, "{} ns more for one sector", across - within);
    let cyl = spt * d0.p.surfaces as u64;
    let within = span(spt - 1, cyl - spt + 1);
    let across = span(spt, cyl - spt + 1);
    assert!(across - within < d0.seek.t2t_ns + 2.0 * sn, "{} ns more at a cylinder boundary", across - within);
}

#[test]
fn following_a_long_stream_keeps_the_schedule() {
    // The same stream read with and without rebasing the read-ahead gives the same times; the
    // cost of following it stays bounded (a long stream is not re-walked from its start).
    let mut d = hdd("hdd:st3400620as");
    let mut t = 0;
    let mut last = 0;
    for i in 0..20_000u64 {
        let s = d.service(&DeviceRequest::read(i * 64, 64), t);
        assert!(s.finish_ns >= s.start_ns);
        last = s.finish_ns - s.start_ns;
        t = s.finish_ns;
        if let Some(bg) = d.bg {
            assert!(bg.to - bg.from <= d.seg_sectors + d.zones[0].spt, "read-ahead span grows: {bg:?}");
        }
    }
    // 64 sectors at the outer rate, within a track switch.
    let per = 64.0 * d.zones[0].sector_ns;
    assert!((last as f64) < per + d.head_switch_ns + d.seek.t2t_ns, "{last}");
    let mbs = 20_000.0 * 64.0 * 512.0 / t as f64 * 1e3;
    assert!(mbs > 0.85 * d.p.rate_outer_mbs, "{mbs}");
}

#[test]
fn a_read_tracks_ahead_of_the_read_ahead_does_not_wait_for_it() {
    // After a read, the read-ahead fills the segment at the media rate, one revolution per
    // track. With `read_ahead_shortcut` (on in these presets), a read of sectors a few
    // tracks further on, issued at once, is served no later than by stopping the read-ahead
    // and going there (the time without a drive cache); the next sectors are still served by
    // the read-ahead. Without it, the read waits for the read-ahead, over a revolution.
    for preset in ["rz26", "rz56"] {
        let mut waits = hdd(&format!("hdd:{preset},read_ahead_shortcut=off"));
        let first = 16 * 100_000;
        let a = waits.service(&DeviceRequest::read(first, 16), 0);
        let far = first + 16 + 2 * waits.zones[0].spt + waits.zones[0].spt / 4;
        let w = waits.service(&DeviceRequest::read(far, 16), a.finish_ns);
        assert!(((w.finish_ns - w.start_ns) as f64) > waits.rev_ns, "{preset}: {w:?}");
        let mut with = hdd(&format!("hdd:{preset}"));
        let mut without = hdd(&format!("hdd:{preset},cache=off"));
        let spt = with.zones[0].spt;
        let first = 16 * 100_000;
        let a = with.service(&DeviceRequest::read(first, 16), 0);
        let b = without.service(&DeviceRequest::read(first, 16), 0);
        assert_eq!(a, b);
        let far = first + 16 + 2 * spt + spt / 4;
        assert!(far + 16 <= first + with.seg_sectors, "{preset}: inside the segment");
        let wa = with.service(&DeviceRequest::read(far, 16), a.finish_ns);
        let wb = without.service(&DeviceRequest::read(far, 16), b.finish_ns);
        assert!(wa.finish_ns <= wb.finish_ns, "{preset}: {wa:?} waits for the read-ahead, {wb:?} without it");
        assert!(((wa.finish_ns - wa.start_ns) as f64) < with.rev_ns, "{preset}: {wa:?}");
        let mut seq = hdd(&format!("hdd:{preset}"));
        let s1 = seq.service(&DeviceRequest::read(first, 16), 0);
        let s2 = seq.service(&DeviceRequest::read(first + 16, 16), s1.finish_ns + 4_000_000);
        assert!(s2.cache_hit, "{preset}: the next block comes from the read-ahead");
    }
}

#[test]
fn overrides_apply() {
    let d = hdd("hdd:st3400620as,cache=off,segments=16,rpm=5400,seek_avg=10ms");
    assert!(!d.p.cache && d.segments.is_empty());
    assert_eq!(d.p.rpm, 5400.0);
    assert_eq!(d.p.seek_avg_ms, 10.0);
    assert!(build("hdd:st3400620as,seek_avg=30ms").is_err());
    assert!(build("hdd:st3400620as,rate_inner=100").is_err());
    assert!(build("hdd").is_err());
}

#[test]
fn writes_with_and_without_write_cache() {
    let mut d = hdd("hdd:st3400620as");
    let w = d.service(&DeviceRequest::write(1_000_000, 8), 0);
    assert!(w.cache_hit && w.finish_ns < 500_000, "{w:?}");
    // A read of the unwritten data hits.
    let r = d.service(&DeviceRequest::read(1_000_000, 8), w.finish_ns);
    assert!(r.cache_hit);
    // Idle time destages it; a later far read pays a seek from there.
    let r2 = d.service(&DeviceRequest::read(500_000_000, 8), 1_000_000_000);
    assert!(!r2.cache_hit && d.pending.is_empty());
    let mut d = hdd("hdd:st3400620as,write_cache=off");
    let w = d.service(&DeviceRequest::write(1_000_000, 8), 0);
    assert!(!w.cache_hit && w.finish_ns > 1_000_000, "{w:?}");
}

/// `locate` computed from the zone table alone, as before the track hint.
fn plain_locate(d: &Hdd, lba: u64) -> Place {
    let zone = d.zones.partition_point(|z| z.first_lba <= lba) - 1;
    let z = &d.zones[zone];
    let surfaces = d.p.surfaces as u64;
    let track = (lba - z.first_lba) / z.spt;
    let cyl_local = track / surfaces;
    let skew = to_f64(cyl_local) * z.cyl_skew + to_f64(track - cyl_local) * z.head_skew;
    Place { zone, cyl: z.first_cyl + cyl_local, head: track % surfaces, sector: (lba - z.first_lba) % z.spt, track, skew }
}

#[test]
fn track_hint_gives_the_plain_places() {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    for spec in ["hdd:st3400620as", "hdd:cheetah9lp", "hdd:wd7200,zones=1", "hdd:ultrastar18zx,surfaces=1"] {
        let d = hdd(spec);
        let mut lba = 0;
        for _ in 0..200_000 {
            lba = match rng.gen_range(0..6) {
                // Random places, the same track, the next tracks, zone boundaries.
                0 => rng.gen_range(0..d.capacity),
                1 => lba + rng.gen_range(0..64),
                2 => lba + d.zones[d.locate(lba).zone].spt + rng.gen_range(0..3) - 1,
                3 => lba.saturating_sub(rng.gen_range(0..2000)),
                4 => {
                    let z = &d.zones[rng.gen_range(0..d.zones.len())];
                    z.first_lba + rng.gen_range(0..3 * z.spt) - z.spt.min(z.first_lba)
                }
                _ => lba + 2 * d.zones[d.locate(lba).zone].spt,
            }
            .min(d.capacity - 1);
            let (got, want) = (d.locate(lba), plain_locate(&d, lba));
            assert_eq!(got, want, "{spec}: sector {lba}");
            assert_eq!(got.skew.to_bits(), want.skew.to_bits(), "{spec}: sector {lba}");
        }
    }
}

#[test]
fn segment_indexes_stay_exact_under_the_drive() {
    // Random and sequential reads and writes of all sizes, through the whole model: the
    // indexes agree with the segments after every request, and every lookup with a scan.
    let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
    for spec in ["hdd:st3400620as", "hdd:cheetah9lp", "hdd:wd7200,write_cache=off", "hdd:ultrastar18zx,segments=70,cache_size=1MiB"] {
        let mut d = hdd(spec);
        let (mut t, mut next) = (0, 0);
        let span = d.seg_sectors * 64;
        for _ in 0..20_000 {
            let first = if rng.gen_bool(0.5) { next } else { rng.gen_range(0..span) };
            let n = if rng.gen_bool(0.7) { rng.gen_range(1..=16) } else { rng.gen_range(1..=3 * d.seg_sectors) };
            let req = if rng.gen_bool(0.8) { DeviceRequest::read(first, n) } else { DeviceRequest::write(first, n) };
            let s = d.service(&req, t);
            t = if rng.gen_bool(0.5) { s.finish_ns } else { s.finish_ns + rng.gen_range(0..20_000_000) };
            next = first + n;
            d.segments.check_indexes();
            for _ in 0..4 {
                let a = rng.gen_range(0..span);
                let b = a + rng.gen_range(1..=64);
                assert_eq!(d.segments.holding(a, b), d.segments.scan_holding(a, b), "{spec}: [{a}, {b})");
            }
        }
    }
}

#[test]
fn immediate_read_keeps_the_sectors_that_passed_before_the_request() {
    // The head starts on track 0 at angle 0; after the command overhead it is at overhead / rev,
    // and it then waits for sector 100 (at 100 / spt): the whole sectors before 100 that pass in
    // that wait are read on arrival, and no other.
    for preset in ["st3400620as", "wd7200"] {
        let mut d = hdd(&format!("hdd:{preset},immediate_read=on,read_ahead=off"));
        let spt = d.zones[0].spt as f64;
        let here = d.overhead_ns / d.rev_ns;
        let passed = ((100.0 / spt - here) * spt) as u64;
        assert!(passed > 16 && passed < 100, "{preset}: {passed}");
        let first = d.service(&DeviceRequest::read(100, 16), 0);
        assert!(!first.cache_hit);
        let hit = d.service(&DeviceRequest::read(100 - passed, passed), first.finish_ns);
        assert!(hit.cache_hit, "{preset}: the {passed} sectors that passed");
        let miss = d.service(&DeviceRequest::read(100 - passed - 1, 1), hit.finish_ns);
        assert!(!miss.cache_hit, "{preset}: the sector under the head on arrival");
        // Off, the same reads miss.
        let mut off = hdd(&format!("hdd:{preset},read_ahead=off"));
        let first = off.service(&DeviceRequest::read(100, 16), 0);
        assert!(!off.service(&DeviceRequest::read(99, 1), first.finish_ns).cache_hit, "{preset}");
    }
}

#[test]
fn immediate_read_serves_a_backward_reader_from_the_cache() {
    // A file read backward in 8 KiB requests (TAC): without immediate read every request waits
    // most of a revolution for its sectors, which the head has just passed; with it, the sectors
    // before a miss's are in the segment, so most requests are hits and the mean time falls.
    let run = |spec: &str| {
        let mut d = hdd(spec);
        let (mut t, mut hits, mut busy) = (0u64, 0u32, 0u64);
        let n = 2000u64;
        let end = 1_000_000u64;
        for i in 1..=n {
            let s = d.service(&DeviceRequest::read(end - 16 * i, 16), t);
            hits += s.cache_hit as u32;
            busy += s.finish_ns - s.start_ns;
            t = s.finish_ns + 100_000;
        }
        (hits as f64 / n as f64, busy as f64 / n as f64 / 1e6)
    };
    let (hits_off, ms_off) = run("hdd:st3400620as");
    let (hits_on, ms_on) = run("hdd:st3400620as,immediate_read=on");
    assert_eq!(hits_off, 0.0);
    assert!(ms_off > 7.0, "{ms_off} ms per read without immediate read");
    assert!(hits_on > 0.8, "{hits_on} of the reads hit with immediate read");
    assert!(ms_on < ms_off / 4.0, "{ms_on} ms against {ms_off} ms");
}
