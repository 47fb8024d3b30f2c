//! Deadlines: a call that runs longer than its tool's deadline (or the
//! server's) is stopped and answered with an `isError` result whose code is
//! `deadline_exceeded`, retryable.

use std::collections::BTreeMap;
use std::time::Duration;

use super::layer::{CallFuture, CallLayer, Next, ToolCall};
use crate::error::ToolError;

/// The code of a call stopped at its deadline.
pub const DEADLINE_EXCEEDED: &str = "deadline_exceeded";

/// How long each tool's calls may run, in milliseconds; 0 for no deadline.
#[derive(Debug, Clone)]
pub(crate) struct Deadlines {
    pub(crate) default_ms: u64,
    pub(crate) per_tool: BTreeMap<String, u64>,
}

impl Deadlines {
    /// The deadline of `tool`, in milliseconds; 0 for none.
    pub(crate) fn of(&self, tool: &str) -> u64 {
        self.per_tool.get(tool).copied().unwrap_or(self.default_ms)
    }

    /// Whether any call has a deadline.
    pub(crate) fn any(&self) -> bool {
        self.default_ms > 0 || self.per_tool.values().any(|ms| *ms > 0)
    }
}

/// Stops calls that outrun their deadline.
#[derive(Debug)]
pub(crate) struct DeadlineLayer(pub(crate) Deadlines);

impl CallLayer for DeadlineLayer {
    fn call<'a>(&'a self, call: ToolCall<'a>, next: Next<'a>) -> CallFuture<'a> {
        let deadline_ms = self.0.of(call.name);
        if deadline_ms == 0 {
            return next.run(call);
        }
        let deadline = Duration::from_millis(deadline_ms);
        // The deadline counts from the request's start, or from the moment
        // the gates let the call through when they may have made it wait.
        let started = if call.waited {
            tokio::time::Instant::now()
        } else {
            tokio::time::Instant::from_std(call.started)
        };
        let mut work = next.run(call);
        Box::pin(async move {
            // Most calls end on their first poll: only one that waits arms a
            // timer, which costs a lock on the timer wheel per call.
            let first = std::future::poll_fn(|cx| std::task::Poll::Ready(work.as_mut().poll(cx))).await;
            let within = match first {
                std::task::Poll::Ready(outcome) => Ok(outcome),
                std::task::Poll::Pending => tokio::time::timeout_at(started + deadline, work).await,
            };
            within.unwrap_or_else(|_| {
                metrics::counter!("toolport_deadlines_exceeded_total", "tool" => call.name.to_owned()).increment(1);
                // The handler's future is dropped here: its work stops at its
                // next await. The caller gets an `isError` result it can act
                // on (another try may be faster), not a protocol error.
                Err(ToolError::retryable(
                    DEADLINE_EXCEEDED,
                    format!(
                        "Deadline exceeded: {} ran longer than its {deadline_ms} ms and was stopped",
                        call.name
                    ),
                ))
            })
        })
    }
}
