//! Per-tool metrics: every call counted by how it ended, and timed.

use super::layer::{CallFuture, CallLayer, CallOutcome, Next, ToolCall};
use crate::error::ToolError;

/// Counts and times every call of every tool.
#[derive(Debug)]
pub(crate) struct MeteringLayer;

/// How a call ended, as a label (metrics) and, for protocol failures, the
/// error code (the audit stream).
pub(crate) fn outcome_label(outcome: &CallOutcome) -> (&'static str, Option<toolport_protocol::ErrorCode>) {
    use toolport_protocol::ErrorCode;
    match outcome {
        Ok(r) if r.is_error == Some(true) => ("tool_error", None),
        Ok(_) => ("ok", None),
        Err(ToolError::Failed(_) | ToolError::InvalidArguments(_) | ToolError::Coded(_)) => ("tool_error", None),
        Err(ToolError::InputRequired(_)) => ("input_required", None),
        Err(ToolError::Cancelled) => ("cancelled", None),
        Err(ToolError::MissingCapability(_)) => ("error", Some(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY)),
        Err(ToolError::Protocol(e)) => ("error", Some(e.code)),
    }
}

impl CallLayer for MeteringLayer {
    fn call<'a>(&'a self, call: ToolCall<'a>, next: Next<'a>) -> CallFuture<'a> {
        let work = next.run(call);
        Box::pin(async move {
            let outcome = work.await;
            let (label, _) = outcome_label(&outcome);
            call.tool.metrics().record(label, call.started.elapsed());
            outcome
        })
    }
}
