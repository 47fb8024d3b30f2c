//! Elicitation (`client/elicitation`): the server asks the user for input.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::meta::Meta;

/// Method of `elicitation/create`.
pub const CREATE: &str = "elicitation/create";

/// `elicitation/create` params: a form (flat JSON Schema of primitives) or a URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestParams {
    /// `form` (the default when absent) or `url`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
    /// What to ask the user.
    pub message: String,
    /// Form mode: the schema of the answer (`type: object` of primitive properties).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requested_schema: Option<Map<String, Value>>,
    /// URL mode: where to send the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// URL mode, 2025-11-25 only: correlates the completion notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ElicitRequestParams {
    /// A form-mode request.
    pub fn form(message: impl Into<String>, requested_schema: Map<String, Value>) -> Self {
        ElicitRequestParams {
            mode: None,
            message: message.into(),
            requested_schema: Some(requested_schema),
            url: None,
            elicitation_id: None,
            meta: None,
        }
    }
}

/// What the user did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form.
    Accept,
    /// Said no.
    Decline,
    /// Dismissed it.
    Cancel,
}

/// `elicitation/create` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (accept, form mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Map<String, Value>>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}
