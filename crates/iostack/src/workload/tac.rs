//! TAC: `tac` reading a file backward (KDSim/REDCAP paper, l.185, l.260).
//!
//! Each process reads its own file from the end to the start in requests of `request` bytes
//! (8 KiB, l.260): offsets F−8K, F−16K, …, 0; a file whose size is not a multiple of the request
//! starts with its short tail. A 1 GiB file gives 131,072 requests. Readahead does not help a
//! backward reader, which is what makes REDCAP's segment prefetch pay off here (15 of 16 requests
//! hit a 128 KiB segment read by the first). Files are contiguous, one after another, in process
//! order (created one at a time).

use super::streams::{FileMap, Merged, Placement, Stream};
use super::{GenParams, GeneratorInfo};
use crate::error::ConfigError;

pub const INFO: GeneratorInfo = GeneratorInfo {
    name: "tac",
    summary: "tac: each process reads its own file backward in 8 KiB requests (REDCAP paper's TAC)",
    params: &[("file_size", "bytes per process's file (default 1GiB)"), ("request", "bytes per read (default 8KiB)")],
    common: &["processes"],
    build: |c, p| {
        let t = Tac::from_params(p)?;
        Ok(Box::new(Merged::new("tac", t.streams(c.processes, &mut Placement::default()))))
    },
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tac {
    pub file_size: u64,
    pub request: u64,
}

impl Default for Tac {
    fn default() -> Self {
        Tac { file_size: 1 << 30, request: 8 << 10 }
    }
}

impl Tac {
    pub fn from_params(p: &mut GenParams) -> Result<Tac, ConfigError> {
        let d = Tac::default();
        let t = Tac { file_size: p.bytes_in("file_size", d.file_size, 1, super::MAX_FILE_SIZE)?, request: p.bytes_in("request", d.request, super::MIN_READ, super::MAX_READ)? };
        if t.file_size == 0 || t.request == 0 {
            return Err(ConfigError::new("tac.file_size", "the file size and the request size must be positive"));
        }
        Ok(t)
    }

    /// One backward reader per process, files placed from `at` (which moves past them).
    pub fn streams(&self, processes: u32, at: &mut Placement) -> Vec<Stream> {
        let pid0 = at.pid;
        at.contiguous_files(processes, self.file_size).into_iter().zip(pid0..).map(|(f, pid)| self.reader(f, pid)).collect()
    }

    /// Process `pid` reading file `f` backward (the file's own size, not `file_size`).
    pub fn reader(&self, f: FileMap, pid: u32) -> Stream {
        let req = self.request;
        let n = f.bytes.div_ceil(req);
        Box::new((0..n).rev().flat_map(move |k| f.read_one(k * req, req, pid)))
    }
}

/// The requests of one process's stream, for tests.
#[cfg(test)]
pub(crate) fn collect(s: Stream) -> Vec<crate::trace::Request> {
    s.collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Request;

    #[test]
    fn a_gib_file_is_131072_backward_reads() {
        let s = Tac::default().streams(1, &mut Placement::default());
        let v = collect(s.into_iter().next().unwrap());
        assert_eq!(v.len(), 131_072);
        assert_eq!((v[0].offset, v[0].length), ((1 << 30) - 8192, 8192));
        assert_eq!(v.last().unwrap().offset, 0);
        assert!(v.windows(2).all(|w| w[1].offset + 8192 == w[0].offset));
        // Three processes: own files one after another, own pids; a short tail first.
        let mut at = Placement::default();
        let t = Tac { file_size: 20_000, request: 8192 };
        let s = t.streams(3, &mut at);
        assert_eq!(at.block, 3 * 5);
        let v: Vec<Vec<Request>> = s.into_iter().map(collect).collect();
        assert_eq!(v[2].iter().map(|r| (r.offset, r.length)).collect::<Vec<_>>(), vec![(10 * 4096 + 16384, 20_000 - 16384), (10 * 4096 + 8192, 8192), (10 * 4096, 8192)]);
        assert!(v[1].iter().all(|r| r.pid == 2 && r.file.unwrap().id == 2));
    }
}
