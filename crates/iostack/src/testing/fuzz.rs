//! The bodies of the fuzz targets (`fuzz/`, cargo-fuzz): each takes arbitrary bytes and must
//! return without panicking or hanging. They live here, not in `fuzz/`, so that the regression
//! test (`tests/fuzz_regressions.rs`) replays every saved input under the normal test command.

use std::path::Path;

use crate::cache::{self, Access};
use crate::engine::timed::{self, StackConfig};
use crate::experiment::Experiment;
use crate::hints::{Hints, TraceFacts};
use crate::sched::SchedLimits;
use crate::trace::{self, BlkparseEvent, CsvMapping, ReaderOptions, Request, TraceReader, VecReader, FORMATS};

/// Every trace reader: the first byte picks the format (or detection), the second the reader
/// options and file name; the rest is the file. Requests returned must be within the ranges
/// readers promise.
pub fn trace_readers(data: &[u8]) {
    let [pick, opts, body @ ..] = data else { return };
    let format = FORMATS.get(*pick as usize % (FORMATS.len() + 1)).map(|f| f.format);
    let mut options = ReaderOptions { skip_invalid: opts & 1 != 0, ..Default::default() };
    options.blkparse_event = [BlkparseEvent::Queue, BlkparseEvent::Dispatch, BlkparseEvent::Complete][(*opts as usize >> 1) % 3];
    if opts & 8 != 0 {
        options.csv_mapping = CsvMapping::parse("time=0,offset=1,length=2,op=3,device=4,pid=5").ok();
    }
    let names = ["t.csv", "t.blkparse", "t.lis", "t.oracleGeneral.bin", "t.vscsi", "t.iostack", "t.spc", "t.txt"];
    let name = names[(*opts as usize >> 4) % names.len()];
    let Ok((mut reader, _)) = trace::open_bytes(Path::new(name), body.to_vec(), format, &options) else { return };
    let mut buf = Vec::new();
    for _ in 0..1000 {
        buf.clear();
        match reader.read_batch(&mut buf, 64) {
            Ok(0) | Err(_) => break,
            Ok(_) => {
                for r in &buf {
                    assert!(r.offset.checked_add(r.length).is_some());
                    assert!(r.length <= trace::parse::MAX_REQUEST_BYTES);
                    assert!(r.time_ns <= trace::parse::MAX_TIME_NS);
                }
            }
        }
    }
}

/// Format detection over any content, length and file name: a format or an error.
pub fn format_detection(data: &[u8]) {
    for name in ["t", "t.csv", "t.blkparse", "t.lis", "t.oracleGeneral", "t.vscsi.gz", "t.iostack.zst", "t.spc", "-"] {
        let _ = trace::format::detect(Path::new(name), data, Some(data.len() as u64));
        let _ = trace::format::detect(Path::new(name), data, None);
    }
}

/// A stack configuration (TOML or JSON): parsed, resolved, built and run over a few requests.
pub fn stack_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(mut config) = StackConfig::parse(text, "fuzz.toml") else { return };
    if config.resolve().is_err() {
        return;
    }
    config.locality = false;
    let reqs: Vec<Request> = (0..64u64).map(|i| Request::read((i * 7 % 23) * 4096, 8192).at(i * 1000)).collect();
    let mut open = move || -> Result<Box<dyn TraceReader>, crate::error::Error> { Ok(Box::new(VecReader::new(reqs.clone()))) };
    let _ = timed::run_trace(&config, &mut open, Vec::new());
}

/// Spec strings as users type them, `KIND|SPEC`: `p` policy, `f` prefetcher, `s` scheduler, `d`
/// device, `m` CSV mapping, `g` analysis granularity; anything else a size, a duration, a
/// policy and a device. A built policy serves a few references.
pub fn spec_strings(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (kind, spec) = text.split_once('|').unwrap_or(("", text));
    match kind {
        "p" => {
            for cap in [1u64, 7, 4096] {
                if let Ok(mut p) = cache::build(spec, cap) {
                    for i in 0..200u64 {
                        p.get(&Access::unit(i * 31 % 97, i));
                    }
                }
            }
        }
        "f" => drop(crate::prefetch::build(spec, 4096)),
        "s" => drop(crate::sched::build(spec, SchedLimits::new(128, 4096))),
        "d" => drop(crate::device::build(spec)),
        "m" => drop(CsvMapping::parse(spec)),
        "g" => drop(crate::metrics::Granularity::parse("--page-size", spec)),
        _ => {
            let _ = crate::units::Size::parse("--cache", spec);
            let _ = crate::units::parse_duration_ns("--think", spec);
            let _ = cache::build(spec, 64);
            let _ = crate::device::build(spec);
        }
    }
}

/// A hints file: the first byte picks the TOML form (`--hints h.toml`) or the inline JSON form
/// (the Python API's); the rest is the text. Hints that parse are checked against a small
/// trace's facts and turned into their initial caching calls; they must hold what the parser
/// promises (one table per pid, ordered ranges).
pub fn hints(data: &[u8]) {
    let [pick, body @ ..] = data else { return };
    let Ok(text) = std::str::from_utf8(body) else { return };
    let parsed = if pick & 1 == 0 { Hints::parse_toml(text, "fuzz.toml") } else { Hints::parse_json(text, "python") };
    let Ok(h) = parsed else { return };
    let mut facts = TraceFacts::default();
    for (i, pid) in [1u32, 2, 7].into_iter().enumerate() {
        let mut r = Request::read(i as u64 * 4096, 4096).at(i as u64);
        r.pid = pid;
        r.file = Some(crate::trace::FileRef { id: i as u64 + 7, offset: 0, size: None });
        facts.add(&r);
    }
    let _ = h.validate(&facts);
    for (i, p) in h.processes.iter().enumerate() {
        assert!(h.processes[..i].iter().all(|q| q.pid != p.pid));
        assert!(p.temp.iter().all(|t| t.first <= t.last));
        assert!(p.block_list.iter().all(|c| c.1 <= c.2));
        assert_eq!(p.initial_controls().len(), 1 + p.levels.len() + p.files.len());
    }
}

/// An experiment file (TOML or JSON) parsed and planned, without running it. Relative trace
/// paths and globs resolve inside a temporary folder holding three empty traces (`a.csv`,
/// `b.csv`, `sub/c.csv`); inputs naming an absolute path or `..` are passed over so that no
/// glob walks the machine's file system. The plan must number its points in order and hold one
/// point per trace and combination; grids past `MAX_POINTS` must be refused by the parser.
pub fn experiment(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let t = text.trim_start();
    let raw: Option<serde_json::Value> = if t.starts_with('{') { serde_json::from_str(t).ok() } else { toml::from_str(t).ok() };
    let Some(raw) = raw else { return };
    if let Some(traces) = raw.get("experiment").and_then(|e| e.get("traces")).and_then(|t| t.as_array()) {
        for tr in traces.iter().filter_map(|t| t.as_str()) {
            if !tr.starts_with("gen:") && (Path::new(tr).is_absolute() || tr.contains("..")) {
                return;
            }
        }
    }
    let Ok(exp) = Experiment::parse(text, "fuzz.toml", experiment_dir()) else { return };
    let expected = exp.point_count().expect("parse refuses grids past the limit");
    assert!(expected <= crate::experiment::MAX_POINTS);
    let tasks = exp.plan();
    let points: Vec<usize> = tasks.iter().flat_map(|t| t.points.iter().map(|p| p.index)).collect();
    assert_eq!(points.len(), expected);
    let mut sorted = points.clone();
    sorted.sort_unstable();
    assert!(sorted.iter().enumerate().all(|(i, &p)| i == p));
    for task in &tasks {
        let _ = serde_json::to_string(task).expect("a task serializes");
    }
}

/// The folder the experiment target resolves trace paths in (under the system's temporary
/// folder). Its name is fixed, so that every run and every process shares one folder instead of
/// leaving one behind per process; its files are empty and only created when missing, so
/// processes running at once cannot disturb each other.
fn experiment_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join("iostack-fuzz-experiment");
        std::fs::create_dir_all(dir.join("sub")).expect("a temporary folder");
        for f in ["a.csv", "b.csv", "sub/c.csv"] {
            let path = dir.join(f);
            if !path.exists() {
                std::fs::write(path, b"").expect("a trace file");
            }
        }
        dir
    })
}
