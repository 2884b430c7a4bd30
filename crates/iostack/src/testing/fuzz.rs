//! The bodies of the fuzz targets (`fuzz/`, cargo-fuzz): each takes arbitrary bytes and must
//! return without panicking or hanging. They live here, not in `fuzz/`, so that the regression
//! test (`tests/fuzz_regressions.rs`) replays every saved input under the normal test command.

use std::path::Path;

use crate::cache::{self, Access};
use crate::engine::timed::{self, StackConfig};
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
