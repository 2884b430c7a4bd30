//! Workloads after the applications of the ACFS paper (Cao, Felten, Karlin, Li, ACM TOCS,
//! papers/002, §5.1, l.779-928; `specs/acfs.md` §1.7), each with the hints its application
//! gives (a [`Hints`] of one `[[process]]` table, or none for the oblivious Andrew benchmark).
//!
//! All reads are of 8 KiB blocks (the paper's block size, l.209), one block per request, by one
//! process (`pid`, default 1) on one device (`device`, default 0); requests arrive at the common
//! inter-arrival time (the CPU time between file accesses). Files are contiguous on the device
//! (`fs=contig`; cs2, cs3 and gli also take `fs=ffs`, a Berkeley fast file system's layout with
//! the defaults of the paper's time, [`ffs_allocate`]), each application in its own region (so that workloads can be merged into pairs with
//! different pids) with its own range of file ids. Seeded and deterministic.
//!
//! - `acfs-cs1` (cscope symbol queries): `queries` (8) sequential reads of one database file of
//!   `db_mb` MB (9; the paper does not give the size; its 12 MB discussion, l.1106-1109, puts it
//!   between a process's share of the cache and 12 MB). Hints: MRU; the file list is the
//!   database once per query.
//! - `acfs-cs2`, `acfs-cs3` (cscope text searches): `patterns` (4) passes over every source file,
//!   in one fixed order (`cscope.files`), 18 MB (cs2) or 10 MB (cs3) of files of 1 to 6 blocks.
//!   Hints: MRU; the file list is the files in pass order (cut at 5,000 entries). The list
//!   order is unrelated to the layout, or, with `dir_files` N > 0, that of a directory walk on
//!   a fast file system: N files at a time lie one after another in list order, each such
//!   directory somewhere in the region (`directory_layout`).
//! - `acfs-din` (dinero): `passes` (9, J7) sequential reads of an 8 MB trace file. Hints: MRU;
//!   the file list is the trace once per pass.
//! - `acfs-gli` (glimpse): `queries` (5), each reading 2 MB of index files whole, then the data
//!   files the query hits (a seeded `hit_share`, 30 %, of 40 MB of 32 KiB files, in file order).
//!   Hints: index files at priority 1, data at 0, both MRU; the file list is each query's files.
//! - `acfs-psel1`, `acfs-psel2` (postgres selections through a B+-tree on unique1): 200,000
//!   tuples of 208 bytes (39 per page) in a heap file whose tuple order is random in unique1; the
//!   query reads the index root, the leaf pages covering the range, and the heap page of each
//!   tuple in unique1 order: unique1 1..2,000 (psel1, 1 %) or 186,660..190,660 (psel2, 2 %),
//!   `queries` (1) times. Hints: LRU; the block list is the heap pages in access order (runs of
//!   one page merged); a heap page read more than once gets a temporary priority of 1 after each
//!   read that has a later one (l.1090-1095).
//! - `acfs-andrew` (the Andrew benchmark, oblivious): `files` (70) source files of 1 to 6
//!   blocks in 5 directories: MakeDir writes the directory blocks, Copy reads each file and
//!   writes its copy, ScanDir reads every i-node block, ReadAll reads every copy, Make reads the
//!   copies and writes an object file for each. No hints.

use std::collections::HashMap;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

use super::{Arrival, Common, GenParams, GeneratorInfo};
use crate::cache::LevelPolicy;
use crate::error::ConfigError;
use crate::hints::{Hints, ProcessHints, TempHint, MAX_LIST_ENTRIES};
use crate::trace::{FileRef, Op, Request, TraceReader, VecReader};

/// Bytes per block (the paper's 8 KB).
pub const BLOCK: u64 = 8192;

/// The generators, by name, with their parameters.
pub const NAMES: &[&str] = &["acfs-cs1", "acfs-cs2", "acfs-cs3", "acfs-din", "acfs-gli", "acfs-psel1", "acfs-psel2", "acfs-andrew"];

const COMMON_PARAMS: [(&str, &str); 2] = [("pid", "issuing process (default 1)"), ("device", "device id (default 0)")];

macro_rules! info {
    ($name:literal, $summary:literal, [$($p:literal : $d:literal),*]) => {
        GeneratorInfo {
            name: $name,
            summary: $summary,
            params: &[COMMON_PARAMS[0], COMMON_PARAMS[1] $(, ($p, $d))*],
            common: &["seed", "arrival", "interarrival"],
            build: |c, p| Ok(Box::new(VecReader::new(generate($name, c, p)?.0)) as Box<dyn TraceReader>),
        }
    };
}

pub const CS1: GeneratorInfo = info!("acfs-cs1", "ACFS cscope symbol queries: one database file read sequentially per query (MRU hints)", ["queries": "queries (8)", "db_mb": "database size in MB (9)"]);
pub const CS2: GeneratorInfo = info!("acfs-cs2", "ACFS cscope text searches over 18 MB of source files in list order (MRU, file-list hints)", ["patterns": "passes (4)", "mb": "source size in MB (18)", "dir_files": "files per directory laid out in list order (0: list order unrelated to the layout)", "fs": "file system layout: contig (default) or ffs (4.3BSD fast file system defaults, a file's blocks every other block; the reproductions' layout)"]);
pub const CS3: GeneratorInfo = info!("acfs-cs3", "ACFS cscope text searches over 10 MB of source files (MRU, file-list hints)", ["patterns": "passes (4)", "mb": "source size in MB (10)", "dir_files": "files per directory laid out in list order (0: list order unrelated to the layout)", "fs": "file system layout: contig (default) or ffs (4.3BSD fast file system defaults, a file's blocks every other block; the reproductions' layout)"]);
pub const DIN: GeneratorInfo = info!("acfs-din", "ACFS dinero: an 8 MB trace file read sequentially per simulation (MRU, file-list hints)", ["passes": "passes (9)", "mb": "trace size in MB (8)"]);
pub const GLI: GeneratorInfo = info!("acfs-gli", "ACFS glimpse: index files then hit data files per query (index priority 1, MRU)", ["queries": "queries (5)", "hit_share": "share of data files a query reads (0.3)", "fs": "file system layout: contig (default) or ffs (4.3BSD fast file system defaults, a file's blocks every other block; the reproductions' layout)"]);
pub const PSEL1: GeneratorInfo = info!("acfs-psel1", "ACFS postgres 1% selection through a B+-tree (block-list hints)", ["queries": "times the query runs (1)"]);
pub const PSEL2: GeneratorInfo = info!("acfs-psel2", "ACFS postgres 2% selection through a B+-tree (block-list hints)", ["queries": "times the query runs (1)"]);
pub const ANDREW: GeneratorInfo = info!("acfs-andrew", "Andrew benchmark: directories, copies, stats, reads, compiles with writes (oblivious)", ["files": "source files (70)"]);

/// Accumulates the requests of one process.
struct Out {
    reqs: Vec<Request>,
    pid: u32,
    device: u32,
    arrival: Arrival,
    rng: Pcg64Mcg,
    clock: f64,
    /// Where a file's blocks lie when the file system does not lay them one after another
    /// (`fs=ffs`): file id to the device block of each file block.
    placed: HashMap<u64, Vec<u64>>,
}

/// A file on the device: id, first block, blocks.
#[derive(Clone, Copy)]
struct File {
    id: u64,
    first: u64,
    blocks: u64,
}

impl Out {
    fn push(&mut self, f: File, b: u64, op: Op) {
        let k = self.reqs.len() as u64;
        let time_ns = match self.arrival {
            Arrival::Fixed { interarrival_ns } => k * interarrival_ns,
            Arrival::Poisson { mean_ns } => {
                if k > 0 {
                    let u: f64 = self.rng.gen();
                    self.clock += -(1.0 - u).ln() * mean_ns;
                }
                self.clock as u64
            }
        };
        self.reqs.push(Request {
            time_ns,
            offset: self.placed.get(&f.id).map_or(f.first + b, |at| at[b as usize]) * BLOCK,
            length: BLOCK,
            pid: self.pid,
            device: self.device,
            op,
            file: Some(FileRef { id: f.id, offset: b * BLOCK, size: Some(f.blocks * BLOCK) }),
        });
    }

    fn read_whole(&mut self, f: File) {
        for b in 0..f.blocks {
            self.push(f, b, Op::Read);
        }
    }
}

/// Lays files out contiguously from `region`'s first block, ids from `first_id`.
fn lay_out(region: u64, first_id: u64, sizes: &[u64]) -> Vec<File> {
    let mut at = region << 20;
    sizes
        .iter()
        .enumerate()
        .map(|(i, &blocks)| {
            let f = File { id: first_id + i as u64, first: at, blocks };
            at += blocks;
            f
        })
        .collect()
}

fn mb_blocks(mb: f64) -> u64 {
    ((mb * 1e6) / BLOCK as f64).round().max(1.0) as u64
}

/// File sizes of 1 to 6 blocks adding up to about `total` blocks.
fn small_files(rng: &mut Pcg64Mcg, total: u64) -> Vec<u64> {
    let mut sizes = Vec::new();
    let mut sum = 0;
    while sum < total {
        let s = rng.gen_range(1..=6).min(total - sum);
        sizes.push(s);
        sum += s;
    }
    sizes
}

/// The rotational gap, in blocks, that a Berkeley fast file system leaves between two blocks of
/// a file: with `maxcontig` 1 every block after a file's first is placed `rotdelay` after the
/// previous one, rounded up to a whole block (`blkpref` in 4.3BSD's `ufs_alloc.c`; newfs's
/// defaults `ROTDELAY` 4 ms and `MAXCONTIG` 1 in 4.3BSD-Reno's `newfs.c`, whose comment says
/// why: "UNIX drivers are not capable of scheduling multi-block transfers"). On the RZ56
/// (3,600 rpm, 54 sectors of 512 bytes per track; 61 in `hdd:rz56`, which takes the paper's
/// 1.875 MB/s as its media rate), 4 ms is 4 x 60 x 54 / (2 x 1000) = 6.5 fragments of 1 KiB
/// (7.3 with 61 sectors), rounded up to one 8 KiB block.
const FFS_GAP_BLOCKS: u64 = 1;

/// Places `files` (in the order they were created) as a fast file system with the defaults of
/// the paper's time allocates them in one cylinder group starting at `region`'s first block:
/// a file's first block at the first free block from the group's start (`blkpref` asks for
/// the group's first data block, and the allocator takes the first free one after it), each
/// later block at the first free block at least [`FFS_GAP_BLOCKS`] after the previous one. So
/// the blocks of a file lie every other block, and files created one after another fill each
/// other's gaps. A simplification: the allocator's search of the same cylinder for a block
/// at a good rotational position is the next free block here. Records the placement in
/// `placed`. `groups` are the directories: each one's files, created in their order from the
/// group's first block on (a directory's files go to its cylinder group); all in `region`.
fn ffs_allocate(placed: &mut HashMap<u64, Vec<u64>>, region: u64, groups: &[Vec<File>]) {
    let start = region << 20;
    let mut used: Vec<bool> = Vec::new();
    let mut take = |from: u64| -> u64 {
        let mut i = from as usize;
        loop {
            if i >= used.len() {
                used.resize(i + 64, false);
            }
            if !used[i] {
                used[i] = true;
                return i as u64;
            }
            i += 1;
        }
    };
    for group in groups {
        let group_start = group.iter().map(|f| f.first).min().unwrap_or(start) - start;
        for f in group {
            let mut at = Vec::with_capacity(f.blocks as usize);
            let mut pref = group_start;
            for _ in 0..f.blocks {
                let b = take(pref);
                at.push(start + b);
                pref = b + 1 + FFS_GAP_BLOCKS;
            }
            placed.insert(f.id, at);
        }
    }
}

/// The file system a generator lays its files out with (`fs`): `ffs` ([`ffs_allocate`]) or
/// `contig` (each file's blocks one after another, files one after another).
fn ffs_param(p: &mut GenParams, default: &str) -> Result<bool, ConfigError> {
    match p.text("fs").as_deref().unwrap_or(default) {
        "ffs" => Ok(true),
        "contig" => Ok(false),
        other => Err(p.error("fs", format!("`{other}` is not a file system layout (ffs, contig)"))),
    }
}

/// Source files of `sizes` blocks in directories of `per_dir` files, as a directory walk
/// (`find`, which makes `cscope.files`) lists them on a Berkeley fast file system: the files of
/// one directory, in the walk's order, lie one after another in its cylinder group, since the
/// file system allocates a directory's files there in the order they were created and the walk
/// reads its entries in that order (McKusick, Joy, Leffler, Fabry, "A Fast File System for
/// UNIX", ACM TOCS 2(3), 1984, §4); the directories lie in the region in an order unrelated to
/// the walk's. Returns the files in walk order, ids `first_id`.. in that order.
fn directory_layout(rng: &mut Pcg64Mcg, region: u64, first_id: u64, sizes: &[u64], per_dir: usize) -> Vec<File> {
    let dirs: Vec<&[u64]> = sizes.chunks(per_dir).collect();
    let mut place: Vec<usize> = (0..dirs.len()).collect();
    place.shuffle(rng);
    // Each directory's first block, directories packed in `place` order.
    let mut first = vec![0; dirs.len()];
    let mut at = region << 20;
    for &d in &place {
        first[d] = at;
        at += dirs[d].iter().sum::<u64>();
    }
    let mut files = Vec::with_capacity(sizes.len());
    for (d, dir) in dirs.iter().enumerate() {
        let mut at = first[d];
        for &blocks in *dir {
            files.push(File { id: first_id + files.len() as u64, first: at, blocks });
            at += blocks;
        }
    }
    files
}

fn process(pid: u32, policy: LevelPolicy) -> ProcessHints {
    ProcessHints {
        pid,
        policy,
        files: Default::default(),
        levels: Default::default(),
        temp: Vec::new(),
        file_list: Vec::new(),
        block_list: Vec::new(),
    }
}

/// Ranges of the parameters (documented in `docs/reliability.md`): the workload is built in
/// memory, and at the largest counts and sizes it stays within [`super::MAX_HELD_REQUESTS`].
const MAX_COUNT: u64 = 100;
const MIN_MB: f64 = 0.01;
const MAX_MB: f64 = 1024.0;
const MAX_ANDREW_FILES: u64 = 10_000;
const MAX_DIR_FILES: u64 = 100_000;
const MAX_DEVICE: u64 = 65_535;

fn positive(p: &mut GenParams, key: &str, default: u64) -> Result<u64, ConfigError> {
    p.u64_in(key, default, 1, MAX_COUNT)
}

fn megabytes(p: &mut GenParams, key: &str, default: f64) -> Result<f64, ConfigError> {
    p.f64_in(key, default, MIN_MB, MAX_MB)
}

/// The requests of workload `name` and its hints (no process table for an oblivious one).
pub fn generate(name: &str, common: &Common, p: &mut GenParams) -> Result<(Vec<Request>, Hints), ConfigError> {
    let pid = p.u64_in("pid", 1, 0, u32::MAX as u64)? as u32;
    let device = p.u64_in("device", 0, 0, MAX_DEVICE)? as u32;
    let mut rng = Pcg64Mcg::seed_from_u64(common.seed);
    let mut out = Out { reqs: Vec::new(), pid, device, arrival: common.arrival, rng: Pcg64Mcg::seed_from_u64(common.seed ^ 0x5eed), clock: 0.0, placed: HashMap::new() };
    let mut h = process(pid, LevelPolicy::Mru);
    let mut managed = true;
    match name {
        "acfs-cs1" => {
            let queries = positive(p, "queries", 8)?;
            let db = lay_out(1, 1000, &[mb_blocks(megabytes(p, "db_mb", 9.0)?)])[0];
            for _ in 0..queries {
                out.read_whole(db);
                h.file_list.push(db.id);
            }
        }
        "acfs-cs2" | "acfs-cs3" => {
            let patterns = positive(p, "patterns", 4)?;
            let mb = megabytes(p, "mb", if name == "acfs-cs2" { 18.0 } else { 10.0 })?;
            let dir_files = p.u64_in("dir_files", 0, 0, MAX_DIR_FILES)? as usize;
            let (region, base) = if name == "acfs-cs2" { (2, 2000) } else { (3, 20000) };
            let sizes = small_files(&mut rng, mb_blocks(mb));
            let ffs = ffs_param(p, "contig")?;
            let order = if dir_files == 0 {
                // cscope.files order: the directory walk's, unrelated to the layout.
                let mut order = lay_out(region, base, &sizes);
                order.shuffle(&mut rng);
                order
            } else {
                directory_layout(&mut rng, region, base, &sizes, dir_files)
            };
            if ffs {
                // The tree was written in the walk's order (unpacked from an archive the
                // walk made), each directory's files from its first block on.
                let dirs: Vec<Vec<File>> = if dir_files == 0 { vec![order.clone()] } else { order.chunks(dir_files).map(|c| c.to_vec()).collect() };
                ffs_allocate(&mut out.placed, region, &dirs);
            }
            for _ in 0..patterns {
                for &f in &order {
                    out.read_whole(f);
                    h.file_list.push(f.id);
                }
            }
        }
        "acfs-din" => {
            let passes = positive(p, "passes", 9)?;
            let trace = lay_out(4, 4000, &[mb_blocks(megabytes(p, "mb", 8.0)?)])[0];
            for _ in 0..passes {
                out.read_whole(trace);
                h.file_list.push(trace.id);
            }
        }
        "acfs-gli" => {
            let queries = positive(p, "queries", 5)?;
            let share = p.f64_in("hit_share", 0.3, 0.0, 1.0)?;
            if !(0.0..=1.0).contains(&share) {
                return Err(ConfigError::new("hit_share", format!("{share} is not in [0, 1]")));
            }
            let index = lay_out(5, 5000, &[mb_blocks(2.0) / 4; 4]);
            let data = lay_out(6, 6000, &vec![4; (mb_blocks(40.0) / 4) as usize]);
            if ffs_param(p, "contig")? {
                // Index and data files each written in file order.
                ffs_allocate(&mut out.placed, 5, &[index.clone()]);
                ffs_allocate(&mut out.placed, 6, &[data.clone()]);
            }
            for f in &index {
                h.files.insert(f.id, 1);
            }
            h.levels.insert(1, LevelPolicy::Mru);
            for _ in 0..queries {
                for &f in &index {
                    out.read_whole(f);
                    h.file_list.push(f.id);
                }
                for &f in &data {
                    if rng.gen_bool(share) {
                        out.read_whole(f);
                        h.file_list.push(f.id);
                    }
                }
            }
        }
        "acfs-psel1" | "acfs-psel2" => {
            let queries = positive(p, "queries", 1)?;
            const TUPLES: u64 = 200_000;
            const PER_PAGE: u64 = 39;
            const KEYS_PER_LEAF: u64 = 400;
            let (lo, hi) = if name == "acfs-psel1" { (1, 2000) } else { (186_660, 190_660) };
            let heap_pages = TUPLES.div_ceil(PER_PAGE);
            let leaves = TUPLES.div_ceil(KEYS_PER_LEAF);
            let files = lay_out(7, 7000, &[heap_pages, 1 + leaves]);
            let (heap, index) = (files[0], files[1]);
            // unique1 is a random permutation of 1..=TUPLES over the tuples in heap order.
            let mut slot: Vec<u64> = (0..TUPLES).collect();
            slot.shuffle(&mut rng);
            let pages: Vec<u64> = (lo..=hi).map(|u| slot[(u - 1) as usize] / PER_PAGE).collect();
            h.policy = LevelPolicy::Lru;
            let mut accesses = Vec::new();
            for _ in 0..queries {
                out.push(index, 0, Op::Read);
                for leaf in (lo - 1) / KEYS_PER_LEAF..=(hi - 1) / KEYS_PER_LEAF {
                    out.push(index, 1 + leaf, Op::Read);
                }
                for &page in &pages {
                    accesses.push((out.reqs.len() as u64, page));
                    out.push(heap, page, Op::Read);
                }
            }
            for (i, &(_, page)) in accesses.iter().enumerate() {
                if h.block_list.last().is_none_or(|c| c.1 != page) {
                    h.block_list.push((heap.id, page, page));
                }
                // A page read again later keeps a higher priority until then.
                if accesses[i + 1..].iter().any(|&(_, q)| q == page) {
                    h.temp.push(TempHint { at: accesses[i].0 + 1, file: heap.id, first: page, last: page, prio: 1 });
                }
            }
            h.block_list.truncate(MAX_LIST_ENTRIES);
        }
        "acfs-andrew" => {
            let n = p.u64_in("files", 70, 1, MAX_ANDREW_FILES)?;
            managed = false;
            let sizes = small_files(&mut rng, n * 3);
            let sources = lay_out(8, 8000, &sizes[..sizes.len().min(n as usize)]);
            let copies = lay_out(9, 9000, &sizes[..sources.len()]);
            let objects = lay_out(10, 10000, &vec![2; sources.len()]);
            let dirs = lay_out(11, 11000, &[1; 5]);
            let inodes = lay_out(12, 12000, &[sources.len().div_ceil(32) as u64 * 2])[0];
            for &d in &dirs {
                out.push(d, 0, Op::Write);
            }
            for (s, c) in sources.iter().zip(&copies) {
                for b in 0..s.blocks {
                    out.push(*s, b, Op::Read);
                    out.push(*c, b, Op::Write);
                }
            }
            for b in 0..inodes.blocks {
                out.push(inodes, b, Op::Read);
            }
            for &c in &copies {
                out.read_whole(c);
            }
            for (c, o) in copies.iter().zip(&objects) {
                out.read_whole(*c);
                for b in 0..o.blocks {
                    out.push(*o, b, Op::Write);
                }
            }
        }
        _ => return Err(ConfigError::unknown("GENERATOR", "generator", name, NAMES)),
    }
    h.file_list.truncate(MAX_LIST_ENTRIES);
    let processes = if managed { vec![h] } else { Vec::new() };
    Ok((out.reqs, Hints { source: name.to_string(), processes }))
}

impl Hints {
    /// The hints as a TOML hints file (the layout [`Hints::parse_toml`] reads).
    pub fn to_toml(&self) -> String {
        let mut s = String::new();
        if self.processes.is_empty() {
            s += "# No managing process: every process is oblivious.\n";
        }
        let policy = |p: LevelPolicy| match p {
            LevelPolicy::Lru => "lru",
            LevelPolicy::Mru => "mru",
        };
        for p in &self.processes {
            s += &format!("[[process]]\npid = {}\npolicy = \"{}\"\n", p.pid, policy(p.policy));
            if !p.files.is_empty() {
                let f: Vec<String> = p.files.iter().map(|(k, v)| format!("{k} = {v}")).collect();
                s += &format!("files = {{ {} }}\n", f.join(", "));
            }
            if !p.levels.is_empty() {
                let l: Vec<String> = p.levels.iter().map(|(k, v)| format!("{k} = \"{}\"", policy(*v))).collect();
                s += &format!("levels = {{ {} }}\n", l.join(", "));
            }
            if !p.temp.is_empty() {
                s += "temp = [\n";
                for t in &p.temp {
                    s += &format!("  {{ at = {}, file = {}, first = {}, last = {}, prio = {} }},\n", t.at, t.file, t.first, t.last, t.prio);
                }
                s += "]\n";
            }
            if !p.file_list.is_empty() {
                let f: Vec<String> = p.file_list.iter().map(u64::to_string).collect();
                s += &format!("file_list = [{}]\n", f.join(", "));
            }
            if !p.block_list.is_empty() {
                let b: Vec<String> = p.block_list.iter().map(|c| format!("[{}, {}, {}]", c.0, c.1, c.2)).collect();
                s += &format!("block_list = [{}]\n", b.join(", "));
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gen(name: &str, params: &str) -> (Vec<Request>, Hints) {
        generate(name, &Common::default(), &mut GenParams::parse(name, params).unwrap()).unwrap()
    }

    #[test]
    fn every_workload_is_deterministic_and_its_hints_round_trip_and_validate() {
        for &name in NAMES {
            let (reqs, hints) = gen(name, "");
            assert!(!reqs.is_empty(), "{name}");
            assert_eq!(gen(name, "").0, reqs, "{name}");
            let back = Hints::parse_toml(&hints.to_toml(), name).unwrap();
            assert_eq!(back.processes, hints.processes, "{name}");
            let mut facts = crate::hints::TraceFacts::default();
            for r in &reqs {
                facts.add(r);
                assert_eq!(r.length, BLOCK);
                let f = r.file.unwrap();
                assert!(f.offset < f.size.unwrap());
            }
            back.validate(&facts).unwrap();
        }
    }

    #[test]
    fn sizes_follow_the_paper() {
        let (cs1, h) = gen("acfs-cs1", "");
        assert_eq!(cs1.len() as u64, 8 * mb_blocks(9.0));
        assert_eq!(h.processes[0].policy, LevelPolicy::Mru);
        let (din, _) = gen("acfs-din", "passes=12");
        assert_eq!(din.len() as u64, 12 * mb_blocks(8.0));
        let (cs3, h) = gen("acfs-cs3", "");
        let blocks = cs3.len() as u64 / 4;
        assert!((blocks as f64 - mb_blocks(10.0) as f64).abs() < 7.0);
        assert!(h.processes[0].file_list.len() <= MAX_LIST_ENTRIES);
        let (psel2, h) = gen("acfs-psel2", "");
        assert_eq!(psel2.len(), 1 + 11 + 4001);
        assert!(!h.processes[0].temp.is_empty() && !h.processes[0].block_list.is_empty());
        let (_, h) = gen("acfs-andrew", "");
        assert!(h.processes.is_empty());
        let (gli, h) = gen("acfs-gli", "pid=3");
        assert!(gli.iter().all(|r| r.pid == 3));
        assert_eq!(h.processes[0].files.values().copied().collect::<Vec<_>>(), vec![1; 4]);
        assert!(generate("acfs-cs1", &Common::default(), &mut GenParams::parse("acfs-cs1", "queries=0").unwrap()).is_err());
    }

    #[test]
    fn directory_layout_keeps_list_order_within_a_directory() {
        // One pass: the first read of each file, in list order.
        let firsts = |reqs: &[Request]| reqs.iter().filter(|r| r.file.unwrap().offset == 0).map(|r| (r.offset / BLOCK, r.file.unwrap().size.unwrap() / BLOCK)).collect::<Vec<_>>();
        let (reqs, h) = gen("acfs-cs3", "patterns=1,dir_files=10,fs=contig");
        let files = firsts(&reqs);
        assert_eq!(files.len(), h.processes[0].file_list.len());
        for dir in files.chunks(10) {
            assert!(dir.windows(2).all(|w| w[1].0 == w[0].0 + w[0].1), "{dir:?}");
        }
        // The directories are not all in list order, and the whole region is used once.
        assert!(files.chunks(10).collect::<Vec<_>>().windows(2).any(|w| w[1][0].0 < w[0][0].0));
        let mut starts: Vec<_> = files.clone();
        starts.sort();
        assert!(starts.windows(2).all(|w| w[1].0 == w[0].0 + w[0].1));
        // Without directories the list order is unrelated to the layout.
        let (reqs, _) = gen("acfs-cs3", "patterns=1,fs=contig");
        let files = firsts(&reqs);
        assert!(files.windows(2).filter(|w| w[1].0 == w[0].0 + w[0].1).count() < files.len() / 10);
        assert!(generate("acfs-cs3", &Common::default(), &mut GenParams::parse("acfs-cs3", "dir_files=100001").unwrap()).is_err());
    }

    #[test]
    fn ffs_places_a_files_blocks_every_other_block_and_fills_the_gaps() {
        for name in ["acfs-cs3", "acfs-gli"] {
            let (reqs, _) = gen(name, "fs=ffs");
            let mut by_file: HashMap<u64, Vec<u64>> = HashMap::new();
            for r in &reqs {
                let f = r.file.unwrap();
                let at = by_file.entry(f.id).or_default();
                if at.len() as u64 == f.offset / BLOCK {
                    at.push(r.offset / BLOCK);
                }
            }
            // Each later block at least the gap after the one before it.
            for at in by_file.values() {
                assert!(at.windows(2).all(|w| w[1] >= w[0] + 1 + FFS_GAP_BLOCKS), "{name}: {at:?}");
            }
            // No block holds two file blocks, and the gaps are filled: the first file of a
            // region starts at its first block and few blocks stay free (cs3 reads every file;
            // gli only some of its data files).
            let mut all: Vec<u64> = by_file.values().flatten().copied().collect();
            all.sort();
            let n = all.len();
            all.dedup();
            assert_eq!(all.len(), n, "{name}");
            let regions: std::collections::BTreeSet<u64> = all.iter().map(|b| b >> 20).collect();
            for reg in regions.into_iter().filter(|_| name == "acfs-cs3") {
                let inside: Vec<u64> = all.iter().copied().filter(|b| b >> 20 == reg).collect();
                assert_eq!(inside[0], reg << 20, "{name}");
                let span = inside[inside.len() - 1] - inside[0] + 1;
                assert!(span - (inside.len() as u64) < 8, "{name}: {} blocks over {span}", inside.len());
            }
        }
        let (contig, _) = gen("acfs-cs3", "fs=contig");
        let (ffs, _) = gen("acfs-cs3", "fs=ffs");
        assert_eq!(contig.len(), ffs.len());
        assert_eq!(gen("acfs-cs3", "").0, contig);
        assert!(generate("acfs-cs3", &Common::default(), &mut GenParams::parse("acfs-cs3", "fs=ext2").unwrap()).is_err());
    }
}
