//! Measures how fast policies simulate, without the cost of reading the trace:
//! `cargo run --release --example policy_speed -- TRACE CACHE POLICY... [--repeat N]`.
//!
//! Reads the whole trace into memory first, then feeds it to each policy (object mode, unit
//! size) in the batches `engine::sim::simulate` uses; prints requests per second (best of N
//! runs, default 5, the policies taking turns so that a noisy machine affects them alike) and
//! the miss ratio.

use iostack::engine::sim::{Mode, SimRun};
use iostack::trace::{self, ReaderOptions};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut repeat = 5;
    if let Some(i) = args.iter().position(|a| a == "--repeat") {
        repeat = args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("--repeat N"));
        args.drain(i..i + 2);
    }
    if args.len() < 3 {
        eprintln!("usage: policy_speed TRACE CACHE POLICY... [--repeat N]");
        std::process::exit(2);
    }
    let cache: u64 = args[1].parse().unwrap_or_else(|_| panic!("CACHE must be a number of objects"));
    let mut reader = trace::open(args[0].as_ref(), None, &ReaderOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    let requests = trace::read_all(&mut *reader).unwrap_or_else(|e| panic!("{e}"));
    let policies = &args[2..];
    let mut best = vec![f64::MAX; policies.len()];
    let mut miss = vec![0.0; policies.len()];
    for _ in 0..repeat {
        for (i, p) in policies.iter().enumerate() {
            let start = std::time::Instant::now();
            let mut run = SimRun::new(p, cache, Mode::Object { unit_size: true }).unwrap_or_else(|e| panic!("{e}"));
            for batch in requests.chunks(1 << 14) {
                run.feed_batch(batch);
            }
            best[i] = best[i].min(start.elapsed().as_secs_f64());
            miss[i] = 1.0 - run.counts.hits as f64 / run.counts.requests as f64;
        }
    }
    for (i, p) in policies.iter().enumerate() {
        println!("{p:<8} {:.3} s  {:6.2} M requests/s  miss ratio {:.7}", best[i], requests.len() as f64 / best[i] / 1e6, miss[i]);
    }
}
