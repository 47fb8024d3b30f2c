//! The admin API under `/admin/`: JSON views of what the server is doing,
//! read-only except for stopping a call. Reached with the same
//! authentication as MCP; documented in `docs/console.md`.
//!
//! On a protected server a caller sees its own sessions, calls and errors;
//! an operator (a caller with the console's admin scopes) sees everyone's,
//! reads the audit tail and may stop any call.

use bytes::Bytes;
use http::{Method, Response, StatusCode};
use serde_json::{Value, json};
use toolport_http::MountRequest;
use toolport_server::Principal;
use toolport_server::activity::CancelOutcome;

use crate::bench::BenchReport;
use crate::respond::{self, error, json as reply};
use crate::{Console, audit_tail, csrf};

/// Records the audit tail returns unless asked for fewer.
const AUDIT_DEFAULT: usize = 50;
/// Most records the audit tail returns.
const AUDIT_MAX: usize = 500;
/// Most tasks listed.
const TASKS_MAX: usize = 200;
/// Session ids of other callers are shown this far, enough to tell them apart.
const SHOWN_ID_CHARS: usize = 8;

/// Who asks, and what they may see.
struct Viewer<'a> {
    principal: Option<&'a Principal>,
    operator: bool,
}

impl Viewer<'_> {
    /// Whether a record made by `subject` is this viewer's to see.
    fn sees(&self, subject: Option<&str>) -> bool {
        self.operator || subject == self.principal.map(|p| p.subject.as_str())
    }
}

/// Answers one request to `/admin/...`.
pub(crate) async fn serve(console: &Console, request: MountRequest<'_>) -> Response<Bytes> {
    let viewer = Viewer {
        principal: request.principal.as_ref(),
        operator: console.is_operator(request.protected, request.principal.as_ref()),
    };
    let path = request.path.trim_end_matches('/');
    let segments: Vec<&str> = path.split('/').skip(2).collect();
    match (request.method, segments.as_slice()) {
        (&Method::POST, ["calls", id, "cancel"]) => cancel(console, &request, &viewer, id),
        (_, ["calls", _, "cancel"]) => respond::method_not_allowed("POST"),
        (&Method::GET | &Method::HEAD, view) => get(console, &request, &viewer, view).await,
        (_, _) => respond::method_not_allowed("GET"),
    }
}

async fn get(console: &Console, request: &MountRequest<'_>, viewer: &Viewer<'_>, view: &[&str]) -> Response<Bytes> {
    let server = request.live.server();
    match view {
        ["overview"] => {
            let info = server.info();
            reply(
                StatusCode::OK,
                &json!({
                    "server": {"name": info.name, "version": info.version, "title": info.title},
                    "endpoint": request.live.endpoint_path(),
                    "protected": request.protected,
                    "you": {
                        "principal": viewer.principal.map(|p| p.subject.clone()),
                        "scopes": viewer.principal.map(|p| p.scopes.clone()).unwrap_or_default(),
                        "operator": viewer.operator,
                    },
                    "csrf": console.csrf.token(viewer.principal),
                    "running": server.activity().running().iter().filter(|c| viewer.sees(c.principal.as_deref())).count(),
                    "sessions": request.live.session_count(),
                    "draining": request.live.draining(),
                    "views": {
                        "upstreams": console.upstreams.is_some(),
                        "tasks": console.tasks.is_some(),
                        "audit": console.config.audit_path.is_some() && viewer.operator,
                        "bench": console.config.bench_report.is_some(),
                    },
                }),
            )
        }
        ["sessions"] => {
            let sessions: Vec<Value> = request
                .live
                .sessions()
                .await
                .into_iter()
                .filter(|s| viewer.sees(s.principal.as_deref()))
                .map(|s| {
                    let mut value = serde_json::to_value(&s).unwrap_or_default();
                    value["id"] = Value::String(shown_id(&s.id));
                    value
                })
                .collect();
            reply(
                StatusCode::OK,
                &json!({"sessions": sessions, "total": request.live.session_count()}),
            )
        }
        ["calls"] => {
            let calls: Vec<Value> = server
                .activity()
                .running()
                .into_iter()
                .filter(|c| viewer.sees(c.principal.as_deref()))
                .map(|c| {
                    let mut value = serde_json::to_value(&c).unwrap_or_default();
                    value["session"] = c.session.as_deref().map_or(Value::Null, |s| Value::String(shown_id(s)));
                    value
                })
                .collect();
            reply(StatusCode::OK, &json!({ "calls": calls }))
        }
        ["limits"] => reply(
            StatusCode::OK,
            &json!({
                "gates": server.gates().into_iter().filter(|g| viewer.operator || !g.gate.starts_with("principal")).collect::<Vec<_>>(),
                "rates": server.rate_limits(),
                "refusals": server.activity().rate_refusals().into_iter().filter(|r| viewer.operator || !r.limit.starts_with("principal")).collect::<Vec<_>>(),
            }),
        ),
        ["errors"] => {
            let errors: Vec<_> = server
                .activity()
                .recent_errors()
                .into_iter()
                .filter(|e| viewer.sees(e.principal.as_deref()))
                .collect();
            reply(StatusCode::OK, &json!({ "errors": errors }))
        }
        ["audit"] => audit(console, request, viewer),
        ["upstreams"] => match &console.upstreams {
            None => reply(StatusCode::OK, &json!({"available": false, "upstreams": []})),
            Some(hook) => reply(
                StatusCode::OK,
                &json!({"available": true, "upstreams": hook.upstreams().await}),
            ),
        },
        ["tasks"] => match &console.tasks {
            None => reply(StatusCode::OK, &json!({"available": false, "tasks": []})),
            Some(hook) => {
                let tasks = hook.tasks(viewer.principal, viewer.operator, TASKS_MAX).await;
                reply(StatusCode::OK, &json!({"available": true, "tasks": tasks}))
            }
        },
        ["bench"] => match bench_report(console) {
            Ok(None) => reply(StatusCode::OK, &json!({"available": false})),
            Ok(Some(report)) => reply(StatusCode::OK, &json!({"available": true, "report": report})),
            Err(why) => error(StatusCode::UNPROCESSABLE_ENTITY, why),
        },
        ["bench.svg"] => match bench_report(console) {
            Ok(Some(report)) => respond::body(StatusCode::OK, "image/svg+xml", crate::bench::svg(&report)),
            Ok(None) => error(
                StatusCode::NOT_FOUND,
                "no bench report is configured ([ui] bench_report)",
            ),
            Err(why) => error(StatusCode::UNPROCESSABLE_ENTITY, why),
        },
        _ => error(
            StatusCode::NOT_FOUND,
            "no such admin view; see docs/console.md for the admin API",
        ),
    }
}

/// `POST /admin/calls/{id}/cancel`: stops a running call.
fn cancel(console: &Console, request: &MountRequest<'_>, viewer: &Viewer<'_>, id: &str) -> Response<Bytes> {
    let presented = request.headers.get(csrf::HEADER).map(|v| v.as_bytes());
    if !console.csrf.check(viewer.principal, presented) {
        return error(
            StatusCode::FORBIDDEN,
            "missing or wrong X-Toolport-Csrf header: read the token from /admin/overview",
        );
    }
    let Ok(id) = id.parse::<u64>() else {
        return error(
            StatusCode::BAD_REQUEST,
            format!("{id:?} is not a call number: use an id from /admin/calls"),
        );
    };
    let activity = request.live.server().activity();
    match activity.cancel(id, viewer.principal, viewer.operator) {
        CancelOutcome::Cancelled => {
            tracing::info!(
                target: "toolport::console",
                call = id,
                by = viewer.principal.map(|p| p.subject.as_str()).unwrap_or(""),
                "call cancelled from the console"
            );
            reply(StatusCode::OK, &json!({"cancelled": id}))
        }
        // Another caller's call is answered as if it did not exist: its
        // number tells nothing about who runs what.
        CancelOutcome::NotFound | CancelOutcome::NotYours => {
            error(StatusCode::NOT_FOUND, format!("no call {id} of yours is running"))
        }
    }
}

fn audit(console: &Console, request: &MountRequest<'_>, viewer: &Viewer<'_>) -> Response<Bytes> {
    let Some(path) = &console.config.audit_path else {
        return reply(StatusCode::OK, &json!({"available": false, "records": []}));
    };
    if !viewer.operator {
        return error(
            StatusCode::FORBIDDEN,
            format!(
                "the audit tail is for operators: it needs the scopes {}",
                console.config.admin_scopes.join(" ")
            ),
        );
    }
    let limit = match query_number(request.query, "limit") {
        Ok(limit) => limit.unwrap_or(AUDIT_DEFAULT).min(AUDIT_MAX),
        Err(why) => return error(StatusCode::BAD_REQUEST, why),
    };
    match audit_tail::tail(path, limit) {
        Ok(records) => reply(StatusCode::OK, &json!({"available": true, "records": records})),
        // Not written yet: no call ended since the file was configured.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            reply(StatusCode::OK, &json!({"available": true, "records": []}))
        }
        Err(e) => {
            tracing::warn!(error = %e, path = %path.display(), "audit tail not read");
            error(StatusCode::SERVICE_UNAVAILABLE, "the audit file cannot be read now")
        }
    }
}

/// The configured bench report, read anew (a new run replaces the file).
fn bench_report(console: &Console) -> Result<Option<BenchReport>, String> {
    let Some(path) = &console.config.bench_report else {
        return Ok(None);
    };
    match std::fs::read_to_string(path) {
        Ok(text) => BenchReport::from_file_text(&text)
            .map(Some)
            .map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{} cannot be read: {e}", path.display())),
    }
}

/// A whole number from the query string, if given.
fn query_number(query: Option<&str>, name: &str) -> Result<Option<usize>, String> {
    let Some(query) = query else {
        return Ok(None);
    };
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key == name {
            return value
                .parse()
                .map(Some)
                .map_err(|_| format!("{name} must be a whole number, not {value:?}"));
        }
    }
    Ok(None)
}

/// A session id as the console shows it: a prefix, never the whole
/// credential-like id.
fn shown_id(id: &str) -> String {
    match id.char_indices().nth(SHOWN_ID_CHARS) {
        Some((cut, _)) => format!("{}…", &id[..cut]),
        None => id.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_numbers_and_shown_ids() {
        assert_eq!(query_number(None, "limit"), Ok(None));
        assert_eq!(query_number(Some("limit=5"), "limit"), Ok(Some(5)));
        assert_eq!(query_number(Some("a=1&limit=7"), "limit"), Ok(Some(7)));
        assert!(query_number(Some("limit=-1"), "limit").is_err());
        assert!(query_number(Some("limit=99999999999999999999999"), "limit").is_err());
        assert_eq!(query_number(Some("other=x"), "limit"), Ok(None));
        assert_eq!(shown_id("abcdefghijklmnop"), "abcdefgh…");
        assert_eq!(shown_id("short"), "short");
        assert_eq!(shown_id("ééééééééééé"), "éééééééé…");
    }
}
