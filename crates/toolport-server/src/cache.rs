//! Cache hints of 2026-07-28 results (`server/utilities/caching`).

use toolport_protocol::result::CacheScope;

/// Cache hints attached to cacheable 2026-07-28 results (`server/utilities/caching`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHints {
    /// How long a client may reuse the result, in milliseconds.
    pub ttl_ms: u64,
    /// Who may share it.
    pub scope: CacheScope,
}

impl Default for CacheHints {
    /// No caching, private: always correct, whatever the server does per caller.
    fn default() -> Self {
        CacheHints {
            ttl_ms: 0,
            scope: CacheScope::Private,
        }
    }
}
