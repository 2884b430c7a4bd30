//! Replays every saved fuzz input (`fuzz/regressions/TARGET/*`: crashes found by fuzzing and the
//! failures that led to the parameter ranges; `fuzz/seeds/TARGET/*`: the valid examples the
//! corpora start from) through its target's body, under the normal test command.

use std::path::{Path, PathBuf};

use iostack::experiment::Experiment;
use iostack::hints::Hints;
use iostack::testing::fuzz;

fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

/// Every file under `fuzz/KIND/TARGET/`, with its contents.
fn saved(kind: &str, target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(fuzz_dir().join(kind).join(target)) else { return Vec::new() };
    let mut out: Vec<(PathBuf, Vec<u8>)> = entries
        .map(|e| {
            let p = e.unwrap().path();
            let data = std::fs::read(&p).unwrap();
            (p, data)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn saved_fuzz_inputs_replay_cleanly() {
    let targets: [(&str, fn(&[u8])); 6] = [
        ("trace_readers", fuzz::trace_readers),
        ("format_detection", fuzz::format_detection),
        ("stack_config", fuzz::stack_config),
        ("spec_strings", fuzz::spec_strings),
        ("hints", fuzz::hints),
        ("experiment", fuzz::experiment),
    ];
    let mut replayed = 0;
    for (name, body) in targets {
        for kind in ["regressions", "seeds"] {
            for (_, data) in saved(kind, name) {
                body(&data);
                replayed += 1;
            }
        }
    }
    assert!(replayed >= 15, "only {replayed} saved inputs under {}", fuzz_dir().display());
}

/// The seeds are valid examples, so that fuzzing starts from inputs that get past the parser.
#[test]
fn seeds_are_valid() {
    let hints = saved("seeds", "hints");
    assert!(hints.len() >= 4);
    for (p, data) in &hints {
        let text = std::str::from_utf8(&data[1..]).unwrap();
        let h = if data[0] & 1 == 0 { Hints::parse_toml(text, "seed") } else { Hints::parse_json(text, "seed") };
        assert!(!h.unwrap_or_else(|e| panic!("{}: {e}", p.display())).processes.is_empty());
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    for f in ["a.csv", "b.csv", "sub/c.csv"] {
        std::fs::write(dir.path().join(f), b"").unwrap();
    }
    let experiments = saved("seeds", "experiment");
    assert!(experiments.len() >= 4);
    for (p, data) in &experiments {
        let exp = Experiment::parse(std::str::from_utf8(data).unwrap(), "seed", Path::new(dir.path()));
        assert!(!exp.unwrap_or_else(|e| panic!("{}: {e}", p.display())).plan().is_empty());
    }
}
