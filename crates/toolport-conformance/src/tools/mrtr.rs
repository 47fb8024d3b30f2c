//! The `input-required-result-*` tools (SEP-2322). Written like any tool that
//! asks the client for input: in the handshake era the questions are requests
//! to the client; in 2026-07-28 the framework answers with an
//! `InputRequiredResult` and runs the handler again on the retry.

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use toolport_protocol::elicitation::{ElicitRequestParams, ElicitResult};
use toolport_protocol::mrtr::{InputRequest, InputRequests, RootsParams};
use toolport_protocol::roots::ListRootsResult;
use toolport_protocol::sampling::{CreateMessageRequestParams, CreateMessageResult};
use toolport_protocol::{Era, ErrorObject};
use toolport_server::{NoArgs, RequestContext, ToolEntry, ToolError, tool};

use crate::answers::{ask_for, describe, entered, sampled_text};
use crate::data::object;
use crate::names::*;

pub(super) fn all() -> Vec<ToolEntry> {
    vec![
        elicitation(),
        sampling(),
        list_roots(),
        request_state(),
        multiple_inputs(),
        multi_round(),
        tampered_state(),
        capabilities(),
    ]
}

/// The answer under `key`, as the type that kind of question gets back.
fn answer<T: DeserializeOwned>(answers: &BTreeMap<String, Value>, key: &str) -> Result<T, ToolError> {
    let value = answers.get(key).cloned().unwrap_or(Value::Null);
    serde_json::from_value(value).map_err(|e| {
        ToolError::Protocol(ErrorObject::invalid_params(format!(
            "inputResponses[{key:?}] is not the expected answer: {e}"
        )))
    })
}

fn elicitation() -> ToolEntry {
    tool(TEST_IRR_ELICITATION)
        .description("MRTR: asks the user's name (elicitation under the key user_name), then greets them")
        .handler(|cx: RequestContext, _: NoArgs| async move {
            let answer = cx.elicit("user_name", ask_for("What is your name?", "name")).await?;
            let name = entered(&answer, "name").unwrap_or_else(|| "stranger".to_owned());
            Ok::<_, ToolError>(format!("Hello, {name}!"))
        })
}

fn sampling() -> ToolEntry {
    tool(TEST_IRR_SAMPLING)
        .description("MRTR: asks the client's model a question (sampling under the key capital_question)")
        .handler(|cx: RequestContext, _: NoArgs| async move {
            let request = CreateMessageRequestParams::user_text("What is the capital of France?", 100);
            let result = cx.sample("capital_question", request).await?;
            Ok::<_, ToolError>(format!("Sampling result: {}", sampled_text(&result)))
        })
}

fn list_roots() -> ToolEntry {
    tool(TEST_IRR_LIST_ROOTS)
        .description("MRTR: asks for the client's roots (roots/list under the key client_roots)")
        .handler(|cx: RequestContext, _: NoArgs| async move {
            let roots = cx.roots("client_roots").await?;
            let uris: Vec<&str> = roots.roots.iter().map(|r| r.uri.as_str()).collect();
            Ok::<_, ToolError>(format!("Found {} root(s): {}", uris.len(), uris.join(", ")))
        })
}

/// What `test_input_required_result_request_state` keeps in `requestState`.
const STATE_KIND: &str = "request-state";

fn request_state() -> ToolEntry {
    tool(TEST_IRR_REQUEST_STATE)
        .description(
            "MRTR: asks for confirmation (key confirm) and carries its own state in requestState, \
             which it checks on the retry",
        )
        .handler(|cx: RequestContext, _: NoArgs| async move {
            let question = ElicitRequestParams::form(
                "Please confirm",
                object(json!({
                    "type": "object",
                    "properties": { "ok": { "type": "boolean" } },
                    "required": ["ok"]
                })),
            );
            let answer = match cx.elicit("confirm", question).await {
                Err(ToolError::InputRequired(mut required)) => {
                    required.state = Some(json!({ "kind": STATE_KIND }));
                    return Err(ToolError::InputRequired(required));
                }
                other => other?,
            };
            if cx.protocol_version().era() == Era::Stateless {
                let state: Option<Value> = cx.request_state();
                if state.as_ref().and_then(|s| s.get("kind")) != Some(&json!(STATE_KIND)) {
                    return Err(ToolError::Protocol(ErrorObject::invalid_params(
                        "requestState is missing or is not this tool's state",
                    )));
                }
            }
            let confirmed = answer
                .content
                .as_ref()
                .and_then(|c| c.get("ok"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            Ok(format!("state-ok: requestState validated (confirmed: {confirmed})"))
        })
}

fn multiple_inputs() -> ToolEntry {
    tool(TEST_IRR_MULTIPLE_INPUTS)
        .description(
            "MRTR: asks for three inputs at once: the user's name (user_name), a greeting from the \
             model (greeting) and the client's roots (client_roots)",
        )
        .handler(|cx: RequestContext, _: NoArgs| async move {
            let requests = InputRequests::from([
                (
                    "user_name".to_owned(),
                    InputRequest::Elicit(ask_for("What is your name?", "name")),
                ),
                (
                    "greeting".to_owned(),
                    InputRequest::Sample(CreateMessageRequestParams::user_text("Generate a greeting", 50)),
                ),
                (
                    "client_roots".to_owned(),
                    InputRequest::ListRoots(Some(RootsParams::default())),
                ),
            ]);
            let answers = cx.input(requests).await?;
            let user: ElicitResult = answer(&answers, "user_name")?;
            let greeting: CreateMessageResult = answer(&answers, "greeting")?;
            let roots: ListRootsResult = answer(&answers, "client_roots")?;
            Ok::<_, ToolError>(format!(
                "Name: {}; Greeting: {}; Roots: {}",
                entered(&user, "name").unwrap_or_else(|| "unknown".to_owned()),
                sampled_text(&greeting),
                roots.roots.len()
            ))
        })
}

fn multi_round() -> ToolEntry {
    tool(TEST_IRR_MULTI_ROUND)
        .description("MRTR: two rounds of questions: the user's name (step1), then their favorite color (step2)")
        .handler(|cx: RequestContext, _: NoArgs| async move {
            let first = cx
                .elicit("step1", ask_for("Step 1: What is your name?", "name"))
                .await?;
            let name = entered(&first, "name").unwrap_or_else(|| "friend".to_owned());
            let second = cx
                .elicit("step2", ask_for("Step 2: What is your favorite color?", "color"))
                .await?;
            let color = entered(&second, "color").unwrap_or_else(|| "no color".to_owned());
            Ok::<_, ToolError>(format!("Multi-round complete for {name} who likes {color}"))
        })
}

fn tampered_state() -> ToolEntry {
    tool(TEST_IRR_TAMPERED_STATE)
        .description("MRTR: asks for confirmation (key confirm); a retry with a tampered requestState is refused")
        .handler(|cx: RequestContext, _: NoArgs| async move {
            let question = ElicitRequestParams::form(
                "Please confirm",
                object(json!({
                    "type": "object",
                    "properties": { "ok": { "type": "boolean" } },
                    "required": ["ok"]
                })),
            );
            let answer = cx.elicit("confirm", question).await?;
            Ok::<_, ToolError>(format!("integrity-ok: state verified ({})", describe(&answer)))
        })
}

fn capabilities() -> ToolEntry {
    tool(TEST_IRR_CAPABILITIES)
        .description(
            "MRTR: asks only for what the client declared: elicitation (elicit_input) and/or sampling \
             (sample_input)",
        )
        .handler(|cx: RequestContext, _: NoArgs| async move {
            let declared = cx.client_capabilities();
            let mut requests = InputRequests::new();
            if declared.supports_form_elicitation() {
                requests.insert(
                    "elicit_input".to_owned(),
                    InputRequest::Elicit(ask_for("Elicitation input", "value")),
                );
            }
            if declared.supports_sampling() {
                requests.insert(
                    "sample_input".to_owned(),
                    InputRequest::Sample(CreateMessageRequestParams::user_text("Sample request", 50)),
                );
            }
            if requests.is_empty() {
                return Ok("No supported capabilities declared".to_owned());
            }
            let answers = cx.input(requests).await?;
            let keys: Vec<&str> = answers.keys().map(String::as_str).collect();
            Ok::<_, ToolError>(format!("capabilities-ok: received {}", keys.join(",")))
        })
}
