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

use super::{Check, Figure, Progress, Report, ReproInfo, Series, Table};
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
/// `linux:shadows=0` is Linux's two lists without refault detection, closer to the paper's
/// 2.6.11 kernel (refault distances came with 3.15).
pub const POLICIES: [(&str, &str); 5] = [
    ("lru", "lru"),
    ("linux", "linux"),
    ("linux:shadows=0", "linux:shadows=0"),
    ("dulo", "dulo:bank=1024,evict=16384"),
    ("dulo-linux", "dulo-linux:bank=1024,evict=16384"),
];
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
pub fn run_workload(w: &MixedFilesConfig, sizes: &[u64], policies: &[(&str, &str)], progress: &Progress) -> Result<Vec<Measure>, crate::error::Error> {
    let requests = w.requests()?;
    let mut out = Vec::new();
    for &c in sizes {
        for &(label, spec) in policies {
            let run = TimedRun::new(&stack(spec, c))?;
            let report = run.run(&mut VecReader::new(requests.clone()))?;
            out.push(measure(label, c, &report));
            progress.step(&format!("{label} at {c} blocks"));
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
/// BLAST as the paper runs it: one process that reads the database sequentially and looks up
/// the index between chunks (`blast = yes`: the scan and index reads of [`mixed`], alternating),
/// without the small-file reader, which is PostMark's, not BLAST's.
pub fn blast() -> MixedFilesConfig {
    MixedFilesConfig { blast: true, small_reads: 0, ..mixed() }
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

/// BLAST, Section 4.3.2: execution time cut by DULO against Linux at 192 MB and 512 MB; shares
/// of size-1 sequences and of sequences longer than 32 blocks, Linux -> DULO.
pub const PAPER_BLAST: [(f64, f64, (f64, f64), (f64, f64)); 2] = [(192.0, 53.0, (15.2, 4.2), (19.8, 51.3)), (512.0, 20.1, (8.2, 3.5), (33.8, 57.7))];

/// The checks of one mixed workload (`blast` or the three-process form) at cache `c`. Each DULO
/// form is judged against the policy it is built on: `dulo` (Section 3's algorithm, on an LRU
/// stack) against `lru`, `dulo-linux` (the Section 4 prototype, on Linux's lists) against
/// `linux`, as the paper judges its prototype against the kernel it modified; the tables show
/// every policy.
fn mixed_checks(form: &str, ms: &[Measure], c: u64, smallest: bool, checks: &mut Vec<Check>) {
    let get = |p: &str| ms.iter().find(|x| x.policy == p && x.cache_blocks == c).unwrap().clone();
    let pct = |a: f64, b: f64| (a / b - 1.0) * 100.0;
    let x0 = get("linux:shadows=0");
    for (name, base_name) in [("dulo", "lru"), ("dulo-linux", "linux")] {
        let (d, b) = (get(name), get(base_name));
        let vs = |f: fn(&Measure) -> f64, unit: &str, scale: f64| format!("{:.2}{unit} vs {base_name} {:.2}{unit}", f(&d) * scale, f(&b) * scale);
        let what = |s: &str| format!("{form}, {c} blocks: {name} {s}");
        let dir = format!("direction, vs {base_name}");
        checks.push(Check::new(what("raises the mean sequence size"), "yes", vs(|m| m.mean_sequence, "", 1.0), &dir, d.mean_sequence > b.mean_sequence));
        checks.push(Check::new(what("cuts the share of size-1 sequences"), "yes (BLAST 15.2 -> 4.2 %, 8.2 -> 3.5 %)", vs(|m| m.random_share, " %", 100.0), &dir, d.random_share < b.random_share));
        checks.push(Check::new(what("cuts I/O time"), "yes", vs(|m| m.io_time_ms, " s", 1e-3), &dir, d.io_time_ms < b.io_time_ms));
        let cut = -pct(d.elapsed_ms, b.elapsed_ms);
        let iostack = format!("{:+.1} % vs {base_name}, {:+.1} % vs linux:shadows=0", -cut, pct(d.elapsed_ms, x0.elapsed_ms));
        if form == "blast" && name == "dulo-linux" && smallest {
            checks.push(Check::new(what("cuts elapsed time against linux"), "-53.0 % at 192 MB, -20.1 % at 512 MB", iostack, "cut >= 20 % (the paper's smallest)", cut >= 20.0));
        } else {
            checks.push(Check::new(what("cuts elapsed time"), "BLAST 20.1-53.0 % vs Linux", iostack, &dir, cut > 0.0));
        }
        checks.push(Check::new(
            what("keeps the hit ratio (no more than 2 points lower)"),
            "1.1-2.2 % higher than Linux's",
            format!("{:.4} vs {base_name} {:.4}", d.hit_ratio, b.hit_ratio),
            format!(">= {base_name}'s - 0.02"),
            d.hit_ratio >= b.hit_ratio - 0.02,
        ));
    }
}

/// Runs the four workloads and checks the paper's trends.
pub fn reproduce(sizes: &[u64], progress: &Progress) -> Report {
    let (bw, mw, sw, rw) = (blast(), mixed(), sequential(), random());
    progress.expect(4 * (sizes.len() * POLICIES.len()) as u64);
    let b = run_workload(&bw, sizes, &POLICIES, progress).expect("runs");
    let m = run_workload(&mw, sizes, &POLICIES, progress).expect("runs");
    let s = run_workload(&sw, sizes, &POLICIES, progress).expect("runs");
    let r = run_workload(&rw, sizes, &POLICIES, progress).expect("runs");
    let get = |ms: &[Measure], p: &str, c: u64| ms.iter().find(|x| x.policy == p && x.cache_blocks == c).unwrap().clone();
    let mut checks = Vec::new();
    let smallest = sizes.iter().copied().min().unwrap_or(0);
    for &c in sizes {
        mixed_checks("blast", &b, c, c == smallest, &mut checks);
        mixed_checks("mixed", &m, c, c == smallest, &mut checks);
        for (name, ws) in [("sequential", &s), ("random", &r)] {
            let (l, x) = (get(ws, "lru", c), get(ws, "linux", c));
            for p in ["dulo", "dulo-linux"] {
                let d = get(ws, p, c);
                let change = (d.elapsed_ms / l.elapsed_ms - 1.0).abs().max((d.elapsed_ms / x.elapsed_ms - 1.0).abs());
                checks.push(Check::new(
                    format!("{name}, {c} blocks: {p} changes elapsed time by little"),
                    "almost nothing (TPC-H -2.1 %, diff ~0)",
                    format!("{:+.1} % vs lru, {:+.1} % vs linux", (d.elapsed_ms / l.elapsed_ms - 1.0) * 100.0, (d.elapsed_ms / x.elapsed_ms - 1.0) * 100.0),
                    "|change| < 5 %",
                    change < 0.05,
                ));
            }
        }
    }
    let header: Vec<String> = HEADER.iter().map(|h| h.to_string()).collect();
    let mib = |c: u64| c as f64 * 4096.0 / (1 << 20) as f64;
    let cut = |ms: &[Measure], base: &str| -> Vec<(f64, f64)> {
        sizes.iter().map(|&c| (mib(c), (1.0 - get(ms, "dulo-linux", c).elapsed_ms / get(ms, base, c).elapsed_ms) * 100.0)).collect()
    };
    let cdf = |ms: &[Measure], p: &str| get(ms, p, smallest).cdf.iter().map(|&(t, f)| (t as f64, f)).collect::<Vec<_>>();
    let figures = vec![
        Figure::line(
            "figure5-blast-time-cut",
            "BLAST (Figure 5): execution time cut by DULO against Linux",
            "memory (MiB)",
            "execution time cut (%)",
            vec![
                Series::paper("paper: DULO vs Linux 2.6.11", PAPER_BLAST.iter().map(|p| (p.0, p.1))),
                Series::iostack("blast: dulo-linux vs linux", cut(&b, "linux")),
                Series::iostack("blast: dulo-linux vs linux:shadows=0", cut(&b, "linux:shadows=0")),
                Series::iostack("three processes: dulo-linux vs linux", cut(&m, "linux")),
            ],
        ),
        Figure {
            log_x: true,
            ..Figure::line(
                "figure5-blast-cdf",
                format!("BLAST (Figure 5): CDF of disk access sequence sizes, iostack at {:.0} MiB, paper at 192 MB", mib(smallest)),
                "sequence size (blocks)",
                "share of sequences of at most this size",
                vec![
                    Series::paper("paper: Linux", [(1.0, PAPER_BLAST[0].2 .0 / 100.0), (32.0, 1.0 - PAPER_BLAST[0].3 .0 / 100.0)]),
                    Series::paper("paper: DULO", [(1.0, PAPER_BLAST[0].2 .1 / 100.0), (32.0, 1.0 - PAPER_BLAST[0].3 .1 / 100.0)]),
                    Series::iostack("iostack: linux", cdf(&b, "linux")),
                    Series::iostack("iostack: linux:shadows=0", cdf(&b, "linux:shadows=0")),
                    Series::iostack("iostack: dulo-linux", cdf(&b, "dulo-linux")),
                ],
            )
        },
    ];
    Report {
        name: "dulo-trends".into(),
        title: "DULO Figures 4-5 trends: sequence sizes, random accesses, I/O and elapsed time vs LRU and Linux".into(),
        source: "Jiang et al., DULO, ACM TOS 2007, Section 4.3, Figures 4-5".into(),
        config: serde_json::json!({
            "stack": stack("<policy>", 0),
            "policies": POLICIES,
            "cache_blocks": sizes,
            "workloads": {"blast": bw, "mixed": mw, "sequential": sw, "random": rw},
        }),
        tables: vec![
            Table { title: "blast-like: one process alternating database scan reads and index reads".into(), header: header.clone(), rows: rows(&b) },
            Table { title: "mixed, three processes (scans + random index + small files)".into(), header: header.clone(), rows: rows(&m) },
            Table { title: "purely sequential (scans only: TPC-H-like)".into(), header: header.clone(), rows: rows(&s) },
            Table { title: "purely random (index + 1-4 block files: diff-like)".into(), header, rows: rows(&r) },
        ],
        checks,
        notes: vec!["DULO runs with the paper's parameters (Section 4.2): bank 1024 blocks (4 MiB), eviction section 16384 blocks (64 MiB), CLOCK hits; processes think as the trace says (think = trace).".into()],
        figures,
    }
}

pub const INFO: ReproInfo = ReproInfo {
    name: "dulo-trends",
    title: "DULO Figures 4-5: BLAST-like, mixed, sequential and random workloads on the WD 7200 rpm model",
    quick: false,
    run: |p| reproduce(&sizes(), p),
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

    /// The paper's BLAST figure: at the smallest memory DULO cuts execution time by 20-53 %
    /// against Linux. On the BLAST-like form, scaled down by 4, `dulo-linux` cuts at least 20 %
    /// against `linux` and against `linux:shadows=0`.
    #[test]
    fn blast_form_gains_of_the_papers_order() {
        let pols = [("linux", "linux"), ("linux:shadows=0", "linux:shadows=0"), QUARTER[3]];
        let ms = run_workload(&quarter(blast()), &[12_288], &pols, &Progress::none()).unwrap();
        let d = &ms[2];
        for base in &ms[..2] {
            let cut = 1.0 - d.elapsed_ms / base.elapsed_ms;
            assert!(cut >= 0.20, "{} -> dulo-linux: {:.1} % ({:?} {:?})", base.policy, cut * 100.0, base, d);
            assert!(d.random_share < base.random_share && d.mean_sequence > base.mean_sequence, "{base:?} {d:?}");
        }
    }

    /// Figure 5's trends for the paper's prototype (DULO on Linux's inactive list) on the mixed
    /// workload: longer disk sequences, fewer random ones, less I/O and elapsed time than both
    /// LRU and Linux, at a hit ratio within 2 points.
    #[test]
    fn mixed_workload_gets_longer_sequences_and_less_time() {
        let ms = run_workload(&quarter(mixed()), &[12_288], &QUARTER, &Progress::none()).unwrap();
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
            let ms = run_workload(&w, &[12_288], &QUARTER, &Progress::none()).unwrap();
            let l = &ms[0];
            for d in &ms[2..] {
                assert!((d.elapsed_ms / l.elapsed_ms - 1.0).abs() < 0.05, "{l:?} {d:?}");
                assert!((d.hit_ratio - l.hit_ratio).abs() < 0.02);
            }
            assert!(l.cdf.windows(2).all(|w| w[0].1 <= w[1].1), "a CDF never decreases");
        }
    }
}
