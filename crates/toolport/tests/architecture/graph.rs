//! The module graph of every crate target, and the circles in it.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use crate::source::{Scan, scan_source};
use crate::{crate_dirs, read, rust_files};

/// Modules of every crate target as nodes; an edge remembers one place that makes it.
#[derive(Default)]
pub(crate) struct Graph {
    pub(crate) names: Vec<String>,
    /// `edges[from][to]` = (file, line) of one reference.
    pub(crate) edges: Vec<BTreeMap<usize, (String, usize)>>,
}

impl Graph {
    /// Adds a module and returns its index.
    pub(crate) fn node(&mut self, name: String) -> usize {
        self.names.push(name);
        self.edges.push(BTreeMap::new());
        self.names.len() - 1
    }

    /// The strongly connected components of more than one module.
    pub(crate) fn circles(&self) -> Vec<Vec<usize>> {
        let adjacency: Vec<Vec<usize>> = self.edges.iter().map(|e| e.keys().copied().collect()).collect();
        strongly_connected(&adjacency)
            .into_iter()
            .filter(|c| c.len() > 1)
            .collect()
    }

    /// Sorts the circles into those `allowed` lists (second) and the rest (first),
    /// and reports as failures too the entries of `allowed` no circle matches any more.
    pub(crate) fn judge(&self, allowed: &[&[&str]]) -> (String, String) {
        let (mut report, mut tolerated) = (String::new(), String::new());
        let mut used = vec![false; allowed.len()];
        for circle in self.circles() {
            let names: Vec<&str> = circle.iter().map(|&m| self.names[m].as_str()).collect();
            match allowed.iter().position(|entry| names.iter().all(|n| entry.contains(n))) {
                Some(entry) => {
                    used[entry] = true;
                    tolerated.push_str(&self.describe(&circle));
                }
                None => report.push_str(&self.describe(&circle)),
            }
        }
        for (entry, used) in allowed.iter().zip(used) {
            if !used {
                let _ = writeln!(
                    report,
                    "ALLOWED_CIRCLES lists {entry:?}, which is no longer a circle: remove it"
                );
            }
        }
        (report, tolerated)
    }

    /// One circle: its modules, then each edge inside it with the place that makes it.
    pub(crate) fn describe(&self, circle: &[usize]) -> String {
        let mut text = String::new();
        let names: Vec<&str> = circle.iter().map(|&m| self.names[m].as_str()).collect();
        let _ = writeln!(text, "  circle: {}", names.join(", "));
        for &from in circle {
            for (to, (file, line)) in &self.edges[from] {
                if circle.contains(to) {
                    let _ = writeln!(text, "    {} -> {}  ({file}:{line})", self.names[from], self.names[*to]);
                }
            }
        }
        text
    }
}

/// One crate target (a library or a binary) as a module tree.
pub(crate) struct Target {
    /// The name modules are shown under: `toolport_protocol` or `toolport (bin main)`.
    pub(crate) name: String,
    pub(crate) modules: BTreeSet<Vec<String>>,
    pub(crate) refs: Vec<Reference>,
    pub(crate) imports: Imports,
}

impl Target {
    /// Adds one file's module, its inline modules, its paths and its imports.
    pub(crate) fn add(&mut self, module: Vec<String>, scan: Scan) {
        self.modules.insert(module);
        self.modules.extend(scan.inline_modules);
        for reference in &scan.refs {
            if let Some(name) = &reference.imported_as {
                let names = self.imports.entry(reference.from.clone()).or_default();
                names.insert(name.clone(), reference.path.clone());
            }
        }
        self.refs.extend(scan.refs);
    }
}

/// Per module, the names its `use` declarations bring in and the paths they name, so
/// `super::Sandbox` leads to where `Sandbox` is defined, not to the module re-exporting it.
pub(crate) type Imports = BTreeMap<Vec<String>, BTreeMap<String, Vec<String>>>;

/// A path as written in module `from`, before it is resolved to a module.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reference {
    pub(crate) from: Vec<String>,
    pub(crate) path: Vec<String>,
    pub(crate) file: String,
    pub(crate) line: usize,
    /// For a `use` leaf, the name it brings into scope.
    pub(crate) imported_as: Option<String>,
}

/// The modules of every target (library, `main.rs`, `bin/*.rs`) of every crate.
pub(crate) fn workspace_graph(root: &Path) -> Graph {
    let mut graph = Graph::default();
    for dir in crate_dirs(root) {
        let krate = dir
            .file_name()
            .expect("crate dir name")
            .to_string_lossy()
            .replace('-', "_");
        let src = dir.join("src");
        let mut roots = Vec::new();
        if src.join("lib.rs").is_file() {
            roots.push((krate.clone(), src.join("lib.rs")));
        }
        if src.join("main.rs").is_file() {
            roots.push((format!("{krate} (bin main)"), src.join("main.rs")));
        }
        let mut bins = Vec::new();
        rust_files(&src.join("bin"), &mut bins);
        bins.sort();
        for bin in bins.into_iter().filter(|b| b.parent() == Some(&src.join("bin"))) {
            let stem = bin.file_stem().expect("bin stem").to_string_lossy().into_owned();
            roots.push((format!("{krate} (bin {stem})"), bin));
        }
        for (name, file) in roots {
            let target = read_target(root, name, &file);
            add_target(&mut graph, &target);
        }
    }
    graph
}

/// Reads the module tree `mod x;` by `mod x;` from a crate root, as `x.rs` or `x/mod.rs`.
pub(crate) fn read_target(root: &Path, name: String, root_file: &Path) -> Target {
    let mut target = Target {
        name,
        modules: BTreeSet::new(),
        refs: Vec::new(),
        imports: Imports::new(),
    };
    // (module path, file, directory its `mod x;` children live in)
    let mut pending = vec![(
        Vec::new(),
        root_file.to_path_buf(),
        root_file.parent().expect("root dir").to_path_buf(),
    )];
    while let Some((module, file, dir)) = pending.pop() {
        let shown = file.strip_prefix(root).unwrap_or(&file).display().to_string();
        let mut scan = scan_source(&read(&file), &module, &shown);
        let children = std::mem::take(&mut scan.child_files);
        target.add(module.clone(), scan);
        for child in children {
            let as_file = dir.join(format!("{child}.rs"));
            let (child_file, child_dir) = if as_file.is_file() {
                (as_file, dir.join(&child))
            } else {
                (dir.join(&child).join("mod.rs"), dir.join(&child))
            };
            assert!(child_file.is_file(), "{shown}: `mod {child};` has no file");
            let mut path = module.clone();
            path.push(child);
            pending.push((path, child_file, child_dir));
        }
    }
    target
}

/// Adds a target's modules and the edges its resolved paths make.
pub(crate) fn add_target(graph: &mut Graph, target: &Target) {
    let mut ids = BTreeMap::new();
    for module in &target.modules {
        let name = std::iter::once(target.name.as_str()).chain(module.iter().map(String::as_str));
        ids.insert(module.clone(), graph.node(name.collect::<Vec<_>>().join("::")));
    }
    for reference in &target.refs {
        let Some(to) = resolve(&reference.from, &reference.path, target, 0) else {
            continue;
        };
        // A module owns its descendants: naming them (`mod x; pub use x::Y;`, calling
        // `x::run()`) is assembly, not a dependency that can close a circle.
        if to.starts_with(&reference.from) {
            continue;
        }
        let (from, to) = (ids[&reference.from], ids[&to]);
        if from != to {
            graph.edges[from]
                .entry(to)
                .or_insert_with(|| (reference.file.clone(), reference.line));
        }
    }
}

/// The module a path written in `from` lands in: the longest prefix of the absolute
/// path that is a module, following that module's imports for the next segment.
/// `None` for paths into other crates.
pub(crate) fn resolve(from: &[String], path: &[String], target: &Target, hops: usize) -> Option<Vec<String>> {
    let modules = &target.modules;
    let first = path.first()?.as_str();
    let (mut absolute, rest) = match first {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (from.to_vec(), &path[1..]),
        "super" => {
            let supers = path.iter().take_while(|s| *s == "super").count();
            let keep = from.len().checked_sub(supers)?;
            (from[..keep].to_vec(), &path[supers..])
        }
        child if modules.contains(&[from, &[child.to_string()]].concat()) => (from.to_vec(), path),
        _ => return None,
    };
    absolute.extend(rest.iter().cloned());
    let module = (0..=absolute.len())
        .rev()
        .map(|len| absolute[..len].to_vec())
        .find(|m| modules.contains(m))?;
    let imported = absolute
        .get(module.len())
        .and_then(|name| target.imports.get(&module)?.get(name));
    match imported {
        // Bounded: an import chain longer than this is a circle of `use`s rustc rejects.
        Some(import) if hops < 16 => {
            let onward = [import.as_slice(), &absolute[module.len() + 1..]].concat();
            resolve(&module, &onward, target, hops + 1)
        }
        _ => Some(module),
    }
}

/// Tarjan's algorithm: the strongly connected components of a graph given as adjacency
/// lists, each sorted, in no particular order.
pub(crate) fn strongly_connected(adjacency: &[Vec<usize>]) -> Vec<Vec<usize>> {
    struct State<'a> {
        adjacency: &'a [Vec<usize>],
        index: Vec<Option<usize>>,
        low: Vec<usize>,
        on_stack: Vec<bool>,
        stack: Vec<usize>,
        next: usize,
        components: Vec<Vec<usize>>,
    }
    fn visit(s: &mut State<'_>, v: usize) {
        s.index[v] = Some(s.next);
        s.low[v] = s.next;
        s.next += 1;
        s.stack.push(v);
        s.on_stack[v] = true;
        for &w in &s.adjacency[v] {
            match s.index[w] {
                None => {
                    visit(s, w);
                    s.low[v] = s.low[v].min(s.low[w]);
                }
                Some(index) if s.on_stack[w] => s.low[v] = s.low[v].min(index),
                Some(_) => {}
            }
        }
        if Some(s.low[v]) == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack[w] = false;
                component.push(w);
                if w == v {
                    break;
                }
            }
            component.sort_unstable();
            s.components.push(component);
        }
    }
    let n = adjacency.len();
    let mut state = State {
        adjacency,
        index: vec![None; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        next: 0,
        components: Vec::new(),
    };
    for v in 0..n {
        if state.index[v].is_none() {
            visit(&mut state, v);
        }
    }
    state.components
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(text: &str) -> Vec<String> {
        text.split("::").filter(|s| !s.is_empty()).map(String::from).collect()
    }

    /// A target made of synthetic files: (module path, source).
    fn target(files: &[(&str, &str)]) -> Target {
        let mut target = Target {
            name: "demo".into(),
            modules: BTreeSet::new(),
            refs: Vec::new(),
            imports: Imports::new(),
        };
        for (module, source) in files {
            let module = path(module);
            let scan = scan_source(source, &module, "demo.rs");
            target.add(module, scan);
        }
        target
    }

    fn circles_of(files: &[(&str, &str)]) -> Vec<Vec<String>> {
        let mut graph = Graph::default();
        add_target(&mut graph, &target(files));
        let mut circles: Vec<Vec<String>> = graph
            .circles()
            .iter()
            .map(|c| c.iter().map(|&m| graph.names[m].clone()).collect())
            .collect();
        circles.sort();
        circles
    }

    #[test]
    fn tarjan_finds_each_component_once() {
        // 0 → 1 → 2 → 0 is a circle; 3 ⇄ 4 another, reached from it; 5 only points at itself.
        let adjacency = vec![vec![1], vec![2], vec![0, 3], vec![4], vec![3], vec![5]];
        let mut components = strongly_connected(&adjacency);
        components.sort();
        assert_eq!(components, vec![vec![0, 1, 2], vec![3, 4], vec![5]]);
    }

    #[test]
    fn tarjan_sees_no_circle_in_a_tree() {
        let adjacency = vec![vec![1, 2], vec![3], vec![3], vec![]];
        assert!(strongly_connected(&adjacency).iter().all(|c| c.len() == 1));
    }

    #[test]
    fn a_circle_through_three_modules_is_reported_with_its_edges() {
        let files = [
            ("", "mod a; mod b; mod c;"),
            ("a", "use crate::b::Thing;"),
            ("b", "fn f() { super::c::run(); }"),
            ("c", "use crate::{a, d::X};"),
        ];
        assert_eq!(circles_of(&files), vec![vec!["demo::a", "demo::b", "demo::c"]]);
        let mut graph = Graph::default();
        add_target(&mut graph, &target(&files));
        let circle = &graph.circles()[0];
        let text = graph.describe(circle);
        assert!(text.contains("demo::a -> demo::b  (demo.rs:1)"), "{text}");
        assert!(text.contains("demo::c -> demo::a  (demo.rs:1)"), "{text}");
    }

    #[test]
    fn only_the_circles_allowed_are_tolerated_and_stale_entries_fail() {
        let files = [
            ("", "mod a; mod b; mod c; mod d;"),
            ("a", "use crate::b::X;"),
            ("b", "use crate::a::Y;"),
        ];
        let mut graph = Graph::default();
        add_target(&mut graph, &target(&files));
        let (report, tolerated) = graph.judge(&[]);
        assert!(
            report.contains("circle: demo::a, demo::b") && tolerated.is_empty(),
            "{report}"
        );
        let (report, tolerated) = graph.judge(&[&["demo::a", "demo::b", "demo::c"]]);
        assert!(
            report.is_empty() && tolerated.contains("demo::a -> demo::b"),
            "{report}"
        );
        let (report, _) = graph.judge(&[&["demo::a", "demo::b"], &["demo::c", "demo::d"]]);
        assert!(
            report.contains(r#"["demo::c", "demo::d"], which is no longer a circle"#),
            "{report}"
        );
        let (report, _) = graph.judge(&[&["demo::a"]]);
        assert!(
            report.contains("circle: demo::a, demo::b"),
            "a circle larger than its entry fails: {report}"
        );
    }

    #[test]
    fn a_parent_naming_its_children_is_no_circle() {
        let files = [
            ("", "mod fs; pub struct Config;"),
            (
                "fs",
                "mod read; pub use read::ReadTool; pub struct Shared; fn go() { read::install(); }",
            ),
            ("fs::read", "use super::Shared; use crate::Config;"),
        ];
        assert!(circles_of(&files).is_empty());
    }

    #[test]
    fn a_re_export_is_followed_to_where_the_item_lives() {
        // `lib` re-exports `Content`; `tools` naming `crate::Content` depends on `content`,
        // which closes a circle with `content` naming `tools`.
        let files = [
            ("", "mod content; mod tools; pub use content::Content;"),
            ("content", "use crate::tools::Tool;"),
            ("tools", "fn f(c: crate::Content) {}"),
        ];
        assert_eq!(circles_of(&files), vec![vec!["demo::content", "demo::tools"]]);
        let imports = target(&files);
        let to = resolve(&path("tools"), &path("crate::Content"), &imports, 0);
        assert_eq!(to, Some(path("content")));
    }

    #[test]
    fn paths_into_other_crates_resolve_to_nothing() {
        let files = [("", "mod a;"), ("a", "use serde::Serialize;")];
        let target = target(&files);
        assert_eq!(resolve(&path("a"), &path("serde::Serialize"), &target, 0), None);
        assert_eq!(resolve(&path("a"), &path("super::super::x"), &target, 0), None);
        assert_eq!(resolve(&path(""), &path("a::Thing"), &target, 0), Some(path("a")));
    }
}
