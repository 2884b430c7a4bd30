//! The one-pass LRU miss-ratio curve of `iostack analyze` equals LRU simulation at every cache
//! size probed, on the real traces in ../shared, in object mode (unit size) and in block mode.

use iostack::engine::sim::{simulate, Mode};
use iostack::metrics::{analyze, AnalysisConfig, Granularity};
use iostack::testing::shared_path;
use iostack::trace::{self, read_all, ReaderOptions, VecReader};

const TRACES: &[&str] = &[
    "traces/msr_cambridge/msr-cambridge1-sample.csv",
    "traces/cloudphysics/cloudPhysicsIO.vscsi",
    "traces/umass_spc/wsrch-small.trace",
    "traces/tencent_cbs/cloud_storage-sample.bz2",
    "traces/systor17/systor17-traces-sample.csv.gz",
    "traces/blkparse/blktrace.txt",
    "traces/arc/OLTP.lis.zst",
];

fn check(rel: &str) {
    let Some(path) = shared_path(rel) else { return };
    let mut reader = trace::open(&path, None, &ReaderOptions::default()).unwrap();
    let requests = read_all(&mut *reader).unwrap();
    assert!(!requests.is_empty(), "{rel}");
    for (granularity, mode) in [(Granularity::Object, Mode::Object { unit_size: true }), (Granularity::Bytes(4096), Mode::Block { page_size: 4096 })] {
        // Probe sizes spread over the curve, from one entry to past the footprint.
        let full = analyze(&mut VecReader::new(requests.clone()), AnalysisConfig { granularity, ..Default::default() }).unwrap();
        let footprint = full.footprint_units;
        let mut sizes: Vec<u64> = vec![1, 2, 3, footprint / 100, footprint / 20, footprint / 7, footprint / 3, footprint - 1, footprint, footprint + 10];
        sizes.retain(|&s| s > 0);
        sizes.sort();
        sizes.dedup();
        let rep = analyze(&mut VecReader::new(requests.clone()), AnalysisConfig { granularity, mrc_sizes: Some(sizes.clone()), ..Default::default() }).unwrap();
        for (i, &c) in sizes.iter().enumerate() {
            let sim = simulate(&mut VecReader::new(requests.clone()), "lru", c, mode).unwrap();
            let (misses, total) = match mode {
                Mode::Object { .. } => (sim.requests - sim.hits, sim.requests),
                Mode::Block { .. } => (sim.blocks - sim.block_hits, sim.blocks),
            };
            assert_eq!(rep.mrc[i].cache_size, c);
            assert_eq!(rep.mrc[i].misses, misses, "{rel} {granularity:?} cache {c}");
            assert_eq!(rep.mrc[i].miss_ratio, misses as f64 / total as f64, "{rel} {granularity:?} cache {c}");
            if let Mode::Block { .. } = mode {
                let req = rep.mrc_requests.as_ref().unwrap();
                assert_eq!(req[i].misses, sim.requests - sim.hits, "{rel} requests, cache {c}");
            }
        }
    }
}

#[test]
fn mrc_equals_lru_simulation_on_shared_traces() {
    for rel in TRACES {
        check(rel);
    }
}
