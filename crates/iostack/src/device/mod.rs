//! Device models.
//!
//! A device serves one request at a time: [`Device::service`] is given a request and the time it
//! is handed to the device, and answers when service starts and when it finishes. Models may keep
//! state (head position, rotational phase, the drive's segment cache) and so must be called in
//! time order. Requests are in 512-byte sectors, as a disk sees them.
//!
//! Models, one file each, every parameter documented with its source:
//! - [`fixed`]: one positioning cost per request, no transfer (the DULO paper's illustration).
//! - [`hdd`]: a mechanical disk: seek curve, rotation with the platter position tracked, zoned
//!   media rate, head and track switches, and the drive's segmented cache with read-ahead.
//! - [`ssd`]: a flash SSD: per-page read/program latency, channel striping, a small write buffer.
//! - [`table`]: KDSim's learned table: service time by request size and distance from the
//!   previous request, read from a JSON file (`table:PATH`).
//!
//! [`build`] makes a device from a spec such as `hdd:st3400620as,cache=off,segments=16`;
//! [`PRESETS`] lists the presets. [`figures`] measures a device with a fixed, seeded workload.

pub mod figures;
pub mod fixed;
pub mod hdd;
pub mod ssd;
pub mod table;

use crate::error::ConfigError;
use crate::trace::Op;

/// Bytes per sector.
pub const SECTOR: u64 = 512;

/// A request as the device sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceRequest {
    pub op: Op,
    pub device: u32,
    /// First sector.
    pub sector: u64,
    /// Length in sectors (at least 1).
    pub sectors: u64,
}

impl DeviceRequest {
    pub fn read(sector: u64, sectors: u64) -> DeviceRequest {
        DeviceRequest { op: Op::Read, device: 0, sector, sectors }
    }
    pub fn write(sector: u64, sectors: u64) -> DeviceRequest {
        DeviceRequest { op: Op::Write, device: 0, sector, sectors }
    }
}

/// When a request was served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Service {
    /// Service started (at or after the time it was handed over, once the device was free).
    pub start_ns: u64,
    /// Service finished.
    pub finish_ns: u64,
    /// Served from the device's own cache without media access.
    pub cache_hit: bool,
}

/// A storage device model.
///
/// Contract:
/// - The caller calls [`Device::service`] in non-decreasing `now_ns`, one request per call.
/// - An implementation MUST return `start_ns >= now_ns`, `finish_ns >= start_ns`, never start
///   before the previous request finished (one request at a time: `start_ns >=` the previous
///   `finish_ns`), and be deterministic (same calls, same answers).
/// - Work the device does on its own between requests (read-ahead into its cache, destaging a
///   write cache) happens in the idle time before the next call and may delay it; it is part of
///   the model, never visible as a separate request.
/// - Sectors at or beyond [`Device::capacity_sectors`] wrap around modulo the capacity (a trace
///   from a larger volume still exercises the model); callers that care check the capacity.
pub trait Device: Send {
    /// Name with preset, e.g. `hdd:st3400620as`.
    fn name(&self) -> String;
    /// Serves `req`, handed over at `now_ns`.
    fn service(&mut self, req: &DeviceRequest, now_ns: u64) -> Service;
    /// The model's parameters, for the echoed configuration and `iostack devices`.
    fn parameters(&self) -> serde_json::Value;
    /// Capacity in sectors, when the model has one (Linux readahead treats a raw device as one
    /// file of this size).
    fn capacity_sectors(&self) -> Option<u64> {
        None
    }
}

/// A preset: a named, documented configuration of one model.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    /// Spec name, e.g. `hdd:wd7200`.
    pub name: &'static str,
    /// One line: what the device is and where it is used.
    pub summary: &'static str,
}

/// Every preset [`build`] knows. `fixed` takes its cost as the preset (`fixed:9.5ms`).
pub const PRESETS: &[Preset] = &[
    Preset { name: "fixed:9.5ms", summary: "constant 9.5 ms per request (DULO's illustrative 6.5 ms seek + 3.0 ms rotation)" },
    Preset { name: "hdd:ultrastar18zx", summary: "IBM/Hitachi Ultrastar 18ZX, 10,000 rpm, 18 GB (DULO's example drive)" },
    Preset { name: "hdd:wd7200", summary: "Western Digital Caviar 7200 rpm IDE 160 GB, 8 MB buffer (DULO's experiments)" },
    Preset { name: "hdd:st3400620as", summary: "Seagate Barracuda 7200.10 400 GB SATA, 16 MB cache (REDCAP's disk)" },
    Preset { name: "hdd:cheetah9lp", summary: "Seagate Cheetah 9LP 9 GB, 10,045 rpm, DiskSim's model (Split paper)" },
    Preset { name: "hdd:rz56", summary: "DEC RZ56 665 MB SCSI, 3,600 rpm, 16 ms seek (ACFS's disk for cscope, dinero, glimpse)" },
    Preset { name: "hdd:rz26", summary: "DEC RZ26 1.05 GB SCSI, 5,400 rpm, 10.5 ms seek (ACFS's disk for postgres, andrew)" },
    Preset { name: "ssd:x25m", summary: "Intel X25-M G2 160 GB MLC SSD (REDCAP's SSD)" },
];

/// Names of the presets, for error messages.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

/// Builds a device from a spec: `MODEL:PRESET[,key=value...]`, e.g. `fixed:9.5ms`,
/// `hdd:st3400620as,cache=off,segments=16`, `ssd:x25m,channels=4`. Each model documents its keys;
/// an unknown model, preset or key is an error naming the valid ones.
pub fn build(spec: &str) -> Result<Box<dyn Device>, ConfigError> {
    Ok(build_model(spec)?.into_dyn())
}

/// A device built from a spec: the mechanical drive by its own type, so that the timed engine
/// can compile its default stack around it, any other model behind a trait object.
pub enum BuiltDevice {
    Hdd(Box<hdd::Hdd>),
    Other(Box<dyn Device>),
}

impl BuiltDevice {
    /// The device behind a trait object, whatever its model.
    pub fn into_dyn(self) -> Box<dyn Device> {
        match self {
            BuiltDevice::Hdd(d) => d,
            BuiltDevice::Other(d) => d,
        }
    }
}

/// [`build`], keeping the type of a mechanical drive.
pub fn build_model(spec: &str) -> Result<BuiltDevice, ConfigError> {
    let s = Spec::parse(spec)?;
    match s.model.as_str() {
        "fixed" => Ok(BuiltDevice::Other(Box::new(fixed::Fixed::from_spec(s)?))),
        "hdd" => Ok(BuiltDevice::Hdd(Box::new(hdd::Hdd::from_spec(s)?))),
        "ssd" => Ok(BuiltDevice::Other(Box::new(ssd::Ssd::from_spec(s)?))),
        "table" => Ok(BuiltDevice::Other(Box::new(table::Table::from_spec(s)?))),
        other => Err(ConfigError::unknown("--device", "device model", other, &["fixed", "hdd", "ssd", "table"])),
    }
}

/// A parsed device spec: model, preset (the first item without `=`) and `key=value` overrides.
/// Models take what they know with the typed getters; [`Spec::finish`] rejects leftovers.
#[derive(Debug, Clone)]
pub struct Spec {
    pub text: String,
    pub model: String,
    pub preset: Option<String>,
    params: Vec<(String, String, bool)>,
}

impl Spec {
    /// The parameters of the preset this spec names, from a model's `(name, constructor)` list;
    /// a missing or unknown preset lists the valid ones.
    pub fn preset_params<P>(&self, model: &str, presets: &[(&str, fn() -> P)]) -> Result<P, ConfigError> {
        let names: Vec<&str> = presets.iter().map(|(n, _)| *n).collect();
        let preset = self.preset.as_deref().ok_or_else(|| {
            ConfigError::new("--device", format!("`{}` names no preset; valid: {}", self.text, names.join(", ")))
        })?;
        match presets.iter().find(|(n, _)| *n == preset) {
            Some((_, f)) => Ok(f()),
            None => Err(ConfigError::unknown("--device", &format!("{model} preset"), preset, &names)),
        }
    }

    pub fn parse(text: &str) -> Result<Spec, ConfigError> {
        let t = text.trim();
        let (model, rest) = t.split_once(':').unwrap_or((t, ""));
        if model.is_empty() {
            return Err(ConfigError::new("--device", format!("`{text}` names no device model (e.g. hdd:st3400620as)")));
        }
        let mut preset = None;
        let mut params = Vec::new();
        for (i, item) in rest.split(',').map(str::trim).filter(|s| !s.is_empty()).enumerate() {
            match item.split_once('=') {
                Some((k, v)) => params.push((k.trim().to_ascii_lowercase(), v.trim().to_string(), false)),
                None if i == 0 => preset = Some(item.to_ascii_lowercase()),
                None => {
                    return Err(ConfigError::new("--device", format!("`{item}` in `{text}` is not key=value")));
                }
            }
        }
        Ok(Spec { text: t.to_string(), model: model.to_ascii_lowercase(), preset, params })
    }

    fn take(&mut self, key: &str) -> Option<String> {
        self.params.iter_mut().find(|(k, _, _)| k == key).map(|(_, v, used)| {
            *used = true;
            v.clone()
        })
    }

    fn err(&self, key: &str, msg: String) -> ConfigError {
        ConfigError::new(format!("{}.{key}", self.model), msg)
    }

    /// A plain number (rates, counts with fractions).
    pub fn f64(&mut self, key: &str, default: f64) -> Result<f64, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.parse::<f64>() {
                Ok(x) if x.is_finite() && x >= 0.0 => Ok(x),
                _ => Err(self.err(key, format!("`{v}` is not a non-negative number"))),
            },
        }
    }

    pub fn u64(&mut self, key: &str, default: u64) -> Result<u64, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => v.parse::<u64>().map_err(|_| self.err(key, format!("`{v}` is not a whole number"))),
        }
    }

    pub fn bool(&mut self, key: &str, default: bool) -> Result<bool, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match v.to_ascii_lowercase().as_str() {
                "1" | "true" | "yes" | "on" => Ok(true),
                "0" | "false" | "no" | "off" => Ok(false),
                _ => Err(self.err(key, format!("`{v}` is not on/off"))),
            },
        }
    }

    /// A duration with a unit (`8.9ms`, `65us`), returned in nanoseconds.
    pub fn duration_ns(&mut self, key: &str, default_ns: f64) -> Result<f64, ConfigError> {
        match self.take(key) {
            None => Ok(default_ns),
            Some(v) => parse_duration(&format!("{}.{key}", self.model), &v),
        }
    }

    /// A size in bytes (`16MiB`, `4KiB`); a plain number is bytes.
    pub fn bytes(&mut self, key: &str, default: u64) -> Result<u64, ConfigError> {
        match self.take(key) {
            None => Ok(default),
            Some(v) => match crate::units::Size::parse(&format!("{}.{key}", self.model), &v)? {
                crate::units::Size::Bytes(b) | crate::units::Size::Count(b) => Ok(b),
            },
        }
    }

    /// Fails on any parameter that no getter took, listing the valid keys.
    pub fn finish(&self, valid: &[&str]) -> Result<(), ConfigError> {
        if let Some((k, _, _)) = self.params.iter().find(|(_, _, used)| !used) {
            return Err(self.err(k, format!("unknown parameter of device `{}`; valid: {}", self.model, valid.join(", "))));
        }
        Ok(())
    }
}

/// Largest device a model takes: 1 PiB.
pub const MAX_CAPACITY_BYTES: u64 = 1 << 50;

/// A device parameter within its documented range (NaN never is).
pub(crate) fn check_range(option: &str, v: f64, lo: f64, hi: f64) -> Result<(), ConfigError> {
    if (lo..=hi).contains(&v) {
        Ok(())
    } else {
        Err(ConfigError::new(option, format!("{v} is out of range ({lo} to {hi})")))
    }
}

/// Parses a device duration, which must carry a unit (`9.5ms`, `120us`, `1s`, `800ns`) and is
/// spent on every request, so at most [`crate::units::MAX_PER_REQUEST_NS`]; nanoseconds as f64.
pub fn parse_duration(option: &str, text: &str) -> Result<f64, ConfigError> {
    let ns = crate::units::parse_duration(option, text)?;
    if ns > crate::units::MAX_PER_REQUEST_NS as f64 {
        return Err(ConfigError::new(option, format!("`{text}` is more than the 10 s allowed per request")));
    }
    Ok(ns)
}

/// Round a model's internal f64 time (ns) to the u64 the trait returns, never before `floor`.
#[inline]
pub(crate) fn to_ns(t: f64, floor: u64) -> u64 {
    // Below 2^53 every integer is an f64, so the rounding up and the comparison can be done on
    // integers, inline: baseline x86-64 has no instruction for `ceil` and calls the library. The
    // same result as the general case.
    const EXACT: u64 = 1 << 53;
    if t >= 0.0 && t < EXACT as f64 && floor < EXACT {
        let whole = t as i64;
        let up = whole + ((whole as f64) < t) as i64;
        return (up as u64).max(floor);
    }
    let r = t.ceil();
    if r <= floor as f64 {
        floor
    } else if r >= u64::MAX as f64 {
        u64::MAX
    } else {
        r as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `to_ns` as it was written before its integer fast path.
    fn to_ns_by_ceil(t: f64, floor: u64) -> u64 {
        let r = t.ceil();
        if r <= floor as f64 {
            floor
        } else if r >= u64::MAX as f64 {
            u64::MAX
        } else {
            r as u64
        }
    }

    #[test]
    fn to_ns_fast_path_is_exact() {
        let edges = [0.0, -0.0, 0.25, 1.0, 1.5, 2.0, 9.007199254740991e15, 9.007199254740992e15, 9.007199254740994e15, 1e19, 2e19];
        let floors = [0, 1, 2, (1 << 53) - 1, 1 << 53, (1 << 53) + 3, u64::MAX];
        for &t in edges.iter().chain(&[-1.0, f64::INFINITY, f64::NAN]) {
            for &f in &floors {
                assert_eq!(to_ns(t, f), to_ns_by_ceil(t, f), "{t} {f}");
            }
        }
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Times of all magnitudes up to past 2^53, with and without a fraction, and floors
            // just around them.
            let t = (x >> (x % 64)) as f64 / (1u64 << ((x >> 6) % 5)) as f64;
            let f = (t as u64).wrapping_add(x >> 60).wrapping_sub(8);
            assert_eq!(to_ns(t, f), to_ns_by_ceil(t, f), "{t} {f}");
            assert_eq!(to_ns(t, 0), to_ns_by_ceil(t, 0), "{t}");
        }
    }

    #[test]
    fn every_preset_builds_and_names_itself() {
        for p in PRESETS {
            let d = build(p.name).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(d.name(), p.name);
            assert!(d.parameters().is_object());
        }
    }

    #[test]
    fn unknown_names_list_the_valid_ones() {
        let e = build("tape:lto9").err().unwrap().to_string();
        assert!(e.contains("hdd") && e.contains("ssd") && e.contains("fixed"), "{e}");
        let e = build("hdd:nosuchdrive").err().unwrap().to_string();
        assert!(e.contains("st3400620as") && e.contains("cheetah9lp"), "{e}");
        let e = build("hdd:wd7200,colour=blue").err().unwrap().to_string();
        assert!(e.contains("colour") && e.contains("segments"), "{e}");
        let e = build("hdd:wd7200,rpm=fast").err().unwrap().to_string();
        assert!(e.contains("rpm"), "{e}");
        assert!(build("fixed:9.5").is_err(), "a duration needs a unit");
        assert!(build("hdd:wd7200,seek_avg=8").is_err(), "a duration needs a unit");
    }

    #[test]
    fn spec_parsing() {
        let s = Spec::parse("HDD:ST3400620AS, cache=off ,segments=16").unwrap();
        assert_eq!(s.model, "hdd");
        assert_eq!(s.preset.as_deref(), Some("st3400620as"));
        assert_eq!(s.params.len(), 2);
        assert!(Spec::parse("hdd:a,b").is_err());
        assert!(Spec::parse(":x").is_err());
    }
}
