//! Inputs that once gave silent wrong answers: device ids that share low bits, malformed
//! blkparse events, traces piped on standard input, out-of-range offsets, lengths and times.

mod common;

use std::path::Path;
use std::process::{Command, Output, Stdio};

use common::piped;

fn iostack(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iostack")).args(args).current_dir(dir).output().unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Device ids 0, 65536 and 131072 agree in their low 16 bits; 8,0 and 259,0 as blkparse dev_t.
const DEVICES_CSV: &str = "offset,length,device\n0,4096,0\n0,4096,65536\n0,4096,131072\n0,4096,0\n0,4096,4294967295\n";

#[test]
fn devices_that_share_low_bits_stay_apart() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("dev.csv"), DEVICES_CSV).unwrap();
    for mode in [&["-m", "block"][..], &["--unit-size"][..]] {
        let mut args = vec!["sim", "dev.csv", "-p", "lru,arc,dulo,splitlru,belady", "-c", "100", "--json"];
        args.extend_from_slice(mode);
        let v = json(&iostack(&args, d.path()));
        for r in v.as_array().unwrap() {
            // Only the second reference to device 0 hits.
            assert_eq!(r["hits"], 1, "{mode:?}: {r}");
        }
    }
    let a = json(&iostack(&["analyze", "dev.csv", "--json"], d.path()));
    assert_eq!(a["devices"], 4);
    assert_eq!(a["footprint_units"], 4);
    let r = json(&iostack(&["run", "dev.csv", "--json", "--processes", "device", "--dump", "front=f.csv", "--no-locality"], d.path()));
    assert_eq!(r["cache"]["hits"], 1, "{}", r["cache"]);
    let pids: Vec<u64> = r["processes"].as_array().unwrap().iter().map(|p| p["pid"].as_u64().unwrap()).collect();
    assert_eq!(pids, vec![0, 65536, 131072, 4294967295]);
    // Dumps carry the trace's own ids. The four processes (one per device) all start at trace
    // time 0; device 0's second request follows its first one's completion.
    let dump = std::fs::read_to_string(d.path().join("f.csv")).unwrap();
    let devices: Vec<&str> = dump.lines().skip(1).map(|l| l.split(',').nth(5).unwrap()).collect();
    assert_eq!(devices, vec!["0", "65536", "131072", "4294967295", "0"]);

    let blk = "  8,0 1 1 0.000001 10 Q R 800 + 8 [a]\n  259,0 1 2 0.000002 10 Q R 800 + 8 [a]\n  8,0 1 3 0.000003 10 Q R 800 + 8 [a]\n";
    std::fs::write(d.path().join("two.blkparse"), blk).unwrap();
    let v = json(&iostack(&["sim", "two.blkparse", "-p", "lru", "-c", "10", "-m", "block", "--json"], d.path()));
    assert_eq!(v[0]["hits"], 1);
}

#[test]
fn malformed_blkparse_events_are_errors_or_counted() {
    let d = tempfile::tempdir().unwrap();
    let good = "  8,0 3 1 0.1 5 Q R 8 + 8 [a]\n";
    for (bad, field) in [
        ("  8,0 3 x 0.1 5 Q R 8 + 8 [a]\n", "sequence"),
        ("  8,0 y 2 0.1 5 Q R 8 + 8 [a]\n", "cpu"),
        ("  8,0 3 2 0.1 5 Q R 8 8 [a]\n", "+"),
        ("  8,0 3 2 0.1 5 Q R 8 +\n", "nsectors"),
        ("  8,x 3 2 0.1 5 Q R 8 + 8 [a]\n", "device"),
        ("  5000,0 3 2 0.1 5 Q R 8 + 8 [a]\n", "device"),
    ] {
        std::fs::write(d.path().join("t.blkparse"), format!("{good}{bad}{good}")).unwrap();
        let o = iostack(&["sim", "t.blkparse", "-p", "lru", "-c", "10"], d.path());
        assert_eq!(o.status.code(), Some(1));
        assert!(stderr(&o).contains(&format!("t.blkparse: line 2: field `{field}`")), "{bad}: {}", stderr(&o));
        let v = json(&iostack(&["sim", "t.blkparse", "-p", "lru", "-c", "10", "--skip-invalid", "--json"], d.path()));
        assert_eq!((v[0]["requests"].as_u64(), v[0]["skipped"].as_u64()), (Some(2), Some(1)), "{bad}");
    }
    // Events without data stay passed over.
    std::fs::write(d.path().join("t.blkparse"), format!("{good}  8,0 3 2 0.1 5 Q FWS [jbd2]\n  8,0 3 3 0.1 5 Q N 0 + 0 [a]\n  8,0 3 4 0.1 5 Q WS 1950885322 [0]\n")).unwrap();
    let v = json(&iostack(&["sim", "t.blkparse", "-p", "lru", "-c", "10", "--json"], d.path()));
    assert_eq!(v[0]["requests"], 1);
}

#[test]
fn standard_input_gives_what_the_file_gives() {
    let d = tempfile::tempdir().unwrap();
    // Long enough that detection's look-ahead is a small part of it.
    let ids: String = (0..300_000u64).map(|i| format!("{}\n", (i * 7919) % 4000)).collect();
    let csv: String = std::iter::once("offset,length\n".to_string()).chain((0..50_000u64).map(|i| format!("{},4096\n", (i * 31) % 9000 * 4096))).collect();
    std::fs::write(d.path().join("ids.txt"), &ids).unwrap();
    std::fs::write(d.path().join("t.csv"), &csv).unwrap();
    for (file, data) in [("ids.txt", ids.as_bytes()), ("t.csv", csv.as_bytes())] {
        for cmd in [&["sim", "-p", "lru,arc", "-c", "1000", "--json"][..], &["analyze", "--json"][..], &["run", "--json", "--file-sizes", "unknown"][..]] {
            let mut from_file = vec![cmd[0], file];
            from_file.extend_from_slice(&cmd[1..]);
            let mut from_stdin = vec![cmd[0], "-"];
            from_stdin.extend_from_slice(&cmd[1..]);
            let mut a = json(&iostack(&from_file, d.path()));
            let mut b = json(&piped(&from_stdin, d.path(), data));
            // Only the trace's name differs.
            strip_names(&mut a);
            strip_names(&mut b);
            assert_eq!(a, b, "{cmd:?} {file}");
        }
    }
    // A run that needs two passes says so.
    let o = piped(&["sim", "-", "-p", "belady", "-c", "100"], d.path(), ids.as_bytes());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("two passes") && stderr(&o).contains("standard input"), "{}", stderr(&o));
}

/// A vscsi v1 record: u32 sn, u32 len, u32 nSG, u16 cmd (0x28 READ10), u16 version 0x0100,
/// u64 lbn, u64 ts_us.
fn vscsi_record(i: u64) -> Vec<u8> {
    let mut r = Vec::with_capacity(32);
    r.extend_from_slice(&(i as u32).to_le_bytes());
    r.extend_from_slice(&4096u32.to_le_bytes());
    r.extend_from_slice(&1u32.to_le_bytes());
    r.extend_from_slice(&0x28u16.to_le_bytes());
    r.extend_from_slice(&0x0100u16.to_le_bytes());
    r.extend_from_slice(&((i * 37) % 50 * 8).to_le_bytes());
    r.extend_from_slice(&(i * 100).to_le_bytes());
    r
}

/// Every format detection recognises, as a file and piped without --format, at one record and
/// at many (binary formats at one record are told apart by the length, which a pipe knows
/// only when the stream ends within detection's look-ahead), plain and compressed.
#[test]
fn every_format_from_standard_input_is_detected_as_from_its_file() {
    let d = tempfile::tempdir().unwrap();
    let many = |line: &dyn Fn(u64) -> String| -> String { (0..400u64).map(|i| line(i)).collect() };
    let b = |i: u64| (i * 37) % 50;
    let mut text: Vec<(&str, String, String)> = vec![
        ("csv", "time_ns,pid,op,offset,length\n".into(), many(&|i| format!("{},1,R,{},4096\n", i * 1000, b(i) * 4096))),
        ("msr", String::new(), many(&|i| format!("{},hm,0,Read,{},4096,10\n", 128166372000000000 + i * 10, b(i) * 4096))),
        ("spc", String::new(), many(&|i| format!("0,{},4096,R,{}.5\n", b(i) * 8, i))),
        ("blkparse", String::new(), many(&|i| format!("  8,0    1 {} {}.000000001 77  Q R {} + 8 [a]\n", i + 1, i, b(i) * 8))),
        ("fiu", String::new(), many(&|i| format!("{} 10 proc {} 8 R 8 0 abc\n", 1000 + i, b(i) * 8))),
        ("alibaba", String::new(), many(&|i| format!("1,R,{},4096,{}\n", b(i) * 4096, 1000 + i))),
        ("tencent", String::new(), many(&|i| format!("{},{},8,0,1\n", 1538323200 + i, b(i) * 8))),
        ("systor", "Timestamp,Response,IOType,LUN,Offset,Size\n".into(), many(&|i| format!("{}.5,0.1,R,0,{},4096\n", 1455000000 + i, b(i) * 4096))),
        ("lis", String::new(), many(&|i| format!("{} 1 0 {}\n", b(i), i))),
        ("disksim", String::new(), many(&|i| format!("{} 0 {} 8 1\n", i * 1000, b(i) * 8))),
        ("plain", String::new(), many(&|i| format!("{}\n", b(i)))),
    ];
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    for (name, header, body) in text.drain(..) {
        let first = body.lines().next().unwrap();
        files.push((format!("{name}-one"), format!("{header}{first}\n").into_bytes()));
        files.push((format!("{name}-many"), format!("{header}{body}").into_bytes()));
    }
    files.push(("vscsi-one".into(), vscsi_record(0)));
    files.push(("vscsi-many".into(), (0..400).flat_map(vscsi_record).collect()));
    // Binary formats iostack writes, and compressed files, through `convert`.
    std::fs::write(d.path().join("src.csv"), &files[1].1).unwrap();
    std::fs::write(d.path().join("one.csv"), &files[0].1).unwrap();
    for (out, args) in [
        ("bin-many", &["convert", "src.csv", "bin-many", "--to", "bin"][..]),
        ("bin-one", &["convert", "one.csv", "bin-one", "--to", "bin"][..]),
        ("og-many", &["convert", "src.csv", "og-many", "--to", "oracle-general"][..]),
        ("og-one", &["convert", "one.csv", "og-one", "--to", "oracle-general"][..]),
        ("csv-one.xz", &["convert", "one.csv", "csv-one.xz", "--to", "csv"][..]),
        ("csv-many.gz", &["convert", "src.csv", "csv-many.gz", "--to", "csv"][..]),
    ] {
        let o = iostack(args, d.path());
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        files.push((out.to_string(), std::fs::read(d.path().join(out)).unwrap()));
    }
    for (name, bytes) in &files {
        std::fs::write(d.path().join(name), bytes).unwrap();
        for cmd in [&["sim", "-p", "lru", "-c", "10", "--json"][..], &["analyze", "--json", "--mrc-sizes", "1,10,100"][..]] {
            let mut from_file = vec![cmd[0], name.as_str()];
            from_file.extend_from_slice(&cmd[1..]);
            let mut from_stdin = vec![cmd[0], "-"];
            from_stdin.extend_from_slice(&cmd[1..]);
            let mut a = json(&iostack(&from_file, d.path()));
            let o = piped(&from_stdin, d.path(), bytes);
            assert!(o.status.success(), "{name} {cmd:?} from standard input: {}", stderr(&o));
            let mut b = json(&o);
            strip_names(&mut a);
            strip_names(&mut b);
            assert_eq!(a, b, "{name} {cmd:?}");
            let requests = if cmd[0] == "sim" { &a[0]["requests"] } else { &a["requests"] };
            assert_eq!(requests.as_u64(), Some(if name.contains("-one") { 1 } else { 400 }), "{name}: {a}");
        }
    }
}

fn strip_names(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.remove("trace");
            m.values_mut().for_each(strip_names);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_names),
        _ => {}
    }
}

#[test]
fn out_of_range_requests_and_options_are_refused() {
    let d = tempfile::tempdir().unwrap();
    for (text, field) in [
        ("offset,length\n0,4096\n18446744073709551000,4096\n", "offset"),
        ("offset,length\n0,4096\n0,1099511627776\n", "length"),
        ("time_ns,offset\n0,0\n18446744073709551000,0\n", "time"),
    ] {
        std::fs::write(d.path().join("t.csv"), text).unwrap();
        for cmd in [&["sim", "t.csv", "-p", "lru", "-c", "10", "-m", "block"][..], &["run", "t.csv"][..], &["analyze", "t.csv"][..]] {
            let o = iostack(cmd, d.path());
            assert_eq!(o.status.code(), Some(1), "{cmd:?} {text}");
            assert!(stderr(&o).contains(&format!("line 3: field `{field}`")), "{cmd:?}: {}", stderr(&o));
        }
    }
    // Block numbers that a key cannot hold (1-byte pages far out).
    std::fs::write(d.path().join("far.csv"), "offset,length\n1125899906842624,1\n").unwrap();
    let o = iostack(&["sim", "far.csv", "-p", "lru", "-c", "10", "-m", "block", "--page-size", "1"], d.path());
    assert!(stderr(&o).contains("request 1: field `offset`") && stderr(&o).contains("2^48"), "{}", stderr(&o));
    std::fs::write(d.path().join("t.csv"), "offset\n0\n4096\n").unwrap();
    for (flag, value) in [("--think", "18446744073709551615"), ("--think", "1h"), ("--device", "fixed:100000s"), ("--dirty-expire", "1e30s")] {
        let o = iostack(&["run", "t.csv", flag, value], d.path());
        assert_eq!(o.status.code(), Some(1), "{flag} {value}");
        assert!(stderr(&o).contains("iostack: error:") && !stderr(&o).contains("panicked"), "{}", stderr(&o));
    }
}

#[test]
fn extreme_parameters_are_errors_not_panics() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("t.csv"), "offset\n0\n4096\n0\n").unwrap();
    for (cmd, flag, value) in [
        ("sim", "-p", "splitlru:up=18446744073709551615"),
        ("sim", "-p", "s3fifo:small=nan"),
        ("run", "--policy", "splitlru:up=18446744073709551615"),
        ("run", "--sched", "batch:18446744073709551615"),
        ("run", "--prefetch", "pm:18446744073709551615"),
        ("run", "--prefetch", "pa:1000000"),
        ("run", "--prefetch", "linux:max=1TiB"),
        ("run", "--device", "hdd:st3400620as,zones=4294967295"),
        ("run", "--device", "ssd:x25m,channels=1000000"),
        ("run", "--flush-interval", "1ns"),
    ] {
        let mut args = vec![cmd, "t.csv", flag, value];
        if cmd == "sim" {
            args.extend(["-c", "10"]);
        }
        let o = iostack(&args, d.path());
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("out of range") || stderr(&o).contains("more than") || stderr(&o).contains("at least"), "{args:?}: {}", stderr(&o));
    }
}

/// The files of `dir` (hidden ones too), sorted.
fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

#[cfg(unix)]
#[test]
fn interrupts_stop_at_once_and_leave_nothing() {
    use std::time::{Duration, Instant};
    for (sig, code) in [(libc::SIGINT, 130), (libc::SIGTERM, 143)] {
        let d = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_iostack"))
            .args(["gen", "zipf", "--objects", "1000000", "--requests", "1000000000", "-o", "big.csv.gz"])
            .current_dir(d.path())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Wait until the output is being written.
        let start = Instant::now();
        while files(d.path()).is_empty() && start.elapsed() < Duration::from_secs(20) {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(files(d.path()), vec![".big.csv.gz.tmp-".to_string() + &child.id().to_string()]);
        let sent = Instant::now();
        // SAFETY: signals a child this test started.
        unsafe { libc::kill(child.id() as i32, sig) };
        let status = child.wait().unwrap();
        assert!(sent.elapsed() < Duration::from_secs(1), "took {:?}", sent.elapsed());
        assert_eq!(status.code(), Some(code));
        assert!(files(d.path()).is_empty(), "{:?}", files(d.path()));
    }
    // SIGKILL leaves the documented temporary name, which the next run writing that output removes.
    let d = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_iostack"))
        .args(["gen", "zipf", "--objects", "1000", "--requests", "1000000000", "-o", "z.csv"])
        .current_dir(d.path())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while files(d.path()).is_empty() && start.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(files(d.path()).len(), 1);
    let o = iostack(&["gen", "zipf", "--objects", "10", "--requests", "100", "-o", "z.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(files(d.path()), vec!["z.csv"]);
}

#[cfg(unix)]
#[test]
fn failed_writes_exit_non_zero_and_leave_nothing() {
    let d = tempfile::tempdir().unwrap();
    for out in ["g.csv", "g.csv.gz", "g.csv.xz", "g.csv.bz2", "g.csv.zst", "g.iostack", "g.oracleGeneral.bin"] {
        // A file size limit of 64 KiB: writes beyond fail with EFBIG, as on a full disk.
        let o = Command::new("bash")
            .arg("-c")
            .arg(format!(
                "trap '' XFSZ; ulimit -f 64; exec {} gen uniform --objects 1000000 --requests 50000 --seed 3 -o {out}",
                env!("CARGO_BIN_EXE_iostack")
            ))
            .current_dir(d.path())
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{out}: {}", stderr(&o));
        assert!(stderr(&o).contains(out), "{out}: {}", stderr(&o));
        assert!(files(d.path()).is_empty(), "{out}: {:?}", files(d.path()));
    }
    // Writing through to a device: /dev/full fails, /dev/null stays a device.
    std::fs::write(d.path().join("t.csv"), "offset\n0\n4096\n").unwrap();
    if Path::new("/dev/full").exists() {
        let o = iostack(&["convert", "t.csv", "/dev/full", "--to", "csv"], d.path());
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    }
    let o = iostack(&["convert", "t.csv", "/dev/null", "--to", "csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    assert_eq!(files(d.path()), vec!["t.csv"]);
}

#[cfg(unix)]
#[test]
fn outputs_through_links_and_repeated_dumps() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("t.csv"), "offset\n0\n4096\n").unwrap();
    std::fs::write(d.path().join("real.csv"), "old").unwrap();
    std::os::unix::fs::symlink("real.csv", d.path().join("link.csv")).unwrap();
    let o = iostack(&["convert", "t.csv", "link.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::symlink_metadata(d.path().join("link.csv")).unwrap().file_type().is_symlink());
    assert!(std::fs::read_to_string(d.path().join("real.csv")).unwrap().starts_with("time_ns,"));
    std::fs::create_dir(d.path().join("dir.csv")).unwrap();
    let o = iostack(&["convert", "t.csv", "dir.csv"], d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("directory"), "{}", stderr(&o));
    let o = iostack(&["run", "t.csv", "--dump", "front=a.csv", "--dump", "device=./a.csv"], d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("two dumps"), "{}", stderr(&o));
    assert!(!d.path().join("a.csv").exists());
}
