//! Measures how fast a trace is parsed: `cargo run --release --example read_speed -- TRACE [FORMAT]`.
//! Prints requests, seconds and requests per second (best of three runs).

use iostack::trace::{self, Format, ReaderOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(path) = args.get(1) else {
        eprintln!("usage: read_speed TRACE [FORMAT]");
        std::process::exit(2);
    };
    let format = args.get(2).map(|f| Format::from_name(f).unwrap_or_else(|e| panic!("{e}")));
    let mut best = f64::MAX;
    let mut count = 0u64;
    for _ in 0..3 {
        let start = std::time::Instant::now();
        let mut r = trace::open(path.as_ref(), format, &ReaderOptions::default()).unwrap_or_else(|e| panic!("{e}"));
        let mut buf = Vec::with_capacity(1 << 16);
        let mut n = 0u64;
        let mut checksum = 0u64;
        loop {
            buf.clear();
            let k = r.read_batch(&mut buf, 1 << 16).unwrap_or_else(|e| panic!("{e}"));
            if k == 0 {
                break;
            }
            n += k as u64;
            checksum = buf.iter().fold(checksum, |c, q| c.wrapping_add(q.offset ^ q.time_ns));
        }
        std::hint::black_box(checksum);
        best = best.min(start.elapsed().as_secs_f64());
        count = n;
    }
    println!("{path}: {count} requests in {best:.3} s = {:.1} M requests/s", count as f64 / best / 1e6);
}
