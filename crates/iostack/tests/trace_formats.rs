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

    const VALID: &[(Format, &str)] = &[
        (Format::Csv, "time_ns,pid,op,offset,length,device,file,file_offset,file_size\n1,2,W,4096,512,0,3,0,8192\n5,2,R,0,512,1,,,\n"),
        (Format::Msr, "128166385295514663,hm,0,Write,9056014336,2048,2833\n128166385295514878,hm,0,Read,11855351808,512,2617\n"),
        (Format::Spc, "0,20941264,8192,W,0.551706\n1,20939840,512,r,0.554041\n"),
        (Format::Blkparse, "  8,16   5        2     0.000001850 18615  Q   R 1444645666 + 256 [java]\nCPU0 (8,16):\n"),
        (Format::Fiu, "89966527045403 4892 syslogd 904265560 8 W 6 0 531e779ca2\n"),
        (Format::Alibaba, "0,R,126703644672,4096,1577808000000087\n"),
        (Format::Tencent, "1538323200,4247200,128,1,1058\n1538323199,13896880,128,0,1063\n"),
        (Format::Systor, "Timestamp,Response,IOType,LUN,Offset,Size\n1456095145.133076000,0.000806000,R,0,899056122368,131072\n"),
        (Format::Lis, "1 1 0 0\n2 300 0 0\n"),
        (Format::Disksim, "11413000 0 657728 16 1\n"),
        (Format::Plain, "42932745\n42932746\n"),
        (Format::GenericCsv, "1,4096,512,W,7,1,3\n"),
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]
        /// Valid lines with random bytes replaced, inserted or cut never panic their reader.
        #[test]
        fn mutated_lines(which in 0..VALID.len(), edits in proptest::collection::vec((any::<usize>(), proptest::sample::select(&b"0123456789-+,. x\n\0\xffeE:"[..])), 1..6), cut in any::<usize>()) {
            let (format, text) = VALID[which];
            let mut bytes = text.as_bytes().to_vec();
            for (pos, b) in edits {
                let i = pos % (bytes.len() + 1);
                if pos % 3 == 0 { bytes.insert(i, b) } else if i < bytes.len() { bytes[i] = b }
            }
            bytes.truncate(bytes.len() - cut % (bytes.len() / 4 + 1));
            let d = tempfile::tempdir().unwrap();
            let p = file(d.path(), "m", &bytes);
            let mapping = CsvMapping::parse("time=0,offset=1,length=2,op=3,pid=4,device=5,file=6,time_unit=s").unwrap();
            for skip in [false, true] {
                let o = ReaderOptions { skip_invalid: skip, csv_mapping: Some(mapping.clone()), ..Default::default() };
                let _ = read(&p, Some(format), &o);
            }
            let _ = read(&p, None, &ReaderOptions::default());
        }
    }
}

#[test]
fn vscsi_v2_records() {
    let d = tempfile::tempdir().unwrap();
    let mut bytes = Vec::new();
    for (i, cmd) in [(0u64, 0x28u16), (1, 0x2a), (2, 0x12), (3, 0x88)] {
        bytes.extend_from_slice(&cmd.to_le_bytes());
        bytes.extend_from_slice(&0x0200u16.to_le_bytes()); // ver: v2
        bytes.extend_from_slice(&(i as u32).to_le_bytes()); // sn
        bytes.extend_from_slice(&(4096u32 * (i as u32 + 1)).to_le_bytes()); // len
        bytes.extend_from_slice(&1u32.to_le_bytes()); // nSG
        bytes.extend_from_slice(&(1000 + i * 8).to_le_bytes()); // lbn
        bytes.extend_from_slice(&(5_000_000 + i * 10).to_le_bytes()); // ts_us
        bytes.extend_from_slice(&7u64.to_le_bytes()); // rt
    }
    let p = file(d.path(), "v2.bin", &bytes);
    let v = ok(&p, None);
    // The INQUIRY (0x12) record moves no data and is passed over.
    assert_eq!(v.len(), 3);
    assert_eq!(v[0], Request { time_ns: 0, offset: 1000 * 512, length: 4096, pid: 0, device: 0, op: Op::Read, file: None });
    assert_eq!((v[1].op, v[1].offset, v[1].time_ns), (Op::Write, 1008 * 512, 10_000));
    assert_eq!((v[2].op, v[2].length, v[2].time_ns), (Op::Read, 16384, 30_000));
}

#[test]
fn msr_hosts_become_devices() {
    let d = tempfile::tempdir().unwrap();
    let p = file(
        d.path(),
        "m.csv",
        b"128166385295514663,hm,1,Write,4096,512,2833\n128166385295514763,src1,0,Read,0,4096,10\n128166385295514863,hm,1,read,8192,512,1\n",
    );
    let v = ok(&p, None);
    assert_eq!(v.iter().map(|r| r.device).collect::<Vec<_>>(), vec![1, 1 << 16, 1]);
    assert_eq!((v[1].time_ns, v[2].op), (10_000, Op::Read));
    let p = file(d.path(), "m2.csv", b"128166385295514663,hm,1,Erase,4096,512,2833\n");
    let e = err(&p, Some(Format::Msr));
    assert!(e.ends_with("m2.csv: line 1: field `Type`: `Erase` is not Read or Write"), "{e}");
}

#[test]
fn lis_and_plain_errors() {
    let d = tempfile::tempdir().unwrap();
    let p = file(d.path(), "a.lis", b"10 3 0 0\n20 0 0 1\n5 1 0 2\n");
    let v = ok(&p, None);
    assert_eq!(v.iter().map(|r| r.offset / 512).collect::<Vec<_>>(), vec![10, 11, 12, 5]);
    let p = file(d.path(), "b.lis", b"10 3 0 0\n20 x 0 1\n");
    let e = err(&p, None);
    assert!(e.ends_with("b.lis: line 2: field `n_blocks`: `x` is not a number"), "{e}");
    let p = file(d.path(), "c.lis", b"18446744073709551615 2 0 0\n");
    assert!(err(&p, None).contains("out of range"));
    let p = file(d.path(), "ids.txt", b"1\n2\n3 4\n");
    let e = err(&p, Some(Format::Plain));
    assert!(e.contains("line 3: field `id`"), "{e}");
}

#[test]
fn blkparse_skips_summaries_and_other_events() {
    let d = tempfile::tempdir().unwrap();
    let text = "  8,0    3        1     0.000000000  697  A  WS 4097 + 8 <- (8,1) 2049\n\
                \x20 8,0    3        2     0.000001000  697  Q  WS 4097 + 8 [jbd2/sda1-8]\n\
                \x20 8,0    3        3     0.000002000  697  Q  FWS [jbd2/sda1-8]\n\
                \x20 8,0    3        4     0.000003000  697  m   N cfq697 insert_request\n\
                \x20 8,0    1        5     0.000004000  700  Q   R 100 + 16 [cat]\n\
                CPU3 (8,0):\n Reads Queued:           1,        8KiB\t Writes Queued:           1,        4KiB\n\
                Total (8,0):\nThroughput (R/W): 0KiB/s / 0KiB/s\nEvents (8,0): 5 entries\n";
    let p = file(d.path(), "trace.blkparse", text.as_bytes());
    let v = ok(&p, None);
    assert_eq!(v.len(), 2);
    assert_eq!(v[0], Request { time_ns: 1000, offset: 4097 * 512, length: 4096, pid: 697, device: 8 << 20, op: Op::Write, file: None });
    assert_eq!((v[1].pid, v[1].op, v[1].length), (700, Op::Read, 8192));
    let p = file(d.path(), "bad.blkparse", b"  8,0 3 2 0.0000010 697 Q WS 40x7 + 8 [jbd2]\n");
    let e = err(&p, None);
    assert!(e.ends_with("line 1: field `sector`: `40x7` is not a number"), "{e}");
}

#[test]
fn byte_order_mark_and_mapping_without_format() {
    let d = tempfile::tempdir().unwrap();
    let p = file(d.path(), "bom.csv", b"\xef\xbb\xbfoffset,op\n4096,W\n");
    assert_eq!(ok(&p, None)[0].offset, 4096);
    let p = file(d.path(), "g.dat", b"7;100\n");
    let o = ReaderOptions { csv_mapping: Some(CsvMapping::parse("time=0,offset=1,delimiter=;").unwrap()), ..Default::default() };
    assert_eq!(read(&p, None, &o).unwrap()[0].offset, 100);
}
