//! Workloads after the applications of the ACFS paper (Cao, Felten, Karlin, Li, ACM TOCS,
//! papers/002, §5.1, l.779-928; `specs/acfs.md` §1.7), each with the hints its application
//! gives (a [`Hints`] of one `[[process]]` table, or none for the oblivious Andrew benchmark).
//!
//! All reads are of 8 KiB blocks (the paper's block size, l.209), one block per request, by one
//! process (`pid`, default 1) on one device (`device`, default 0); requests arrive at the common
//! inter-arrival time (the CPU time between file accesses). Files are contiguous on the device,
//! each application in its own region (so that workloads can be merged into pairs with
//! different pids) with its own range of file ids. Seeded and deterministic.
//!
//! - `acfs-cs1` (cscope symbol queries): `queries` (8) sequential reads of one database file of
//!   `db_mb` MB (9; the paper does not give the size; its 12 MB discussion, l.1106-1109, puts it
//!   between a process's share of the cache and 12 MB). Hints: MRU; the file list is the
//!   database once per query.
//! - `acfs-cs2`, `acfs-cs3` (cscope text searches): `patterns` (4) passes over every source file,
//!   in one fixed order (`cscope.files`), 18 MB (cs2) or 10 MB (cs3) of files of 1 to 6 blocks.
//!   Hints: MRU; the file list is the files in pass order (cut at 5,000 entries).
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
pub const CS2: GeneratorInfo = info!("acfs-cs2", "ACFS cscope text searches over 18 MB of source files in list order (MRU, file-list hints)", ["patterns": "passes (4)", "mb": "source size in MB (18)"]);
pub const CS3: GeneratorInfo = info!("acfs-cs3", "ACFS cscope text searches over 10 MB of source files (MRU, file-list hints)", ["patterns": "passes (4)", "mb": "source size in MB (10)"]);
pub const DIN: GeneratorInfo = info!("acfs-din", "ACFS dinero: an 8 MB trace file read sequentially per simulation (MRU, file-list hints)", ["passes": "passes (9)", "mb": "trace size in MB (8)"]);
pub const GLI: GeneratorInfo = info!("acfs-gli", "ACFS glimpse: index files then hit data files per query (index priority 1, MRU)", ["queries": "queries (5)", "hit_share": "share of data files a query reads (0.3)"]);
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
            offset: (f.first + b) * BLOCK,
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
    let mut out = Out { reqs: Vec::new(), pid, device, arrival: common.arrival, rng: Pcg64Mcg::seed_from_u64(common.seed ^ 0x5eed), clock: 0.0 };
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
            let (region, base) = if name == "acfs-cs2" { (2, 2000) } else { (3, 20000) };
            let files = lay_out(region, base, &small_files(&mut rng, mb_blocks(mb)));
            // cscope.files order: the directory walk's, not the layout's.
            let mut order = files.clone();
            order.shuffle(&mut rng);
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
}
