//! `_meta`: the reserved metadata object on requests, notifications and results.
//!
//! From 2026-07-28 on, every request carries its protocol version, client
//! capabilities and client info here instead of in an `initialize` handshake
//! (`basic/index#meta`).
//!
//! Two layers: the object itself and its keys (`map.rs`), which every message
//! type builds on, and the typed reading of a request's `_meta` (`request.rs`),
//! which needs the types of other modules (capabilities, log level, progress
//! token).

mod map;
mod request;

pub use map::{Meta, keys};
pub use request::RequestMeta;
