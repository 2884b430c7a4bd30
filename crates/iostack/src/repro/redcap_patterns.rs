//! REDCAP's segment arithmetic on the paper's access patterns (González-Férez, Piernas and
//! Cortes, Computer Journal 59(10), 2016, §4 and §7.1; spec `specs/kdsim-redcap.md` D-R1).
//!
//! With REDCAP always on (no ADA), its paper cache of 512 segments of 128 KiB, one process and the
//! page cache out of the way (no readahead, a cache of 8 pages: none of these patterns re-reads a
//! block), the hits and misses follow from the patterns alone:
//! - TAC (a 1 GiB file read backward in 8 KiB requests): the first request of each 128 KiB segment
//!   misses and reads it, the 15 others hit: 8,192 misses, 122,880 hits of 131,072 (15/16, l.260),
//!   every block of the file read once (262,144);
//! - 8k-SR (read 4 KiB, skip 8 KiB): a segment of 32 blocks holds 10 or 11 of the requests, the
//!   first misses: 8,192 misses, 79,190 hits of 87,382 ("almost nine of every ten", l.270);
//! - 512k-SR (read 4 KiB, skip 512 KiB, four series at 0, 4, 8, 12 KiB): consecutive requests of
//!   a series are 129 blocks apart and a series returns to a segment only after the 512 segments
//!   of the cache have all been replaced, so no request hits: 8,132 misses of 8,132, 260,224
//!   blocks read (the paper: no improvement, REDCAP turned off, l.262-268).

use super::{Check, Figure, Progress, Report, ReproInfo, Series, Table};
use crate::engine::timed::{run_built, StackConfig, TimedRun};
use crate::workload::streams::{Merged, Placement, Stream};
use crate::workload::stride::Stride;
use crate::workload::tac::Tac;

/// One pattern's expected counts (spec D-R1): requests, segment misses, hits, blocks read.
struct Expected {
    name: &'static str,
    requests: u64,
    misses: u64,
    hits: u64,
    blocks_read: Option<u64>,
    /// The paper's own words on the hits.
    paper: &'static str,
}

const EXPECTED: [Expected; 3] = [
    Expected { name: "TAC", requests: 131_072, misses: 8_192, hits: 122_880, blocks_read: Some(262_144), paper: "15 of every 16 requests are REDCAP hits (l.260)" },
    Expected { name: "8k-SR", requests: 87_382, misses: 8_192, hits: 79_190, blocks_read: None, paper: "almost nine of every ten requests are hits (l.270)" },
    Expected { name: "512k-SR", requests: 8_132, misses: 8_132, hits: 0, blocks_read: Some(260_224), paper: "no improvement; REDCAP off almost always (l.262-268)" },
];

/// REDCAP's counts for one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub requests: u64,
    pub partials: u64,
    pub misses: u64,
    pub hits: u64,
    pub blocks_read: u64,
}

/// The stack: REDCAP as the paper's, the page cache bypassed.
pub fn stack() -> StackConfig {
    StackConfig {
        device: "hdd:st3400620as".into(),
        sched: "noop".into(),
        prefetch: "none".into(),
        cache: "8".into(),
        max_request: "128KiB".into(),
        locality: false,
        redcap: Some("size=64MiB,segment=128KiB,hit=5us".into()),
        ..Default::default()
    }
}

/// Runs one pattern's streams (built afresh by `streams`) through [`stack`].
pub fn run(streams: &dyn Fn() -> Vec<Stream>) -> Result<Counts, crate::error::Error> {
    let config = stack();
    let report = run_built(TimedRun::new(&config)?, &mut || Ok(Box::new(Merged::new("redcap-patterns", streams()))), Vec::new())?;
    let r = report.redcap.unwrap_or_default();
    let n = |k: &str| r[k].as_u64().unwrap_or(0);
    Ok(Counts { requests: n("requests"), partials: n("partials"), misses: n("misses"), hits: n("hits"), blocks_read: n("blocks_read") })
}

/// The three patterns on 1 GiB files, one process.
pub fn reproduce(progress: &Progress) -> Report {
    let patterns: [(&str, Box<dyn Fn() -> Vec<Stream>>); 3] = [
        ("TAC", Box::new(|| Tac::default().streams(1, &mut Placement::default()))),
        ("8k-SR", Box::new(|| Stride::sr8k().streams(1, &mut Placement::default()))),
        ("512k-SR", Box::new(|| Stride::sr512k().streams(1, &mut Placement::default()))),
    ];
    progress.expect(3);
    let (mut rows, mut checks, mut notes) = (Vec::new(), Vec::new(), Vec::new());
    let (mut paper_share, mut our_share) = (Vec::new(), Vec::new());
    for (i, ((name, streams), want)) in patterns.iter().zip(&EXPECTED).enumerate() {
        debug_assert_eq!(*name, want.name);
        let got = run(streams.as_ref());
        progress.step(name);
        let c = match got {
            Ok(c) => c,
            Err(e) => {
                notes.push(format!("{name}: {e}"));
                continue;
            }
        };
        let share = c.hits as f64 / c.requests.max(1) as f64;
        let want_share = want.hits as f64 / want.requests as f64;
        paper_share.push((i as f64, want_share));
        our_share.push((i as f64, share));
        rows.push(vec![
            name.to_string(),
            c.requests.to_string(),
            c.partials.to_string(),
            c.misses.to_string(),
            c.hits.to_string(),
            format!("{share:.4}"),
            c.blocks_read.to_string(),
        ]);
        checks.push(Check::new(
            format!("{name}: requests, segment misses, hits"),
            format!("{}, {}, {} ({})", want.requests, want.misses, want.hits, want.paper),
            format!("{}, {}, {}", c.requests, c.misses, c.hits),
            "exact",
            (c.requests, c.misses, c.hits) == (want.requests, want.misses, want.hits),
        ));
        if let Some(b) = want.blocks_read {
            checks.push(Check::eq(format!("{name}: blocks read by segment reads"), b, c.blocks_read));
        }
    }
    // l.302: 8k-SR's data, 1 of every 3 blocks of the 1 GiB file, is what stays in RAM.
    let sr8 = Stride::sr8k();
    let mib = sr8.count() as f64 * 4096.0 / (1 << 20) as f64;
    checks.push(Check::new("8k-SR: data the application reads (1 block of every 3)", "≈ 341 MB (l.302)", format!("{mib:.1} MiB"), "341 to 342 MiB", (341.0..342.0).contains(&mib)));
    notes.push("REDCAP always on (no ADA), 512 segments of 128 KiB, 5 us per 4 KiB block copied; one process; the page cache bypassed (no readahead, 8 pages, no pattern re-reads a block); noop on the HDD model: the counts do not depend on the device".into());
    Report {
        name: INFO.name.into(),
        title: INFO.title.into(),
        source: "González-Férez, Piernas, Cortes (papers/001), §4 and §7.1 (l.260-270); spec D-R1".into(),
        config: serde_json::json!({"stack": stack(), "file_size": 1u64 << 30, "processes": 1}),
        tables: vec![Table {
            title: "REDCAP on 1 GiB files, one process".into(),
            header: ["pattern", "requests", "partials", "segment misses", "hits", "hit share", "blocks read"].iter().map(|s| s.to_string()).collect(),
            rows,
        }],
        checks,
        notes,
        figures: vec![Figure::bar(
            "redcap-hit-share",
            "REDCAP hits per request, 1 GiB file, one process",
            "share of requests served from REDCAP",
            &["TAC", "8k-SR", "512k-SR"],
            vec![Series::paper("paper (spec D-R1)", paper_share), Series::iostack("iostack", our_share)],
        )],
    }
}

pub const INFO: ReproInfo = ReproInfo {
    name: "redcap-patterns",
    title: "REDCAP's segment arithmetic: TAC 15/16 hits, 8k-SR 79,190 of 87,382, 512k-SR none",
    quick: true,
    run: reproduce,
};

#[cfg(test)]
mod tests {
    use super::*;

    /// On a smaller file the arithmetic scales: TAC on 64 MiB (512 segments exactly fill the
    /// cache) has 15/16 hits; 512k-SR hits nothing on a file where a series touches more than
    /// 512 segments (more than 258 MiB), but hits when the next series comes back to segments
    /// still cached.
    #[test]
    fn smaller_files_follow_the_same_arithmetic() {
        let tac = run(&|| Tac { file_size: 64 << 20, ..Tac::default() }.streams(1, &mut Placement::default())).unwrap();
        assert_eq!((tac.requests, tac.misses, tac.hits, tac.blocks_read), (8192, 512, 7680, 16384));
        let sr = Stride { file_size: 300 << 20, ..Stride::sr512k() };
        let c = run(&|| sr.streams(1, &mut Placement::default())).unwrap();
        assert_eq!((c.requests, c.misses, c.hits), (sr.count(), sr.count(), 0));
        let sr = Stride { file_size: 64 << 20, ..Stride::sr512k() };
        let c = run(&|| sr.streams(1, &mut Placement::default())).unwrap();
        assert!(c.hits > sr.count() / 2, "{c:?}");
    }
}
