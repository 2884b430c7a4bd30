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
//! With `immediate_read` (read-on-arrival), the drive does what "hard disks attempt", "a read as
//! soon as the heads are near the desired track", so "blocks before the requested ones can be read
//! and stored in the disk cache too", "similar to a backward prefetching" (the KDSim/REDCAP paper,
//! footnote 3, l.132, after Ruemmler and Wilkes; its Section 6 explains its drive's behaviour on
//! backward reads by it, l.222 and l.260). After a read miss's seek the head passes over part of
//! the target track while the first requested sector comes round; the whole sectors that passed and
//! lie just before that sector on its track (not those that wrap round past the track's end, which
//! would not join the segment's run) go into the segment ahead of the requested ones, as many as
//! the segment holds beside them, and the read-ahead then fills only the rest of the segment. A
//! later read of those sectors is a hit and does not slide the segment (the drive keeps what it
//! read before the reader, so a reader going backward finds the next sectors there); a read past
//! them slides it as usual. Off, nothing is read before the request.
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
//!
//! # Files
//!
//! `params.rs` holds the parameters and the presets with their sources, `seek.rs` the seek
//! curve and its fit, `segments.rs` the drive's cache segments and their indexes; this file
//! holds the geometry, the head and the timing of each request.

mod params;
mod seek;
mod segments;
#[cfg(test)]
mod tests;

pub use params::*;
pub use seek::SeekCurve;
use seek::{fract, to_f64};
use segments::Segments;

use super::{to_ns, Device, DeviceRequest, Service, Spec, SECTOR};
use crate::error::ConfigError;
use crate::trace::Op;

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
    /// Per segment, the first sector its last read miss asked for: with `immediate_read`,
    /// `[start, arrival_end)` are the sectors read on arrival before it (empty when start is
    /// past it).
    arrival_end: Vec<u64>,
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
        p.immediate_read = s.bool("immediate_read", p.immediate_read)?;
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
            arrival_end: vec![0; nseg],
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
    /// the figures in docs/devices.md by a nanosecond here and there. Always inlined: each
    /// caller's step closure is then compiled into its loop (out of line, with `bg_stopped_at`
    /// inlined into `stop_bg`, it cost 6 M more instructions on a 1M-request Zipf trace).
    #[inline(always)]
    fn walk(&self, mut pos: HeadPos, mut t: f64, from: u64, to: u64, mut chunk: impl FnMut(u64, u64, f64, f64, HeadPos) -> bool) -> (f64, HeadPos) {
        let mut lba = from;
        while lba < to {
            let pl = self.locate(lba);
            let z = &self.zones[pl.zone];
            let n = (to - lba).min(z.spt - pl.sector);
            let (arrive, wait) = self.arrive(pos, t, &pl);
            t = arrive;
            pos = HeadPos { cyl: pl.cyl, head: pl.head };
            t += wait * self.rev_ns;
            if !chunk(lba, n, t, z.sector_ns, pos) {
                return (t, pos);
            }
            t += to_f64(n) * z.sector_ns;
            lba += n;
        }
        (t, pos)
    }

    /// Moving the head from `pos` at time `t` to the track of `pl`: when it is there (after the
    /// seek or head switch), and the part of a revolution it then waits for `pl`'s sector.
    #[inline(always)]
    fn arrive(&self, pos: HeadPos, t: f64, pl: &Place) -> (f64, f64) {
        let t = t + if pl.cyl != pos.cyl {
            self.seek.time_ns(pl.cyl.abs_diff(pos.cyl))
        } else if pl.head != pos.head {
            self.head_switch_ns
        } else {
            0.0
        };
        let here = fract(t / self.rev_ns);
        // Both angles are in [0, 1), so their difference is in (-1, 1) and its Euclidean
        // remainder by 1 is the difference itself or one more (exactly `rem_euclid(1.0)`,
        // without its call to fmod).
        let d = self.angle(pl) - here;
        let mut wait = if d < 0.0 { d + 1.0 } else { d };
        if wait > 1.0 - 1e-6 {
            wait = 0.0; // rounding: the sector is under the head now
        }
        (t, wait)
    }

    /// Immediate read: how many sectors just before `a`, on its track, pass whole under the
    /// head while it waits for `a` after moving from `pos` at time `t` (see the module comment).
    fn read_on_arrival(&self, pos: HeadPos, t: f64, a: u64) -> u64 {
        let pl = self.locate(a);
        let (_, wait) = self.arrive(pos, t, &pl);
        // Sector a - i starts i / spt of a revolution before a: it passes whole when the wait
        // is at least that long.
        let passed = (wait * to_f64(self.zones[pl.zone].spt)) as u64;
        passed.min(pl.sector)
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
    /// the head's position. Always inlined: `stop_bg`, which most misses pass, is its walk.
    #[inline(always)]
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
        let s = self.seg_sectors;
        let before = if self.p.immediate_read && n < s && !self.segments.is_empty() {
            self.read_on_arrival(self.pos, t, a).min(s - n)
        } else {
            0
        };
        let (finish, pos) = self.walk(self.pos, t, a, b, |_, _, _, _, _| true);
        self.pos = pos;
        if !self.segments.is_empty() {
            let i = self.segments.victim();
            let start = if n > s { b - s } else { a - before };
            self.segments.fill(i, start, b);
            self.arrival_end[i] = a;
            if self.p.read_ahead && n < s {
                // The read-ahead fills what the segment has left.
                let to = (start + s).min(self.capacity);
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
        if !self.p.read_ahead || a < self.arrival_end[i] {
            // (A read of sectors read on arrival, before those the segment's miss asked for,
            // keeps the segment where it is.)
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
