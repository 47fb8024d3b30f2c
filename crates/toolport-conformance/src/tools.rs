//! The fixture's tools.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use toolport_protocol::content::{ContentBlock, EmbeddedResource, ResourceContents};
use toolport_protocol::elicitation::ElicitRequestParams;
use toolport_protocol::logging::LoggingLevel;
use toolport_protocol::sampling::CreateMessageRequestParams;
use toolport_protocol::tools::{CallToolResult, Tool};
use toolport_server::{NoArgs, RequestContext, ToolEntry, ToolError, tool};

use crate::answers::{describe, sampled_text};
use crate::data::{self, TEST_AUDIO_WAV_BASE64, TEST_IMAGE_PNG_BASE64, object};
use crate::names::*;
use crate::{FixtureOptions, ServerSlot, prompts};

mod mrtr;
mod tasks;

/// The `logger` of the fixture's log messages.
const LOGGER: &str = "conformance-test-server";

/// Every tool of the fixture.
pub(crate) fn all(options: &FixtureOptions, slot: &ServerSlot) -> Vec<ToolEntry> {
    let mut tools = vec![
        simple_text(),
        image_content(),
        audio_content(),
        embedded_resource(),
        multiple_content_types(),
        error_handling(),
        with_logging(options.step_delay),
        with_progress(options.step_delay),
        reconnection(options),
        sampling(),
        elicitation(),
        elicitation_sep1034_defaults(),
        elicitation_sep1330_enums(),
        json_schema_2020_12(),
        header_param(),
        missing_capability(),
        streaming_elicitation(),
        logging_tool(),
        trigger_tool_change(slot.clone()),
        trigger_prompt_change(slot.clone()),
    ];
    tools.extend(mrtr::all());
    tools.extend(tasks::all());
    tools
}

async fn pause(delay: Duration) {
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

fn simple_text() -> ToolEntry {
    tool(TEST_SIMPLE_TEXT)
        .description("Tests simple text content response")
        .read_only()
        .handler(|_: NoArgs| async { "This is a simple text response for testing." })
}

fn image_content() -> ToolEntry {
    tool(TEST_IMAGE_CONTENT)
        .description("Tests image content response (a 1x1 PNG)")
        .read_only()
        .handler(|_: NoArgs| async { ContentBlock::image(TEST_IMAGE_PNG_BASE64, "image/png") })
}

fn audio_content() -> ToolEntry {
    tool(TEST_AUDIO_CONTENT)
        .description("Tests audio content response (a short WAV)")
        .read_only()
        .handler(|_: NoArgs| async { ContentBlock::audio(TEST_AUDIO_WAV_BASE64, "audio/wav") })
}

fn embedded(uri: &str, mime_type: &str, text: impl Into<String>) -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource {
        resource: ResourceContents::text(uri, Some(mime_type), text),
        annotations: None,
        meta: None,
    })
}

fn embedded_resource() -> ToolEntry {
    tool(TEST_EMBEDDED_RESOURCE)
        .description("Tests embedded resource content response")
        .read_only()
        .handler(|_: NoArgs| async {
            embedded(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            )
        })
}

fn multiple_content_types() -> ToolEntry {
    tool(TEST_MULTIPLE_CONTENT_TYPES)
        .description("Tests response with multiple content types (text, image, resource)")
        .read_only()
        .handler(|_: NoArgs| async {
            vec![
                ContentBlock::text("Multiple content types test:"),
                ContentBlock::image(TEST_IMAGE_PNG_BASE64, "image/png"),
                embedded(
                    "test://mixed-content-resource",
                    "application/json",
                    json!({"test": "data", "value": 123}).to_string(),
                ),
            ]
        })
}

fn error_handling() -> ToolEntry {
    tool(TEST_ERROR_HANDLING)
        .description("Tests error response handling: always fails with an isError result")
        .handler(|_: NoArgs| async {
            Err::<String, _>(ToolError::failed(
                "This tool intentionally returns an error for testing",
            ))
        })
}

fn with_logging(delay: Duration) -> ToolEntry {
    tool(TEST_TOOL_WITH_LOGGING)
        .description("Tests tool that emits three info log messages during execution")
        .handler(move |cx: RequestContext, _: NoArgs| async move {
            let steps = [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed",
            ];
            for (i, step) in steps.into_iter().enumerate() {
                if i > 0 {
                    pause(delay).await;
                }
                cx.log(LoggingLevel::Info, Some(LOGGER), step).await;
            }
            "Tool with logging executed successfully"
        })
}

fn with_progress(delay: Duration) -> ToolEntry {
    tool(TEST_TOOL_WITH_PROGRESS)
        .description("Tests tool that reports progress 0, 50 and 100 of 100 when given a progressToken")
        .handler(move |cx: RequestContext, _: NoArgs| async move {
            for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if i > 0 {
                    pause(delay).await;
                }
                let message = format!("Completed step {progress} of 100");
                cx.progress(progress, Some(100.0), Some(message)).await;
            }
            "Progress reported: 0, 50 and 100 of 100"
        })
}

fn reconnection(options: &FixtureOptions) -> ToolEntry {
    let closer = options.stream_closer.clone();
    let delay = options.reconnection_delay;
    tool(TEST_RECONNECTION)
        .description(
            "Tests SSE stream disconnection and client reconnection (SEP-1699): the server closes the \
             stream mid-call and sends the result after the client reconnects",
        )
        .handler(move |cx: RequestContext, _: NoArgs| {
            let closer = closer.clone();
            async move {
                let closed = closer.as_ref().is_some_and(|close| close(&cx));
                pause(delay).await;
                let how = if closed {
                    "the stream was closed mid-call"
                } else {
                    "the transport kept the stream open"
                };
                format!(
                    "Reconnection test completed successfully ({how}). If you received this, the client \
                     properly reconnected after stream closure."
                )
            }
        })
}

#[derive(Deserialize, JsonSchema)]
struct SamplingArgs {
    /// The prompt to send to the LLM.
    prompt: String,
}

fn sampling() -> ToolEntry {
    tool(TEST_SAMPLING)
        .description("Tests server-initiated sampling (LLM completion request)")
        .handler(|cx: RequestContext, args: SamplingArgs| async move {
            let request = CreateMessageRequestParams::user_text(args.prompt, 100);
            let result = cx.sample("llm_response", request).await?;
            Ok::<_, ToolError>(format!("LLM response: {}", sampled_text(&result)))
        })
}

#[derive(Deserialize, JsonSchema)]
struct ElicitationArgs {
    /// The message to show the user.
    message: String,
}

fn elicitation() -> ToolEntry {
    tool(TEST_ELICITATION)
        .description("Tests server-initiated elicitation (user input request)")
        .handler(|cx: RequestContext, args: ElicitationArgs| async move {
            let schema = object(json!({
                "type": "object",
                "properties": {
                    "username": { "type": "string", "description": "User's response" },
                    "email": { "type": "string", "description": "User's email address" }
                },
                "required": ["username", "email"]
            }));
            let answer = cx
                .elicit("user_response", ElicitRequestParams::form(args.message, schema))
                .await?;
            Ok::<_, ToolError>(format!("User response: {}", describe(&answer)))
        })
}

fn elicitation_sep1034_defaults() -> ToolEntry {
    tool(TEST_ELICITATION_SEP1034_DEFAULTS)
        .description("Tests elicitation with default values for every primitive type (SEP-1034)")
        .handler(|cx: RequestContext, _: NoArgs| async move {
            let schema = object(json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "description": "User name", "default": "John Doe" },
                    "age": { "type": "integer", "description": "User age", "default": 30 },
                    "score": { "type": "number", "description": "User score", "default": 95.5 },
                    "status": {
                        "type": "string",
                        "description": "User status",
                        "enum": ["active", "inactive", "pending"],
                        "default": "active"
                    },
                    "verified": { "type": "boolean", "description": "Verification status", "default": true }
                },
                "required": []
            }));
            let request = ElicitRequestParams::form("Please review and update the form fields with defaults", schema);
            let answer = cx.elicit("defaults", request).await?;
            Ok::<_, ToolError>(format!("Elicitation completed: {}", describe(&answer)))
        })
}

fn elicitation_sep1330_enums() -> ToolEntry {
    tool(TEST_ELICITATION_SEP1330_ENUMS)
        .description("Tests elicitation with the five enum schema shapes (SEP-1330)")
        .handler(|cx: RequestContext, _: NoArgs| async move {
            let schema = object(json!({
                "type": "object",
                "properties": {
                    "untitledSingle": {
                        "type": "string",
                        "description": "Select one option",
                        "enum": ["option1", "option2", "option3"]
                    },
                    "titledSingle": {
                        "type": "string",
                        "description": "Select one option with titles",
                        "oneOf": [
                            { "const": "value1", "title": "First Option" },
                            { "const": "value2", "title": "Second Option" },
                            { "const": "value3", "title": "Third Option" }
                        ]
                    },
                    "legacyEnum": {
                        "type": "string",
                        "description": "Select one option (legacy enumNames)",
                        "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"]
                    },
                    "untitledMulti": {
                        "type": "array",
                        "description": "Select several options",
                        "minItems": 1,
                        "maxItems": 3,
                        "items": { "type": "string", "enum": ["option1", "option2", "option3"] }
                    },
                    "titledMulti": {
                        "type": "array",
                        "description": "Select several options with titles",
                        "minItems": 1,
                        "maxItems": 3,
                        "items": {
                            "anyOf": [
                                { "const": "value1", "title": "First Choice" },
                                { "const": "value2", "title": "Second Choice" },
                                { "const": "value3", "title": "Third Choice" }
                            ]
                        }
                    }
                },
                "required": []
            }));
            let request = ElicitRequestParams::form("Please select options from the enum fields", schema);
            let answer = cx.elicit("enums", request).await?;
            Ok::<_, ToolError>(format!("Elicitation completed: {}", describe(&answer)))
        })
}

fn json_schema_2020_12() -> ToolEntry {
    let mut definition = Tool::new(JSON_SCHEMA_2020_12_TOOL, data::json_schema_2020_12_input_schema());
    definition.description =
        Some("Tool with JSON Schema 2020-12 features for conformance testing (SEP-1613, SEP-2106)".into());
    tool(JSON_SCHEMA_2020_12_TOOL).raw(definition, |_cx, arguments| async move {
        Ok(CallToolResult::text(format!(
            "JSON Schema 2020-12 tool called with: {arguments}"
        )))
    })
}

fn header_param() -> ToolEntry {
    let schema = object(json!({
        "type": "object",
        "properties": {
            "region": {
                "type": "string",
                "description": "Where to run; mirrored into the Mcp-Param-Region HTTP header",
                "x-mcp-header": TEST_HEADER_PARAM_HEADER
            }
        },
        "required": ["region"]
    }));
    let mut definition = Tool::new(TEST_HEADER_PARAM, schema);
    definition.description =
        Some("Echoes its region argument, which clients mirror into an Mcp-Param-Region header (SEP-2243)".into());
    tool(TEST_HEADER_PARAM).raw(definition, |_cx, arguments| async move {
        let region = arguments.get("region").and_then(Value::as_str).unwrap_or_default();
        Ok(CallToolResult::text(format!("region={region}")))
    })
}

fn missing_capability() -> ToolEntry {
    tool(TEST_MISSING_CAPABILITY)
        .description(
            "Needs the client's sampling capability: a 2026-07-28 request without it fails with \
             -32021 MissingRequiredClientCapability",
        )
        .handler(|cx: RequestContext, _: NoArgs| async move {
            let request = CreateMessageRequestParams::user_text("Reply with OK.", 10);
            let result = cx.sample("capability_probe", request).await?;
            Ok::<_, ToolError>(format!("Success: the model said {}", sampled_text(&result)))
        })
}

fn streaming_elicitation() -> ToolEntry {
    tool(TEST_STREAMING_ELICITATION)
        .description(
            "Reports progress, then asks the user to confirm; its response stream carries only \
             notifications and the result, never a request (2026-07-28)",
        )
        .handler(|cx: RequestContext, _: NoArgs| async move {
            cx.progress(50.0, Some(100.0), Some("waiting for confirmation".into()))
                .await;
            let schema = object(json!({
                "type": "object",
                "properties": { "confirm": { "type": "boolean", "description": "Continue?" } },
                "required": ["confirm"]
            }));
            let answer = cx
                .elicit(
                    "stream_confirm",
                    ElicitRequestParams::form("Continue the streamed operation?", schema),
                )
                .await?;
            Ok::<_, ToolError>(format!("Streaming complete: {}", describe(&answer)))
        })
}

fn logging_tool() -> ToolEntry {
    tool(TEST_LOGGING_TOOL)
        .description("Logs one info message; a 2026-07-28 request without _meta logLevel must receive none")
        .handler(|cx: RequestContext, _: NoArgs| async move {
            cx.log(LoggingLevel::Info, Some(LOGGER), "Diagnostic trace logging activated")
                .await;
            "Logging evaluated"
        })
}

/// The tool `test_trigger_tool_change` adds and removes.
fn dynamic_tool() -> ToolEntry {
    tool(TEST_DYNAMIC_TOOL)
        .description("Comes and goes with each call of test_trigger_tool_change")
        .read_only()
        .handler(|_: NoArgs| async { "This tool was added at run time." })
}

fn trigger_tool_change(slot: ServerSlot) -> ToolEntry {
    tool(TEST_TRIGGER_TOOL_CHANGE)
        .description(
            "Changes the tool list (adds or removes test_dynamic_tool), so list_changed \
             notifications go out",
        )
        .handler(move |_: NoArgs| {
            let slot = slot.clone();
            async move {
                let server = slot
                    .get()
                    .ok_or_else(|| ToolError::failed("the fixture server is not built yet"))?;
                let change = if server.tools().remove(TEST_DYNAMIC_TOOL) {
                    "removed"
                } else {
                    server.tools().insert(dynamic_tool())?;
                    "added"
                };
                Ok::<_, ToolError>(format!("Mutation triggered: {TEST_DYNAMIC_TOOL} {change}"))
            }
        })
}

fn trigger_prompt_change(slot: ServerSlot) -> ToolEntry {
    tool(TEST_TRIGGER_PROMPT_CHANGE)
        .description(
            "Changes the prompt list (adds or removes test_dynamic_prompt), so list_changed \
             notifications go out",
        )
        .handler(move |_: NoArgs| {
            let slot = slot.clone();
            async move {
                let server = slot
                    .get()
                    .ok_or_else(|| ToolError::failed("the fixture server is not built yet"))?;
                let change = if server.prompts().remove(TEST_DYNAMIC_PROMPT) {
                    "removed"
                } else {
                    server.prompts().insert(prompts::dynamic_prompt())?;
                    "added"
                };
                Ok::<_, ToolError>(format!("Mutation triggered: {TEST_DYNAMIC_PROMPT} {change}"))
            }
        })
}
