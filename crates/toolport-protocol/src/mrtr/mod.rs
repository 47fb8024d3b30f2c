//! Multi round-trip requests (2026-07-28, `basic/patterns/mrtr`): instead of
//! sending requests to the client, a server answers `tools/call`,
//! `prompts/get` or `resources/read` with an [`InputRequiredResult`]; the client
//! gathers the input and retries with `inputResponses` and the echoed
//! `requestState`.
//!
//! The retry half, [`InputResponses`], is a leaf the request params of
//! `tools`, `prompts` and `resources` carry; the asking half (`input.rs`)
//! embeds sampling and elicitation requests, so it sits above them.

use std::collections::BTreeMap;

use serde_json::Value;

mod input;

pub use input::{InputRequest, InputRequests, InputRequiredResult, RootsParams};

/// Key to the client's answer: an `ElicitResult`, `CreateMessageResult` or
/// `ListRootsResult`, kept as JSON until the server knows which one it asked for.
pub type InputResponses = BTreeMap<String, Value>;
