//! A mechanical disk drive: seek curve, rotation, zoned media, head switches, segmented cache.
//!
//! # Mechanics
//!
//! The time to move the arm by `d` cylinders follows the curve of Ruemmler and Wilkes, "An
//! introduction to disk drive modeling" (IEEE Computer 27(3), 1994, Section "Seek time"): a
//! square root of the distance for short seeks (the arm accelerates for half the way and
//! decelerates for the other half) and linear for long ones (the arm coasts at full speed):
//!
//! ```text
//! seek(0) = 0
//! seek(d) = t2t + a * sqrt(d - 1)                 1 <= d <= knee
//! seek(d) = seek(knee) + s * (d - knee)          knee < d <= C - 1,   s = a / (2 sqrt(knee - 1))
//! ```
//!
//! The curve is fitted through the three figures a datasheet gives: track-to-track `seek(1)`,
//! full stroke `seek(C - 1)`, and the average, which datasheets define as the mean over all seek
//! lengths weighted by how many cylinder pairs are that far apart (weight `C - d`), as in IBM's and
//! Seagate's product manuals. `s` makes the curve smooth at the knee; `a` follows from the full
//! stroke; the knee is found by bisection so that the weighted mean equals the average. Three
//! figures that no such curve can meet (the average must lie between about 1/3 and 8/15 of the way
//! from track-to-track to full stroke) are a configuration error.
//!
//! The platter turns at `rpm`; its angular position is a function of time (`t / T_rev` modulo 1,
//! phase 0 at time 0), so the rotational delay of every access is exact, not an average. Sectors
//! are laid out zone by zone from the outer edge: within a zone, cylinder by cylinder, each
//! cylinder surface by surface, each track sector by sector. Outer zones hold more sectors per
//! track, so their media rate is higher (zoned bit recording). Each track is skewed against the
//! previous one by the head-switch time (or, at a cylinder boundary, the track-to-track seek time)
//! rounded up to whole sectors, as drives do, so a sequential transfer crossing a track loses only
//! the switch, not a revolution.
//!
//! Geometry: datasheets of these drives give capacity, rpm and media (internal) transfer rates,
//! rarely sectors per track. The model derives it: sectors per track at the outer and inner edges
//! are `rate * T_rev / 512`; `zones` zones interpolate linearly between them; all zones have the
//! same number of cylinders, as many as the capacity needs with the given number of surfaces.
//!
//! # The drive's cache
//!
//! The drive's buffer is split into `segments` segments of `cache_size / segments` bytes, each
//! holding one run of consecutive sectors; segments are replaced LRU (Ruemmler and Wilkes,
//! "Caching"; the REDCAP paper, Section 2, describes the same organisation). A read that misses
//! is read from the media into the LRU segment; then, if read-ahead is on, the drive keeps reading
//! the following sectors until the segment is full (read-ahead to the end of the segment). That
//! read-ahead runs in the background: a later read of sectors it has already read is a cache hit
//! (command overhead plus interface transfer, no media access); a read of sectors it is about to
//! read waits for the head to reach them without any seek (with `read_ahead_shortcut`, only
//! when that is faster than stopping the read-ahead and going to them directly: sectors several
//! tracks ahead take the read-ahead a revolution per track); any other access aborts it,
//! keeping what it had read. A read served from a segment slides the segment forward and keeps the
//! read-ahead going, so a sequential stream is served at the media rate. A read larger than a
//! segment keeps only its last sectors. Writes invalidate the segments they overlap. With the
//! write cache on, a write is acknowledged once transferred to the buffer and written to the media
//! when the drive is idle (before the next request), or at once when the buffer holds
//! `cache_size` of unwritten data; reads of unwritten data are hits. With it off, writes go to the
//! media before completion. `cache=off` turns all of it off.
//!
//! Each request costs the command `overhead` first. Media reads overlap the interface transfer,
//! so only cache hits pay `bytes / interface`.
//!
//! # Bookkeeping
//!
//! Most requests of a random workload are one-block reads that miss the drive's cache, so what
//! each request asks of the model's state is answered without a scan: the segment table
//! (`Segments`) counts its segments per bucket of sector space, so a read no segment can hold
//! is known as such at once, and keeps its segments in order of last use, so the one to replace
//! is known at once. Finding where a sector lies (`locate`) starts from the track of the
//! previous lookup, which the read-ahead and a transfer crossing tracks nearly always reuse.
//! All of these give exactly what a scan of the segments or a search of the zones would; the
//! times are computed with the same operations in the same order either way.
//!
//! # Presets and sources
//!
//! Each preset's doc comment lists where each figure comes from: a paper, the maker's published
//! specification, a validated DiskSim model, or, where none gives a figure, an assumption typical
//! of the drive's class (marked "assumed"). A maker's figure that no copy of a source confirmed
//! is marked "UNVERIFIED". `docs/devices.md` has the same table and measured figures.

use super::{to_ns, Device, DeviceRequest, Service, Spec, SECTOR};
use crate::error::ConfigError;
use crate::trace::Op;

/// All parameters of the model; a preset is one value of this.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct HddParams {
    pub preset: String,
    /// Capacity in bytes.
    pub capacity_bytes: u64,
    pub rpm: f64,
    /// Track-to-track (one cylinder) seek, ms.
    pub seek_t2t_ms: f64,
    /// Average seek, ms (datasheet definition, see the module comment).
    pub seek_avg_ms: f64,
    /// Full-stroke seek, ms.
    pub seek_full_ms: f64,
    /// Head switch within a cylinder, ms.
    pub head_switch_ms: f64,
    /// Command overhead per request, ms.
    pub overhead_ms: f64,
    /// Recording surfaces (heads).
    pub surfaces: u32,
    /// Media rate at the outer edge, MB/s (10^6 bytes).
    pub rate_outer_mbs: f64,
    /// Media rate at the inner edge, MB/s.
    pub rate_inner_mbs: f64,
    /// Number of zones (1 = unzoned, the mean of the two rates).
    pub zones: u32,
    /// Host interface rate, MB/s.
    pub interface_mbs: f64,
    /// Drive cache on.
    pub cache: bool,
    /// Cache size, bytes.
    pub cache_bytes: u64,
    /// Number of cache segments.
    pub segments: u32,
    /// Read-ahead to the end of the segment after a read miss.
    pub read_ahead: bool,
    /// A read of data the read-ahead has not reached yet stops it and goes there directly when
    /// that is faster (data some tracks ahead); off, it always waits for the read-ahead.
    pub read_ahead_shortcut: bool,
    /// Write cache (immediate report) on.
    pub write_cache: bool,
}

/// Hitachi (IBM) Ultrastar 18ZX, 10,000 rpm, 18.35 GB; the DULO paper's example drive.
///
/// - rpm 10,000 and average seek 6.5 ms: DULO (ACM TOS 2007) Section 3.1, "taken from the
///   specification of the Hitachi Ultrastar 18ZX 10K RPM" (its 3.0 ms average rotation is half a
///   revolution at 10,000 rpm).
/// - capacity 18.35 GB: the drive's model name (DDYS-T18350).
/// - track-to-track 0.6 ms, full stroke 12.0 ms, head switch 0.8 ms, 10 surfaces, media rate
///   28.0 to 17.0 MB/s, 2 MB buffer in 8 segments, 0.1 ms overhead, 80 MB/s Ultra2 SCSI: assumed,
///   typical of 10,000 rpm SCSI drives of 1999 (the full stroke is the smallest round figure with
///   which a sqrt-then-linear curve reaches a 6.5 ms average from 0.6 ms track-to-track). No copy
///   of IBM's specification for this drive was found to check them against.
pub fn ultrastar18zx() -> HddParams {
    HddParams {
        preset: "ultrastar18zx".into(),
        capacity_bytes: 18_350_000_000,
        rpm: 10_000.0,
        seek_t2t_ms: 0.6,
        seek_avg_ms: 6.5,
        seek_full_ms: 12.0,
        head_switch_ms: 0.8,
        overhead_ms: 0.1,
        surfaces: 10,
        rate_outer_mbs: 28.0,
        rate_inner_mbs: 17.0,
        zones: 16,
        interface_mbs: 80.0,
        cache: true,
        cache_bytes: 2 << 20,
        segments: 8,
        read_ahead: true,
        read_ahead_shortcut: false,
        write_cache: true,
    }
}

/// Western Digital Caviar 7200 rpm EIDE 160 GB (WD1600JB class); DULO's experimental disk
/// ("a Western Digital 7200RPM IDE disk", Section 5.1; the paper gives no model number).
///
/// - 7,200 rpm: the paper. 160 GB = 312,581,808 sectors: the standard LBA count of 160 GB drives.
/// - average seek 8.9 ms (read), track-to-track 2.0 ms, full stroke 21 ms, controller overhead
///   0.3 ms, Ultra ATA/100 (100 MB/s buffer to host): WD's specification sheet of the WD Caviar
///   WD400BB, a 7,200 rpm EIDE Caviar of the same family (copy at
///   lyberty.com/tech/hard_drives/WD_Caviar_WD400BB_specs); no sheet of the 160 GB model itself
///   was found, so these are family figures.
/// - 8 MB buffer: the "JB" Caviars are the 8 MB models (Tom's Hardware, "Western Digital WD1200JB
///   With 8 MB Cache", and its 22-drive round-up: "those with 8 MB of cache are named ...JB").
/// - 4 surfaces (two 80 GB platters), media rate 58 to 32 MB/s, head switch 1.0 ms, 16 segments:
///   assumed (not checked against a source).
pub fn wd7200() -> HddParams {
    HddParams {
        preset: "wd7200".into(),
        capacity_bytes: 312_581_808 * SECTOR,
        rpm: 7_200.0,
        seek_t2t_ms: 2.0,
        seek_avg_ms: 8.9,
        seek_full_ms: 21.0,
        head_switch_ms: 1.0,
        overhead_ms: 0.3,
        surfaces: 4,
        rate_outer_mbs: 58.0,
        rate_inner_mbs: 32.0,
        zones: 16,
        interface_mbs: 100.0,
        cache: true,
        cache_bytes: 8 << 20,
        segments: 16,
        read_ahead: true,
        read_ahead_shortcut: false,
        write_cache: true,
    }
}

/// Seagate Barracuda 7200.10 ST3400620AS, 400 GB SATA, 16 MB cache; REDCAP's hard disk
/// (KDSim/REDCAP, Computer Journal 2016, Section 5: "a Seagate ST3400620AS disk with a capacity
/// of 400 GB and a cache of 16 MB").
///
/// - 400 GB, 16 MB cache: the paper; 781,422,768 sectors is the standard LBA count of 400 GB
///   drives. 7,200 rpm, SATA 3 Gb/s (300 MB/s), 16 MB cache: also The Tech Report's review of the
///   Barracuda 7200.10 (May 2006).
/// - average seek 11 ms (read), track-to-track 0.8 ms, sustained rate 78 MB/s (outer): UNVERIFIED,
///   recalled from Seagate's Barracuda 7200.10 manual/data sheet; no copy of either was found to
///   check them against.
/// - full stroke 22 ms (twice the average; not published), inner rate 40 MB/s, 6 surfaces,
///   head switch 0.8 ms, 16 segments, 0.1 ms overhead: assumed.
pub fn st3400620as() -> HddParams {
    HddParams {
        preset: "st3400620as".into(),
        capacity_bytes: 781_422_768 * SECTOR,
        rpm: 7_200.0,
        seek_t2t_ms: 0.8,
        seek_avg_ms: 11.0,
        seek_full_ms: 22.0,
        head_switch_ms: 0.8,
        overhead_ms: 0.1,
        surfaces: 6,
        rate_outer_mbs: 78.0,
        rate_inner_mbs: 40.0,
        zones: 16,
        interface_mbs: 300.0,
        cache: true,
        cache_bytes: 16 << 20,
        segments: 16,
        read_ahead: true,
        read_ahead_shortcut: false,
        write_cache: true,
    }
}

/// Seagate Cheetah 9LP (ST39102LW) as DiskSim models it; the Split paper's disk (Table 5:
/// "cheetah9LP, 17783240 blocks, mean read seek 5.4 msec, maximum read seek 10.63 msec,
/// 10045 rpm").
///
/// - capacity 17,783,240 sectors, rpm 10,045, average seek 5.4 ms, full stroke 10.63 ms: the
///   Split paper, Table 5.
/// - 12 surfaces, 6,962 cylinders, track-to-track 0.831 ms, 11 zones of 254 down to 167 sectors
///   per track (media rate 21.77 to 14.31 MB/s at 10,045 rpm), buffer of 3 segments of 561
///   sectors: DiskSim's validated model of this drive, `SEAGATE_ST39102LW_validate`
///   (`valid/cheetah9LP.model`, `cheetah9LP.seek` and `cheetah9LP.diskspecs` in the DiskSim
///   distribution). DiskSim's full stroke is 10.627 ms, the paper's 10.63 ms. With equal-size
///   zones interpolated linearly, 17,783,240 sectors need 7,040 cylinders here, 1 % more than the
///   drive's 6,962 (its outer zones are wider).
/// - head switch 0.8 ms, 0.1 ms overhead, 80 MB/s Ultra2 SCSI: assumed. DiskSim's model has a
///   0.03 ms head switch but skews tracks by 97 sectors (2.3 ms) in the outer zones and 88 (3.1 ms)
///   in the inner ones, and separate read
///   hit and miss overheads (0.066 and 0.284 ms after a read); this model ties the track skew to
///   the head switch and has one overhead, so neither is copied.
pub fn cheetah9lp() -> HddParams {
    HddParams {
        preset: "cheetah9lp".into(),
        capacity_bytes: 17_783_240 * SECTOR,
        rpm: 10_045.0,
        seek_t2t_ms: 0.831,
        seek_avg_ms: 5.4,
        seek_full_ms: 10.63,
        head_switch_ms: 0.8,
        overhead_ms: 0.1,
        surfaces: 12,
        rate_outer_mbs: 21.77,
        rate_inner_mbs: 14.31,
        zones: 11,
        interface_mbs: 80.0,
        cache: true,
        cache_bytes: 3 * 561 * SECTOR,
        segments: 3,
        read_ahead: true,
        read_ahead_shortcut: false,
        write_cache: true,
    }
}

/// DEC RZ56, 665 MB SCSI; the disk of ACFS's CScope, Dinero and Glimpse experiments (Cao,
/// Felten, Karlin, Li, ACM TOCS, papers/002, §5.1, l.917-923: "665MB SCSI disk, with average
/// seek time of 16ms, average rotational latency of 8.3ms, and peak transfer rate of
/// 1.875MB/second").
///
/// - capacity 665 MB, average seek 16 ms, media rate 1.875 MB/s: the paper.
/// - 3,614 rpm: half a revolution is the paper's 8.3 ms average rotational latency (a 3,600 rpm
///   spindle gives 8.33 ms).
/// - track-to-track 4 ms, full stroke 35 ms, 15 surfaces, head switch 1 ms, 0.5 ms overhead,
///   one unzoned rate, 5 MB/s SCSI bus, a 256 KiB buffer in one segment with read-ahead that
///   a read further ahead stops when going there directly is faster (`read_ahead_shortcut`), no
///   write cache (Ultrix writes through): assumed, typical of 1989-1991 SCSI disks; no
///   specification of the drive was found to check them against.
pub fn rz56() -> HddParams {
    HddParams {
        preset: "rz56".into(),
        capacity_bytes: 665_000_000,
        rpm: 30_000.0 / 8.3,
        seek_t2t_ms: 4.0,
        seek_avg_ms: 16.0,
        seek_full_ms: 35.0,
        head_switch_ms: 1.0,
        overhead_ms: 0.5,
        surfaces: 15,
        rate_outer_mbs: 1.875,
        rate_inner_mbs: 1.875,
        zones: 1,
        interface_mbs: 5.0,
        cache: true,
        cache_bytes: 256 << 10,
        segments: 1,
        read_ahead: true,
        read_ahead_shortcut: true,
        write_cache: false,
    }
}

/// DEC RZ26, 1.05 GB SCSI; the disk of ACFS's Postgres and Andrew experiments (papers/002,
/// §5.1, l.919-925: "1.05GB SCSI disk, with average seek time of 10.5ms, average rotational
/// latency of 5.54ms, and peak transfer rate of 3.3MB/second").
///
/// - capacity 1.05 GB, average seek 10.5 ms, media rate 3.3 MB/s: the paper.
/// - 5,415 rpm: half a revolution is the paper's 5.54 ms (a 5,400 rpm spindle gives 5.56 ms).
/// - track-to-track 2 ms, full stroke 22 ms, 14 surfaces, head switch 1 ms, 0.5 ms overhead,
///   one unzoned rate, 10 MB/s fast SCSI-2, a 512 KiB buffer in 2 segments with read-ahead (with
///   `read_ahead_shortcut`), no write cache: assumed; no specification of the drive was found to
///   check them against.
pub fn rz26() -> HddParams {
    HddParams {
        preset: "rz26".into(),
        capacity_bytes: 1_050_000_000,
        rpm: 30_000.0 / 5.54,
        seek_t2t_ms: 2.0,
        seek_avg_ms: 10.5,
        seek_full_ms: 22.0,
        head_switch_ms: 1.0,
        overhead_ms: 0.5,
        surfaces: 14,
        rate_outer_mbs: 3.3,
        rate_inner_mbs: 3.3,
        zones: 1,
        interface_mbs: 10.0,
        cache: true,
        cache_bytes: 512 << 10,
        segments: 2,
        read_ahead: true,
        read_ahead_shortcut: true,
        write_cache: false,
    }
}

/// A named preset.
pub type HddPreset = (&'static str, fn() -> HddParams);

/// The HDD presets by name.
pub const PRESETS: &[HddPreset] =
    &[
        ("ultrastar18zx", ultrastar18zx),
        ("wd7200", wd7200),
        ("st3400620as", st3400620as),
        ("cheetah9lp", cheetah9lp),
        ("rz56", rz56),
        ("rz26", rz26),
    ];

/// Keys a spec may override.
pub const KEYS: &[&str] = &[
    "capacity",
    "rpm",
    "seek_t2t",
    "seek_avg",
    "seek_full",
    "head_switch",
    "overhead",
    "surfaces",
    "rate_outer",
    "rate_inner",
    "zones",
    "interface",
    "cache",
    "cache_size",
    "segments",
    "read_ahead",
    "read_ahead_shortcut",
    "write_cache",
];

/// The fitted seek curve (times in ns).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SeekCurve {
    pub t2t_ns: f64,
    /// Coefficient of sqrt(d - 1), ns.
    pub a: f64,
    /// Distance where the curve turns linear, cylinders.
    pub knee: f64,
    /// Slope of the linear part, ns per cylinder.
    pub slope: f64,
    /// Longest seek, cylinders.
    pub max_d: u64,
    /// `seek(knee)`, kept so the linear part costs no square root.
    #[serde(skip)]
    at_knee_ns: f64,
}

/// The fractional part of a non-negative `x` below 2^63: `x.fract()` without the call to
/// `trunc` that baseline x86-64 makes (the integer conversion truncates exactly the same).
#[inline]
fn fract(x: f64) -> f64 {
    debug_assert!((0.0..9.2e18).contains(&x));
    x - (x as i64) as f64
}

/// `x as f64` for a count below 2^63 (sectors, cylinders, ns): the same value, converted through
/// `i64`, which baseline x86-64 does in one instruction (the `u64` conversion takes several).
#[inline]
fn to_f64(x: u64) -> f64 {
    debug_assert!(x < 1 << 63);
    x as i64 as f64
}

impl SeekCurve {
    pub fn time_ns(&self, d: u64) -> f64 {
        if d == 0 {
            return 0.0;
        }
        let x = to_f64(d);
        if x <= self.knee {
            self.t2t_ns + self.a * (x - 1.0).sqrt()
        } else {
            self.at_knee_ns + self.slope * (x - self.knee)
        }
    }

    fn with_knee(t2t: f64, full: f64, max_d: u64, knee: f64) -> SeekCurve {
        let m = max_d as f64;
        let r = (knee - 1.0).sqrt().max(1e-9);
        let a = (full - t2t) / (r + (m - knee) / (2.0 * r));
        SeekCurve { t2t_ns: t2t, a, knee, slope: a / (2.0 * r), max_d, at_knee_ns: t2t + a * (knee - 1.0).sqrt() }
    }

    /// Mean seek time over distances 1..=max_d weighted by (max_d + 1 - d), the datasheet average.
    pub fn weighted_mean_ns(&self) -> f64 {
        self.weighted_mean_over(&SeekSamples::new(self.max_d))
    }

    /// [`SeekCurve::weighted_mean_ns`] over samples of this curve's `max_d`: the sum of
    /// `time_ns` at each, in order, with the square roots the samples hold.
    fn weighted_mean_over(&self, samples: &SeekSamples) -> f64 {
        debug_assert_eq!(samples.max_d, self.max_d);
        let (mut num, mut den) = (0.0, 0.0);
        for s in &samples.points {
            // `time_ns` at the sample's distance `x` (at least 1), its square root precomputed.
            let t = if s.x <= self.knee { self.t2t_ns + self.a * s.root } else { self.at_knee_ns + self.slope * (s.x - self.knee) };
            num += s.w * t;
            den += s.w;
        }
        num / den
    }

    /// Fits the curve through track-to-track, average and full-stroke times for `cylinders`.
    pub fn fit(t2t_ns: f64, avg_ns: f64, full_ns: f64, cylinders: u64) -> Result<SeekCurve, String> {
        let max_d = cylinders.saturating_sub(1).max(2);
        if !(t2t_ns < avg_ns && avg_ns < full_ns) {
            return Err(format!(
                "seek times must satisfy track-to-track < average < full stroke (got {} < {} < {} ms)",
                t2t_ns / 1e6,
                avg_ns / 1e6,
                full_ns / 1e6
            ));
        }
        // The distances sampled do not depend on the curve: take them, and their square roots,
        // once for the whole fit.
        let samples = SeekSamples::new(max_d);
        let lo_curve = Self::with_knee(t2t_ns, full_ns, max_d, 2.0);
        let hi_curve = Self::with_knee(t2t_ns, full_ns, max_d, max_d as f64);
        let (lo, hi) = (lo_curve.weighted_mean_over(&samples), hi_curve.weighted_mean_over(&samples));
        if avg_ns < lo - 1.0 || avg_ns > hi + 1.0 {
            return Err(format!(
                "no sqrt-then-linear seek curve from {} ms (track-to-track) to {} ms (full stroke) has a {} ms average; \
                 the average must lie between {:.2} and {:.2} ms",
                t2t_ns / 1e6,
                full_ns / 1e6,
                avg_ns / 1e6,
                lo / 1e6,
                hi / 1e6
            ));
        }
        let (mut a, mut b) = (2.0, max_d as f64);
        for _ in 0..80 {
            let mid = 0.5 * (a + b);
            let at_end = mid == a || mid == b;
            if Self::with_knee(t2t_ns, full_ns, max_d, mid).weighted_mean_over(&samples) < avg_ns {
                a = mid;
            } else {
                b = mid;
            }
            // Once the midpoint is an end of the interval (a and b adjacent or equal floats),
            // this step's update leaves a state that every later step maps to itself: stop.
            if at_end {
                break;
            }
        }
        Ok(Self::with_knee(t2t_ns, full_ns, max_d, 0.5 * (a + b)))
    }
}

/// The seek distances the datasheet average is taken over: at most about 20,000, each standing
/// for `step` neighbouring distances and weighted by how many cylinder pairs are that far apart.
struct SeekSamples {
    max_d: u64,
    points: Vec<SeekSample>,
}

struct SeekSample {
    x: f64,
    /// `(x - 1).sqrt()`.
    root: f64,
    w: f64,
}

impl SeekSamples {
    fn new(m: u64) -> SeekSamples {
        let step = (m / 20_000).max(1);
        let mut points = Vec::with_capacity((m / step + 1) as usize);
        let mut d = 1;
        while d <= m {
            let hi = (d + step - 1).min(m);
            let mid = (d + hi) / 2;
            let n = (hi - d + 1) as f64;
            let x = to_f64(mid);
            points.push(SeekSample { x, root: (x - 1.0).sqrt(), w: (m + 1 - mid) as f64 * n });
            d = hi + 1;
        }
        SeekSamples { max_d: m, points }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
struct Zone {
    first_lba: u64,
    first_cyl: u64,
    cyls: u64,
    spt: u64,
    sector_ns: f64,
    /// Skew of a track after a head switch, in revolutions (whole sectors).
    head_skew: f64,
    /// Skew of the first track of a cylinder against the last of the previous one.
    cyl_skew: f64,
}

/// Where a sector is.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Place {
    zone: usize,
    cyl: u64,
    head: u64,
    sector: u64,
    /// Track number within the zone.
    track: u64,
    /// Angular position of the track's first sector, revolutions (not reduced modulo 1).
    skew: f64,
}

/// The track of the last [`Hdd::locate`]. Most lookups fall in it (the read-ahead starts where a
/// read ended; a read-ahead is stopped on the track it was on) or on the track after it (a
/// transfer crossing a track), and are answered from it without a zone search or divisions.
#[derive(Debug, Clone, Copy)]
struct TrackHint {
    /// The track's first sector.
    first: u64,
    /// Sectors per track of its zone (0: no hint yet).
    spt: u64,
    /// Tracks in its zone.
    zone_tracks: u64,
    /// Where the first sector is.
    place: Place,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct HeadPos {
    cyl: u64,
    head: u64,
}

/// One segment of the drive's cache: sectors `[start, end)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Segment {
    start: u64,
    end: u64,
    valid: bool,
}

/// Most segments a lookup scans with one branch-free pass building a bit mask.
const MASK_SCAN_MAX: usize = 64;

/// No segment, in the recency links.
const NIL: u32 = u32::MAX;

/// The drive's cache segments, with two indexes kept in step with them so that the two
/// questions every request asks cost no scan of all segments:
///
/// - "Which valid segment holds `[a, b)`?" A random read almost never finds one. Sector space
///   is cut into buckets of `2^shift` sectors, at least a segment's size, and `holders` counts
///   for each bucket (folded modulo the table's size) the valid segments that start in it. A
///   segment no longer than a bucket that holds sector `a` starts in `a`'s bucket or the one
///   before, so a read for which both count nobody is in no segment. Only the others (a few
///   percent of random reads, and every hit) scan the segments as before, so the answer is
///   always the lowest-index valid segment holding the range.
/// - "Which segment does a miss reuse?" The lowest-index invalid one (`free`, a bit set), else
///   the least recently used: `links` chain the segments in order of last use, most recent at
///   `mru`, so the answer is `lru`. A segment becomes valid only through [`Segments::fill`],
///   which uses it, so once none is invalid the order is that of last use of valid segments.
///
/// Every change of a segment's range or validity goes through [`Segments::set`], which updates
/// `holders` and `free`; recency changes only through [`Segments::touch`].
#[derive(Debug, Clone)]
struct Segments {
    segs: Vec<Segment>,
    /// Bit `i % 64` of word `i / 64` set: segment `i` is invalid.
    free: Vec<u64>,
    /// Recency order: each segment's neighbours, towards `mru` and towards `lru`.
    links: Vec<Link>,
    mru: u32,
    lru: u32,
    /// Valid segments starting in each bucket; bucket `x >> shift` is counted at
    /// `(x >> shift) & slot_mask`.
    holders: Vec<u32>,
    shift: u32,
    slot_mask: u64,
    /// Valid segments longer than a bucket, counted here instead. The model never makes one
    /// (a segment ends at most a segment's size after its start), but if there is any, every
    /// lookup scans.
    wide: u32,
}

/// A segment's neighbours in the recency order (`NIL`: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Link {
    newer: u32,
    older: u32,
}

/// Where [`Segments::holders`] counts a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Counted {
    /// Invalid: nowhere.
    No,
    /// In the bucket it starts in.
    Bucket(u64),
    /// In `wide`.
    Wide,
}

impl Segments {
    /// `n` invalid segments of `seg_sectors` sectors each.
    fn new(n: usize, seg_sectors: u64) -> Segments {
        assert!(n < NIL as usize, "too many segments");
        // 128 slots per segment: a read far from every segment still finds one counted in its
        // two buckets (folded together with others) about once in 64, for reads spread over
        // the disk.
        let slots = (n.max(1) * 128).next_power_of_two().clamp(64, 1 << 16);
        Segments {
            segs: vec![Segment::default(); n],
            free: (0..n.div_ceil(64)).map(|w| if (w + 1) * 64 <= n { u64::MAX } else { (1 << (n % 64)) - 1 }).collect(),
            links: (0..n as u32).map(|i| Link { newer: i.checked_sub(1).unwrap_or(NIL), older: if i + 1 == n as u32 { NIL } else { i + 1 } }).collect(),
            mru: if n == 0 { NIL } else { 0 },
            lru: if n == 0 { NIL } else { n as u32 - 1 },
            holders: vec![0; slots],
            shift: seg_sectors.max(1).next_power_of_two().trailing_zeros(),
            slot_mask: slots as u64 - 1,
            wide: 0,
        }
    }

    fn len(&self) -> usize {
        self.segs.len()
    }

    fn is_empty(&self) -> bool {
        self.segs.is_empty()
    }

    fn get(&self, i: usize) -> Segment {
        self.segs[i]
    }

    /// Segment `i` now holds `[start, end)` and is the most recently used.
    fn fill(&mut self, i: usize, start: u64, end: u64) {
        self.set(i, Segment { start, end, valid: true });
        self.touch(i);
    }

    fn set_start(&mut self, i: usize, start: u64) {
        self.set(i, Segment { start, ..self.segs[i] });
    }

    fn set_end(&mut self, i: usize, end: u64) {
        self.set(i, Segment { end, ..self.segs[i] });
    }

    /// Invalidates every valid segment overlapping `[a, b)`.
    fn invalidate_overlapping(&mut self, a: u64, b: u64) {
        for i in 0..self.segs.len() {
            let s = self.segs[i];
            if s.valid && a < s.end && s.start < b {
                self.set(i, Segment { valid: false, ..s });
            }
        }
    }

    /// The one place a segment's range or validity changes: keeps `holders` and `free` in step.
    #[inline(always)]
    fn set(&mut self, i: usize, new: Segment) {
        let old = self.segs[i];
        let (was, now) = (self.counted(&old), self.counted(&new));
        if was != now {
            self.count(was, false);
            self.count(now, true);
        }
        if old.valid != new.valid {
            self.free[i / 64] ^= 1 << (i % 64);
        }
        self.segs[i] = new;
    }

    #[inline(always)]
    fn counted(&self, s: &Segment) -> Counted {
        if !s.valid {
            Counted::No
        } else if s.end.saturating_sub(s.start) > 1 << self.shift {
            Counted::Wide
        } else {
            Counted::Bucket(s.start >> self.shift)
        }
    }

    #[inline(always)]
    fn count(&mut self, c: Counted, add: bool) {
        let n = match c {
            Counted::No => return,
            Counted::Wide => &mut self.wide,
            Counted::Bucket(b) => &mut self.holders[(b & self.slot_mask) as usize],
        };
        *n = if add { *n + 1 } else { *n - 1 };
    }

    /// Marks segment `i` as the most recently used.
    #[inline(always)]
    fn touch(&mut self, i: usize) {
        let me = i as u32;
        if self.mru == me {
            return;
        }
        // Unlink (`i` has a newer neighbour, since it is not the most recent).
        let Link { newer, older } = self.links[i];
        self.links[newer as usize].older = older;
        if older == NIL {
            self.lru = newer;
        } else {
            self.links[older as usize].newer = newer;
        }
        // Link in front.
        self.links[self.mru as usize].newer = me;
        self.links[i] = Link { newer: NIL, older: self.mru };
        self.mru = me;
    }

    /// The segment a miss reuses: the first invalid one, else the least recently used.
    #[inline]
    fn victim(&self) -> usize {
        match self.free.iter().position(|&w| w != 0) {
            Some(w) => w * 64 + self.free[w].trailing_zeros() as usize,
            None => self.lru as usize,
        }
    }

    /// The first valid segment holding all of `[a, b)`.
    #[inline]
    fn holding(&self, a: u64, b: u64) -> Option<usize> {
        // A segment holding a non-empty `[a, b)` has sector `a`: if it is no longer than a
        // bucket, it starts in `a`'s bucket or the one before.
        let bucket = a >> self.shift;
        let here = self.holders[(bucket & self.slot_mask) as usize];
        let before = self.holders[(bucket.wrapping_sub(1) & self.slot_mask) as usize];
        if a < b && self.wide == 0 && here | before == 0 {
            return None;
        }
        self.scan_holding(a, b)
    }

    /// `holding` by a scan over all segments. Branch-free for up to `MASK_SCAN_MAX` segments
    /// (each comparison is as likely true as false, so branches would mispredict).
    fn scan_holding(&self, a: u64, b: u64) -> Option<usize> {
        if self.segs.len() > MASK_SCAN_MAX {
            return self.segs.iter().position(|s| s.valid & (s.start <= a) & (b <= s.end));
        }
        let mut mask = 0u64;
        for (i, s) in self.segs.iter().enumerate() {
            let holds = s.valid & (s.start <= a) & (b <= s.end);
            mask |= (holds as u64) << i;
        }
        (mask != 0).then(|| mask.trailing_zeros() as usize)
    }
}

/// The read-ahead the head is doing in the background: sectors `[from, to)` into `seg`, begun at
/// `t0` with the head at `pos0`.
#[derive(Debug, Clone, Copy)]
struct Background {
    seg: usize,
    from: u64,
    to: u64,
    t0: f64,
    pos0: HeadPos,
}

/// A mechanical disk drive (see the module comment).
#[derive(Debug, Clone)]
pub struct Hdd {
    p: HddParams,
    capacity: u64,
    rev_ns: f64,
    zones: Vec<Zone>,
    seek: SeekCurve,
    head_switch_ns: f64,
    overhead_ns: f64,
    interface_ns_per_sector: f64,
    seg_sectors: u64,
    // State.
    pos: HeadPos,
    busy_until: u64,
    segments: Segments,
    bg: Option<Background>,
    pending: std::collections::VecDeque<(u64, u64)>,
    pending_sectors: u64,
    /// The track of the last `locate` (a lookup hint only).
    last_track: std::cell::Cell<TrackHint>,
}

impl Hdd {
    pub fn from_spec(mut s: Spec) -> Result<Hdd, ConfigError> {
        let mut p = s.preset_params("hdd", PRESETS)?;
        p.capacity_bytes = s.bytes("capacity", p.capacity_bytes)?;
        p.rpm = s.f64("rpm", p.rpm)?;
        p.seek_t2t_ms = s.duration_ns("seek_t2t", p.seek_t2t_ms * 1e6)? / 1e6;
        p.seek_avg_ms = s.duration_ns("seek_avg", p.seek_avg_ms * 1e6)? / 1e6;
        p.seek_full_ms = s.duration_ns("seek_full", p.seek_full_ms * 1e6)? / 1e6;
        p.head_switch_ms = s.duration_ns("head_switch", p.head_switch_ms * 1e6)? / 1e6;
        p.overhead_ms = s.duration_ns("overhead", p.overhead_ms * 1e6)? / 1e6;
        p.surfaces = s.u64("surfaces", p.surfaces as u64)?.min(u32::MAX as u64) as u32;
        p.rate_outer_mbs = s.f64("rate_outer", p.rate_outer_mbs)?;
        p.rate_inner_mbs = s.f64("rate_inner", p.rate_inner_mbs)?;
        p.zones = s.u64("zones", p.zones as u64)?.min(u32::MAX as u64) as u32;
        p.interface_mbs = s.f64("interface", p.interface_mbs)?;
        p.cache = s.bool("cache", p.cache)?;
        p.cache_bytes = s.bytes("cache_size", p.cache_bytes)?;
        p.segments = s.u64("segments", p.segments as u64)?.min(u32::MAX as u64) as u32;
        p.read_ahead = s.bool("read_ahead", p.read_ahead)?;
        p.read_ahead_shortcut = s.bool("read_ahead_shortcut", p.read_ahead_shortcut)?;
        p.write_cache = s.bool("write_cache", p.write_cache)?;
        s.finish(KEYS)?;
        Hdd::new(p)
    }

    /// Builds the drive, deriving geometry and fitting the seek curve.
    pub fn new(p: HddParams) -> Result<Hdd, ConfigError> {
        let bad = |k: &str, m: String| ConfigError::new(format!("hdd.{k}"), m);
        // Documented ranges (docs/devices.md): wide around every drive built, narrow enough that
        // the geometry tables stay small and no arithmetic overflows.
        super::check_range("hdd.rpm", p.rpm, 1000.0, 30_000.0)?;
        super::check_range("hdd.rate_outer", p.rate_outer_mbs, 0.001, 10_000.0)?;
        super::check_range("hdd.rate_inner", p.rate_inner_mbs, 0.001, 10_000.0)?;
        super::check_range("hdd.interface", p.interface_mbs, 0.001, 100_000.0)?;
        super::check_range("hdd.surfaces", p.surfaces as f64, 1.0, 256.0)?;
        super::check_range("hdd.zones", p.zones as f64, 1.0, 1024.0)?;
        super::check_range("hdd.capacity", p.capacity_bytes as f64, SECTOR as f64, super::MAX_CAPACITY_BYTES as f64)?;
        super::check_range("hdd.cache_size", p.cache_bytes as f64, 0.0, (1u64 << 30) as f64)?;
        if p.cache {
            super::check_range("hdd.segments", p.segments as f64, 1.0, 1024.0)?;
        }
        if p.rate_inner_mbs > p.rate_outer_mbs {
            return Err(bad("rate_inner", "media rates must be positive, inner at most outer".into()));
        }
        let capacity = p.capacity_bytes / SECTOR;
        if p.cache && (p.segments == 0 || p.cache_bytes / p.segments as u64 / SECTOR == 0) {
            return Err(bad("segments", "each segment must hold at least one sector".into()));
        }
        let rev_ns = 60e9 / p.rpm;
        let spt_at = |mbs: f64| ((mbs * 1e6 * rev_ns / 1e9) / SECTOR as f64).round().max(1.0) as u64;
        let (spt_o, spt_i) = (spt_at(p.rate_outer_mbs), spt_at(p.rate_inner_mbs));
        let nz = p.zones as u64;
        let spts: Vec<u64> = if nz == 1 {
            vec![(spt_o + spt_i) / 2]
        } else {
            (0..nz).map(|z| (spt_o as f64 + (spt_i as f64 - spt_o as f64) * z as f64 / (nz - 1) as f64).round() as u64).collect()
        };
        let per_cyl_all: u64 = spts.iter().sum::<u64>() * p.surfaces as u64;
        let cyls_per_zone = capacity.div_ceil(per_cyl_all).max(1);
        let (hs_ns, t2t_ns) = (p.head_switch_ms * 1e6, p.seek_t2t_ms * 1e6);
        let mut zones = Vec::with_capacity(spts.len());
        let (mut lba, mut cyl) = (0, 0);
        for &spt in &spts {
            let sector_ns = rev_ns / spt as f64;
            let skew = |ns: f64| (ns / sector_ns).ceil() / spt as f64;
            zones.push(Zone {
                first_lba: lba,
                first_cyl: cyl,
                cyls: cyls_per_zone,
                spt,
                sector_ns,
                head_skew: skew(hs_ns),
                cyl_skew: skew(t2t_ns),
            });
            lba += cyls_per_zone * spt * p.surfaces as u64;
            cyl += cyls_per_zone;
        }
        let seek = SeekCurve::fit(t2t_ns, p.seek_avg_ms * 1e6, p.seek_full_ms * 1e6, cyl).map_err(|m| bad("seek_avg", m))?;
        let nseg = if p.cache { p.segments as usize } else { 0 };
        let seg_sectors = if p.cache { p.cache_bytes / p.segments as u64 / SECTOR } else { 0 };
        Ok(Hdd {
            capacity,
            rev_ns,
            zones,
            seek,
            head_switch_ns: hs_ns,
            overhead_ns: p.overhead_ms * 1e6,
            interface_ns_per_sector: SECTOR as f64 * 1e3 / p.interface_mbs,
            seg_sectors,
            pos: HeadPos::default(),
            busy_until: 0,
            segments: Segments::new(nseg, seg_sectors),
            bg: None,
            pending: Default::default(),
            pending_sectors: 0,
            last_track: std::cell::Cell::new(TrackHint {
                first: 0,
                spt: 0,
                zone_tracks: 0,
                place: Place { zone: 0, cyl: 0, head: 0, sector: 0, track: 0, skew: 0.0 },
            }),
            p,
        })
    }

    pub fn params(&self) -> &HddParams {
        &self.p
    }

    pub fn seek_curve(&self) -> &SeekCurve {
        &self.seek
    }

    /// Time of one revolution, ns.
    pub fn revolution_ns(&self) -> f64 {
        self.rev_ns
    }

    /// Sectors per track of the zone holding `sector`.
    pub fn sectors_per_track(&self, sector: u64) -> u64 {
        self.zones[self.locate(sector % self.capacity).zone].spt
    }

    /// Where sector `lba` is.
    #[inline]
    fn locate(&self, lba: u64) -> Place {
        let hint = self.last_track.get();
        let off = lba.wrapping_sub(hint.first);
        if off < hint.spt {
            return Place { sector: off, ..hint.place };
        }
        self.locate_elsewhere(lba)
    }

    /// `locate` of a sector outside the hinted track; makes its track the hint.
    #[inline(never)]
    fn locate_elsewhere(&self, lba: u64) -> Place {
        let hint = self.last_track.get();
        let off = lba.wrapping_sub(hint.first);
        let surfaces = self.p.surfaces as u64;
        let (pl, zone_tracks) = if off < 2 * hint.spt && hint.place.track + 1 < hint.zone_tracks {
            // The next track of the same zone: the next surface, or the first of the next cylinder.
            let (mut cyl, mut head) = (hint.place.cyl, hint.place.head + 1);
            if head == surfaces {
                (cyl, head) = (cyl + 1, 0);
            }
            let (zone, track) = (hint.place.zone, hint.place.track + 1);
            let skew = self.track_skew(zone, cyl, track);
            (Place { zone, cyl, head, sector: off - hint.spt, track, skew }, hint.zone_tracks)
        } else {
            self.locate_by_search(lba)
        };
        let spt = self.zones[pl.zone].spt;
        self.last_track.set(TrackHint { first: lba - pl.sector, spt, zone_tracks, place: Place { sector: 0, ..pl } });
        pl
    }

    /// `locate` from the zone table; also returns the zone's number of tracks.
    fn locate_by_search(&self, lba: u64) -> (Place, u64) {
        // A lookup off the hinted track is still in its zone more often than not: check that
        // zone before searching.
        let last = self.last_track.get().place.zone;
        let in_last = self.zones[last].first_lba <= lba && self.zones.get(last + 1).map_or(true, |n| lba < n.first_lba);
        let zone = if in_last { last } else { self.zones.partition_point(|z| z.first_lba <= lba) - 1 };
        let z = &self.zones[zone];
        let off = lba - z.first_lba;
        let surfaces = self.p.surfaces as u64;
        // 32-bit divisions when the numbers fit (always, for zones of real drives): the same
        // quotients, at a fraction of the cost of 64-bit ones on common x86-64 cores.
        let (track, sector, cyl_local, head) = if off <= u32::MAX as u64 && z.spt <= u32::MAX as u64 && surfaces <= u32::MAX as u64 {
            let (off, spt, sf) = (off as u32, z.spt as u32, surfaces as u32);
            let track = off / spt;
            ((track) as u64, (off % spt) as u64, (track / sf) as u64, (track % sf) as u64)
        } else {
            let track = off / z.spt;
            (track, off % z.spt, track / surfaces, track % surfaces)
        };
        let cyl = z.first_cyl + cyl_local;
        let skew = self.track_skew(zone, cyl, track);
        (Place { zone, cyl, head, sector, track, skew }, z.cyls * surfaces)
    }

    /// Skew of track `track` (of cylinder `cyl`) of `zone` against the zone's first track,
    /// revolutions: a cylinder skew per cylinder and a head skew per head switch before it.
    #[inline]
    fn track_skew(&self, zone: usize, cyl: u64, track: u64) -> f64 {
        let z = &self.zones[zone];
        let cyl_local = cyl - z.first_cyl;
        let switches = track - cyl_local;
        to_f64(cyl_local) * z.cyl_skew + to_f64(switches) * z.head_skew
    }

    /// Angular position (revolutions, [0, 1)) where `place`'s sector starts.
    fn angle(&self, place: &Place) -> f64 {
        fract(place.skew + to_f64(place.sector) / to_f64(self.zones[place.zone].spt))
    }

    /// Moves the head from `pos` at time `t` over sectors `[from, to)`, calling `chunk(lba, n,
    /// t_start, sector_ns, head)` for each track's part, `head` being that track (stop early by
    /// returning false). Returns the time the last sector has passed and where the head is.
    ///
    /// The cost is one step per track crossed. Callers keep the ranges short: a read covers a
    /// few tracks, and the background read-ahead is walked from its segment's first track only
    /// (see `rebase_bg`), so a step count is bounded by a segment's tracks whatever the length
    /// of the stream. The times are accumulated track by track, in this order, on purpose: a
    /// closed form (zone rate times sectors plus switches) would round differently and change
    /// the figures in docs/devices.md by a nanosecond here and there.
    #[inline]
    fn walk(&self, mut pos: HeadPos, mut t: f64, from: u64, to: u64, mut chunk: impl FnMut(u64, u64, f64, f64, HeadPos) -> bool) -> (f64, HeadPos) {
        let mut lba = from;
        while lba < to {
            let pl = self.locate(lba);
            let z = &self.zones[pl.zone];
            let n = (to - lba).min(z.spt - pl.sector);
            t += if pl.cyl != pos.cyl {
                self.seek.time_ns(pl.cyl.abs_diff(pos.cyl))
            } else if pl.head != pos.head {
                self.head_switch_ns
            } else {
                0.0
            };
            pos = HeadPos { cyl: pl.cyl, head: pl.head };
            let here = fract(t / self.rev_ns);
            // Both angles are in [0, 1), so their difference is in (-1, 1) and its Euclidean
            // remainder by 1 is the difference itself or one more (exactly `rem_euclid(1.0)`,
            // without its call to fmod).
            let d = self.angle(&pl) - here;
            let mut wait = if d < 0.0 { d + 1.0 } else { d };
            if wait > 1.0 - 1e-6 {
                wait = 0.0; // rounding: the sector is under the head now
            }
            t += wait * self.rev_ns;
            if !chunk(lba, n, t, z.sector_ns, pos) {
                return (t, pos);
            }
            t += to_f64(n) * z.sector_ns;
            lba += n;
        }
        (t, pos)
    }

    /// When sector `x` (exclusive end) of the background read-ahead is in the buffer.
    fn bg_ready_at(&self, bg: &Background, x: u64) -> f64 {
        if x <= bg.from {
            return bg.t0;
        }
        let mut ready = bg.t0;
        self.walk(bg.pos0, bg.t0, bg.from, bg.to, |lba, n, ts, sn, _| {
            if x <= lba + n {
                ready = ts + to_f64(x - lba) * sn;
                false
            } else {
                true
            }
        });
        ready
    }

    /// Moves the start of the running read-ahead's schedule up to the track holding its segment's
    /// first sector, so that following it costs a segment's worth of tracks, not the whole stream.
    /// The schedule itself is unchanged: the head is exactly at that track's chunk at that time.
    fn rebase_bg(&mut self) {
        let Some(bg) = self.bg else { return };
        let keep = self.segments.get(bg.seg).start;
        if keep <= bg.from {
            return;
        }
        let mut new = None;
        self.walk(bg.pos0, bg.t0, bg.from, bg.to, |lba, n, ts, _, head| {
            if keep < lba + n {
                new = Some((lba, ts, head));
                false
            } else {
                true
            }
        });
        if let Some((from, t0, pos0)) = new {
            self.bg = Some(Background { from, t0, pos0, ..bg });
        }
    }

    /// Stops the background read-ahead at time `t`: its segment keeps what was read, the head
    /// stays on the track it was on.
    fn stop_bg(&mut self, t: f64) {
        let Some(bg) = self.bg.take() else { return };
        let (reached, pos) = self.bg_stopped_at(&bg, t);
        self.pos = pos;
        let start = self.segments.get(bg.seg).start;
        self.segments.set_end(bg.seg, reached.max(start));
    }

    /// Where read-ahead `bg` would be if stopped at time `t`: the end of what it had read, and
    /// the head's position.
    fn bg_stopped_at(&self, bg: &Background, t: f64) -> (u64, HeadPos) {
        let mut reached = bg.to;
        let mut at = bg.pos0;
        let (_, end_pos) = self.walk(bg.pos0, bg.t0, bg.from, bg.to, |lba, n, ts, sn, head| {
            at = head;
            if t < ts + to_f64(n) * sn {
                // (t - ts) / sn is below n here: the i64 conversion truncates as u64's would.
                reached = if t <= ts { lba } else { lba + ((t - ts) / sn) as i64 as u64 };
                false
            } else {
                true
            }
        });
        (reached, if reached == bg.to { end_pos } else { at })
    }

    /// Writes `[a, b)` to the media from time `t`; returns the finish time.
    fn media_write(&mut self, t: f64, a: u64, b: u64) -> f64 {
        self.stop_bg(t);
        let (f, pos) = self.walk(self.pos, t, a, b, |_, _, _, _, _| true);
        self.pos = pos;
        f
    }

    /// Destages unwritten data from the write cache, starting at `t`, while it starts before
    /// `until` (idle time) or unconditionally when `until` is infinite; returns when it ends.
    fn destage(&mut self, mut t: f64, until: f64) -> f64 {
        while t < until {
            let Some((a, b)) = self.pending.pop_front() else { break };
            self.pending_sectors -= b - a;
            t = self.media_write(t, a, b);
        }
        t
    }

    fn invalidate(&mut self, a: u64, b: u64, t: f64) {
        if let Some(bg) = self.bg {
            let s = self.segments.get(bg.seg);
            if a < bg.to.max(s.end) && s.start < b {
                self.stop_bg(t);
            }
        }
        self.segments.invalidate_overlapping(a, b);
    }

    fn read(&mut self, t0: f64, a: u64, b: u64) -> (f64, bool) {
        let n = b - a;
        let t = t0 + self.overhead_ns;
        let bus = to_f64(n) * self.interface_ns_per_sector;
        // Unwritten data in the write cache.
        if self.pending.iter().any(|&(x, y)| x <= a && b <= y) {
            return (t + bus, true);
        }
        // The segment the read-ahead is filling: a hit, or a wait for the head without a seek,
        // unless the read-ahead would reach the data later than stopping it and going there
        // directly (data a few tracks ahead): the drive then stops it, as for any other miss.
        if let Some(bg) = self.bg {
            let s = self.segments.get(bg.seg);
            if s.valid && s.start <= a && b <= bg.to {
                let ready = self.bg_ready_at(&bg, b);
                if ready <= t {
                    self.slide(bg.seg, a, t + bus);
                    return (t + bus, true);
                }
                let waited = ready.max(t + bus);
                let direct = if self.p.read_ahead_shortcut {
                    let (_, here) = self.bg_stopped_at(&bg, t);
                    self.walk(here, t, a, b, |_, _, _, _, _| true).0
                } else {
                    f64::INFINITY
                };
                if waited <= direct {
                    self.slide(bg.seg, a, waited);
                    return (waited, false);
                }
            }
        }
        // A segment holding the data.
        if let Some(i) = self.segments.holding(a, b) {
            if self.bg.map(|bg| bg.seg) != Some(i) {
                self.stop_bg(t);
            }
            let finish = t + bus;
            self.slide(i, a, finish);
            return (finish, true);
        }
        // Miss: read from the media.
        self.stop_bg(t);
        let (finish, pos) = self.walk(self.pos, t, a, b, |_, _, _, _, _| true);
        self.pos = pos;
        if !self.segments.is_empty() {
            let i = self.segments.victim();
            let s = self.seg_sectors;
            self.segments.fill(i, if n > s { b - s } else { a }, b);
            if self.p.read_ahead && n < s {
                let to = (a + s).min(self.capacity);
                if to > b {
                    self.bg = Some(Background { seg: i, from: b, to, t0: finish, pos0: pos });
                }
            }
        }
        (finish, false)
    }

    /// After a read of `[a, ..)` served by segment `i`: keep the segment full ahead of the reader.
    fn slide(&mut self, i: usize, a: u64, now: f64) {
        self.segments.touch(i);
        if !self.p.read_ahead {
            return;
        }
        let s = self.seg_sectors;
        let want = (a + s).min(self.capacity);
        match self.bg {
            Some(ref mut bg) if bg.seg == i => {
                if want > bg.to {
                    bg.to = want;
                }
                let start = self.segments.get(i).start.max(want.saturating_sub(s));
                self.segments.set_start(i, start);
                self.rebase_bg();
            }
            _ => {
                let seg = self.segments.get(i);
                if want > seg.end {
                    // The head restarts the read-ahead from where the segment ends.
                    self.stop_bg(now);
                    self.segments.set_start(i, seg.start.max(want.saturating_sub(s)));
                    self.bg = Some(Background { seg: i, from: seg.end, to: want, t0: now, pos0: self.pos });
                }
            }
        }
    }
}

impl Device for Hdd {
    fn name(&self) -> String {
        format!("hdd:{}", self.p.preset)
    }

    fn service(&mut self, req: &DeviceRequest, now_ns: u64) -> Service {
        let start = now_ns.max(self.busy_until);
        // Requests beyond the end wrap around (a model of any address space); the check spares
        // the 64-bit division for the requests that fit.
        let a = if req.sector < self.capacity { req.sector } else { req.sector % self.capacity };
        let b = (a + req.sectors.max(1)).min(self.capacity);
        let mut t = to_f64(start);
        // Idle time before this request: destage the write cache.
        if !self.pending.is_empty() {
            let idle_from = self.busy_until as f64;
            let end = self.destage(idle_from, now_ns as f64);
            t = t.max(end);
        }
        let (finish, hit) = match req.op {
            Op::Read => self.read(t, a, b),
            Op::Write => {
                self.invalidate(a, b, t);
                if self.p.cache && self.p.write_cache {
                    let limit = self.seg_sectors * self.segments.len() as u64;
                    if self.pending_sectors + (b - a) > limit {
                        t = self.destage(t, f64::INFINITY);
                    }
                    let finish = t + self.overhead_ns + (b - a) as f64 * self.interface_ns_per_sector;
                    if b - a <= limit {
                        self.pending.push_back((a, b));
                        self.pending_sectors += b - a;
                        (finish, true)
                    } else {
                        (self.media_write(t + self.overhead_ns, a, b), false)
                    }
                } else {
                    (self.media_write(t + self.overhead_ns, a, b), false)
                }
            }
        };
        let finish = to_ns(finish, start);
        self.busy_until = finish;
        Service { start_ns: start, finish_ns: finish, cache_hit: hit }
    }

    fn parameters(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.p).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("model".into(), "hdd".into());
            o.insert("capacity_sectors".into(), self.capacity.into());
            o.insert("revolution_ms".into(), (self.rev_ns / 1e6).into());
            o.insert("cylinders".into(), (self.zones.len() as u64 * self.zones[0].cyls).into());
            o.insert("sectors_per_track_outer".into(), self.zones[0].spt.into());
            o.insert("sectors_per_track_inner".into(), self.zones[self.zones.len() - 1].spt.into());
            o.insert("segment_bytes".into(), (self.seg_sectors * SECTOR).into());
            o.insert(
                "seek_curve".into(),
                serde_json::json!({
                    "model": "Ruemmler & Wilkes 1994: t2t + a*sqrt(d-1) up to knee, then linear",
                    "a_ms": self.seek.a / 1e6,
                    "knee_cylinders": self.seek.knee,
                    "slope_ms_per_cylinder": self.seek.slope / 1e6,
                    "weighted_mean_ms": self.seek.weighted_mean_ns() / 1e6,
                }),
            );
        }
        v
    }

    fn capacity_sectors(&self) -> Option<u64> {
        Some(self.capacity)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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

    use rand::{Rng, SeedableRng};

    impl Segments {
        /// Checks that the indexes agree with the segments they index.
        fn check_indexes(&self) {
            let mut holders = vec![0u32; self.holders.len()];
            let mut wide = 0;
            for (i, s) in self.segs.iter().enumerate() {
                match self.counted(s) {
                    Counted::No => assert!(!s.valid),
                    Counted::Wide => wide += 1,
                    Counted::Bucket(b) => holders[(b & self.slot_mask) as usize] += 1,
                }
                assert_eq!(self.free[i / 64] >> (i % 64) & 1 == 1, !s.valid, "free bit of {i}");
            }
            assert_eq!(holders, self.holders);
            assert_eq!(wide, self.wide);
            // The recency links form one list over all segments.
            let mut seen = vec![false; self.len()];
            let (mut at, mut newer) = (self.mru, NIL);
            while at != NIL {
                assert!(!std::mem::replace(&mut seen[at as usize], true), "segment {at} twice in the recency list");
                assert_eq!(self.links[at as usize].newer, newer);
                (newer, at) = (at, self.links[at as usize].older);
            }
            assert_eq!(newer, self.lru);
            assert!(seen.iter().all(|&x| x), "a segment missing from the recency list");
        }
    }

    /// The segment table as it was before its indexes: a vector scanned on every question, with
    /// a use clock for recency.
    #[derive(Default)]
    struct PlainSegments {
        segs: Vec<(Segment, u64)>,
        clock: u64,
    }

    impl PlainSegments {
        fn touch(&mut self, i: usize) {
            self.clock += 1;
            self.segs[i].1 = self.clock;
        }

        /// The first valid segment holding `[a, b)`.
        fn holding(&self, a: u64, b: u64) -> Option<usize> {
            self.segs.iter().position(|(s, _)| s.valid && s.start <= a && b <= s.end)
        }

        /// The first invalid segment, else the least recently used (invalid ones count as used at
        /// time 0).
        fn victim(&self) -> usize {
            let (mut best, mut best_use) = (0, u64::MAX);
            for (i, (s, last_use)) in self.segs.iter().enumerate() {
                let used = if s.valid { *last_use } else { 0 };
                if used < best_use {
                    (best, best_use) = (i, used);
                }
            }
            best
        }
    }

    #[test]
    fn segment_indexes_agree_with_plain_scans() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        for (n, seg) in [(1, 64), (3, 561), (16, 2048), (16, 100), (64, 8), (70, 16), (130, 5)] {
            let mut fast = Segments::new(n, seg);
            let mut plain = PlainSegments { segs: vec![(Segment::default(), 0); n], clock: 0 };
            // A small address space, so that segments overlap and lookups often hit.
            let space = seg * (n as u64 + 4) * 2;
            let some = |rng: &mut rand_pcg::Pcg64| rng.gen_range(0..space);
            for step in 0..20_000 {
                let i = rng.gen_range(0..n);
                match rng.gen_range(0..10) {
                    // Mostly what the drive does: a miss fills the victim with at most a
                    // segment's sectors; but also longer ranges (counted as wide).
                    0..=3 => {
                        let i = if rng.gen_bool(0.8) { fast.victim() } else { i };
                        let start = some(&mut rng);
                        let len = if rng.gen_bool(0.9) { rng.gen_range(1..=seg) } else { rng.gen_range(1..=4 * seg) };
                        fast.fill(i, start, start + len);
                        plain.segs[i].0 = Segment { start, end: start + len, valid: true };
                        plain.touch(i);
                    }
                    // A read-ahead moving a segment's start forward (possibly past its end, as
                    // `slide` does while a read-ahead runs) or stopping it at some end.
                    4 | 5 => {
                        let s = fast.get(i);
                        let start = s.start + rng.gen_range(0..=2 * seg);
                        fast.set_start(i, start);
                        plain.segs[i].0.start = start;
                    }
                    6 | 7 => {
                        let s = fast.get(i);
                        let end = s.start + rng.gen_range(0..=seg + 2);
                        fast.set_end(i, end);
                        plain.segs[i].0.end = end;
                    }
                    8 => {
                        let a = some(&mut rng);
                        let b = a + rng.gen_range(1..=2 * seg);
                        fast.invalidate_overlapping(a, b);
                        for (s, _) in &mut plain.segs {
                            if s.valid && a < s.end && s.start < b {
                                s.valid = false;
                            }
                        }
                    }
                    _ => {
                        if fast.get(i).valid {
                            fast.touch(i);
                            plain.touch(i);
                        }
                    }
                }
                for (j, (s, _)) in plain.segs.iter().enumerate() {
                    assert_eq!(fast.get(j), *s, "segment {j}");
                }
                assert_eq!(fast.victim(), plain.victim(), "victim, {n} segments, step {step}");
                // Lookups at random places and at the edges of segments.
                for _ in 0..8 {
                    let (a, b) = if rng.gen_bool(0.5) {
                        let a = some(&mut rng);
                        (a, a + rng.gen_range(1..=seg + 1))
                    } else {
                        let s = fast.get(rng.gen_range(0..n));
                        let a = s.start + rng.gen_range(0..=seg) - rng.gen_range(0..=1).min(s.start);
                        let b = if rng.gen_bool(0.5) { s.end.max(a + 1) } else { a + rng.gen_range(1..=seg) };
                        (a, b)
                    };
                    assert_eq!(fast.holding(a, b), plain.holding(a, b), "holding [{a}, {b}), {n} segments, step {step}");
                }
                if step % 64 == 0 {
                    fast.check_indexes();
                }
            }
            fast.check_indexes();
        }
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
}
