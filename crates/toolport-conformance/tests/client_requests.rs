//! Tools that ask the client, in the handshake era (requests to the client:
//! `tools-call-sampling`, `tools-call-elicitation`,
//! `elicitation-sep1034-defaults`, `elicitation-sep1330-enums`) and the
//! 2026-07-28 diagnostics of `server-stateless` (`test_missing_capability`,
//! `test_streaming_elicitation`).

mod common;

use common::{Client, HANDSHAKE, accept, fixture, modern, modern_with, sampled};
use serde_json::{Value, json};
use toolport_conformance::names::*;

/// The capabilities the suite's SDK client declares in `initialize`.
fn sdk_capabilities() -> Value {
    json!({"sampling": {}, "elicitation": {}})
}

#[tokio::test]
async fn sampling_asks_the_client_and_returns_its_answer() {
    let server = fixture();
    let mut client = Client::handshake(&server, HANDSHAKE, sdk_capabilities()).await;
    let call = client
        .call_answering(
            "tools/call",
            json!({"name": TEST_SAMPLING, "arguments": {"prompt": "Test prompt for sampling"}}),
            |_| sampled("This is a test response from the client"),
        )
        .await;
    assert_eq!(call.server_requests.len(), 1);
    let request = &call.server_requests[0];
    assert_eq!(request["method"], "sampling/createMessage");
    assert_eq!(
        request["params"],
        json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "Test prompt for sampling"}}],
            "maxTokens": 100
        })
    );
    assert_eq!(call.text(), "LLM response: This is a test response from the client");
}

#[tokio::test]
async fn elicitation_asks_for_username_and_email() {
    let server = fixture();
    let mut client = Client::handshake(&server, HANDSHAKE, sdk_capabilities()).await;
    let call = client
        .call_answering(
            "tools/call",
            json!({"name": TEST_ELICITATION, "arguments": {"message": "Please provide your information"}}),
            |_| accept(json!({"username": "testuser", "email": "test@example.com"})),
        )
        .await;
    let request = &call.server_requests[0];
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Please provide your information");
    let schema = &request["params"]["requestedSchema"];
    assert_eq!(schema["type"], "object");
    assert_eq!(schema["properties"]["username"]["type"], "string");
    assert_eq!(schema["properties"]["email"]["type"], "string");
    assert_eq!(schema["required"], json!(["username", "email"]));
    assert_eq!(
        call.text(),
        r#"User response: action=accept, content={"email":"test@example.com","username":"testuser"}"#
    );
}

#[tokio::test]
async fn sep1034_defaults_cover_every_primitive_type() {
    let server = fixture();
    let mut client = Client::handshake(&server, HANDSHAKE, sdk_capabilities()).await;
    let call = client
        .call_answering(
            "tools/call",
            json!({"name": TEST_ELICITATION_SEP1034_DEFAULTS, "arguments": {}}),
            |_| {
                accept(json!({"name": "Jane Smith", "age": 25, "score": 88.0, "status": "inactive", "verified": false}))
            },
        )
        .await;
    let properties = &call.server_requests[0]["params"]["requestedSchema"]["properties"];
    assert_eq!(
        (&properties["name"]["type"], &properties["name"]["default"]),
        (&json!("string"), &json!("John Doe"))
    );
    assert_eq!(
        (&properties["age"]["type"], &properties["age"]["default"]),
        (&json!("integer"), &json!(30))
    );
    assert!(properties["age"]["default"].is_i64(), "an integer default, not 30.0");
    assert_eq!(
        (&properties["score"]["type"], &properties["score"]["default"]),
        (&json!("number"), &json!(95.5))
    );
    assert_eq!(properties["status"]["type"], "string");
    assert_eq!(properties["status"]["enum"], json!(["active", "inactive", "pending"]));
    assert_eq!(properties["status"]["default"], "active");
    assert_eq!(
        (&properties["verified"]["type"], &properties["verified"]["default"]),
        (&json!("boolean"), &json!(true))
    );
    assert!(
        call.text()
            .starts_with("Elicitation completed: action=accept, content=")
    );
}

#[tokio::test]
async fn sep1330_enums_use_all_five_shapes() {
    let server = fixture();
    let mut client = Client::handshake(&server, HANDSHAKE, sdk_capabilities()).await;
    let call = client
        .call_answering(
            "tools/call",
            json!({"name": TEST_ELICITATION_SEP1330_ENUMS, "arguments": {}}),
            |_| {
                accept(json!({
                    "untitledSingle": "option1",
                    "titledSingle": "value1",
                    "legacyEnum": "opt1",
                    "untitledMulti": ["option1", "option2"],
                    "titledMulti": ["value1", "value2"]
                }))
            },
        )
        .await;
    let p = &call.server_requests[0]["params"]["requestedSchema"]["properties"];
    // Untitled single-select: enum, no oneOf, no enumNames.
    assert_eq!(p["untitledSingle"]["type"], "string");
    assert!(p["untitledSingle"]["enum"].is_array());
    assert!(p["untitledSingle"].get("oneOf").is_none() && p["untitledSingle"].get("enumNames").is_none());
    // Titled single-select: oneOf of const/title strings, no enum.
    assert_eq!(p["titledSingle"]["type"], "string");
    assert!(p["titledSingle"].get("enum").is_none());
    for option in p["titledSingle"]["oneOf"].as_array().unwrap() {
        assert!(option["const"].is_string() && option["title"].is_string());
    }
    // Legacy: enum with enumNames of the same length.
    assert_eq!(
        p["legacyEnum"]["enum"].as_array().unwrap().len(),
        p["legacyEnum"]["enumNames"].as_array().unwrap().len()
    );
    // Untitled multi-select: array of string items with enum, no anyOf.
    assert_eq!(p["untitledMulti"]["type"], "array");
    assert_eq!(p["untitledMulti"]["items"]["type"], "string");
    assert!(p["untitledMulti"]["items"]["enum"].is_array());
    assert!(p["untitledMulti"]["items"].get("anyOf").is_none());
    // Titled multi-select: array of items.anyOf const/title, no items.enum.
    assert_eq!(p["titledMulti"]["type"], "array");
    assert!(p["titledMulti"]["items"].get("enum").is_none());
    for option in p["titledMulti"]["items"]["anyOf"].as_array().unwrap() {
        assert!(option["const"].is_string() && option["title"].is_string());
    }
    assert!(call.text().contains(r#""titledMulti":["value1","value2"]"#));
}

/// Without the capability, a handshake-era tool fails in a way the model can read.
#[tokio::test]
async fn handshake_tools_fail_as_results_without_the_capability() {
    let server = fixture();
    let mut client = Client::handshake(&server, HANDSHAKE, json!({})).await;
    for (tool, arguments) in [
        (TEST_SAMPLING, json!({"prompt": "p"})),
        (TEST_ELICITATION, json!({"message": "m"})),
        (TEST_MISSING_CAPABILITY, json!({})),
    ] {
        let call = client
            .call("tools/call", json!({"name": tool, "arguments": arguments}))
            .await;
        assert_eq!(call.result()["isError"], true, "{tool}");
        assert!(call.server_requests.is_empty());
    }
}

/// `sep-2575-server-rejects-undeclared-capability`: -32021 with
/// `requiredCapabilities` as a ClientCapabilities object.
#[tokio::test]
async fn missing_capability_is_refused_with_32021_in_2026() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let call = client
        .call(
            "tools/call",
            modern_with(json!({"name": TEST_MISSING_CAPABILITY, "arguments": {}}), json!({})),
        )
        .await;
    assert_eq!(call.error()["code"], -32021);
    assert_eq!(call.error()["data"]["requiredCapabilities"], json!({"sampling": {}}));
    // Declared: the question is asked instead (MRTR).
    let call = client
        .call(
            "tools/call",
            modern(json!({"name": TEST_MISSING_CAPABILITY, "arguments": {}})),
        )
        .await;
    assert_eq!(call.result()["resultType"], "input_required");
    assert_eq!(
        call.result()["inputRequests"]["capability_probe"]["method"],
        "sampling/createMessage"
    );
}

/// `sep-2575-http-server-no-independent-requests-on-stream`: the stream of
/// this call carries notifications and an InputRequiredResult, never a request.
#[tokio::test]
async fn streaming_elicitation_sends_no_request_in_2026() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let call = client
        .call(
            "tools/call",
            modern_with(
                json!({"name": TEST_STREAMING_ELICITATION, "arguments": {}, "_meta": {"progressToken": "s"}}),
                json!({"elicitation": {}}),
            ),
        )
        .await;
    assert!(call.server_requests.is_empty());
    assert_eq!(call.notes("notifications/progress").len(), 1);
    assert_eq!(call.result()["resultType"], "input_required");
    assert_eq!(
        call.result()["inputRequests"]["stream_confirm"]["method"],
        "elicitation/create"
    );
    // The handshake era asks with a request instead.
    let mut session = Client::handshake(&server, HANDSHAKE, sdk_capabilities()).await;
    let call = session
        .call_answering(
            "tools/call",
            json!({"name": TEST_STREAMING_ELICITATION, "arguments": {}}),
            |_| accept(json!({"confirm": true})),
        )
        .await;
    assert_eq!(call.server_requests[0]["method"], "elicitation/create");
    assert_eq!(
        call.text(),
        r#"Streaming complete: action=accept, content={"confirm":true}"#
    );
}

/// The MRTR tools work in the handshake era too: their questions become requests.
#[tokio::test]
async fn input_required_tools_ask_with_requests_in_the_handshake_era() {
    let server = fixture();
    let capabilities = json!({"sampling": {}, "elicitation": {}, "roots": {}});
    let mut client = Client::handshake(&server, HANDSHAKE, capabilities).await;
    let call = client
        .call_answering(
            "tools/call",
            json!({"name": TEST_IRR_MULTIPLE_INPUTS, "arguments": {}}),
            |request| match request["method"].as_str().unwrap() {
                "elicitation/create" => accept(json!({"name": "Alice"})),
                "sampling/createMessage" => sampled("Hello there!"),
                "roots/list" => common::roots(),
                other => panic!("unexpected {other}"),
            },
        )
        .await;
    let methods: Vec<&str> = call
        .server_requests
        .iter()
        .map(|r| r["method"].as_str().unwrap())
        .collect();
    assert_eq!(methods.len(), 3);
    assert_eq!(call.text(), "Name: Alice; Greeting: Hello there!; Roots: 1");

    let call = client
        .call_answering(
            "tools/call",
            json!({"name": TEST_IRR_MULTI_ROUND, "arguments": {}}),
            |request| {
                if request["params"]["message"].as_str().unwrap().starts_with("Step 1") {
                    accept(json!({"name": "Alice"}))
                } else {
                    accept(json!({"color": "blue"}))
                }
            },
        )
        .await;
    assert_eq!(call.server_requests.len(), 2);
    assert_eq!(call.text(), "Multi-round complete for Alice who likes blue");

    let call = client
        .call_answering("prompts/get", json!({"name": TEST_IRR_PROMPT}), |_| {
            accept(json!({"context": "tests"}))
        })
        .await;
    assert_eq!(
        call.result()["messages"][0]["content"]["text"],
        "Prompt with context: tests"
    );
}
