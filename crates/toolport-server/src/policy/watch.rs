//! The server's live view of its calls ([`Activity`]): each call is listed
//! while it runs and may be stopped by an operator; how it failed, if it
//! did, joins the recent errors.

use std::sync::Arc;

use super::layer::{CallFuture, CallLayer, Next, ToolCall};
use super::metering::outcome_label;
use crate::activity::{Activity, RecentError};
use crate::audit::{audit_id, now_rfc3339};
use crate::error::ToolError;

/// Lists running calls and races each against an operator's cancellation.
#[derive(Debug)]
pub(crate) struct WatchLayer(pub(crate) Arc<Activity>);

impl CallLayer for WatchLayer {
    fn call<'a>(&'a self, call: ToolCall<'a>, next: Next<'a>) -> CallFuture<'a> {
        let running = self
            .0
            .begin(call.name, call.principal, call.session, audit_id(call.request_id));
        let work = next.run(call);
        Box::pin(async move {
            let outcome = tokio::select! {
                outcome = work => outcome,
                _ = running.cancel.cancelled() => Err(ToolError::Cancelled),
            };
            drop(running);
            let (label, code) = outcome_label(&outcome);
            let message = match &outcome {
                Ok(result) if result.is_error == Some(true) => Some(first_text(result)),
                Ok(_) | Err(ToolError::InputRequired(_)) => None,
                Err(ToolError::Protocol(error)) => Some(error.message.clone()),
                Err(other) => Some(other.to_string()),
            };
            if let Some(message) = message {
                self.0.record_error(RecentError {
                    time: now_rfc3339(),
                    method: toolport_protocol::tools::CALL.to_owned(),
                    tool: Some(call.name.to_owned()),
                    principal: call.principal.map(|p| p.subject.clone()),
                    outcome: label.to_owned(),
                    code: code.map(|c| c.0),
                    message,
                });
            }
            outcome
        })
    }
}

/// The first text of an `isError` result: what the model was told.
fn first_text(result: &toolport_protocol::tools::CallToolResult) -> String {
    let text = serde_json::to_value(&result.content)
        .ok()
        .and_then(|content| content.get(0)?.get("text")?.as_str().map(str::to_owned));
    let mut text = text.unwrap_or_else(|| "the tool reported an error".to_owned());
    if text.len() > 500 {
        let cut = (0..=500).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
        text.truncate(cut);
        text.push('…');
    }
    text
}
