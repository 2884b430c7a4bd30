//! The hooks the engine calls for schedulers and prefetchers, checked against their contracts
//! with components that count.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use super::engine::{Engine, EngineSettings};
use super::StackConfig;
use crate::prefetch::{BlockPresence, Completion, DemandAccess, Fetch, Prefetcher};
use crate::sched::{IoRequest, Scheduler};
use crate::trace::{read_all, Op, VecReader};
use crate::workload::{self, Common, GenParams};

/// Noop scheduling, counting dispatches and completions; checks that every completion is of a
/// request it dispatched and that the engine asks for work after it.
struct CountingSched {
    inner: Box<dyn Scheduler>,
    out: Vec<IoRequest>,
    counts: Arc<[AtomicU64; 3]>,
    asked_since_completion: bool,
}

impl Scheduler for CountingSched {
    fn name(&self) -> String {
        "counting".into()
    }
    fn add(&mut self, req: IoRequest, now_ns: u64) {
        self.inner.add(req, now_ns)
    }
    fn dispatch(&mut self, now_ns: u64) -> Option<IoRequest> {
        self.asked_since_completion = true;
        let r = self.inner.dispatch(now_ns)?;
        self.out.push(r);
        self.counts[0].fetch_add(1, Ordering::Relaxed);
        Some(r)
    }
    fn queued(&self) -> usize {
        self.inner.queued()
    }
    fn merges(&self) -> u64 {
        self.inner.merges()
    }
    fn completed(&mut self, req: &IoRequest, _now_ns: u64) {
        let i = self.out.iter().position(|r| r == req).expect("a completion of a dispatched request");
        self.out.swap_remove(i);
        self.counts[1].fetch_add(1, Ordering::Relaxed);
        // With requests queued, the engine must have asked for work after the previous completion.
        if self.inner.queued() == 0 || self.asked_since_completion {
            self.counts[2].fetch_add(1, Ordering::Relaxed);
        }
        self.asked_since_completion = self.inner.queued() == 0;
    }
}

/// Fetches the 4 blocks after every completed read of its own (a chained readahead), checking
/// that completed blocks are no longer in flight.
struct ChainOnComplete {
    completions: Arc<AtomicU64>,
    chained: Arc<AtomicU64>,
}

impl Prefetcher for ChainOnComplete {
    fn name(&self) -> String {
        "chain".into()
    }
    fn on_access(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, _out: &mut Vec<Fetch>) {
        // A block hit while in flight is in flight for the presence too.
        assert_eq!(a.in_flight, a.hit && cache.in_flight(a.device, a.block), "{a:?}");
    }
    fn on_complete(&mut self, done: &Completion, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        self.completions.fetch_add(1, Ordering::Relaxed);
        // A completed read ends the flight of its blocks. (A written-back block may be read
        // again, and be in flight, while its write completes.)
        if done.op == Op::Read {
            for b in done.block..done.block + done.blocks as u64 {
                assert!(!cache.in_flight(done.device, b), "{done:?}");
            }
        }
        if done.op == Op::Read && done.block % 64 < 32 {
            self.chained.fetch_add(1, Ordering::Relaxed);
            out.push(Fetch { device: done.device, block: done.block + done.blocks as u64, blocks: 4, marker: None });
        }
    }
}

fn trace() -> Vec<crate::trace::Request> {
    let c = Common { requests: 20_000, objects: 4_000, object_size: 8192, seed: 5, write_ratio: 0.2, processes: 3, files: 8, ..Default::default() };
    read_all(&mut workload::build("zipf", &c, GenParams::new("zipf", [("alpha".to_string(), "0.8".to_string())])).unwrap()).unwrap()
}

fn engine(config: &StackConfig, prefetcher: Box<dyn Prefetcher>, sched: Box<dyn Scheduler>) -> Engine {
    let resolved = config.resolve().unwrap();
    let settings = EngineSettings {
        page_size: config.page_size,
        queue_depth: config.queue_depth,
        write_through: false,
        replay: config.replay,
        processes: config.processes,
        resolved,
    };
    let policy = crate::cache::build(&config.policy, resolved.cache_blocks).unwrap();
    let device = crate::device::build(&config.device).unwrap();
    Engine::new(settings, policy, prefetcher, sched, Vec::new(), device)
}

#[test]
fn the_scheduler_hears_each_dispatched_request_complete_once() {
    for depth in [1, 4] {
        let config = StackConfig { cache: "1MiB".into(), queue_depth: depth, think: "50us".into(), ..Default::default() };
        let counts: Arc<[AtomicU64; 3]> = Default::default();
        let limits = crate::sched::SchedLimits { max_blocks: 128 };
        let sched = CountingSched { inner: crate::sched::build("noop", limits).unwrap(), out: Vec::new(), counts: counts.clone(), asked_since_completion: true };
        let prefetcher = crate::prefetch::build("linux", 4096).unwrap();
        let mut e = engine(&config, prefetcher, Box::new(sched));
        e.run(&mut VecReader::new(trace())).unwrap();
        let [dispatched, completed, then_asked] = [0, 1, 2].map(|i| counts[i].load(Ordering::Relaxed));
        assert!(dispatched > 1000);
        assert_eq!(dispatched, e.c.sched.requests_out);
        assert_eq!(completed, dispatched, "depth {depth}");
        assert_eq!(then_asked, completed, "depth {depth}: dispatch is asked after each completion");
    }
}

#[test]
fn the_prefetcher_hears_every_completion_and_its_fetches_are_issued() {
    let config = StackConfig { cache: "2MiB".into(), queue_depth: 2, ..Default::default() };
    let (completions, chained) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let prefetcher = ChainOnComplete { completions: completions.clone(), chained: chained.clone() };
    let sched = crate::sched::build("cscan", crate::sched::SchedLimits { max_blocks: 128 }).unwrap();
    let mut e = engine(&config, Box::new(prefetcher), sched);
    e.run(&mut VecReader::new(trace())).unwrap();
    assert_eq!(completions.load(Ordering::Relaxed), e.c.device.requests);
    // The fetches asked for at completion were issued (those not already cached or in flight).
    assert!(chained.load(Ordering::Relaxed) > 100);
    assert!(e.c.cache.prefetch_issued > 0);
    assert_eq!(e.c.device.blocks_read, e.c.cache.demand_fetched + e.c.cache.prefetch_issued);
}
