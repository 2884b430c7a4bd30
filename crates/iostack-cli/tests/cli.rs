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
fn gen_errors() {
    let d = tempfile::tempdir().unwrap();
    let o = iostack(&["gen", "zipf", "--alpha=-1", "-o", "z.csv"], d.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--alpha"), "{}", stderr(&o));
    let o = iostack(&["gen", "pareto", "-o", "z.csv"], d.path());
    assert!(stderr(&o).contains("unknown generator `pareto`") && stderr(&o).contains("zipf"), "{}", stderr(&o));
    let o = iostack(&["gen", "zipf", "--write-ratio", "2", "-o", "z.csv"], d.path());
    assert!(stderr(&o).contains("--write-ratio"), "{}", stderr(&o));
    let o = iostack(&["gen", "zipf", "-o", "z.vscsi"], d.path());
    assert_eq!(o.status.code(), Some(1));
    let o = iostack(&["gen", "--list"], d.path());
    assert!(o.status.success() && stdout(&o).contains("uniform"));
}
