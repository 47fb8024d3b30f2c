//! Every MCP tool of a server as an A2A skill (`toolport serve --a2a`).
//!
//! A message with a data part `{"tool": NAME, "arguments": {...}}` runs the
//! tool as a 2026-07-28 `tools/call` through the server's own admission and
//! policy layers (the caller's principal and scopes, rate limits, gates,
//! deadlines, audit), so A2A gets exactly what MCP gets:
//! - progress notifications become `TASK_STATE_WORKING` status updates;
//! - an `InputRequiredResult` (the tool asks the user) becomes
//!   `TASK_STATE_INPUT_REQUIRED`, its questions a data part
//!   `{"inputRequests": {...}}` of the status message; the client's next
//!   message answers with a data part `{"inputResponses": {...}}` and the
//!   call is retried with them and its `requestState`;
//! - the result becomes an artifact: text content as text parts, structured
//!   content as a data part, other content as data parts of its own;
//! - a tool error (`isError`, or a refused call) fails the task.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use toolport_protocol::jsonrpc::{Notification, Request, RequestId};
use toolport_protocol::meta::keys;
use toolport_rpc::{PeerChannel, RpcError, peer::BoxFuture as RpcFuture};
use toolport_server::{CallContext, Server, Session, TransportFacts};

use crate::agent::{Agent, AgentError, BoxFuture, TaskContext};
use crate::types::{AgentSkill, Artifact, Message, Part};

/// The MCP protocol version tools are called in: the stateless one, where
/// questions to the user come back as results instead of requests.
const CALL_VERSION: &str = "2026-07-28";

/// The skill of a task whose message named no tool.
const NO_TOOL: &str = "(no tool)";

/// A server's tools as skills.
#[derive(Debug, Clone)]
pub struct ToolSkills {
    server: Server,
    ids: Arc<AtomicI64>,
}

impl ToolSkills {
    /// The tools of `server`.
    pub fn new(server: Server) -> ToolSkills {
        ToolSkills {
            server,
            ids: Arc::new(AtomicI64::new(1)),
        }
    }
}

/// What a paused call needs to go on, kept with the task.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Paused {
    tool: String,
    arguments: Option<Map<String, Value>>,
    request_state: Option<String>,
}

/// The tool call a message asks for.
#[derive(Debug, Deserialize)]
struct ToolCall {
    tool: String,
    #[serde(default)]
    arguments: Option<Map<String, Value>>,
}

impl Agent for ToolSkills {
    fn skills(&self) -> Vec<AgentSkill> {
        let mut tools = self.server.tools().all();
        tools.sort_by(|a, b| a.definition().name.cmp(&b.definition().name));
        tools
            .iter()
            .map(|entry| {
                let tool = entry.definition();
                AgentSkill {
                    id: tool.name.clone(),
                    name: tool.title.clone().unwrap_or_else(|| tool.name.clone()),
                    description: tool
                        .description
                        .clone()
                        .unwrap_or_else(|| format!("The MCP tool {}.", tool.name)),
                    tags: vec!["mcp-tool".into()],
                    examples: vec![json!({"tool": tool.name, "arguments": {}}).to_string()],
                    input_modes: vec!["application/json".into()],
                    output_modes: vec!["text/plain".into(), "application/json".into()],
                }
            })
            .collect()
    }

    fn skill_of(&self, message: &Message) -> String {
        let named = message.data().and_then(|d| d.get("tool")).and_then(Value::as_str);
        named.filter(|n| !n.is_empty()).unwrap_or(NO_TOOL).to_owned()
    }

    fn run(&self, context: TaskContext) -> BoxFuture<'_, Result<(), AgentError>> {
        Box::pin(async move {
            let (call, inputs) = match context.state::<Paused>() {
                Some(paused) => {
                    let answers = context.message().data().and_then(|d| d.get("inputResponses")).cloned();
                    let Some(Value::Object(answers)) = answers else {
                        // Still waiting: ask again, keeping what the call needs.
                        let question = question_message(
                            "Answer with a data part {\"inputResponses\": {...}}, one answer per input request.",
                            None,
                        );
                        return context.ask_input(question, serde_json::to_value(&paused).ok()).await;
                    };
                    (paused, Some(answers))
                }
                None => match context
                    .message()
                    .data()
                    .cloned()
                    .map(serde_json::from_value::<ToolCall>)
                {
                    Some(Ok(call)) if self.server.tools().get(&call.tool).is_some() => (
                        Paused {
                            tool: call.tool,
                            arguments: call.arguments,
                            request_state: None,
                        },
                        None,
                    ),
                    Some(Ok(call)) => {
                        return context
                            .reject(format!(
                                "no tool named {:?}; the card's skills are the tools",
                                call.tool
                            ))
                            .await;
                    }
                    _ => {
                        return context
                            .reject("send a data part {\"tool\": NAME, \"arguments\": {...}} naming one of the card's skills")
                            .await;
                    }
                },
            };
            self.call(&context, call, inputs).await
        })
    }
}

impl ToolSkills {
    async fn call(
        &self,
        context: &TaskContext,
        call: Paused,
        inputs: Option<Map<String, Value>>,
    ) -> Result<(), AgentError> {
        let mut params = json!({
            "name": call.tool,
            "_meta": {
                keys::PROTOCOL_VERSION: CALL_VERSION,
                keys::CLIENT_CAPABILITIES: {"elicitation": {"form": {}}},
                keys::CLIENT_INFO: {"name": "toolport-a2a", "version": env!("CARGO_PKG_VERSION")},
                keys::PROGRESS_TOKEN: format!("a2a-{}", context.task_id()),
            },
        });
        if let Some(arguments) = &call.arguments {
            params["arguments"] = whole_numbers(Value::Object(arguments.clone()));
        }
        if let Some(inputs) = inputs {
            params["inputResponses"] = whole_numbers(Value::Object(inputs));
        }
        if let Some(state) = &call.request_state {
            params["requestState"] = json!(state);
        }
        let request = Request {
            id: RequestId::Number(self.ids.fetch_add(1, Ordering::Relaxed)),
            method: "tools/call".into(),
            params: Some(params),
        };
        let admission = {
            // Scoped: the facts borrow what they tell and are not `Send`.
            let facts = TransportFacts {
                headers: None,
                principal: context.principal(),
                authorizer: context.authorizer(),
            };
            self.server.admit(request, &facts)
        };
        let admitted = match admission {
            Ok(admitted) => admitted,
            Err(refusal) => return context.fail(refusal.error().message).await,
        };
        let cancel = tokio_util::sync::CancellationToken::new();
        let call_context = CallContext {
            session: Arc::new(Session::new()),
            channel: Arc::new(Progress(context.clone())),
            cancel: cancel.clone(),
            principal: context.principal().cloned(),
            session_id: None,
        };
        let answered = tokio::select! {
            answered = self.server.answer(admitted, call_context) => answered,
            () = context.cancelled() => {
                // The tool sees the cancellation; the task is already cancelled.
                cancel.cancel();
                return Ok(());
            }
        };
        let result: Value = match answered {
            Ok(raw) => serde_json::from_str(raw.get())
                .map_err(|e| AgentError::new(format!("the tool's result is not JSON: {e}")))?,
            Err(error) => return context.fail(error.message).await,
        };
        if result.get("resultType").and_then(Value::as_str) == Some("input_required") {
            let paused = Paused {
                request_state: result.get("requestState").and_then(Value::as_str).map(str::to_owned),
                ..call
            };
            let requests = result.get("inputRequests").cloned().unwrap_or_else(|| json!({}));
            let question = question_message(&describe(&requests), Some(requests));
            return context.ask_input(question, serde_json::to_value(&paused).ok()).await;
        }
        let parts = parts_of(&result);
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            let text = parts
                .iter()
                .filter_map(|p| p.text.clone())
                .collect::<Vec<_>>()
                .join("\n");
            return context
                .fail(if text.is_empty() {
                    "the tool failed".to_owned()
                } else {
                    text
                })
                .await;
        }
        context.artifact(Artifact::new(call.tool, parts)).await?;
        context.complete(None).await
    }
}

/// `value` with every whole float as an integer. A2A carries data parts
/// as protobuf `Value`s, whose numbers are doubles: clients built on
/// protobuf (the Python and JavaScript SDKs) send `3` as `3.0`, which a
/// tool's integer parameter would refuse.
fn whole_numbers(value: Value) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53: every integer below is exact
    match value {
        Value::Number(n) if !n.is_i64() && !n.is_u64() => match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < EXACT => json!(f as i64),
            _ => Value::Number(n),
        },
        Value::Array(items) => Value::Array(items.into_iter().map(whole_numbers).collect()),
        Value::Object(map) => Value::Object(map.into_iter().map(|(k, v)| (k, whole_numbers(v))).collect()),
        other => other,
    }
}

/// The agent's question while input is required.
fn question_message(text: &str, requests: Option<Value>) -> Message {
    let mut parts = vec![Part::text(text)];
    if let Some(requests) = requests {
        parts.push(Part::data(json!({"inputRequests": requests})));
    }
    Message::agent(parts)
}

/// The messages of the input requests, for people.
fn describe(requests: &Value) -> String {
    let asked: Vec<String> = requests
        .as_object()
        .into_iter()
        .flatten()
        .map(|(key, request)| {
            let message = request
                .pointer("/params/message")
                .and_then(Value::as_str)
                .unwrap_or("an answer");
            format!("{key}: {message}")
        })
        .collect();
    if asked.is_empty() {
        "The tool needs input.".into()
    } else {
        format!(
            "The tool needs input ({}). Answer with a data part {{\"inputResponses\": {{...}}}}.",
            asked.join("; ")
        )
    }
}

/// A tool result's content as parts.
fn parts_of(result: &Value) -> Vec<Part> {
    let mut parts = Vec::new();
    for item in result.get("content").and_then(Value::as_array).into_iter().flatten() {
        match (
            item.get("type").and_then(Value::as_str),
            item.get("text").and_then(Value::as_str),
        ) {
            (Some("text"), Some(text)) => parts.push(Part::text(text)),
            (Some(kind @ ("image" | "audio")), _) => {
                let mime = item.get("mimeType").and_then(Value::as_str);
                parts.push(Part {
                    raw: item.get("data").and_then(Value::as_str).map(str::to_owned),
                    media_type: mime.map(str::to_owned),
                    filename: Some(kind.to_owned()),
                    ..Part::default()
                });
            }
            _ => parts.push(Part::data(item.clone())),
        }
    }
    if let Some(structured) = result.get("structuredContent") {
        parts.push(Part::data(structured.clone()));
    }
    if parts.is_empty() {
        parts.push(Part::text(""));
    }
    parts
}

/// The tool's notifications: progress becomes a status update.
#[derive(Debug)]
struct Progress(TaskContext);

impl PeerChannel for Progress {
    fn notify(&self, notification: Notification) -> RpcFuture<'_, Result<(), RpcError>> {
        Box::pin(async move {
            if notification.method == toolport_protocol::progress::PROGRESS {
                let params = notification.params.unwrap_or_default();
                let text = match params.get("message").and_then(Value::as_str) {
                    Some(message) => message.to_owned(),
                    None => {
                        let progress = params.get("progress").and_then(Value::as_f64).unwrap_or(0.0);
                        match params.get("total").and_then(Value::as_f64) {
                            Some(total) => format!("{progress} of {total}"),
                            None => format!("{progress}"),
                        }
                    }
                };
                // A task that ended meanwhile takes no more updates; the
                // tool's own call is cancelled by then.
                let _ = self.0.progress(text).await;
            }
            Ok(())
        })
    }

    fn request(
        &self,
        _: String,
        _: Option<Value>,
        _: std::time::Duration,
    ) -> RpcFuture<'_, Result<Box<serde_json::value::RawValue>, RpcError>> {
        // 2026-07-28 calls ask the user through results, not requests.
        Box::pin(async { Err(RpcError::Closed) })
    }

    fn can_request(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_become_parts() {
        let result = json!({
            "content": [{"type": "text", "text": "hello"}, {"type": "image", "data": "AAAA", "mimeType": "image/png"}],
            "structuredContent": {"count": 3}
        });
        let parts = parts_of(&result);
        assert_eq!(parts[0].text.as_deref(), Some("hello"));
        assert_eq!(parts[1].raw.as_deref(), Some("AAAA"));
        assert_eq!(parts[1].media_type.as_deref(), Some("image/png"));
        assert_eq!(parts[2].data, Some(json!({"count": 3})));
    }

    #[test]
    fn whole_floats_become_integers_and_the_rest_stays() {
        let sent = json!({"steps": 3.0, "ratio": 0.5, "nested": [2.0, -4.0, "x"], "big": 1e300, "n": 7});
        assert_eq!(
            whole_numbers(sent),
            json!({"steps": 3, "ratio": 0.5, "nested": [2, -4, "x"], "big": 1e300, "n": 7})
        );
    }

    #[test]
    fn input_requests_are_described_for_people() {
        let requests = json!({"booking": {"method": "elicitation/create", "params": {"message": "Book a table?"}}});
        assert!(describe(&requests).contains("booking: Book a table?"));
        assert_eq!(describe(&json!({})), "The tool needs input.");
    }
}
