//! Files as resources: a `file://` template per root, and the files directly
//! inside each root listed by name. Reads go through the same sandbox as the
//! tools and carry an etag; a request whose `_meta` holds
//! `dev.toolport/ifNoneMatch` equal to the current etag gets the etag back
//! with `dev.toolport/notModified` and no contents.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use toolport_protocol::ErrorObject;
use toolport_protocol::content::ResourceContents;
use toolport_protocol::resources::{Resource, ResourceTemplate};
use toolport_server::{
    RequestContext, ResourceEntry, ResourceError, ResourceRequest, Server, ServerBuilder, TemplateEntry, ToolError,
};

use super::Shared;
use super::error::FsError;
use super::media::{Media, sniff};
use super::path::{display, relative};
use super::sandbox::{Root, etag, read_range};
use super::uri::encode_path;

/// `_meta` key of a content's etag.
pub const ETAG_META: &str = "dev.toolport/etag";
/// `_meta` key of a read request's etag: unchanged contents are not sent.
pub const IF_NONE_MATCH_META: &str = "dev.toolport/ifNoneMatch";
/// `_meta` key set to true on contents that were not sent because unchanged.
pub const NOT_MODIFIED_META: &str = "dev.toolport/notModified";

/// MIME type by file extension, for text files.
fn text_mime(path: &Path) -> &'static str {
    match path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .as_deref()
    {
        Some("md" | "markdown") => "text/markdown",
        Some("html" | "htm") => "text/html",
        Some("css") => "text/css",
        Some("csv") => "text/csv",
        Some("json") => "application/json",
        Some("js" | "mjs") => "text/javascript",
        Some("xml") => "application/xml",
        Some("svg") => "image/svg+xml",
        Some("toml") => "application/toml",
        Some("yaml" | "yml") => "application/yaml",
        _ => "text/plain",
    }
}

fn refusal(e: FsError, uri: &str) -> ResourceError {
    match e {
        FsError::NotFound(_) => ResourceError::NotFound(uri.to_owned()),
        FsError::Io { .. } => ResourceError::Failed(e.to_string()),
        other => ResourceError::Tool(ToolError::Protocol(ErrorObject::invalid_params(other.to_string()))),
    }
}

/// Reads the file `rel` of `root` as resource contents.
async fn read(
    shared: Arc<Shared>,
    cx: RequestContext,
    root: Arc<Root>,
    rel: Result<PathBuf, FsError>,
    uri: String,
) -> Result<ResourceContents, ResourceError> {
    let access = shared.access(&cx).await?;
    let rel = rel.map_err(|e| refusal(e, &uri))?;
    let target = shared
        .sandbox
        .target_in(&access, root, rel)
        .map_err(|e| refusal(e, &uri))?;
    let wanted = cx
        .meta()
        .get(IF_NONE_MATCH_META)
        .and_then(Value::as_str)
        .map(str::to_owned);
    let cap = shared.limits.max_media_bytes;
    let read_uri = uri.clone();
    let contents = tokio::task::spawn_blocking(move || -> Result<ResourceContents, FsError> {
        let (mut file, meta) = target.open_file()?;
        let tag = etag(&meta);
        let mut meta_out = serde_json::Map::from_iter([(ETAG_META.to_owned(), json!(tag))]);
        if wanted.as_deref() == Some(tag.as_str()) {
            meta_out.insert(NOT_MODIFIED_META.to_owned(), json!(true));
            let mut contents = ResourceContents::text(read_uri, None, "");
            contents.meta = Some(meta_out);
            return Ok(contents);
        }
        if meta.len() > cap {
            return Err(FsError::TooLarge {
                path: target.display(),
                size: meta.len(),
                limit: cap,
                hint: "; read it in ranges with read_file",
            });
        }
        let bytes = read_range(&mut file, 0, cap).map_err(|e| target.fail(e))?;
        let mut contents = match String::from_utf8(bytes) {
            Ok(text) if !text.contains('\0') => ResourceContents::text(read_uri, Some(text_mime(&target.rel)), text),
            Ok(text) => binary(read_uri, text.into_bytes()),
            Err(e) => binary(read_uri, e.into_bytes()),
        };
        contents.meta = Some(meta_out);
        Ok(contents)
    })
    .await
    .map_err(|e| ResourceError::Failed(format!("the read stopped unexpectedly: {e}")))?;
    contents.map_err(|e| refusal(e, &uri))
}

fn binary(uri: String, bytes: Vec<u8>) -> ResourceContents {
    let mime = match sniff(&bytes) {
        Some(Media::Image(m) | Media::Audio(m)) => m,
        None => "application/octet-stream",
    };
    ResourceContents::blob(uri, Some(mime), STANDARD.encode(bytes))
}

/// The template of a root: `file:///its/path/{+path}`.
fn template(shared: &Arc<Shared>, root: &Arc<Root>) -> TemplateEntry {
    let prefix = root.uri(Path::new(""));
    let prefix = prefix.trim_end_matches('/');
    let (s, r) = (shared.clone(), root.clone());
    TemplateEntry::new(
        ResourceTemplate {
            uri_template: format!("{prefix}/{{+path}}"),
            name: format!("file in {}", root.name),
            title: Some(format!("Files under {}", root.path.display())),
            description: Some(format!(
                "Any file under the root {:?}{}",
                root.name,
                if root.writable { "" } else { " (read-only)" }
            )),
            ..Default::default()
        },
        move |cx, req: ResourceRequest| {
            let path = req.variables.get("path").cloned().unwrap_or_default();
            read(s.clone(), cx, r.clone(), relative(&path), req.uri)
        },
    )
    .cache(shared.cache)
}

/// The files directly inside a root, as resources (at most `listed_files`).
pub(crate) fn listed(shared: &Arc<Shared>, root: &Arc<Root>) -> Vec<ResourceEntry> {
    let Ok(entries) = root.dir.entries() else {
        return Vec::new();
    };
    let mut files: Vec<(String, u64)> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let size = e.metadata().ok()?.len();
            (!name.contains(super::write::TEMP_MARK)).then_some((name, size))
        })
        .collect();
    files.sort();
    files.truncate(shared.listed_files);
    files
        .into_iter()
        .map(|(name, size)| {
            let rel = PathBuf::from(&name);
            let uri = root.uri(&rel);
            let (s, r) = (shared.clone(), root.clone());
            ResourceEntry::new(
                Resource {
                    uri,
                    name: format!("{}/{}", root.name, display(&rel)),
                    mime_type: Some(text_mime(&rel).to_owned()),
                    size: Some(size),
                    ..Default::default()
                },
                move |cx, req: ResourceRequest| read(s.clone(), cx, r.clone(), Ok(rel.clone()), req.uri),
            )
            .cache(shared.cache)
        })
        .collect()
}

/// Brings the listed files of `root` up to date with the directory.
pub(crate) fn refresh_listing(shared: &Arc<Shared>, server: &Server, root: &Arc<Root>) {
    let fresh = listed(shared, root);
    let prefix = format!("file://{}/", encode_path(&root.path).trim_end_matches('/'));
    let wanted: std::collections::BTreeSet<String> = fresh.iter().map(|e| e.definition().uri.clone()).collect();
    for uri in server.resources().names() {
        let direct_child = uri.strip_prefix(&prefix).is_some_and(|rest| !rest.contains('/'));
        if direct_child && !wanted.contains(&uri) {
            server.resources().remove(&uri);
        }
    }
    for entry in fresh {
        if server.resources().get(&entry.definition().uri).is_none() {
            let _ = server.resources().insert(entry);
        }
    }
}

/// Adds the templates and the listed files.
pub(crate) fn install(shared: &Arc<Shared>, mut builder: ServerBuilder) -> ServerBuilder {
    for root in &shared.sandbox.roots {
        builder = builder.template(template(shared, root));
        for entry in listed(shared, root) {
            builder = builder.resource(entry);
        }
    }
    builder
}
