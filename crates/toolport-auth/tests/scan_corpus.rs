//! The poisoned-description scanner against two corpora kept in the repo
//! (`tests/corpus/`): every poisoned definition is flagged by the rules it
//! was written to trip, and not one ordinary definition is flagged.

use std::path::PathBuf;

use serde_json::Value;
use toolport_auth::scan::{ScanContext, scan_tool};

fn corpus(name: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn every_poisoned_description_is_flagged_by_its_rules() {
    let poisoned = corpus("poisoned.json");
    assert!(poisoned.len() >= 20);
    for case in &poisoned {
        let tool = &case["tool"];
        let findings = scan_tool(tool, &ScanContext::default());
        let rules: Vec<&str> = findings.iter().map(|f| f.rule.name()).collect();
        for expected in case["expect"].as_array().unwrap() {
            let expected = expected.as_str().unwrap();
            assert!(
                rules.contains(&expected),
                "{}: expected {expected}, found {rules:?}",
                tool["name"]
            );
        }
    }
}

#[test]
fn no_ordinary_description_is_flagged() {
    let benign = corpus("benign.json");
    assert!(benign.len() >= 30);
    let findings: Vec<_> = benign
        .iter()
        .flat_map(|tool| scan_tool(tool, &ScanContext::default()))
        .collect();
    assert!(findings.is_empty(), "false positives: {findings:#?}");
}
