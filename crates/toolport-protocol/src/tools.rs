//! Tools (`server/tools`): `tools/list`, `tools/call`, and the tool definition.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::capabilities::Icon;
use crate::content::ContentBlock;
use crate::meta::Meta;
use crate::mrtr::InputResponses;
use crate::result::{CacheScope, ResultType, mcp_result};

/// Method of `tools/list`.
pub const LIST: &str = "tools/list";
/// Method of `tools/call`.
pub const CALL: &str = "tools/call";
/// Notification sent when the tool list changes.
pub const LIST_CHANGED: &str = "notifications/tools/list_changed";

/// A tool definition as `tools/list` returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Unique name: 1–128 characters of `[A-Za-z0-9_.-]` (2025-11-25 guidance).
    pub name: String,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What it does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema (2020-12 by default) of the arguments; always `type: object`.
    pub input_schema: Map<String, Value>,
    /// JSON Schema of `structuredContent` (2025-06-18 on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<Map<String, Value>>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Task support (2025-11-25, experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execution: Option<Value>,
    /// Icons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Tool {
    /// A tool with a name and an input schema.
    pub fn new(name: impl Into<String>, input_schema: Map<String, Value>) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema,
            output_schema: None,
            annotations: None,
            execution: None,
            icons: None,
            meta: None,
        }
    }
}

/// Hints about a tool's behaviour. Untrusted unless the server is trusted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// It changes nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// It may destroy data.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Calling it twice with the same arguments does nothing more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// It reaches outside the server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// Params of a paginated list request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PaginatedRequestParams {
    /// Where to continue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `tools/list` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// The tools.
    pub tools: Vec<Tool>,
    /// Present when there are more.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// `resultType` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Cache lifetime in ms (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Cache sharing (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `tools/call` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// The tool.
    pub name: String,
    /// Its arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<Map<String, Value>>,
    /// Answers to a previous `InputRequiredResult` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The `requestState` of a previous `InputRequiredResult`, echoed (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Task augmentation (2025-11-25, experimental).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<Value>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// `tools/call` result. A tool's own failure is a result with `isError: true`,
/// never a JSON-RPC error, so the model can read it and try again.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Unstructured content.
    pub content: Vec<ContentBlock>,
    /// Structured content matching the tool's `outputSchema`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// `resultType` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CallToolResult {
    /// A successful result with the given content.
    pub fn success(content: Vec<ContentBlock>) -> Self {
        CallToolResult {
            content,
            ..Default::default()
        }
    }
    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }
    /// A failed result with a message the model can act on.
    pub fn error(message: impl Into<String>) -> Self {
        CallToolResult {
            content: vec![ContentBlock::text(message)],
            is_error: Some(true),
            ..Default::default()
        }
    }
}

mcp_result!(CallToolResult);
mcp_result!(cacheable: ListToolsResult);
