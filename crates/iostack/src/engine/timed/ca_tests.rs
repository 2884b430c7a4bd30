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

/// LRU-SP that records, for each frame taken for a prefetch, the block fetched, the block
/// given up and how many references had been made then; without `steer` it ignores the
/// temporary priorities (the prefetcher's steering of its victims).
struct Recording {
    inner: Box<dyn crate::cache::Policy>,
    steer: bool,
    /// Demand references made so far (the engine's `vtime` of the latest).
    now: u64,
    log: Arc<Mutex<Vec<(u64, u64, u64)>>>,
}

impl crate::cache::Policy for Recording {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn capacity(&self) -> u64 {
        self.inner.capacity()
    }
    fn occupied(&self) -> u64 {
        self.inner.occupied()
    }
    fn len(&self) -> usize {
        self.inner.len()
    }
    fn contains(&self, key: crate::cache::Key) -> bool {
        self.inner.contains(key)
    }
    fn find(&mut self, a: &crate::cache::Access) -> bool {
        if matches!(a.origin, crate::cache::Origin::Demand) {
            self.now = a.vtime;
        }
        self.inner.find(a)
    }
    fn insert(&mut self, a: &crate::cache::Access) {
        self.inner.insert(a)
    }
    fn evict(&mut self, a: &crate::cache::Access) -> Option<crate::cache::Evicted> {
        let e = self.inner.evict(a);
        if let (Some(v), crate::cache::Origin::Prefetch { .. }) = (&e, a.origin) {
            let (_, fetched) = crate::cache::split_block_key(a.key);
            let (_, victim) = crate::cache::split_block_key(v.key);
            self.log.lock().unwrap().push((self.now, fetched, victim));
        }
        e
    }
    fn remove(&mut self, key: crate::cache::Key) -> bool {
        self.inner.remove(key)
    }
    fn drain_side_evictions(&mut self, out: &mut Vec<crate::cache::Evicted>) {
        self.inner.drain_side_evictions(out)
    }
    fn has_side_evictions(&self) -> bool {
        self.inner.has_side_evictions()
    }
    fn metadata_bytes(&self) -> usize {
        self.inner.metadata_bytes()
    }
    fn application_controlled(&self) -> bool {
        self.inner.application_controlled()
    }
    fn next_file(&mut self, file: Option<crate::cache::FileBlock>) {
        self.inner.next_file(file)
    }
    fn control(&mut self, c: &crate::cache::CacheControl) -> bool {
        if !self.steer && matches!(c, crate::cache::CacheControl::SetTempPri { .. }) {
            return true;
        }
        self.inner.control(c)
    }
    fn process_exit(&mut self, pid: u32) {
        self.inner.process_exit(pid)
    }
    fn pinned(&self, key: crate::cache::Key) -> bool {
        self.inner.pinned(key)
    }
}

#[test]
fn a_prefetch_gives_up_only_blocks_used_after_the_block_it_fetches() {
    // R3, "do no harm" (l.172-183), through the prototype's victim rule (l.752-769): one
    // process loops 6 times over 300 blocks of one file in a 200-block cache, MRU, with its
    // whole run as its list, under single prefetches and batches of 8. Every frame a prefetch
    // takes must hold a block whose next reference comes after the fetched block's. Without
    // the temporary priorities that steer the victims, MRU gives up blocks prefetched and not
    // yet used, and the rule breaks.
    for (b, steer) in [(1, true), (8, true), (8, false)] {
        let trace: Vec<Request> = (0..1800u64).map(|i| read(1, 1, i % 300, 2 * i)).collect();
        let hints = crate::hints::Hints::parse_toml("[[process]]\npid = 1\npolicy = \"mru\"\nfile_list = [1, 1, 1, 1, 1, 1]\n", "h.toml").unwrap();
        let plan = TracePlan::scan(&mut VecReader::new(trace.clone()), Some(PAGE), false, true).unwrap();
        let mut ca = ControlledAggressive::new(Params { b, ..Params::default() });
        ca.set_lists(plan.access_lists(&hints));
        let config = StackConfig { cache: "200".into(), page_size: PAGE, think: "2ms".into(), device: "fixed:1ms".into(), ..Default::default() };
        let resolved = config.resolve().unwrap();
        let settings = EngineSettings { page_size: PAGE, queue_depth: 1, write_through: false, replay: config.replay, processes: config.processes, resolved };
        let log = Arc::new(Mutex::new(Vec::new()));
        let policy = Box::new(Recording { inner: crate::cache::build("lrusp", resolved.cache_blocks).unwrap(), steer, now: 0, log: log.clone() });
        let sched = crate::sched::build("noop", crate::sched::SchedLimits::new(128, PAGE)).unwrap();
        let device = crate::device::build(&config.device).unwrap();
        let mut e: Engine = Engine::new(settings, policy, Box::new(ca), vec![super::engine::Lane::new(None, sched, Vec::new(), device, PAGE)]);
        e.set_tracking(Tracking::controlled(Some(&crate::hints::HintsSpec::File(hints)), &plan));
        e.run(&mut VecReader::new(trace)).unwrap();
        // Reference p reads block p % 300 (file 1's block b is disk block 1000 + b).
        let next_use = |block: u64, from: u64| -> u64 {
            let b = block - 1000;
            let r = from % 300;
            let p = from - r + if b >= r { b - r } else { 300 + b - r };
            if p < 1800 { p } else { u64::MAX }
        };
        let log = log.lock().unwrap();
        assert!(log.len() > 100, "B = {b}: {} frames taken for prefetches", log.len());
        let harm: Vec<_> = log.iter().filter(|&&(now, f, v)| next_use(v, now) <= next_use(f, now)).collect();
        if !steer {
            assert!(harm.len() > 10, "B = {b}, no steering: {} of {} prefetches gave up a block needed first", harm.len(), log.len());
            continue;
        }
        assert!(harm.is_empty(), "B = {b}: {} of {} prefetches gave up a block needed first (references made, fetched, given up): {:?}", harm.len(), log.len(), &harm[..harm.len().min(5)]);
    }
}
