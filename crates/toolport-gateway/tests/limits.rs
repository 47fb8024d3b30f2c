//! `[upstream.limits]`: the server's own layers around an upstream's calls,
//! for the upstream as a whole and per tool, with the layers' own errors.

mod support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::json;
use support::*;
use toolport_client::ClientError;
use toolport_gateway::{ToolLimits, UpstreamLimits};
use toolport_protocol::ProtocolVersion;
use toolport_server::policy::{PolicyConfig, RateConfig};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstreams_limits_hold_for_all_its_tools_and_each_tool() {
    let mut limited = fixture("lim");
    limited.limits = UpstreamLimits {
        max_concurrent: Some(1),
        tools: BTreeMap::from([(
            "echo".to_owned(),
            ToolLimits {
                rate: Some(RateConfig {
                    per_second: 0.01,
                    burst: 2,
                }),
                ..Default::default()
            },
        )]),
        ..Default::default()
    };
    let mut timed = fixture("timed");
    timed.limits = UpstreamLimits {
        deadline_ms: Some(300),
        tools: BTreeMap::from([(
            "pid".to_owned(),
            ToolLimits {
                deadline_ms: Some(60_000),
                ..Default::default()
            },
        )]),
        ..Default::default()
    };
    let base = PolicyConfig {
        queue: 0,
        ..PolicyConfig::default()
    };
    let gw = start_limited(base, vec![limited, timed, fixture("free")]).await;
    // Refusals are shown as they come: this client does not try again.
    let options = toolport_client::ClientOptions {
        version: toolport_client::VersionPolicy::Pinned(ProtocolVersion::V2025_11_25),
        backoff: toolport_client::Backoff {
            max_attempts: 1,
            ..Default::default()
        },
        ..Default::default()
    };
    let c = toolport_client::Client::http(&gw.url)
        .options(options)
        .connect()
        .await
        .unwrap();

    // The upstream's deadline: the upstream call is stopped, and the caller
    // told so (a retryable `deadline_exceeded`); a tool's own deadline beats it.
    let started = Instant::now();
    let stopped = c.call_tool("timed__sleep", json!({"ms": 5_000})).await.unwrap();
    assert_eq!(stopped.is_error, Some(true));
    assert!(
        text(&stopped).contains("timed__sleep ran longer than its 300 ms"),
        "{}",
        text(&stopped)
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(c.call_tool("timed__pid", json!({})).await.is_ok());

    // One place for the whole upstream: while a long call holds it (its
    // first progress says it runs), its other tools are refused with -32010
    // (the queue is 0; this client does not retry); another upstream is not
    // limited; once the long call is given up, the place is free.
    let (progress, mut running) = tokio::sync::mpsc::unbounded_channel();
    let long = {
        let c = c.clone();
        let options = toolport_client::CallOptions::default().progress(progress);
        tokio::spawn(async move { c.call_tool_with("lim__sleep", json!({"ms": 20_000}), options).await })
    };
    running.recv().await.expect("the long call runs");
    match c.call_tool("lim__count", json!({})).await {
        Err(ClientError::Remote(e)) => {
            assert_eq!(e.code.0, -32010, "{}", e.message);
            assert!(e.message.contains("the tools lim__*"), "{}", e.message);
        }
        other => panic!("the upstream's place was not held: {other:?}"),
    }
    let free = c.call_tool("free__echo", json!({"text": "unlimited"})).await.unwrap();
    assert_eq!(text(&free), "unlimited");
    long.abort();
    eventually("the place is free again", || {
        let c = c.clone();
        async move { c.call_tool("lim__count", json!({})).await.is_ok() }
    })
    .await;

    // A tool's own rate: two calls, then refused; the upstream's other tools
    // do not draw on that bucket.
    for i in 0..2 {
        let r = c.call_tool("lim__echo", json!({"text": format!("{i}")})).await.unwrap();
        assert_eq!(text(&r), format!("{i}"));
    }
    match c.call_tool("lim__echo", json!({"text": "over"})).await {
        Err(ClientError::Remote(e)) => {
            assert_eq!(e.code.0, -32010);
            assert!(e.message.contains("rate limit of tool lim__echo"), "{}", e.message);
        }
        other => panic!("{other:?}"),
    }
    assert!(c.call_tool("lim__count", json!({})).await.is_ok());
    gw.stop().await;
}
