//! The hook an authorization layer plugs into (`basic/authorization`).
//!
//! The transport knows only this trait: it asks the layer for the documents
//! it publishes (protected-resource metadata) and to authenticate every
//! request to the MCP endpoint before anything else is done with it. What an
//! authenticated caller may do is the server's question: the layer is also
//! the server's [`Authorizer`], handed over with each request. The OAuth 2.1
//! resource server in `toolport-auth` implements both.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use bytes::Bytes;
use http::{HeaderMap, StatusCode};
use toolport_server::{Authorizer, Principal};

/// A boxed future, as trait methods return them.
pub type AuthFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Why a request is refused: the status (401, 403 or 400), the
/// `WWW-Authenticate` challenge and a message for people.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denial {
    /// 401 for a missing or invalid token, 403 for too little scope, 400 for
    /// a malformed authorization request.
    pub status: StatusCode,
    /// The `WWW-Authenticate` header value, if any.
    pub challenge: Option<String>,
    /// What went wrong, without secrets.
    pub message: String,
}

/// A document the authorization layer publishes (a JSON body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    /// Its `Content-Type`.
    pub content_type: &'static str,
    /// Its body.
    pub body: Bytes,
}

/// Authentication of requests to the MCP endpoint; authorization through
/// the [`Authorizer`] it also is.
pub trait Authenticator: Authorizer + Send + Sync + fmt::Debug + 'static {
    /// The document served at `path` for a GET, if this layer publishes one
    /// there (the RFC 9728 well-known paths). Asked before the path of the
    /// MCP endpoint is matched.
    fn document(&self, path: &str) -> Option<Document>;

    /// Establishes who is calling from the request's headers, before its
    /// body is read. A missing or bad credential is a 401 [`Denial`].
    fn authenticate<'a>(&'a self, headers: &'a HeaderMap) -> AuthFuture<'a, Result<Principal, Denial>>;
}

/// The owner a handshake-era session is bound to: the subject and the client
/// the token was issued to. Another principal presenting the session id gets
/// 404, as if the session did not exist.
pub(crate) fn session_owner(principal: &Principal) -> String {
    format!(
        "{}\u{1f}{}",
        principal.subject,
        principal.client_id.as_deref().unwrap_or_default()
    )
}
