//! The audit stream: who called which tool, when, with which (redacted)
//! arguments, how it ended and how long it took — one record per call that
//! got past admission, whatever the layers inside made of it.

use std::sync::Arc;

use super::layer::{CallFuture, CallLayer, Next, ToolCall};
use super::metering::outcome_label;
use crate::audit::{AuditLog, AuditRecord, audit_id, now_rfc3339, trace_id};

/// Records every call in the audit stream once it ends.
#[derive(Debug)]
pub(crate) struct AuditLayer {
    log: Arc<AuditLog>,
}

impl AuditLayer {
    pub(crate) fn new(log: Arc<AuditLog>) -> Self {
        AuditLayer { log }
    }
}

impl CallLayer for AuditLayer {
    fn call<'a>(&'a self, call: ToolCall<'a>, next: Next<'a>) -> CallFuture<'a> {
        let work = next.run(call);
        Box::pin(async move {
            let outcome = work.await;
            let (label, code) = outcome_label(&outcome);
            self.log.record(AuditRecord {
                time: now_rfc3339(),
                principal: call.principal.map(|p| p.subject.clone()),
                session: call.session.map(str::to_owned),
                request_id: audit_id(call.request_id),
                tool: call.name.to_owned(),
                arguments: call.arguments.clone(),
                outcome: match code {
                    Some(code) => format!("error {code}"),
                    None => label.to_owned(),
                },
                duration_ms: call.started.elapsed().as_millis() as u64,
                trace_id: trace_id(call.meta),
            });
            outcome
        })
    }
}
