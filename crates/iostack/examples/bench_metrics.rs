//! Timings behind `bench/bench_metrics.py`: the stack-distance engine, the one-pass LRU
//! miss-ratio curve, and LRU simulations of the same trace at several sizes.
//!
//! `cargo run --release -p iostack --example bench_metrics -- TRACE SIZE,SIZE,...`
//!
//! The trace is read into memory first (not timed), in object mode with unit sizes: one
//! reference per request, keyed by its offset, as `iostack sim --mode object --unit-size`. Then:
//! 1. the bare [`StackDistance`] engine over the keys;
//! 2. the full analysis ([`analyze`]: probe with block distance, affinities, series, and the MRC
//!    at every listed size);
//! 3. one LRU simulation per listed size ([`simulate`]), whose misses must equal the MRC's.
//!
//! Prints one JSON object; CPU time is the process's user+system time over each phase, which
//! stays meaningful on a machine shared with other jobs.

use std::time::Instant;

use iostack::engine::sim::{simulate, Mode};
use iostack::metrics::{analyze, AnalysisConfig, Granularity, StackDistance};
use iostack::trace::{self, read_all, ReaderOptions, VecReader};

fn cpu_seconds() -> f64 {
    // /proc/self/stat fields 14 and 15: utime and stime in clock ticks (100 per second on Linux).
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = s.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = after.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (tick(11) + tick(12)) / 100.0
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (w, c) = (Instant::now(), cpu_seconds());
    let v = f();
    (v, w.elapsed().as_secs_f64(), cpu_seconds() - c)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: bench_metrics TRACE SIZE,SIZE,...");
        std::process::exit(2);
    }
    let sizes: Vec<u64> = args[2].split(',').map(|s| s.trim().parse().expect("sizes are integers")).collect();
    let mut reader = trace::open(std::path::Path::new(&args[1]), None, &ReaderOptions::default()).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    let requests = read_all(&mut *reader).expect("readable trace");
    let n = requests.len() as f64;
    let keys: Vec<u64> = requests.iter().map(|r| r.offset).collect();

    let (checksum, sd_wall, sd_cpu) = timed(|| {
        let mut sd: StackDistance = StackDistance::with_capacity(1 << 20);
        let mut s = 0u64;
        for (i, &k) in keys.iter().enumerate() {
            if let Some(&ahead) = keys.get(i + 16) {
                sd.prefetch(ahead);
            }
            s = s.wrapping_add(sd.access(k).0.unwrap_or(1));
        }
        (s, sd.distinct())
    });

    let cfg = AnalysisConfig { granularity: Granularity::Object, mrc_sizes: Some(sizes.clone()), ..Default::default() };
    let (report, an_wall, an_cpu) = timed(|| analyze(&mut VecReader::new(requests.clone()), cfg).expect("analysis"));

    let mut sims = Vec::new();
    let mut sim_wall = 0.0;
    let mut sim_cpu = 0.0;
    for (i, &c) in sizes.iter().enumerate() {
        let (counts, w, cpu) = timed(|| simulate(&mut VecReader::new(requests.clone()), "lru", c, Mode::Object { unit_size: true }).expect("simulation"));
        sim_wall += w;
        sim_cpu += cpu;
        let misses = counts.requests - counts.hits;
        assert_eq!(misses, report.mrc[i].misses, "MRC and LRU simulation disagree at size {c}");
        sims.push(format!("{{\"cache_size\": {c}, \"miss_ratio\": {:.6}, \"wall_s\": {w:.3}}}", misses as f64 / counts.requests as f64));
    }
    println!(
        "{{\"requests\": {}, \"distinct\": {}, \"stack_distance\": {{\"wall_s\": {sd_wall:.3}, \"cpu_s\": {sd_cpu:.3}, \"refs_per_s_wall\": {:.0}, \"refs_per_s_cpu\": {:.0}}}, \"analyze\": {{\"wall_s\": {an_wall:.3}, \"cpu_s\": {an_cpu:.3}, \"refs_per_s_wall\": {:.0}}}, \"lru_sims\": {{\"sizes\": {}, \"wall_s\": {sim_wall:.3}, \"cpu_s\": {sim_cpu:.3}, \"runs\": [{}]}}, \"mrc_equals_sims\": true, \"checksum\": {}}}",
        requests.len(),
        checksum.1,
        n / sd_wall,
        n / sd_cpu.max(1e-9),
        n / an_wall,
        sizes.len(),
        sims.join(", "),
        checksum.0
    );
}
