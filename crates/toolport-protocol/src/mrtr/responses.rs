//! What the client sends back on the retry of a request that asked for input.
//! A leaf: the request params of `tools`, `prompts` and `resources` carry it.

use std::collections::BTreeMap;

use serde_json::Value;

/// Key to the client's answer: an `ElicitResult`, `CreateMessageResult` or
/// `ListRootsResult`, kept as JSON until the server knows which one it asked for.
pub type InputResponses = BTreeMap<String, Value>;
