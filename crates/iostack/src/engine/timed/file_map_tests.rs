//! The file map in the timed engine: `obl:seq` reads a file's next block where the file system
//! put it, learned from the trace before the run, and a contiguous layout runs as without it.

use super::{run_built, StackConfig, TimedReport, TimedRun};
use crate::prefetch::file_map::FileMap;
use crate::trace::{FileRef, Request, TraceReader, VecReader};

const PAGE: u64 = 8192;
const MS: u64 = 1_000_000;

/// File 1 read whole, a block per request; its block i lies at `place(i)`. File 2 (never read)
/// fills the other blocks.
fn trace(blocks: u64, place: impl Fn(u64) -> u64) -> Vec<Request> {
    (0..blocks)
        .map(|i| {
            let mut r = Request::read(place(i) * PAGE, PAGE).at(i * 2 * MS);
            r.file = Some(FileRef { id: 1, offset: i * PAGE, size: Some(blocks * PAGE) });
            r
        })
        .collect()
}

fn config() -> StackConfig {
    StackConfig {
        device: "fixed:10ms".into(),
        sched: "noop".into(),
        prefetch: "obl:seq".into(),
        cache: "1000".into(),
        page_size: PAGE,
        think: "trace".into(),
        locality: false,
        ..Default::default()
    }
}

fn run(reqs: &[Request], map: Option<FileMap>) -> TimedReport {
    let mut run = TimedRun::new(&config()).unwrap();
    if let Some(m) = map {
        run.set_file_map(m);
    }
    run.run(&mut VecReader::new(reqs.to_vec())).unwrap()
}

/// (blocks read from the device, prefetches issued, prefetches used)
fn counts(r: &TimedReport) -> (u64, u64, u64) {
    (r.device.blocks_read, r.cache.prefetch_issued, r.cache.prefetch_used)
}

#[test]
fn obl_seq_reads_the_files_next_block_where_the_file_system_put_it() {
    // A fast file system's layout: the file's blocks every other block.
    let reqs = trace(20, |i| 100 + 2 * i);
    // After blocks 0 and 1 each access fetches the block after next: 18 prefetches, all used.
    assert_eq!(counts(&run(&reqs, None)), (20, 18, 18));
    // Through the file-reading path (a first pass over a reopened trace) too.
    let mut open = || -> Result<Box<dyn TraceReader>, crate::error::Error> { Ok(Box::new(VecReader::new(reqs.clone()))) };
    assert_eq!(counts(&run_built(TimedRun::new(&config()).unwrap(), &mut open, Vec::new()).unwrap()), (20, 18, 18));
    // Without the map (an empty one given): the device's next block, the other file's, is
    // fetched and never used, and every block of the file misses.
    assert_eq!(counts(&run(&reqs, Some(FileMap::default()))), (38, 18, 0));
}

#[test]
fn a_contiguous_layout_runs_as_without_the_map() {
    let reqs = trace(30, |i| 500 + i);
    let (learned, none) = (run(&reqs, None), run(&reqs, Some(FileMap::default())));
    assert_eq!(counts(&learned), (30, 28, 28));
    assert_eq!(serde_json::to_value(&learned).unwrap(), serde_json::to_value(&none).unwrap());
}
