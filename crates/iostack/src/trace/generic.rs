//! Generic delimited text with a column mapping, for traces no dedicated reader knows.
//!
//! A mapping string is a comma-separated list of `key=value`:
//!
//! | key | value | default |
//! |---|---|---|
//! | `offset` | column (0-based index, or header name with `header=yes`) | required |
//! | `length`, `time`, `op`, `pid`, `device`, `file` | column | absent |
//! | `offset_unit`, `length_unit` | bytes per unit: a number, `sector` (512), or a size like `4KiB` | 1 |
//! | `time_unit` | `ns`, `us`, `ms`, `s`, `100ns` (FILETIME ticks), `min`, or nanoseconds per unit as a number | `ns` |
//! | `op_values` | `names` (R/W/read/write), `scsi` (hex SCSI commands), `0r1w`, `1r0w`, `flags` (bit 0 = read) | `names` |
//! | `header` | `yes`/`no` (also true/false/1/0): the first line names the columns | `no` |
//! | `delimiter` | one character, or `comma`, `tab`, `space` (runs of blanks), `semicolon`, `pipe`; `delimiter=,` works too | `,` |
//! | `default_length` | bytes of every request when there is no length column | 4096 |
//! | `shift_time` | `yes`/`no`: shift times so that the first request is at 0 | `yes` |
//!
//! Example (MSR Cambridge through the generic reader):
//! `time=0,time_unit=100ns,device=2,op=3,offset=4,length=5`.
//!
//! Surrounding double quotes of a field are removed; delimiters inside quotes are not supported.
//! Times may have a fraction (`1456095145.133076`); with a power-of-ten unit they are converted
//! exactly, otherwise through a double. With `op_values=scsi`, lines of commands that move no
//! data are passed over.

use super::parse::{parse_f64, parse_hex, parse_u64, show, split_delim, split_ws, trim, unquote, FieldError, LineParser, TimeShift};
use super::{CsvMapping, FileRef, Op, OpValues, Request};
use crate::error::ConfigError;

const OPTION: &str = "--mapping";

/// The mapping of the CSV export of the CloudPhysics trace in libCacheSim's repository
/// (`version,time,op,size,lbn`: time in seconds, op a hex SCSI command, size in bytes, lbn in
/// 512-byte sectors).
pub const CLOUDPHYSICS_MAPPING: &str = "time=time,time_unit=s,op=op,op_values=scsi,length=size,offset=lbn,offset_unit=512,header=yes";

fn yes_no(key: &str, v: &str) -> Result<bool, ConfigError> {
    match v.to_ascii_lowercase().as_str() {
        "yes" | "y" | "true" | "1" => Ok(true),
        "no" | "n" | "false" | "0" => Ok(false),
        _ => Err(ConfigError::new(OPTION, format!("`{key}={v}`: expected yes or no"))),
    }
}

fn unit_bytes(key: &str, v: &str) -> Result<u64, ConfigError> {
    let n = match v.to_ascii_lowercase().as_str() {
        "sector" | "sectors" => 512,
        _ => match crate::units::Size::parse(OPTION, v) {
            Ok(crate::units::Size::Count(n)) | Ok(crate::units::Size::Bytes(n)) => n,
            Err(_) => return Err(ConfigError::new(OPTION, format!("`{key}={v}`: expected bytes per unit, e.g. 1, 512, sector or 4KiB"))),
        },
    };
    if n == 0 {
        return Err(ConfigError::new(OPTION, format!("`{key}={v}`: the unit must be at least 1 byte")));
    }
    Ok(n)
}

fn time_unit(v: &str) -> Result<f64, ConfigError> {
    let ns = match v {
        "ns" => 1.0,
        "100ns" => 100.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        _ => match v.parse::<f64>() {
            Ok(x) if x.is_finite() && x > 0.0 => x,
            _ => {
                return Err(ConfigError::new(
                    OPTION,
                    format!("`time_unit={v}`: expected ns, 100ns, us, ms, s, min or nanoseconds per unit"),
                ))
            }
        },
    };
    Ok(ns)
}

impl CsvMapping {
    /// Parses a mapping string (syntax in the module documentation).
    pub fn parse(text: &str) -> Result<CsvMapping, ConfigError> {
        let mut m = CsvMapping::default();
        let mut offset_given = false;
        let items: Vec<&str> = text.split(',').collect();
        let mut i = 0;
        while i < items.len() {
            let item = items[i].trim();
            i += 1;
            if item.is_empty() {
                continue;
            }
            let Some((key, value)) = item.split_once('=') else {
                return Err(ConfigError::new(OPTION, format!("`{item}` is not key=value")));
            };
            let (key, value) = (key.trim().to_ascii_lowercase(), value.trim());
            match key.as_str() {
                "time" | "offset" | "length" | "op" | "pid" | "device" | "file" => {
                    let col = match value.parse::<usize>() {
                        Ok(c) => Some(c),
                        Err(_) if !value.is_empty() => {
                            m.names.retain(|(f, _)| *f != key);
                            m.names.push((key.clone(), value.to_string()));
                            None
                        }
                        Err(_) => return Err(ConfigError::new(OPTION, format!("`{key}=`: expected a column index or name"))),
                    };
                    let slot = match key.as_str() {
                        "time" => &mut m.time,
                        "length" => &mut m.length,
                        "op" => &mut m.op,
                        "pid" => &mut m.pid,
                        "device" => &mut m.device,
                        "file" => &mut m.file,
                        _ => {
                            offset_given = true;
                            m.offset = col.unwrap_or(0);
                            continue;
                        }
                    };
                    *slot = col;
                }
                "offset_unit" => m.offset_unit = unit_bytes(&key, value)?,
                "length_unit" => m.length_unit = unit_bytes(&key, value)?,
                "time_unit" => m.time_unit_ns = time_unit(value)?,
                "header" => m.has_header = yes_no(&key, value)?,
                "shift_time" => m.shift_time = yes_no(&key, value)?,
                "default_length" => m.default_length = unit_bytes(&key, value)?,
                "op_values" => {
                    m.op_values = match value.to_ascii_lowercase().as_str() {
                        "names" => OpValues::Names,
                        "scsi" => OpValues::Scsi,
                        "0r1w" => OpValues::ZeroReadOneWrite,
                        "1r0w" => OpValues::OneReadZeroWrite,
                        "flags" | "disksim" => OpValues::Flags,
                        _ => {
                            return Err(ConfigError::unknown(OPTION, "op_values", value, &["names", "scsi", "0r1w", "1r0w", "flags"]))
                        }
                    }
                }
                "delimiter" | "sep" => {
                    m.delimiter = match value {
                        // `delimiter=,` arrives split at its own comma.
                        "" => {
                            if items.get(i).is_some_and(|s| s.is_empty()) {
                                i += 1;
                            }
                            b','
                        }
                        "comma" => b',',
                        "tab" | "\\t" => b'\t',
                        "space" | " " => b' ',
                        "semicolon" => b';',
                        "pipe" => b'|',
                        v if v.len() == 1 && v.is_ascii() && v != "\n" => v.as_bytes()[0],
                        v => return Err(ConfigError::new(OPTION, format!("`delimiter={v}`: expected one character, comma, tab, space, semicolon or pipe"))),
                    }
                }
                _ => {
                    return Err(ConfigError::unknown(
                        OPTION,
                        "mapping key",
                        &key,
                        &["offset", "length", "time", "op", "pid", "device", "file", "offset_unit", "length_unit", "time_unit", "op_values", "header", "delimiter", "default_length", "shift_time"],
                    ))
                }
            }
        }
        if !offset_given {
            return Err(ConfigError::new(OPTION, "the mapping must place `offset` (e.g. offset=4)"));
        }
        if !m.names.is_empty() && !m.has_header {
            let (f, c) = &m.names[0];
            return Err(ConfigError::new(OPTION, format!("`{f}={c}` names a column, which needs header=yes (or give a 0-based index)")));
        }
        Ok(m)
    }
}

/// Reads lines through a [`CsvMapping`].
pub struct GenericParser {
    m: CsvMapping,
    header_pending: bool,
    clock: TimeShift,
    /// Number of columns the line must have at least.
    min_cols: usize,
}

const MAX_COLS: usize = 64;

impl GenericParser {
    pub fn new(mapping: CsvMapping) -> Result<GenericParser, ConfigError> {
        let mut p = GenericParser { header_pending: mapping.has_header, m: mapping, clock: TimeShift::default(), min_cols: 0 };
        if p.m.names.is_empty() {
            p.check_columns()?;
        }
        Ok(p)
    }

    fn columns(&self) -> [(&'static str, Option<usize>); 7] {
        let m = &self.m;
        [
            ("time", m.time),
            ("offset", Some(m.offset)),
            ("length", m.length),
            ("op", m.op),
            ("pid", m.pid),
            ("device", m.device),
            ("file", m.file),
        ]
    }

    fn check_columns(&mut self) -> Result<(), ConfigError> {
        let mut max = 0;
        for (name, col) in self.columns() {
            if let Some(c) = col {
                if c >= MAX_COLS {
                    return Err(ConfigError::new(OPTION, format!("`{name}={c}`: at most {MAX_COLS} columns are supported")));
                }
                max = max.max(c + 1);
            }
        }
        self.min_cols = max;
        Ok(())
    }

    fn header(&mut self, line: &[u8]) -> Result<(), FieldError> {
        let mut f = [&b""[..]; MAX_COLS];
        let n = self.split(line, &mut f).min(MAX_COLS);
        let cols: Vec<String> = f[..n].iter().map(|c| String::from_utf8_lossy(trim(unquote(trim(c)))).to_string()).collect();
        for (field, name) in std::mem::take(&mut self.m.names) {
            let Some(i) = cols.iter().position(|c| c.eq_ignore_ascii_case(&name)) else {
                return Err(FieldError::new("header", format!("no column `{name}` (for {field}); the header has: {}", cols.join(", "))));
            };
            match field.as_str() {
                "time" => self.m.time = Some(i),
                "offset" => self.m.offset = i,
                "length" => self.m.length = Some(i),
                "op" => self.m.op = Some(i),
                "pid" => self.m.pid = Some(i),
                "device" => self.m.device = Some(i),
                _ => self.m.file = Some(i),
            }
        }
        self.check_columns().map_err(|e| FieldError::new("header", e.message))?;
        Ok(())
    }

    #[inline]
    fn split<'a>(&self, line: &'a [u8], f: &mut [&'a [u8]; MAX_COLS]) -> usize {
        if self.m.delimiter == b' ' {
            split_ws(line, f)
        } else {
            split_delim(line, self.m.delimiter, f)
        }
    }

    #[inline]
    fn time(&mut self, s: &[u8]) -> Result<u64, FieldError> {
        let s = trim(unquote(trim(s)));
        let unit = self.m.time_unit_ns;
        let ns = if unit.fract() == 0.0 && unit <= 1e12 && !s.iter().any(|&c| c == b'e' || c == b'E') {
            exact_time(s, unit as u64).ok_or_else(|| FieldError::not_number("time", s))?
        } else {
            let v = parse_f64(s).filter(|v| *v >= 0.0).ok_or_else(|| FieldError::not_number("time", s))?;
            let ns = (v * unit).round();
            if ns > u64::MAX as f64 {
                return Err(FieldError::out_of_range("time", show(s)));
            }
            ns as u64
        };
        Ok(if self.m.shift_time { self.clock.apply(ns) } else { ns })
    }
}

/// `int[.frac] * unit` in integer arithmetic.
fn exact_time(s: &[u8], unit: u64) -> Option<u64> {
    let (int, frac) = match memchr::memchr(b'.', s) {
        Some(i) => (&s[..i], &s[i + 1..]),
        None => (s, &s[s.len()..]),
    };
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    let iv = if int.is_empty() { 0 } else { parse_u64(int)? } as u128;
    let frac = &frac[..frac.len().min(18)];
    let fv = if frac.is_empty() { 0 } else { parse_u64(frac)? } as u128;
    let ns = iv * unit as u128 + fv * unit as u128 / 10u128.pow(frac.len() as u32);
    u64::try_from(ns).ok()
}

#[inline]
fn col_u64(f: &[&[u8]; MAX_COLS], i: usize, name: &'static str) -> Result<u64, FieldError> {
    let s = trim(unquote(trim(f[i])));
    parse_u64(s).ok_or_else(|| FieldError::not_number(name, s))
}

#[inline]
fn col_u32(f: &[&[u8]; MAX_COLS], i: Option<usize>, name: &'static str) -> Result<u32, FieldError> {
    match i {
        None => Ok(0),
        Some(i) => {
            let v = col_u64(f, i, name)?;
            u32::try_from(v).map_err(|_| FieldError::out_of_range(name, v))
        }
    }
}

impl LineParser for GenericParser {
    #[inline]
    fn parse(&mut self, line: &[u8], _line_no: u64) -> Result<Option<Request>, FieldError> {
        if self.header_pending {
            self.header_pending = false;
            self.header(line)?;
            return Ok(None);
        }
        let mut f = [&b""[..]; MAX_COLS];
        let n = self.split(line, &mut f);
        if n < self.min_cols {
            return Err(FieldError::new("line", format!("{n} fields; the mapping uses column {}", self.min_cols - 1)));
        }
        let m = &self.m;
        let op = match m.op {
            None => Op::Read,
            Some(i) => {
                let s = trim(unquote(trim(f[i])));
                let op = match m.op_values {
                    OpValues::Names => super::csv::parse_op_name(s),
                    OpValues::Scsi => match parse_hex(s) {
                        Some(c) if c <= 0xff => match super::vscsi::scsi_op(c as u8) {
                            Some(op) => Some(op),
                            None => return Ok(None),
                        },
                        _ => None,
                    },
                    OpValues::ZeroReadOneWrite => match s {
                        b"0" => Some(Op::Read),
                        b"1" => Some(Op::Write),
                        _ => None,
                    },
                    OpValues::OneReadZeroWrite => match s {
                        b"1" => Some(Op::Read),
                        b"0" => Some(Op::Write),
                        _ => None,
                    },
                    OpValues::Flags => parse_u64(s).map(super::disksim::disksim_op),
                };
                op.ok_or_else(|| FieldError::new("op", format!("`{}` is not an operation of op_values={:?}", show(s), m.op_values)))?
            }
        };
        let offset = col_u64(&f, m.offset, "offset")?;
        let offset = offset.checked_mul(m.offset_unit).ok_or_else(|| FieldError::out_of_range("offset", offset))?;
        let length = match m.length {
            None => m.default_length,
            Some(i) => {
                let l = col_u64(&f, i, "length")?;
                l.checked_mul(m.length_unit).ok_or_else(|| FieldError::out_of_range("length", l))?
            }
        };
        let pid = col_u32(&f, m.pid, "pid")?;
        let device = col_u32(&f, m.device, "device")?;
        let file = match m.file {
            None => None,
            Some(i) => Some(FileRef { id: col_u64(&f, i, "file")?, offset: 0, size: None }),
        };
        let time_ns = match m.time {
            None => 0,
            Some(i) => self.time(f[i])?,
        };
        Ok(Some(Request { time_ns, offset, length, pid, device, op, file }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mapping_syntax() {
        let m = CsvMapping::parse("offset=4,length=5,op=3,time=0,time_unit=100ns,offset_unit=1,header=yes,delimiter=,").unwrap();
        assert_eq!((m.offset, m.length, m.op, m.time), (4, Some(5), Some(3), Some(0)));
        assert_eq!(m.time_unit_ns, 100.0);
        assert!(m.has_header);
        assert_eq!(m.delimiter, b',');
        let m = CsvMapping::parse("delimiter=,,offset=1,offset_unit=sector,delimiter=tab").unwrap();
        assert_eq!((m.offset, m.offset_unit, m.delimiter), (1, 512, b'\t'));
        let m = CsvMapping::parse(CLOUDPHYSICS_MAPPING).unwrap();
        assert_eq!(m.names.len(), 4);
        assert_eq!(m.op_values, OpValues::Scsi);
        let e = CsvMapping::parse("length=3").unwrap_err().to_string();
        assert!(e.contains("offset"), "{e}");
        let e = CsvMapping::parse("offset=lba").unwrap_err().to_string();
        assert!(e.contains("header=yes"), "{e}");
        let e = CsvMapping::parse("offset=1,colour=red").unwrap_err().to_string();
        assert!(e.contains("unknown mapping key `colour`") && e.contains("time_unit"), "{e}");
        assert!(CsvMapping::parse("offset=1,time_unit=fortnight").is_err());
        assert!(CsvMapping::parse("offset=1,offset_unit=0").is_err());
    }

    #[test]
    fn exact_times() {
        assert_eq!(exact_time(b"1456095145.133076", 1_000_000_000), Some(1_456_095_145_133_076_000));
        assert_eq!(exact_time(b"12", 100), Some(1200));
        assert_eq!(exact_time(b"0.25", 1_000_000), Some(250_000));
        assert_eq!(exact_time(b"x", 1), None);
    }
}
