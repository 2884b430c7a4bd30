//! Readers on hand-written lines, error messages, skipping, detection, writers' round trips, and
//! random bytes fed to every reader.

use std::path::{Path, PathBuf};

use iostack::trace::write::{self, TraceWriter};
use iostack::trace::{self, read_all, CsvMapping, FileRef, Format, Op, ReaderOptions, Request, FORMATS};

fn file(dir: &Path, name: &str, content: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

fn read(p: &Path, f: Option<Format>, o: &ReaderOptions) -> Result<Vec<Request>, String> {
    let mut r = trace::open(p, f, o).map_err(|e| e.to_string())?;
    read_all(&mut *r).map_err(|e| e.to_string())
}

fn ok(p: &Path, f: Option<Format>) -> Vec<Request> {
    read(p, f, &ReaderOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn err(p: &Path, f: Option<Format>) -> String {
    read(p, f, &ReaderOptions::default()).expect_err("malformed input must fail")
}

#[test]
fn spc_lines() {
    let d = tempfile::tempdir().unwrap();
    let p = file(d.path(), "fin.txt", b"0,20941264,8192,W,0.551706\n1,20939840,512,r,0.554041,extra\n");
    let v = ok(&p, None);
    assert_eq!(v.len(), 2);
    assert_eq!(v[0], Request { time_ns: 551_706_000, offset: 20_941_264 * 512, length: 8192, pid: 0, device: 0, op: Op::Write, file: None });
    assert_eq!((v[1].device, v[1].op, v[1].time_ns, v[1].length), (1, Op::Read, 554_041_000, 512));
    let p = file(d.path(), "bad.spc", b"0,20941264,8192,W,0.551706\n0,2094x,8192,W,0.6\n");
    let e = err(&p, None);
    assert!(e.ends_with("bad.spc: line 2: field `LBA`: `2094x` is not a number"), "{e}");
}

#[test]
fn fiu_lines() {
    let d = tempfile::tempdir().unwrap();
    let p = file(
        d.path(),
        "homes.txt",
        b"89966527045403 4892 syslogd 904265560 8 W 6 0 531e779ca2f7d56e5f5a4d0e2ecc2f7f\n\
          89966527065404 5100 my proc 904265568 16 R 8 1 0000\n",
    );
    let v = ok(&p, Some(Format::Fiu));
    assert_eq!(v[0], Request { time_ns: 0, offset: 904_265_560 * 512, length: 4096, pid: 4892, device: 6 << 20, op: Op::Write, file: None });
    assert_eq!((v[1].time_ns, v[1].pid, v[1].length, v[1].op, v[1].device), (20_001, 5100, 8192, Op::Read, (8 << 20) | 1));
    let p = file(d.path(), "f.txt", b"89966527045403 4892 syslogd 904265560 8 X 6 0 531e\n");
    let e = err(&p, Some(Format::Fiu));
    assert!(e.ends_with("f.txt: line 1: field `op`: `X` is not R or W"), "{e}");
}

#[test]
fn alibaba_lines() {
    let d = tempfile::tempdir().unwrap();
    let p = file(d.path(), "ali.csv", b"0,R,126703644672,4096,1577808000000087\n3,W,4096,8192,1577808000001087\n");
    let v = ok(&p, None);
    assert_eq!(v[0], Request { time_ns: 0, offset: 126_703_644_672, length: 4096, pid: 0, device: 0, op: Op::Read, file: None });
    assert_eq!(v[1], Request { time_ns: 1_000_000, offset: 4096, length: 8192, pid: 0, device: 3, op: Op::Write, file: None });
    let p = file(d.path(), "ali2.csv", b"0,R,126703644672,4096,1577808000000087\n0,R,1,-4,5\n");
    let e = err(&p, Some(Format::Alibaba));
    assert!(e.ends_with("ali2.csv: line 2: field `length`: `-4` is not a number"), "{e}");
}

#[test]
fn iostack_csv_columns_any_order() {
    let d = tempfile::tempdir().unwrap();
    let p = file(d.path(), "t.csv", b"op,offset,time_ns\nW,8192,5\nread,0,7\n\n# comment\nR,4096,9\n");
    let v = ok(&p, None);
    assert_eq!(v.len(), 3);
    assert_eq!(v[0], Request { time_ns: 5, offset: 8192, length: 4096, pid: 0, device: 0, op: Op::Write, file: None });
    assert_eq!((v[1].op, v[2].offset), (Op::Read, 4096));
    let p = file(d.path(), "t.csv", b"time_ns,offset\n1,0\n2,4096\n3,8192\n4,1\n5,2\n6,3\n7,12x\n");
    let e = err(&p, None);
    assert!(e.ends_with("t.csv: line 8: field `offset`: `12x` is not a number"), "{e}");
    let p = file(d.path(), "h.csv", b"time_ns,offset,colour\n1,0,red\n");
    let e = err(&p, Some(Format::Csv));
    assert!(e.contains("line 1: field `header`: unknown column `colour`"), "{e}");
}

#[test]
fn skip_invalid_counts() {
    let d = tempfile::tempdir().unwrap();
    let p = file(d.path(), "s.csv", b"offset,length\n0,512\nx,512\n1024,y\n2048,512\n");
    let o = ReaderOptions { skip_invalid: true, ..Default::default() };
    let mut r = trace::open(&p, None, &o).unwrap();
    let v = read_all(&mut *r).unwrap();
    assert_eq!(v.iter().map(|r| r.offset).collect::<Vec<_>>(), vec![0, 2048]);
    assert_eq!(r.skipped(), 2);
}

#[test]
fn generic_csv_mapping() {
    let d = tempfile::tempdir().unwrap();
    let p = file(d.path(), "g.txt", b"ts;lba;len;rw;who\n1.5;100;8;1;42\n2.25;200;16;0;43\n");
    let m = CsvMapping::parse("time=ts,time_unit=s,offset=lba,offset_unit=sector,length=len,length_unit=512,op=rw,op_values=0r1w,pid=who,header=yes,delimiter=;").unwrap();
    let o = ReaderOptions { csv_mapping: Some(m), ..Default::default() };
    let v = read(&p, Some(Format::GenericCsv), &o).unwrap();
    assert_eq!(v[0], Request { time_ns: 0, offset: 51_200, length: 4096, pid: 42, device: 0, op: Op::Write, file: None });
    assert_eq!(v[1], Request { time_ns: 750_000_000, offset: 102_400, length: 8192, pid: 43, device: 0, op: Op::Read, file: None });
    // Space-delimited, no header, index columns, DiskSim ms times, no shift.
    let p = file(d.path(), "ds.trace", b"0.000000 0 1000 8 1\n  12.5   0   2000 16 0\n");
    let m = CsvMapping::parse("time=0,time_unit=ms,device=1,offset=2,offset_unit=512,length=3,length_unit=512,op=4,op_values=flags,delimiter=space,shift_time=no").unwrap();
    let o = ReaderOptions { csv_mapping: Some(m), ..Default::default() };
    let v = read(&p, Some(Format::GenericCsv), &o).unwrap();
    assert_eq!((v[1].time_ns, v[1].offset, v[1].length, v[1].op), (12_500_000, 2000 * 512, 8192, Op::Write));
    // A named column missing from the header.
    let m = CsvMapping::parse("offset=lbn,header=yes").unwrap();
    let o = ReaderOptions { csv_mapping: Some(m), ..Default::default() };
    let p = file(d.path(), "nolbn.csv", b"a,b\n1,2\n");
    let e = read(&p, Some(Format::GenericCsv), &o).unwrap_err();
    assert!(e.contains("line 1: field `header`: no column `lbn`") && e.contains("a, b"), "{e}");
    // No mapping at all.
    let e = read(&p, Some(Format::GenericCsv), &ReaderOptions::default()).unwrap_err();
    assert!(e.contains("--mapping"), "{e}");
}

#[test]
fn binary_errors_name_the_record() {
    let d = tempfile::tempdir().unwrap();
    let p = file(d.path(), "t.oracleGeneral.bin", &[0u8; 24 * 3 + 5]);
    let e = err(&p, None);
    assert!(e.contains("t.oracleGeneral.bin: record 4: the file ends 5 bytes into this record"), "{e}");
    let p = file(d.path(), "t.vscsi", &[0u8; 33]);
    let e = err(&p, None);
    assert!(e.contains("record 1"), "{e}");
    let mut bad = iostack::trace::bin::header().to_vec();
    bad[8] = 9;
    let p = file(d.path(), "t.iostack", &bad);
    let e = err(&p, None);
    assert!(e.contains("field `header`: iostack binary version 9"), "{e}");
}

#[test]
fn detection_asks_for_format() {
    let d = tempfile::tempdir().unwrap();
    let p = file(d.path(), "mystery.dat", b"hello world\n");
    let e = err(&p, None);
    assert!(e.contains("cannot tell the trace format") && e.contains("--format"), "{e}");
    let p = file(d.path(), "empty.dat", b"");
    assert!(err(&p, None).contains("empty"));
    // A named format on an empty file gives an empty trace.
    assert!(ok(&p, Some(Format::Msr)).is_empty());
    assert!(ok(&p, Some(Format::OracleGeneral)).is_empty());
}

fn sample_requests() -> Vec<Request> {
    (0..1000u64)
        .map(|i| Request {
            time_ns: i * 1_000_000_007,
            offset: (i * 7919 % 313) * 4096,
            length: 512 * (1 + i % 16),
            pid: (i % 5) as u32,
            device: (i % 3) as u32,
            op: if i % 4 == 0 { Op::Write } else { Op::Read },
            file: if i % 2 == 0 { Some(FileRef { id: i % 11, offset: i * 512, size: if i % 3 == 0 { Some(1 << 20) } else { None } }) } else { None },
        })
        .collect()
}

fn write_file(path: &Path, format: Format, rs: &[Request]) {
    let mut w: Box<dyn TraceWriter> = write::create(path, format).unwrap();
    w.write_all(rs).unwrap();
    assert_eq!(w.finish().unwrap(), rs.len() as u64);
}

#[test]
fn csv_and_binary_round_trip() {
    let d = tempfile::tempdir().unwrap();
    let rs = sample_requests();
    for name in ["r.csv", "r.iostack", "r.csv.zst", "r.bin.gz", "r.iostack.xz", "r.csv.bz2"] {
        let p = d.path().join(name);
        let f = write::format_for_output(&p).unwrap();
        write_file(&p, f, &rs);
        assert_eq!(ok(&p, None), rs, "{name}");
    }
}

#[test]
fn oracle_general_round_trip_and_next_access() {
    let d = tempfile::tempdir().unwrap();
    let rs = sample_requests();
    let p = d.path().join("r.oracleGeneral.bin");
    write_file(&p, Format::OracleGeneral, &rs);
    let back = ok(&p, None);
    assert_eq!(back.len(), rs.len());
    for (a, b) in rs.iter().zip(&back) {
        assert_eq!(b.offset, a.offset / 512 * 512);
        assert_eq!(b.length, a.length);
        assert_eq!(b.time_ns, a.time_ns / 1_000_000_000 * 1_000_000_000);
    }
    // next_access_vtime: 1-based position of the next request for the same obj_id, -1 if none.
    let bytes = std::fs::read(&p).unwrap();
    let rec = |i: usize| {
        let r = &bytes[i * 24..i * 24 + 24];
        (u64::from_le_bytes(r[4..12].try_into().unwrap()), i64::from_le_bytes(r[16..24].try_into().unwrap()))
    };
    for i in 0..rs.len() {
        let (id, next) = rec(i);
        let expect = (i + 1..rs.len()).find(|&j| rec(j).0 == id).map_or(-1, |j| j as i64 + 1);
        assert_eq!(next, expect, "record {i}");
    }
}

#[test]
fn convert_is_atomic_and_refuses_its_input() {
    let d = tempfile::tempdir().unwrap();
    let input = file(d.path(), "in.csv", b"offset,length\n0,512\n4096,512\n");
    let o = ReaderOptions::default();
    let e = write::convert(&input, None, &o, &input, Some(Format::Csv)).unwrap_err().to_string();
    assert!(e.contains("is the input"), "{e}");
    let out = d.path().join("out.iostack");
    let s = write::convert(&input, None, &o, &out, None).unwrap();
    assert_eq!((s.input_format, s.output_format, s.requests), (Format::Csv, Format::Bin, 2));
    // A failing conversion leaves the previous output and no temporary file.
    let bad = file(d.path(), "bad.csv", b"offset\n0\nzz\n");
    let before = std::fs::read(&out).unwrap();
    assert!(write::convert(&bad, None, &o, &out, None).is_err());
    assert_eq!(std::fs::read(&out).unwrap(), before);
    let names: Vec<String> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    assert!(names.iter().all(|n| !n.contains(".tmp-")), "{names:?}");
}

mod no_panic {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
        /// Random bytes, and random mutations of valid lines, never panic any reader.
        #[test]
        fn random_input(bytes in proptest::collection::vec(any::<u8>(), 0..600), textish in "[0-9a-zA-Z,.+ \\[\\]\\-\n]{0,300}") {
            let d = tempfile::tempdir().unwrap();
            let mapping = CsvMapping::parse("offset=1,length=2,time=0,op=3,pid=4,device=5,file=6,time_unit=1.5").unwrap();
            let mut header = iostack::trace::bin::header().to_vec();
            header.extend_from_slice(&bytes);
            for content in [&bytes[..], textish.as_bytes(), &header[..]] {
                let p = file(d.path(), "x", content);
                for f in FORMATS {
                    for skip in [false, true] {
                        let o = ReaderOptions { skip_invalid: skip, csv_mapping: Some(mapping.clone()), ..Default::default() };
                        let _ = read(&p, Some(f.format), &o);
                    }
                }
                let _ = read(&p, None, &ReaderOptions::default());
            }
        }
    }
}
