//! A mixed file workload in the spirit of the DULO paper's BLAST and PostMark benchmarks
//! (Jiang et al., ACM TOS 2007, Section 4.3.1), with a fresh or an aged file layout (Section 4.5).
//!
//! Three processes run concurrently:
//!
//! - pid 1, the *scanner*: reads a set of large data files from start to end, `passes` times
//!   (BLAST "scans the data files sequentially"; TPC-H query 6 is a sequential table scan);
//! - pid 2, the *index reader*: one-block reads at random positions of an index file, a hot
//!   part of it read more often than the rest (BLAST's "index and header files are accessed
//!   randomly");
//! - pid 3, the *small-file reader*: reads whole small files picked at random (PostMark's pool
//!   of small files; diff's small files read in an order unrelated to their placement).
//!
//! BLAST-like form (`blast = yes`). BLAST itself is one process: it reads a chunk of the
//! database, compares the query against it, and looks up the index and header entries of the
//! hits before reading the next chunk. In this form pid 1 issues the scanner's and the index
//! reader's requests alternately, the index reads spread evenly over the scan (after the k-th
//! of S scan reads, the reads up to the (k * I / S)-th of the I index reads); the small-file
//! reader, if any, stays a process of its own.
//!
//! Time. Every process has its own clock, starting at 0 and advanced after each of its reads by
//! the computation that follows it (`scan_think`, `index_think`, `small_think`), and the trace
//! is written in time order (equal times by the request's rank in its process, then by pid), so each
//! process's first request is at time 0 at the head of the trace and the processes run
//! concurrently from the start in both replays: closed loop with `think = trace` issues a
//! process's next request the trace gap after its previous one completed; open loop issues
//! every request at its time. (A scanner with no think time has all its requests at time 0:
//! it never stops to compute.)
//!
//! Setting a component's size to zero removes it: only the scanner gives a purely sequential
//! workload (the paper's TPC-H), only the index and small-file readers a purely random one (its
//! diff).
//!
//! Layout. Files are placed in three regions spread over the disk (data, index, small files).
//! Fresh: each file is contiguous. Aged (Section 4.5: on an aged file system "large files
//! consist of a number of fragments of various sizes and files in the same directory are
//! dispersed on the disk"): every file is cut into fragments of exponentially distributed size
//! (mean `fragment_blocks`), and the fragments of each region are shuffled before being laid
//! out with small random gaps, so a file's fragments are scattered over its region.
//!
//! Requests carry the file and the offset in it, so per-file prefetchers (Linux readahead) see
//! files; a read that crosses a fragment boundary is split at it. Seeded and deterministic.

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::trace::{FileRef, Op, Request};

/// `iostack gen mixed-files`: the seed is the common `--seed`; everything else is a parameter.
pub const INFO: super::GeneratorInfo = super::GeneratorInfo {
    name: "mixed-files",
    summary: "DULO-style mix: a scanner of large files, a random index reader and a small-file reader, three concurrent pids, or with blast=yes one BLAST-like process alternating scan and index reads (DULO Section 4.3.1)",
    params: &[
        ("data_files", "large files scanned (default 4)"),
        ("data_file_blocks", "blocks per large file (default 16384)"),
        ("passes", "scans of all large files (default 8)"),
        ("scan_read_blocks", "blocks per scan read (default 8)"),
        ("index_blocks", "index file size, blocks (default 32768)"),
        ("index_reads", "one-block index reads (default 20000)"),
        ("hot_fraction", "fraction of the index that is hot (default 0.25)"),
        ("hot_share", "share of index reads on the hot part (default 0.95)"),
        ("small_files", "small files (default 2000)"),
        ("small_file_max_blocks", "small file sizes uniform in 1..=this (default 16)"),
        ("small_reads", "whole-file reads of small files (default 1000)"),
        ("scan_think", "scanner computation between reads (default 0; replay with think = trace)"),
        ("index_think", "index reader computation between reads (default 0)"),
        ("small_think", "small-file reader computation between reads (default 0)"),
        ("blast", "BLAST-like form: one process alternating scan reads and index reads (default no: separate processes)"),
        ("aged", "aged layout: files fragmented and scattered (default no)"),
        ("fragment_blocks", "mean fragment size of the aged layout, blocks (default 96: a scan about 2x slower, as the DULO paper's aged file system)"),
        ("disk_blocks", "disk size in blocks (default 39062500, 160 GB)"),
        ("block_bytes", "bytes per block (default 4096)"),
    ],
    common: &["seed"],
    build: |c, p| {
        let d = MixedFilesConfig::default();
        const COUNT: u64 = 1 << 16;
        const BLOCKS: u64 = 1 << 32;
        const THINK_NS: u64 = 10_000_000_000;
        let held = super::MAX_HELD_REQUESTS;
        let cfg = MixedFilesConfig {
            data_files: p.u64_in("data_files", d.data_files as u64, 0, COUNT)? as u32,
            data_file_blocks: p.u64_in("data_file_blocks", d.data_file_blocks, 1, BLOCKS)?,
            passes: p.u64_in("passes", d.passes as u64, 0, COUNT)? as u32,
            scan_read_blocks: p.u64_in("scan_read_blocks", d.scan_read_blocks, 1, COUNT)?,
            index_blocks: p.u64_in("index_blocks", d.index_blocks, 0, BLOCKS)?,
            index_reads: p.u64_in("index_reads", d.index_reads, 0, held)?,
            hot_fraction: p.f64_in("hot_fraction", d.hot_fraction, 0.0, 1.0)?,
            hot_share: p.f64_in("hot_share", d.hot_share, 0.0, 1.0)?,
            small_files: p.u64_in("small_files", d.small_files as u64, 0, 1 << 20)? as u32,
            small_file_max_blocks: p.u64_in("small_file_max_blocks", d.small_file_max_blocks, 1, COUNT)?,
            small_reads: p.u64_in("small_reads", d.small_reads, 0, held)?,
            scan_think_us: p.duration_in("scan_think", 0, THINK_NS)? / 1000,
            index_think_us: p.duration_in("index_think", 0, THINK_NS)? / 1000,
            small_think_us: p.duration_in("small_think", 0, THINK_NS)? / 1000,
            blast: p.bool("blast", d.blast)?,
            aged: p.bool("aged", d.aged)?,
            fragment_blocks: p.f64_in("fragment_blocks", d.fragment_blocks, 1.0, BLOCKS as f64)?,
            disk_blocks: p.u64_in("disk_blocks", d.disk_blocks, 3, super::MAX_BLOCKS)?,
            block_bytes: p.u64_in("block_bytes", d.block_bytes, 1, super::MAX_BLOCK_BYTES)?,
            seed: c.seed,
        };
        Ok(Box::new(crate::trace::VecReader::new(cfg.requests()?)))
    },
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MixedFilesConfig {
    /// Large data files scanned sequentially, their size, how many passes, blocks per read.
    pub data_files: u32,
    pub data_file_blocks: u64,
    pub passes: u32,
    pub scan_read_blocks: u64,
    /// Index file size and one-block reads of it; `hot_fraction` of the index receives
    /// `hot_share` of the reads.
    pub index_blocks: u64,
    pub index_reads: u64,
    pub hot_fraction: f64,
    pub hot_share: f64,
    /// Small files (sizes uniform in 1..=small_file_max_blocks) and whole-file reads of them.
    pub small_files: u32,
    pub small_file_max_blocks: u64,
    pub small_reads: u64,
    /// BLAST-like form: the scan and the index reads are one process (pid 1), alternating.
    #[serde(default)]
    pub blast: bool,
    /// Aged layout: files cut into fragments of this mean size (blocks) and scattered.
    pub aged: bool,
    pub fragment_blocks: f64,
    /// Computation between a process's requests (microseconds), written into the requests'
    /// timestamps so that the timed stack replays it with `think = trace`. Real applications
    /// compute between reads (BLAST compares each chunk it reads, Section 4.3.1), which is what
    /// spreads a random reader's re-references over the time the scanner streams through the
    /// cache; with no think time a reader whose blocks are cached runs through all its hits in
    /// an instant and its re-references never compete with the scan.
    #[serde(default)]
    pub scan_think_us: u64,
    #[serde(default)]
    pub index_think_us: u64,
    #[serde(default)]
    pub small_think_us: u64,
    /// Disk size in blocks (regions start at 0, 1/3 and 2/3 of it).
    pub disk_blocks: u64,
    pub block_bytes: u64,
    pub seed: u64,
}

impl Default for MixedFilesConfig {
    fn default() -> Self {
        MixedFilesConfig {
            data_files: 4,
            data_file_blocks: 16_384,
            passes: 8,
            scan_read_blocks: 8,
            index_blocks: 32_768,
            index_reads: 20_000,
            hot_fraction: 0.25,
            hot_share: 0.95,
            small_files: 2000,
            small_file_max_blocks: 16,
            small_reads: 1000,
            blast: false,
            aged: false,
            // Calibrated to the DULO paper's aged file system (Section 4.5: TPC-H 2.07x slower):
            // scanning the default data files is 2.0x slower aged than fresh under `linux`
            // (`repro::dulo_sensitivity`); a mean of 16 blocks made it 6.6x.
            fragment_blocks: 96.0,
            scan_think_us: 0,
            index_think_us: 0,
            small_think_us: 0,
            disk_blocks: 39_062_500, // 160 GB of 4 KiB blocks (the paper's WD disk)
            block_bytes: 4096,
            seed: 1,
        }
    }
}

/// A file's extents: (first block in the file, disk block, length).
struct FileMap {
    id: u64,
    blocks: u64,
    extents: Vec<(u64, u64, u64)>,
}

impl MixedFilesConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.block_bytes == 0 || self.scan_read_blocks == 0 {
            return Err(ConfigError::new("mixed-files.block_bytes", "block size and scan read size must be positive"));
        }
        if !(0.0..=1.0).contains(&self.hot_fraction) || !(0.0..=1.0).contains(&self.hot_share) {
            return Err(ConfigError::new("mixed-files.hot_fraction", "hot_fraction and hot_share must be in [0, 1]"));
        }
        if self.aged && !(self.fragment_blocks >= 1.0) {
            return Err(ConfigError::new("mixed-files.fragment_blocks", "the mean fragment must be at least 1 block"));
        }
        if self.small_reads > 0 && (self.small_files == 0 || self.small_file_max_blocks == 0) {
            return Err(ConfigError::new("mixed-files.small_files", "small-file reads need small files"));
        }
        if self.index_reads > 0 && self.index_blocks == 0 {
            return Err(ConfigError::new("mixed-files.index_blocks", "index reads need an index"));
        }
        // The workload is built in memory: bound its requests, its blocks and, aged, its
        // fragments, so that no setting allocates without bound.
        let file_blocks = (self.data_files as u64)
            .saturating_mul(self.data_file_blocks)
            .saturating_add(self.index_blocks)
            .saturating_add((self.small_files as u64).saturating_mul(self.small_file_max_blocks));
        if file_blocks.saturating_add(self.disk_blocks) > super::MAX_BLOCKS {
            return Err(ConfigError::new("mixed-files.data_file_blocks", format!("the files ({file_blocks} blocks) and the disk ({} blocks) exceed 2^40 blocks", self.disk_blocks)));
        }
        let scans = (self.passes as u64).saturating_mul(self.data_files as u64).saturating_mul(self.data_file_blocks.div_ceil(self.scan_read_blocks));
        let requests = scans.saturating_add(self.index_reads).saturating_add(self.small_reads);
        let fragments = if self.aged { file_blocks as f64 / self.fragment_blocks } else { 0.0 };
        if requests > super::MAX_HELD_REQUESTS || fragments > super::MAX_HELD_REQUESTS as f64 {
            return Err(ConfigError::new("mixed-files", format!("{requests} reads over {file_blocks} blocks exceed what is built in memory (at most {} reads and, aged, as many fragments)", super::MAX_HELD_REQUESTS)));
        }
        Ok(())
    }

    /// Lays out files of the given sizes in the region starting at `base`.
    fn layout(&self, sizes: &[(u64, u64)], base: u64, rng: &mut Pcg64Mcg) -> Vec<FileMap> {
        let mut maps: Vec<FileMap> = sizes.iter().map(|&(id, n)| FileMap { id, blocks: n, extents: Vec::new() }).collect();
        if !self.aged {
            let mut at = base;
            for m in maps.iter_mut() {
                m.extents.push((0, at, m.blocks));
                at += m.blocks;
            }
            return maps;
        }
        let exp = Exp::new(1.0 / self.fragment_blocks).expect("positive");
        // (file index, first block in file, length)
        let mut frags: Vec<(usize, u64, u64)> = Vec::new();
        for (i, m) in maps.iter().enumerate() {
            let mut off = 0;
            while off < m.blocks {
                let len = ((exp.sample(rng) as u64).max(1)).min(m.blocks - off);
                frags.push((i, off, len));
                off += len;
            }
        }
        frags.shuffle(rng);
        let mut at = base;
        for (i, off, len) in frags {
            at += rng.gen_range(0..8); // free-space holes between fragments
            maps[i].extents.push((off, at, len));
            at += len;
        }
        for m in maps.iter_mut() {
            m.extents.sort();
        }
        maps
    }

    /// Reads of `len` blocks at file offset `off`, split at fragment boundaries.
    fn read(&self, f: &FileMap, off: u64, len: u64, pid: u32, time_ns: u64, out: &mut Vec<Request>) {
        let mut off = off;
        let end = (off + len).min(f.blocks);
        while off < end {
            let &(foff, disk, elen) = f.extents.iter().rev().find(|e| e.0 <= off).expect("extents cover the file");
            let n = (foff + elen).min(end) - off;
            out.push(Request {
                time_ns,
                offset: (disk + off - foff) * self.block_bytes,
                length: n * self.block_bytes,
                pid,
                device: 0,
                op: Op::Read,
                file: Some(FileRef { id: f.id, offset: off * self.block_bytes, size: Some(f.blocks * self.block_bytes) }),
            });
            off += n;
        }
    }

    /// The workload: every process's requests stamped with its own clock, merged in time order
    /// (ties by rank in the process, then by pid).
    pub fn requests(&self) -> Result<Vec<Request>, ConfigError> {
        self.validate()?;
        let mut rng = Pcg64Mcg::seed_from_u64(self.seed ^ 0xD1B5_4A32_D192_ED03);
        let third = self.disk_blocks / 3;
        // File sizes and the read sequence come from their own stream, so that the layout (fresh
        // or aged) changes where blocks are, not which are read.
        let mut layout_rng = Pcg64Mcg::seed_from_u64(self.seed ^ 0x9E37_79B9_7F4A_7C15);
        let data_sizes: Vec<(u64, u64)> = (0..self.data_files as u64).map(|i| (1 + i, self.data_file_blocks)).collect();
        let small_sizes: Vec<(u64, u64)> =
            (0..self.small_files as u64).map(|i| (20_000 + i, rng.gen_range(1..=self.small_file_max_blocks.max(1)))).collect();
        let data = self.layout(&data_sizes, 0, &mut layout_rng);
        let index = self.layout(&[(10_000, self.index_blocks)], third, &mut layout_rng);
        let small = self.layout(&small_sizes, 2 * third, &mut layout_rng);
        // The reads of each component, in order: (file, offset, blocks).
        let mut scan: Vec<(&FileMap, u64, u64)> = Vec::new();
        for _ in 0..self.passes {
            for f in &data {
                for off in (0..f.blocks).step_by(self.scan_read_blocks as usize) {
                    scan.push((f, off, self.scan_read_blocks));
                }
            }
        }
        let mut index_reads = Vec::with_capacity(self.index_reads as usize);
        if self.index_reads > 0 {
            let hot = ((self.index_blocks as f64 * self.hot_fraction) as u64).max(1).min(self.index_blocks);
            for _ in 0..self.index_reads {
                let b = if rng.gen_bool(self.hot_share) || hot == self.index_blocks {
                    rng.gen_range(0..hot)
                } else {
                    rng.gen_range(hot..self.index_blocks)
                };
                index_reads.push((&index[0], b, 1));
            }
        }
        let small_reads: Vec<(&FileMap, u64, u64)> = (0..self.small_reads)
            .map(|_| {
                let f = &small[rng.gen_range(0..small.len())];
                (f, 0, f.blocks)
            })
            .collect();
        let mut out = Vec::new();
        if self.blast {
            // One process: after the k-th scan read, the index reads up to the (k*I/S)-th.
            let mut clock = 0;
            let (s, i) = (scan.len() as u64, index_reads.len() as u64);
            let mut next_index = 0usize;
            let mut index_read = |upto: u64, clock: &mut u64, out: &mut Vec<Request>| {
                while (next_index as u64) < upto {
                    let (f, off, len) = index_reads[next_index];
                    self.read(f, off, len, 1, *clock, out);
                    *clock += self.index_think_us * 1000;
                    next_index += 1;
                }
            };
            for (k, &(f, off, len)) in scan.iter().enumerate() {
                self.read(f, off, len, 1, clock, &mut out);
                clock += self.scan_think_us * 1000;
                index_read((k as u64 + 1) * i / s, &mut clock, &mut out);
            }
            index_read(i, &mut clock, &mut out);
        } else {
            self.process(&scan, 1, self.scan_think_us, &mut out);
            self.process(&index_reads, 2, self.index_think_us, &mut out);
        }
        self.process(&small_reads, 3, self.small_think_us, &mut out);
        // Equal times go by the request's rank in its process, then by pid, so that processes
        // whose clocks stand still (no think time) alternate instead of one going first whole.
        let mut rank = [0u64; 4];
        let mut keyed: Vec<(u64, u64, u32, Request)> = out
            .into_iter()
            .map(|r| {
                let k = &mut rank[r.pid as usize & 3];
                *k += 1;
                (r.time_ns, *k, r.pid, r)
            })
            .collect();
        keyed.sort_unstable_by_key(|&(t, k, pid, _)| (t, k, pid));
        Ok(keyed.into_iter().map(|(.., r)| r).collect())
    }

    /// The reads of one process, each at the process's clock, which advances by `think_us`
    /// after each read.
    fn process(&self, reads: &[(&FileMap, u64, u64)], pid: u32, think_us: u64, out: &mut Vec<Request>) {
        let mut clock = 0;
        for &(f, off, len) in reads {
            self.read(f, off, len, pid, clock, out);
            clock += think_us * 1000;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(reqs: &[Request]) -> usize {
        // Number of device-contiguous runs in the scanner's requests.
        let s: Vec<&Request> = reqs.iter().filter(|r| r.pid == 1).collect();
        1 + s.windows(2).filter(|w| w[0].offset + w[0].length != w[1].offset).count()
    }

    #[test]
    fn fresh_files_are_contiguous_aged_ones_fragmented() {
        let cfg = MixedFilesConfig { passes: 1, ..Default::default() };
        let fresh = cfg.requests().unwrap();
        assert_eq!(fresh, cfg.requests().unwrap(), "deterministic");
        assert_eq!(runs(&fresh), 1, "data files laid end to end");
        let aged = MixedFilesConfig { aged: true, ..cfg.clone() }.requests().unwrap();
        let n = runs(&aged);
        let expected = (4 * 16_384) as f64 / cfg.fragment_blocks;
        assert!(n as f64 > expected * 0.7 && (n as f64) < expected * 1.3, "{n} runs");
        // Same blocks of each file are read, whatever the layout.
        let blocks = |r: &[Request], pid| r.iter().filter(|q| q.pid == pid).map(|q| q.length).sum::<u64>();
        assert_eq!(blocks(&fresh, 1), blocks(&aged, 1));
        assert_eq!(blocks(&fresh, 3), blocks(&aged, 3));
        // File offsets are continuous within each scanned file.
        for r in aged.iter().filter(|r| r.pid == 1) {
            assert!(r.file.unwrap().offset + r.length <= 16_384 * 4096);
        }
    }

    #[test]
    fn think_time_is_stamped_per_process() {
        let cfg = MixedFilesConfig { passes: 1, index_reads: 10, small_reads: 3, scan_think_us: 0, index_think_us: 500, small_think_us: 2000, ..Default::default() };
        let reqs = cfg.requests().unwrap();
        let times = |pid| reqs.iter().filter(|r| r.pid == pid).map(|r| r.time_ns).collect::<Vec<_>>();
        assert!(times(1).iter().all(|&t| t == 0));
        assert_eq!(times(2), (0..10).map(|i| i * 500_000).collect::<Vec<_>>());
        let small = times(3);
        assert!(small.windows(2).all(|w| w[1] == w[0] + 2_000_000), "{small:?}");
    }

    #[test]
    fn components_can_be_removed() {
        let seq = MixedFilesConfig { index_reads: 0, small_reads: 0, ..Default::default() }.requests().unwrap();
        assert!(seq.iter().all(|r| r.pid == 1));
        let rnd = MixedFilesConfig { data_files: 0, ..Default::default() }.requests().unwrap();
        assert!(rnd.iter().all(|r| r.pid != 1));
        assert!(MixedFilesConfig { hot_share: 2.0, ..Default::default() }.requests().is_err());
    }

    fn small() -> MixedFilesConfig {
        MixedFilesConfig {
            data_files: 2,
            data_file_blocks: 1024,
            passes: 2,
            index_blocks: 2048,
            index_reads: 600,
            small_files: 50,
            small_reads: 60,
            index_think_us: 200,
            small_think_us: 500,
            ..Default::default()
        }
    }

    #[test]
    fn trace_is_in_time_order_with_every_process_at_its_head() {
        for blast in [false, true] {
            let reqs = MixedFilesConfig { blast, ..small() }.requests().unwrap();
            assert!(reqs.windows(2).all(|w| w[0].time_ns <= w[1].time_ns), "time order");
            let pids: std::collections::BTreeSet<u32> = reqs.iter().map(|r| r.pid).collect();
            let head: std::collections::BTreeSet<u32> = reqs[..pids.len()].iter().map(|r| r.pid).collect();
            assert_eq!(head, pids, "blast={blast}: each process's first request at the head");
            for &p in &pids {
                assert_eq!(reqs.iter().find(|r| r.pid == p).unwrap().time_ns, 0);
            }
        }
    }

    #[test]
    fn blast_form_is_one_process_alternating_the_same_reads() {
        let three = small().requests().unwrap();
        let blast = MixedFilesConfig { blast: true, ..small() }.requests().unwrap();
        let of = |r: &[Request], pids: &[u32]| {
            let mut v: Vec<(u64, u64)> = r.iter().filter(|q| pids.contains(&q.pid)).map(|q| (q.offset, q.length)).collect();
            v.sort();
            v
        };
        assert_eq!(of(&three, &[1, 2]), of(&blast, &[1]), "the same scan and index reads");
        assert_eq!(of(&three, &[3]), of(&blast, &[3]), "the small-file reader is unchanged");
        // pid 1 alternates: 512 scan reads (2 passes x 2 files x 1024 / 8) and 600 index reads,
        // so every scan read is followed by 1 or 2 index reads.
        let p1: Vec<bool> = blast.iter().filter(|r| r.pid == 1).map(|r| r.length == 4096 && r.file.unwrap().id == 10_000).collect();
        let gaps: Vec<usize> = p1.split(|&is_index| !is_index).skip(1).map(|g| g.len()).collect();
        assert_eq!(gaps.len(), 512);
        assert!(gaps.iter().all(|&g| g == 1 || g == 2), "{gaps:?}");
        // Its clock advances by the index think time after each index read.
        let t: Vec<u64> = blast.iter().filter(|r| r.pid == 1).map(|r| r.time_ns).collect();
        assert_eq!(*t.last().unwrap(), 599 * 200_000);
    }

    #[test]
    fn three_processes_overlap_in_the_timed_replay() {
        use crate::engine::timed::{StackConfig, TimedRun};
        let reqs = small().requests().unwrap();
        let stack = StackConfig { cache: "1024".into(), prefetch: "linux".into(), device: "hdd:wd7200".into(), think: "trace".into(), ..Default::default() };
        let report = TimedRun::new(&stack).unwrap().run(&mut crate::trace::VecReader::new(reqs)).unwrap();
        let procs = &report.processes;
        assert_eq!(procs.len(), 3);
        // In closed-loop replay each process issues its first request at its trace time: 0 for
        // all three processes here.
        for p in procs {
            assert_eq!(p.start_ns, 0, "pid {} starts at {} ns", p.pid, p.start_ns);
        }
        // Each runs until after the others started, and the shortest lasts a good part of the run.
        let shortest = procs.iter().map(|p| p.end_ns).min().unwrap();
        let longest = procs.iter().map(|p| p.end_ns).max().unwrap();
        assert!(shortest * 4 > longest, "{:?}", procs.iter().map(|p| (p.pid, p.end_ns)).collect::<Vec<_>>());
    }
}
