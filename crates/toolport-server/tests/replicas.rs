//! Replicas of one server sharing their state through the `state` traits:
//! an idempotency key, a rate limit, a list change and a `requestState`
//! sealed on one replica hold on the other.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use toolport_protocol::Request;
use toolport_protocol::elicitation::ElicitRequestParams;
use toolport_server::policy::{PolicyConfig, RateConfig};
use toolport_server::state::{KeyRing, MemoryEventBus, MemoryIdempotencyStore, MemoryRateLimiter};
use toolport_server::{NoArgs, RequestContext, Server, ServerBuilder, ServerEvent, ToolError, tool};

/// A 2026-07-28 `tools/call` with these extra params and `_meta` entries.
async fn call(server: &Server, tool: &str, params: Value, meta: Value) -> Value {
    let mut m = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}});
    m.as_object_mut().unwrap().extend(meta.as_object().unwrap().clone());
    let mut p = json!({"name": tool, "arguments": {}, "_meta": m});
    p.as_object_mut().unwrap().extend(params.as_object().unwrap().clone());
    match server
        .handle(Request::new(1, "tools/call", Some(p)), common::call_context())
        .await
    {
        Ok(result) => json!({"result": serde_json::from_str::<Value>(result.get()).unwrap()}),
        Err(error) => json!({"error": error}),
    }
}

/// Two replicas built alike by `build`, and how often the `count` tool ran
/// on either.
fn replicas(build: impl Fn(ServerBuilder) -> ServerBuilder) -> (Server, Server, Arc<AtomicUsize>) {
    let runs = Arc::new(AtomicUsize::new(0));
    let make = || {
        let runs = runs.clone();
        build(Server::builder("r", "1"))
            .tool(tool("count").handler(move |_: NoArgs| {
                let n = runs.fetch_add(1, Ordering::SeqCst) + 1;
                async move { format!("run {n}") }
            }))
            .build()
            .unwrap()
    };
    (make(), make(), runs)
}

#[tokio::test]
async fn an_idempotency_key_used_on_one_replica_answers_on_the_other() {
    let store = Arc::new(MemoryIdempotencyStore::new(Duration::from_secs(60)));
    let (a, b, runs) = replicas(|builder| builder.idempotency_store(store.clone()));
    let key = json!({"dev.toolport/idempotencyKey": "k"});
    let first = call(&a, "count", json!({}), key.clone()).await;
    let repeat = call(&b, "count", json!({}), key).await;
    assert_eq!(first["result"]["content"][0]["text"], "run 1", "{first}");
    assert_eq!(repeat, first, "the other replica answers with the stored result");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_rate_limit_holds_across_replicas() {
    let limiter = Arc::new(MemoryRateLimiter::new());
    let policies = PolicyConfig {
        rate_per_principal: Some(RateConfig {
            per_second: 1.0 / 60.0,
            burst: 1,
        }),
        ..PolicyConfig::none()
    };
    let (a, b, runs) = replicas(|builder| builder.policies(policies.clone()).rate_limiter(limiter.clone()));
    let allowed = call(&a, "count", json!({}), json!({})).await;
    assert!(allowed.get("result").is_some(), "{allowed}");
    let refused = call(&b, "count", json!({}), json!({})).await;
    assert_eq!(refused["error"]["code"], -32010, "{refused}");
    assert!(
        refused["error"]["data"]["retryAfterMs"].as_u64().unwrap() > 1000,
        "{refused}"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_change_on_one_replica_reaches_the_listeners_of_the_other() {
    let bus = Arc::new(MemoryEventBus::default());
    let (a, b, _) = replicas(|builder| builder.event_bus(bus.clone()));
    let mut events = b.events();
    a.tools().remove("count");
    a.resource_updated("mem://x");
    assert_eq!(events.next().await, Some(vec![ServerEvent::ToolsChanged]));
    assert_eq!(
        events.next().await,
        Some(vec![ServerEvent::ResourceUpdated("mem://x".into())])
    );
}

fn asking(keys: KeyRing) -> Server {
    Server::builder("r", "1")
        .request_state_keys(keys)
        .tool(tool("ask").handler(|cx: RequestContext, _: NoArgs| async move {
            let form = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
            let Value::Object(schema) = form else { unreachable!() };
            let answer = cx.elicit("q", ElicitRequestParams::form("Proceed?", schema)).await?;
            Ok::<_, ToolError>(format!("{:?}", answer.action))
        }))
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_request_state_sealed_before_a_key_rotation_opens_on_a_rotated_replica() {
    let (old, new) = ([1u8; 32], [2u8; 32]);
    let before = asking(KeyRing::new("old", old).unwrap());
    let rotated = asking(KeyRing::new("new", new).unwrap().with_key("old", old).unwrap());
    let without_old = asking(KeyRing::new("new", new).unwrap());

    let first = call(&before, "ask", json!({}), json!({})).await;
    let state = first["result"]["requestState"]
        .as_str()
        .expect("input is required")
        .to_owned();
    assert!(
        state.starts_with("old."),
        "the sealing key's id leads the state: {state}"
    );
    let retry = json!({"inputResponses": {"q": {"action": "accept", "content": {"ok": true}}}, "requestState": state});

    let done = call(&rotated, "ask", retry.clone(), json!({})).await;
    assert_eq!(done["result"]["content"][0]["text"], "Accept", "{done}");
    let refused = call(&without_old, "ask", retry, json!({})).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("failed its integrity check"),
        "an unknown key id fails like tampering: {refused}"
    );
}
