use iostack::engine::sim::*;
use iostack::trace::Request;
use std::time::Instant;
fn main() {
    let data = std::fs::read("/tmp/ec/zipf.oracleGeneral.bin").unwrap();
    let reqs: Vec<Request> = data.chunks_exact(24).map(|c| {
        let id = u64::from_le_bytes(c[4..12].try_into().unwrap());
        let sz = u32::from_le_bytes(c[12..16].try_into().unwrap()) as u64;
        Request::read(id, sz)
    }).collect();
    let src = MemoryTrace::new(reqs, "z");
    let pol = std::env::args().nth(1).unwrap_or("lru".into());
    for threads in [1, 2] {
        let mut cfg = SweepConfig::new(Mode::Object { unit_size: true });
        cfg.threads = threads;
        let t = Instant::now();
        let out = sweep(&src, &[RunSpec { policy: pol.clone(), capacity: 76286 }], &cfg, 4096, &mut |_| {}).unwrap();
        let dt = t.elapsed().as_secs_f64();
        println!("{threads} {:.4} {:.1} Mreq/s meta {:.1}", out[0].miss_ratio, 10.0 / dt, out[0].metadata_bytes_per_object);
    }
}
