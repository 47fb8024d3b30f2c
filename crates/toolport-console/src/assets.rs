//! The console's static files, compiled into the binary: no CDN, nothing
//! fetched at run time, the same bytes in every copy of a release.

use bytes::Bytes;
use http::{HeaderValue, Method, Response, StatusCode, header};

use crate::respond;

/// One embedded file.
#[derive(Debug)]
pub(crate) struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

const PREFIX: &str = "/ui/assets/";

macro_rules! asset {
    ($name:literal, $type:literal) => {
        Asset {
            name: $name,
            content_type: $type,
            body: include_str!(concat!("../assets/", $name)),
        }
    };
}

const JS: &str = "text/javascript; charset=utf-8";

static ASSETS: &[Asset] = &[
    asset!("console.css", "text/css; charset=utf-8"),
    asset!("app.js", "text/javascript; charset=utf-8"),
    asset!("mcp.js", "text/javascript; charset=utf-8"),
    asset!("auth.js", "text/javascript; charset=utf-8"),
    asset!("form.js", "text/javascript; charset=utf-8"),
    asset!("tools.js", "text/javascript; charset=utf-8"),
    asset!("live.js", "text/javascript; charset=utf-8"),
    asset!("metrics.js", "text/javascript; charset=utf-8"),
    asset!("chart.js", "text/javascript; charset=utf-8"),
    asset!("dom.js", "text/javascript; charset=utf-8"),
];

/// Whether `path` is under the assets' prefix.
pub(crate) fn serves(path: &str) -> bool {
    path.starts_with(PREFIX)
}

/// The asset at `path`, if there is one.
pub(crate) fn find(path: &str) -> Option<&'static Asset> {
    let name = path.strip_prefix(PREFIX)?;
    ASSETS.iter().find(|a| a.name == name)
}

/// The asset, or 404 for a name under the prefix that is not one.
pub(crate) fn respond(asset: &Asset, method: &Method) -> Response<Bytes> {
    if method != Method::GET && method != Method::HEAD {
        return respond::method_not_allowed("GET");
    }
    debug_assert!(asset.content_type == JS || asset.name.ends_with(".css"));
    let mut response = respond::body(
        StatusCode::OK,
        asset.content_type,
        Bytes::from_static(asset.body.as_bytes()),
    );
    // Revalidated on each load: a new release's console is seen at once.
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

/// 404 for a path under the prefix that names no asset.
pub(crate) fn missing() -> Response<Bytes> {
    respond::body(StatusCode::NOT_FOUND, "text/plain; charset=utf-8", "no such asset\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_module_the_console_imports_is_embedded() {
        for asset in ASSETS.iter().filter(|a| a.name.ends_with(".js")) {
            for line in asset.body.lines().filter(|l| l.starts_with("import ")) {
                let Some(from) = line.split('\'').nth(1) else { continue };
                let name = from.trim_start_matches("./");
                assert!(
                    find(&format!("{PREFIX}{name}")).is_some(),
                    "{} imports {name}",
                    asset.name
                );
            }
            // No eval, no inline handlers built from strings: the CSP forbids them anyway.
            assert!(!asset.body.contains("eval("), "{}", asset.name);
            assert!(!asset.body.contains("new Function"), "{}", asset.name);
            assert!(
                !asset.body.contains("innerHTML"),
                "{} builds DOM nodes, not markup",
                asset.name
            );
        }
        assert!(find("/ui/assets/../Cargo.toml").is_none());
        assert!(find("/ui/assets/").is_none());
    }
}
