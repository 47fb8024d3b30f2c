//! The workspace's shape, checked on every `cargo test`: no import circle between the
//! modules of one crate, and no source file under `crates/*/src` longer than
//! [`MAX_LINES`].
//!
//! An import circle is a strongly connected component of more than one module in the
//! graph "module A names module B" (`use crate::b`, `use super::b`, `crate::b::X` in
//! code, or a child module by its bare name). Circles make a crate impossible to read
//! bottom-up and to split later, so shared pieces belong in a leaf module both sides use.
//! Two rules keep the graph about dependencies rather than layout:
//! - a module naming its own descendants (`mod read; pub use read::ReadTool;`,
//!   `read::install(..)`) is assembling its parts, not depending on them: no edge;
//! - a name brought in by `use` is followed to where the item lives, so `crate::Content`
//!   re-exported by `lib.rs` is an edge to `content`, not to the crate root.
//!
//! The reader (`source.rs`) is a small lexer, not a Rust parser: it drops comments,
//! string and char literals and `#[cfg(test)]` items, and reads paths from the rest;
//! `graph.rs` follows `mod x;` from each crate root, resolves the paths and finds the
//! circles (Tarjan). Their unit tests pin down the cases this code base needs.

mod graph;
mod source;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use graph::workspace_graph;

/// The longest a source file may be before it must be split along a real seam.
const MAX_LINES: usize = 600;

/// Circles tolerated while they are being removed; each entry lists the modules of one
/// circle. A circle found is tolerated only if all its modules are in one entry, and an
/// entry that no longer matches a circle fails the test so it gets deleted. Empty: there
/// are none, and a new one fails the test.
const ALLOWED_CIRCLES: &[&[&str]] = &[];

#[test]
fn no_crate_has_an_import_circle() {
    let graph = workspace_graph(&workspace_root());
    // A reader that lost its way would find no circles in an empty graph.
    let edges: usize = graph.edges.iter().map(|e| e.len()).sum();
    assert!(
        graph.names.len() > 100 && edges > 200,
        "{} modules, {edges} edges",
        graph.names.len()
    );
    let (report, tolerated) = graph.judge(ALLOWED_CIRCLES);
    if !tolerated.is_empty() {
        eprintln!("tolerated (ALLOWED_CIRCLES):\n{tolerated}");
    }
    assert!(report.is_empty(), "import circles between modules:\n{report}");
}

#[test]
fn no_source_file_is_over_the_limit() {
    let root = workspace_root();
    let mut files = Vec::new();
    for krate in crate_dirs(&root) {
        rust_files(&krate.join("src"), &mut files);
    }
    assert!(
        files.len() > 20,
        "found only {} source files under {}",
        files.len(),
        root.display()
    );
    let mut report = String::new();
    for file in files {
        let lines = read(&file).lines().count();
        if lines > MAX_LINES {
            let shown = file.strip_prefix(&root).unwrap_or(&file).display();
            let _ = writeln!(report, "{shown}: {lines} lines (limit {MAX_LINES})");
        }
    }
    assert!(report.is_empty(), "split these along a real seam:\n{report}");
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub(crate) fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

pub(crate) fn crate_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root.join("crates"))
        .expect("crates/ is readable")
        .map(|entry| entry.expect("crates/ entry").path())
        .filter(|dir| dir.join("Cargo.toml").is_file())
        .collect();
    dirs.sort();
    dirs
}

pub(crate) fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries {
        let path = entry.expect("directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}
