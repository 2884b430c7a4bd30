//! The timed engine comes in three forms: the default stack (LRU, Linux readahead, C-SCAN, a
//! mechanical drive) with every component compiled in; LRU compiled in with the other
//! components behind trait objects; and every component behind a trait object (any other
//! policy, or one the caller made). They are the same code; these tests check that they give
//! the same reports.

use iostack::cache::lru::Lru;
use iostack::cache::{Access, Evicted, Key, Policy};
use iostack::engine::timed::{Replay, StackConfig, TimedRun};
use iostack::trace::{read_all, Request, VecReader};
use iostack::workload::{self, Common, GenParams};

/// LRU behind a type the engine does not know, so that it runs the all-trait-object form.
struct OpaqueLru(Lru);

impl Policy for OpaqueLru {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn capacity(&self) -> u64 {
        self.0.capacity()
    }
    fn occupied(&self) -> u64 {
        self.0.occupied()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn contains(&self, key: Key) -> bool {
        self.0.contains(key)
    }
    fn find(&mut self, a: &Access) -> bool {
        self.0.find(a)
    }
    fn insert(&mut self, a: &Access) {
        self.0.insert(a)
    }
    fn evict(&mut self, a: &Access) -> Option<Evicted> {
        self.0.evict(a)
    }
    fn remove(&mut self, key: Key) -> bool {
        self.0.remove(key)
    }
    fn metadata_bytes(&self) -> usize {
        self.0.metadata_bytes()
    }
}

/// Zipf references from several processes over files, a quarter of them writes, with
/// sequential stretches (objects of 16 KiB are four-page requests).
fn workload(seed: u64) -> Vec<Request> {
    let c = Common { requests: 30_000, objects: 6_000, object_size: 16_384, seed, write_ratio: 0.25, processes: 3, files: 24, ..Default::default() };
    let p = GenParams::new("zipf", [("alpha".to_string(), "0.7".to_string())]);
    read_all(&mut workload::build("zipf", &c, p).unwrap()).unwrap()
}

fn report_json(run: TimedRun, requests: Vec<Request>) -> serde_json::Value {
    let rep = run.run(&mut VecReader::new(requests)).unwrap();
    serde_json::to_value(&rep).unwrap()
}

#[test]
fn compiled_forms_and_the_trait_object_form_report_the_same() {
    let configs = [
        // The default stack: the fully compiled form.
        StackConfig { cache: "2MiB".into(), ..Default::default() },
        StackConfig { cache: "1MiB".into(), queue_depth: 3, think: "200us".into(), device: "hdd:wd7200".into(), ..Default::default() },
        // LRU compiled in, the rest behind trait objects.
        StackConfig { cache: "1MiB".into(), sched: "deadline".into(), queue_depth: 4, think: "50us".into(), ..Default::default() },
        StackConfig { cache: "4MiB".into(), replay: Replay::Open, prefetch: "pa:4".into(), device: "ssd:x25m".into(), ..Default::default() },
        StackConfig { cache: "512KiB".into(), write_policy: iostack::engine::timed::WritePolicy::Through, sched: "noop".into(), ..Default::default() },
    ];
    for (i, config) in configs.iter().enumerate() {
        let requests = workload(i as u64 + 1);
        let compiled = TimedRun::new(config).unwrap();
        let blocks = config.resolve().unwrap().cache_blocks;
        let device = iostack::engine::timed::build_device(&config.device).unwrap();
        let opaque = TimedRun::with_parts(config, Box::new(OpaqueLru(Lru::new(blocks))), device).unwrap();
        let a = report_json(compiled, requests.clone());
        let b = report_json(opaque, requests);
        assert!(a["cache"]["misses"].as_u64().unwrap() > 0 && a["device_requests"].as_u64().unwrap() > 0, "config {i} exercises the cache and the device");
        assert_eq!(a, b, "config {i}: the engine forms differ");
    }
}
