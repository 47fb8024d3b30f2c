//! Failures a caller can act on, against Toolport's own server over HTTP in
//! both eras: a retryable tool failure of a call that is safe to repeat is
//! sent again (capped backoff, `retryAfterMs` honoured), others are not;
//! list and read results are kept by their `ttlMs`; the trace context goes
//! out in `_meta` and in the HTTP `traceparent` header.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::HeaderMap;
use serde_json::{Value, json};
use toolport_client::{Backoff, CallOptions, Client, ClientOptions, VersionPolicy};
use toolport_http::auth::AuthFuture;
use toolport_http::{Authenticator, Denial, Document, HttpConfig, HttpServer};
use toolport_protocol::ProtocolVersion;
use toolport_protocol::content::ResourceContents;
use toolport_protocol::resources::Resource;
use toolport_protocol::result::CacheScope;
use toolport_protocol::tools::ToolAnnotations;
use toolport_server::admission::Target;
use toolport_server::{
    Authorizer, CacheHints, Forbidden, NoArgs, Principal, RequestContext, ResourceEntry, Server, ToolError, tool,
};

const ERAS: [VersionPolicy; 2] = [
    VersionPolicy::Pinned(ProtocolVersion::V2025_11_25),
    VersionPolicy::Pinned(ProtocolVersion::V2026_07_28),
];

/// Lets everyone in, and keeps the `traceparent` header of every request.
#[derive(Debug, Default)]
struct HeaderWitness(Mutex<Vec<String>>);

impl Authorizer for HeaderWitness {
    fn authorize(&self, _: &Principal, _: &str, _: Option<Target<'_>>) -> Result<(), Forbidden> {
        Ok(())
    }
    fn visible<'a>(&'a self, _: &'a Principal) -> Box<dyn Fn(Target<'_>) -> bool + Send + Sync + 'a> {
        Box::new(|_| true)
    }
}

impl Authenticator for HeaderWitness {
    fn document(&self, _: &str) -> Option<Document> {
        None
    }
    fn authenticate<'a>(&'a self, headers: &'a HeaderMap) -> AuthFuture<'a, Result<Principal, Denial>> {
        if let Some(parent) = headers.get("traceparent").and_then(|v| v.to_str().ok()) {
            self.0.lock().unwrap().push(parent.to_owned());
        }
        Box::pin(async { Ok(Principal::default()) })
    }
}

#[derive(Default)]
struct Runs {
    flaky: AtomicUsize,
    unsafe_flaky: AtomicUsize,
    final_failure: AtomicUsize,
    reads: AtomicUsize,
}

/// Fails retryably (asking for 40 ms) until its third run.
fn flaky(
    runs: Arc<Runs>,
    pick: fn(&Runs) -> &AtomicUsize,
) -> impl Fn(NoArgs) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, ToolError>> + Send>>
+ Send
+ Sync
+ 'static {
    move |_| {
        let runs = runs.clone();
        Box::pin(async move {
            let run = pick(&runs).fetch_add(1, Ordering::SeqCst) + 1;
            if run < 3 {
                return Err(
                    ToolError::retryable("upstream_unavailable", "the upstream is restarting")
                        .retry_after(Duration::from_millis(40)),
                );
            }
            Ok(format!("ran {run} times"))
        })
    }
}

async fn start(runs: Arc<Runs>, witness: Arc<HeaderWitness>) -> std::net::SocketAddr {
    let idempotent = ToolAnnotations {
        idempotent_hint: Some(true),
        ..Default::default()
    };
    let r = runs.clone();
    let server = Server::builder("retries", "1")
        .tool(
            tool("flaky")
                .annotations(idempotent)
                .handler(flaky(runs.clone(), |r| &r.flaky)),
        )
        .tool(tool("unsafe_flaky").handler(flaky(runs.clone(), |r| &r.unsafe_flaky)))
        .tool(tool("final").read_only().handler(move |_: NoArgs| {
            let runs = r.clone();
            async move {
                runs.final_failure.fetch_add(1, Ordering::SeqCst);
                Err::<String, _>(ToolError::coded("quota_exhausted", "no quota left"))
            }
        }))
        .tool(tool("trace").handler(|cx: RequestContext, _: NoArgs| async move {
            cx.meta()
                .get("traceparent")
                .and_then(Value::as_str)
                .unwrap_or("none")
                .to_owned()
        }))
        .resource(
            ResourceEntry::new(Resource::new("test://cached", "cached"), {
                let runs = runs.clone();
                move |_cx, req| {
                    runs.reads.fetch_add(1, Ordering::SeqCst);
                    async move { ResourceContents::text(req.uri, Some("text/plain"), "v1") }
                }
            })
            .cache(CacheHints {
                ttl_ms: 60_000,
                scope: CacheScope::Private,
            }),
        )
        .build()
        .unwrap();
    let config = HttpConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        ..HttpConfig::default()
    };
    let bound = HttpServer::new(server, config)
        .with_authenticator(witness)
        .bind()
        .await
        .unwrap();
    let addr = bound.local_addr();
    tokio::spawn(bound.serve(std::future::pending()));
    addr
}

fn client(addr: std::net::SocketAddr, version: VersionPolicy) -> Client {
    Client::http(format!("http://{addr}/mcp"))
        .options(ClientOptions {
            version,
            request_timeout: Duration::from_secs(10),
            backoff: Backoff {
                initial: Duration::from_millis(5),
                max: Duration::from_millis(20),
                max_attempts: 5,
            },
            ..ClientOptions::default()
        })
        .build()
        .unwrap()
}

fn text(result: &toolport_protocol::tools::CallToolResult) -> String {
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test]
async fn retryable_failures_of_calls_safe_to_repeat_are_sent_again_honouring_retry_after() {
    for version in ERAS {
        let runs = Arc::new(Runs::default());
        let addr = start(runs.clone(), Arc::default()).await;
        let client = client(addr, version);
        client.list_tools().await.unwrap();
        // Idempotent: tried until it succeeds, each pause at least the 40 ms asked for.
        let started = Instant::now();
        let result = client.call_tool("flaky", json!({})).await.unwrap();
        assert_eq!(text(&result), "ran 3 times", "{version:?}");
        assert_eq!(runs.flaky.load(Ordering::SeqCst), 3);
        assert!(
            started.elapsed() >= Duration::from_millis(80),
            "{version:?}: {:?}",
            started.elapsed()
        );
        // Not marked safe to repeat: the failure is the caller's to judge.
        let result = client.call_tool("unsafe_flaky", json!({})).await.unwrap();
        assert_eq!(result.is_error, Some(true));
        assert_eq!(runs.unsafe_flaky.load(Ordering::SeqCst), 1, "{version:?}");
        // With an idempotency key the same call is safe to repeat.
        let keyed = CallOptions::default().idempotency_key(format!("k-{version:?}"));
        let result = client.call_tool_with("unsafe_flaky", json!({}), keyed).await.unwrap();
        assert_eq!(text(&result), "ran 3 times", "{version:?}");
        // A failure that is not retryable is not tried again, safe or not.
        let result = client.call_tool("final", json!({})).await.unwrap();
        assert_eq!(result.is_error, Some(true));
        let meta = result.meta.as_ref().unwrap();
        assert_eq!(meta["dev.toolport/error"]["code"], "quota_exhausted");
        assert_eq!(runs.final_failure.load(Ordering::SeqCst), 1, "{version:?}");
        client.close().await;
    }
}

#[tokio::test]
async fn reads_are_kept_by_their_ttl_and_the_trace_context_goes_in_meta_and_header() {
    let runs = Arc::new(Runs::default());
    let witness = Arc::new(HeaderWitness::default());
    let addr = start(runs.clone(), witness.clone()).await;
    // 2026-07-28 results carry cache hints: the second read is the client's own.
    let modern = client(addr, VersionPolicy::Pinned(ProtocolVersion::V2026_07_28));
    for _ in 0..3 {
        let read = modern.read_resource("test://cached").await.unwrap();
        assert_eq!(read.contents[0].text.as_deref(), Some("v1"));
    }
    assert_eq!(runs.reads.load(Ordering::SeqCst), 1, "read once, then from the cache");
    // Handshake-era results carry no hints: every read goes to the server.
    let legacy = client(addr, VersionPolicy::Pinned(ProtocolVersion::V2025_11_25));
    for _ in 0..2 {
        legacy.read_resource("test://cached").await.unwrap();
    }
    assert_eq!(runs.reads.load(Ordering::SeqCst), 3);

    let parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    for client in [&modern, &legacy] {
        witness.0.lock().unwrap().clear();
        let options = CallOptions::default().trace_context(parent, None);
        let result = client.call_tool_with("trace", json!({}), options).await.unwrap();
        assert_eq!(text(&result), parent, "the server saw it in _meta");
        assert_eq!(witness.0.lock().unwrap().as_slice(), [parent], "and in the header");
    }
}
