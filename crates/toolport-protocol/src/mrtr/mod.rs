//! Multi round-trip requests (2026-07-28, `basic/patterns/mrtr`): instead of
//! sending requests to the client, a server answers `tools/call`,
//! `prompts/get` or `resources/read` with an [`InputRequiredResult`]; the client
//! gathers the input and retries with `inputResponses` and the echoed
//! `requestState`.
//!
//! Two layers: the retry half, [`InputResponses`] (`responses.rs`), which the
//! request params of `tools`, `prompts` and `resources` carry, and the asking
//! half (`input.rs`), which embeds sampling and elicitation requests and so
//! sits above them.

mod input;
mod responses;

pub use input::{InputRequest, InputRequests, InputRequiredResult, RootsParams};
pub use responses::InputResponses;
