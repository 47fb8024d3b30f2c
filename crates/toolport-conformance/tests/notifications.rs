//! Notifications the scenarios count: `tools-call-with-logging`,
//! `tools-call-with-progress`, `server-stateless`'s logging, listen and
//! list-change checks, `resources-subscribe` / `-unsubscribe` with the watched
//! resource, and `server-sse-polling`'s hook into the transport.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::{Client, HANDSHAKE, fixture, modern, tool_names};
use serde_json::{Value, json};
use toolport_conformance::names::*;
use toolport_conformance::{
    FixtureOptions, announce_watched_resource_update, fixture_server_with, spawn_watched_resource_updates,
};

const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

#[tokio::test]
async fn the_logging_tool_sends_three_info_messages_in_the_handshake_era() {
    let server = fixture();
    let mut client = Client::handshake(&server, HANDSHAKE, json!({})).await;
    client
        .call("logging/setLevel", json!({"level": "debug"}))
        .await
        .result();
    let call = client
        .call("tools/call", json!({"name": TEST_TOOL_WITH_LOGGING, "arguments": {}}))
        .await;
    assert_eq!(call.text(), "Tool with logging executed successfully");
    let logs: Vec<&Value> = call
        .notes("notifications/message")
        .into_iter()
        .map(|n| &n["params"])
        .collect();
    assert_eq!(
        logs,
        [
            &json!({"level": "info", "logger": "conformance-test-server", "data": "Tool execution started"}),
            &json!({"level": "info", "logger": "conformance-test-server", "data": "Tool processing data"}),
            &json!({"level": "info", "logger": "conformance-test-server", "data": "Tool execution completed"}),
        ]
    );
    // A level above info silences them.
    client
        .call("logging/setLevel", json!({"level": "warning"}))
        .await
        .result();
    let call = client
        .call("tools/call", json!({"name": TEST_TOOL_WITH_LOGGING, "arguments": {}}))
        .await;
    assert!(call.notes("notifications/message").is_empty());
}

/// `sep-2575-server-no-log-without-loglevel`.
#[tokio::test]
async fn stateless_requests_get_logs_only_when_they_ask() {
    let server = fixture();
    let mut client = Client::connect(&server);
    for tool in [TEST_LOGGING_TOOL, TEST_TOOL_WITH_LOGGING] {
        let call = client
            .call("tools/call", modern(json!({"name": tool, "arguments": {}})))
            .await;
        assert!(call.notifications.is_empty(), "{tool}: {:?}", call.notifications);
        assert_eq!(call.result()["resultType"], "complete");
    }
    let call = client
        .call(
            "tools/call",
            modern(json!({"name": TEST_LOGGING_TOOL, "arguments": {}, "_meta": {"io.modelcontextprotocol/logLevel": "info"}})),
        )
        .await;
    assert_eq!(call.text(), "Logging evaluated");
    assert_eq!(
        call.notes("notifications/message")[0]["params"],
        json!({"level": "info", "logger": "conformance-test-server", "data": "Diagnostic trace logging activated"})
    );
}

#[tokio::test]
async fn progress_echoes_the_token_in_both_eras() {
    let server = fixture();
    let mut handshake = Client::handshake(&server, HANDSHAKE, json!({})).await;
    let mut stateless = Client::connect(&server);
    // The SDK client of 0.1.16 sends a numeric token; alpha's sends a string.
    let cases = [
        (
            &mut handshake,
            json!({"name": TEST_TOOL_WITH_PROGRESS, "arguments": {}, "_meta": {"progressToken": 7}}),
            json!(7),
        ),
        (
            &mut stateless,
            modern(
                json!({"name": TEST_TOOL_WITH_PROGRESS, "arguments": {}, "_meta": {"progressToken": "progress-test-1"}}),
            ),
            json!("progress-test-1"),
        ),
    ];
    for (client, params, token) in cases {
        let call = client.call("tools/call", params).await;
        call.result();
        let progress: Vec<&Value> = call
            .notes("notifications/progress")
            .into_iter()
            .map(|n| &n["params"])
            .collect();
        assert_eq!(progress.len(), 3);
        for (params, value) in progress.iter().zip([0, 50, 100]) {
            assert_eq!(params["progressToken"], token);
            assert_eq!(params["progress"], value);
            assert_eq!(params["total"], 100);
            assert_eq!(params["message"], format!("Completed step {value} of 100"));
        }
    }
    // Without a token: no progress, same answer.
    let call = handshake
        .call("tools/call", json!({"name": TEST_TOOL_WITH_PROGRESS, "arguments": {}}))
        .await;
    assert!(call.notifications.is_empty());
    call.result();
}

#[tokio::test]
async fn the_reconnection_tool_asks_the_transport_to_close_the_stream() {
    let closed = Arc::new(AtomicUsize::new(0));
    let seen = closed.clone();
    let server = fixture_server_with(FixtureOptions {
        step_delay: Duration::ZERO,
        reconnection_delay: Duration::ZERO,
        // A transport finds the stream from a private `_meta` key it added.
        stream_closer: Some(Arc::new(move |cx| {
            assert_eq!(cx.request_id().to_string(), "2");
            assert_eq!(cx.meta()["example.transport/stream"], "stream-7");
            seen.fetch_add(1, Ordering::SeqCst);
            true
        })),
        tasks: None,
    });
    let mut client = Client::handshake(&server, HANDSHAKE, json!({})).await;
    let call = client
        .call(
            "tools/call",
            json!({"name": TEST_RECONNECTION, "arguments": {}, "_meta": {"example.transport/stream": "stream-7"}}),
        )
        .await;
    assert!(
        call.text()
            .starts_with("Reconnection test completed successfully (the stream was closed mid-call)")
    );
    assert_eq!(closed.load(Ordering::SeqCst), 1);
    // Without a hook the tool still answers.
    let mut client = Client::handshake(&fixture(), HANDSHAKE, json!({})).await;
    let call = client
        .call("tools/call", json!({"name": TEST_RECONNECTION, "arguments": {}}))
        .await;
    assert!(call.text().contains("kept the stream open"));
}

/// Opens `subscriptions/listen` with `filter` and returns its acknowledgement.
async fn listen(client: &mut Client, id: &str, filter: Value) -> Value {
    client
        .send(json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": modern(json!({"notifications": filter}))}))
        .await;
    let ack = client.recv().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "the first message"
    );
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], id);
    ack
}

/// `sep-2575-server-sends-subscription-ack`, `-tags-subscription-id`,
/// `-honors-notification-filter` and both `-list-changed-on-subscription`
/// checks: the trigger tools change the lists; only the listener that asked
/// hears about each change.
#[tokio::test]
async fn trigger_tools_notify_only_the_listeners_that_asked() {
    let server = fixture();
    let mut tools_listener = Client::connect(&server);
    let mut prompts_listener = Client::connect(&server);
    let mut caller = Client::connect(&server);
    let ack = listen(&mut tools_listener, "tools-sub", json!({"toolsListChanged": true})).await;
    assert_eq!(ack["params"]["notifications"], json!({"toolsListChanged": true}));
    listen(
        &mut prompts_listener,
        "prompts-sub",
        json!({"promptsListChanged": true}),
    )
    .await;

    let call = caller
        .call(
            "tools/call",
            modern(json!({"name": TEST_TRIGGER_TOOL_CHANGE, "arguments": {}})),
        )
        .await;
    assert_eq!(call.text(), format!("Mutation triggered: {TEST_DYNAMIC_TOOL} added"));
    let list = caller.call("tools/list", modern(json!({}))).await;
    assert!(tool_names(list.result()).contains(&TEST_DYNAMIC_TOOL.to_owned()));
    let dynamic = caller
        .call(
            "tools/call",
            modern(json!({"name": TEST_DYNAMIC_TOOL, "arguments": {}})),
        )
        .await;
    assert_eq!(dynamic.text(), "This tool was added at run time.");

    let call = caller
        .call(
            "tools/call",
            modern(json!({"name": TEST_TRIGGER_PROMPT_CHANGE, "arguments": {}})),
        )
        .await;
    assert_eq!(call.text(), format!("Mutation triggered: {TEST_DYNAMIC_PROMPT} added"));

    // Each listener's next message is its own kind of change: the tools
    // change came first, so the prompts listener skipped it.
    let note = tools_listener.recv().await;
    assert_eq!(note["method"], "notifications/tools/list_changed");
    assert_eq!(note["params"]["_meta"][SUBSCRIPTION_ID], "tools-sub");
    let note = prompts_listener.recv().await;
    assert_eq!(note["method"], "notifications/prompts/list_changed");
    assert_eq!(note["params"]["_meta"][SUBSCRIPTION_ID], "prompts-sub");

    // A second trigger removes the dynamic tool again.
    let call = caller
        .call(
            "tools/call",
            modern(json!({"name": TEST_TRIGGER_TOOL_CHANGE, "arguments": {}})),
        )
        .await;
    assert_eq!(call.text(), format!("Mutation triggered: {TEST_DYNAMIC_TOOL} removed"));
    assert_eq!(
        tools_listener.recv().await["method"],
        "notifications/tools/list_changed"
    );
    let list = caller.call("tools/list", modern(json!({}))).await;
    assert!(!tool_names(list.result()).contains(&TEST_DYNAMIC_TOOL.to_owned()));
}

/// Handshake sessions hear about list changes too (`listChanged: true`).
#[tokio::test]
async fn handshake_sessions_get_list_changed() {
    let server = fixture();
    let mut session = Client::handshake(&server, HANDSHAKE, json!({})).await;
    let call = session
        .call(
            "tools/call",
            json!({"name": TEST_TRIGGER_PROMPT_CHANGE, "arguments": {}}),
        )
        .await;
    call.result();
    // The notification is not tied to the request: it may come before or after it.
    let note = match call.notes("notifications/prompts/list_changed").first() {
        Some(note) => (*note).clone(),
        None => session.recv().await,
    };
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "method": "notifications/prompts/list_changed"})
    );
}

/// `resources-subscribe` / `resources-unsubscribe`: updates reach a session
/// only while it is subscribed.
#[tokio::test]
async fn the_watched_resource_updates_subscribers_only() {
    let server = fixture();
    let mut session = Client::handshake(&server, HANDSHAKE, json!({})).await;
    session
        .call("resources/subscribe", json!({"uri": WATCHED_RESOURCE_URI}))
        .await
        .result();
    let before = session
        .call("resources/read", json!({"uri": WATCHED_RESOURCE_URI}))
        .await;
    announce_watched_resource_update(&server);
    assert_eq!(
        session.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": WATCHED_RESOURCE_URI}})
    );
    let after = session
        .call("resources/read", json!({"uri": WATCHED_RESOURCE_URI}))
        .await;
    assert_ne!(
        before.result()["contents"][0]["text"],
        after.result()["contents"][0]["text"]
    );

    // Unsubscribed: an update of the watched resource is not sent. Updates are
    // forwarded in order, so the first one to arrive is the static resource's.
    session
        .call("resources/unsubscribe", json!({"uri": WATCHED_RESOURCE_URI}))
        .await
        .result();
    session
        .call("resources/subscribe", json!({"uri": STATIC_TEXT_URI}))
        .await
        .result();
    announce_watched_resource_update(&server);
    server.resource_updated(STATIC_TEXT_URI);
    assert_eq!(session.recv().await["params"]["uri"], STATIC_TEXT_URI);
}

#[tokio::test]
async fn listeners_get_watched_resource_updates_when_they_ask() {
    let server = fixture();
    let mut listener = Client::connect(&server);
    listen(
        &mut listener,
        "res-sub",
        json!({"resourceSubscriptions": [WATCHED_RESOURCE_URI]}),
    )
    .await;
    announce_watched_resource_update(&server);
    let note = listener.recv().await;
    assert_eq!(note["method"], "notifications/resources/updated");
    assert_eq!(note["params"]["uri"], WATCHED_RESOURCE_URI);
    assert_eq!(note["params"]["_meta"][SUBSCRIPTION_ID], "res-sub");
}

#[tokio::test]
async fn the_watched_resource_changes_on_its_own() {
    let server = fixture();
    let mut session = Client::handshake(&server, HANDSHAKE, json!({})).await;
    session
        .call("resources/subscribe", json!({"uri": WATCHED_RESOURCE_URI}))
        .await
        .result();
    let updates = spawn_watched_resource_updates(server.clone(), Duration::from_millis(20));
    for _ in 0..2 {
        let note = session.recv().await;
        assert_eq!(note["method"], "notifications/resources/updated");
        assert_eq!(note["params"]["uri"], WATCHED_RESOURCE_URI);
    }
    updates.abort();
}
