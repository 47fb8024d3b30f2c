//! What the fixture lists, in both eras: the names every scenario calls, the
//! shapes `tools-list`, `prompts-list`, `resources-list`,
//! `json-schema-2020-12` and `caching` check, and `server/discover`.

mod common;

use common::{Client, HANDSHAKE, fixture, modern, tool_names};
use serde_json::{Value, json};
use toolport_conformance::names::*;
use toolport_conformance::{JSON_SCHEMA_2020_12_INPUT_SCHEMA, SERVER_NAME};

/// Every tool a scenario calls by name.
const SCENARIO_TOOLS: &[&str] = &[
    TEST_SIMPLE_TEXT,
    TEST_IMAGE_CONTENT,
    TEST_AUDIO_CONTENT,
    TEST_EMBEDDED_RESOURCE,
    TEST_MULTIPLE_CONTENT_TYPES,
    TEST_ERROR_HANDLING,
    TEST_TOOL_WITH_LOGGING,
    TEST_TOOL_WITH_PROGRESS,
    TEST_RECONNECTION,
    TEST_SAMPLING,
    TEST_ELICITATION,
    TEST_ELICITATION_SEP1034_DEFAULTS,
    TEST_ELICITATION_SEP1330_ENUMS,
    JSON_SCHEMA_2020_12_TOOL,
    TEST_HEADER_PARAM,
    TEST_MISSING_CAPABILITY,
    TEST_STREAMING_ELICITATION,
    TEST_LOGGING_TOOL,
    TEST_TRIGGER_TOOL_CHANGE,
    TEST_TRIGGER_PROMPT_CHANGE,
    TEST_IRR_ELICITATION,
    TEST_IRR_SAMPLING,
    TEST_IRR_LIST_ROOTS,
    TEST_IRR_REQUEST_STATE,
    TEST_IRR_MULTIPLE_INPUTS,
    TEST_IRR_MULTI_ROUND,
    TEST_IRR_TAMPERED_STATE,
    TEST_IRR_CAPABILITIES,
];

const SCENARIO_PROMPTS: &[&str] = &[
    TEST_SIMPLE_PROMPT,
    TEST_PROMPT_WITH_ARGUMENTS,
    TEST_PROMPT_WITH_EMBEDDED_RESOURCE,
    TEST_PROMPT_WITH_IMAGE,
    TEST_IRR_PROMPT,
];

/// `tools-list` and `tools-name-format`: a description and an input schema
/// each, names of 1-64 characters of `[A-Za-z0-9_./-]`.
fn check_tools(list: &Value) {
    let names = tool_names(list);
    for expected in SCENARIO_TOOLS {
        assert!(names.iter().any(|n| n == expected), "{expected} is listed");
    }
    for tool in list["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        assert!((1..=64).contains(&name.len()), "{name}: length");
        assert!(
            name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_./-".contains(&b)),
            "{name}: characters"
        );
        assert!(
            tool["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{name}: description"
        );
        assert_eq!(tool["inputSchema"]["type"], "object", "{name}: inputSchema");
    }
}

/// `prompts-list`: a name and a description each.
fn check_prompts(list: &Value) {
    let prompts = list["prompts"].as_array().unwrap();
    for expected in SCENARIO_PROMPTS {
        assert!(prompts.iter().any(|p| p["name"] == *expected), "{expected} is listed");
    }
    for prompt in prompts {
        assert!(
            prompt["description"].as_str().is_some_and(|d| !d.is_empty()),
            "{prompt}"
        );
    }
    let with_arguments = prompts
        .iter()
        .find(|p| p["name"] == TEST_PROMPT_WITH_ARGUMENTS)
        .unwrap();
    assert_eq!(
        with_arguments["arguments"],
        json!([
            {"name": "arg1", "description": "First test argument.", "required": true},
            {"name": "arg2", "description": "Second test argument.", "required": true}
        ])
    );
    let embedded = prompts
        .iter()
        .find(|p| p["name"] == TEST_PROMPT_WITH_EMBEDDED_RESOURCE)
        .unwrap();
    assert_eq!(embedded["arguments"][0]["name"], "resourceUri");
    assert_eq!(embedded["arguments"][0]["required"], true);
}

fn check_resources(list: &Value, templates: &Value) {
    let uris: Vec<&str> = list["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert!(r["name"].is_string() && r["description"].is_string(), "{r}");
            r["uri"].as_str().unwrap()
        })
        .collect();
    assert_eq!(uris, [STATIC_BINARY_URI, STATIC_TEXT_URI, WATCHED_RESOURCE_URI]);
    assert_eq!(templates["resourceTemplates"][0]["uriTemplate"], TEMPLATE_URI);
    assert_eq!(templates["resourceTemplates"][0]["mimeType"], "application/json");
}

#[tokio::test]
async fn handshake_lists_every_name_the_scenarios_call() {
    let server = fixture();
    let mut client = Client::handshake(&server, HANDSHAKE, json!({"sampling": {}, "elicitation": {}})).await;
    let tools = client.call("tools/list", json!({})).await;
    check_tools(tools.result());
    assert!(
        tools.result().get("resultType").is_none(),
        "no 2026-07-28 fields in the handshake era"
    );
    let prompts = client.call("prompts/list", json!({})).await;
    check_prompts(prompts.result());
    let resources = client.call("resources/list", json!({})).await;
    let templates = client.call("resources/templates/list", json!({})).await;
    check_resources(resources.result(), templates.result());
}

#[tokio::test]
async fn handshake_initialize_declares_what_the_scenarios_use() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let init = client
        .call(
            "initialize",
            json!({"protocolVersion": HANDSHAKE, "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}),
        )
        .await;
    let result = init.result();
    assert_eq!(result["serverInfo"]["name"], SERVER_NAME);
    let capabilities = &result["capabilities"];
    assert_eq!(capabilities["tools"]["listChanged"], true);
    assert_eq!(capabilities["prompts"]["listChanged"], true);
    assert_eq!(
        capabilities["resources"],
        json!({"subscribe": true, "listChanged": true})
    );
    assert!(capabilities["logging"].is_object(), "logging-set-level");
    assert!(capabilities["completions"].is_object(), "completion-complete");
}

#[tokio::test]
async fn stateless_lists_every_name_with_cache_hints() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let tools = client.call("tools/list", modern(json!({}))).await;
    check_tools(tools.result());
    let prompts = client.call("prompts/list", modern(json!({}))).await;
    check_prompts(prompts.result());
    let resources = client.call("resources/list", modern(json!({}))).await;
    let templates = client.call("resources/templates/list", modern(json!({}))).await;
    check_resources(resources.result(), templates.result());
    // `caching` reads the first listed resource as its resources/read probe.
    let first = resources.result()["resources"][0]["uri"].clone();
    let read = client.call("resources/read", modern(json!({"uri": first}))).await;
    for result in [
        tools.result(),
        prompts.result(),
        resources.result(),
        templates.result(),
        read.result(),
    ] {
        assert_eq!(result["resultType"], "complete");
        assert!(
            result["ttlMs"].as_u64().is_some(),
            "ttlMs is a non-negative integer: {result}"
        );
        assert!(
            result["cacheScope"] == "public" || result["cacheScope"] == "private",
            "cacheScope: {result}"
        );
        assert_eq!(
            result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            SERVER_NAME
        );
    }
}

#[tokio::test]
async fn discover_declares_the_list_changed_capabilities() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let discover = client.call("server/discover", modern(json!({}))).await;
    let result = discover.result();
    assert_eq!(result["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(result["capabilities"]["tools"]["listChanged"], true);
    assert_eq!(result["capabilities"]["prompts"]["listChanged"], true);
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        SERVER_NAME
    );
    assert!(result["_meta"]["io.modelcontextprotocol/serverInfo"]["version"].is_string());
}

#[tokio::test]
async fn the_2020_12_schema_survives_tools_list_keyword_for_keyword() {
    let server = fixture();
    let expected: Value = serde_json::from_str(JSON_SCHEMA_2020_12_INPUT_SCHEMA).unwrap();
    let mut client = Client::handshake(&server, HANDSHAKE, json!({})).await;
    for params in [json!({}), modern(json!({}))] {
        let tools = client.call("tools/list", params).await;
        let tool = tools.result()["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == JSON_SCHEMA_2020_12_TOOL)
            .unwrap()
            .clone();
        assert_eq!(tool["inputSchema"], expected);
        assert_eq!(tool["inputSchema"]["$defs"]["address"]["$anchor"], "addressDef");
    }
    // The schema is enforced: the anyOf/else branches need phone or email.
    let call = client
        .call(
            "tools/call",
            json!({"name": JSON_SCHEMA_2020_12_TOOL, "arguments": {"name": "Ada", "email": "ada@example.com"}}),
        )
        .await;
    assert!(call.text().starts_with("JSON Schema 2020-12 tool called with:"));
    assert!(call.result().get("isError").is_none());
    let call = client
        .call("tools/call", json!({"name": JSON_SCHEMA_2020_12_TOOL, "arguments": {}}))
        .await;
    assert_eq!(
        call.result()["isError"],
        true,
        "missing phone/email is the tool's own failure"
    );
    let call = client
        .call(
            "tools/call",
            json!({"name": JSON_SCHEMA_2020_12_TOOL, "arguments": {"email": "a@b", "extra": 1}}),
        )
        .await;
    assert_eq!(call.result()["isError"], true, "additionalProperties: false");
}

#[tokio::test]
async fn the_header_param_tool_marks_its_argument_for_mcp_param_headers() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let tools = client.call("tools/list", modern(json!({}))).await;
    let tool = tools.result()["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == TEST_HEADER_PARAM)
        .unwrap()
        .clone();
    let region = &tool["inputSchema"]["properties"]["region"];
    assert_eq!(region["type"], "string");
    assert_eq!(region["x-mcp-header"], TEST_HEADER_PARAM_HEADER);
    assert_eq!(tool["inputSchema"]["required"], json!(["region"]));
    let call = client
        .call(
            "tools/call",
            modern(json!({"name": TEST_HEADER_PARAM, "arguments": {"region": "us-west1"}})),
        )
        .await;
    assert_eq!(call.text(), "region=us-west1");
}

/// `http-header-validation` calls the first listed tool with `arguments: {}`
/// and needs an answer that is not a JSON-RPC error.
#[tokio::test]
async fn the_first_listed_tool_answers_empty_arguments_without_a_protocol_error() {
    let server = fixture();
    let mut client = Client::connect(&server);
    let tools = client.call("tools/list", modern(json!({}))).await;
    let first = tools.result()["tools"][0]["name"].clone();
    let call = client
        .call("tools/call", modern(json!({"name": first, "arguments": {}})))
        .await;
    call.result();
}

/// `input-required-result-unsupported-methods`.
#[tokio::test]
async fn list_methods_never_answer_input_required() {
    let server = fixture();
    let mut client = Client::connect(&server);
    for method in [
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
    ] {
        let list = client.call(method, modern(json!({}))).await;
        assert_eq!(list.result()["resultType"], "complete", "{method}");
    }
}
