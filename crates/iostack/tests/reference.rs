//! Agreement with libCacheSim 0.3.5 on the reference table in `../shared/reference/libcachesim.csv`
//! (see the README there for how it was made).
//!
//! Every row whose policy iostack has is simulated in object mode (unit size or sized, as the row
//! says) and compared with the reference to the precision the table prints, or within the
//! tolerance given below: the miss ratio always, the byte miss ratio in sized mode (with unit
//! sizes libCacheSim's byte miss ratio is its miss ratio, every object weighing one byte, while
//! iostack weighs requests by their real length). Rows of policies not registered yet are
//! skipped with a message.
//! Adding a policy is one line of [`ALGOS`].

use std::collections::HashMap;
use std::path::Path;

use iostack::cache;
use iostack::engine::future::next_use_positions;
use iostack::engine::sim::{reference_keys, Mode, SimRun};
use iostack::testing::shared_path;
use iostack::trace::{self, read_all, ReaderOptions, Request};

/// How close a row must come: to the digits the table prints, or within an absolute tolerance.
#[derive(Clone, Copy, Debug)]
enum Agreement {
    Exact,
    Within(f64),
}
use Agreement::*;

/// libCacheSim's algorithm name, iostack's policy spec (with the parameters the reference used,
/// see its README), and the agreement required in unit-size and in sized object mode.
const ALGOS: &[(&str, &str, Agreement, Agreement)] = &[
    ("LRU", "lru", Exact, Exact),
    ("FIFO", "fifo", Exact, Exact),
    ("Clock", "clock:bits=1", Exact, Exact),
    ("ARC", "arc", Exact, Exact),
    ("SLRU", "slru:segments=4", Exact, Exact),
    ("Belady", "belady", Exact, Exact),
    ("LFU", "lfu", Exact, Exact),
    ("TwoQ", "2q:kin=0.25,kout=0.5", Within(0.005), Within(0.005)),
    ("LIRS", "lirs:hir=0.01", Within(0.005), Within(0.005)),
    ("S3FIFO", "s3fifo:small=0.1,threshold=2", Within(0.005), Within(0.005)),
];

struct Row {
    trace: String,
    algo: String,
    cache_size: u64,
    unit_size: bool,
    miss_ratio: String,
    byte_miss_ratio: String,
}

fn parse_table(text: &str) -> Vec<Row> {
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("trace,algo,cache_size,unit_size,miss_ratio,byte_miss_ratio"), "unexpected header");
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            assert_eq!(f.len(), 6, "bad reference line `{l}`");
            Row {
                trace: f[0].to_string(),
                algo: f[1].to_string(),
                cache_size: f[2].parse().expect("cache_size"),
                unit_size: f[3] == "true",
                miss_ratio: f[4].to_string(),
                byte_miss_ratio: f[5].to_string(),
            }
        })
        .collect()
}

/// Whether `ours` agrees with the printed `reference`.
fn agrees(ours: f64, reference: &str, how: Agreement) -> bool {
    match how {
        Exact => {
            let decimals = reference.split_once('.').map_or(0, |(_, d)| d.len());
            format!("{ours:.decimals$}") == reference
        }
        Within(tol) => (ours - reference.parse::<f64>().expect("ratio")).abs() <= tol,
    }
}

/// Miss ratio and byte miss ratio of `spec` at `capacity` over `requests`.
fn simulate(requests: &[Request], spec: &str, capacity: u64, unit_size: bool) -> (f64, f64) {
    let mode = Mode::Object { unit_size };
    let mut run = SimRun::new(spec, capacity, mode).unwrap_or_else(|e| panic!("{spec}: {e}"));
    if run.needs_future() {
        run.set_future(next_use_positions(&reference_keys(requests, mode)));
    }
    for r in requests {
        run.feed(r, u64::MAX);
    }
    let c = &run.counts;
    (1.0 - c.hits as f64 / c.requests as f64, 1.0 - c.byte_hits as f64 / c.bytes as f64)
}

fn load(path: &Path) -> Vec<Request> {
    let mut r = trace::open(path, None, &ReaderOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    read_all(&mut *r).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn libcachesim_reference_table() {
    let Some(table) = shared_path("reference/libcachesim.csv") else { return };
    let rows = parse_table(&std::fs::read_to_string(&table).expect("read reference table"));
    assert!(!rows.is_empty());

    // Rows to run, grouped by trace so that each trace is read once.
    let mut jobs: Vec<(usize, &str, Agreement)> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let Some(&(_, spec, unit, sized)) = ALGOS.iter().find(|a| a.0 == row.algo) else {
            panic!("reference algorithm `{}` has no entry in ALGOS", row.algo);
        };
        let name = spec.split(':').next().unwrap();
        if cache::find_info(name).is_none() {
            eprintln!("skipped: {} {} {}: policy `{name}` is not registered yet", row.trace, row.algo, row.cache_size);
            continue;
        }
        jobs.push((i, spec, if row.unit_size { unit } else { sized }));
    }
    let mut traces: HashMap<&str, Vec<Request>> = HashMap::new();
    for &(i, _, _) in &jobs {
        let t = rows[i].trace.as_str();
        if !traces.contains_key(t) {
            let Some(p) = shared_path(&format!("traces/{t}")) else { return };
            traces.insert(t, load(&p));
        }
    }

    // Two workers: the rows are independent.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<(usize, f64, f64)> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut out = Vec::new();
                    loop {
                        let j = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&(i, spec, _)) = jobs.get(j) else { break };
                        let row = &rows[i];
                        let (mr, bmr) = simulate(&traces[row.trace.as_str()], spec, row.cache_size, row.unit_size);
                        out.push((j, mr, bmr));
                    }
                    out
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().unwrap()).collect()
    });

    let mut failures = Vec::new();
    let mut sorted = results;
    sorted.sort_by_key(|r| r.0);
    eprintln!("{:<48} {:<7} {:>10} {:>5}  {:>13} {:>13}  {:>13} {:>13}", "trace", "algo", "size", "unit", "miss ref", "miss iostack", "bytes ref", "bytes iostack");
    for (j, mr, bmr) in sorted {
        let (i, spec, how) = jobs[j];
        let row = &rows[i];
        // With unit sizes libCacheSim counts every object as one byte, so its byte miss ratio is
        // the miss ratio; iostack's counts the requests' real bytes. Compare it in sized mode.
        let ok = agrees(mr, &row.miss_ratio, how) && (row.unit_size || agrees(bmr, &row.byte_miss_ratio, how));
        eprintln!(
            "{:<48} {:<7} {:>10} {:>5}  {:>13} {:>13.10}  {:>13} {:>13.10}  {}",
            row.trace,
            row.algo,
            row.cache_size,
            row.unit_size,
            row.miss_ratio,
            mr,
            row.byte_miss_ratio,
            bmr,
            if ok { "ok" } else { "DIFFERS" }
        );
        if !ok {
            failures.push(format!(
                "{} {} ({spec}) at {} unit_size={}: miss {mr:.10} vs {}, byte miss {bmr:.10} vs {} (required: {how:?})",
                row.trace, row.algo, row.cache_size, row.unit_size, row.miss_ratio, row.byte_miss_ratio
            ));
        }
    }
    assert!(failures.is_empty(), "{} rows disagree with libCacheSim:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn arc_paper_oltp_lru_hit_ratio() {
    // Megiddo and Modha (FAST'03), Table VIII: LRU hits 32.83 % of OLTP with 1,000 pages.
    let Some(p) = shared_path("traces/arc/OLTP.lis.zst") else { return };
    let requests = load(&p);
    let (mr, _) = simulate(&requests, "lru", 1000, true);
    assert_eq!(format!("{:.2}", (1.0 - mr) * 100.0), "32.83");
}

#[test]
fn agreement_rules() {
    assert!(agrees(0.83795840941, "0.8379584094", Exact));
    assert!(!agrees(0.8379584096, "0.8379584094", Exact));
    assert!(agrees(0.79274, "0.7927", Exact));
    assert!(agrees(0.834, "0.830", Within(0.005)));
    assert!(!agrees(0.836, "0.830", Within(0.005)));
}
