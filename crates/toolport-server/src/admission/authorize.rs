//! Authorization: whether a caller may make a request, and which entries of
//! a list it may see. The server asks; an authorization layer (the OAuth
//! resource server in `toolport-auth`) answers.

use std::fmt;

use serde_json::{Map, Value};
use toolport_protocol::{completion, prompts, resources, tools};

use crate::context::Principal;

/// The kinds of things a request can touch by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    /// A tool, by name.
    Tool,
    /// A resource, by URI (or a template, by URI template).
    Resource,
    /// A prompt, by name.
    Prompt,
}

/// What a request touches: its kind, and the name or URI.
pub type Target<'a> = (TargetKind, &'a str);

/// Why a caller may not make a request: a message for people and, for
/// transports that have one, the challenge to send (HTTP `WWW-Authenticate`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forbidden {
    /// What is missing, without secrets.
    pub message: String,
    /// The challenge, such as `Bearer error="insufficient_scope", scope="..."`.
    pub challenge: Option<String>,
}

/// Decides what an authenticated caller may do.
///
/// [`authorize`](Authorizer::authorize) is asked once per request, after the
/// request is known to be well-formed for its era; [`visible`](Authorizer::visible)
/// trims list results before they are paginated, so every page is full and
/// no entry the caller may not use is ever serialized.
pub trait Authorizer: Send + Sync + fmt::Debug + 'static {
    /// Whether `principal` may make a request of `method` touching `target`
    /// (`None` for methods that touch nothing by name, such as `tools/list`).
    fn authorize(&self, principal: &Principal, method: &str, target: Option<Target<'_>>) -> Result<(), Forbidden>;

    /// Which entries `principal` may see in list results; called once per
    /// list request, its answer asked once per entry.
    fn visible<'a>(&'a self, principal: &'a Principal) -> Box<dyn Fn(Target<'_>) -> bool + Send + Sync + 'a>;
}

/// What a request touches, read from its params (`_meta` removed).
pub fn target_of<'a>(method: &str, params: &'a Map<String, Value>) -> Option<Target<'a>> {
    let text = |key: &str| params.get(key).and_then(Value::as_str).unwrap_or("");
    match method {
        tools::CALL => Some((TargetKind::Tool, text("name"))),
        prompts::GET => Some((TargetKind::Prompt, text("name"))),
        resources::READ | resources::SUBSCRIBE | resources::UNSUBSCRIBE => Some((TargetKind::Resource, text("uri"))),
        completion::COMPLETE => {
            let reference = params.get("ref")?;
            let field = |key: &str| reference.get(key).and_then(Value::as_str);
            match field("type")? {
                "ref/prompt" => Some((TargetKind::Prompt, field("name")?)),
                "ref/resource" => Some((TargetKind::Resource, field("uri")?)),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn params(value: Value) -> Map<String, Value> {
        value.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn requests_name_their_targets() {
        let delete = params(json!({"name": "delete"}));
        assert_eq!(target_of("tools/call", &delete), Some((TargetKind::Tool, "delete")));
        let read = params(json!({"uri": "file:///a"}));
        assert_eq!(
            target_of("resources/read", &read),
            Some((TargetKind::Resource, "file:///a"))
        );
        let complete = params(json!({"ref": {"type": "ref/prompt", "name": "p"}}));
        assert_eq!(
            target_of("completion/complete", &complete),
            Some((TargetKind::Prompt, "p"))
        );
        let unknown_ref = params(json!({"ref": {"type": "ref/other", "name": "p"}}));
        assert_eq!(target_of("completion/complete", &unknown_ref), None);
        assert_eq!(
            target_of("tools/call", &Map::new()),
            Some((TargetKind::Tool, "")),
            "a call without a name still gets the default scopes checked"
        );
        assert_eq!(target_of("tools/list", &Map::new()), None);
    }
}
