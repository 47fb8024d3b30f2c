//! OAuth 2.1 for MCP, and defences against poisoned tools.
//!
//! - `resource` (feature `server`, on by default): the resource server an
//!   MCP server puts in front of its HTTP endpoint (protected-resource metadata, JWT/JWKS or introspection,
//!   per-tool/resource/prompt scopes, `WWW-Authenticate` challenges).
//! - [`client`]: the client's side (discovery, authorization code + PKCE,
//!   client credentials, refresh, scope step-up), offered to MCP clients as
//!   a [`client::TokenProvider`].
//! - [`pinning`] and [`scan`]: tool-definition pinning with quarantine, and a
//!   scanner for hidden instructions in tool descriptions.

pub mod client;
#[doc(hidden)]
pub mod fuzzing;
pub mod http;
pub mod pinning;
#[cfg(feature = "server")]
pub mod resource;
pub mod scan;
mod uri;

pub use uri::WELL_KNOWN;
