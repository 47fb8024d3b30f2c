//! The read tools: `list_roots`, `read_file`, `get_file_info`; `read_media`
//! lives in `media.rs`, the listing tools in `tree.rs`.

use std::sync::Arc;

use cap_std::fs::{Metadata, MetadataExt, PermissionsExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Map;
use toolport_protocol::tools::CallToolResult;
use toolport_server::schema::schema_for;
use toolport_server::{IntoToolOutput, Json, NoArgs, RequestContext, ServerBuilder, ToolError, tool};

use super::error::FsError;
use super::path::{PathArgs, display, kind_of};
use super::sandbox::{etag, read_range};
use super::{Shared, blocking};
use crate::time::system_time;

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ReadFileArgs {
    /// The file, relative to its root, e.g. "src/main.rs".
    pub(crate) path: String,
    /// The root's name (see list_roots); the first root when absent.
    pub(crate) root: Option<String>,
    /// First byte to read (0 when absent).
    pub(crate) offset: Option<u64>,
    /// How many bytes to read; up to the server's cap (1 MiB by default).
    pub(crate) length: Option<u64>,
    /// An etag from an earlier read or get_file_info: when the file still
    /// has it, nothing is read and `notModified` is true.
    pub(crate) if_none_match: Option<String>,
}

/// A window of a text file.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileText {
    /// The root it was read from.
    root: String,
    /// Its path in the root.
    path: String,
    /// Its `file://` URI.
    uri: String,
    /// The file's size in bytes.
    size: u64,
    /// The first byte returned.
    offset: u64,
    /// How many bytes were returned.
    length: u64,
    /// Whether the file goes on after the returned bytes (read on from `offset + length`).
    truncated: bool,
    /// The validator for `ifNoneMatch`.
    etag: String,
    /// True when `ifNoneMatch` matched: the file is unchanged and `text` is absent.
    not_modified: bool,
    /// The text.
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
}

/// The file's text is the tool's text content (not its JSON), so a model
/// reads the file as it is; the details are the structured content.
impl IntoToolOutput for FileText {
    fn output_schema() -> Option<Map<String, serde_json::Value>> {
        Some(schema_for::<FileText>())
    }

    fn into_tool_output(self) -> Result<CallToolResult, ToolError> {
        let text = match &self.text {
            Some(text) => text.clone(),
            None => format!("{} is unchanged (etag {})", self.path, self.etag),
        };
        let structured = serde_json::to_value(&self)?;
        let mut result = CallToolResult::text(text);
        result.structured_content = Some(structured);
        Ok(result)
    }
}

async fn read_file(shared: Arc<Shared>, cx: RequestContext, args: ReadFileArgs) -> Result<FileText, ToolError> {
    let access = shared.access(&cx).await?;
    let target = shared.sandbox.target(&access, args.root.as_deref(), &args.path)?;
    let cap = shared.limits.max_read_bytes;
    blocking(move || {
        let (mut file, meta) = target.open_file()?;
        let tag = etag(&meta);
        let mut out = FileText {
            root: target.root.name.clone(),
            path: target.display(),
            uri: target.uri(),
            size: meta.len(),
            offset: args.offset.unwrap_or(0),
            length: 0,
            truncated: false,
            etag: tag.clone(),
            not_modified: false,
            text: None,
        };
        if args.if_none_match.as_deref() == Some(tag.as_str()) {
            out.not_modified = true;
            return Ok(out);
        }
        if out.offset > out.size {
            return Err(FsError::Invalid(format!(
                "offset {} is past the end of {:?} ({} bytes)",
                out.offset, out.path, out.size
            )));
        }
        let wanted = args.length.unwrap_or(out.size - out.offset).min(cap);
        let bytes = read_range(&mut file, out.offset, wanted).map_err(|e| target.fail(e))?;
        let text = utf8_window(bytes).ok_or_else(|| FsError::NotText(out.path.clone()))?;
        out.length = text.len() as u64;
        out.truncated = out.offset + out.length < out.size;
        out.text = Some(text);
        Ok(out)
    })
    .await
}

/// The bytes as text; a character cut at the end of the window is left for
/// the next window. `None` for binary content (invalid UTF-8 or NUL bytes).
fn utf8_window(mut bytes: Vec<u8>) -> Option<String> {
    if bytes.contains(&0) {
        return None;
    }
    match std::str::from_utf8(&bytes) {
        Ok(_) => {}
        // Only an incomplete character at the very end is forgiven.
        Err(e) if e.error_len().is_none() && bytes.len() - e.valid_up_to() < 4 && e.valid_up_to() > 0 => {
            bytes.truncate(e.valid_up_to());
        }
        Err(_) => return None,
    }
    String::from_utf8(bytes).ok()
}

/// What a path is.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub(crate) struct FileInfo {
    root: String,
    path: String,
    uri: String,
    /// "file", "directory", "symlink" or "other".
    kind: String,
    /// Size in bytes.
    size: u64,
    /// Last modification, RFC 3339 UTC.
    modified: Option<String>,
    /// Last access, RFC 3339 UTC.
    accessed: Option<String>,
    /// Creation, RFC 3339 UTC, where the filesystem records it.
    created: Option<String>,
    /// Permission bits, octal (e.g. "644").
    permissions: String,
    /// Whether the permission bits forbid writing.
    read_only: bool,
    /// Hard links (a regular file with more than one is not opened).
    links: u64,
    /// The validator `read_file` accepts as `ifNoneMatch`.
    etag: Option<String>,
}

fn info(root: String, path: String, uri: String, meta: &Metadata) -> FileInfo {
    let kind = kind_of(meta.file_type());
    FileInfo {
        root,
        path,
        uri,
        kind: kind.to_owned(),
        size: meta.len(),
        modified: meta.modified().ok().map(|t| system_time(t.into_std())),
        accessed: meta.accessed().ok().map(|t| system_time(t.into_std())),
        created: meta.created().ok().map(|t| system_time(t.into_std())),
        permissions: format!("{:o}", meta.permissions().mode() & 0o7777),
        read_only: meta.permissions().readonly(),
        links: meta.nlink(),
        etag: (kind == "file").then(|| etag(meta)),
    }
}

async fn get_file_info(shared: Arc<Shared>, cx: RequestContext, args: PathArgs) -> Result<Json<FileInfo>, ToolError> {
    let access = shared.access(&cx).await?;
    let target = shared.sandbox.target(&access, args.root.as_deref(), &args.path)?;
    blocking(move || {
        let meta = target.symlink_metadata()?;
        Ok(Json(info(
            target.root.name.clone(),
            target.display(),
            target.uri(),
            &meta,
        )))
    })
    .await
}

/// The roots this server may use.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Roots {
    roots: Vec<RootInfo>,
}

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
struct RootInfo {
    /// The name tools take as `root`.
    name: String,
    /// Where it is.
    path: String,
    /// Its `file://` URI.
    uri: String,
    /// Whether the write tools may change it.
    writable: bool,
    /// The paths inside it this client may use ("." for all of it; fewer
    /// when the client's own roots narrow access).
    allowed: Vec<String>,
}

async fn list_roots(shared: Arc<Shared>, cx: RequestContext, _: NoArgs) -> Result<Json<Roots>, ToolError> {
    // The roots this client may use, and where its own roots narrow them.
    let access = shared.access(&cx).await?;
    let roots = shared
        .sandbox
        .roots
        .iter()
        .filter_map(|r| {
            let bases = access.bases(r);
            (!bases.is_empty()).then(|| RootInfo {
                name: r.name.clone(),
                path: r.path.display().to_string(),
                uri: r.uri(std::path::Path::new("")),
                writable: r.writable,
                allowed: bases.iter().map(|b| display(b)).collect(),
            })
        })
        .collect();
    Ok(Json(Roots { roots }))
}

/// Adds the read tools.
pub(crate) fn install(shared: &Arc<Shared>, builder: ServerBuilder) -> ServerBuilder {
    let s = shared.clone();
    let builder = builder.tool(
        tool("list_roots")
            .description("Lists the directories this server may read (and which it may write). Every other file tool takes a path relative to one of them and an optional `root` name; the first root is the default.")
            .read_only()
            .handler(move |cx: RequestContext, args: NoArgs| list_roots(s.clone(), cx, args)),
    );
    let s = shared.clone();
    let builder = builder.tool(
        tool("read_file")
            .description("Reads a UTF-8 text file inside a root. Large files are read in byte ranges (offset, length); `truncated` says whether more follows. Pass an earlier etag as ifNoneMatch to skip an unchanged file.")
            .read_only()
            .handler(move |cx: RequestContext, args: ReadFileArgs| read_file(s.clone(), cx, args)),
    );
    let s = shared.clone();
    builder.tool(
        tool("get_file_info")
            .description("Size, type, times, permissions and etag of a file or directory inside a root (symbolic links are described, not followed).")
            .read_only()
            .handler(move |cx: RequestContext, args: PathArgs| get_file_info(s.clone(), cx, args)),
    )
}

#[cfg(test)]
mod tests {
    use super::utf8_window;

    #[test]
    fn text_windows_keep_whole_characters() {
        assert_eq!(utf8_window(b"abc".to_vec()).as_deref(), Some("abc"));
        // "é" is two bytes; a window ending inside it drops the half.
        assert_eq!(utf8_window(b"ab\xc3".to_vec()).as_deref(), Some("ab"));
        assert_eq!(utf8_window(b"\xa9cd".to_vec()), None);
        assert_eq!(utf8_window(b"a\0b".to_vec()), None);
        assert_eq!(utf8_window(b"\xff\xfe".to_vec()), None);
    }
}
