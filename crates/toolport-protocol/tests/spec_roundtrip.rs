//! Every JSON example of the 2026-07-28 specification decodes into our types and
//! encodes back to the same JSON, plus the handshake-era messages of
//! `basic/lifecycle` (2024-11-05 … 2025-11-25).

mod spec_examples;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolport_protocol::capabilities::{ClientCapabilities, ServerCapabilities};
use toolport_protocol::completion::{CompleteRequestParams, CompleteResult};
use toolport_protocol::content::{ContentBlock, ResourceContents, SamplingContent};
use toolport_protocol::elicitation::{ElicitRequestParams, ElicitResult};
use toolport_protocol::jsonrpc::{Frame, Message, decode, encode};
use toolport_protocol::lifecycle::{DiscoverResult, InitializeRequestParams, InitializeResult};
use toolport_protocol::logging::LoggingMessageNotificationParams;
use toolport_protocol::mrtr::{InputRequest, InputRequests, InputRequiredResult, InputResponses};
use toolport_protocol::progress::{CancelledNotificationParams, ProgressNotificationParams};
use toolport_protocol::prompts::{GetPromptRequestParams, GetPromptResult, ListPromptsResult};
use toolport_protocol::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams, ReadResourceResult, Resource,
    ResourceUpdatedNotificationParams,
};
use toolport_protocol::result::EmptyResult;
use toolport_protocol::roots::{ListRootsResult, Root};
use toolport_protocol::sampling::{CreateMessageRequestParams, CreateMessageResult, ModelPreferences, SamplingMessage};
use toolport_protocol::subscriptions::{SubscriptionsAcknowledgedNotificationParams, SubscriptionsListenRequestParams};
use toolport_protocol::tools::{CallToolRequestParams, CallToolResult, ListToolsResult, PaginatedRequestParams, Tool};
use toolport_protocol::{ErrorObject, ProtocolVersion};

/// Decodes `json` as `T`, encodes it again and insists on the same JSON.
fn round_trip<T: DeserializeOwned + Serialize>(what: &str, json: &str) {
    let original: Value = serde_json::from_str(json).unwrap();
    let typed: T = serde_json::from_value(original.clone())
        .unwrap_or_else(|e| panic!("{what}: does not decode as {}: {e}", std::any::type_name::<T>()));
    let again = serde_json::to_value(&typed).unwrap();
    assert_eq!(
        again,
        original,
        "{what}: changed on the way through {}",
        std::any::type_name::<T>()
    );
}

/// A whole JSON-RPC message: through the envelope decoder and encoder, and its
/// params or result through the matching typed struct.
fn message_round_trip(what: &str, json: &str) {
    let original: Value = serde_json::from_str(json).unwrap();
    let Ok(Frame::Single(message)) = decode(json.as_bytes()) else {
        panic!("{what}: not a message")
    };
    let again: Value = serde_json::from_slice(&encode(&message)).unwrap();
    assert_eq!(again, original, "{what}: changed on the way through the envelope");
    let (method, body) = match &message {
        Message::Request(r) => (r.method.as_str(), r.params.clone()),
        Message::Notification(n) => (n.method.as_str(), n.params.clone()),
        Message::Response(r) => ("", Some(serde_json::from_str(r.result.get()).unwrap())),
        Message::Error(e) => {
            round_trip::<ErrorObject>(what, &serde_json::to_string(&e.error).unwrap());
            return;
        }
    };
    let Some(body) = body else { return };
    let body = body.to_string();
    let inner = format!("{what} (body)");
    match (method, what.split('/').next().unwrap()) {
        ("tools/call", _) => round_trip::<CallToolRequestParams>(&inner, &body),
        ("prompts/get", _) => round_trip::<GetPromptRequestParams>(&inner, &body),
        ("completion/complete", _) => round_trip::<CompleteRequestParams>(&inner, &body),
        ("subscriptions/listen", _) => round_trip::<SubscriptionsListenRequestParams>(&inner, &body),
        ("tools/list" | "prompts/list" | "resources/list" | "resources/templates/list", _) => {
            round_trip::<PaginatedRequestParams>(&inner, &body)
        }
        ("notifications/progress", _) => round_trip::<ProgressNotificationParams>(&inner, &body),
        ("notifications/cancelled", _) => round_trip::<CancelledNotificationParams>(&inner, &body),
        ("notifications/message", _) => round_trip::<LoggingMessageNotificationParams>(&inner, &body),
        ("notifications/resources/updated", _) => round_trip::<ResourceUpdatedNotificationParams>(&inner, &body),
        ("notifications/subscriptions/acknowledged", _) => {
            round_trip::<SubscriptionsAcknowledgedNotificationParams>(&inner, &body)
        }
        ("", "CallToolResultResponse") => round_trip::<CallToolResult>(&inner, &body),
        ("", "CompleteResultResponse") => round_trip::<CompleteResult>(&inner, &body),
        ("", "DiscoverResultResponse") => round_trip::<DiscoverResult>(&inner, &body),
        ("", "GetPromptResultResponse") => round_trip::<GetPromptResult>(&inner, &body),
        ("", "ListPromptsResultResponse") => round_trip::<ListPromptsResult>(&inner, &body),
        ("", "ListResourceTemplatesResultResponse") => round_trip::<ListResourceTemplatesResult>(&inner, &body),
        ("", "ListResourcesResultResponse") => round_trip::<ListResourcesResult>(&inner, &body),
        ("", "ListToolsResultResponse") => round_trip::<ListToolsResult>(&inner, &body),
        ("", "ReadResourceResultResponse") => round_trip::<ReadResourceResult>(&inner, &body),
        ("", "SubscriptionsListenResultResponse") => round_trip::<EmptyResult>(&inner, &body),
        ("resources/read" | "resources/subscribe" | "resources/unsubscribe", _) => {
            round_trip::<ReadResourceRequestParams>(&inner, &body)
        }
        // Requests whose params are only `_meta`, and list-changed
        // notifications: there is no typed struct, so they must carry
        // nothing else (a new field would otherwise pass unchecked).
        (method, _) => {
            let params: Value = serde_json::from_str(&body).unwrap();
            let keys: Vec<&String> = params.as_object().map(|m| m.keys().collect()).unwrap_or_default();
            assert!(
                keys.iter().all(|k| *k == "_meta"),
                "{inner}: {method:?} has params {keys:?} but no type is mapped to check them"
            );
            round_trip::<Value>(&inner, &body)
        }
    }
}

/// The examples that are fragments of a JSON Schema inside an elicitation
/// form: we keep `requestedSchema` as plain JSON, so there is no type to test.
const SCHEMA_FRAGMENTS: &[&str] = &[
    "BooleanSchema",
    "NumberSchema",
    "StringSchema",
    "TitledMultiSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "UntitledMultiSelectEnumSchema",
    "UntitledSingleSelectEnumSchema",
];

#[test]
fn every_2026_07_28_example_round_trips() {
    let mut checked = 0;
    for (ty, name, json) in spec_examples::EXAMPLES {
        let what = format!("{ty}/{name}");
        let is_message = serde_json::from_str::<Value>(json).unwrap().get("jsonrpc").is_some();
        if is_message {
            message_round_trip(&what, json);
            checked += 1;
            continue;
        }
        match *ty {
            "AudioContent" | "ImageContent" | "TextContent" | "ResourceLink" | "EmbeddedResource" => {
                round_trip::<ContentBlock>(&what, json)
            }
            "ToolUseContent" | "ToolResultContent" => round_trip::<SamplingContent>(&what, json),
            "BlobResourceContents" | "TextResourceContents" => round_trip::<ResourceContents>(&what, json),
            "CallToolRequestParams" => round_trip::<CallToolRequestParams>(&what, json),
            "CallToolResult" => round_trip::<CallToolResult>(&what, json),
            "CancelledNotificationParams" => round_trip::<CancelledNotificationParams>(&what, json),
            "ClientCapabilities" => round_trip::<ClientCapabilities>(&what, json),
            "CompleteRequestParams" => round_trip::<CompleteRequestParams>(&what, json),
            "CompleteResult" => round_trip::<CompleteResult>(&what, json),
            "CreateMessageRequest" | "ElicitRequest" => round_trip::<InputRequest>(&what, json),
            "ListRootsRequest" => {
                // The example still carries a JSON-RPC `id`, which a 2026-07-28
                // ListRootsRequest (an embedded input request) no longer has.
                let mut v: Value = serde_json::from_str(json).unwrap();
                v.as_object_mut().unwrap().remove("id");
                round_trip::<InputRequest>(&what, &v.to_string())
            }
            "CreateMessageRequestParams" => round_trip::<CreateMessageRequestParams>(&what, json),
            "CreateMessageResult" => round_trip::<CreateMessageResult>(&what, json),
            "DiscoverResult" => round_trip::<DiscoverResult>(&what, json),
            "ElicitRequestFormParams" | "ElicitRequestURLParams" => round_trip::<ElicitRequestParams>(&what, json),
            "ElicitResult" => round_trip::<ElicitResult>(&what, json),
            "GetPromptRequestParams" => round_trip::<GetPromptRequestParams>(&what, json),
            "GetPromptResult" => round_trip::<GetPromptResult>(&what, json),
            "InputRequests" => round_trip::<InputRequests>(&what, json),
            "InputResponses" => round_trip::<InputResponses>(&what, json),
            "InputRequiredResult" => round_trip::<InputRequiredResult>(&what, json),
            "InternalError" | "InvalidParamsError" | "MethodNotFoundError" | "ParseError" => {
                round_trip::<ErrorObject>(&what, json)
            }
            "ListPromptsResult" => round_trip::<ListPromptsResult>(&what, json),
            "ListResourceTemplatesResult" => round_trip::<ListResourceTemplatesResult>(&what, json),
            "ListResourcesResult" => round_trip::<ListResourcesResult>(&what, json),
            "ListRootsResult" => round_trip::<ListRootsResult>(&what, json),
            "ListToolsResult" => round_trip::<ListToolsResult>(&what, json),
            "LoggingMessageNotificationParams" => round_trip::<LoggingMessageNotificationParams>(&what, json),
            "ModelPreferences" => round_trip::<ModelPreferences>(&what, json),
            "PaginatedRequestParams" => round_trip::<PaginatedRequestParams>(&what, json),
            "ProgressNotificationParams" => round_trip::<ProgressNotificationParams>(&what, json),
            "ReadResourceResult" => round_trip::<ReadResourceResult>(&what, json),
            "Resource" => round_trip::<Resource>(&what, json),
            "ResourceUpdatedNotificationParams" => round_trip::<ResourceUpdatedNotificationParams>(&what, json),
            "Root" => round_trip::<Root>(&what, json),
            "SamplingMessage" => round_trip::<SamplingMessage>(&what, json),
            "ServerCapabilities" => round_trip::<ServerCapabilities>(&what, json),
            "SubscriptionsListenResult" => round_trip::<EmptyResult>(&what, json),
            "Tool" => round_trip::<Tool>(&what, json),
            t if SCHEMA_FRAGMENTS.contains(&t) => continue,
            other => panic!("{what}: no type is mapped to spec example type {other}"),
        }
        checked += 1;
    }
    assert!(checked >= 120, "only {checked} examples checked");
}

#[test]
fn handshake_lifecycle_round_trips() {
    // basic/lifecycle#initialization (2025-11-25).
    let init = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"roots": {"listChanged": true}, "sampling": {}, "elicitation": {"form": {}, "url": {}}, "tasks": {"requests": {"elicitation": {"create": {}}}}},
        "clientInfo": {"name": "ExampleClient", "title": "Example Client Display Name", "version": "1.0.0", "description": "An example MCP client application", "icons": [{"src": "https://example.com/icon.png", "mimeType": "image/png", "sizes": ["48x48"]}], "websiteUrl": "https://example.com"}
    });
    round_trip::<InitializeRequestParams>("initialize params", &init.to_string());
    let result = json!({
        "protocolVersion": "2025-11-25",
        "capabilities": {"logging": {}, "prompts": {"listChanged": true}, "resources": {"subscribe": true, "listChanged": true}, "tools": {"listChanged": true}, "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}},
        "serverInfo": {"name": "ExampleServer", "title": "Example Server Display Name", "version": "1.0.0"},
        "instructions": "Optional instructions for the client"
    });
    round_trip::<InitializeResult>("initialize result", &result.to_string());
    // 2024-11-05 had no title, icons or description; the same types read it.
    let old = json!({"protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "c", "version": "0"}});
    round_trip::<InitializeRequestParams>("2024-11-05 initialize", &old.to_string());
    let params: InitializeRequestParams = serde_json::from_value(old).unwrap();
    assert_eq!(
        params.protocol_version.parse::<ProtocolVersion>().unwrap(),
        ProtocolVersion::V2024_11_05
    );
}

#[test]
fn handshake_era_results_without_result_type_decode() {
    // Handshake-era results have no `resultType`, no cache hints, and a
    // structuredContent object; the same types read them.
    let r: CallToolResult = serde_json::from_value(json!({
        "content": [{"type": "text", "text": "{\"temperature\": 22.5}"}],
        "structuredContent": {"temperature": 22.5}
    }))
    .unwrap();
    assert_eq!(r.result_type, None);
    assert_eq!(r.structured_content, Some(json!({"temperature": 22.5})));
    let l: ListToolsResult = serde_json::from_value(json!({"tools": []})).unwrap();
    assert_eq!((l.ttl_ms, l.cache_scope), (None, None));
}
