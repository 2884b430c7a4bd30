//! A timed run over time (`interval`) and its latency log: intervals add up to the run's
//! totals, a small case is checked by hand, and the log holds every device request with times
//! that agree with the report.

use iostack::engine::timed::{LatencyLog, StackConfig, TimedReport, TimedRun};
use iostack::trace::{Op, Request, VecReader};

const MS: u64 = 1_000_000;

fn run(config: &StackConfig, requests: &[Request]) -> TimedReport {
    TimedRun::new(config).unwrap().run(&mut VecReader::new(requests.to_vec())).unwrap()
}

/// Reads and writes over a few thousand blocks, a request every 0.3 ms of trace time.
fn trace(n: u64) -> Vec<Request> {
    (0..n)
        .map(|i| {
            let block = (i * 7919 % 1999) * (1 + i % 3) % 3000;
            let mut r = Request::read(block * 4096, 4096 * (1 + i % 4)).at(i * 300_000);
            if i % 5 == 0 {
                r.op = Op::Write;
            }
            r
        })
        .collect()
}

fn config(interval: Option<&str>) -> StackConfig {
    StackConfig {
        cache: "2MiB".into(),
        device: "hdd:st3400620as".into(),
        replay: iostack::engine::timed::Replay::Open,
        interval: interval.map(str::to_string),
        locality: false,
        ..Default::default()
    }
}

#[test]
fn intervals_add_up_to_the_run_and_change_nothing_else() {
    let reqs = trace(3000);
    let plain = run(&config(None), &reqs);
    assert!(plain.series.is_none());
    for iv in ["50ms", "137req"] {
        let rep = run(&config(Some(iv)), &reqs);
        let s = rep.series.clone().expect("a series");
        // The run is the same with or without a series (the config echoes the interval).
        let strip = |r: &TimedReport| {
            let mut v = serde_json::to_value(r).unwrap();
            let o = v.as_object_mut().unwrap();
            o.remove("series");
            o.remove("config");
            v
        };
        assert_eq!(strip(&rep), strip(&plain), "{iv}");
        let sum = |f: &dyn Fn(&iostack::engine::timed::series::TimedSeriesPoint) -> u64| s.points.iter().map(f).sum::<u64>();
        assert_eq!(sum(&|p| p.requests), rep.front.requests, "{iv}");
        assert_eq!(sum(&|p| p.completed), rep.response.count);
        assert_eq!(sum(&|p| p.response.count), rep.response.count);
        assert_eq!(sum(&|p| p.accesses), rep.cache.accesses);
        assert_eq!(sum(&|p| p.hits), rep.cache.hits);
        assert_eq!(sum(&|p| p.device_requests), rep.device_requests);
        assert_eq!(sum(&|p| p.device_busy_ns), rep.device_busy_ns);
        assert!(s.points.windows(2).all(|w| w[0].end_ns <= w[1].start_ns && w[0].start < w[1].start));
        assert_eq!(s.points.last().unwrap().end_ns, rep.end_ns);
        match iv {
            "137req" => {
                assert_eq!(s.unit, "requests");
                // Every interval but the last holds exactly 137 issues.
                let n = s.points.len();
                assert!(s.points[..n - 1].iter().all(|p| p.requests == 137));
                assert!(s.points.iter().enumerate().all(|(k, p)| p.start == k as u64 * 137));
            }
            _ => {
                assert_eq!(s.unit, "ns");
                assert!(s.points.iter().all(|p| p.start % (50 * MS) == 0 && p.end_ns - p.start_ns <= 50 * MS));
                // The largest response of an interval is no larger than the run's.
                assert!(s.points.iter().all(|p| p.response.max_ns <= rep.response.max_ns));
            }
        }
    }
}

/// Four reads of distinct blocks at 0, 0.5, 3 and 3.2 ms on a 1 ms device, no prefetching:
/// served 0-1, 1-2, 3-4 and 4-5 ms. With 2 ms intervals, [0, 2) has the first two issues and
/// dispatches and the first completion; [2, 4) the last two issues, the dispatch at 3 ms and the
/// completion at 2 ms (1.5 ms); [4, 5] the dispatch at 4 ms and the completions at 4 and 5 ms.
#[test]
fn a_small_case_by_hand() {
    let reqs: Vec<Request> = [(0, 0), (1, 500_000), (2, 3 * MS), (3, 3_200_000)].iter().map(|&(b, t)| Request::read(b * 4096 * 10, 4096).at(t)).collect();
    let cfg = StackConfig { device: "fixed:1ms".into(), prefetch: "none".into(), sched: "noop".into(), interval: Some("2ms".into()), ..config(None) };
    let rep = run(&cfg, &reqs);
    let s = rep.series.unwrap();
    let got: Vec<(u64, u64, u64, u64, u64, u64, u64)> =
        s.points.iter().map(|p| (p.start_ns / 1000, p.end_ns / 1000, p.requests, p.completed, p.device_requests, p.device_busy_ns / 1000, p.response.max_ns / 1000)).collect();
    assert_eq!(got, vec![(0, 2000, 2, 1, 2, 2000, 1000), (2000, 4000, 2, 1, 1, 1000, 1500), (4000, 5000, 0, 2, 1, 1000, 1800)]);
    assert_eq!(s.points[0].hit_ratio, Some(0.0));
    assert_eq!(s.points[2].hit_ratio, None);
}

#[test]
fn the_latency_log_holds_every_device_request() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lat.csv");
    let reqs = trace(1500);
    let cfg = StackConfig { write_policy: iostack::engine::timed::WritePolicy::Back, ..config(None) };
    let mut stack = TimedRun::new(&cfg).unwrap();
    stack.set_latency_log(LatencyLog::create(&path).unwrap());
    let rep = stack.run(&mut VecReader::new(reqs.clone())).unwrap();
    assert_eq!(rep.probes["latency_log"]["requests"], rep.device_requests);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(iostack::engine::timed::LATENCY_LOG_HEADER));
    let rows: Vec<Vec<String>> = lines.map(|l| l.split(',').map(str::to_string).collect()).collect();
    assert_eq!(rows.len() as u64, rep.device_requests);
    let num = |r: &Vec<String>, i: usize| r[i].parse::<u64>().unwrap();
    let (mut q2c, mut demand, mut sectors, mut last_c) = (0u128, 0u64, 0u64, 0u64);
    for r in &rows {
        let (q, d, st, c) = (num(r, 7), num(r, 8), num(r, 9), num(r, 10));
        assert!(q <= d && d <= st && st <= c, "{r:?}");
        assert!(c >= last_c, "completion order");
        last_c = c;
        q2c += (c - q) as u128;
        demand += (r[5] == "demand" && r[3] == "R") as u64;
        sectors += num(r, 2);
    }
    assert_eq!(demand, rep.device_response.demand_read.count);
    assert_eq!(sectors / 8, rep.device.blocks_read + rep.device.blocks_written);
    let mean = q2c as f64 / rows.len() as f64;
    assert!((mean - rep.device_response.all.mean_ns).abs() < 1e-6 * mean, "{mean} {}", rep.device_response.all.mean_ns);
    // Nothing but the log itself is left in the folder.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
}
