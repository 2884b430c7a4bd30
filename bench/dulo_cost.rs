//! DULO's cost per request against LRU's, in the same timed stack on the same trace, and the
//! block table's memory per cached block.
//!
//!     cargo run --release -p iostack --example dulo_cost
//!
//! The trace is the mixed file workload of `workload::mixed_files` (sequential scans, random
//! index reads, small files) with a fresh and an aged layout; the stack is Linux readahead,
//! C-SCAN and the WD 7200 rpm model. Each configuration runs `REPEAT` times and the smallest
//! CPU time of the thread counts (CPU time rather than wall-clock time, so that waiting for a
//! core taken by other processes is not counted; the run is single-threaded). Printed: ns per request for LRU and DULO, their ratio (the target is
//! at most 2), the policies' own cost (every block reference through `Policy::get`, demand only),
//! and per cached block at the end of that run: the block table's bytes in use, and the rest of
//! DULO's metadata (index, block slab, sequences, heap, sort buffer) next to LRU's.

/// CPU time consumed by the calling thread, in seconds.
#[cfg(target_os = "linux")]
fn cpu_time() -> f64 {
    #[repr(C)]
    struct Timespec {
        sec: i64,
        nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, tp: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut t = Timespec { sec: 0, nsec: 0 };
    // SAFETY: `t` is a valid, writable timespec and the clock id is Linux's.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    t.sec as f64 + t.nsec as f64 * 1e-9
}

/// Elsewhere, wall-clock time since the first call.
#[cfg(not(target_os = "linux"))]
fn cpu_time() -> f64 {
    static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    START.get_or_init(std::time::Instant::now).elapsed().as_secs_f64()
}

use iostack::cache::dulo::{Dulo, DuloParams};
use iostack::cache::{block_key, Access, Policy};
use iostack::engine::timed::{StackConfig, TimedRun};
use iostack::trace::{Request, VecReader};
use iostack::workload::mixed_files::MixedFilesConfig;

const REPEAT: usize = 5;

fn timed(policy: &str, cache: u64, reqs: &[Request]) -> (f64, f64) {
    let cfg = StackConfig {
        policy: policy.into(),
        cache: cache.to_string(),
        prefetch: "linux".into(),
        sched: "cscan".into(),
        device: "hdd:wd7200".into(),
        ..Default::default()
    };
    let mut best = f64::MAX;
    let mut hit = 0.0;
    for _ in 0..REPEAT {
        let run = TimedRun::new(&cfg).expect("stack");
        let mut reader = VecReader::new(reqs.to_vec());
        let t = cpu_time();
        let r = run.run(&mut reader).expect("run");
        best = best.min(cpu_time() - t);
        hit = r.hit_ratio;
    }
    (best * 1e9 / reqs.len() as f64, hit)
}

/// The policy alone: every block of every request through `get` (demand only).
fn policy_only(mut p: Box<dyn Policy>, keys: &[u64]) -> f64 {
    let t = cpu_time();
    for (i, &k) in keys.iter().enumerate() {
        p.get(&Access::unit(k, i as u64));
    }
    (cpu_time() - t) * 1e9 / keys.len() as f64
}

fn main() {
    println!(
        "{:<8} {:>7} {:>12} {:>12} {:>7} {:>10} {:>10} {:>7} {:>14} {:>12} {:>12}",
        "layout", "cache", "lru ns/req", "dulo ns/req", "ratio", "lru ns/blk", "dulo ns/blk", "ratio", "table B/block", "lru meta B", "dulo meta B"
    );
    for aged in [false, true] {
        let w = MixedFilesConfig { aged, ..Default::default() };
        let reqs = w.requests().expect("workload");
        let keys: Vec<u64> = reqs
            .iter()
            .flat_map(|r| {
                let (a, b) = r.block_range(4096);
                (a..b).map(|x| block_key(0, x))
            })
            .collect();
        for cache in [4096u64, 16_384, 65_536] {
            let (lru, _) = timed("lru", cache, &reqs);
            let (dulo, _) = timed("dulo", cache, &reqs);
            let lru_p = (0..REPEAT).map(|_| policy_only(iostack::cache::build("lru", cache).unwrap(), &keys)).fold(f64::MAX, f64::min);
            let dulo_p = (0..REPEAT).map(|_| policy_only(iostack::cache::build("dulo", cache).unwrap(), &keys)).fold(f64::MAX, f64::min);
            let mut d = Dulo::new(cache, DuloParams::scaled(cache));
            for (i, &k) in keys.iter().enumerate() {
                d.get(&Access::unit(k, i as u64));
            }
            let per_block = d.block_table_bytes() as f64 / d.len().max(1) as f64;
            let dulo_meta = (d.metadata_bytes() - d.stack().table().allocated_bytes()) as f64 / d.len().max(1) as f64;
            let mut lru_policy = iostack::cache::build("lru", cache).unwrap();
            for (i, &k) in keys.iter().enumerate() {
                lru_policy.get(&Access::unit(k, i as u64));
            }
            let lru_meta = lru_policy.metadata_bytes() as f64 / lru_policy.len().max(1) as f64;
            println!(
                "{:<8} {:>7} {:>12.0} {:>12.0} {:>7.2} {:>10.1} {:>10.1} {:>7.2} {:>14.1} {:>12.1} {:>12.1}",
                if aged { "aged" } else { "fresh" },
                cache,
                lru,
                dulo,
                dulo / lru,
                lru_p,
                dulo_p,
                dulo_p / lru_p,
                per_block,
                lru_meta,
                dulo_meta
            );
        }
    }
}
