//! D-P2 (specs/acfs.md §4): controlled-aggressive prefetching's batch limits, checked at every
//! moment of a timed run with two processes, imperfect lists and LRU-SP.

use std::sync::{Arc, Mutex};

use rustc_hash::{FxHashMap, FxHashSet};

use super::engine::{Boundary, BoundaryObserver, Engine, EngineSettings};
use super::StackConfig;
use crate::engine::processes::{Processes as Tracking, TracePlan};
use crate::prefetch::ca::{ControlledAggressive, Params};
use crate::prefetch::{BlockPresence, CacheActions, Completion, DemandAccess, Fetch, ListBlock, ListCounts, Prefetcher};
use crate::trace::{FileRef, Request, VecReader};

const PAGE: u64 = 8192;
const B: usize = 8;

#[derive(Default)]
struct Log {
    /// The device stream so far (first blocks, in order).
    device: Vec<u64>,
    /// Each batch: its pid, blocks in the order issued, and the device stream's length then.
    batches: Vec<(u32, Vec<u64>, usize)>,
    /// Violations found while running.
    errors: Vec<String>,
}

struct DeviceLog(Arc<Mutex<Log>>);
impl BoundaryObserver for DeviceLog {
    fn observe(&mut self, r: &Request) {
        let mut log = self.0.lock().unwrap();
        for b in r.offset / PAGE..(r.offset + r.length) / PAGE {
            log.device.push(b);
        }
    }
    fn finish(&mut self) -> Result<serde_json::Value, String> {
        Ok(serde_json::Value::Null)
    }
}

/// `ca` with its every answer checked against D-P2.
struct Checked {
    inner: ControlledAggressive,
    lists: FxHashMap<u32, FxHashSet<u64>>,
    /// Each process's prefetches not yet completed (pCount is their number).
    fetched: FxHashMap<u32, FxHashSet<u64>>,
    /// Unpredicted demand misses (blocks not in the process's list), by process.
    unpredicted: FxHashMap<u32, Vec<u64>>,
    log: Arc<Mutex<Log>>,
}

impl Checked {
    fn check(&mut self, pid: u32, current: Option<u64>, cache: &dyn BlockPresence, out: &[Fetch]) {
        if out.is_empty() {
            return;
        }
        let mut log = self.log.lock().unwrap();
        let blocks: Vec<u64> = out.iter().map(|f| f.block).collect();
        let outstanding = self.fetched.get(&pid).map_or(0, |v| v.len());
        if outstanding != 0 {
            log.errors.push(format!("pid {pid}: a batch {blocks:?} started with pCount {outstanding}"));
        }
        if outstanding + out.len() > B || out.len() > B {
            log.errors.push(format!("pid {pid}: {} outstanding prefetches", outstanding + out.len()));
        }
        if !blocks.windows(2).all(|w| w[0] < w[1]) {
            log.errors.push(format!("pid {pid}: batch {blocks:?} not in ascending order"));
        }
        if let Some(u) = self.unpredicted.get(&pid).and_then(|v| v.iter().find(|&&b| cache.in_flight(0, b) || Some(b) == current)) {
            log.errors.push(format!("pid {pid}: batch {blocks:?} while the unpredicted miss of {u} is outstanding"));
        }
        let at = log.device.len();
        log.batches.push((pid, blocks.clone(), at));
        self.fetched.entry(pid).or_default().extend(blocks);
    }
}

impl Prefetcher for Checked {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn on_access(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        let listed = self.lists.get(&a.pid).is_some_and(|l| l.contains(&a.block));
        if !a.hit && !listed {
            self.unpredicted.entry(a.pid).or_default().push(a.block);
        }
        let n = out.len();
        self.inner.on_access(a, cache, out);
        let current = (!a.hit).then_some(a.block);
        self.check(a.pid, current, cache, &out[n..].to_vec());
    }
    fn on_complete(&mut self, done: &Completion, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        for b in done.block..done.block + done.blocks as u64 {
            for v in self.fetched.values_mut() {
                v.remove(&b);
            }
        }
        let n = out.len();
        self.inner.on_complete(done, cache, out);
        if out.len() > n {
            // The batch is for the process whose list names its blocks.
            let pid = *self.lists.iter().find(|(_, l)| l.contains(&out[n].block)).expect("a listed block").0;
            self.check(pid, None, cache, &out[n..].to_vec());
        }
    }
    fn file_of(&mut self, device: u32, block: u64) -> Option<crate::cache::FileBlock> {
        self.inner.file_of(device, block)
    }
    fn acts_on_cache(&self) -> bool {
        true
    }
    fn cache_actions(&mut self, out: &mut CacheActions) {
        self.inner.cache_actions(out)
    }
    fn wants_lists(&self) -> bool {
        true
    }
    fn set_lists(&mut self, lists: std::collections::BTreeMap<u32, Vec<ListBlock>>) {
        self.inner.set_lists(lists)
    }
    fn list_counts(&self) -> Vec<(u32, ListCounts)> {
        self.inner.list_counts()
    }
}

fn read(pid: u32, file: u64, block: u64, t: u64) -> Request {
    // File f's block b is at disk block f * 1000 + b.
    let mut r = Request::read((file * 1000 + block) * PAGE, PAGE).at(t);
    r.pid = pid;
    r.file = Some(FileRef { id: file, offset: block * PAGE, size: None });
    r
}

#[test]
fn batches_keep_the_limits_at_every_moment() {
    // Process 1 reads file 1 in a scattered listed order, with reads of file 3 its list does
    // not name; process 2 reads file 2 twice, sequentially, as listed, skipping 6 blocks the
    // second time.
    let mut trace = Vec::new();
    let order: Vec<u64> = (0..300u64).map(|i| (i * 37) % 300).collect();
    for i in 0..600u64 {
        if i < 300 {
            trace.push(read(1, 1, order[i as usize], 2 * i));
            if i % 25 == 7 {
                trace.push(read(1, 3, i, 2 * i));
            }
        }
        let b = i % 300;
        if i < 300 || b % 50 != 13 {
            trace.push(read(2, 2, b, 2 * i + 1));
        }
    }
    let hints = crate::hints::Hints::parse_toml(
        "[[process]]\npid = 1\npolicy = \"mru\"\nblock_list = [[1, 0, 299]]\n\
         [[process]]\npid = 2\npolicy = \"mru\"\nfile_list = [2, 2]\n",
        "h.toml",
    )
    .unwrap();
    // Process 1's list is in its own order of access.
    let mut hints = hints;
    hints.processes[0].block_list = order.iter().map(|&b| (1, b, b)).collect();
    let plan = TracePlan::scan(&mut VecReader::new(trace.clone()), Some(PAGE), false, true).unwrap();
    let lists = plan.access_lists(&hints);
    let log = Arc::new(Mutex::new(Log::default()));
    let mut ca = Checked {
        inner: ControlledAggressive::new(Params { b: B, ..Params::default() }),
        lists: lists.iter().map(|(&p, l)| (p, l.iter().map(|x| x.block).collect())).collect(),
        fetched: FxHashMap::default(),
        unpredicted: FxHashMap::default(),
        log: log.clone(),
    };
    ca.set_lists(lists);
    let config = StackConfig { cache: "64".into(), page_size: PAGE, think: "2ms".into(), device: "fixed:1ms".into(), ..Default::default() };
    let resolved = config.resolve().unwrap();
    let settings = EngineSettings { page_size: PAGE, queue_depth: 1, write_through: false, replay: config.replay, processes: config.processes, resolved };
    let policy = crate::cache::build("lrusp", resolved.cache_blocks).unwrap();
    let sched = crate::sched::build("noop", crate::sched::SchedLimits::new(128, PAGE)).unwrap();
    let device = crate::device::build(&config.device).unwrap();
    let mut e: Engine = Engine::new(settings, policy, Box::new(ca), vec![super::engine::Lane::new(None, sched, Vec::new(), device, PAGE)]);
    e.set_tracking(Tracking::controlled(Some(&crate::hints::HintsSpec::File(hints)), &plan));
    e.add_observer(Boundary::Device, Box::new(DeviceLog(log.clone())));
    e.run(&mut VecReader::new(trace)).unwrap();
    let log = log.lock().unwrap();
    assert!(log.errors.is_empty(), "{:?}", &log.errors[..log.errors.len().min(5)]);
    assert!(log.batches.len() > 20, "{} batches", log.batches.len());
    assert!(log.batches.iter().any(|b| b.1.len() > 1));
    // Each batch reaches the device in ascending block order.
    for (pid, blocks, at) in log.batches.iter() {
        let seen: Vec<u64> = log.device[*at..].iter().copied().filter(|b| blocks.contains(b)).take(blocks.len()).collect();
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "pid {pid}: batch {blocks:?} reached the device as {seen:?}");
    }
    let reports = e.process_reports();
    let h1 = reports[0].hints.unwrap();
    assert_eq!(h1.unpredicted, 12, "the reads of file 3");
    assert!(h1.matched >= 290, "{h1:?}");
    let h2 = reports[1].hints.unwrap();
    assert_eq!(h2.skipped, 6, "the blocks process 2 passes over: {h2:?}");
    assert_eq!(h2.unpredicted, 0);
    assert!(h2.flushed > 0 && e.c.cache.prefetch_flushed == h2.flushed, "false prefetches flushed: {h2:?}");
    assert!(e.c.cache.prefetch_issued > 300);
}
