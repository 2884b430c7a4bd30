//! The block-layer stage between the page cache and the scheduler (`iostack::blk`): small real
//! stages exercising each part of its contract.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use iostack::blk::{BlockStage, StageActions, Submit};
use iostack::device::Service;
use iostack::engine::timed::{Replay, StackConfig, TimedRun};
use iostack::sched::IoRequest;
use iostack::trace::{read_all, Op, Request, VecReader};
use iostack::workload::{self, Common, GenParams};

/// Counts what it sees and passes everything on.
#[derive(Default)]
struct Counting {
    seen: Arc<[AtomicU64; 4]>,
}

impl BlockStage for Counting {
    fn name(&self) -> String {
        "counting".into()
    }
    fn submit(&mut self, req: IoRequest, _now: u64, _out: &mut StageActions) -> Submit {
        assert!(req.blocks >= 1);
        self.seen[0].fetch_add(1, Ordering::Relaxed);
        Submit::Pass
    }
    fn dispatched(&mut self, _req: &IoRequest, service: &Service, now: u64) {
        assert!(service.start_ns >= now && service.finish_ns >= service.start_ns);
        self.seen[1].fetch_add(1, Ordering::Relaxed);
    }
    fn completed(&mut self, _req: &IoRequest, service: &Service, now: u64, _out: &mut StageActions) {
        assert_eq!(service.finish_ns.max(now), now);
        self.seen[2].fetch_add(1, Ordering::Relaxed);
    }
    fn report(&self) -> serde_json::Value {
        serde_json::json!({ "submitted": self.seen[0].load(Ordering::Relaxed) })
    }
}

fn workload(seed: u64) -> Vec<Request> {
    let c = Common { requests: 20_000, objects: 5_000, object_size: 16_384, seed, write_ratio: 0.25, processes: 3, files: 16, ..Default::default() };
    let p = GenParams::new("zipf", [("alpha".to_string(), "0.7".to_string())]);
    read_all(&mut workload::build("zipf", &c, p).unwrap()).unwrap()
}

fn json(rep: &iostack::engine::timed::TimedReport) -> serde_json::Value {
    serde_json::to_value(rep).unwrap()
}

#[test]
fn a_passing_stage_changes_nothing_and_sees_every_request() {
    for config in [
        StackConfig { cache: "1MiB".into(), ..Default::default() },
        StackConfig { cache: "2MiB".into(), sched: "deadline".into(), queue_depth: 4, think: "100us".into(), write_policy: iostack::engine::timed::WritePolicy::Through, ..Default::default() },
        StackConfig { cache: "1MiB".into(), replay: Replay::Open, device: "ssd:x25m".into(), policy: "arc".into(), ..Default::default() },
    ] {
        let plain = TimedRun::new(&config).unwrap().run(&mut VecReader::new(workload(3))).unwrap();
        let mut run = TimedRun::new(&config).unwrap();
        let stage = Counting::default();
        let seen = stage.seen.clone();
        run.set_stage(Box::new(stage));
        let staged = run.run(&mut VecReader::new(workload(3))).unwrap();
        let blk = staged.blk.clone().expect("a blk section");
        assert_eq!(seen[0].load(Ordering::Relaxed), staged.cache.requests_out);
        assert_eq!((blk.counts.requests_in, blk.counts.passed, blk.counts.taken), (staged.cache.requests_out, staged.cache.requests_out, 0));
        assert_eq!(seen[1].load(Ordering::Relaxed), staged.sched.requests_out);
        assert_eq!(seen[2].load(Ordering::Relaxed), staged.sched.requests_out);
        assert_eq!(blk.stage["submitted"], staged.cache.requests_out);
        // Everything else is as without the stage.
        let (mut a, mut b) = (json(&plain), json(&staged));
        b.as_object_mut().unwrap().remove("blk");
        b["resolved"].as_object_mut().unwrap().remove("blk");
        a["resolved"].as_object_mut().unwrap().remove("blk");
        assert_eq!(a, b);
    }
}

/// Serves every read inside `[lo, hi)` from its memory after `delay_ns`; passes the rest.
struct RamRange {
    lo: u64,
    hi: u64,
    delay_ns: u64,
}

impl BlockStage for RamRange {
    fn name(&self) -> String {
        format!("ram:{}-{}", self.lo, self.hi)
    }
    fn submit(&mut self, req: IoRequest, now: u64, out: &mut StageActions) -> Submit {
        if req.op == Op::Read && req.block >= self.lo && req.end() <= self.hi {
            out.serve(req, now + self.delay_ns);
            Submit::Take
        } else {
            Submit::Pass
        }
    }
}

fn one_block_reads(blocks: &[u64]) -> Vec<Request> {
    blocks.iter().map(|&b| Request { time_ns: 0, offset: b * 4096, length: 4096, pid: 1, device: 0, op: Op::Read, file: None }).collect()
}

fn small_stack() -> StackConfig {
    StackConfig { cache: "1MiB".into(), prefetch: "none".into(), sched: "noop".into(), device: "fixed:1ms".into(), locality: false, ..Default::default() }
}

#[test]
fn a_stage_serves_reads_from_its_memory_after_a_delay() {
    // 100 reads of distinct blocks inside the range (each served in 5 us), then 10 outside
    // (each read by the 1 ms device), then the first 100 again (cache hits).
    let mut blocks: Vec<u64> = (0..100).map(|i| 1000 + 3 * i).collect();
    blocks.extend((0..10).map(|i| 50_000 + 7 * i));
    blocks.extend((0..100).map(|i| 1000 + 3 * i));
    let mut run = TimedRun::new(&small_stack()).unwrap();
    run.set_stage(Box::new(RamRange { lo: 1000, hi: 2000, delay_ns: 5_000 }));
    let rep = run.run(&mut VecReader::new(one_block_reads(&blocks))).unwrap();
    let blk = rep.blk.unwrap();
    assert_eq!((blk.counts.taken, blk.counts.served, blk.counts.served_blocks, blk.counts.passed), (100, 100, 100, 10));
    assert_eq!(rep.device.requests, 10);
    assert_eq!(rep.cache.hits, 100);
    // Closed loop, one process: 100 x 5 us + 10 x 1 ms, and the hits take no time.
    assert_eq!(rep.elapsed_ns, 100 * 5_000 + 10 * 1_000_000);
    assert_eq!(rep.response.max_ns, 1_000_000);
    assert_eq!(rep.processes[0].device_requests, 10);
}

/// Replaces every read by the read of its aligned segment of `seg` blocks; a read inside a
/// segment already being read waits for that read (it takes it and does nothing more). Counts
/// the completions of its segment reads.
struct Segments {
    seg: u64,
    reading: Vec<(u64, u64)>,
    done: u64,
}

impl BlockStage for Segments {
    fn name(&self) -> String {
        format!("segments:{}", self.seg)
    }
    fn submit(&mut self, req: IoRequest, _now: u64, out: &mut StageActions) -> Submit {
        if req.op != Op::Read {
            return Submit::Pass;
        }
        let (lo, hi) = (req.block / self.seg * self.seg, req.end().div_ceil(self.seg) * self.seg);
        if self.reading.iter().any(|&(a, b)| a <= req.block && req.end() <= b) {
            return Submit::Take;
        }
        out.issue(IoRequest { block: lo, blocks: (hi - lo) as u32, ..req });
        self.reading.push((lo, hi));
        Submit::Take
    }
    fn completed(&mut self, req: &IoRequest, _service: &Service, _now: u64, _out: &mut StageActions) {
        let before = self.reading.len();
        self.reading.retain(|&(a, b)| !(req.block <= a && b <= req.end()));
        self.done += (before - self.reading.len()) as u64;
    }
    fn report(&self) -> serde_json::Value {
        serde_json::json!({ "segments_read": self.done })
    }
}

#[test]
fn a_stage_replaces_reads_by_segment_reads_and_their_completion_completes_the_originals() {
    // Two processes read interleaved blocks of the same two 16-block segments, open loop, all at
    // once: the first read of each segment issues the segment read, the others wait for it.
    let mut trace = Vec::new();
    for i in 0..16u64 {
        for (pid, base) in [(1u32, 0u64), (2, 64)] {
            trace.push(Request { time_ns: 0, offset: (base + i) * 4096, length: 4096, pid, device: 0, op: Op::Read, file: None });
        }
    }
    let mut c = small_stack();
    c.replay = Replay::Open;
    let mut run = TimedRun::new(&c).unwrap();
    run.set_stage(Box::new(Segments { seg: 16, reading: Vec::new(), done: 0 }));
    let rep = run.run(&mut VecReader::new(trace)).unwrap();
    let blk = rep.blk.unwrap();
    assert_eq!((blk.counts.taken, blk.counts.issued, blk.counts.issued_blocks), (32, 2, 32));
    assert_eq!(blk.stage["segments_read"], 2);
    assert_eq!((rep.device.requests, rep.device.blocks_read), (2, 32));
    // Every request completed when its segment did: the first segment at 1 ms, the second at 2.
    assert_eq!(rep.response.count, 32);
    assert_eq!(rep.elapsed_ns, 2_000_000);
}

/// Takes every read and does nothing: a broken stage.
struct BlackHole;

impl BlockStage for BlackHole {
    fn name(&self) -> String {
        "black-hole".into()
    }
    fn submit(&mut self, _req: IoRequest, _now: u64, _out: &mut StageActions) -> Submit {
        Submit::Take
    }
}

#[test]
fn a_stage_that_loses_requests_fails_the_run() {
    let mut run = TimedRun::new(&small_stack()).unwrap();
    run.set_stage(Box::new(BlackHole));
    let err = run.run(&mut VecReader::new(one_block_reads(&[1, 2, 3]))).unwrap_err().to_string();
    assert!(err.contains("never completed") && err.contains("black-hole"), "{err}");
}
