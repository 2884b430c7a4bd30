//! DULO paper, Table I ("traditional" column): 20 references, an 8-block LRU cache, Linux-like
//! readahead, every disk request costing 9.5 ms (6.5 ms average seek + 3.0 ms average rotation
//! of the Hitachi Ultrastar 18ZX, DULO §2.1), no think time. The paper gives the cache contents
//! after every reference and the total, 95.0 ms. Blocks A-D are random one-block files on
//! different tracks; X1-X4 and Y1-Y4 are two four-block files, each contiguous on disk.

use std::sync::{Arc, Mutex};

use iostack::cache::lru::Lru;
use iostack::cache::{block_key, split_block_key, Access, Evicted, Key, Policy};
use iostack::engine::timed::{StackConfig, TimedRun};
use iostack::trace::{FileRef, Op, Request, VecReader};

/// An LRU the test can look into after the run.
struct Shared(Arc<Mutex<Lru>>);
impl Policy for Shared {
    fn name(&self) -> &str {
        "lru"
    }
    fn capacity(&self) -> u64 {
        self.0.lock().unwrap().capacity()
    }
    fn occupied(&self) -> u64 {
        self.0.lock().unwrap().occupied()
    }
    fn len(&self) -> usize {
        self.0.lock().unwrap().len()
    }
    fn contains(&self, key: Key) -> bool {
        self.0.lock().unwrap().contains(key)
    }
    fn find(&mut self, a: &Access) -> bool {
        self.0.lock().unwrap().find(a)
    }
    fn insert(&mut self, a: &Access) {
        self.0.lock().unwrap().insert(a)
    }
    fn evict(&mut self, a: &Access) -> Option<Evicted> {
        self.0.lock().unwrap().evict(a)
    }
    fn remove(&mut self, key: Key) -> bool {
        self.0.lock().unwrap().remove(key)
    }
    fn metadata_bytes(&self) -> usize {
        0
    }
}

const PAGE: u64 = 4096;

/// (name, file id, page in file, file pages, disk block)
fn layout() -> Vec<(&'static str, u64, u64, u64, u64)> {
    let mut v = vec![("A", 1, 0, 1, 1_000), ("B", 2, 0, 1, 50_000), ("C", 3, 0, 1, 90_000), ("D", 4, 0, 1, 130_000)];
    for (i, n) in ["X1", "X2", "X3", "X4"].into_iter().enumerate() {
        v.push((n, 5, i as u64, 4, 200_000 + i as u64));
    }
    for (i, n) in ["Y1", "Y2", "Y3", "Y4"].into_iter().enumerate() {
        v.push((n, 6, i as u64, 4, 300_000 + i as u64));
    }
    v
}

const STREAM: [&str; 20] = ["A", "B", "C", "D", "X1", "X2", "X3", "X4", "Y1", "Y2", "Y3", "Y4", "X1", "X2", "X3", "X4", "A", "B", "C", "D"];

/// Table I, "Traditional" column: the LRU queue after each reference, MRU first.
const ROWS: [&str; 20] = [
    "A", "B A", "C B A", "D C B A",
    "X4 X3 X2 X1 D C B A", "X2 X4 X3 X1 D C B A", "X3 X2 X4 X1 D C B A", "X4 X3 X2 X1 D C B A",
    "Y4 Y3 Y2 Y1 X4 X3 X2 X1", "Y2 Y4 Y3 Y1 X4 X3 X2 X1", "Y3 Y2 Y4 Y1 X4 X3 X2 X1", "Y4 Y3 Y2 Y1 X4 X3 X2 X1",
    "X1 Y4 Y3 Y2 Y1 X4 X3 X2", "X2 X1 Y4 Y3 Y2 Y1 X4 X3", "X3 X2 X1 Y4 Y3 Y2 Y1 X4", "X4 X3 X2 X1 Y4 Y3 Y2 Y1",
    "A X4 X3 X2 X1 Y4 Y3 Y2", "B A X4 X3 X2 X1 Y4 Y3", "C B A X4 X3 X2 X1 Y4", "D C B A X4 X3 X2 X1",
];

/// Table I, "Time(ms)" of the traditional column.
const COST_MS: [f64; 20] = [9.5, 9.5, 9.5, 9.5, 9.5, 0.0, 0.0, 0.0, 9.5, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 9.5, 9.5, 9.5, 9.5];

fn trace(n: usize) -> Vec<Request> {
    let l = layout();
    STREAM[..n]
        .iter()
        .map(|name| {
            let &(_, file, page, pages, block) = l.iter().find(|e| e.0 == *name).unwrap();
            Request {
                time_ns: 0,
                offset: block * PAGE,
                length: PAGE,
                pid: 1,
                device: 0,
                op: Op::Read,
                file: Some(FileRef { id: file, offset: page * PAGE, size: Some(pages * PAGE) }),
            }
        })
        .collect()
}

fn config() -> StackConfig {
    StackConfig {
        policy: "lru".into(),
        cache: "8".into(),
        prefetch: "linux".into(),
        sched: "noop".into(),
        device: "fixed:9.5ms".into(),
        think: "none".into(),
        ..StackConfig::default()
    }
}

fn run_prefix(n: usize) -> (iostack::engine::timed::TimedReport, Vec<String>) {
    let lru = Arc::new(Mutex::new(Lru::new(8)));
    let run = TimedRun::with_parts(&config(), Box::new(Shared(lru.clone())), iostack::device::build("fixed:9.5ms").unwrap()).unwrap();
    let report = run.run(&mut VecReader::new(trace(n))).unwrap();
    let l = layout();
    let names = lru
        .lock()
        .unwrap()
        .keys()
        .map(|k| {
            let (_, b) = split_block_key(k);
            l.iter().find(|e| e.4 == b).map(|e| e.0.to_string()).unwrap_or_else(|| format!("?{b}"))
        })
        .collect();
    (report, names)
}

#[test]
fn table1_cache_rows_and_costs() {
    let mut prev_elapsed = 0;
    for n in 1..=20 {
        let (report, rows) = run_prefix(n);
        assert_eq!(rows.join(" "), ROWS[n - 1], "cache after reference {n} ({})", STREAM[n - 1]);
        let cost = report.elapsed_ns - prev_elapsed;
        assert_eq!(cost, (COST_MS[n - 1] * 1e6) as u64, "time of reference {n} ({})", STREAM[n - 1]);
        prev_elapsed = report.elapsed_ns;
    }
}

#[test]
fn table1_total_is_95ms() {
    let (r, _) = run_prefix(20);
    assert_eq!(r.elapsed_ns, 95_000_000);
    // Ten disk requests: A-D twice, X and Y one four-block read each.
    assert_eq!(r.device_requests, 10);
    assert_eq!(r.device.blocks_read, 16);
    assert_eq!(r.device.sizes.get(&4), Some(&2));
    assert_eq!(r.device.sizes.get(&1), Some(&8));
    assert_eq!(r.cache.hits, 10);
    assert_eq!(r.cache.prefetch_issued, 6);
    assert_eq!(r.cache.prefetch_used, 6);
    assert_eq!(r.device_busy_ns, 95_000_000);
    let _ = block_key(0, 0);
}
