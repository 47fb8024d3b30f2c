//! Listing tools: `list_directory`, `directory_tree` and `search_files`, each
//! bounded. Symbolic links are reported, never descended into.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use cap_std::fs::Dir;
use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolport_server::{Json, RequestContext, ServerBuilder, TaskSupport, ToolError, tool};

use super::error::FsError;
use super::path::{PathArgs, display, kind_of};
use super::{Shared, blocking};

/// One entry of a directory.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Entry {
    /// Its name.
    name: String,
    /// "file", "directory", "symlink" or "other".
    kind: String,
    /// Size in bytes (files only).
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<u64>,
}

/// The entries of one directory, sorted by name.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Listing {
    root: String,
    path: String,
    entries: Vec<Entry>,
    /// Whether entries were left out (the cap was reached).
    truncated: bool,
}

/// Reads a directory's entries (without following links), sorted by name,
/// at most `cap` (the flag says whether more were there).
fn entries(dir: &Dir, cap: usize) -> Result<(Vec<Entry>, bool), std::io::Error> {
    let mut out = Vec::new();
    let mut truncated = false;
    for entry in dir.entries()? {
        let entry = entry?;
        if out.len() == cap {
            truncated = true;
            break;
        }
        let file_type = entry.file_type()?;
        let kind = kind_of(file_type);
        let size = if kind == "file" {
            entry.metadata().ok().map(|m| m.len())
        } else {
            None
        };
        out.push(Entry {
            name: entry.file_name().to_string_lossy().into_owned(),
            kind: kind.to_owned(),
            size,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok((out, truncated))
}

async fn list_directory(shared: Arc<Shared>, cx: RequestContext, args: PathArgs) -> Result<Json<Listing>, ToolError> {
    let access = shared.access(&cx).await?;
    let target = shared.sandbox.target(&access, args.root.as_deref(), &args.path)?;
    let cap = shared.limits.max_entries;
    blocking(move || {
        let dir = target.open_dir()?;
        let (entries, truncated) = entries(&dir, cap).map_err(|e| target.fail(e))?;
        Ok(Json(Listing {
            root: target.root.name.clone(),
            path: target.display(),
            entries,
            truncated,
        }))
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct TreeArgs {
    /// The directory, relative to its root; "." for the root itself.
    path: String,
    /// The root's name (see list_roots); the first root when absent.
    root: Option<String>,
    /// How many levels to descend (default 3, at most the server's cap, 10 by default).
    #[schemars(range(min = 1))]
    depth: Option<usize>,
}

/// A directory and what is below it.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Node {
    name: String,
    /// "file", "directory", "symlink" or "other".
    kind: String,
    /// For directories within the depth: their entries.
    #[serde(skip_serializing_if = "Option::is_none")]
    children: Option<Vec<Node>>,
}

/// A bounded tree.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Tree {
    root: String,
    path: String,
    tree: Vec<Node>,
    /// How many entries are in `tree`.
    entries: usize,
    /// Whether the entry cap cut the tree short.
    truncated: bool,
}

struct Budget {
    left: usize,
    truncated: bool,
}

fn grow(dir: &Dir, depth: usize, budget: &mut Budget) -> std::io::Result<Vec<Node>> {
    let (listed, cut) = entries(dir, budget.left)?;
    budget.truncated |= cut;
    budget.left -= listed.len();
    let mut nodes = Vec::with_capacity(listed.len());
    for entry in listed {
        let children = if entry.kind == "directory" && depth > 1 && budget.left > 0 {
            // Opened beneath this directory handle: a directory swapped for
            // a link meanwhile still cannot lead out.
            match dir.open_dir(&entry.name) {
                Ok(child) => Some(grow(&child, depth - 1, budget)?),
                Err(_) => None,
            }
        } else {
            None
        };
        nodes.push(Node {
            name: entry.name,
            kind: entry.kind,
            children,
        });
    }
    Ok(nodes)
}

async fn directory_tree(shared: Arc<Shared>, cx: RequestContext, args: TreeArgs) -> Result<Json<Tree>, ToolError> {
    let access = shared.access(&cx).await?;
    let target = shared.sandbox.target(&access, args.root.as_deref(), &args.path)?;
    let depth = args.depth.unwrap_or(3).clamp(1, shared.limits.max_depth);
    let cap = shared.limits.max_tree_entries;
    blocking(move || {
        let dir = target.open_dir()?;
        let mut budget = Budget {
            left: cap,
            truncated: false,
        };
        let tree = grow(&dir, depth, &mut budget).map_err(|e| target.fail(e))?;
        Ok(Json(Tree {
            root: target.root.name.clone(),
            path: target.display(),
            tree,
            entries: cap - budget.left,
            truncated: budget.truncated,
        }))
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct SearchArgs {
    /// A glob, e.g. "*.rs" (a pattern without '/' matches file names at any
    /// depth) or "src/**/test_*.py" (matched against the path below `path`).
    #[schemars(length(min = 1, max = 1000))]
    pattern: String,
    /// Where to search, relative to its root; the root itself when absent.
    path: Option<String>,
    /// The root's name (see list_roots); the first root when absent.
    root: Option<String>,
    /// Globs of paths to skip, e.g. ["target/**", "**/.git/**"].
    exclude: Option<Vec<String>>,
    /// Most matches to return (default and cap: the server's, 500 by default).
    #[schemars(range(min = 1))]
    max_results: Option<usize>,
}

/// Paths that match.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Matches {
    root: String,
    /// The matching paths, relative to the root.
    matches: Vec<String>,
    /// How many entries were looked at.
    visited: usize,
    /// Whether the search stopped early (result or visit cap).
    truncated: bool,
}

fn glob(pattern: &str) -> Result<Glob, FsError> {
    GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| FsError::Invalid(format!("bad glob {pattern:?}: {e}")))
}

fn glob_set(patterns: &[String]) -> Result<GlobSet, FsError> {
    let mut set = GlobSetBuilder::new();
    for p in patterns {
        set.add(glob(p)?);
    }
    set.build()
        .map_err(|e| FsError::Invalid(format!("bad exclude globs: {e}")))
}

async fn search_files(shared: Arc<Shared>, cx: RequestContext, args: SearchArgs) -> Result<Json<Matches>, ToolError> {
    let access = shared.access(&cx).await?;
    let start = args.path.as_deref().unwrap_or(".");
    let target = shared.sandbox.target(&access, args.root.as_deref(), start)?;
    let limit = args
        .max_results
        .unwrap_or(usize::MAX)
        .min(shared.limits.max_search_results);
    let max_visited = shared.limits.max_search_visited;
    blocking(move || {
        let by_name = !args.pattern.contains('/');
        let matcher = glob(&args.pattern)?.compile_matcher();
        let exclude = glob_set(args.exclude.as_deref().unwrap_or_default())?;
        let start = target.open_dir()?;
        // Paths, not open handles, wait in the queue (a wide tree must not
        // exhaust file descriptors); each is opened beneath the start.
        let mut queue = VecDeque::from([PathBuf::new()]);
        let (mut matches, mut visited, mut truncated) = (Vec::new(), 0usize, false);
        'walk: while let Some(below) = queue.pop_front() {
            let dir = if below.as_os_str().is_empty() {
                start.try_clone()
            } else {
                start.open_dir(&below)
            };
            let Ok(dir) = dir else { continue };
            let mut names: Vec<_> = match dir.entries() {
                Ok(it) => it.filter_map(Result::ok).collect(),
                Err(_) => continue,
            };
            names.sort_by_key(|e| e.file_name());
            for entry in names {
                if visited == max_visited || matches.len() == limit {
                    truncated = true;
                    break 'walk;
                }
                visited += 1;
                let name = entry.file_name();
                let rel = below.join(&name);
                if exclude.is_match(&rel) {
                    continue;
                }
                let hit = if by_name {
                    matcher.is_match(&name)
                } else {
                    matcher.is_match(&rel)
                };
                if hit {
                    matches.push(display(&target.rel.join(&rel)));
                }
                if entry.file_type().is_ok_and(|t| t.is_dir()) {
                    queue.push_back(rel);
                }
            }
        }
        Ok(Json(Matches {
            root: target.root.name.clone(),
            matches,
            visited,
            truncated,
        }))
    })
    .await
}

/// Adds the listing tools.
pub(crate) fn install(shared: &Arc<Shared>, builder: ServerBuilder) -> ServerBuilder {
    let s = shared.clone();
    let builder = builder.tool(
        tool("list_directory")
            .description(
                "Lists a directory inside a root: each entry's name, kind (file, directory, symlink, other) and size.",
            )
            .read_only()
            .handler(move |cx: RequestContext, args: PathArgs| list_directory(s.clone(), cx, args)),
    );
    let s = shared.clone();
    let builder = builder.tool(
        tool("directory_tree")
            .description("A directory's tree as nested JSON, to a depth (default 3) and an entry cap; symbolic links are shown, not followed.")
            .read_only()
            .task_support(TaskSupport::Optional)
            .resumable()
            .handler(move |cx: RequestContext, args: TreeArgs| directory_tree(s.clone(), cx, args)),
    );
    let s = shared.clone();
    builder.tool(
        tool("search_files")
            .description("Finds files and directories whose name (pattern without '/') or path below the start directory (pattern with '/') matches a glob, e.g. \"*.rs\" or \"src/**/mod.rs\". Bounded; `truncated` says whether it stopped early.")
            .read_only()
            .task_support(TaskSupport::Optional)
            .resumable()
            .handler(move |cx: RequestContext, args: SearchArgs| search_files(s.clone(), cx, args)),
    )
}
