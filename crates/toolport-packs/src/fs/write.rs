//! The write tools, offered only when a root is writable and refused under
//! read-only roots: `write_file`, `edit_file` (with a dry-run diff),
//! `create_directory`, `move_file`. Files are replaced atomically (a
//! temporary file beside them, then a rename), so a failure never leaves a
//! half-written file.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cap_std::fs::{Dir, OpenOptions, PermissionsExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use similar::TextDiff;
use toolport_server::{Json, RequestContext, ServerBuilder, ToolError, tool};

use super::error::FsError;
use super::sandbox::{Target, etag, read_range};
use super::{Shared, blocking};

/// Names of temporary files, which the watcher ignores.
pub(crate) const TEMP_MARK: &str = ".toolport-tmp-";

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh name for a temporary file beside `name` (hidden, marked, unique
/// in this process).
fn temp_name(name: &Path) -> String {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!(".{}{TEMP_MARK}{}-{n}", name.to_string_lossy(), std::process::id())
}

/// Checks what is at the target now: nothing, or a regular file with one
/// name. Returns its etag and permission bits, if it exists.
fn existing(target: &Target, parent: &Dir, name: &Path) -> Result<Option<(String, u32)>, FsError> {
    match parent.symlink_metadata(name) {
        Ok(meta) if meta.file_type().is_symlink() => Err(FsError::Invalid(format!(
            "refused: {:?} is a symbolic link; write to the path it points to instead",
            target.display()
        ))),
        Ok(meta) => {
            target.check_regular(&meta)?;
            Ok(Some((etag(&meta), meta.permissions().mode())))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(target.fail(e)),
    }
}

/// Writes `contents` to a temporary file beside `name`, then renames it over
/// `name`, after checking that the file still has `expected_etag`.
fn replace(
    target: &Target,
    parent: &Dir,
    name: &Path,
    contents: &[u8],
    expected_etag: Option<&str>,
    mode: Option<u32>,
) -> Result<String, FsError> {
    let temp = temp_name(name);
    let written = (|| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let mut file = parent.open_with(&temp, &options)?;
        file.write_all(contents)?;
        if let Some(mode) = mode {
            file.set_permissions(cap_std::fs::Permissions::from_mode(mode))?;
        }
        file.sync_all()
    })();
    if let Err(e) = written {
        let _ = parent.remove_file(&temp);
        return Err(target.fail(e));
    }
    // The last moment to notice a concurrent change.
    let now = existing(target, parent, name)?.map(|(tag, _)| tag);
    if let Some(expected) = expected_etag
        && now.as_deref() != Some(expected)
    {
        let _ = parent.remove_file(&temp);
        return Err(FsError::Invalid(format!(
            "{:?} changed since it was read (etag {expected} is not current); read it again and retry",
            target.display()
        )));
    }
    if let Err(e) = parent.rename(&temp, parent, name) {
        let _ = parent.remove_file(&temp);
        return Err(target.fail(e));
    }
    let meta = parent.symlink_metadata(name).map_err(|e| target.fail(e))?;
    Ok(etag(&meta))
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct WriteArgs {
    /// The file, relative to its root.
    path: String,
    /// The root's name (see list_roots); the first root when absent.
    root: Option<String>,
    /// The complete new contents (UTF-8 text).
    content: String,
    /// Fail if the file already exists.
    #[serde(default)]
    create_only: bool,
    /// Replace the file only if it still has this etag (from read_file or get_file_info).
    if_match: Option<String>,
}

/// What a write did.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Written {
    path: String,
    /// Bytes written.
    bytes: u64,
    /// Whether the file is new.
    created: bool,
    /// The file's new etag.
    etag: String,
}

async fn write_file(shared: Arc<Shared>, cx: RequestContext, args: WriteArgs) -> Result<Json<Written>, ToolError> {
    let access = shared.access(&cx).await?;
    let target = shared.sandbox.target(&access, args.root.as_deref(), &args.path)?;
    target.writable()?;
    let cap = shared.limits.max_write_bytes;
    blocking(move || {
        if args.content.len() as u64 > cap {
            return Err(FsError::TooLarge {
                path: target.display(),
                size: args.content.len() as u64,
                limit: cap,
                hint: "",
            });
        }
        let (parent, name) = target.parent()?;
        let before = existing(&target, &parent, &name)?;
        if before.is_some() && args.create_only {
            return Err(FsError::AlreadyExists(target.display()));
        }
        if args.if_match.is_some() && before.is_none() {
            return Err(FsError::NotFound(target.display()));
        }
        let expected = args
            .if_match
            .as_deref()
            .or(before.as_ref().map(|(tag, _)| tag.as_str()));
        let mode = before.as_ref().map(|(_, mode)| *mode);
        let etag = if before.is_none() {
            create_new(&target, &parent, &name, args.content.as_bytes())?
        } else {
            replace(&target, &parent, &name, args.content.as_bytes(), expected, mode)?
        };
        Ok(Json(Written {
            path: target.display(),
            bytes: args.content.len() as u64,
            created: before.is_none(),
            etag,
        }))
    })
    .await
}

/// Creates a file that must not exist yet, through a temporary file and a
/// hard link, so nobody sees it half-written and nothing is overwritten.
fn create_new(target: &Target, parent: &Dir, name: &Path, contents: &[u8]) -> Result<String, FsError> {
    let temp = temp_name(name);
    let result = (|| {
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        let mut file = parent.open_with(&temp, &options)?;
        file.write_all(contents)?;
        file.sync_all()?;
        // Fails when something appeared at `name` meanwhile.
        parent.hard_link(&temp, parent, name)
    })();
    let _ = parent.remove_file(&temp);
    result.map_err(|e| target.fail(e))?;
    let meta = parent.symlink_metadata(name).map_err(|e| target.fail(e))?;
    Ok(etag(&meta))
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct Edit {
    /// Text that occurs exactly once in the file (include surrounding lines to make it unique).
    #[schemars(length(min = 1))]
    old_text: String,
    /// What replaces it.
    new_text: String,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct EditArgs {
    /// The file, relative to its root.
    path: String,
    /// The root's name (see list_roots); the first root when absent.
    root: Option<String>,
    /// Replacements, applied in order.
    #[schemars(length(min = 1, max = 100))]
    edits: Vec<Edit>,
    /// Only show the diff; change nothing.
    #[serde(default)]
    dry_run: bool,
    /// Edit only if the file still has this etag.
    if_match: Option<String>,
}

/// The diff of an edit, and whether it was written.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Edited {
    path: String,
    /// A unified diff of the change.
    diff: String,
    /// False for a dry run.
    applied: bool,
    /// The file's etag afterwards (before, for a dry run).
    etag: String,
}

/// Applies the edits in order; each `old_text` must occur exactly once.
pub(crate) fn apply_edits(text: &str, edits: &[Edit]) -> Result<String, FsError> {
    let mut text = text.to_owned();
    for (i, edit) in edits.iter().enumerate() {
        if edit.old_text.is_empty() {
            return Err(FsError::Invalid(format!("edit {}: old_text is empty", i + 1)));
        }
        match text.matches(edit.old_text.as_str()).count() {
            1 => text = text.replacen(edit.old_text.as_str(), &edit.new_text, 1),
            0 => {
                return Err(FsError::Invalid(format!(
                    "edit {}: old_text was not found (after the edits before it); nothing was changed",
                    i + 1
                )));
            }
            n => {
                return Err(FsError::Invalid(format!(
                    "edit {}: old_text occurs {n} times; include more surrounding text so it occurs once; nothing was changed",
                    i + 1
                )));
            }
        }
    }
    Ok(text)
}

async fn edit_file(shared: Arc<Shared>, cx: RequestContext, args: EditArgs) -> Result<Json<Edited>, ToolError> {
    let access = shared.access(&cx).await?;
    let target = shared.sandbox.target(&access, args.root.as_deref(), &args.path)?;
    target.writable()?;
    let cap = shared.limits.max_write_bytes;
    blocking(move || {
        let (mut file, meta) = target.open_file_capped(cap, "; use write_file")?;
        let before_tag = etag(&meta);
        if let Some(expected) = &args.if_match
            && *expected != before_tag
        {
            return Err(FsError::Invalid(format!(
                "{:?} changed since it was read (etag {expected} is not current); read it again and retry",
                target.display()
            )));
        }
        let bytes = read_range(&mut file, 0, cap).map_err(|e| target.fail(e))?;
        let old = String::from_utf8(bytes).map_err(|_| FsError::NotText(target.display()))?;
        let new = apply_edits(&old, &args.edits)?;
        let shown = target.display();
        let diff = TextDiff::from_lines(&old, &new)
            .unified_diff()
            .context_radius(3)
            .header(&format!("a/{shown}"), &format!("b/{shown}"))
            .to_string();
        if args.dry_run {
            return Ok(Json(Edited {
                path: shown,
                diff,
                applied: false,
                etag: before_tag,
            }));
        }
        let (parent, name) = target.parent()?;
        let mode = meta.permissions().mode();
        let etag = replace(&target, &parent, &name, new.as_bytes(), Some(&before_tag), Some(mode))?;
        Ok(Json(Edited {
            path: shown,
            diff,
            applied: true,
            etag,
        }))
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct CreateDirArgs {
    /// The directory, relative to its root; missing parents are created too.
    path: String,
    /// The root's name (see list_roots); the first root when absent.
    root: Option<String>,
}

/// What `create_directory` did.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Created {
    path: String,
    /// False when it already existed.
    created: bool,
}

async fn create_directory(
    shared: Arc<Shared>,
    cx: RequestContext,
    args: CreateDirArgs,
) -> Result<Json<Created>, ToolError> {
    let access = shared.access(&cx).await?;
    let target = shared.sandbox.target(&access, args.root.as_deref(), &args.path)?;
    target.writable()?;
    blocking(move || {
        let created = target.create_dir_all()?;
        Ok(Json(Created {
            path: target.display(),
            created,
        }))
    })
    .await
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct MoveArgs {
    /// What to move, relative to the root.
    source: String,
    /// Where to, relative to the same root; must not exist yet.
    destination: String,
    /// The root's name (see list_roots); the first root when absent.
    root: Option<String>,
}

/// What `move_file` did.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Moved {
    source: String,
    destination: String,
}

async fn move_file(shared: Arc<Shared>, cx: RequestContext, args: MoveArgs) -> Result<Json<Moved>, ToolError> {
    let access = shared.access(&cx).await?;
    let from = shared.sandbox.target(&access, args.root.as_deref(), &args.source)?;
    let to = shared
        .sandbox
        .target(&access, args.root.as_deref(), &args.destination)?;
    from.writable()?;
    blocking(move || {
        let (from_dir, from_name) = from.parent()?;
        let (to_dir, to_name) = to.parent()?;
        from_dir.symlink_metadata(&from_name).map_err(|e| from.fail(e))?;
        match to_dir.symlink_metadata(&to_name) {
            Ok(_) => return Err(FsError::AlreadyExists(to.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(to.fail(e)),
        }
        from_dir
            .rename(&from_name, &to_dir, &to_name)
            .map_err(|e| from.fail(e))?;
        Ok(Json(Moved {
            source: from.display(),
            destination: to.display(),
        }))
    })
    .await
}

/// Adds the write tools.
pub(crate) fn install(shared: &Arc<Shared>, builder: ServerBuilder) -> ServerBuilder {
    let s = shared.clone();
    let builder = builder.tool(
        tool("write_file")
            .description("Creates or replaces a UTF-8 text file under a writable root, atomically. create_only refuses to overwrite; if_match replaces only an unchanged file.")
            .handler(move |cx: RequestContext, args: WriteArgs| write_file(s.clone(), cx, args)),
    );
    let s = shared.clone();
    let builder = builder.tool(
        tool("edit_file")
            .description("Replaces text in a file under a writable root: each edit's old_text must occur exactly once. Returns a unified diff; dry_run shows the diff without changing the file.")
            .handler(move |cx: RequestContext, args: EditArgs| edit_file(s.clone(), cx, args)),
    );
    let s = shared.clone();
    let builder = builder.tool(
        tool("create_directory")
            .description("Creates a directory (and missing parents) under a writable root.")
            .handler(move |cx: RequestContext, args: CreateDirArgs| create_directory(s.clone(), cx, args)),
    );
    let s = shared.clone();
    builder.tool(
        tool("move_file")
            .description("Moves or renames a file or directory within a writable root; the destination must not exist.")
            .handler(move |cx: RequestContext, args: MoveArgs| move_file(s.clone(), cx, args)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(old: &str, new: &str) -> Edit {
        Edit {
            old_text: old.into(),
            new_text: new.into(),
        }
    }

    #[test]
    fn edits_apply_in_order_and_need_unique_matches() {
        let text = "alpha\nbeta\ngamma\n";
        assert_eq!(
            apply_edits(text, &[edit("beta", "BETA"), edit("BETA\ngamma", "delta")]).unwrap(),
            "alpha\ndelta\n"
        );
        let missing = apply_edits(text, &[edit("zeta", "x")]).unwrap_err().to_string();
        assert!(missing.contains("edit 1: old_text was not found"), "{missing}");
        let twice = apply_edits("a a", &[edit("a", "b")]).unwrap_err().to_string();
        assert!(twice.contains("occurs 2 times"), "{twice}");
    }
}
