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
