//! Tool-definition pinning on the client: every listing is reviewed against
//! `toolport-auth`'s [`ToolPins`]; a tool that is new or changed since it was
//! approved is quarantined: left out of [`Client::list_tools`] (so its
//! description never reaches a model) and refused by
//! [`Client::call_tool`] with [`ClientError::Quarantined`] until approved.
//!
//! [`Client::list_tools`]: crate::Client::list_tools
//! [`Client::call_tool`]: crate::Client::call_tool
//! [`ClientError::Quarantined`]: crate::ClientError::Quarantined

use std::sync::Arc;

use serde_json::Value;
use toolport_auth::pinning::ToolPins;
use toolport_protocol::tools::Tool;

/// The pins and the name this server's tools are pinned under.
#[derive(Debug, Clone)]
pub(crate) struct Pinning {
    pub(crate) server: String,
    pub(crate) pins: Arc<ToolPins>,
}

impl Pinning {
    /// Reviews a listing (recording and auditing new and changed
    /// definitions); keeps the approved tools only.
    pub(crate) fn review(&self, tools: Vec<Tool>) -> Vec<Tool> {
        let definitions: Vec<Value> = tools
            .iter()
            .map(|t| serde_json::to_value(t).unwrap_or(Value::Null))
            .collect();
        let review = self.pins.review(&self.server, &definitions);
        for held in &review.quarantined {
            tracing::warn!(server = %self.server, tool = %held.tool, event = ?held.event, "tool quarantined until its definition is approved");
        }
        tools
            .into_iter()
            .filter(|t| review.callable.contains(&t.name))
            .collect()
    }

    /// Whether `tool`'s definition, as last listed, is approved.
    pub(crate) fn callable(&self, tool: &str) -> bool {
        self.pins.is_callable(&self.server, tool)
    }
}
