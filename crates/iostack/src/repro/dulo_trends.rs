//! The trends of the DULO paper's Figures 4-5 (Jiang et al., ACM TOS 2007, Section 4.3.2) on
//! iostack's timed stack: Linux readahead, C-SCAN, and the paper's disk (`hdd:wd7200`, the
//! Western Digital 7200 rpm IDE drive of Section 4.2).
//!
//! Workloads (`workload::mixed_files`): a mixed one (sequential scans of large files beside
//! random index reads and small-file reads, in the spirit of BLAST and PostMark), a purely
//! sequential one (the scans alone: TPC-H) and a purely random one (index and small-file reads:
//! diff), at several cache sizes. Policies: `lru`, `linux` (the two-list policy), `dulo`, and
//! `dulo-linux` (the paper's prototype: DULO on Linux's inactive list).
//!
//! What the paper reports, and what is checked: on the mixed workload DULO raises the disk
//! access sequence sizes (fewer size-1 sequences, a CDF shifted right), and cuts I/O and
//! execution time, with hit ratios within about 2 % of Linux's; on the sequential and random
//! workloads it changes almost nothing. The paper's numbers come from a real kernel and real
//! applications; these are the same measurements on synthetic stand-ins, so the checks are
//! about direction, not magnitude.

use super::{Check, Report, ReproInfo, Table};
use crate::engine::timed::{StackConfig, TimedReport, TimedRun};
use crate::trace::VecReader;
use crate::workload::mixed_files::MixedFilesConfig;

/// Policies as (label, spec). DULO runs with the paper's parameters (Section 4.2): a 4 MiB
/// sequencing bank (1024 blocks) and a 64 MiB eviction section (16384 blocks). Scaling them down
/// with the cache is not equivalent: a random block outlives the sequential ones around it for
/// about (sequence size) x (bank) blocks of sequential traffic, because each refill raises the
/// inflation value L by about 1/size and a random block's H is L + 1; with a 1024-block bank and
/// 128-block sequences that is 131072 blocks, 1-2.7 times the paper's 192-512 MB caches, but with
/// the scaled default (bank C/128) on a 4096-block cache it is 32 x 32 = 1024 blocks, less than
/// LRU's own reach (C), so DULO cannot keep a random block any longer than LRU does.
pub const POLICIES: [(&str, &str); 4] =
    [("lru", "lru"), ("linux", "linux"), ("dulo", "dulo:bank=1024,evict=16384"), ("dulo-linux", "dulo-linux:bank=1024,evict=16384")];
pub const DEVICE: &str = "hdd:wd7200";

/// Measurements of one run.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Measure {
    pub policy: String,
    pub cache_blocks: u64,
    pub hit_ratio: f64,
    pub mean_sequence: f64,
    /// Share of disk access sequences of one block.
    pub random_share: f64,
    /// CDF of sequence sizes at 1, 2, 4, ..., 128 blocks (share of sequences of at most that).
    pub cdf: Vec<(u64, f64)>,
    pub io_time_ms: f64,
    pub elapsed_ms: f64,
    pub device_requests: u64,
}

fn measure(policy: &str, cache_blocks: u64, report: &TimedReport) -> Measure {
    let seqs = &report.device.sequences;
    let n: u64 = seqs.values().sum();
    let blocks: u64 = seqs.iter().map(|(s, c)| s * c).sum();
    let ones = seqs.get(&1).copied().unwrap_or(0);
    let cdf = (0..8)
        .map(|i| {
            let t = 1u64 << i;
            let le: u64 = seqs.range(..=t).map(|(_, c)| c).sum();
            (t, if n == 0 { 0.0 } else { le as f64 / n as f64 })
        })
        .collect();
    Measure {
        policy: policy.to_string(),
        cache_blocks,
        hit_ratio: report.hit_ratio,
        mean_sequence: if n == 0 { 0.0 } else { blocks as f64 / n as f64 },
        random_share: if n == 0 { 0.0 } else { ones as f64 / n as f64 },
        cdf,
        io_time_ms: report.device_busy_ns as f64 / 1e6,
        elapsed_ms: report.elapsed_ns as f64 / 1e6,
        device_requests: report.device_requests,
    }
}

/// The stack every run uses, for a policy and a cache size.
pub fn stack(policy: &str, cache_blocks: u64) -> StackConfig {
    StackConfig {
        policy: policy.to_string(),
        cache: cache_blocks.to_string(),
        prefetch: "linux".into(),
        sched: "cscan".into(),
        device: DEVICE.into(),
        think: "trace".into(),
        ..Default::default()
    }
}

/// Runs every policy at every size on a workload.
/// `policies` are (label, spec) pairs; measures carry the label.
pub fn run_workload(w: &MixedFilesConfig, sizes: &[u64], policies: &[(&str, &str)]) -> Result<Vec<Measure>, crate::error::Error> {
    let requests = w.requests()?;
    let mut out = Vec::new();
    for &c in sizes {
        for &(label, spec) in policies {
            let run = TimedRun::new(&stack(spec, c))?;
            let report = run.run(&mut VecReader::new(requests.clone()))?;
            out.push(measure(label, c, &report));
        }
    }
    Ok(out)
}

/// A BLAST-like mixed workload at the paper's scale (Section 4.3.1: a 1.3 GB database whose
/// data files are scanned sequentially, once per query sequence, five queries, while its index
/// and header files are read at random; memories of 192-512 MB): 1 GiB of data files scanned 5
/// times, a 256 MiB index read 200,000 times one block at a time with a fifth of it (51 MiB)
/// taking 95 % of the reads, and PostMark's pool of 1,500 files of 4 KiB-512 KiB read whole
/// 10,000 times (Section 4.3.1, item 4). The index and small-file readers compute 1 ms between
/// reads, so their re-references are spread over the scans instead of landing all at once.
pub fn mixed() -> MixedFilesConfig {
    MixedFilesConfig {
        data_files: 4,
        data_file_blocks: 65_536,
        passes: 5,
        index_blocks: 65_536,
        index_reads: 200_000,
        hot_fraction: 0.2,
        hot_share: 0.95,
        small_files: 1500,
        small_file_max_blocks: 128,
        small_reads: 10_000,
        index_think_us: 1000,
        small_think_us: 1000,
        ..Default::default()
    }
}
/// The scans alone (TPC-H query 6 run five times is a sequential scan repeated).
pub fn sequential() -> MixedFilesConfig {
    MixedFilesConfig { index_reads: 0, small_reads: 0, ..mixed() }
}
/// The random readers alone, with diff's small files: the paper's diff reads the small files of
/// two Linux source trees in an order unrelated to their placement, and more than 80 % of its
/// disk sequences are shorter than 4 blocks (Section 4.3.2), so the small files here are 1-4
/// blocks (with PostMark's 1-128, their whole-file reads would be a mix of long and short
/// sequences, which is what DULO exploits).
pub fn random() -> MixedFilesConfig {
    MixedFilesConfig { data_files: 0, small_file_max_blocks: 4, ..mixed() }
}

/// 192, 256 and 384 MiB of 4 KiB blocks, inside the range of the paper's BLAST figure.
pub fn sizes() -> Vec<u64> {
    vec![49_152, 65_536, 98_304]
}

fn rows(ms: &[Measure]) -> Vec<Vec<String>> {
    ms.iter()
        .map(|m| {
            vec![
                m.cache_blocks.to_string(),
                m.policy.clone(),
                format!("{:.4}", m.hit_ratio),
                format!("{:.2}", m.mean_sequence),
                format!("{:.1} %", m.random_share * 100.0),
                m.cdf.iter().map(|(_, f)| format!("{:.2}", f)).collect::<Vec<_>>().join(" "),
                format!("{:.0}", m.io_time_ms),
                format!("{:.0}", m.elapsed_ms),
                m.device_requests.to_string(),
            ]
        })
        .collect()
}

const HEADER: [&str; 9] = ["cache", "policy", "hit ratio", "mean seq", "size-1 seqs", "CDF at 1 2 4 8 16 32 64 128", "I/O ms", "elapsed ms", "dev reqs"];

/// Runs the three workloads and checks the paper's trends.
pub fn reproduce(sizes: &[u64]) -> Report {
    let (mw, sw, rw) = (mixed(), sequential(), random());
    let m = run_workload(&mw, sizes, &POLICIES).expect("runs");
    let s = run_workload(&sw, sizes, &POLICIES).expect("runs");
    let r = run_workload(&rw, sizes, &POLICIES).expect("runs");
    let get = |ms: &[Measure], p: &str, c: u64| ms.iter().find(|x| x.policy == p && x.cache_blocks == c).unwrap().clone();
    let mut checks = Vec::new();
    for &c in sizes {
        let (l, x) = (get(&m, "lru", c), get(&m, "linux", c));
        for name in ["dulo", "dulo-linux"] {
            let d = get(&m, name, c);
            let vs = |f: fn(&Measure) -> f64, unit: &str, scale: f64| {
                format!("{:.2}{unit} vs lru {:.2}{unit}, linux {:.2}{unit}", f(&d) * scale, f(&l) * scale, f(&x) * scale)
            };
            let seq_up = d.mean_sequence > l.mean_sequence && d.mean_sequence > x.mean_sequence;
            checks.push(Check::new(format!("mixed, {c} blocks: {name} raises the mean sequence size"), "yes", vs(|m| m.mean_sequence, "", 1.0), seq_up));
            let rnd_down = d.random_share < l.random_share && d.random_share < x.random_share;
            checks.push(Check::new(format!("mixed, {c} blocks: {name} cuts the share of size-1 sequences"), "yes (BLAST 15.2 -> 4.2 %, 8.2 -> 3.5 %)", vs(|m| m.random_share, " %", 100.0), rnd_down));
            let io_down = d.io_time_ms < l.io_time_ms && d.io_time_ms < x.io_time_ms;
            checks.push(Check::new(format!("mixed, {c} blocks: {name} cuts I/O time"), "yes", vs(|m| m.io_time_ms, " s", 1e-3), io_down));
            let el_down = d.elapsed_ms < l.elapsed_ms && d.elapsed_ms < x.elapsed_ms;
            checks.push(Check::new(format!("mixed, {c} blocks: {name} cuts elapsed time"), "BLAST 20.1-53.0 % vs Linux", format!("{:+.1} % vs lru, {:+.1} % vs linux", (d.elapsed_ms / l.elapsed_ms - 1.0) * 100.0, (d.elapsed_ms / x.elapsed_ms - 1.0) * 100.0), el_down));
            let close = (d.hit_ratio - x.hit_ratio).abs() <= 0.02 && (d.hit_ratio - l.hit_ratio).abs() <= 0.02;
            checks.push(Check::new(format!("mixed, {c} blocks: {name} hit ratio within 2 points"), "0.5-2.2 % apart", format!("{:.4} vs lru {:.4}, linux {:.4}", d.hit_ratio, l.hit_ratio, x.hit_ratio), close));
        }
        for (name, ws) in [("sequential", &s), ("random", &r)] {
            let (l, x) = (get(ws, "lru", c), get(ws, "linux", c));
            for p in ["dulo", "dulo-linux"] {
                let d = get(ws, p, c);
                let change = (d.elapsed_ms / l.elapsed_ms - 1.0).abs().max((d.elapsed_ms / x.elapsed_ms - 1.0).abs());
                checks.push(Check::new(
                    format!("{name}, {c} blocks: {p} changes elapsed time by little"),
                    "almost nothing (TPC-H 2.1 %, diff ~0)",
                    format!("{:+.1} % vs lru, {:+.1} % vs linux", (d.elapsed_ms / l.elapsed_ms - 1.0) * 100.0, (d.elapsed_ms / x.elapsed_ms - 1.0) * 100.0),
                    change < 0.05,
                ));
            }
        }
    }
    let header: Vec<String> = HEADER.iter().map(|h| h.to_string()).collect();
    Report {
        name: "dulo-trends".into(),
        title: "DULO Figures 4-5 trends: sequence sizes, random accesses, I/O and elapsed time vs LRU and Linux".into(),
        source: "Jiang et al., DULO, ACM TOS 2007, Section 4.3, Figures 4-5".into(),
        config: serde_json::json!({
            "stack": stack("<policy>", 0),
            "policies": POLICIES,
            "cache_blocks": sizes,
            "workloads": {"mixed": mw, "sequential": sw, "random": rw},
        }),
        tables: vec![
            Table { title: "mixed (scans + random index + small files)".into(), header: header.clone(), rows: rows(&m) },
            Table { title: "purely sequential (scans only: TPC-H-like)".into(), header: header.clone(), rows: rows(&s) },
            Table { title: "purely random (index + small files: diff-like)".into(), header, rows: rows(&r) },
        ],
        checks,
        notes: vec!["DULO runs with the paper's parameters (Section 4.2): bank 1024 blocks (4 MiB), eviction section 16384 blocks (64 MiB), CLOCK hits; processes think as the trace says (think = trace).".into()],
    }
}

pub const INFO: ReproInfo = ReproInfo {
    name: "dulo-trends",
    title: "DULO Figures 4-5: mixed, sequential and random workloads on the WD 7200 rpm model",
    quick: false,
    run: || reproduce(&sizes()),
};

#[cfg(test)]
mod tests {
    use super::*;

    /// The mixed workload and the paper's parameters scaled down by 4 (the bank and eviction
    /// section keep their ratio to a 192 MB memory: 1/48 and 1/3).
    fn quarter(w: MixedFilesConfig) -> MixedFilesConfig {
        MixedFilesConfig {
            data_file_blocks: w.data_file_blocks / 4,
            index_blocks: w.index_blocks / 4,
            index_reads: w.index_reads / 4,
            small_files: w.small_files / 4,
            small_reads: w.small_reads / 4,
            ..w
        }
    }
    const QUARTER: [(&str, &str); 4] =
        [("lru", "lru"), ("linux", "linux"), ("dulo", "dulo:bank=256,evict=4096"), ("dulo-linux", "dulo-linux:bank=256,evict=4096")];

    /// Figure 5's trends for the paper's prototype (DULO on Linux's inactive list) on the mixed
    /// workload: longer disk sequences, fewer random ones, less I/O and elapsed time than both
    /// LRU and Linux, at a hit ratio within 2 points.
    #[test]
    fn mixed_workload_gets_longer_sequences_and_less_time() {
        let ms = run_workload(&quarter(mixed()), &[12_288], &QUARTER).unwrap();
        let get = |p: &str| ms.iter().find(|m| m.policy == p).unwrap();
        let d = get("dulo-linux");
        for base in [get("lru"), get("linux")] {
            assert!(d.mean_sequence > base.mean_sequence * 1.1, "{d:?} {base:?}");
            assert!(d.random_share < base.random_share - 0.02, "{d:?} {base:?}");
            assert!(d.io_time_ms < base.io_time_ms * 0.95, "{d:?} {base:?}");
            assert!(d.elapsed_ms < base.elapsed_ms * 0.95, "{d:?} {base:?}");
            assert!((d.hit_ratio - base.hit_ratio).abs() < 0.02, "{d:?} {base:?}");
        }
        // Plain DULO goes the same way on sequences and random accesses.
        let p = get("dulo");
        assert!(p.mean_sequence > get("lru").mean_sequence && p.random_share < get("lru").random_share, "{p:?}");
    }

    /// On purely sequential and purely random workloads DULO changes elapsed time by little,
    /// and hit ratios stay close.
    #[test]
    fn sequential_and_random_workloads_change_little() {
        for w in [quarter(sequential()), quarter(random())] {
            let ms = run_workload(&w, &[12_288], &QUARTER).unwrap();
            let l = &ms[0];
            for d in &ms[2..] {
                assert!((d.elapsed_ms / l.elapsed_ms - 1.0).abs() < 0.05, "{l:?} {d:?}");
                assert!((d.hit_ratio - l.hit_ratio).abs() < 0.02);
            }
            assert!(l.cdf.windows(2).all(|w| w[0].1 <= w[1].1), "a CDF never decreases");
        }
    }
}
