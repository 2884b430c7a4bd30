//! Locality probes of the timed stack: what each boundary sees.

use iostack::cache::{self, block_key, Access};
use iostack::engine::timed::{StackConfig, TimedRun};
use iostack::trace::{read_all, Request, VecReader};
use iostack::workload::{self, Common, GenParams};

/// A stream every reference of which hits: the cache is filled with the blocks beforehand, so
/// nothing crosses below the cache. The front end sees the references; the cache, scheduler
/// and device boundaries see none, and report zero references with absent affinities (JSON
/// `null`), not 0 or NaN.
#[test]
fn a_pure_hit_stream_reaches_no_boundary_below_the_cache() {
    let config = StackConfig { cache: "64".into(), prefetch: "none".into(), device: "fixed:1ms".into(), ..Default::default() };
    let mut policy = cache::build("lru", 64).unwrap();
    for (i, b) in (0..16u64).enumerate() {
        policy.insert(&Access::unit(block_key(0, b), i as u64));
    }
    let run = TimedRun::with_parts(&config, policy, iostack::device::build("fixed:1ms").unwrap()).unwrap();
    // Re-read the 16 blocks, one or two at a time, in a scattered order.
    let mut requests = Vec::new();
    for i in 0..2000u64 {
        let b = (i * 7) % 15;
        requests.push(Request::read(b * 4096, 4096 * (1 + i % 2)).at(i * 1000));
    }
    let rep = run.run(&mut VecReader::new(requests)).unwrap();
    assert_eq!(rep.cache.misses, 0);
    assert_eq!(rep.cache.hits, rep.cache.accesses);
    assert_eq!(rep.device_requests, 0);
    let l = rep.locality.as_ref().expect("locality is on by default");
    assert_eq!(l.front.requests, 2000);
    assert_eq!(l.front.references, 3000);
    for a in [l.front.stack_affinity, l.front.block_affinity] {
        assert!(a.mean.is_some_and(|m| m > 0.0 && m <= 1.0), "{a:?}");
        assert!(a.median.is_some_and(|m| m > 0.0 && m <= 1.0), "{a:?}");
    }
    for r in [&l.cache, &l.sched, &l.device] {
        assert_eq!((r.requests, r.references), (0, 0));
        assert_eq!((r.stack_affinity.mean, r.stack_affinity.median), (None, None));
        assert_eq!((r.block_affinity.mean, r.block_affinity.median), (None, None));
    }
    let v = serde_json::to_value(&rep).unwrap();
    for b in ["cache", "sched", "device"] {
        for a in ["stack_affinity", "block_affinity"] {
            assert!(v["locality"][b][a]["mean"].is_null() && v["locality"][b][a]["median"].is_null(), "{b} {a}: {}", v["locality"][b][a]);
        }
    }
    assert!(v["locality"]["front"]["stack_affinity"]["mean"].is_f64());
}

fn zipf_with_writes(seed: u64) -> Vec<Request> {
    let c = Common { requests: 20_000, objects: 5_000, seed, write_ratio: 0.25, files: 16, ..Default::default() };
    let p = GenParams::new("zipf", [("alpha".to_string(), "0.8".to_string())]);
    read_all(&mut workload::build("zipf", &c, p).unwrap()).unwrap()
}

/// The cache boundary sees exactly what leaves the cache: blocks fetched on demand, prefetched
/// and written back, in the requests the cache issues; the scheduler boundary the same blocks
/// after merging, and the device boundary what the scheduler dispatched.
#[test]
fn the_cache_boundary_carries_the_misses_prefetches_and_write_backs() {
    for (prefetch, sched, write_policy) in [("none", "noop", "back"), ("linux", "cscan", "back"), ("obl", "deadline", "through")] {
        let config = StackConfig {
            cache: "512".into(),
            prefetch: prefetch.into(),
            sched: sched.into(),
            device: "fixed:200us".into(),
            write_policy: serde_json::from_value(serde_json::json!(write_policy)).unwrap(),
            flush_interval: "50ms".into(),
            dirty_expire: "100ms".into(),
            ..Default::default()
        };
        let rep = TimedRun::new(&config).unwrap().run(&mut VecReader::new(zipf_with_writes(5))).unwrap();
        let c = &rep.cache;
        let l = rep.locality.as_ref().unwrap();
        let what = format!("{prefetch}/{sched}/{write_policy}");
        assert!(c.misses > 0 && c.writeback_blocks > 0, "{what}: the workload must miss and write back");
        assert_eq!(l.cache.references, c.demand_fetched + c.prefetch_issued + c.writeback_blocks, "{what}");
        assert_eq!(l.cache.requests, c.requests_out, "{what}");
        assert_eq!(l.cache.references, c.blocks_out, "{what}");
        assert_eq!(l.sched.references, rep.sched.blocks_out, "{what}");
        assert_eq!(l.sched.requests, rep.sched.requests_out, "{what}");
        assert_eq!(l.device.requests, rep.device_requests, "{what}");
        assert_eq!(l.device.references, rep.device.blocks_read + rep.device.blocks_written, "{what}");
        assert_eq!(l.front.requests, 20_000, "{what}");
    }
}

/// `locality = false` installs no probe and changes nothing else.
#[test]
fn locality_off_reports_none_and_the_same_counts() {
    let on = StackConfig { cache: "512".into(), device: "fixed:200us".into(), ..Default::default() };
    let off = StackConfig { locality: false, ..on.clone() };
    let a = TimedRun::new(&on).unwrap().run(&mut VecReader::new(zipf_with_writes(9))).unwrap();
    let b = TimedRun::new(&off).unwrap().run(&mut VecReader::new(zipf_with_writes(9))).unwrap();
    assert!(a.locality.is_some() && b.locality.is_none());
    assert_eq!((a.elapsed_ns, &a.cache, &a.device), (b.elapsed_ns, &b.cache, &b.device));
    assert!(serde_json::to_value(&b).unwrap()["locality"].is_null());
}
