//! The client's cancellation: the call's future is dropped the moment the
//! client cancels (or goes away), which stops the handler at its next await
//! and releases whatever the layers inside hold (a gate's place, an
//! idempotency claim).

use super::layer::{CallFuture, CallLayer, Next, ToolCall};
use crate::error::ToolError;

/// Races the call against the client's cancellation.
#[derive(Debug)]
pub(crate) struct CancelLayer;

impl CallLayer for CancelLayer {
    fn call<'a>(&'a self, call: ToolCall<'a>, next: Next<'a>) -> CallFuture<'a> {
        let cancel = call.cancel;
        let work = next.run(call);
        Box::pin(async move {
            tokio::select! {
                outcome = work => outcome,
                _ = cancel.cancelled() => Err(ToolError::Cancelled),
            }
        })
    }
}
