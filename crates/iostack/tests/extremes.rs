//! Every parameter of every policy, prefetcher, scheduler and device, and every numeric field of
//! the stack configuration, given its extremes: each is either refused with a configuration
//! error or runs to the end. None may panic, and none may run for long (a case that does not
//! finish in seconds fails the test instead of hanging it).

use std::sync::mpsc;
use std::time::Duration;

use iostack::engine::sim::{simulate, Mode};
use iostack::engine::timed::{self, StackConfig};
use iostack::trace::{Op, Request, VecReader};

/// Values that break code that trusts its parameters.
const EXTREMES: &[&str] = &[
    "0", "1", "2", "3", "255", "65536", "4294967295", "4294967296", "9223372036854775807", "18446744073709551615",
    "18446744073709551616", "-1", "0.0", "0.5", "1.0", "1e308", "-1e308", "nan", "inf", "-inf", "1e-300", "",
];

fn trace() -> Vec<Request> {
    // A mix of sequential runs, repeats and random blocks on two devices, reads and writes.
    let mut v = Vec::new();
    let mut x: u64 = 7;
    for i in 0..400u64 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let block = if i % 3 == 0 { i } else { (x >> 33) % 300 };
        let mut r = Request::read(block * 4096, 4096 * (1 + (x >> 60) % 4)).at(i * 1_000_000);
        r.device = (i % 5 == 0) as u32;
        r.pid = (i % 3) as u32;
        if i % 7 == 0 {
            r.op = Op::Write;
        }
        v.push(r);
    }
    v
}

thread_local! {
    static FAILURES: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Fails the test with every case that panicked or did not finish.
fn check_failures() {
    let f = FAILURES.with(|f| std::mem::take(&mut *f.borrow_mut()));
    assert!(f.is_empty(), "{} cases failed:\n{}", f.len(), f.join("\n"));
}

/// Runs `f` on a thread; records a failure when it panics or takes longer than `secs` seconds.
fn finishes(what: &str, secs: u64, f: impl FnOnce() -> String + Send + 'static) -> String {
    let (tx, rx) = mpsc::channel();
    let what_owned = what.to_string();
    std::thread::spawn(move || {
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        let _ = tx.send(r.map_err(|e| {
            e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
        }));
        drop(what_owned);
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(msg)) => {
            FAILURES.with(|f| f.borrow_mut().push(format!("{what}: panicked: {msg}")));
            String::new()
        }
        Err(_) => {
            FAILURES.with(|f| f.borrow_mut().push(format!("{what}: still running after {secs} s")));
            String::new()
        }
    }
}

fn sim(spec: String, capacity: u64) -> String {
    finishes(&format!("sim {spec} capacity {capacity}"), 20, move || {
        let mut outcome = String::new();
        for mode in [Mode::Object { unit_size: true }, Mode::Object { unit_size: false }, Mode::Block { page_size: 4096 }] {
            match simulate(&mut VecReader::new(trace()), &spec, capacity, mode) {
                Ok(c) => outcome = format!("ok {}", c.hits),
                Err(e) => {
                    let m = e.to_string();
                    assert!(!m.is_empty());
                    outcome = format!("error {m}");
                }
            }
        }
        outcome
    })
}

fn run(what: String, set: impl FnOnce(&mut StackConfig) + Send + 'static) -> String {
    finishes(&what.clone(), 30, move || {
        let mut c = StackConfig::default();
        c.locality = false;
        set(&mut c);
        let reqs = trace();
        let mut open = move || -> Result<Box<dyn iostack::trace::TraceReader>, iostack::error::Error> { Ok(Box::new(VecReader::new(reqs.clone()))) };
        match timed::run_trace(&c, &mut open, Vec::new()) {
            Ok(r) => format!("ok {}", r.elapsed_ns),
            Err(e) => format!("error {e}"),
        }
    })
}

#[test]
fn policy_parameters_at_their_extremes() {
    let params: &[(&str, &[&str])] = &[
        ("slru", &["segments"]),
        ("clock", &["bits"]),
        ("s3fifo", &["small", "ghost", "threshold"]),
        ("lirs", &["hir"]),
        ("2q", &["kin", "kout"]),
        ("linux", &["ratio", "page", "shadows"]),
        ("dulo", &["bank", "evict", "corr", "distance", "seq_max", "table_kib", "hits"]),
        ("dulo-linux", &["bank", "evict", "distance", "seq_max", "table_kib"]),
        ("splitlru", &["up", "down"]),
    ];
    for (policy, keys) in params {
        for key in *keys {
            for v in EXTREMES {
                for cap in [1, 64] {
                    sim(format!("{policy}:{key}={v}"), cap);
                }
            }
        }
    }
    for p in iostack::cache::POLICIES {
        for cap in [1, 2, 3, 1 << 40, u64::MAX] {
            sim(p.name.to_string(), cap);
        }
    }
    check_failures();
}

#[test]
fn timed_components_at_their_extremes() {
    let mut specs: Vec<(&str, String)> = Vec::new();
    for v in EXTREMES {
        for p in ["pm", "pa", "pmlast"] {
            specs.push(("prefetch", format!("{p}:{v}")));
        }
        specs.push(("prefetch", format!("linux:max={v}")));
        specs.push(("prefetch", format!("linux:io={v}")));
        specs.push(("sched", format!("batch:{v}")));
        for key in ["read_expire", "write_expire", "fifo_batch", "writes_starved"] {
            specs.push(("sched", format!("deadline:{key}={v}")));
        }
        specs.push(("device", format!("fixed:{v}")));
        specs.push(("device", format!("fixed:{v}ms")));
        for key in iostack::device::hdd::KEYS {
            specs.push(("device", format!("hdd:st3400620as,{key}={v}")));
        }
        for key in iostack::device::ssd::KEYS {
            specs.push(("device", format!("ssd:x25m,{key}={v}")));
        }
    }
    for (field, spec) in specs {
        let s = spec.clone();
        run(format!("--{field} {spec}"), move |c| match field {
            "prefetch" => c.prefetch = s,
            "sched" => c.sched = s,
            _ => c.device = s,
        });
    }
    check_failures();
}

#[test]
fn stack_fields_at_their_extremes() {
    for v in EXTREMES {
        let v = v.to_string();
        for field in ["cache", "max_request", "think", "dirty_expire", "flush_interval"] {
            let s = v.clone();
            run(format!("{field} = {v}"), move |c| match field {
                "cache" => c.cache = s,
                "max_request" => c.max_request = s,
                "think" => c.think = s,
                "dirty_expire" => c.dirty_expire = s,
                _ => c.flush_interval = s,
            });
        }
        if let Ok(n) = v.parse::<u64>() {
            run(format!("page_size = {v}"), move |c| c.page_size = n);
            run(format!("seed = {v}"), move |c| c.seed = n);
            if let Ok(q) = u32::try_from(n) {
                run(format!("queue_depth = {v}"), move |c| c.queue_depth = q);
            }
        }
    }
    check_failures();
}

/// The first `cap` requests of a generated workload, or its configuration error.
fn generate(name: &'static str, common: iostack::workload::Common, params: Vec<(String, String)>, cap: usize) -> String {
    let what = format!("gen {name} {params:?} {common:?}");
    finishes(&what, 20, move || {
        let p = iostack::workload::GenParams::new(name, params);
        match iostack::workload::build(name, &common, p) {
            Ok(mut r) => {
                let mut n = 0;
                while n < cap {
                    match r.next_request() {
                        Ok(Some(_)) => n += 1,
                        Ok(None) => break,
                        Err(e) => return format!("read error {e}"),
                    }
                }
                format!("ok {n}")
            }
            Err(e) => format!("error {e}"),
        }
    })
}

#[test]
fn generator_parameters_at_their_extremes() {
    use iostack::workload::{Common, GENERATORS};
    let small = Common { requests: 2000, objects: 1000, ..Common::default() };
    let sizes = ["1PiB", "16EiB", "1e30", "1TiB", "4KiB", "1ns", "1s", "100000d", "0s", "yes", "0:0:0:0:0", "4294967295:1:1:1:1", "1025:1:1:1:1", "512k-sr"];
    let mut refused = 0;
    for g in GENERATORS {
        for (key, _) in g.params {
            for v in EXTREMES.iter().chain(&sizes) {
                let out = generate(g.name, small.clone(), vec![(key.to_string(), v.to_string())], 2000);
                if let Some(msg) = out.strip_prefix("error ") {
                    refused += 1;
                    // The error names the generator and, for a range, the parameter.
                    if !msg.contains(g.name) || (msg.contains("out of range") && !msg.contains(key)) {
                        FAILURES.with(|f| f.borrow_mut().push(format!("{} {key}={v}: unclear error: {msg}", g.name)));
                    }
                }
            }
        }
    }
    check_failures();
    assert!(refused > 100, "only {refused} extreme values refused");
}

#[test]
fn common_generator_options_at_their_extremes() {
    use iostack::workload::{Arrival, Common, GENERATORS};
    let values: &[u64] = &[0, 1, 2, 255, 65536, 65537, 1 << 24, (1 << 24) + 1, 1 << 40, (1 << 40) + 1, u32::MAX as u64, i64::MAX as u64, u64::MAX];
    let ratios: &[f64] = &[0.0, 1.0, -1.0, 1.5, f64::NAN, f64::INFINITY, -f64::INFINITY, 1e-300];
    let base = Common { requests: 500, objects: 1000, ..Common::default() };
    let mut cases: Vec<Common> = Vec::new();
    for &v in values {
        cases.push(Common { requests: v, ..base.clone() });
        cases.push(Common { objects: v, ..base.clone() });
        cases.push(Common { objects: v, files: 1000, ..base.clone() });
        cases.push(Common { object_size: v, ..base.clone() });
        cases.push(Common { seed: v, ..base.clone() });
        cases.push(Common { processes: v.min(u32::MAX as u64) as u32, ..base.clone() });
        cases.push(Common { files: v, ..base.clone() });
        cases.push(Common { arrival: Arrival::Fixed { interarrival_ns: v }, ..base.clone() });
        cases.push(Common { arrival: Arrival::Poisson { mean_ns: v as f64 }, ..base.clone() });
    }
    for &r in ratios {
        cases.push(Common { write_ratio: r, ..base.clone() });
        cases.push(Common { arrival: Arrival::Poisson { mean_ns: r }, ..base.clone() });
    }
    for g in GENERATORS {
        for c in &cases {
            let out = generate(g.name, c.clone(), Vec::new(), 500);
            if let Some(msg) = out.strip_prefix("error ") {
                if !msg.starts_with("--") && !msg.contains(g.name) {
                    FAILURES.with(|f| f.borrow_mut().push(format!("{} {c:?}: unclear error: {msg}", g.name)));
                }
            }
        }
    }
    check_failures();
}
