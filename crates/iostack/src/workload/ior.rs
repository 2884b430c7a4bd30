//! IOR-R: IOR 2.9.1 reading, POSIX API, one 1 GiB file per process in 64 KiB sequential
//! transfers (KDSim/REDCAP paper, l.183).
//!
//! The files "were create[d] in parallel with IOR too" (l.183), so their blocks interleave on the
//! disk. ext3 gives each file being written a reservation window that grows while the file is
//! written sequentially, so parallel writers end up with runs of a few MiB each: here the files are
//! laid out round robin in chunks of `interleave` bytes (default 4 MiB, an assumption of the order
//! of ext3's largest reservation window of 1,027 blocks; `interleave=0` gives contiguous files).

use super::streams::{FileMap, Merged, Placement, Stream, BLOCK};
use super::{GenParams, GeneratorInfo};
use crate::error::ConfigError;

pub const INFO: GeneratorInfo = GeneratorInfo {
    name: "ior",
    summary: "IOR-R: 64 KiB sequential reads of a file per process, files laid out as written in parallel",
    params: &[
        ("file_size", "bytes per process's file (default 1GiB)"),
        ("transfer", "bytes per read (default 64KiB)"),
        ("interleave", "bytes each file gets in turn when laid out (default 4MiB; 0: contiguous files)"),
    ],
    common: &["processes"],
    build: |c, p| {
        let s = Ior::from_params(p)?;
        s.check_layout(c.processes, "ior.interleave")?;
        Ok(Box::new(Merged::new("ior", s.streams(c.processes, &mut Placement::default()))))
    },
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ior {
    pub file_size: u64,
    pub transfer: u64,
    pub interleave: u64,
}

impl Default for Ior {
    fn default() -> Self {
        Ior { file_size: 1 << 30, transfer: 64 << 10, interleave: 4 << 20 }
    }
}

impl Ior {
    pub fn from_params(p: &mut GenParams) -> Result<Ior, ConfigError> {
        let d = Ior::default();
        let s = Ior {
            file_size: p.bytes_in("file_size", d.file_size, 1, super::MAX_FILE_SIZE)?,
            transfer: p.bytes_in("transfer", d.transfer, super::MIN_READ, super::MAX_READ)?,
            interleave: p.bytes_in("interleave", d.interleave, 0, super::MAX_FILE_SIZE)?,
        };
        if s.file_size == 0 || s.transfer == 0 {
            return Err(ConfigError::new("ior", "file_size and transfer must be positive"));
        }
        if s.interleave % BLOCK != 0 {
            return Err(ConfigError::new("ior.interleave", format!("{} is not a multiple of 4 KiB", s.interleave)));
        }
        Ok(s)
    }

    /// Refuses layouts whose extent lists would not fit in memory: `processes` files of
    /// `file_size` in `interleave` chunks make at most 2^24 extents.
    pub fn check_layout(&self, processes: u32, key: &str) -> Result<(), ConfigError> {
        let per_file = if self.interleave == 0 || processes == 1 { 1 } else { self.file_size.div_ceil(self.interleave) };
        if per_file.saturating_mul(processes as u64) > 1 << 24 {
            return Err(ConfigError::new(key, format!("{processes} files of {} bytes in {} byte chunks make more than 2^24 extents; use a larger interleave or smaller files", self.file_size, self.interleave)));
        }
        Ok(())
    }

    /// The files of `processes` writers placed from disk block `at`, round robin by chunk.
    pub fn layout(&self, processes: u32, at: &Placement) -> Vec<FileMap> {
        let blocks = self.file_size.div_ceil(BLOCK);
        let n = processes as u64;
        let chunk = if self.interleave == 0 || n == 1 { blocks } else { self.interleave / BLOCK };
        (0..n)
            .map(|p| {
                let mut extents = Vec::new();
                let mut fb = 0;
                let mut k = 0;
                while fb < blocks {
                    let len = chunk.min(blocks - fb);
                    extents.push((fb, at.block + (k * n + p) * chunk, len));
                    fb += len;
                    k += 1;
                }
                FileMap { id: at.file_id + p, bytes: self.file_size, extents }
            })
            .collect()
    }

    /// Process `pid` reading file `f` sequentially (the file's own size, not `file_size`).
    pub fn reader(&self, f: FileMap, pid: u32) -> Stream {
        let transfer = self.transfer;
        Box::new((0..f.bytes).step_by(transfer as usize).flat_map(move |off| f.read_one(off, transfer, pid)))
    }

    /// One sequential reader per process, files placed from `at` (which moves past them).
    pub fn streams(&self, processes: u32, at: &mut Placement) -> Vec<Stream> {
        let files = self.layout(processes, at);
        let end = files.iter().map(FileMap::end_block).max().unwrap_or(at.block);
        let streams = files.into_iter().enumerate().map(|(p, f)| self.reader(f, at.pid + p as u32)).collect();
        at.block = end;
        at.file_id += processes as u64;
        streams
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parallel_layout_interleaves_chunks() {
        let ior = Ior { file_size: 10 << 20, transfer: 64 << 10, interleave: 4 << 20 };
        let files = ior.layout(2, &Placement::default());
        assert_eq!(files[0].extents, vec![(0, 0, 1024), (1024, 2048, 1024), (2048, 4096, 512)]);
        assert_eq!(files[1].extents, vec![(0, 1024, 1024), (1024, 3072, 1024), (2048, 5120, 512)]);
        let mut at = Placement::default();
        let s = ior.streams(2, &mut at);
        assert_eq!(at.block, 5632);
        let v: Vec<_> = s.into_iter().next().unwrap().collect();
        assert_eq!(v.len(), 160);
        assert_eq!(v[64].offset, 2048 * 4096, "the 65th read starts the second chunk");
        // A GiB per process in 64 KiB: 16,384 reads.
        assert_eq!(Ior::default().streams(1, &mut Placement::default()).pop().unwrap().count(), 16_384);
    }
}
