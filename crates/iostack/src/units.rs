//! Parsing of sizes and durations given by users: `4096`, `64MiB`, `1.5GB`, `9.5ms`.

use crate::error::ConfigError;

/// A size as the user wrote it: a plain count, or a number of bytes when a unit was given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Size {
    /// A count with no unit (objects, or blocks of the page size, depending on the context).
    Count(u64),
    /// A number of bytes (`64MiB`, `1GB`, `4096B`).
    Bytes(u64),
}

impl Size {
    /// Parses `1234`, `64KiB`, `64MiB`, `2GiB`, `1TiB`, `64KB`, `64MB`, `1GB`, `512B`, `1.5GiB`.
    /// Binary units (KiB, MiB, ...) are powers of 1024, decimal ones (KB, MB, ...) powers of 1000;
    /// `K`, `M`, `G`, `T` alone are binary.
    pub fn parse(option: &str, text: &str) -> Result<Size, ConfigError> {
        let t = text.trim();
        let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_')).unwrap_or(t.len());
        let (num, unit) = t.split_at(split);
        let num = num.replace('_', "");
        if num.is_empty() {
            return Err(ConfigError::new(option, format!("`{text}` is not a size (expected e.g. 4096 or 64MiB)")));
        }
        let mult: Option<u64> = match unit.trim() {
            "" => None,
            "B" | "b" => Some(1),
            "K" | "k" | "KiB" | "kiB" => Some(1 << 10),
            "M" | "MiB" => Some(1 << 20),
            "G" | "GiB" => Some(1 << 30),
            "T" | "TiB" => Some(1 << 40),
            "KB" | "kB" => Some(1_000),
            "MB" => Some(1_000_000),
            "GB" => Some(1_000_000_000),
            "TB" => Some(1_000_000_000_000),
            other => {
                return Err(ConfigError::new(
                    option,
                    format!("unknown unit `{other}` in `{text}` (valid: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB)"),
                ))
            }
        };
        let bad = || ConfigError::new(option, format!("`{text}` is not a size (expected e.g. 4096 or 64MiB)"));
        match mult {
            None => num.parse::<u64>().map(Size::Count).map_err(|_| bad()),
            Some(m) => {
                if let Ok(n) = num.parse::<u64>() {
                    n.checked_mul(m).map(Size::Bytes).ok_or_else(bad)
                } else {
                    let x: f64 = num.parse().map_err(|_| bad())?;
                    let bytes = (x * m as f64).round();
                    if !bytes.is_finite() || bytes < 0.0 || bytes > u64::MAX as f64 {
                        return Err(bad());
                    }
                    Ok(Size::Bytes(bytes as u64))
                }
            }
        }
    }

    /// The size in units of `unit` bytes: counts are returned as they are, bytes are divided
    /// (rounding down).
    pub fn in_units(self, unit: u64) -> u64 {
        match self {
            Size::Count(n) => n,
            Size::Bytes(b) => b / unit.max(1),
        }
    }
}

impl std::fmt::Display for Size {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Size::Count(n) => write!(f, "{n}"),
            Size::Bytes(b) => {
                for (unit, m) in [("TiB", 1u64 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] {
                    if b >= m && b % m == 0 {
                        return write!(f, "{}{unit}", b / m);
                    }
                }
                write!(f, "{b}B")
            }
        }
    }
}

/// Longest duration an option takes: one day. Simulated clocks add durations to request times
/// (at most [`crate::trace::parse::MAX_TIME_NS`]), and bounding both keeps every sum far from
/// wrapping.
pub const MAX_DURATION_NS: u64 = 86_400 * 1_000_000_000;

/// Longest duration spent on every request (a think time, a device's fixed cost): 10 s. These
/// add up once per request, and 10 s keeps a run of 10^9 requests far below 2^64 ns.
pub const MAX_PER_REQUEST_NS: u64 = 10 * 1_000_000_000;

/// [`parse_duration_ns`] for a duration spent on every request: at most [`MAX_PER_REQUEST_NS`].
pub fn parse_per_request_ns(option: &str, text: &str) -> Result<u64, ConfigError> {
    let ns = parse_duration_ns(option, text)?;
    if ns > MAX_PER_REQUEST_NS {
        return Err(ConfigError::new(option, format!("`{text}` is more than the 10 s allowed per request")));
    }
    Ok(ns)
}

/// Parses a duration with its unit (`9.5ms`, `120us`, `3s`, `250ns`, `5min`, `1h`), in nanoseconds as f64, at
/// most [`MAX_DURATION_NS`] (one day). A bare number is an error naming `option`: it could be any
/// unit.
pub fn parse_duration(option: &str, text: &str) -> Result<f64, ConfigError> {
    let t = text.trim();
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult = match unit.trim() {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        "" => return Err(ConfigError::new(option, format!("`{text}` needs a time unit (e.g. {t}ms; valid: ns, us, ms, s, min, h)"))),
        other => {
            return Err(ConfigError::new(option, format!("unknown time unit `{other}` in `{text}` (valid: ns, us, ms, s, min, h)")))
        }
    };
    let x: f64 = num
        .parse()
        .map_err(|_| ConfigError::new(option, format!("`{text}` is not a duration (expected e.g. 9.5ms)")))?;
    let ns = x * mult;
    if !ns.is_finite() || ns < 0.0 || ns.round() > MAX_DURATION_NS as f64 {
        return Err(ConfigError::new(option, format!("`{text}` is out of range (0 to 1 day)")));
    }
    Ok(ns)
}

/// Parses a duration with its unit (see [`parse_duration`]), in whole nanoseconds.
pub fn parse_duration_ns(option: &str, text: &str) -> Result<u64, ConfigError> {
    Ok(parse_duration(option, text)?.round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(Size::parse("c", "489").unwrap(), Size::Count(489));
        assert_eq!(Size::parse("c", "64MiB").unwrap(), Size::Bytes(64 << 20));
        assert_eq!(Size::parse("c", "1GB").unwrap(), Size::Bytes(1_000_000_000));
        assert_eq!(Size::parse("c", "1.5KiB").unwrap(), Size::Bytes(1536));
        assert!(Size::parse("c", "12XB").is_err());
        assert!(Size::parse("c", "MiB").is_err());
        assert_eq!(Size::Bytes(64 << 20).to_string(), "64MiB");
        assert_eq!(Size::Bytes(64 << 20).in_units(4096), 16384);
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration_ns("d", "9.5ms").unwrap(), 9_500_000);
        assert_eq!(parse_duration_ns("d", "120us").unwrap(), 120_000);
        assert_eq!(parse_duration_ns("d", "7ns").unwrap(), 7);
        assert_eq!(parse_duration_ns("d", "1h").unwrap(), 3_600_000_000_000);
        assert_eq!(parse_duration_ns("d", "1.5min").unwrap(), 90_000_000_000);
        assert!(parse_duration_ns("d", "3 weeks").is_err());
        // A bare number could be any unit: an error naming the option.
        let e = parse_duration_ns("--think", "7").unwrap_err().to_string();
        assert!(e.contains("--think") && e.contains("needs a time unit"), "{e}");
        assert!(parse_duration_ns("d", "18446744073709551615s").unwrap_err().to_string().contains("out of range"));
        assert!(parse_duration_ns("d", "1e400s").is_err());
        assert_eq!(parse_duration_ns("d", "86400s").unwrap(), MAX_DURATION_NS);
        assert!(parse_per_request_ns("d", "11s").is_err());
    }
}
