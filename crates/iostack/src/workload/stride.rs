//! Strided reads: read `read` bytes, skip `skip`, to the end of the file, in `series` passes
//! shifted by `read` each (KDSim/REDCAP paper, l.187-189).
//!
//! - 8k-SR: read 4 KiB, skip 8 KiB, one series: 87,382 requests per 1 GiB file (1 block in 3,
//!   the "≈ 341 MB" of l.302);
//! - 512k-SR: read 4 KiB, skip 512 KiB, four series at offsets 0, 4, 8 and 12 KiB ("at EOF restart
//!   at the next offset"): 2,033 reads per series, 8,132 per 1 GiB file.
//!
//! `pattern=8k-sr` or `pattern=512k-sr` sets `skip` and `series` to those; the parameters given
//! override. Each process reads its own contiguous file; files follow one another.

use super::streams::{FileMap, Merged, Placement, Stream, BLOCK};
use super::{GenParams, GeneratorInfo};
use crate::error::ConfigError;

pub const INFO: GeneratorInfo = GeneratorInfo {
    name: "stride",
    summary: "strided reads: read 4 KiB, skip K, series at shifted offsets (REDCAP paper's 8k-SR and 512k-SR)",
    params: &[
        ("pattern", "8k-sr (skip 8KiB, 1 series; default) or 512k-sr (skip 512KiB, 4 series)"),
        ("file_size", "bytes per process's file (default 1GiB)"),
        ("read", "bytes per read (default 4KiB)"),
        ("skip", "bytes skipped after each read (default from the pattern)"),
        ("series", "passes over the file, each shifted by `read` (default from the pattern)"),
    ],
    common: &["processes"],
    build: |c, p| {
        let s = Stride::from_params(p)?;
        Ok(Box::new(Merged::new("stride", s.streams(c.processes, &mut Placement::default()))))
    },
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stride {
    pub file_size: u64,
    pub read: u64,
    pub skip: u64,
    pub series: u64,
}

impl Stride {
    /// 8k-SR on a 1 GiB file.
    pub fn sr8k() -> Stride {
        Stride { file_size: 1 << 30, read: BLOCK, skip: 8 << 10, series: 1 }
    }

    /// 512k-SR on a 1 GiB file.
    pub fn sr512k() -> Stride {
        Stride { file_size: 1 << 30, read: BLOCK, skip: 512 << 10, series: 4 }
    }

    pub fn from_params(p: &mut GenParams) -> Result<Stride, ConfigError> {
        let base = match p.text("pattern").map(|s| s.to_ascii_lowercase()).as_deref() {
            None | Some("8k-sr") => Stride::sr8k(),
            Some("512k-sr") => Stride::sr512k(),
            Some(other) => return Err(ConfigError::unknown("stride.pattern", "pattern", other, &["8k-sr", "512k-sr"])),
        };
        let s = Stride {
            file_size: p.bytes_in("file_size", base.file_size, 1, super::MAX_FILE_SIZE)?,
            read: p.bytes_in("read", base.read, super::MIN_READ, super::MAX_READ)?,
            skip: p.bytes_in("skip", base.skip, 0, super::MAX_FILE_SIZE)?,
            series: p.u64_in("series", base.series, 1, 1024)?,
        };
        if s.file_size == 0 || s.read == 0 || s.series == 0 {
            return Err(ConfigError::new("stride", "file_size, read and series must be positive"));
        }
        if s.series * s.read > s.read + s.skip {
            return Err(ConfigError::new("stride.series", format!("{} series of {} bytes do not fit in a period of {} bytes (they would read blocks twice)", s.series, s.read, s.read + s.skip)));
        }
        Ok(s)
    }

    /// Requests of one process's pass (all series).
    pub fn count(&self) -> u64 {
        let period = self.read + self.skip;
        (0..self.series).map(|s| (self.file_size.saturating_sub(s * self.read)).div_ceil(period)).sum()
    }

    /// One strided reader per process, files placed from `at` (which moves past them).
    pub fn streams(&self, processes: u32, at: &mut Placement) -> Vec<Stream> {
        let pid0 = at.pid;
        at.contiguous_files(processes, self.file_size).into_iter().zip(pid0..).map(|(f, pid)| self.reader(f, pid)).collect()
    }

    /// Process `pid` reading file `f` with this pattern (the file's own size, not `file_size`).
    pub fn reader(&self, f: FileMap, pid: u32) -> Stream {
        let (me, size) = (*self, f.bytes);
        let period = me.read + me.skip;
        let offsets = (0..me.series).flat_map(move |s| (s * me.read..size).step_by(period as usize));
        Box::new(offsets.flat_map(move |off| f.read_one(off, me.read, pid)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_counts() {
        let one = |s: Stride| s.streams(1, &mut Placement::default()).into_iter().next().unwrap().collect::<Vec<_>>();
        let v = one(Stride::sr8k());
        assert_eq!(v.len(), 87_382);
        assert_eq!(Stride::sr8k().count(), 87_382);
        assert_eq!(v.iter().map(|r| r.length).sum::<u64>(), 87_382 * 4096, "341.3 MiB of 1 GiB");
        assert!(v.windows(2).all(|w| w[1].offset == w[0].offset + 12_288));
        let v = one(Stride::sr512k());
        assert_eq!(v.len(), 8_132);
        assert_eq!(Stride::sr512k().count(), 8_132);
        let starts: Vec<u64> = v.iter().enumerate().filter(|(i, r)| *i == 0 || r.offset < v[i - 1].offset).map(|(_, r)| r.offset).collect();
        assert_eq!(starts, vec![0, 4096, 8192, 12288]);
        // Never a block twice.
        let mut blocks: Vec<u64> = v.iter().map(|r| r.offset / 4096).collect();
        blocks.sort();
        blocks.dedup();
        assert_eq!(blocks.len(), 8_132);
    }

    #[test]
    fn params() {
        let p = |t: &str| Stride::from_params(&mut GenParams::parse("stride", t).unwrap());
        assert_eq!(p("pattern=512k-sr").unwrap(), Stride::sr512k());
        assert_eq!(p("pattern=512k-sr,series=2").unwrap().series, 2);
        assert!(p("pattern=4k").is_err());
        assert!(p("skip=0,series=2").is_err());
    }
}
