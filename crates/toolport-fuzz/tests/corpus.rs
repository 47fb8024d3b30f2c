//! Every fuzz target's corpus (`fuzz/corpus/<target>/`, seeds and every
//! input a fuzzing run kept or crashed on) replayed through its body.

use std::path::PathBuf;

#[test]
fn every_corpus_replays_without_a_failure() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let mut replayed = 0;
    for (name, target) in toolport_fuzz::TARGETS {
        let dir = root.join(name);
        let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).filter(|p| p.is_file()).collect();
        files.sort();
        assert!(!files.is_empty(), "{name} has no seed corpus");
        for file in files {
            let data = std::fs::read(&file).unwrap();
            let outcome = std::panic::catch_unwind(|| target(&data));
            assert!(outcome.is_ok(), "{name}: {} fails", file.display());
            replayed += 1;
        }
    }
    assert!(replayed >= toolport_fuzz::TARGETS.len());
}

#[test]
fn every_target_has_a_libfuzzer_entry() {
    let targets = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/fuzz_targets");
    for (name, _) in toolport_fuzz::TARGETS {
        assert!(
            targets.join(format!("{name}.rs")).exists(),
            "fuzz/fuzz_targets/{name}.rs is missing"
        );
    }
}
