//! Cache sizes relative to a trace's footprint, and the footprint itself.
//!
//! A study compares policies at sizes that mean the same thing on every trace: a tenth of a
//! percent, one percent, ten percent of what the trace touches. libCacheSim's `cachesim` takes
//! such sizes as fractions (`0.001,0.01,0.1`) of the working set: the number of distinct objects
//! when object sizes are ignored, else the sum of their sizes (each object counted once, at the
//! size of its first request), and truncates the product to an integer. iostack does the same in
//! the unit of the run's cache:
//!
//! - object mode with unit size: distinct objects (keys);
//! - sized object mode: bytes, the sum of each distinct object's first size;
//! - block mode (and the timed stack): distinct blocks of the page size, keyed by (device, block).
//!
//! A cache size is written as a count or a byte size ([`Size`]), as a percentage (`1%`, `0.1%`),
//! or as a fraction with a decimal point (`0.01`, libCacheSim's form). A plain integer is always a
//! count, so `1` is one object, not the whole footprint (write `100%` or `1.0` for that).

use rustc_hash::FxHashSet;

use crate::cache::block_key;
use std::path::Path;

use crate::engine::timed::{self, StackConfig, TimedReport};
use crate::error::{ConfigError, Error, TraceError};
use crate::trace::{Format, ReaderOptions, Request, TraceReader};
use crate::units::Size;

use super::sim::Mode;

/// A cache size as the user wrote it.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheSize {
    /// A count or a byte size, converted by the mode ([`Mode::capacity`]).
    Absolute(Size),
    /// A fraction (0, 1] of the trace's footprint in the cache's unit.
    Relative(f64),
}

impl CacheSize {
    /// Parses `489`, `64MiB`, `1%`, `0.5%`, `0.01`. `option` names the option in errors.
    pub fn parse(option: &str, text: &str) -> Result<CacheSize, ConfigError> {
        let t = text.trim();
        let fraction = |x: f64, shown: &str| -> Result<CacheSize, ConfigError> {
            if !(x.is_finite() && x > 0.0 && x <= 1.0) {
                return Err(ConfigError::new(
                    option,
                    format!("`{text}`: a size relative to the footprint must be above 0 and at most {shown}"),
                ));
            }
            Ok(CacheSize::Relative(x))
        };
        if let Some(pct) = t.strip_suffix('%') {
            let x: f64 = pct.trim().parse().map_err(|_| ConfigError::new(option, format!("`{text}` is not a percentage (expected e.g. 1% or 0.1%)")))?;
            return fraction(x / 100.0, "100%");
        }
        if t.contains('.') && t.chars().all(|c| c.is_ascii_digit() || c == '.') {
            let x: f64 = t.parse().map_err(|_| ConfigError::new(option, format!("`{text}` is not a size or fraction")))?;
            if x > 1.0 {
                return Err(ConfigError::new(
                    option,
                    format!("`{text}`: a number with a decimal point is a fraction of the footprint and must be at most 1 (write `{t}%` for a percentage, or a whole count)"),
                ));
            }
            return fraction(x, "1");
        }
        Ok(CacheSize::Absolute(Size::parse(option, t)?))
    }

    pub fn is_relative(&self) -> bool {
        matches!(self, CacheSize::Relative(_))
    }

    /// The capacity in the cache's unit of `mode`; `footprint` (in that unit) is needed for a
    /// relative size. `text` is how the user wrote the size, for messages.
    pub fn capacity(&self, text: &str, mode: Mode, footprint: Option<u64>) -> Result<u64, ConfigError> {
        match *self {
            CacheSize::Absolute(s) => mode.capacity(s, text),
            CacheSize::Relative(f) => {
                let fp = footprint.expect("the footprint of a relative cache size is computed first");
                relative_capacity(f, fp, text, mode.cache_unit())
            }
        }
    }
}

/// `fraction` of `footprint`, truncated as libCacheSim does; an error when it is below 1.
pub fn relative_capacity(fraction: f64, footprint: u64, text: &str, unit: &str) -> Result<u64, ConfigError> {
    let cap = (footprint as f64 * fraction) as u64;
    if cap == 0 {
        return Err(ConfigError::new(
            "--cache",
            format!("`{text}` of the trace's footprint of {footprint} {unit} is less than 1"),
        ));
    }
    Ok(cap)
}

/// Counts a trace's footprint in the unit of a mode, request by request.
pub struct FootprintCounter {
    mode: Mode,
    /// Keys seen (objects or blocks).
    seen: FxHashSet<u64>,
    /// Sized object mode: the sum of each object's first size.
    bytes: u64,
}

impl FootprintCounter {
    pub fn new(mode: Mode) -> Self {
        FootprintCounter { mode, seen: FxHashSet::default(), bytes: 0 }
    }

    #[inline]
    pub fn feed(&mut self, r: &Request) {
        match self.mode {
            Mode::Object { unit_size: true } => {
                self.seen.insert(r.offset);
            }
            Mode::Object { unit_size: false } => {
                if self.seen.insert(r.offset) {
                    self.bytes += r.length;
                }
            }
            Mode::Block { page_size } => {
                let (first, end) = r.block_range(page_size);
                for b in first..end {
                    self.seen.insert(block_key(r.device, b));
                }
            }
        }
    }

    pub fn feed_batch(&mut self, batch: &[Request]) {
        for r in batch {
            self.feed(r);
        }
    }

    /// The footprint in the mode's cache unit (objects, bytes or blocks).
    pub fn footprint(&self) -> u64 {
        match self.mode {
            Mode::Object { unit_size: false } => self.bytes,
            _ => self.seen.len() as u64,
        }
    }
}

/// The footprint of the whole trace `reader` reads, in the unit of `mode`.
pub fn footprint(reader: &mut dyn TraceReader, mode: Mode) -> Result<u64, TraceError> {
    let mut counter = FootprintCounter::new(mode);
    let mut buf = Vec::with_capacity(1 << 14);
    loop {
        buf.clear();
        if reader.read_batch(&mut buf, 1 << 14)? == 0 {
            return Ok(counter.footprint());
        }
        counter.feed_batch(&buf);
    }
}

/// The timed stack with a cache relative to the footprint: `config.cache` may be `1%` or
/// `0.01`, a fraction of the distinct blocks of `page_size` the trace touches (one more pass
/// over the trace before the run, so standard input cannot be used). Everything else is
/// [`timed::run_file`]. The report echoes the config as given (so it re-runs the same way) and
/// adds `cache_blocks` (the absolute size) and, for a relative size, `footprint_blocks` under
/// `resolved`.
pub fn run_timed_file(config: &StackConfig, path: &Path, format: Option<Format>, options: &ReaderOptions, dumps: &[timed::Dump]) -> Result<TimedReport, Error> {
    check_timed_config(config)?;
    if path == Path::new("-") && CacheSize::parse("--cache", &config.cache)?.is_relative() {
        return Err(ConfigError::new("--cache", format!("`{}` is relative to the trace's footprint, which needs a pass over the trace before the run; standard input can be read only once", config.cache)).into());
    }
    let (absolute, footprint) = absolute_cache(config, &mut || Ok(crate::trace::open(path, format, options)?))?;
    let report = timed::run_file(&absolute, path, format, options, dumps)?;
    Ok(annotate_timed(report, &config.cache, footprint))
}

/// [`run_timed_file`] over any trace `open` opens (generated workloads, sweeps).
pub fn run_timed(config: &StackConfig, open: &mut dyn FnMut() -> Result<Box<dyn TraceReader>, Error>) -> Result<TimedReport, Error> {
    check_timed_config(config)?;
    let (absolute, footprint) = absolute_cache(config, open)?;
    let report = timed::run_trace(&absolute, open, Vec::new())?;
    Ok(annotate_timed(report, &config.cache, footprint))
}

/// The config with its cache size made absolute (blocks), and the footprint a relative size
/// was taken of.
fn absolute_cache(config: &StackConfig, open: &mut dyn FnMut() -> Result<Box<dyn TraceReader>, Error>) -> Result<(StackConfig, Option<u64>), Error> {
    match CacheSize::parse("--cache", &config.cache)? {
        CacheSize::Absolute(_) => Ok((config.clone(), None)),
        CacheSize::Relative(f) => {
            let fp = footprint(&mut *open()?, Mode::Block { page_size: config.page_size })?;
            let blocks = if fp == 0 { 1 } else { relative_capacity(f, fp, &config.cache, "blocks")? };
            let mut absolute = config.clone();
            absolute.cache = blocks.to_string();
            Ok((absolute, Some(fp)))
        }
    }
}

/// Echoes the cache size as given (`given`) in the report's config, and adds the absolute size
/// (and the footprint of a relative one) under `resolved`.
fn annotate_timed(mut report: TimedReport, given: &str, footprint: Option<u64>) -> TimedReport {
    let blocks = Size::parse("--cache", &report.config.cache).map(|s| s.in_units(report.config.page_size)).unwrap_or(0);
    report.config.cache = given.to_string();
    if let Some(obj) = report.resolved.as_object_mut() {
        obj.insert("cache_blocks".into(), blocks.into());
        if let Some(fp) = footprint {
            obj.insert("footprint_blocks".into(), fp.into());
        }
    }
    report
}

/// Checks a timed config whose cache may be relative (the rest must resolve; the size itself is
/// checked once the footprint is known).
pub fn check_timed_config(config: &StackConfig) -> Result<(), ConfigError> {
    if CacheSize::parse("--cache", &config.cache)?.is_relative() {
        let mut c = config.clone();
        c.cache = "1".into();
        c.resolve().map(|_| ())
    } else {
        config.resolve().map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::VecReader;

    #[test]
    fn parses_counts_bytes_percentages_and_fractions() {
        let p = |t: &str| CacheSize::parse("--cache", t);
        assert_eq!(p("489").unwrap(), CacheSize::Absolute(Size::Count(489)));
        assert_eq!(p("64MiB").unwrap(), CacheSize::Absolute(Size::Bytes(64 << 20)));
        assert_eq!(p("1%").unwrap(), CacheSize::Relative(0.01));
        assert_eq!(p("0.1%").unwrap(), CacheSize::Relative(0.001));
        assert_eq!(p("100%").unwrap(), CacheSize::Relative(1.0));
        assert_eq!(p("0.001").unwrap(), CacheSize::Relative(0.001));
        assert_eq!(p("1.0").unwrap(), CacheSize::Relative(1.0));
        assert_eq!(p("1").unwrap(), CacheSize::Absolute(Size::Count(1)));
        for bad in ["0%", "101%", "1.5", "0.0", "x%", "-1%"] {
            assert!(p(bad).unwrap_err().to_string().contains("--cache"), "{bad}");
        }
        assert!(p("1.5").unwrap_err().to_string().contains("`1.5%`"));
    }

    #[test]
    fn footprint_follows_the_mode() {
        let reqs = vec![Request::read(0, 8192), Request::read(0, 100), Request::read(4096, 4096), Request::read(1 << 20, 10)];
        let fp = |m| footprint(&mut VecReader::new(reqs.clone()), m).unwrap();
        assert_eq!(fp(Mode::Object { unit_size: true }), 3);
        // Each object at its first size: 8192 + 4096 + 10.
        assert_eq!(fp(Mode::Object { unit_size: false }), 8192 + 4096 + 10);
        // Blocks 0, 1 and 256.
        assert_eq!(fp(Mode::Block { page_size: 4096 }), 3);
    }

    #[test]
    fn relative_sizes_truncate_and_must_hold_one_entry() {
        let m = Mode::Object { unit_size: true };
        let c = |t: &str, fp| CacheSize::parse("--cache", t).unwrap().capacity(t, m, Some(fp));
        assert_eq!(c("1%", 1000).unwrap(), 10);
        assert_eq!(c("0.001", 123_456).unwrap(), 123);
        assert_eq!(c("100%", 7).unwrap(), 7);
        assert!(c("1%", 50).unwrap_err().to_string().contains("footprint of 50 objects"));
        assert_eq!(c("64", 1).unwrap(), 64);
    }
}
