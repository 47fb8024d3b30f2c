//! Resource subscriptions and log messages across the hop.
//!
//! The HTTP upstream is a Toolport server in this process, so the test can
//! see its side: what it is subscribed to (its own subscription demand) and
//! when its resource changes. The stdio upstream is the fixture.

mod support;

use std::time::Duration;

use serde_json::json;
use support::*;
use toolport_client::{Client, ClientEvent, Events};
use toolport_gateway::UpstreamConfig;
use toolport_http::HttpServer;
use toolport_protocol::ProtocolVersion;
use toolport_protocol::content::ResourceContents;
use toolport_protocol::logging::LoggingLevel;
use toolport_protocol::resources::Resource;
use toolport_server::{DemandChange, NoArgs, ResourceEntry, Server, tool};

const LIVE: &str = "live://counter";

/// The HTTP upstream: a resource that can be followed, and `chatty`, which
/// logs on its call's stream.
async fn upstream() -> (Server, String) {
    let server = Server::builder("live-upstream", "1.0.0")
        .resource(ResourceEntry::new(
            Resource::new(LIVE, "counter"),
            |_cx, request| async move { vec![ResourceContents::text(request.uri, Some("text/plain"), "1")] },
        ))
        .tool(
            tool("chatty").handler(|cx: toolport_server::RequestContext, _: NoArgs| async move {
                cx.log(LoggingLevel::Info, Some("upstream"), "working on it").await;
                "done"
            }),
        )
        .build()
        .unwrap();
    let url = serve_http(HttpServer::new(server.clone(), loopback())).await;
    (server, url)
}

/// The next event `wanted` picks, waiting at most 10 s.
async fn next<T>(events: &mut Events, mut wanted: impl FnMut(ClientEvent) -> Option<T>) -> T {
    tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Some(found) = wanted(events.next().await.expect("the event stream is open")) {
                return found;
            }
        }
    })
    .await
    .expect("the event came within 10 s")
}

async fn demand(changes: &mut tokio::sync::mpsc::UnboundedReceiver<DemandChange>) -> DemandChange {
    tokio::time::timeout(Duration::from_secs(10), changes.recv())
        .await
        .expect("the upstream's subscriptions changed within 10 s")
        .expect("the upstream is running")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscription_downstream_is_one_upstream_and_its_updates_come_back() {
    let (up_server, up_url) = upstream().await;
    let mut upstream_demand = up_server.subscription_demand().unwrap();
    let gw = start(vec![UpstreamConfig::http("live", &up_url)]).await;

    for version in [Some(ProtocolVersion::V2025_11_25), None] {
        let c: Client = client(&gw.url, version).await;
        let mut events = c.events().await.unwrap();
        c.subscribe_resource(LIVE).await.unwrap();
        assert_eq!(
            demand(&mut upstream_demand).await,
            DemandChange::Wanted(LIVE.into()),
            "{version:?}: the gateway subscribed upstream"
        );
        up_server.resource_updated(LIVE);
        let uri = next(&mut events, |e| match e {
            ClientEvent::ResourceUpdated { uri } => Some(uri),
            _ => None,
        })
        .await;
        assert_eq!(uri, LIVE, "{version:?}");
        c.unsubscribe_resource(LIVE).await.unwrap();
        assert_eq!(
            demand(&mut upstream_demand).await,
            DemandChange::Unwanted(LIVE.into()),
            "{version:?}: the last follower left, so did the upstream subscription"
        );
    }

    // Two followers, one subscription upstream; it ends with the last one,
    // also when a session just goes away.
    let (a, b) = (
        client(&gw.url, Some(ProtocolVersion::V2025_11_25)).await,
        client(&gw.url, Some(ProtocolVersion::V2025_11_25)).await,
    );
    a.subscribe_resource(LIVE).await.unwrap();
    assert_eq!(demand(&mut upstream_demand).await, DemandChange::Wanted(LIVE.into()));
    b.subscribe_resource(LIVE).await.unwrap();
    a.unsubscribe_resource(LIVE).await.unwrap();
    b.close().await;
    assert_eq!(demand(&mut upstream_demand).await, DemandChange::Unwanted(LIVE.into()));
    gw.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_upstreams_log_messages_go_to_the_caller_of_their_call_or_to_the_gateways_log() {
    let logs = Captured::start();
    let (_up_server, up_url) = upstream().await;
    let gw = start(vec![UpstreamConfig::http("live", &up_url), fixture("fx")]).await;
    for version in [Some(ProtocolVersion::V2025_11_25), None] {
        let c = client(&gw.url, version).await;
        c.set_log_level(LoggingLevel::Debug).await.unwrap();
        let mut events = c.events().await.unwrap();
        assert_eq!(text(&c.call_tool("live__chatty", json!({})).await.unwrap()), "done");
        let data = next(&mut events, |e| match e {
            ClientEvent::Log(log) => Some(log.data),
            _ => None,
        })
        .await;
        assert_eq!(data, "working on it", "{version:?}");
    }
    // Over stdio a log message names no call: the gateway logs it, under
    // the upstream's name, and no caller gets it.
    let c = client(&gw.url, Some(ProtocolVersion::V2025_11_25)).await;
    c.set_log_level(LoggingLevel::Debug).await.unwrap();
    let mut events = c.events().await.unwrap();
    assert_eq!(
        text(&c.call_tool("fx__log", json!({"text": "hi"})).await.unwrap()),
        "logged"
    );
    eventually("the gateway logged the upstream's message", || {
        let logs = logs.clone();
        async move { logs.text().contains("fixture says hi") }
    })
    .await;
    assert!(
        logs.text()
            .lines()
            .any(|l| l.contains("fixture says hi") && l.contains("upstream=fx")),
        "not labelled with the upstream"
    );
    // A chatty call afterwards: its log is the first one this caller sees.
    assert_eq!(text(&c.call_tool("live__chatty", json!({})).await.unwrap()), "done");
    let first = next(&mut events, |e| match e {
        ClientEvent::Log(log) => Some(log.data),
        _ => None,
    })
    .await;
    assert_eq!(first, "working on it", "the stdio upstream's log reached a caller");
    gw.stop().await;
}
