//! The `input-required-result-*` scenarios (SEP-2322, 2026-07-28), round by
//! round, as the suite sends them.

mod common;

use common::{Client, Exchange, accept, fixture, modern, modern_with, roots, sampled};
use serde_json::{Value, json};
use toolport_conformance::names::*;

async fn call(client: &mut Client, tool: &str, extra: Value) -> Exchange {
    let mut params = json!({"name": tool, "arguments": {}});
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    client.call("tools/call", modern(params)).await
}

/// An InputRequiredResult: its request keys and methods, and its state.
fn input_required(exchange: &Exchange) -> (Vec<(String, String)>, String) {
    let result = exchange.result();
    assert_eq!(result["resultType"], "input_required", "{result}");
    assert!(result.get("content").is_none());
    let requests = result["inputRequests"]
        .as_object()
        .expect("inputRequests")
        .iter()
        .map(|(k, v)| (k.clone(), v["method"].as_str().unwrap().to_owned()))
        .collect();
    let state = result["requestState"]
        .as_str()
        .expect("a requestState string")
        .to_owned();
    (requests, state)
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected.iter().map(|(k, m)| (k.to_string(), m.to_string())).collect()
}

/// A1 `basic-elicitation` and A10 `result-type`.
#[tokio::test]
async fn a1_elicitation_round_trip() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let r1 = call(&mut client, TEST_IRR_ELICITATION, json!({})).await;
    let (requests, state) = input_required(&r1);
    assert_eq!(requests, pairs(&[("user_name", "elicitation/create")]));
    assert_eq!(
        r1.result()["inputRequests"]["user_name"]["params"],
        json!({
            "message": "What is your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        })
    );
    let r2 = call(
        &mut client,
        TEST_IRR_ELICITATION,
        json!({"inputResponses": {"user_name": accept(json!({"name": "Alice"}))}, "requestState": state}),
    )
    .await;
    assert_eq!(r2.result()["resultType"], "complete");
    assert_eq!(r2.text(), "Hello, Alice!");
}

/// A2 `basic-sampling`.
#[tokio::test]
async fn a2_sampling_round_trip() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let r1 = call(&mut client, TEST_IRR_SAMPLING, json!({})).await;
    let (requests, state) = input_required(&r1);
    assert_eq!(requests, pairs(&[("capital_question", "sampling/createMessage")]));
    let params = &r1.result()["inputRequests"]["capital_question"]["params"];
    assert_eq!(params["maxTokens"], 100);
    assert_eq!(
        params["messages"][0]["content"]["text"],
        "What is the capital of France?"
    );
    let r2 = call(
        &mut client,
        TEST_IRR_SAMPLING,
        json!({"inputResponses": {"capital_question": sampled("The capital of France is Paris.")}, "requestState": state}),
    )
    .await;
    assert_eq!(r2.text(), "Sampling result: The capital of France is Paris.");
}

/// A3 `basic-list-roots`.
#[tokio::test]
async fn a3_list_roots_round_trip() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let r1 = call(&mut client, TEST_IRR_LIST_ROOTS, json!({})).await;
    let (requests, state) = input_required(&r1);
    assert_eq!(requests, pairs(&[("client_roots", "roots/list")]));
    let r2 = call(
        &mut client,
        TEST_IRR_LIST_ROOTS,
        json!({"inputResponses": {"client_roots": roots()}, "requestState": state}),
    )
    .await;
    assert_eq!(r2.text(), "Found 1 root(s): file:///test/root");
}

/// A4 `request-state`: the handler's own state travels in requestState.
#[tokio::test]
async fn a4_request_state_round_trip() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let r1 = call(&mut client, TEST_IRR_REQUEST_STATE, json!({})).await;
    let (requests, state) = input_required(&r1);
    assert_eq!(requests, pairs(&[("confirm", "elicitation/create")]));
    let r2 = call(
        &mut client,
        TEST_IRR_REQUEST_STATE,
        json!({"inputResponses": {"confirm": accept(json!({"ok": true}))}, "requestState": state}),
    )
    .await;
    assert!(r2.text().contains("state-ok"), "{}", r2.text());
    // The answer without the state it was asked with is refused.
    let r2 = call(
        &mut client,
        TEST_IRR_REQUEST_STATE,
        json!({"inputResponses": {"confirm": accept(json!({"ok": true}))}}),
    )
    .await;
    assert_eq!(r2.error()["code"], -32602);
}

/// A5 `multiple-input-requests`.
#[tokio::test]
async fn a5_three_inputs_at_once() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let r1 = call(&mut client, TEST_IRR_MULTIPLE_INPUTS, json!({})).await;
    let (requests, state) = input_required(&r1);
    assert_eq!(
        requests,
        pairs(&[
            ("client_roots", "roots/list"),
            ("greeting", "sampling/createMessage"),
            ("user_name", "elicitation/create"),
        ])
    );
    assert_eq!(r1.result()["inputRequests"]["client_roots"]["params"], json!({}));
    // Answering only some of them asks again for the rest.
    let partial = call(
        &mut client,
        TEST_IRR_MULTIPLE_INPUTS,
        json!({"inputResponses": {"user_name": accept(json!({"name": "Alice"}))}, "requestState": state}),
    )
    .await;
    let (rest, _) = input_required(&partial);
    assert_eq!(
        rest,
        pairs(&[("client_roots", "roots/list"), ("greeting", "sampling/createMessage")])
    );
    let r2 = call(
        &mut client,
        TEST_IRR_MULTIPLE_INPUTS,
        json!({
            "inputResponses": {
                "user_name": accept(json!({"name": "Alice"})),
                "greeting": sampled("Hello there!"),
                "client_roots": roots()
            },
            "requestState": state
        }),
    )
    .await;
    assert_eq!(r2.text(), "Name: Alice; Greeting: Hello there!; Roots: 1");
}

/// A6 `multi-round`: a new requestState each round; answers accumulate.
#[tokio::test]
async fn a6_two_rounds_then_complete() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let r1 = call(&mut client, TEST_IRR_MULTI_ROUND, json!({})).await;
    let (requests, state1) = input_required(&r1);
    assert_eq!(requests, pairs(&[("step1", "elicitation/create")]));
    let r2 = call(
        &mut client,
        TEST_IRR_MULTI_ROUND,
        json!({"inputResponses": {"step1": accept(json!({"name": "Alice"}))}, "requestState": state1}),
    )
    .await;
    let (requests, state2) = input_required(&r2);
    assert_eq!(requests, pairs(&[("step2", "elicitation/create")]));
    assert_eq!(
        r2.result()["inputRequests"]["step2"]["params"]["message"],
        "Step 2: What is your favorite color?"
    );
    assert_ne!(state1, state2);
    let r3 = call(
        &mut client,
        TEST_IRR_MULTI_ROUND,
        json!({"inputResponses": {"step2": accept(json!({"color": "blue"}))}, "requestState": state2}),
    )
    .await;
    assert_eq!(r3.result()["resultType"], "complete");
    assert_eq!(r3.text(), "Multi-round complete for Alice who likes blue");
}

/// A7 `missing-input-response`: a wrong key is answered by asking again.
#[tokio::test]
async fn a7_wrong_key_asks_again() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let r1 = call(
        &mut client,
        TEST_IRR_ELICITATION,
        json!({"inputResponses": {"wrong_key": accept(json!({"data": "wrong"}))}}),
    )
    .await;
    let (requests, _) = input_required(&r1);
    assert_eq!(requests, pairs(&[("user_name", "elicitation/create")]));
}

/// A9 `non-tool-request`: prompts/get asks too.
#[tokio::test]
async fn a9_prompt_round_trip() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let r1 = client
        .call("prompts/get", modern(json!({"name": TEST_IRR_PROMPT})))
        .await;
    let (requests, state) = input_required(&r1);
    assert_eq!(requests, pairs(&[("user_context", "elicitation/create")]));
    let r2 = client
        .call(
            "prompts/get",
            modern(json!({
                "name": TEST_IRR_PROMPT,
                "inputResponses": {"user_context": accept(json!({"context": "test context"}))},
                "requestState": state
            })),
        )
        .await;
    assert_eq!(r2.result()["resultType"], "complete");
    assert_eq!(
        r2.result()["messages"][0]["content"]["text"],
        "Prompt with context: test context"
    );
}

/// A12 `tampered-state`: the only acceptable answer is a JSON-RPC error.
#[tokio::test]
async fn a12_tampered_state_is_refused() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let r1 = call(&mut client, TEST_IRR_TAMPERED_STATE, json!({})).await;
    let (requests, state) = input_required(&r1);
    assert_eq!(requests, pairs(&[("confirm", "elicitation/create")]));
    let tampered = call(
        &mut client,
        TEST_IRR_TAMPERED_STATE,
        json!({"inputResponses": {"confirm": accept(json!({"ok": true}))}, "requestState": format!("{state}-TAMPERED")}),
    )
    .await;
    assert_eq!(tampered.error()["code"], -32602);
    let honest = call(
        &mut client,
        TEST_IRR_TAMPERED_STATE,
        json!({"inputResponses": {"confirm": accept(json!({"ok": true}))}, "requestState": state}),
    )
    .await;
    assert!(honest.text().starts_with("integrity-ok"));
    // A state sealed for another tool is refused as well.
    let other = call(&mut client, TEST_IRR_ELICITATION, json!({})).await;
    let (_, foreign) = input_required(&other);
    let replayed = call(
        &mut client,
        TEST_IRR_TAMPERED_STATE,
        json!({"inputResponses": {"confirm": accept(json!({"ok": true}))}, "requestState": foreign}),
    )
    .await;
    assert_eq!(replayed.error()["code"], -32602);
}

/// A13 `capability-check`: only what the client declared is asked for.
#[tokio::test]
async fn a13_only_declared_capabilities_are_asked_for() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let sampling_only = client
        .call(
            "tools/call",
            modern_with(
                json!({"name": TEST_IRR_CAPABILITIES, "arguments": {}}),
                json!({"sampling": {}}),
            ),
        )
        .await;
    let (requests, state) = input_required(&sampling_only);
    assert_eq!(requests, pairs(&[("sample_input", "sampling/createMessage")]));
    let done = client
        .call(
            "tools/call",
            modern_with(
                json!({"name": TEST_IRR_CAPABILITIES, "arguments": {}, "inputResponses": {"sample_input": sampled("ok")}, "requestState": state}),
                json!({"sampling": {}}),
            ),
        )
        .await;
    assert_eq!(done.text(), "capabilities-ok: received sample_input");
    let both = call(&mut client, TEST_IRR_CAPABILITIES, json!({})).await;
    let (requests, _) = input_required(&both);
    assert_eq!(
        requests,
        pairs(&[
            ("elicit_input", "elicitation/create"),
            ("sample_input", "sampling/createMessage")
        ])
    );
    let none = client
        .call(
            "tools/call",
            modern_with(json!({"name": TEST_IRR_CAPABILITIES, "arguments": {}}), json!({})),
        )
        .await;
    assert_eq!(none.text(), "No supported capabilities declared");
}

/// A14 `ignore-extra-params`: unknown keys beside the right one are ignored.
#[tokio::test]
async fn a14_extra_keys_are_ignored() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let done = call(
        &mut client,
        TEST_IRR_ELICITATION,
        json!({"inputResponses": {
            "user_name": accept(json!({"name": "Alice"})),
            "unknown_extra_key": accept(json!({"foo": "bar"})),
            "another_unexpected": accept(json!({"baz": 123}))
        }}),
    )
    .await;
    assert_eq!(done.result()["resultType"], "complete");
    assert_eq!(done.text(), "Hello, Alice!");
}

/// A15 `validate-input`: malformed answers never complete the call.
#[tokio::test]
async fn a15_malformed_answers_do_not_complete() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let number = call(
        &mut client,
        TEST_IRR_ELICITATION,
        json!({"inputResponses": {"user_name": 12345}}),
    )
    .await;
    assert_eq!(number.error()["code"], -32602);
    let null = call(&mut client, TEST_IRR_ELICITATION, json!({"inputResponses": null})).await;
    let (requests, _) = input_required(&null);
    assert_eq!(requests, pairs(&[("user_name", "elicitation/create")]));
}
