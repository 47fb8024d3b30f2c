//! Content the scenarios check, in both eras: `tools-call-*` content,
//! `tools-call-error`, `resources-read-*`, `resources-templates-read`,
//! `sep-2164-resource-not-found`, `prompts-get-*` and `completion-complete`.

mod common;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use common::{Client, HANDSHAKE, fixture, modern};
use serde_json::{Value, json};
use toolport_conformance::names::*;
use toolport_server::Server;

/// One connection per era: a handshake session and a stateless caller.
async fn both_eras(server: &Server) -> [(Client, fn(Value) -> Value); 2] {
    let handshake = Client::handshake(server, HANDSHAKE, json!({"sampling": {}, "elicitation": {}})).await;
    [(handshake, |p| p), (Client::connect(server), modern)]
}

#[tokio::test]
async fn content_tools_return_the_blocks_the_scenarios_look_for() {
    let server = fixture();
    for (mut client, wrap) in both_eras(&server).await {
        // tools-call-simple-text omits `arguments` entirely.
        let call = client.call("tools/call", wrap(json!({"name": TEST_SIMPLE_TEXT}))).await;
        assert_eq!(
            call.result()["content"],
            json!([{"type": "text", "text": "This is a simple text response for testing."}])
        );

        let call = client
            .call("tools/call", wrap(json!({"name": TEST_IMAGE_CONTENT, "arguments": {}})))
            .await;
        let image = &call.result()["content"][0];
        assert_eq!(image["type"], "image");
        assert_eq!(image["mimeType"], "image/png");
        let png = STANDARD.decode(image["data"].as_str().unwrap()).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");

        let call = client
            .call("tools/call", wrap(json!({"name": TEST_AUDIO_CONTENT, "arguments": {}})))
            .await;
        let audio = &call.result()["content"][0];
        assert_eq!(audio["type"], "audio");
        assert_eq!(audio["mimeType"], "audio/wav");
        let wav = STANDARD.decode(audio["data"].as_str().unwrap()).unwrap();
        assert_eq!((&wav[..4], &wav[8..12]), (&b"RIFF"[..], &b"WAVE"[..]));

        let call = client
            .call(
                "tools/call",
                wrap(json!({"name": TEST_EMBEDDED_RESOURCE, "arguments": {}})),
            )
            .await;
        assert_eq!(
            call.result()["content"],
            json!([{"type": "resource", "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content."
            }}])
        );

        let call = client
            .call(
                "tools/call",
                wrap(json!({"name": TEST_MULTIPLE_CONTENT_TYPES, "arguments": {}})),
            )
            .await;
        let content = call.result()["content"].as_array().unwrap().clone();
        let types: Vec<&str> = content.iter().map(|c| c["type"].as_str().unwrap()).collect();
        assert_eq!(types, ["text", "image", "resource"]);
        assert_eq!(content[2]["resource"]["mimeType"], "application/json");
        let data: Value = serde_json::from_str(content[2]["resource"]["text"].as_str().unwrap()).unwrap();
        assert_eq!(data, json!({"test": "data", "value": 123}));
    }
}

#[tokio::test]
async fn the_error_tool_fails_as_a_result_not_a_protocol_error() {
    let server = fixture();
    for (mut client, wrap) in both_eras(&server).await {
        let call = client
            .call(
                "tools/call",
                wrap(json!({"name": TEST_ERROR_HANDLING, "arguments": {}})),
            )
            .await;
        assert_eq!(call.result()["isError"], true);
        assert_eq!(call.text(), "This tool intentionally returns an error for testing");
    }
}

#[tokio::test]
async fn resources_and_the_template_read_back() {
    let server = fixture();
    for (mut client, wrap) in both_eras(&server).await {
        let read = client
            .call("resources/read", wrap(json!({"uri": STATIC_TEXT_URI})))
            .await;
        assert_eq!(
            read.result()["contents"],
            json!([{
                "uri": STATIC_TEXT_URI,
                "mimeType": "text/plain",
                "text": "This is the content of the static text resource."
            }])
        );

        let read = client
            .call("resources/read", wrap(json!({"uri": STATIC_BINARY_URI})))
            .await;
        let blob = &read.result()["contents"][0];
        assert_eq!(blob["uri"], STATIC_BINARY_URI);
        assert_eq!(blob["mimeType"], "image/png");
        assert!(STANDARD.decode(blob["blob"].as_str().unwrap()).is_ok());
        assert!(blob.get("text").is_none());

        let read = client
            .call("resources/read", wrap(json!({"uri": "test://template/123/data"})))
            .await;
        let contents = &read.result()["contents"][0];
        assert_eq!(contents["uri"], "test://template/123/data");
        assert_eq!(contents["mimeType"], "application/json");
        let data: Value = serde_json::from_str(contents["text"].as_str().unwrap()).unwrap();
        assert_eq!(
            data,
            json!({"id": "123", "templateTest": true, "data": "Data for ID: 123"})
        );

        let read = client
            .call("resources/read", wrap(json!({"uri": WATCHED_RESOURCE_URI})))
            .await;
        let text = read.result()["contents"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("Watched resource content"), "{text}");
    }
}

/// `sep-2164-resource-not-found` (2026-07-28: -32602 with `data.uri`); the
/// handshake era keeps its -32002.
#[tokio::test]
async fn an_unknown_resource_is_an_error_with_its_uri() {
    let server = fixture();
    let uri = "test://nonexistent-resource-for-conformance-testing";
    let [(mut handshake, _), (mut stateless, _)] = both_eras(&server).await;
    let read = stateless.call("resources/read", modern(json!({"uri": uri}))).await;
    assert_eq!(read.error()["code"], -32602);
    assert_eq!(read.error()["data"]["uri"], uri);
    let read = handshake.call("resources/read", json!({"uri": uri})).await;
    assert_eq!(read.error()["code"], -32002);
    assert_eq!(read.error()["data"]["uri"], uri);
}

#[tokio::test]
async fn prompts_render_as_the_scenarios_expect() {
    let server = fixture();
    for (mut client, wrap) in both_eras(&server).await {
        // prompts-get-simple and prompts-get-with-image send no `arguments`.
        let get = client
            .call("prompts/get", wrap(json!({"name": TEST_SIMPLE_PROMPT})))
            .await;
        assert_eq!(
            get.result()["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}])
        );

        let get = client
            .call(
                "prompts/get",
                wrap(json!({"name": TEST_PROMPT_WITH_ARGUMENTS, "arguments": {"arg1": "testValue1", "arg2": "testValue2"}})),
            )
            .await;
        assert_eq!(
            get.result()["messages"][0]["content"]["text"],
            "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
        );

        let get = client
            .call(
                "prompts/get",
                wrap(json!({"name": TEST_PROMPT_WITH_EMBEDDED_RESOURCE, "arguments": {"resourceUri": "test://example-resource"}})),
            )
            .await;
        let messages = get.result()["messages"].as_array().unwrap();
        assert_eq!(messages[0]["content"]["type"], "resource");
        assert_eq!(messages[0]["content"]["resource"]["uri"], "test://example-resource");
        assert_eq!(messages[0]["content"]["resource"]["mimeType"], "text/plain");
        assert_eq!(messages[1]["content"]["type"], "text");

        let get = client
            .call("prompts/get", wrap(json!({"name": TEST_PROMPT_WITH_IMAGE})))
            .await;
        let messages = get.result()["messages"].as_array().unwrap();
        assert_eq!(messages[0]["content"]["type"], "image");
        assert_eq!(messages[0]["content"]["mimeType"], "image/png");
        assert!(messages[0]["content"]["data"].as_str().is_some_and(|d| !d.is_empty()));
        assert_eq!(messages[1]["content"]["text"], "Please analyze the image above.");

        // A missing required argument is a protocol error.
        let get = client
            .call(
                "prompts/get",
                wrap(json!({"name": TEST_PROMPT_WITH_ARGUMENTS, "arguments": {"arg1": "x"}})),
            )
            .await;
        assert_eq!(get.error()["code"], -32602);
    }
}

#[tokio::test]
async fn completion_answers_for_the_prompt_argument_and_the_template() {
    let server = fixture();
    for (mut client, wrap) in both_eras(&server).await {
        // completion-complete asks for arg1 with the value "test".
        let complete = client
            .call(
                "completion/complete",
                wrap(json!({"ref": {"type": "ref/prompt", "name": TEST_PROMPT_WITH_ARGUMENTS}, "argument": {"name": "arg1", "value": "test"}})),
            )
            .await;
        assert_eq!(
            complete.result()["completion"]["values"],
            json!(["testValue1", "testValue2"])
        );
        let complete = client
            .call(
                "completion/complete",
                wrap(json!({"ref": {"type": "ref/prompt", "name": TEST_PROMPT_WITH_ARGUMENTS}, "argument": {"name": "arg1", "value": "par"}})),
            )
            .await;
        assert_eq!(
            complete.result()["completion"]["values"],
            json!(["paris", "park", "party"])
        );
        let complete = client
            .call(
                "completion/complete",
                wrap(json!({"ref": {"type": "ref/resource", "uri": TEMPLATE_URI}, "argument": {"name": "id", "value": "1"}})),
            )
            .await;
        assert_eq!(complete.result()["completion"]["values"], json!(["123"]));
    }
}

/// `logging-set-level` and `ping` (handshake era only).
#[tokio::test]
async fn set_level_and_ping_answer_empty_results() {
    let server = fixture();
    let mut client = Client::handshake(&server, HANDSHAKE, json!({})).await;
    assert_eq!(
        *client.call("logging/setLevel", json!({"level": "info"})).await.result(),
        json!({})
    );
    assert_eq!(*client.call("ping", json!({})).await.result(), json!({}));
    assert_eq!(
        *client
            .call("resources/subscribe", json!({"uri": WATCHED_RESOURCE_URI}))
            .await
            .result(),
        json!({})
    );
    assert_eq!(
        *client
            .call("resources/unsubscribe", json!({"uri": WATCHED_RESOURCE_URI}))
            .await
            .result(),
        json!({})
    );
}
