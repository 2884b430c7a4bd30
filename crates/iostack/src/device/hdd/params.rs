//! The drive model's parameters and its presets, each figure with its source.

use crate::device::SECTOR;

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
    /// Immediate read (read-on-arrival): after a read miss's seek, the drive reads the sectors
    /// that pass under the head while it waits for the first requested one, and keeps those
    /// just before it, on its track, in the segment.
    pub immediate_read: bool,
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
        immediate_read: false,
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
        immediate_read: false,
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
        immediate_read: false,
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
        immediate_read: false,
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
        immediate_read: false,
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
        immediate_read: false,
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
    "immediate_read",
];

