//! Admission: the server reads and checks a request once, in an order where
//! each failure gets its own error and a refused request leaves no trace in
//! the layers behind it; authorization trims lists before they are paged.

mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolport_protocol::{ErrorCode, Request};
use toolport_server::admission::Target;
use toolport_server::audit::{AuditKey, AuditLog, AuditOptions};
use toolport_server::policy::{PolicyConfig, RateConfig, ToolPolicyConfig};
use toolport_server::{
    Authorizer, Forbidden, NoArgs, Principal, Refusal, RoutingHeaders, Server, ServerOptions, TransportFacts, tool,
};

/// Tools and prompts whose names end in an odd digit need the scope `odd`.
#[derive(Debug)]
struct OddNeedsScope;

impl OddNeedsScope {
    fn allowed(principal: &Principal, name: &str) -> bool {
        let odd = name.ends_with(['1', '3', '5', '7', '9']);
        !odd || principal.scopes.iter().any(|s| s == "odd")
    }
}

impl Authorizer for OddNeedsScope {
    fn authorize(&self, principal: &Principal, _: &str, target: Option<Target<'_>>) -> Result<(), Forbidden> {
        match target {
            Some((_, name)) if !Self::allowed(principal, name) => Err(Forbidden {
                message: format!("{name} needs the scope odd"),
                challenge: Some("Bearer error=\"insufficient_scope\", scope=\"odd\"".into()),
            }),
            _ => Ok(()),
        }
    }

    fn visible<'a>(&'a self, principal: &'a Principal) -> Box<dyn Fn(Target<'_>) -> bool + Send + Sync + 'a> {
        Box::new(move |(_, name)| Self::allowed(principal, name))
    }
}

fn principal(scopes: &[&str]) -> Principal {
    Principal {
        subject: "alice".into(),
        client_id: None,
        scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
    }
}

const META: &str = "_meta";

fn modern(method: &str, mut params: Value) -> Request {
    params[META] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    Request::new(1, method, Some(params))
}

/// A shared buffer the audit stream writes to.
#[derive(Clone, Default)]
struct Sink(Arc<Mutex<Vec<u8>>>);

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Ten tools, `t0` … `t9`; `t1` allows one call a minute.
fn server(page_size: usize, audit: Option<Sink>) -> Server {
    let mut builder = Server::builder("admission", "1").options(ServerOptions {
        page_size,
        ..ServerOptions::default()
    });
    for i in 0..10 {
        builder = builder.tool(tool(format!("t{i}")).handler(|_: NoArgs| async { "ran" }));
    }
    let mut policies = PolicyConfig::default();
    policies.tools.insert(
        "t1".into(),
        ToolPolicyConfig {
            rate: Some(RateConfig {
                per_second: 1.0 / 60.0,
                burst: 1,
            }),
            ..ToolPolicyConfig::default()
        },
    );
    builder = builder.policies(policies);
    if let Some(sink) = audit {
        let key = AuditKey::from_bytes(&[3u8; 32]).unwrap();
        builder = builder.audit(AuditLog::to_writer(Box::new(sink), key, AuditOptions::default()));
    }
    builder.build().unwrap()
}

async fn admitted_call(server: &Server, who: &Principal, request: Request) -> Result<Value, Refusal> {
    let authorizer: Arc<dyn Authorizer> = Arc::new(OddNeedsScope);
    let facts = TransportFacts {
        headers: None,
        principal: Some(who),
        authorizer: Some(&authorizer),
    };
    let admitted = server.admit(request, &facts)?;
    let result = server
        .answer(
            admitted,
            common::context_of(Some(who.clone()), CancellationToken::new()),
        )
        .await
        .map_err(|error| Refusal::Invalid {
            error,
            era: toolport_protocol::Era::Stateless,
        })?;
    Ok(serde_json::from_str(result.get()).unwrap())
}

#[tokio::test]
async fn lists_are_trimmed_before_they_are_paged() {
    let server = server(3, None);
    let plain = principal(&[]);
    let first = admitted_call(&server, &plain, modern("tools/list", json!({})))
        .await
        .unwrap();
    let names = |page: &Value| -> Vec<String> {
        page["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(&first),
        ["t0", "t2", "t4"],
        "a full page of what the caller may see"
    );
    assert_eq!(first["cacheScope"], "private", "a trimmed list is nobody else's");
    let cursor = first["nextCursor"].as_str().expect("more to come").to_owned();
    let second = admitted_call(&server, &plain, modern("tools/list", json!({"cursor": cursor})))
        .await
        .unwrap();
    assert_eq!(names(&second), ["t6", "t8"]);
    assert!(second.get("nextCursor").is_none(), "no empty last page: {second}");

    let trusted = principal(&["odd"]);
    let all = admitted_call(&server, &trusted, modern("tools/list", json!({})))
        .await
        .unwrap();
    assert_eq!(names(&all), ["t0", "t1", "t2"]);
}

#[tokio::test]
async fn a_call_refused_by_scope_takes_no_token_and_is_audited_as_refused() {
    let sink = Sink::default();
    let server = server(100, Some(sink.clone()));
    let plain = principal(&[]);
    for _ in 0..3 {
        let refused = admitted_call(&server, &plain, modern("tools/call", json!({"name": "t1"}))).await;
        match refused {
            Err(Refusal::Forbidden(forbidden)) => assert_eq!(forbidden.message, "t1 needs the scope odd"),
            other => panic!("expected a 403-style refusal, got {other:?}"),
        }
    }
    server.flush_audit();
    let outcomes = |sink: &Sink| -> Vec<String> {
        String::from_utf8(sink.0.lock().unwrap().clone())
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .filter(|record| record["kind"] == "call")
            .map(|record| record["outcome"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        outcomes(&sink),
        ["forbidden", "forbidden", "forbidden"],
        "refused calls are in the audit stream as refused, never as run"
    );

    // The one token of t1's bucket is still there for a caller that may call it.
    let trusted = principal(&["odd"]);
    let ran = admitted_call(&server, &trusted, modern("tools/call", json!({"name": "t1"})))
        .await
        .unwrap();
    assert_eq!(ran["content"][0]["text"], "ran", "{ran}");
    let limited = admitted_call(&server, &trusted, modern("tools/call", json!({"name": "t1"}))).await;
    match limited {
        Err(Refusal::Invalid { error, .. }) => assert_eq!(error.code, ErrorCode::OVERLOADED),
        other => panic!("the second call is over t1's rate: {other:?}"),
    }
    server.flush_audit();
    assert_eq!(
        outcomes(&sink)[3..],
        ["ok", "error -32010"],
        "the call that ran and the one the rate limit refused"
    );
}

/// Headers as pairs, names lowercase.
struct Pairs(Vec<(&'static str, &'static str)>);

impl RoutingHeaders for Pairs {
    fn get(&self, name: &str) -> Option<&[u8]> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| v.as_bytes())
    }
}

#[test]
fn each_failure_gets_its_own_error_in_a_fixed_order() {
    let server = server(100, None);
    let plain = principal(&[]);
    let authorizer: Arc<dyn Authorizer> = Arc::new(OddNeedsScope);
    let admit = |request: Request, headers: &Pairs| {
        let facts = TransportFacts {
            headers: Some(headers),
            principal: Some(&plain),
            authorizer: Some(&authorizer),
        };
        server.admit(request, &facts).map(|a| a.method().to_owned())
    };
    let code = |outcome: Result<String, Refusal>| match outcome {
        Err(Refusal::Invalid { error, .. }) => error.code.0,
        Err(Refusal::Forbidden(_)) => 403,
        Ok(_) => 0,
    };
    let good = Pairs(vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "t1"),
    ]);
    let call_t1 = || modern("tools/call", json!({"name": "t1"}));

    // Well-formed and in its era, a forbidden call is 403...
    assert_eq!(code(admit(call_t1(), &good)), 403);
    // ...but a malformed one is told what is wrong with it first.
    let no_caps = Request::new(
        1,
        "tools/call",
        Some(json!({"name": "t1", META: {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})),
    );
    assert_eq!(code(admit(no_caps, &good)), -32602);
    let wrong_name = Pairs(vec![
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "t2"),
    ]);
    assert_eq!(code(admit(call_t1(), &wrong_name)), -32020);
    let unsupported = Request::new(
        1,
        "tools/call",
        Some(json!({"name": "t1", META: {
            "io.modelcontextprotocol/protocolVersion": "2099-01-01",
            "io.modelcontextprotocol/clientCapabilities": {}}})),
    );
    let unsupported_headers = Pairs(vec![
        ("mcp-protocol-version", "2099-01-01"),
        ("mcp-method", "tools/call"),
        ("mcp-name", "t1"),
    ]);
    assert_eq!(code(admit(unsupported, &unsupported_headers)), -32022);
    let not_an_object = Request::new(1, "tools/call", Some(json!([1, 2])));
    assert_eq!(code(admit(not_an_object, &good)), -32602);

    // A permitted call passes every check.
    let call_t2 = modern("tools/call", json!({"name": "t2"}));
    assert_eq!(admit(call_t2, &wrong_name), Ok("tools/call".to_owned()));
    // A header-era request needs none of the 2026-07-28 headers.
    let legacy = Request::new(1, "tools/list", None);
    assert_eq!(admit(legacy, &Pairs(Vec::new())), Ok("tools/list".to_owned()));
}
