//! Every reader on the real sample traces in `../shared/traces` (see SOURCES.md there).

use iostack::testing::shared_path;
use iostack::trace::{self, read_all, Format, Op, ReaderOptions, Request};

fn read(rel: &str, format: Option<Format>) -> Option<Vec<Request>> {
    read_with(rel, format, &ReaderOptions::default())
}

fn read_with(rel: &str, format: Option<Format>, opts: &ReaderOptions) -> Option<Vec<Request>> {
    let p = shared_path(rel)?;
    let mut r = trace::open(&p, format, opts).unwrap_or_else(|e| panic!("{e}"));
    Some(read_all(&mut *r).unwrap_or_else(|e| panic!("{e}")))
}

#[test]
fn cloudphysics_vscsi() {
    let Some(v) = read("traces/cloudphysics/cloudPhysicsIO.vscsi", None) else { return };
    assert_eq!(v.len(), 113_872);
    let first = v[0];
    assert_eq!(first.offset, 42_932_745 * 512);
    assert_eq!(first.length, 512);
    assert_eq!(first.op, Op::Write);
    assert_eq!(first.time_ns, 0);
    let last = *v.last().unwrap();
    assert_eq!(last.offset, 42_936_150 * 512);
    assert_eq!(last.op, Op::Write);
    // ts_us 5641098458687 minus the first record's 5633898368802.
    assert_eq!(last.time_ns, (5_641_098_458_687 - 5_633_898_368_802) * 1000);
    let reads = v.iter().filter(|r| r.op == Op::Read).count();
    assert_eq!(reads, 46_974);
}

#[test]
fn cloudphysics_forms_agree() {
    let Some(vscsi) = read("traces/cloudphysics/cloudPhysicsIO.vscsi", None) else { return };
    let oracle = read("traces/cloudphysics/cloudPhysicsIO.oracleGeneral.bin", None).unwrap();
    let plain = read("traces/cloudphysics/cloudPhysicsIO.txt", None).unwrap();
    assert_eq!(oracle.len(), vscsi.len());
    assert_eq!(plain.len(), vscsi.len());
    for i in 0..vscsi.len() {
        assert_eq!(oracle[i].offset, vscsi[i].offset, "request {i}");
        assert_eq!(plain[i].offset, vscsi[i].offset, "request {i}");
        // oracleGeneral keeps whole seconds of the vscsi clock, whose first record is at
        // 5633898.368802 s: absolute second = floor(5633898.368802 s + vscsi time).
        let abs_s = (5_633_898_368_802_000 + vscsi[i].time_ns) / 1_000_000_000;
        assert_eq!(oracle[i].time_ns, (abs_s - 5_633_898) * 1_000_000_000, "request {i}");
    }
}

#[test]
fn arc_oltp_expands_blocks() {
    let Some(v) = read("traces/arc/OLTP.lis.zst", None) else { return };
    assert_eq!(v.len(), 914_145);
    assert_eq!(v[0].offset, 512);
    assert_eq!(v[0].length, 512);
    let mut ids: Vec<u64> = v.iter().map(|r| r.offset / 512).collect();
    assert_eq!(*ids.last().unwrap(), 186_880);
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 186_880);
}

#[test]
fn cloudphysics_csv_same_offsets() {
    let Some(vscsi) = read("traces/cloudphysics/cloudPhysicsIO.vscsi", None) else { return };
    let csv = read("traces/cloudphysics/cloudPhysicsIO.csv", None).unwrap();
    assert_eq!(csv.len(), vscsi.len());
    for (i, (c, v)) in csv.iter().zip(&vscsi).enumerate() {
        assert_eq!((c.offset, c.length, c.op), (v.offset, v.length, v.op), "request {i}");
    }
    assert_eq!(csv.last().unwrap().time_ns, (5_641_098 - 5_633_898) * 1_000_000_000);
}

#[test]
fn msr_cambridge() {
    let Some(v) = read("traces/msr_cambridge/msr-cambridge1-sample.csv", None) else { return };
    assert_eq!(v.len(), 1000);
    // 128166385295514663,hm,0,Write,9056014336,2048,2833
    assert_eq!((v[0].time_ns, v[0].offset, v[0].length, v[0].op, v[0].device), (0, 9_056_014_336, 2048, Op::Write, 0));
    // 128166386567849604,hm,0,Read,11946549248,4096,3499
    let last = v.last().unwrap();
    assert_eq!((last.offset, last.length, last.op), (11_946_549_248, 4096, Op::Read));
    assert_eq!(last.time_ns, (128_166_386_567_849_604 - 128_166_385_295_514_663) * 100);
    let reads = v.iter().filter(|r| r.op == Op::Read).count();
    assert!((500..=520).contains(&reads), "{reads} reads; SOURCES.md says 51 %");
}

#[test]
fn tencent_cbs_bz2() {
    let Some(v) = read("traces/tencent_cbs/cloud_storage-sample.bz2", None) else { return };
    assert_eq!(v.len(), 50_000);
    // 1538323200,4247200,128,1,1058
    assert_eq!((v[0].offset, v[0].length, v[0].op, v[0].device, v[0].time_ns), (4_247_200 * 512, 128 * 512, Op::Write, 1058, 0));
    // 1538323200,8526920,128,1,10799
    let last = v.last().unwrap();
    assert_eq!((last.offset, last.length, last.op, last.device), (8_526_920 * 512, 128 * 512, Op::Write, 10799));
    // The second line is stamped one second before the first: clamped to 0.
    assert_eq!(v[1].time_ns, 0);
    let mut vols: Vec<u32> = v.iter().map(|r| r.device).collect();
    vols.sort_unstable();
    vols.dedup();
    assert_eq!(vols.len(), 2038);
}

#[test]
fn mqsim_disksim() {
    let Some(v) = read("traces/umass_spc/wsrch-small.trace", None) else { return };
    assert_eq!(v.len(), 24_783);
    // 11413000 0 657728 16 1
    assert_eq!((v[0].time_ns, v[0].device, v[0].offset, v[0].length, v[0].op), (11_413_000, 0, 657_728 * 512, 16 * 512, Op::Read));
    // 60066625000 1 34371424 64 1
    let last = v.last().unwrap();
    assert_eq!((last.time_ns, last.device, last.offset, last.length, last.op), (60_066_625_000, 1, 34_371_424 * 512, 64 * 512, Op::Read));
    let writes = v.iter().filter(|r| r.op == Op::Write).count();
    assert!(writes * 1000 < v.len(), "{writes} writes; the trace is 99.98 % reads");
}

#[test]
fn blkparse_events() {
    use iostack::trace::BlkparseEvent;
    let Some(q) = read("traces/blkparse/blktrace.txt", None) else { return };
    assert_eq!(q.len(), 15_524);
    // 8,16 5 2 0.000001850 18615 Q R 1444645666 + 256 [java]
    assert_eq!(
        (q[0].time_ns, q[0].pid, q[0].op, q[0].offset, q[0].length, q[0].device),
        (1_850, 18_615, Op::Read, 1_444_645_666 * 512, 256 * 512, (8 << 20) | 16)
    );
    // 8,16 2 41139 9.378427326 16766 Q W 3428327338 + 8 [flush-8:16]
    let last = q.last().unwrap();
    assert_eq!((last.time_ns, last.pid, last.op, last.offset, last.length), (9_378_427_326, 16_766, Op::Write, 3_428_327_338 * 512, 4096));
    let opts = |e| ReaderOptions { blkparse_event: e, ..Default::default() };
    let d = read_with("traces/blkparse/blktrace.txt", None, &opts(BlkparseEvent::Dispatch)).unwrap();
    let c = read_with("traces/blkparse/blktrace.txt", None, &opts(BlkparseEvent::Complete)).unwrap();
    assert_eq!(d.len(), 170);
    // 171 C events, one of which completes a flush (`C WS 1950885322 [0]`, no sector range).
    assert_eq!(c.len(), 170);
    assert!(c.iter().all(|r| r.pid == 0));
}

#[test]
fn systor17_gz() {
    let Some(v) = read("traces/systor17/systor17-traces-sample.csv.gz", None) else { return };
    assert_eq!(v.len(), 999);
    // 1456095145.133076000,0.000806000,R,0,899056122368,131072
    assert_eq!((v[0].time_ns, v[0].op, v[0].device, v[0].offset, v[0].length), (0, Op::Read, 0, 899_056_122_368, 131_072));
    // 1456095145.126285000 is earlier than the first: clamped to 0.
    assert_eq!((v[1].time_ns, v[1].offset), (0, 4_256_049_987_072));
    // 1456095145.135954000,0.004066000,R,0,4256050519552,21504
    assert_eq!((v[3].time_ns, v[3].offset, v[3].length), (2_878_000, 4_256_050_519_552, 21_504));
    let other = read("traces/systor17/systor17-additional-sample.csv.gz", None).unwrap();
    assert_eq!(other.len(), 999);
}
