//! The trace formats iostack reads, their names, and how a file's format is recognised.
//!
//! Detection, in order (the first rule that decides wins):
//! 1. the iostack binary magic `IOSTKTRC` at the start of the (decompressed) content;
//! 2. the file name, after dropping a compression extension: `*.oracleGeneral.bin` and
//!    `*.oracleGeneral` are oracleGeneral, `*.vscsi` vscsi, `*.lis` ARC, `*.iostack` iostack
//!    binary, `*.blkparse` blkparse text, `*.spc` UMass/SPC;
//! 3. a known header line: iostack CSV (column names from `time_ns,pid,op,offset,length,device,
//!    file,file_offset,file_size`, `offset` among them), SYSTOR'17
//!    (`Timestamp,Response,IOType,LUN,Offset,Size`), the CloudPhysics CSV export of libCacheSim
//!    (`version,time,op,size,lbn`, read as generic CSV with a built-in mapping);
//! 4. the shape of the first data lines, when exactly one text format fits all of them (see
//!    [`classify_line`]);
//! 5. for binary content, the vscsi version field (every one of the first records says v1, or
//!    every one says v2) or the oracleGeneral next-access field (every one of the first records
//!    is -1 or points forward), when exactly one of the two fits.
//!
//! Anything else is an error asking for `--format`: a wrong guess would silently simulate
//! garbage, which is worse than asking.

use std::path::Path;

use crate::error::{ConfigError, TraceError};

/// A trace format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// iostack's own CSV with a header naming its columns.
    Csv,
    /// iostack's compact binary format.
    Bin,
    /// libCacheSim oracleGeneral binary.
    OracleGeneral,
    /// VMware vscsi binary (v1 and v2 records).
    Vscsi,
    /// MSR Cambridge CSV.
    Msr,
    /// UMass Trace Repository / SPC CSV.
    Spc,
    /// blkparse default text output.
    Blkparse,
    /// FIU SRCMap / IODedup text.
    Fiu,
    /// Alibaba block trace CSV.
    Alibaba,
    /// Tencent CBS CSV.
    Tencent,
    /// SNIA SYSTOR'17 CSV.
    Systor,
    /// ARC `.lis` text.
    Lis,
    /// DiskSim / MQSim ASCII.
    Disksim,
    /// One block id per line.
    Plain,
    /// Any CSV with a column mapping.
    GenericCsv,
}

/// Name, description and detectability of one format.
#[derive(Debug, Clone, Copy)]
pub struct FormatInfo {
    pub format: Format,
    /// The short name used by `--format`.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    pub summary: &'static str,
    /// Whether the format is recognised from the content (file-name hints aside).
    pub detectable: bool,
}

/// Every format, in the order `iostack formats` lists them.
pub const FORMATS: &[FormatInfo] = &[
    FormatInfo {
        format: Format::Csv,
        name: "csv",
        aliases: &["iostack-csv"],
        summary: "iostack CSV: header naming columns time_ns,pid,op,offset,length,device,file,file_offset,file_size",
        detectable: true,
    },
    FormatInfo {
        format: Format::Bin,
        name: "bin",
        aliases: &["iostack", "iostack-bin"],
        summary: "iostack binary: 16-byte header (magic IOSTKTRC) + 56-byte little-endian records",
        detectable: true,
    },
    FormatInfo {
        format: Format::OracleGeneral,
        name: "oracle-general",
        aliases: &["oracleGeneral", "oracle"],
        summary: "libCacheSim oracleGeneral: 24-byte records u32 time_s, u64 obj_id (512 B sector), u32 size, i64 next",
        detectable: true,
    },
    FormatInfo {
        format: Format::Vscsi,
        name: "vscsi",
        aliases: &[],
        summary: "VMware vscsi binary, v1 (32-byte) or v2 (40-byte) records: SCSI cmd, lbn (512 B), len, ts_us",
        detectable: true,
    },
    FormatInfo {
        format: Format::Msr,
        name: "msr",
        aliases: &["msr-cambridge"],
        summary: "MSR Cambridge CSV: Timestamp(FILETIME),Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
        detectable: true,
    },
    FormatInfo {
        format: Format::Spc,
        name: "spc",
        aliases: &["umass"],
        summary: "UMass/SPC CSV: ASU,LBA(512 B),Size(bytes),Opcode(R/W),Timestamp(s)",
        detectable: true,
    },
    FormatInfo {
        format: Format::Blkparse,
        name: "blkparse",
        aliases: &["blktrace"],
        summary: "blkparse default text; Q, D or C events (--blkparse-event) become requests",
        detectable: true,
    },
    FormatInfo {
        format: Format::Fiu,
        name: "fiu",
        aliases: &[],
        summary: "FIU text: ts_ns pid process lba(512 B) size(512 B blocks) R|W major minor md5",
        detectable: true,
    },
    FormatInfo {
        format: Format::Alibaba,
        name: "alibaba",
        aliases: &[],
        summary: "Alibaba block CSV: device_id,opcode(R|W),offset(bytes),length(bytes),timestamp(us)",
        detectable: true,
    },
    FormatInfo {
        format: Format::Tencent,
        name: "tencent",
        aliases: &["tencent-cbs"],
        summary: "Tencent CBS CSV: timestamp(s),offset(512 B),size(512 B),iotype(0=read,1=write),volume",
        detectable: true,
    },
    FormatInfo {
        format: Format::Systor,
        name: "systor",
        aliases: &["systor17"],
        summary: "SNIA SYSTOR'17 CSV with header Timestamp,Response,IOType,LUN,Offset,Size",
        detectable: true,
    },
    FormatInfo {
        format: Format::Lis,
        name: "lis",
        aliases: &["arc"],
        summary: "ARC .lis: start_block n_blocks ignored request_no; one 512 B request per block",
        detectable: true,
    },
    FormatInfo {
        format: Format::Disksim,
        name: "disksim",
        aliases: &["mqsim"],
        summary: "DiskSim/MQSim ASCII: arrival_ns device lba(512 B) size(512 B) flags(1=read)",
        detectable: true,
    },
    FormatInfo {
        format: Format::Plain,
        name: "plain",
        aliases: &["txt"],
        summary: "one block id per line, taken as a 512 B sector number; 512 B reads",
        detectable: true,
    },
    FormatInfo {
        format: Format::GenericCsv,
        name: "generic-csv",
        aliases: &["generic"],
        summary: "any delimited text with a column mapping (--mapping offset=4,length=5,...)",
        detectable: false,
    },
];

impl Format {
    pub fn info(self) -> &'static FormatInfo {
        FORMATS.iter().find(|f| f.format == self).expect("every format is in FORMATS")
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// The format called `name` (or one of its aliases), case-insensitive; the error lists the
    /// valid names.
    pub fn from_name(name: &str) -> Result<Format, ConfigError> {
        let n = name.trim();
        FORMATS
            .iter()
            .find(|f| f.name.eq_ignore_ascii_case(n) || f.aliases.iter().any(|a| a.eq_ignore_ascii_case(n)))
            .map(|f| f.format)
            .ok_or_else(|| {
                let names: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
                ConfigError::unknown("--format", "trace format", name, &names)
            })
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Formats serialize as their short name (`"oracle-general"`), for configuration files.
impl serde::Serialize for Format {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Format {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Format, D::Error> {
        let name = String::deserialize(d)?;
        Format::from_name(&name).map_err(|e| serde::de::Error::custom(e.message))
    }
}

impl std::str::FromStr for Format {
    type Err = ConfigError;
    fn from_str(s: &str) -> Result<Format, ConfigError> {
        Format::from_name(s)
    }
}

/// The format a file name announces, if any (compression extension already dropped or not).
pub fn format_from_name(path: &Path) -> Option<Format> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    let mut name = name.as_str();
    for ext in [".zst", ".zstd", ".xz", ".gz", ".bz2"] {
        if let Some(stem) = name.strip_suffix(ext) {
            name = stem;
            break;
        }
    }
    let rules: &[(&str, Format)] = &[
        (".oraclegeneral.bin", Format::OracleGeneral),
        (".oraclegeneral", Format::OracleGeneral),
        (".vscsi", Format::Vscsi),
        (".lis", Format::Lis),
        (".iostack", Format::Bin),
        (".blkparse", Format::Blkparse),
        (".spc", Format::Spc),
    ];
    rules.iter().find(|(suffix, _)| name.ends_with(suffix)).map(|&(_, f)| f)
}

/// What the content of a file says about its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detected {
    Format(Format),
    /// The CloudPhysics CSV export of libCacheSim: generic CSV with a built-in mapping.
    CloudPhysicsCsv,
}

/// Magic bytes of the iostack binary format.
pub const BIN_MAGIC: &[u8; 8] = b"IOSTKTRC";

/// Recognises the format from the first bytes of the decompressed content (`head`) and the file
/// name. `total_len` is the content length when known (plain files).
pub fn detect(path: &Path, head: &[u8], total_len: Option<u64>) -> Result<Detected, TraceError> {
    if head.starts_with(BIN_MAGIC) {
        return Ok(Detected::Format(Format::Bin));
    }
    if let Some(f) = format_from_name(path) {
        return Ok(Detected::Format(f));
    }
    if head.is_empty() {
        return Err(undetected(path, "the file is empty"));
    }
    let binary = head.iter().take(4096).any(|&b| b == 0 || (b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t')));
    if binary {
        return detect_binary(path, head, total_len);
    }
    detect_text(path, head)
}

fn undetected(path: &Path, why: &str) -> TraceError {
    let names: Vec<&str> = FORMATS.iter().map(|f| f.name).collect();
    TraceError::file(path, format!("cannot tell the trace format ({why}); give it with --format (one of: {})", names.join(", ")))
}

fn detect_binary(path: &Path, head: &[u8], total_len: Option<u64>) -> Result<Detected, TraceError> {
    let fits = |size: usize| !matches!(total_len, Some(l) if l % size as u64 != 0) && head.len() >= size;
    let vscsi = fits(32) && super::vscsi::looks_like(head).is_some() || fits(40) && super::vscsi::looks_like(head) == Some(2);
    let oracle = fits(24) && super::oracle::looks_like(head);
    match (vscsi, oracle) {
        (true, false) => Ok(Detected::Format(Format::Vscsi)),
        (false, true) => Ok(Detected::Format(Format::OracleGeneral)),
        (true, true) => Err(undetected(path, "binary content that fits both vscsi and oracleGeneral")),
        (false, false) => Err(undetected(path, "binary content of no known shape")),
    }
}

fn detect_text(path: &Path, head: &[u8]) -> Result<Detected, TraceError> {
    let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
    // Whole lines only: the last line of the window may be cut.
    let cut = if head.len() >= 4096 { memchr::memrchr(b'\n', head).unwrap_or(head.len()) } else { head.len() };
    let mut lines = head[..cut]
        .split(|&c| c == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| {
            let t = super::parse::trim(l);
            !t.is_empty() && t[0] != b'#'
        });
    let Some(first) = lines.next() else {
        return Err(undetected(path, "no data lines at the start of the file"));
    };
    if let Some(d) = detect_header(first) {
        return Ok(d);
    }
    let mut found: Option<Format> = None;
    let mut n = 0;
    for line in std::iter::once(first).chain(lines).take(32) {
        let Some(f) = classify_line(line) else {
            // blkparse prints summaries and other events whose lines do not look like requests.
            if found == Some(Format::Blkparse) {
                continue;
            }
            return Err(undetected(path, &format!("line `{}` matches no known format", super::parse::show(line))));
        };
        match found {
            None => found = Some(f),
            Some(g) if g == f => {}
            Some(g) => {
                return Err(undetected(path, &format!("the first lines look like both {g} and {f}")));
            }
        }
        n += 1;
    }
    match found {
        Some(f) if n > 0 => Ok(Detected::Format(f)),
        _ => Err(undetected(path, "no data lines at the start of the file")),
    }
}

/// The iostack CSV column names.
pub const CSV_COLUMNS: &[&str] = &["time_ns", "pid", "op", "offset", "length", "device", "file", "file_offset", "file_size", "event", "ppid"];

fn detect_header(line: &[u8]) -> Option<Detected> {
    let text = std::str::from_utf8(line).ok()?;
    let cols: Vec<String> = text.split(',').map(|c| c.trim().trim_matches('"').to_ascii_lowercase()).collect();
    if cols.iter().all(|c| CSV_COLUMNS.contains(&c.as_str())) && cols.iter().any(|c| c == "offset") {
        return Some(Detected::Format(Format::Csv));
    }
    if cols == ["timestamp", "response", "iotype", "lun", "offset", "size"] {
        return Some(Detected::Format(Format::Systor));
    }
    if cols == ["version", "time", "op", "size", "lbn"] {
        return Some(Detected::CloudPhysicsCsv);
    }
    None
}

/// The text format one data line fits, if exactly one does.
///
/// - blkparse: `maj,min cpu seq sec.nsec pid action ...` (blank-separated);
/// - FIU: nine blank-separated fields, the sixth `R` or `W`;
/// - DiskSim (MQSim flavour): five blank-separated integers;
/// - ARC `.lis`: four blank-separated integers;
/// - plain: one integer;
/// - MSR: seven comma-separated fields, the fourth `Read` or `Write`;
/// - SPC: five or more comma-separated fields, integers then `R`/`W` then a decimal time;
/// - Alibaba: five comma-separated fields, the second `R` or `W`;
/// - Tencent: five comma-separated integers, the fourth 0 or 1.
pub fn classify_line(line: &[u8]) -> Option<Format> {
    use super::parse::{parse_f64, parse_u64, split_delim, split_ws};
    let int = |s: &[u8]| parse_u64(s).is_some();
    let rw = |s: &[u8]| matches!(super::parse::trim(s), b"R" | b"W" | b"r" | b"w");
    if memchr::memchr(b',', line).is_some() {
        let mut f = [&b""[..]; 8];
        let n = split_delim(line, b',', &mut f);
        let rw_word = |s: &[u8]| {
            let s = super::parse::trim(s);
            s.eq_ignore_ascii_case(b"read") || s.eq_ignore_ascii_case(b"write")
        };
        if n == 7 && rw_word(f[3]) && int(f[0]) && int(f[2]) && int(f[4]) && int(f[5]) {
            return Some(Format::Msr);
        }
        if n >= 5 && int(f[0]) && int(f[1]) && int(f[2]) && rw(f[3]) && parse_f64(f[4]).is_some() {
            return Some(Format::Spc);
        }
        if n == 5 && int(f[0]) && rw(f[1]) && int(f[2]) && int(f[3]) && int(f[4]) {
            return Some(Format::Alibaba);
        }
        if n == 5 && f.iter().take(5).all(|x| int(x)) && matches!(super::parse::trim(f[3]), b"0" | b"1") {
            return Some(Format::Tencent);
        }
        // blkparse device fields contain a comma too.
    }
    let mut f = [&b""[..]; 10];
    let n = split_ws(line, &mut f);
    if n >= 6 {
        let dev = f[0];
        let dev_ok = memchr::memchr(b',', dev).is_some_and(|i| int(&dev[..i]) && int(&dev[i + 1..]));
        if dev_ok && int(f[1]) && int(f[2]) && parse_f64(f[3]).is_some() && int(f[4]) && f[5].iter().all(|c| c.is_ascii_alphabetic()) {
            return Some(Format::Blkparse);
        }
    }
    if n == 9 && int(f[0]) && int(f[1]) && int(f[3]) && int(f[4]) && rw(f[5]) {
        return Some(Format::Fiu);
    }
    if n == 5 && f[..5].iter().all(|x| int(x)) {
        return Some(Format::Disksim);
    }
    if n == 4 && f[..4].iter().all(|x| int(x)) {
        return Some(Format::Lis);
    }
    if n == 1 && int(f[0]) {
        return Some(Format::Plain);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert_eq!(Format::from_name("oracleGeneral").unwrap(), Format::OracleGeneral);
        assert_eq!(Format::from_name("VSCSI").unwrap(), Format::Vscsi);
        for f in FORMATS {
            assert_eq!(Format::from_name(f.name).unwrap(), f.format);
        }
        let e = Format::from_name("foo").unwrap_err().to_string();
        assert!(e.contains("unknown trace format `foo`") && e.contains("oracle-general") && e.contains("generic-csv"), "{e}");
    }

    #[test]
    fn serde_by_name() {
        assert_eq!(serde_json::to_string(&Format::OracleGeneral).unwrap(), "\"oracle-general\"");
        assert_eq!(serde_json::from_str::<Format>("\"vscsi\"").unwrap(), Format::Vscsi);
        assert!(serde_json::from_str::<Format>("\"nope\"").unwrap_err().to_string().contains("valid"));
    }

    #[test]
    fn name_hints() {
        assert_eq!(format_from_name(Path::new("a/x.oracleGeneral.bin.zst")), Some(Format::OracleGeneral));
        assert_eq!(format_from_name(Path::new("OLTP.lis.zst")), Some(Format::Lis));
        assert_eq!(format_from_name(Path::new("x.vscsi")), Some(Format::Vscsi));
        assert_eq!(format_from_name(Path::new("x.csv")), None);
    }

    #[test]
    fn lines() {
        assert_eq!(classify_line(b"128166385295514663,hm,0,Write,9056014336,2048,2833"), Some(Format::Msr));
        assert_eq!(classify_line(b"0,20941264,8192,W,0.551706"), Some(Format::Spc));
        assert_eq!(classify_line(b"1538323200,4247200,128,1,1058"), Some(Format::Tencent));
        assert_eq!(classify_line(b"11413000 0 657728 16 1"), Some(Format::Disksim));
        assert_eq!(classify_line(b"1 1 0 0"), Some(Format::Lis));
        assert_eq!(classify_line(b"42932745"), Some(Format::Plain));
        assert_eq!(classify_line(b"  8,16   5        2     0.000001850 18615  Q   R 1444645666 + 256 [java]"), Some(Format::Blkparse));
        assert_eq!(classify_line(b"89966527045403 4892 syslogd 904265560 8 W 6 0 531e779ca2"), Some(Format::Fiu));
        assert_eq!(classify_line(b"0,R,126703644672,4096,1577808000000087"), Some(Format::Alibaba));
        assert_eq!(classify_line(b"hello"), None);
    }
}
