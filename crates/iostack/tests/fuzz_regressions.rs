//! Replays every saved fuzz input (`fuzz/regressions/TARGET/*`: crashes found by fuzzing and the
//! failures that led to the parameter ranges) through its target's body, under the normal test
//! command.

use std::path::PathBuf;

use iostack::testing::fuzz;

#[test]
fn saved_fuzz_inputs_replay_cleanly() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions");
    let targets: [(&str, fn(&[u8])); 4] = [
        ("trace_readers", fuzz::trace_readers),
        ("format_detection", fuzz::format_detection),
        ("stack_config", fuzz::stack_config),
        ("spec_strings", fuzz::spec_strings),
    ];
    let mut replayed = 0;
    for (name, body) in targets {
        let dir = root.join(name);
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for e in entries {
            let p = e.unwrap().path();
            let data = std::fs::read(&p).unwrap();
            body(&data);
            replayed += 1;
        }
    }
    assert!(replayed >= 7, "only {replayed} saved inputs under {}", root.display());
}
