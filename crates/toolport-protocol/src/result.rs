//! What every result shares: `resultType` and `_meta` (2026-07-28), and the
//! cache hints `ttlMs`/`cacheScope` on cacheable results (`server/utilities/caching`).

use serde::{Deserialize, Serialize};

use crate::meta::Meta;

/// `resultType` of a 2026-07-28 result. Absent (handshake era) means complete.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultType {
    /// The request is answered.
    Complete,
    /// The client must supply input and retry (MRTR).
    InputRequired,
    /// An extension's result type.
    #[serde(untagged)]
    Other(String),
}

/// Who may share a cached result (`server/utilities/caching`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Any caller may be served this result.
    Public,
    /// Only the caller that asked.
    Private,
}

/// Access to the fields every result has, so era adapters can fill them in.
pub trait McpResult {
    /// `resultType`.
    fn result_type_mut(&mut self) -> &mut Option<ResultType>;
    /// `_meta`.
    fn meta_mut(&mut self) -> &mut Option<Meta>;
    /// `ttlMs` and `cacheScope`, for results that carry cache hints.
    fn cache_hints_mut(&mut self) -> Option<(&mut Option<u64>, &mut Option<CacheScope>)> {
        None
    }
}

/// Implements [`McpResult`] for result structs with `result_type` and `meta`
/// fields (and `ttl_ms`/`cache_scope` for the `cacheable` form).
macro_rules! mcp_result {
    ($($ty:ty),* $(,)?) => {$(
        impl $crate::result::McpResult for $ty {
            fn result_type_mut(&mut self) -> &mut Option<$crate::result::ResultType> { &mut self.result_type }
            fn meta_mut(&mut self) -> &mut Option<$crate::meta::Meta> { &mut self.meta }
        }
    )*};
    (cacheable: $($ty:ty),* $(,)?) => {$(
        impl $crate::result::McpResult for $ty {
            fn result_type_mut(&mut self) -> &mut Option<$crate::result::ResultType> { &mut self.result_type }
            fn meta_mut(&mut self) -> &mut Option<$crate::meta::Meta> { &mut self.meta }
            fn cache_hints_mut(&mut self) -> Option<(&mut Option<u64>, &mut Option<$crate::result::CacheScope>)> {
                Some((&mut self.ttl_ms, &mut self.cache_scope))
            }
        }
    )*};
}
pub(crate) use mcp_result;

/// A result with nothing in it (`ping`, `logging/setLevel`, subscribe, listen).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyResult {
    /// `resultType` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

mcp_result!(EmptyResult);
