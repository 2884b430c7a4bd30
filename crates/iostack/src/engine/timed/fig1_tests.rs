//! D-F1t (specs/acfs.md §4): ACFS's Figure 1 in the timed engine. K = 2 blocks, a fetch takes
//! F = 4 ms, a reference 1 ms (the think time after it), A and B cached at the start, the
//! application's list = the whole reference string. Elapsed time ends at the last completion,
//! so it is the model's total (`repro acfs-fig1`) less one unit.
//!
//! Controlled-aggressive prefetching follows the theory here (fetch as soon as a block used
//! after the missing one can go: `trigger_min=1`, `loop_gt=0`, no reserve of free blocks), and
//! the block in use is pinned (`lrusp:pin_current=on`, J8). The no-prefetch runs give the
//! application its optimal replacement through its level policy (MRU for ABCA, LRU for ABCB).

use super::engine::{Engine, EngineSettings, Lane};
use super::StackConfig;
use crate::engine::processes::{Processes as Tracking, TracePlan};
use crate::prefetch::ca::{ControlledAggressive, Params};
use crate::prefetch::{none::NoPrefetch, BlockPresence, CacheActions, Completion, DemandAccess, Fetch, ListBlock, ListCounts, Prefetcher};
use crate::trace::{FileRef, Request, VecReader};

const PAGE: u64 = 8192;
const MS: u64 = 1_000_000;

/// `ca` without its completion hook: a batch can start only at an access.
struct NoHook(ControlledAggressive);

impl Prefetcher for NoHook {
    fn name(&self) -> String {
        self.0.name()
    }
    fn on_access(&mut self, a: &DemandAccess, cache: &dyn BlockPresence, out: &mut Vec<Fetch>) {
        self.0.on_access(a, cache, out)
    }
    fn on_complete(&mut self, _: &Completion, _: &dyn BlockPresence, _: &mut Vec<Fetch>) {}
    fn file_of(&mut self, device: u32, block: u64) -> Option<crate::cache::FileBlock> {
        self.0.file_of(device, block)
    }
    fn acts_on_cache(&self) -> bool {
        true
    }
    fn cache_actions(&mut self, out: &mut CacheActions) {
        self.0.cache_actions(out)
    }
    fn wants_lists(&self) -> bool {
        true
    }
    fn set_lists(&mut self, lists: std::collections::BTreeMap<u32, Vec<ListBlock>>) {
        self.0.set_lists(lists)
    }
    fn list_counts(&self) -> Vec<(u32, ListCounts)> {
        self.0.list_counts()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Prefetch {
    None,
    Ca,
    CaNoHook,
}

/// Elapsed ns of `refs` (letters; block A = file 1's block 0, ...) with A and B preloaded.
fn elapsed(refs: &str, level: &str, policy: &str, prefetch: Prefetch) -> u64 {
    let block = |c: char| (c as u8 - b'A') as u64;
    let trace: Vec<Request> = refs
        .chars()
        .enumerate()
        .map(|(i, c)| {
            let mut r = Request::read((1000 + block(c)) * PAGE, PAGE).at(i as u64 * MS);
            r.pid = 1;
            r.file = Some(FileRef { id: 1, offset: block(c) * PAGE, size: None });
            r
        })
        .collect();
    let list: Vec<String> = refs.chars().map(|c| format!("[1, {0}, {0}]", block(c))).collect();
    let hints = crate::hints::Hints::parse_toml(
        &format!("[[process]]\npid = 1\npolicy = \"{level}\"\nblock_list = [{}]\n", list.join(", ")),
        "h.toml",
    )
    .unwrap();
    let plan = TracePlan::scan(&mut VecReader::new(trace.clone()), Some(PAGE), false, true).unwrap();
    let ca = || {
        let mut ca = ControlledAggressive::new(Params { trigger_min: 1, loop_gt: 0, ..Params::default() });
        ca.set_lists(plan.access_lists(&hints));
        ca
    };
    let prefetcher: Box<dyn Prefetcher> = match prefetch {
        Prefetch::None => Box::new(NoPrefetch),
        Prefetch::Ca => Box::new(ca()),
        Prefetch::CaNoHook => Box::new(NoHook(ca())),
    };
    let config = StackConfig { cache: "2".into(), page_size: PAGE, think: "1ms".into(), device: "fixed:4ms".into(), ..Default::default() };
    let resolved = config.resolve().unwrap();
    let settings = EngineSettings { page_size: PAGE, queue_depth: 1, write_through: false, replay: config.replay, processes: config.processes, resolved };
    let policy = crate::cache::build(policy, resolved.cache_blocks).unwrap();
    let sched = crate::sched::build("noop", crate::sched::SchedLimits::new(128, PAGE)).unwrap();
    let device = crate::device::build(&config.device).unwrap();
    let mut e: Engine = Engine::new(settings, policy, prefetcher, vec![Lane::new(None, sched, Vec::new(), device, PAGE)]);
    e.set_tracking(Tracking::controlled(Some(&crate::hints::HintsSpec::File(hints)), &plan));
    e.preload(&[(0, 1000), (0, 1001)], 1);
    e.run(&mut VecReader::new(trace)).unwrap();
    e.c.elapsed_ns
}

#[test]
fn abca_no_prefetch_with_optimal_replacement() {
    // C replaces B at its miss (t = 2) and arrives at 6; A hits at 7. Model: 8.
    assert_eq!(elapsed("ABCA", "mru", "lrusp", Prefetch::None), 7 * MS);
}

#[test]
fn abca_controlled_aggressive_with_pinning() {
    // B in use at t = 1: C is fetched replacing A, arrives at 5; A is fetched at C's arrival
    // replacing B (C in use) and arrives at 9. Model: 10.
    assert_eq!(elapsed("ABCA", "mru", "lrusp:pin_current=on", Prefetch::Ca), 9 * MS);
}

#[test]
fn abca_without_pinning_replaces_the_block_in_use() {
    // C is fetched at A's own reference (t = 0) replacing A, arrives at 4; A is fetched then
    // and arrives at 8. Model (A evicted at t = 0): 9.
    assert_eq!(elapsed("ABCA", "mru", "lrusp", Prefetch::Ca), 8 * MS);
}

#[test]
fn abca_without_completion_hook_fetches_a_at_its_access() {
    // Nothing starts at C's arrival (t = 5): A is fetched as a demand miss at t = 6. Model: 11.
    assert_eq!(elapsed("ABCA", "mru", "lrusp:pin_current=on", Prefetch::CaNoHook), 10 * MS);
}

#[test]
fn abcb_prefetching_wins() {
    // No prefetch: C replaces A at t = 2, arrives at 6, B hits at 7 (model 8). CA: C is
    // fetched at t = 1 replacing A (B in use, needed before C at t = 0), arrives at 5, B hits
    // at 6 (model 7).
    assert_eq!(elapsed("ABCB", "lru", "lrusp", Prefetch::None), 7 * MS);
    assert_eq!(elapsed("ABCB", "lru", "lrusp:pin_current=on", Prefetch::Ca), 6 * MS);
}
