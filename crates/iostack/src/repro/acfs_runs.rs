//! The runs behind the ACFS paper's measurements (Cao, Felten, Karlin, Li, ACM TOCS,
//! papers/002, §5, l.770-1135; `specs/acfs.md` §1.7 and §2): its applications, alone or in
//! pairs, under its six file system configurations (the presets `acfs-1` .. `acfs-6`,
//! [`crate::engine::timed::preset`]), through the timed engine.
//!
//! - **Applications** are iostack's ACFS generators ([`crate::workload::acfs`]) with their hints,
//!   cs2's, cs3's and gli's files laid out as the paper's fast file system lays them ([`FFS`]).
//!   Each process computes between its block reads for a CPU time per 8 KiB block that the paper
//!   does not give (its Figures 4-5 show the split of elapsed time into CPU and I/O only as bars):
//!   the values in [`APPS`] are assumed, chosen so that each application is I/O-bound or
//!   CPU-bound as §5.3 describes it (din's non-overlapped I/O "quite small", l.965-968; the
//!   others I/O-intensive, l.780-783).
//! - **One CPU** (the DEC 5000/240, l.891-892; `cpus = 1`): the processes' compute shares it,
//!   round robin ([`crate::engine::timed::cpu`]), and one process's I/O overlaps another's
//!   compute; the paper's context switch at every miss (l.1092-1098) is that sharing.
//! - **Disks** (l.913-925): CScope, Dinero and Glimpse on the RZ56, Postgres and Andrew on the
//!   RZ26 (`hdd:rz56`, `hdd:rz26`). A pair whose applications use different disks runs on two
//!   devices, each with its own scheduler; otherwise both share one.
//! - **Measures**: elapsed time (until every process finished), block I/Os (blocks the devices
//!   read and wrote), average disk access latency (device busy time per device request: the
//!   duration from issue to the disk to completion, l.1007-1009, without the time queued before
//!   it), per process its elapsed time and block I/Os.

use crate::engine::timed::{preset, Boundary, HintsConfig, Replay, RequestRecorder, StackConfig, TimedReport, TimedRun};
use crate::error::Error;
use crate::hints::Hints;
use crate::trace::{Request, VecReader};
use crate::workload::{acfs, Arrival, Common, GenParams};

/// One of the paper's applications.
#[derive(Debug, Clone, Copy)]
pub struct App {
    /// The paper's name (`cs1`).
    pub name: &'static str,
    /// The generator (`acfs-cs1`).
    pub generator: &'static str,
    /// CPU time per block read (assumed; see the module's comment).
    pub cpu_us: u64,
    /// The paper's disk (`rz56` or `rz26`).
    pub disk: &'static str,
    /// Generator parameters of the reduced size tests use (about a third of the paper's data).
    pub small: &'static str,
    /// Generator parameters of both sizes: the file system's layout (see [`FFS`]).
    pub params: &'static str,
}

/// The layout of the paper's file system, Ultrix 4.3's Berkeley fast file system with 8 KB
/// blocks (l.209), for the applications that read many files (cs2, cs3, gli): a file's blocks
/// every other block, as 4.3BSD's allocator places them with `newfs`'s defaults of the time
/// (`ffs_allocate` in [`acfs`]; docs/reproductions.md, the ACFS layout section). cs1's and din's
/// single files, psel's tables and Andrew's small files keep the contiguous layout.
pub const FFS: &str = "fs=ffs";

/// The paper's applications, in its figures' order, and the Andrew benchmark.
pub const APPS: &[App] = &[
    App { name: "cs1", generator: "acfs-cs1", cpu_us: 2000, disk: "rz56", small: "queries=4,db_mb=3", params: "" },
    App { name: "cs2", generator: "acfs-cs2", cpu_us: 2000, disk: "rz56", small: "patterns=2,mb=6", params: FFS },
    App { name: "cs3", generator: "acfs-cs3", cpu_us: 2000, disk: "rz56", small: "patterns=2,mb=3.5", params: FFS },
    App { name: "din", generator: "acfs-din", cpu_us: 4000, disk: "rz56", small: "passes=5,mb=2.7", params: "" },
    App { name: "gli", generator: "acfs-gli", cpu_us: 2000, disk: "rz56", small: "queries=3", params: FFS },
    App { name: "psel1", generator: "acfs-psel1", cpu_us: 1000, disk: "rz26", small: "", params: "" },
    App { name: "psel2", generator: "acfs-psel2", cpu_us: 1000, disk: "rz26", small: "", params: "" },
    App { name: "andrew", generator: "acfs-andrew", cpu_us: 20000, disk: "rz26", small: "files=40", params: "" },
];

/// Looks an application up by its paper name.
pub fn app(name: &str) -> &'static App {
    APPS.iter().find(|a| a.name == name).unwrap_or_else(|| panic!("no application {name}"))
}

/// The paper's cache sizes as it names them (l.893-894); [`Scale::cache`] gives the size run.
pub const CACHES: [&str; 2] = ["6.4MB", "12MB"];

/// The reports' note on the cache sizes.
pub const CACHE_NOTE: &str = "the caches are binary megabytes, as memory is sized (the 6.4 MB is the Ultrix default, a tenth of the memory): 6.4 MiB = 819 blocks of 8 KiB, 12 MiB = 1,536";

/// Workload size: the paper's, or reduced (a third of the data and of the cache) for tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scale {
    Paper,
    Small,
}

impl Scale {
    /// The cache size to run for one of [`CACHES`]. The paper's megabytes of file cache are
    /// binary ones: the 6.4 MB is the Ultrix default (l.892-893), a tenth of the machine's
    /// memory, and memory comes in powers of two (`specs/acfs.md` §4 runs `--cache 6.4MiB`):
    /// 819 and 1,536 blocks of 8 KiB, where decimal megabytes would give 781 and 1,464. The
    /// reduced size keeps about a third of the cache.
    pub fn cache(self, paper: &str) -> String {
        match (self, paper) {
            (Scale::Paper, c) => c.replace("MB", "MiB"),
            (Scale::Small, "6.4MB") => "2.2MB".into(),
            (Scale::Small, _) => "4MB".into(),
        }
    }
}

/// What one run gives.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Outcome {
    /// Until every process finished (ms).
    pub elapsed_ms: f64,
    /// Blocks the devices read and wrote.
    pub block_ios: u64,
    pub device_requests: u64,
    /// Device busy time per device request (ms).
    pub latency_ms: f64,
    /// Per process, in pid order.
    pub processes: Vec<ProcessOutcome>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ProcessOutcome {
    pub pid: u32,
    pub app: String,
    pub elapsed_ms: f64,
    /// Blocks the devices read and wrote for the process: its reads, and the write-backs of
    /// dirty blocks that its own misses evicted (whoever dirtied them).
    pub block_ios: u64,
    /// Its references that missed in the cache (what LRU-SP's criteria count, l.388-399).
    pub misses: u64,
    pub blocks_read: u64,
    pub blocks_written: u64,
}

/// The applications of a run: each runs as pid 1, 2, ... in this order.
pub fn devices_of(apps: &[&App]) -> Vec<u32> {
    let two = apps.iter().any(|a| a.disk != apps[0].disk);
    apps.iter().map(|a| if two && a.disk == "rz26" { 1 } else { 0 }).collect()
}

/// The requests (merged in time order) and hints of `apps` running together.
pub fn workload(apps: &[&App], scale: Scale) -> Result<(Vec<Request>, Hints), Error> {
    let devices = devices_of(apps);
    let mut reqs = Vec::new();
    let mut hints = Hints { source: apps.iter().map(|a| a.name).collect::<Vec<_>>().join("+"), processes: Vec::new() };
    for (i, a) in apps.iter().enumerate() {
        let mut text = format!("pid={},device={}", i + 1, devices[i]);
        if !a.params.is_empty() {
            text += &format!(",{}", a.params);
        }
        if scale == Scale::Small && !a.small.is_empty() {
            text += &format!(",{}", a.small);
        }
        let common = Common { arrival: Arrival::Fixed { interarrival_ns: a.cpu_us * 1000 }, ..Common::default() };
        let (r, h) = acfs::generate(a.generator, &common, &mut GenParams::parse(a.generator, &text)?)?;
        reqs.extend(r);
        hints.processes.extend(h.processes);
    }
    // Stable: at equal times the earlier application's request first.
    reqs.sort_by_key(|r| r.time_ns);
    Ok((reqs, hints))
}

/// The device spec of `disk` (`rz56`). The drives keep their presets' read-ahead buffers
/// (assumed, as the paper gives none): each 8 KiB block is its own disk request, as in Ultrix,
/// and without a buffer a request for the block after the previous one arrives after the head
/// has passed it and waits a whole revolution (21 ms per block on the RZ56), which makes runs of
/// consecutive blocks, such as a sorted batch, slower than scattered ones (see
/// docs/reproductions.md, ACFS Figures 4-5).
fn drive(disk: &str) -> String {
    format!("hdd:{disk}")
}

/// The stack of configuration `config` (1 to 6) with cache `cache` for `apps`.
pub fn stack(config: usize, cache: &str, apps: &[&App]) -> StackConfig {
    let mut c = StackConfig::default();
    preset::PRESETS[config - 1].apply(&mut c);
    c.cache = cache.to_string();
    c.locality = false;
    // Per-process cache misses under global LRU too (criterion (i) compares them).
    c.per_process = true;
    // The paper's DEC 5000/240 has one CPU (l.891-892): the processes' compute shares it, and
    // a process gives it up at each miss (l.1092-1098).
    c.cpus = Some(1);
    let devices = devices_of(apps);
    c.device = if devices.contains(&1) {
        let disk = |d: u32| apps.iter().zip(&devices).find(|(_, &x)| x == d).map(|(a, _)| a.disk).expect("an application on the device");
        format!("0={},1={}", drive(disk(0)), drive(disk(1)))
    } else {
        drive(apps[0].disk)
    };
    c
}

/// Runs `requests` through `config`, with `hints` (inline) when its policy is LRU-SP.
pub fn run_stack(config: &StackConfig, requests: Vec<Request>, hints: &Hints) -> Result<TimedReport, Error> {
    run_stack_recorded(config, requests, hints, None)
}

/// [`run_stack`], also keeping in `issued` (when given) every request as the processes issued
/// it, stamped with its issue time: replayed open-loop (`replay = open`) it gives every
/// configuration the same interleaving of the processes' references.
pub fn run_stack_recorded(config: &StackConfig, requests: Vec<Request>, hints: &Hints, issued: Option<RequestRecorder>) -> Result<TimedReport, Error> {
    let mut config = config.clone();
    if config.policy.starts_with("lrusp") && !hints.processes.is_empty() {
        let mut hints = hints.clone();
        if config.policy.contains("calls=off") {
            // Configurations 2-3: the applications give their lists, not their caching.
            for p in &mut hints.processes {
                p.temp.clear();
            }
        }
        let t: toml::Value = toml::from_str(&hints.to_toml()).expect("hints written as TOML read back");
        config.hints = Some(HintsConfig::Inline(serde_json::to_value(t).expect("TOML converts to JSON")));
    }
    let mut run = TimedRun::new(&config)?;
    if let Some(issued) = issued {
        run.observe(Boundary::Front, Box::new(issued));
    }
    run.run(&mut VecReader::new(requests))
}

/// The measures of a report for `apps`.
pub fn outcome(rep: &TimedReport, apps: &[&App]) -> Outcome {
    let busy: u64 = rep.device_busy_ns;
    Outcome {
        elapsed_ms: rep.elapsed_ns as f64 / 1e6,
        block_ios: rep.device.blocks_read + rep.device.blocks_written,
        device_requests: rep.device_requests,
        latency_ms: if rep.device_requests == 0 { 0.0 } else { busy as f64 / rep.device_requests as f64 / 1e6 },
        processes: rep
            .processes
            .iter()
            .map(|p| ProcessOutcome {
                pid: p.pid,
                app: apps.get(p.pid as usize - 1).map_or("?", |a| a.name).to_string(),
                elapsed_ms: p.elapsed_ns as f64 / 1e6,
                block_ios: p.device_blocks_read + p.device_blocks_written,
                misses: p.misses.expect("the runs count per process"),
                blocks_read: p.device_blocks_read,
                blocks_written: p.device_blocks_written,
            })
            .collect(),
    }
}

/// Runs `apps` together under configuration `config` (1 to 6) with cache `cache`; `tweak`
/// changes the stack first (e.g. the batch size).
pub fn run(apps: &[&App], config: usize, cache: &str, scale: Scale, tweak: impl FnOnce(&mut StackConfig)) -> Result<Outcome, Error> {
    let (reqs, hints) = workload(apps, scale)?;
    let mut c = stack(config, &scale.cache(cache), apps);
    tweak(&mut c);
    Ok(outcome(&run_stack(&c, reqs, &hints)?, apps))
}

/// Runs `apps` together under configuration `config` in the closed loop, and under each of
/// `others` on the same interleaving: the requests in the order and at the times the
/// processes issued them under `config`, replayed open-loop. Gives `config`'s outcome first,
/// then `others`' in their order. LRU-SP's criteria (l.388-399) compare misses on one
/// interleaving of the processes' references; in the closed loop each configuration makes its
/// own.
pub fn run_on_interleaving(apps: &[&App], config: usize, others: &[usize], cache: &str, scale: Scale) -> Result<Vec<Outcome>, Error> {
    let (reqs, hints) = workload(apps, scale)?;
    let issued = RequestRecorder::default();
    let c = stack(config, &scale.cache(cache), apps);
    let mut out = vec![outcome(&run_stack_recorded(&c, reqs, &hints, Some(issued.clone()))?, apps)];
    let issued = issued.0.take();
    for &k in others {
        let mut c = stack(k, &scale.cache(cache), apps);
        c.replay = Replay::Open;
        // The interleaving already has the CPU's sharing in its times.
        c.cpus = None;
        out.push(outcome(&run_stack(&c, issued.clone(), &hints)?, apps));
    }
    Ok(out)
}

/// The configurations' short names, as the paper's figures label them.
pub const CONFIG_NAMES: [&str; 6] = ["LRU", "LRU+pf", "LRU+pf+sched", "AC", "AC+pf", "AC+pf+sched"];
