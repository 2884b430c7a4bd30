//! The `formats`, `convert` and `gen` commands, run as a user runs them.

use std::path::Path;
use std::process::{Command, Output};

fn iostack(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_iostack")).args(args).current_dir(dir).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn formats_lists_every_format() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["formats"], d.path());
    assert!(o.status.success());
    let text = stdout(&o);
    for f in iostack::trace::FORMATS {
        assert!(text.lines().any(|l| l.starts_with(f.name)), "{} missing:\n{text}", f.name);
    }
    assert!(text.contains("generic-csv     no"), "{text}");
}

#[test]
fn gen_zipf_then_convert_round_trip() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["gen", "zipf", "--alpha", "0.8", "--objects", "500", "--requests", "3000", "--seed", "7", "--write-ratio", "0.25", "--files", "5", "-o", "z.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("3000 requests"), "{}", stdout(&o));
    // Same seed, same bytes.
    let o = iostack(&["gen", "zipf", "--alpha", "0.8", "--objects", "500", "--requests", "3000", "--seed", "7", "--write-ratio", "0.25", "--files", "5", "-o", "z2.csv"], d.path());
    assert!(o.status.success());
    let z = std::fs::read(d.path().join("z.csv")).unwrap();
    assert_eq!(z, std::fs::read(d.path().join("z2.csv")).unwrap());
    let o = iostack(&["convert", "z.csv", "z.iostack"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let o = iostack(&["convert", "z.iostack", "z3.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(z, std::fs::read(d.path().join("z3.csv")).unwrap());
    let text = String::from_utf8(z).unwrap();
    assert_eq!(text.lines().count(), 3001);
    assert!(text.lines().skip(1).any(|l| l.contains(",W,")));
}

#[test]
fn gen_oracle_general_is_read_back() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["gen", "uniform", "--objects", "100", "--requests", "1000", "-o", "u.oracleGeneral.bin"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(d.path().join("u.oracleGeneral.bin")).unwrap().len(), 24_000);
    let o = iostack(&["convert", "u.oracleGeneral.bin", "u.csv"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("(oracle-general)") && stdout(&o).contains("1000 requests"), "{}", stdout(&o));
}

#[test]
fn convert_errors() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("t.csv"), "offset,length\n0,512\n12x,512\n").unwrap();
    let o = iostack(&["convert", "t.csv", "t.iostack"], d.path());
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("t.csv: line 3: field `offset`: `12x` is not a number"), "{e}");
    assert!(!d.path().join("t.iostack").exists());
    let o = iostack(&["convert", "t.csv", "t2.iostack", "--skip-invalid"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("1 requests") && stdout(&o).contains("1 malformed"), "{}", stdout(&o));
    let o = iostack(&["convert", "t.csv", "t.csv", "--to", "csv"], d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("is the input"));
    assert_eq!(std::fs::read_to_string(d.path().join("t.csv")).unwrap(), "offset,length\n0,512\n12x,512\n");
    let o = iostack(&["convert", "t.csv", "x", "--from", "nope"], d.path());
    assert!(stderr(&o).contains("--from: unknown trace format `nope`; valid: csv"), "{}", stderr(&o));
    let o = iostack(&["convert", "t.csv", "x.txt"], d.path());
    assert!(stderr(&o).contains("cannot tell the output format"), "{}", stderr(&o));
    let o = iostack(&["convert", "missing.csv", "x.csv"], d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("missing.csv"), "{}", stderr(&o));
}

#[test]
fn convert_generic_and_blkparse_options() {
    let d = tempfile::tempdir().unwrap();
    std::fs::write(d.path().join("g.txt"), "1 W 100\n2 R 200\n").unwrap();
    let o = iostack(&["convert", "g.txt", "g.csv", "--mapping", "time=0,time_unit=us,op=1,offset=2,offset_unit=512,delimiter=space"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    let text = std::fs::read_to_string(d.path().join("g.csv")).unwrap();
    assert_eq!(text.lines().nth(1), Some("0,0,W,51200,4096,0,,,"));
    assert_eq!(text.lines().nth(2), Some("1000,0,R,102400,4096,0,,,"));
    let Some(blk) = iostack::testing::shared_path("traces/blkparse/blktrace.txt") else { return };
    let blk = blk.to_string_lossy().into_owned();
    let o = iostack(&["convert", &blk, "d.csv", "--blkparse-event", "d"], d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("170 requests"), "{}", stdout(&o));
}

#[test]
fn gen_whole_request_generators() {
    let d = tempfile::tempdir().unwrap();
    // spc2 reads --requests and --seed; its own settings are parameters.
    let args = ["gen", "spc2", "--requests", "2000", "--seed", "3", "--param", "multiple=20", "--param", "random=5", "--param", "mean_gap=10ms", "-o", "s.csv"];
    let o = iostack(&args, d.path());
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("spc2: 2000 requests"), "{}", stdout(&o));
    let s = std::fs::read_to_string(d.path().join("s.csv")).unwrap();
    assert_eq!(s.lines().count(), 2001);
    let o = iostack(&args[..args.len() - 1].iter().copied().chain(["s2.csv"]).collect::<Vec<_>>(), d.path());
    assert!(o.status.success());
    assert_eq!(s, std::fs::read_to_string(d.path().join("s2.csv")).unwrap(), "same seed, same workload");
    // mixed-files: multi-block requests of three processes; sizes come from its parameters.
    let o = iostack(
        &["gen", "mixed-files", "--param", "data_files=1", "--param", "data_file_blocks=64", "--param", "passes=2", "--param", "index_reads=10", "--param", "small_reads=5", "--param", "index_think=1ms", "-o", "m.csv"],
        d.path(),
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let m = std::fs::read_to_string(d.path().join("m.csv")).unwrap();
    // 2 passes x 64 blocks in reads of 8, 10 index reads, 5 small-file reads.
    assert_eq!(m.lines().count(), 1 + 16 + 10 + 5, "{m}");
    assert!(m.lines().skip(1).any(|l| l.contains(",32768,")), "8-block scan reads: {m}");
}

#[test]
fn gen_whole_request_generator_errors() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["gen", "mixed-files", "--objects", "10", "-o", "m.csv"], d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--objects") && stderr(&o).contains("mixed-files") && stderr(&o).contains("--seed"), "{}", stderr(&o));
    let o = iostack(&["gen", "spc2", "--param", "mean_run=x", "-o", "s.csv"], d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("spc2.mean_run"), "{}", stderr(&o));
    let o = iostack(&["gen", "mixed-files", "--param", "hot_share=2", "-o", "m.csv"], d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("mixed-files.hot_share: 2 is out of range (0 to 1)"), "{}", stderr(&o));
    let o = iostack(&["gen", "spc2", "--param", "bogus=1", "-o", "s.csv"], d.path());
    assert!(stderr(&o).contains("spc2.bogus") && stderr(&o).contains("mean_gap"), "{}", stderr(&o));
    let o = iostack(&["gen", "--list"], d.path());
    assert!(stdout(&o).contains("mixed-files") && stdout(&o).contains("spc2") && stdout(&o).contains("index_think"), "{}", stdout(&o));
}

#[test]
fn gen_errors() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["gen", "zipf", "--alpha=-1", "-o", "z.csv"], d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("zipf.alpha: -1 is out of range (0 to 100)"), "{}", stderr(&o));
    let o = iostack(&["gen", "pareto", "-o", "z.csv"], d.path());
    assert!(stderr(&o).contains("unknown generator `pareto`") && stderr(&o).contains("zipf"), "{}", stderr(&o));
    let o = iostack(&["gen", "zipf", "--write-ratio", "2", "-o", "z.csv"], d.path());
    assert!(stderr(&o).contains("--write-ratio"), "{}", stderr(&o));
    let o = iostack(&["gen", "zipf", "-o", "z.vscsi"], d.path());
    assert_eq!(o.status.code(), Some(1));
    let o = iostack(&["gen", "--list"], d.path());
    assert!(o.status.success() && stdout(&o).contains("uniform"));
}

#[test]
fn convert_reads_standard_input() {
    use std::io::Write;
    use std::process::Stdio;
    let d = tempfile::tempdir().unwrap();
    let text = "0,R,4096,8192,1577808000000087\n3,W,0,512,1577808000001087\n";
    let gz = gzip(text.as_bytes());
    for input in [text.as_bytes().to_vec(), gz] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_iostack"))
            .args(["convert", "-", "a.csv"])
            .current_dir(d.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&input).unwrap();
        let o = child.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains("(alibaba)") && stdout(&o).contains("2 requests"), "{}", stdout(&o));
        let out = std::fs::read_to_string(d.path().join("a.csv")).unwrap();
        assert_eq!(out.lines().nth(2), Some("1000000,0,W,0,512,3,,,"));
    }
}

/// Gzip of `data` through the system's gzip (skips compression when it is missing).
fn gzip(data: &[u8]) -> Vec<u8> {
    use std::io::Write;
    use std::process::Stdio;
    let Ok(mut child) = Command::new("gzip").arg("-c").stdin(Stdio::piped()).stdout(Stdio::piped()).spawn() else {
        return data.to_vec();
    };
    child.stdin.take().unwrap().write_all(data).unwrap();
    child.wait_with_output().unwrap().stdout
}

/// Runs iostack with `input` on its standard input.
fn iostack_with_stdin(args: &[&str], dir: &Path, input: &[u8]) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_iostack")).args(args).current_dir(dir).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

#[test]
fn gen_streams_to_standard_output() {
    let d = tempfile::tempdir().unwrap();
    let zipf = ["gen", "zipf", "--alpha", "0.9", "--objects", "2000", "--requests", "5000", "--seed", "3"];
    for (name, format) in [("z.bin", "bin"), ("z.csv", "csv")] {
        let o = iostack(&[&zipf[..], &["-o", name]].concat(), d.path());
        assert!(o.status.success(), "{}", stderr(&o));
        let o = iostack(&[&zipf[..], &["-o", "-", "--format", format]].concat(), d.path());
        assert!(o.status.success(), "{}", stderr(&o));
        // The trace alone on standard output, the summary on standard error.
        assert_eq!(o.stdout, std::fs::read(d.path().join(name)).unwrap(), "{format}");
        assert!(stderr(&o).contains("5000 requests"), "{}", stderr(&o));
    }
    // Binary unless told otherwise.
    let o = iostack(&[&zipf[..], &["-o", "-"]].concat(), d.path());
    assert_eq!(o.stdout, std::fs::read(d.path().join("z.bin")).unwrap());
    // Nothing was written beside the outputs (no file named `-`, no temporary file).
    let mut names: Vec<String> = std::fs::read_dir(d.path()).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["z.bin", "z.csv"]);
    // oracleGeneral needs the whole file: refused, with nothing on standard output.
    let o = iostack(&[&zipf[..], &["-o", "-", "--format", "oracle-general"]].concat(), d.path());
    assert!(!o.status.success());
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).contains("standard output"), "{}", stderr(&o));
    // What streams out reads back from `-` as from the file.
    let piped = iostack(&[&zipf[..], &["-o", "-"]].concat(), d.path()).stdout;
    let sim = ["sim", "--format", "bin", "--policy", "lru", "--cache", "100", "--json"];
    let from_file = iostack(&[&sim[..1], &["z.bin"], &sim[1..]].concat(), d.path());
    let from_pipe = iostack_with_stdin(&[&sim[..1], &["-"], &sim[1..]].concat(), d.path(), &piped);
    assert!(from_pipe.status.success(), "{}", stderr(&from_pipe));
    assert_eq!(stdout(&from_file).replace("\"z.bin\"", "\"-\""), stdout(&from_pipe));
}
