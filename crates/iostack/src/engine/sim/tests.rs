use super::*;
use crate::trace::{Op, VecReader};

fn zipfish(n: usize, seed: u64) -> Vec<Request> {
    // A skewed key stream without a generator dependency: squares of a LCG make low keys hot.
    let mut x = seed;
    (0..n)
        .map(|i| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let u = (x >> 33) as f64 / (1u64 << 31) as f64;
            let key = (u * u * u * 5000.0) as u64;
            let mut r = Request::read(key * 4096, 4096 * (1 + (i as u64 % 3))).at(i as u64);
            if i % 7 == 0 {
                r.op = Op::Write;
            }
            r
        })
        .collect()
}

fn specs(policies: &[&str], sizes: &[u64]) -> Vec<RunSpec> {
    policies.iter().flat_map(|p| sizes.iter().map(move |&c| RunSpec { policy: p.to_string(), capacity: c })).collect()
}

#[test]
fn sweep_matches_single_runs_at_any_thread_count() {
    let reqs = zipfish(50_000, 3);
    let src = MemoryTrace::new(reqs.clone(), "mem");
    for mode in [Mode::Object { unit_size: true }, Mode::Object { unit_size: false }, Mode::Block { page_size: 4096 }] {
        let caps: Vec<u64> = match mode {
            Mode::Object { unit_size: false } => vec![100 << 12, 1000 << 12],
            _ => vec![10, 100, 1000],
        };
        let runs = specs(&["lru"], &caps);
        let mut outs = Vec::new();
        for threads in [1, 2, 3] {
            let mut cfg = SweepConfig::new(mode);
            cfg.threads = threads;
            cfg.batch_size = 777;
            let mut seen = 0;
            let out = sweep(&src, &runs, &cfg, 4096, &mut |n| seen = n).unwrap();
            assert_eq!(seen, 50_000);
            outs.push(out);
        }
        assert_eq!(outs[0], outs[1]);
        assert_eq!(outs[0], outs[2]);
        for (res, spec) in outs[0].iter().zip(&runs) {
            let counts = simulate(&mut VecReader::new(reqs.clone()), &spec.policy, spec.capacity, mode).unwrap();
            assert_eq!(res.requests, counts.requests);
            assert_eq!(res.hits, counts.hits);
            assert_eq!(res.miss_ratio, counts.miss_ratio());
            assert!(res.hits > 0 && res.hits < res.requests);
            assert_eq!(res.blocks.is_some(), matches!(mode, Mode::Block { .. }));
        }
        // Bigger caches miss less.
        assert!(outs[0].windows(2).all(|w| w[0].miss_ratio >= w[1].miss_ratio));
    }
}

#[test]
fn future_aware_runs_get_next_uses_in_both_modes() {
    let reqs = zipfish(20_000, 9);
    let src = MemoryTrace::new(reqs.clone(), "mem");
    for mode in [Mode::Object { unit_size: true }, Mode::Block { page_size: 4096 }] {
        let runs = specs(&["lru", "belady"], &[50, 500]);
        let mut cfg = SweepConfig::new(mode);
        cfg.threads = 3;
        let out = sweep(&src, &runs, &cfg, 4096, &mut |_| {}).unwrap();
        for (res, spec) in out.iter().zip(&runs) {
            let single = simulate(&mut VecReader::new(reqs.clone()), &spec.policy, spec.capacity, mode).unwrap();
            assert_eq!((res.hits, res.blocks.unwrap_or(0)), (single.hits, single.blocks), "{spec:?} {mode:?}");
        }
        // OPT never misses more than LRU at the same size.
        assert!(out[2].miss_ratio < out[0].miss_ratio && out[3].miss_ratio < out[1].miss_ratio, "{mode:?}");
    }
}

#[test]
fn relative_sizes_are_fractions_of_the_footprint() {
    let reqs = zipfish(20_000, 4);
    let src = MemoryTrace::new(reqs.clone(), "mem");
    for mode in [Mode::Object { unit_size: true }, Mode::Object { unit_size: false }, Mode::Block { page_size: 4096 }] {
        let fp = crate::engine::footprint::footprint(&mut VecReader::new(reqs.clone()), mode).unwrap();
        let policies = vec!["lru".to_string(), "belady".to_string()];
        let sizes = vec!["1%".to_string(), "0.1".to_string(), "50".to_string()];
        let out = sweep_sizes(&src, &policies, &sizes, &SweepConfig::new(mode), 4096, &mut |_| {}).unwrap();
        let caps = [fp / 100, fp / 10, 50];
        let absolute = sweep(&src, &specs(&["lru", "belady"], &caps), &SweepConfig::new(mode), 4096, &mut |_| {}).unwrap();
        for (i, (r, a)) in out.iter().zip(&absolute).enumerate() {
            assert_eq!((r.cache_size, r.hits, r.blocks), (a.cache_size, a.hits, a.blocks), "{mode:?} {i}");
            assert_eq!(r.cache_size_spec, sizes[i % 3]);
            assert_eq!(r.footprint, if i % 3 == 2 { None } else { Some(fp) });
        }
    }
}

#[test]
fn block_mode_counts_blocks() {
    // 0..8192 is two blocks; the second request touches block 1 only, the third spans 1..3.
    let reqs = vec![Request::read(0, 8192), Request::read(4096, 100), Request::read(4096, 8192)];
    let out = sweep(&MemoryTrace::new(reqs, "m"), &specs(&["lru"], &[10]), &SweepConfig::new(Mode::Block { page_size: 4096 }), 4096, &mut |_| {}).unwrap();
    let r = &out[0];
    assert_eq!((r.requests, r.hits, r.blocks, r.block_hits), (3, 1, Some(5), Some(2)));
    assert_eq!(r.cache_unit, "blocks");
    assert_eq!(r.cached_objects, 3);
}

#[test]
fn empty_trace_is_an_error() {
    let err = sweep(&MemoryTrace::new(vec![], "empty.csv"), &specs(&["lru"], &[10]), &SweepConfig::new(Mode::Object { unit_size: true }), 4096, &mut |_| {}).unwrap_err();
    assert_eq!(err.to_string(), "empty.csv: the trace has no requests");
}

#[test]
fn bad_configurations_are_rejected() {
    let src = MemoryTrace::new(zipfish(10, 1), "m");
    let cfg = SweepConfig::new(Mode::Object { unit_size: true });
    let e = sweep(&src, &specs(&["nosuch"], &[10]), &cfg, 4096, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("unknown policy `nosuch`") && e.contains("lru"), "{e}");
    let e = sweep(&src, &specs(&["lru"], &[0]), &cfg, 4096, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("--cache"), "{e}");
    let e = sweep(&src, &[], &cfg, 4096, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("no policy"), "{e}");
    let e = sweep(&src, &specs(&["lru"], &[1]), &SweepConfig::new(Mode::Block { page_size: 0 }), 0, &mut |_| {}).unwrap_err().to_string();
    assert!(e.contains("--page-size"), "{e}");
}

#[test]
fn reference_keys_follow_the_mode() {
    let reqs = vec![Request::read(0, 8192), Request::read(4096, 1)];
    let obj = reference_keys(&reqs, Mode::Object { unit_size: true });
    assert_eq!(obj, vec![0, 4096]);
    let blk = trace_reference_keys(&mut VecReader::new(reqs), Mode::Block { page_size: 4096 }).unwrap();
    assert_eq!(blk, vec![0, 1, 1]);
    assert_eq!(next_use_positions(&blk), vec![u64::MAX, 2, u64::MAX]);
}

#[test]
fn metadata_is_reported() {
    let out = sweep(&MemoryTrace::new(zipfish(20_000, 5), "m"), &specs(&["lru"], &[500]), &SweepConfig::new(Mode::Object { unit_size: true }), 4096, &mut |_| {}).unwrap();
    assert_eq!(out[0].cached_objects, 500);
    assert!(out[0].metadata_bytes_per_object > 8.0 && out[0].metadata_bytes_per_object < 200.0);
}

fn reads(offsets: &[u64], length: u64) -> Vec<Request> {
    offsets.iter().map(|&o| Request::read(o, length)).collect()
}

#[test]
fn belady_gets_next_uses_in_object_mode() {
    // Capacity 2: 1 2 miss; 3 evicts 2 (next used after 1); 1 hits; 2 evicts 1 (next used
    // after 3); 3 hits; 1 misses. LRU hits none of them.
    let reqs = reads(&[1, 2, 3, 1, 2, 3, 1], 1);
    let c = simulate(&mut VecReader::new(reqs.clone()), "belady", 2, Mode::Object { unit_size: true }).unwrap();
    assert_eq!((c.requests, c.hits), (7, 2));
    let c = simulate(&mut VecReader::new(reqs), "lru", 2, Mode::Object { unit_size: true }).unwrap();
    assert_eq!(c.hits, 0);
}

#[test]
fn belady_gets_next_uses_in_block_mode() {
    // Two-block requests on 4 KiB pages: blocks (0,1) (2,3) (0,1) with room for 3 blocks.
    // Block 3 is never used again, so Belady evicts it (or 2) and keeps 0 and 1: the third
    // request hits both blocks.
    let reqs = reads(&[0, 8192, 0], 8192);
    let c = simulate(&mut VecReader::new(reqs), "belady", 3, Mode::Block { page_size: 4096 }).unwrap();
    assert_eq!((c.blocks, c.block_hits, c.hits), (6, 2, 1));
}

#[test]
fn reference_keys_of_two_block_requests() {
    let reqs = reads(&[0, 8192], 8192);
    assert_eq!(reference_keys(&reqs, Mode::Object { unit_size: true }), vec![0, 8192]);
    assert_eq!(reference_keys(&reqs, Mode::Block { page_size: 4096 }), vec![0, 1, 2, 3]);
}
