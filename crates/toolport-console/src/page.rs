//! The console's one page, rendered here: its frame, and the server's tools
//! by name (when the server is not protected: a protected server's tool
//! list depends on who asks, so the page fills it in after sign-in). The
//! scripts take over from there.

use bytes::Bytes;
use http::{HeaderValue, Method, Response, StatusCode, header};
use toolport_http::MountRequest;

use crate::bench::escape;
use crate::{Console, respond};

/// The page's paths: the console, and where the authorization server sends
/// the browser back to.
const PATHS: &[&str] = &["/ui", "/ui/", "/ui/callback"];

/// Whether `path` is the page.
pub(crate) fn serves(path: &str) -> bool {
    PATHS.contains(&path)
}

/// The scheme, host and port of a URL (`https://as.example:8443`), for the
/// Content-Security-Policy; `None` for anything that is not http(s).
fn origin_of(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    if !matches!(scheme, "http" | "https") {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next()?;
    let ok = !authority.is_empty()
        && authority
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-.:[]".contains(&b));
    ok.then(|| format!("{scheme}://{authority}"))
}

/// The policy: nothing but this server's own files and, with sign-in, calls
/// to the authorization server; no inline script, no eval, no framing.
fn content_security_policy(console: &Console) -> String {
    let mut connect = "'self'".to_owned();
    if let Some(origin) = console.config.oauth.as_ref().and_then(|o| origin_of(&o.issuer)) {
        connect.push(' ');
        connect.push_str(&origin);
    }
    format!(
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
         connect-src {connect}; object-src 'none'; base-uri 'none'; form-action 'self'; \
         frame-ancestors 'none'"
    )
}

/// The page.
pub(crate) fn render(console: &Console, request: &MountRequest<'_>) -> Response<Bytes> {
    if request.method != Method::GET && request.method != Method::HEAD {
        return respond::method_not_allowed("GET");
    }
    let server = request.live.server();
    let info = server.info();
    let title = info.title.clone().unwrap_or_else(|| info.name.clone());
    let mut data = vec![
        ("endpoint", request.live.endpoint_path().to_owned()),
        ("protected", request.protected.to_string()),
        ("server", info.name.clone()),
    ];
    if let Some(oauth) = &console.config.oauth {
        data.push(("oauth-issuer", oauth.issuer.clone()));
        data.push(("oauth-client-id", oauth.client_id.clone()));
        data.push(("oauth-scopes", oauth.scopes.join(" ")));
        data.push(("oauth-resource", oauth.resource.clone()));
    }
    let attributes: String = data
        .iter()
        .map(|(k, v)| format!(" data-{k}=\"{}\"", escape(v)))
        .collect();
    let tools = if request.protected {
        "<li class=\"hint\">Sign in to see the tools you may use.</li>".to_owned()
    } else {
        let mut entries = server.tools().all();
        entries.sort_by(|a, b| a.definition().name.cmp(&b.definition().name));
        entries
            .iter()
            .map(|entry| {
                let tool = entry.definition();
                format!(
                    "<li><button type=\"button\" class=\"tool\" data-tool=\"{name}\">{name}</button><small>{about}</small></li>",
                    name = escape(&tool.name),
                    about = escape(tool.description.as_deref().unwrap_or_default()),
                )
            })
            .collect()
    };
    let html = format!(
        include_str!("../assets/index.html"),
        title = escape(&title),
        attributes = attributes,
        tools = tools,
    );
    let mut response = respond::body(StatusCode::OK, "text/html; charset=utf-8", html);
    let policy = HeaderValue::from_str(&content_security_policy(console))
        .unwrap_or_else(|_| HeaderValue::from_static("default-src 'self'"));
    let h = response.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, policy);
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ConsoleConfig, ConsoleOAuth};

    #[test]
    fn the_policy_allows_only_this_server_and_the_authorization_server() {
        let plain = Console::new(ConsoleConfig::default());
        let policy = content_security_policy(&plain);
        assert!(policy.starts_with("default-src 'self'; script-src 'self';"));
        assert!(!policy.contains("unsafe"), "{policy}");
        assert!(policy.contains("connect-src 'self';"));
        let oauth = Console::new(ConsoleConfig {
            oauth: Some(ConsoleOAuth {
                issuer: "https://as.example:8443/realms/x".into(),
                client_id: "console".into(),
                scopes: vec!["mcp:tools".into()],
                resource: "https://mcp.example/mcp".into(),
            }),
            ..ConsoleConfig::default()
        });
        assert!(content_security_policy(&oauth).contains("connect-src 'self' https://as.example:8443;"));
        for hostile in [
            "javascript:alert(1)",
            "https://a.example; script-src *",
            "https://",
            "data:x",
        ] {
            assert_eq!(origin_of(hostile), None, "{hostile}");
        }
    }
}
