//! Accounting and safety properties of the timed engine on random traces and random stacks:
//! - every block read from the device was either demanded or counted as prefetched;
//! - every prefetched block is used, wasted, or still cached unused at the end;
//! - a block in flight is never read again before that read completes;
//! - every request completes;
//! - the same input and config give identical results.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::{Arc, Mutex};

use iostack::device::{Device, DeviceRequest, Service};
use iostack::engine::timed::{Boundary, BoundaryObserver, StackConfig, TimedReport, TimedRun};
use iostack::trace::{FileRef, Op, Request, VecReader};
use proptest::prelude::*;

const PAGE: u64 = 4096;

/// Records (first block, blocks, finish) of every read the device serves.
struct Recording {
    inner: Box<dyn Device>,
    reads: Arc<Mutex<Vec<(u64, u64, u64)>>>,
}
impl Device for Recording {
    fn name(&self) -> String {
        self.inner.name()
    }
    fn service(&mut self, r: &DeviceRequest, now: u64) -> Service {
        let s = self.inner.service(r, now);
        if r.op == Op::Read {
            self.reads.lock().unwrap().push((r.sector * 512 / PAGE, r.sectors * 512 / PAGE, s.finish_ns));
        }
        s
    }
    fn parameters(&self) -> serde_json::Value {
        self.inner.parameters()
    }
}

/// Records the time each block's read leaves the cache.
struct Issues(Rc<RefCell<Vec<(u64, u64)>>>);
impl BoundaryObserver for Issues {
    fn observe(&mut self, r: &Request) {
        if r.op == Op::Read {
            let mut v = self.0.borrow_mut();
            for b in r.offset / PAGE..(r.offset + r.length) / PAGE {
                v.push((b, r.time_ns));
            }
        }
    }
    fn finish(&mut self) -> Result<serde_json::Value, String> {
        Ok(serde_json::Value::Null)
    }
}

#[derive(Debug, Clone)]
struct Case {
    requests: Vec<Request>,
    config: StackConfig,
}

fn policies() -> Vec<&'static str> {
    iostack::cache::POLICIES
        .iter()
        .filter(|p| iostack::cache::build(p.name, 16).map(|x| !x.needs_future()).unwrap_or(false))
        .map(|p| p.name)
        .collect()
}

fn case() -> impl Strategy<Value = Case> {
    let req = (0u64..96, 1u64..6, 0u32..3, prop::bool::weighted(0.25), 0u64..3_000_000, prop::option::of(0u64..3));
    let reqs = prop::collection::vec(req, 1..160);
    let cfg = (
        0usize..16,
        8u64..64,
        prop::sample::select(vec!["none", "obl", "pm:2", "pa:3", "linux", "linux:max=64KiB"]),
        prop::sample::select(vec![
            "noop",
            "cscan",
            "sstf",
            "deadline:read_expire=5ms,write_expire=20ms",
            "batch:4",
            "cfq",
            "cfq:slice_idle=0ms,quantum=2,merge=process",
            "as",
            "anticipatory:antic_expire=2ms,plug=on",
            "noop:plug=1ms/3,merge=process",
        ]),
        prop::sample::select(vec!["fixed:2ms", "hdd:st3400620as", "ssd:x25m"]),
        1u32..4,
        prop::bool::ANY,
        prop::bool::ANY,
        prop::sample::select(vec!["none", "trace", "1ms"]),
        1u64..9,
    );
    (reqs, cfg).prop_map(|(reqs, (pi, cache, pf, sched, dev, qd, open, through, think, maxreq))| {
        let mut t = 0;
        let requests = reqs
            .into_iter()
            .map(|(block, len, pid, write, gap, file)| {
                t += gap;
                Request {
                    time_ns: t,
                    offset: block * PAGE,
                    length: len * PAGE,
                    pid,
                    device: 0,
                    op: if write { Op::Write } else { Op::Read },
                    // Three files of 32 blocks each over the first 96 blocks, when a file is given.
                    file: file.map(|_| FileRef { id: block / 32, offset: (block % 32) * PAGE, size: if block % 2 == 0 { Some(32 * PAGE) } else { None } }),
                }
            })
            .collect();
        let ps = policies();
        let config = StackConfig {
            policy: ps[pi % ps.len()].to_string(),
            cache: cache.to_string(),
            prefetch: pf.into(),
            sched: sched.into(),
            device: dev.into(),
            queue_depth: qd,
            max_request: maxreq.to_string(),
            replay: if open { iostack::engine::timed::Replay::Open } else { iostack::engine::timed::Replay::Closed },
            write_policy: if through { iostack::engine::timed::WritePolicy::Through } else { iostack::engine::timed::WritePolicy::Back },
            think: think.into(),
            dirty_expire: "3ms".into(),
            flush_interval: "1ms".into(),
            ..StackConfig::default()
        };
        Case { requests, config }
    })
}

fn run(c: &Case) -> (TimedReport, Vec<(u64, u64, u64)>, Vec<(u64, u64)>) {
    let reads = Arc::new(Mutex::new(Vec::new()));
    let issues = Rc::new(RefCell::new(Vec::new()));
    let dev = Recording { inner: iostack::device::build(&c.config.device).unwrap(), reads: reads.clone() };
    let mut run = TimedRun::with_device(&c.config, Box::new(dev)).unwrap();
    run.observe(Boundary::Cache, Box::new(Issues(issues.clone())));
    if run.wants_extents(true) {
        run.scan_extents(&mut VecReader::new(c.requests.clone())).unwrap();
    }
    let rep = run.run(&mut VecReader::new(c.requests.clone())).unwrap();
    let r = reads.lock().unwrap().clone();
    let i = issues.borrow().clone();
    (rep, r, i)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn accounting_holds(c in case()) {
        let (r, reads, issues) = run(&c);
        let cc = &r.cache;
        // Every block read from the device was demanded or prefetched.
        prop_assert_eq!(r.device.blocks_read, cc.demand_fetched + cc.prefetch_issued);
        // Every prefetched block is used, wasted, or still cached unused.
        prop_assert_eq!(cc.prefetch_issued, cc.prefetch_used + cc.prefetch_wasted + cc.prefetch_unused_at_end);
        // References split into hits and misses; every request completes.
        prop_assert_eq!(cc.accesses, cc.hits + cc.misses);
        prop_assert_eq!(r.response.count, r.front.requests);
        prop_assert_eq!(r.front.requests as usize, c.requests.len());
        prop_assert_eq!(r.processes.iter().map(|p| p.requests).sum::<u64>(), r.front.requests);
        // Writes: every block written back was dirty or written through.
        prop_assert_eq!(cc.writeback_blocks, cc.writeback_evict + cc.writeback_flush + cc.write_through);
        prop_assert_eq!(r.device.blocks_written, cc.writeback_blocks);
        // In flight: the k-th read of a block leaves the cache only after the (k-1)-th completed.
        let mut done: HashMap<u64, Vec<u64>> = HashMap::new();
        for (b, n, fin) in reads {
            for x in b..b + n {
                done.entry(x).or_default().push(fin);
            }
        }
        let mut issued: HashMap<u64, Vec<u64>> = HashMap::new();
        for (b, t) in issues {
            issued.entry(b).or_default().push(t);
        }
        for (b, ts) in &issued {
            let fs = done.get(b).cloned().unwrap_or_default();
            prop_assert_eq!(ts.len(), fs.len(), "block {} issued {:?} completed {:?}", b, ts, fs);
            for k in 1..ts.len() {
                prop_assert!(ts[k] >= fs[k - 1], "block {} read again at {} before its read completed at {}", b, ts[k], fs[k - 1]);
            }
        }
        if c.config.policy == "lru" {
            prop_assert_eq!(cc.side_evictions, 0);
        }
        prop_assert!(cc.side_evictions <= cc.evictions);
        prop_assert!(r.elapsed_ns <= r.end_ns);
        prop_assert!(r.device_busy_ns <= r.end_ns);
    }

    #[test]
    fn deterministic(c in case()) {
        let a = serde_json::to_string(&run(&c).0).unwrap();
        let b = serde_json::to_string(&run(&c).0).unwrap();
        prop_assert_eq!(a, b);
    }
}
