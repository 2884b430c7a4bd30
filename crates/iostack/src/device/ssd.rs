//! A flash SSD: latency by operation and size, channel parallelism, read/write asymmetry.
//!
//! A request is split into flash pages; page `p` lives on channel `p mod channels` (the
//! controller stripes consecutive logical pages across its channels, as the X25-M's ten-channel
//! controller does). Each channel does one page operation at a time.
//!
//! - A read costs the command `overhead`, then every page is read on its channel (`read` per page:
//!   array read plus channel transfer), waiting for the channel if a program is still running on
//!   it; the data goes to the host over the interface at `interface` MB/s, overlapped with the
//!   channel work, so a request finishes when both its slowest channel and its interface transfer
//!   are done: small reads are latency bound, large ones interface (or channel) bound.
//! - A write costs the command `overhead`, then is acknowledged once in the controller's buffer
//!   (`write_ack` latency, or the interface transfer if longer). Its pages are programmed later on
//!   their channels (`program` per page). The buffer holds `buffer` bytes spread over the channels;
//!   when a channel's backlog of programs exceeds its share, the acknowledgement waits until the
//!   backlog fits, so sustained writes run at the program bandwidth `channels * page / program`.
//!
//! Garbage collection, wear levelling and the mapping table are not modelled: random and
//! sequential writes cost the same per page (the X25-M's random-write IOPS are lower than this
//! model gives once its spare area is consumed).
//!
//! # Preset `ssd:x25m`: Intel X25-M G2 160 GB (SSDSA2MH160G2), REDCAP's SSD
//!
//! - 160 GB, MLC: the REDCAP paper, Section 5 ("an Intel X-25M SSDSA2MH160G2C1 that has a
//!   capacity of 160 GB and uses MLC flash"). 10 channels: reviews of the X25-M (Tom's Hardware,
//!   "Intel's X25-M Solid State Drive Reviewed", 2008: "addresses ten different MLC flash channels
//!   at once"; X-bit labs likewise).
//! - read latency 65 us, write latency 85 us, sequential read up to 250 MB/s and write up to
//!   70 MB/s: Intel's X25-M G2 specification as tabulated by AnandTech ("Intel's X25-M 34nm vs
//!   50nm: Not as Straight Forward As You'd Think", 2009, page 11; the same table gives the first
//!   generation's 85/115 us). The model meets them by construction: `overhead` 15 us + `read`
//!   50 us = 65 us for a 4 KiB read; 15 us + `write_ack` 70 us = 85 us for a 4 KiB write;
//!   `interface` 250 MB/s bounds large reads; `program` = 10 x 4 KiB / 70 MB/s = 585 us per page
//!   gives 70 MB/s sustained writes. Intel's October 2009 firmware update was reported to raise
//!   sequential writes by about 40 % (to about 100 MB/s on the 160 GB model; not confirmed from a
//!   source here): `program=410us` models that.
//! - 4 KiB pages and a 256 KiB data buffer: assumed (the drive's 32 MB DRAM mostly holds the
//!   mapping table).

use super::{to_ns, Device, DeviceRequest, Service, Spec, SECTOR};
use crate::error::ConfigError;
use crate::trace::Op;

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SsdParams {
    pub preset: String,
    pub capacity_bytes: u64,
    pub page_bytes: u64,
    pub channels: u32,
    /// Page read on a channel, us.
    pub read_us: f64,
    /// Page program on a channel, us.
    pub program_us: f64,
    /// Write acknowledgement latency once buffered, us.
    pub write_ack_us: f64,
    /// Command overhead, us.
    pub overhead_us: f64,
    /// Host interface rate, MB/s.
    pub interface_mbs: f64,
    /// Write buffer, bytes.
    pub buffer_bytes: u64,
}

/// Intel X25-M G2 160 GB (see the module comment for sources).
pub fn x25m() -> SsdParams {
    SsdParams {
        preset: "x25m".into(),
        capacity_bytes: 160_041_885_696,
        page_bytes: 4096,
        channels: 10,
        read_us: 50.0,
        program_us: 585.0,
        write_ack_us: 70.0,
        overhead_us: 15.0,
        interface_mbs: 250.0,
        buffer_bytes: 256 << 10,
    }
}

/// A named preset.
pub type SsdPreset = (&'static str, fn() -> SsdParams);

pub const PRESETS: &[SsdPreset] = &[("x25m", x25m)];

pub const KEYS: &[&str] =
    &["capacity", "page", "channels", "read", "program", "write_ack", "overhead", "interface", "buffer"];

#[derive(Debug, Clone)]
pub struct Ssd {
    p: SsdParams,
    capacity: u64,
    sectors_per_page: u64,
    backlog_ns: f64,
    channel_free: Vec<f64>,
    busy_until: u64,
}

impl Ssd {
    pub fn from_spec(mut s: Spec) -> Result<Ssd, ConfigError> {
        let mut p = s.preset_params("ssd", PRESETS)?;
        p.capacity_bytes = s.bytes("capacity", p.capacity_bytes)?;
        p.page_bytes = s.bytes("page", p.page_bytes)?;
        let channels = s.u64("channels", p.channels as u64)?;
        super::check_range("ssd.channels", channels as f64, 1.0, 4096.0)?;
        p.channels = channels as u32;
        p.read_us = s.duration_ns("read", p.read_us * 1e3)? / 1e3;
        p.program_us = s.duration_ns("program", p.program_us * 1e3)? / 1e3;
        p.write_ack_us = s.duration_ns("write_ack", p.write_ack_us * 1e3)? / 1e3;
        p.overhead_us = s.duration_ns("overhead", p.overhead_us * 1e3)? / 1e3;
        p.interface_mbs = s.f64("interface", p.interface_mbs)?;
        p.buffer_bytes = s.bytes("buffer", p.buffer_bytes)?;
        s.finish(KEYS)?;
        Ssd::new(p)
    }

    pub fn new(p: SsdParams) -> Result<Ssd, ConfigError> {
        super::check_range("ssd.page", p.page_bytes as f64, SECTOR as f64, (1u64 << 20) as f64)?;
        super::check_range("ssd.interface", p.interface_mbs, 0.001, 100_000.0)?;
        super::check_range("ssd.capacity", p.capacity_bytes as f64, SECTOR as f64, super::MAX_CAPACITY_BYTES as f64)?;
        super::check_range("ssd.buffer", p.buffer_bytes as f64, 0.0, (1u64 << 30) as f64)?;
        if p.page_bytes < SECTOR || p.page_bytes % SECTOR != 0 {
            return Err(ConfigError::new("ssd.page", "must be a multiple of 512 bytes"));
        }
        if p.channels == 0 {
            return Err(ConfigError::new("ssd.channels", "must be at least 1"));
        }
        if p.interface_mbs <= 0.0 {
            return Err(ConfigError::new("ssd.interface", "must be positive"));
        }
        let capacity = p.capacity_bytes / SECTOR;
        if capacity == 0 {
            return Err(ConfigError::new("ssd.capacity", "must be at least one sector"));
        }
        // Each channel may hold its share of the buffer in programs not yet done.
        let pages_per_channel = (p.buffer_bytes / p.page_bytes) as f64 / p.channels as f64;
        Ok(Ssd {
            capacity,
            sectors_per_page: p.page_bytes / SECTOR,
            backlog_ns: pages_per_channel.max(1.0) * p.program_us * 1e3,
            channel_free: vec![0.0; p.channels as usize],
            busy_until: 0,
            p,
        })
    }
}

impl Device for Ssd {
    fn name(&self) -> String {
        format!("ssd:{}", self.p.preset)
    }

    fn service(&mut self, req: &DeviceRequest, now_ns: u64) -> Service {
        let start = now_ns.max(self.busy_until);
        let a = req.sector % self.capacity;
        let n = req.sectors.max(1);
        let (p0, p1) = (a / self.sectors_per_page, (a + n - 1) / self.sectors_per_page + 1);
        let t = start as f64 + self.p.overhead_us * 1e3;
        let bus = (n * SECTOR) as f64 * 1e3 / self.p.interface_mbs;
        let ch = self.channel_free.len() as u64;
        let finish = match req.op {
            Op::Read => {
                let read_ns = self.p.read_us * 1e3;
                let mut done = t;
                for page in p0..p1 {
                    let c = &mut self.channel_free[(page % ch) as usize];
                    *c = c.max(t) + read_ns;
                    done = done.max(*c);
                }
                done.max(t + bus)
            }
            Op::Write => {
                let mut ack = t + bus.max(self.p.write_ack_us * 1e3);
                let program_ns = self.p.program_us * 1e3;
                for page in p0..p1 {
                    let c = &mut self.channel_free[(page % ch) as usize];
                    *c = c.max(t) + program_ns;
                    ack = ack.max(*c - self.backlog_ns);
                }
                ack
            }
        };
        let finish = to_ns(finish, start);
        self.busy_until = finish;
        Service { start_ns: start, finish_ns: finish, cache_hit: false }
    }

    fn parameters(&self) -> serde_json::Value {
        let mut v = serde_json::to_value(&self.p).unwrap_or_default();
        if let Some(o) = v.as_object_mut() {
            o.insert("model".into(), "ssd".into());
            o.insert("capacity_sectors".into(), self.capacity.into());
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

    #[test]
    fn published_latencies_and_bandwidths() {
        let mut d = build("ssd:x25m").unwrap();
        let r = d.service(&DeviceRequest::read(8 * 1000, 8), 0);
        assert_eq!(r.finish_ns - r.start_ns, 65_000);
        let w = d.service(&DeviceRequest::write(8 * 5000, 8), 10_000_000);
        assert_eq!(w.finish_ns - w.start_ns, 85_000);
        // Sequential 128 KiB reads: about 250 MB/s.
        let mut d = build("ssd:x25m").unwrap();
        let (mut t, mut s) = (0, 0);
        for _ in 0..1000 {
            t = d.service(&DeviceRequest::read(s, 256), t).finish_ns;
            s += 256;
        }
        let mbs = 1000.0 * 131072.0 / t as f64 * 1e3;
        assert!((mbs - 250.0).abs() < 15.0, "{mbs} MB/s");
        // Sequential 128 KiB writes: about 70 MB/s once the buffer is full.
        let mut d = build("ssd:x25m").unwrap();
        let (mut t, mut s) = (0, 0);
        for _ in 0..2000 {
            t = d.service(&DeviceRequest::write(s, 256), t).finish_ns;
            s += 256;
        }
        let mbs = 2000.0 * 131072.0 / t as f64 * 1e3;
        assert!((mbs - 70.0).abs() < 6.0, "{mbs} MB/s");
    }

    #[test]
    fn channels_work_in_parallel() {
        // 10 pages on 10 channels take one page time; on one channel, ten.
        let mut d = build("ssd:x25m,interface=100000").unwrap();
        let r = d.service(&DeviceRequest::read(0, 80), 0);
        let mut one = build("ssd:x25m,interface=100000,channels=1").unwrap();
        let r1 = one.service(&DeviceRequest::read(0, 80), 0);
        assert_eq!(r.finish_ns, 65_000);
        assert_eq!(r1.finish_ns, 15_000 + 10 * 50_000);
        assert!(build("ssd:x25m,channels=0").is_err());
        assert!(build("ssd:nvme").is_err());
    }
}
