//! The questions the fixture's tools and prompts put to the client (through
//! elicitation and sampling), and how they read the answers back.

use serde_json::{Value, json};
use toolport_protocol::content::{OneOrMany, SamplingContent};
use toolport_protocol::elicitation::{ElicitAction, ElicitRequestParams, ElicitResult};
use toolport_protocol::sampling::CreateMessageResult;

use crate::data::object;

/// A form asking for one string field.
pub(crate) fn ask_for(message: &str, field: &str) -> ElicitRequestParams {
    let schema = object(json!({
        "type": "object",
        "properties": { field: { "type": "string" } },
        "required": [field]
    }));
    ElicitRequestParams::form(message, schema)
}

/// The string the user entered in `field`, if they accepted.
pub(crate) fn entered(answer: &ElicitResult, field: &str) -> Option<String> {
    if answer.action != ElicitAction::Accept {
        return None;
    }
    answer
        .content
        .as_ref()?
        .get(field)
        .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
}

/// The text of a sampling answer.
pub(crate) fn sampled_text(result: &CreateMessageResult) -> String {
    let text = |content: &SamplingContent| match content {
        SamplingContent::Text(t) => Some(t.text.clone()),
        _ => None,
    };
    match &result.content {
        OneOrMany::One(content) => text(content),
        OneOrMany::Many(contents) => contents.iter().find_map(text),
    }
    .unwrap_or_else(|| "(no text)".to_owned())
}

/// `accept`, `decline` or `cancel`.
fn action_name(action: ElicitAction) -> &'static str {
    match action {
        ElicitAction::Accept => "accept",
        ElicitAction::Decline => "decline",
        ElicitAction::Cancel => "cancel",
    }
}

/// An elicitation answer as `action=…, content={…}`.
pub(crate) fn describe(answer: &ElicitResult) -> String {
    let content = Value::Object(answer.content.clone().unwrap_or_default());
    format!("action={}, content={content}", action_name(answer.action))
}
