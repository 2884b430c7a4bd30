//! LKR: `find -type f -exec cat {} > /dev/null \;` over a private copy of a Linux source tree per
//! process (KDSim/REDCAP paper, l.191-193).
//!
//! The tree. The paper used Linux 2.6.17 and gives no size beyond "uses only 344 MB of memory"
//! (l.302). Here a seeded random tree stands in for it: `dirs` directories in a random recursive
//! tree (each new directory under a uniformly chosen earlier one), `files` files in uniformly
//! chosen directories, sizes log-normal with median `median_size` and shape `sigma`. The defaults
//! (19,000 files, 1,200 directories, median 6 KiB, sigma 1.25: mean ≈ 13 KiB, ≈ 250 MB) are
//! assumptions of the order of a 2.6.17 tree, not measured from one.
//!
//! The layout is ext3's block-group layout ("data blocks and i-nodes of all the regular files in a
//! directory are put together in the same group", l.143): groups of 32,768 blocks, each starting
//! with its block and inode bitmaps and its inode table (`inodes_per_group` inodes of 128 bytes),
//! then data. Each copy is created by a recursive copy in the order `find` later visits it: a
//! directory gets the next inode of the current group and its directory blocks (24 bytes per
//! entry), then its files get their inodes and contiguous data, then its subdirectories follow. A
//! copy starts in a fresh group and moves to the next group when the current one runs out of
//! inodes or data blocks; copies follow one another.
//!
//! The reads, per copy: `find` (the copy's pid) reads, for each directory, its inode-table block
//! and its directory blocks (raw metadata reads); for each file it forks a `cat` and waits for it
//! (`-exec ... \;`), and the `cat` (a new pid, from [`super::streams::CHILD_PID_BASE`] on) reads the inode-table
//! block of the file's inode as it opens the file, then the file in `read`-byte reads, and exits.
//! The trace carries the processes' `fork`, `wait` and `exit` events (see `docs/formats.md`), which
//! is what the KDSim virtual disk's rule R4 needs (paper l.106) and what makes the timed replay
//! start each `cat` when `find` gets to it and hold `find` until it exits. With `cat=inline` one
//! pid does all the reads and there are no events: the paper's single-process variant, `cat`
//! integrated into `find` (l.344).

use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, LogNormal};
use rand_pcg::Pcg64Mcg;

use super::streams::{metadata_read, FileMap, Merged, Placement, ProcStream, Step, Stream, BLOCK};
use super::{GenParams, GeneratorInfo};
use crate::error::ConfigError;
use crate::trace::ProcessEventKind;

pub const INFO: GeneratorInfo = GeneratorInfo {
    name: "lkr",
    summary: "LKR: find | cat over a private source tree per process, ext3-like block groups with inode and directory blocks",
    params: &[
        ("files", "regular files per tree (default 19000)"),
        ("dirs", "directories per tree, the root included (default 1200)"),
        ("median_size", "median file size (default 6KiB)"),
        ("sigma", "log-normal shape of file sizes (default 1.25)"),
        ("read", "bytes per cat read (default 4KiB)"),
        ("inodes_per_group", "inodes per block group of 32768 blocks (default 16384)"),
        ("cat", "child: find forks a cat per file and waits for it (fork/wait/exit events); inline: one process (default child)"),
    ],
    common: &["processes", "seed"],
    build: |c, p| {
        let l = Lkr::from_params(p, c.seed)?;
        l.check_size(c.processes, "lkr.files")?;
        Ok(Box::new(Merged::with_events("lkr", l.process_streams(c.processes, &mut Placement::default()))))
    },
};

/// The `cat` parameter (`lkr`'s `cat`, `air`/`aip`'s `lkr_cat`): `child` (the default) or
/// `inline`, as [`Lkr::child_cat`].
pub fn child_cat(value: Option<String>, key: &str) -> Result<bool, ConfigError> {
    match value.as_deref().map(str::trim) {
        None | Some("child") => Ok(true),
        Some("inline") => Ok(false),
        Some(other) => Err(ConfigError::new(key, format!("`{other}` is not child or inline"))),
    }
}

/// Blocks per ext3 block group (4 KiB blocks).
pub const GROUP_BLOCKS: u64 = 32_768;
const INODE_BYTES: u64 = 128;
const DIRENT_BYTES: u64 = 24;
/// Files and directories of one tree, at most (documented range of `files` and `dirs`).
pub const MAX_TREE: u64 = 1 << 22;
const MAX_FILE: f64 = (4 << 20) as f64;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lkr {
    pub files: u64,
    pub dirs: u64,
    pub median_size: u64,
    pub sigma: f64,
    pub read: u64,
    pub inodes_per_group: u64,
    pub seed: u64,
    /// Each file read by a child process of `find` (`false`: by `find` itself).
    pub child_cat: bool,
}

impl Default for Lkr {
    fn default() -> Self {
        Lkr { files: 19_000, dirs: 1_200, median_size: 6 << 10, sigma: 1.25, read: BLOCK, inodes_per_group: 16_384, seed: 0, child_cat: true }
    }
}

/// The tree, the same for every copy.
struct Tree {
    /// Per directory: subdirectories and files (indices), in creation order.
    subdirs: Vec<Vec<u32>>,
    files: Vec<Vec<u32>>,
    sizes: Vec<u64>,
}

/// Where one copy's block groups are allocated from.
struct Groups {
    first: u64,
    itable_blocks: u64,
    inodes_per_group: u64,
    group: u64,
    next_inode: u64,
    next_data: u64,
}

impl Groups {
    fn new(first_block: u64, inodes_per_group: u64) -> Groups {
        let itable_blocks = (inodes_per_group * INODE_BYTES).div_ceil(BLOCK);
        let first = first_block.div_ceil(GROUP_BLOCKS);
        Groups { first, itable_blocks, inodes_per_group, group: 0, next_inode: 0, next_data: 2 + itable_blocks }
    }

    fn start(&self) -> u64 {
        (self.first + self.group) * GROUP_BLOCKS
    }

    fn next_group(&mut self) {
        self.group += 1;
        self.next_inode = 0;
        self.next_data = 2 + self.itable_blocks;
    }

    /// An inode and `blocks` contiguous data blocks in the current group (moving on when it is
    /// full): the inode-table block and the first data block.
    fn alloc(&mut self, blocks: u64) -> (u64, u64) {
        if self.next_inode >= self.inodes_per_group || self.next_data + blocks > GROUP_BLOCKS {
            self.next_group();
        }
        let inode_block = self.start() + 2 + self.next_inode * INODE_BYTES / BLOCK;
        self.next_inode += 1;
        let data = self.start() + self.next_data;
        self.next_data += blocks;
        (inode_block, data)
    }

    /// One past the last group used, in blocks.
    fn end(&self) -> u64 {
        (self.first + self.group + 1) * GROUP_BLOCKS
    }
}

impl Lkr {
    pub fn from_params(p: &mut GenParams, seed: u64) -> Result<Lkr, ConfigError> {
        let d = Lkr::default();
        let l = Lkr {
            files: p.u64_in("files", d.files, 0, MAX_TREE)?,
            dirs: p.u64_in("dirs", d.dirs, 1, MAX_TREE)?,
            median_size: p.bytes_in("median_size", d.median_size, 1, MAX_FILE as u64)?,
            sigma: p.f64_in("sigma", d.sigma, 0.0, 5.0)?,
            read: p.bytes_in("read", d.read, super::MIN_READ, super::MAX_READ)?,
            inodes_per_group: p.u64_in("inodes_per_group", d.inodes_per_group, 32, 1 << 18)?,
            seed,
            child_cat: child_cat(p.text("cat"), "lkr.cat")?,
        };
        if l.dirs == 0 || l.dirs > u32::MAX as u64 || l.files > u32::MAX as u64 {
            return Err(ConfigError::new("lkr.dirs", "at least one directory (the root), and fewer than 2^32 directories and files"));
        }
        if l.median_size == 0 || l.read == 0 || !(l.sigma >= 0.0 && l.sigma <= 5.0) {
            return Err(ConfigError::new("lkr.sigma", "median_size and read must be positive and sigma in [0, 5]"));
        }
        if l.inodes_per_group < 32 || (l.inodes_per_group * INODE_BYTES).div_ceil(BLOCK) + 2 + (MAX_FILE as u64 / BLOCK) > GROUP_BLOCKS {
            return Err(ConfigError::new("lkr.inodes_per_group", format!("{} inodes per group: at least 32, and the inode table must leave room for data", l.inodes_per_group)));
        }
        Ok(l)
    }

    fn tree(&self) -> Tree {
        let mut rng = Pcg64Mcg::seed_from_u64(self.seed ^ 0x4C4B_52);
        let n = self.dirs as usize;
        let mut subdirs = vec![Vec::new(); n];
        for d in 1..n {
            let parent = rng.gen_range(0..d);
            subdirs[parent].push(d as u32);
        }
        let mut files = vec![Vec::new(); n];
        let size = LogNormal::new((self.median_size as f64).ln(), self.sigma).expect("valid log-normal");
        let mut sizes = Vec::with_capacity(self.files as usize);
        for f in 0..self.files as u32 {
            files[rng.gen_range(0..n)].push(f);
            sizes.push((size.sample(&mut rng).clamp(1.0, MAX_FILE)) as u64);
        }
        Tree { subdirs, files, sizes }
    }

    /// One copy's reads, in `find` order, its blocks allocated from `groups`; with
    /// `children`, each file is read by a new child process of `pid` (the next pid of
    /// `children`), forked and waited for.
    fn copy(&self, tree: &Tree, groups: &mut Groups, file_id: u64, pid: u32, mut children: Option<&mut u32>) -> Vec<Step> {
        let mut out = Vec::new();
        let mut stack = vec![0u32];
        let mut reqs = Vec::new();
        while let Some(d) = stack.pop() {
            let d = d as usize;
            let entries = (tree.subdirs[d].len() + tree.files[d].len() + 2) as u64;
            let dir_blocks = (entries * DIRENT_BYTES).div_ceil(BLOCK);
            let (inode, data) = groups.alloc(dir_blocks);
            out.push(Step::Io(metadata_read(inode, pid)));
            out.extend((0..dir_blocks).map(|b| Step::Io(metadata_read(data + b, pid))));
            for &f in &tree.files[d] {
                let cat = match children.as_deref_mut() {
                    Some(next) => {
                        let c = *next;
                        *next += 1;
                        out.push(Step::event(ProcessEventKind::Fork, c, pid));
                        out.push(Step::event(ProcessEventKind::Wait, c, pid));
                        c
                    }
                    None => pid,
                };
                let bytes = tree.sizes[f as usize];
                let (inode, data) = groups.alloc(bytes.div_ceil(BLOCK));
                reqs.clear();
                reqs.push(metadata_read(inode, cat));
                let map = FileMap::contiguous(file_id + f as u64, bytes, data);
                let mut off = 0;
                while off < bytes {
                    map.read(off, self.read, cat, &mut reqs);
                    off += self.read;
                }
                out.extend(reqs.iter().map(|&r| Step::Io(r)));
                if cat != pid {
                    out.push(Step::event(ProcessEventKind::Exit, cat, pid));
                }
            }
            // Depth first, subdirectories in creation order.
            stack.extend(tree.subdirs[d].iter().rev());
        }
        out
    }

    /// Refuses trees whose requests, which are built in memory, would be absurdly many: the
    /// files and directories of every process's copy times the reads of a median file must
    /// stay within [`super::MAX_HELD_REQUESTS`].
    pub fn check_size(&self, processes: u32, key: &str) -> Result<(), ConfigError> {
        let estimate = (self.files + self.dirs).saturating_mul(processes as u64).saturating_mul(self.median_size.div_ceil(self.read));
        if estimate > super::MAX_HELD_REQUESTS {
            return Err(ConfigError::new(key, format!("{processes} copies of {} files and {} directories make about {estimate} requests, more than {}", self.files, self.dirs, super::MAX_HELD_REQUESTS)));
        }
        Ok(())
    }

    /// One `find | cat` per process over its own copy, copies placed from `at` (which moves past
    /// them), the `cat`s child processes with their events when [`Lkr::child_cat`] is set (their
    /// pids from `at.child_pid` on, which moves past them).
    pub fn process_streams(&self, processes: u32, at: &mut Placement) -> Vec<ProcStream> {
        let tree = self.tree();
        let mut streams = Vec::new();
        for p in 0..processes {
            let mut groups = Groups::new(at.block, self.inodes_per_group);
            let children = self.child_cat.then_some(&mut at.child_pid);
            let steps = self.copy(&tree, &mut groups, at.file_id, at.pid + p, children);
            at.block = groups.end();
            at.file_id += self.files;
            streams.push(Box::new(steps.into_iter()) as ProcStream);
        }
        streams
    }

    /// [`Lkr::process_streams`] with `cat` integrated into `find` (one pid per copy, no
    /// events), whatever [`Lkr::child_cat`] says.
    pub fn streams(&self, processes: u32, at: &mut Placement) -> Vec<Stream> {
        let inline = Lkr { child_cat: false, ..*self };
        inline
            .process_streams(processes, at)
            .into_iter()
            .map(|s| Box::new(s.filter_map(|s| match s {
                Step::Io(r) => Some(r),
                Step::Event(_) => None,
            })) as Stream)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::Request;

    #[test]
    fn tree_layout_and_reads() {
        let l = Lkr { files: 3000, dirs: 200, seed: 4, ..Default::default() };
        let mut at = Placement::default();
        let s = l.streams(2, &mut at);
        let v: Vec<Vec<Request>> = s.into_iter().map(|s| s.collect()).collect();
        assert_eq!(v[0].len(), v[1].len(), "copies of one tree");
        // Every file read whole once, after its inode block; metadata inside inode tables or data.
        for (p, reqs) in v.iter().enumerate() {
            let files: std::collections::HashSet<u64> = reqs.iter().filter_map(|r| r.file.map(|f| f.id)).collect();
            assert_eq!(files.len(), 3000);
            let meta = reqs.iter().filter(|r| r.file.is_none()).count();
            assert!(meta >= 3000 + 200 * 2, "{meta}");
            assert!(reqs.iter().all(|r| r.pid == 1 + p as u32));
            for (i, r) in reqs.iter().enumerate() {
                if let Some(f) = r.file {
                    if f.offset == 0 {
                        assert!(reqs[i - 1].file.is_none(), "a file's inode is read before its data");
                    }
                }
            }
        }
        // The second copy lies beyond the first, in whole groups.
        let max0 = v[0].iter().map(|r| r.offset / BLOCK).max().unwrap();
        let min1 = v[1].iter().map(|r| r.offset / BLOCK).min().unwrap();
        assert!(max0 < min1 && min1 % GROUP_BLOCKS == 2, "{max0} {min1}");
        assert_eq!(at.file_id, 1 + 6000);
        // Mean file size near the log-normal mean (≈ 13.4 KiB).
        let bytes: u64 = v[0].iter().filter(|r| r.file.is_some()).map(|r| r.length).sum();
        let mean = bytes as f64 / 3000.0;
        assert!((10_000.0..18_000.0).contains(&mean), "{mean}");
        // Deterministic; another seed, another tree.
        let again: Vec<Request> = l.streams(1, &mut Placement::default()).pop().unwrap().collect();
        assert_eq!(again, v[0]);
        let other: Vec<Request> = Lkr { seed: 5, ..l }.streams(1, &mut Placement::default()).pop().unwrap().collect();
        assert_ne!(other, v[0]);
    }

    #[test]
    fn full_groups_spill_to_the_next() {
        let l = Lkr { files: 500, dirs: 10, inodes_per_group: 64, ..Default::default() };
        let mut at = Placement::default();
        let v: Vec<Request> = l.streams(1, &mut at).pop().unwrap().collect();
        let groups: std::collections::BTreeSet<u64> = v.iter().map(|r| r.offset / BLOCK / GROUP_BLOCKS).collect();
        assert!(groups.len() >= 510 / 64, "{groups:?}");
        assert!(Lkr::from_params(&mut GenParams::parse("lkr", "dirs=0").unwrap(), 0).is_err());
    }
}
