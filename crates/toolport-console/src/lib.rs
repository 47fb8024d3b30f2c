//! The web console of `toolport serve`: pages at `/ui`, their JSON admin API
//! under `/admin/`, and the bench report's plots.
//!
//! The console is a [`Mount`] of the HTTP transport: it is reached on the
//! serving port, behind the same Origin, Host and authentication checks as
//! the MCP endpoint. Its pages are HTML rendered here with a little plain
//! JavaScript (ES modules, no build step), every asset compiled into the
//! binary; it talks MCP to the endpoint for tools, resources and prompts, and
//! reads the admin API ([`admin`]) and `/metrics` for the live views. See
//! `docs/console.md` for the choices and the API.
//!
//! ```no_run
//! # fn run(server: toolport_server::Server) {
//! use std::sync::Arc;
//! use toolport_console::{Console, ConsoleConfig};
//! use toolport_http::{HttpConfig, HttpServer};
//! let http = HttpConfig { same_origin: true, ..HttpConfig::default() };
//! let transport = HttpServer::new(server, http)
//!     .with_mount(Arc::new(Console::new(ConsoleConfig::default())));
//! # }
//! ```

pub mod admin;
mod assets;
mod audit_tail;
pub mod bench;
mod csrf;
pub mod hooks;
mod page;
mod respond;

use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use toolport_http::auth::AuthFuture;
use toolport_http::{Access, Mount, MountRequest};
use toolport_server::Principal;

pub use self::hooks::{TaskSource, TaskSummary, UpstreamHealth, UpstreamStatus};

/// The scope that lets a caller of a protected server see and stop every
/// caller's work in the console, unless configured otherwise.
pub const DEFAULT_ADMIN_SCOPE: &str = "toolport:admin";

/// How the console signs in to a protected server: authorization code with
/// PKCE, in the browser, against the server's authorization server, as a
/// public client registered there with the redirect URI `<origin>/ui/callback`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleOAuth {
    /// The authorization server's issuer (its metadata is discovered from it).
    pub issuer: String,
    /// The console's client id at the authorization server.
    pub client_id: String,
    /// The scopes the console asks for.
    pub scopes: Vec<String>,
    /// The MCP server's canonical URI (the `resource` of RFC 8707).
    pub resource: String,
}

/// The console's settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConsoleConfig {
    /// With OAuth on: the scopes that let a caller see every caller's
    /// sessions, calls and errors, read the audit tail and stop any call.
    /// Others see and stop only their own. Empty: every authenticated caller.
    pub admin_scopes: Vec<String>,
    /// Sign-in with authorization code + PKCE; `None`: a pasted token only
    /// (and nothing at all when the server is not protected).
    pub oauth: Option<ConsoleOAuth>,
    /// The audit file whose tail the console shows.
    pub audit_path: Option<PathBuf>,
    /// The bench report (`toolport bench --report` or `--json`) the console shows.
    pub bench_report: Option<PathBuf>,
}

impl Default for ConsoleConfig {
    fn default() -> Self {
        ConsoleConfig {
            admin_scopes: vec![DEFAULT_ADMIN_SCOPE.to_owned()],
            oauth: None,
            audit_path: None,
            bench_report: None,
        }
    }
}

/// The console: serves `/ui` and `/admin/`.
#[derive(Debug)]
pub struct Console {
    config: ConsoleConfig,
    csrf: csrf::CsrfKey,
    upstreams: Option<Arc<dyn UpstreamHealth>>,
    tasks: Option<Arc<dyn TaskSource>>,
}

impl Console {
    /// A console with these settings and no upstreams or tasks to show.
    pub fn new(config: ConsoleConfig) -> Self {
        Console {
            config,
            csrf: csrf::CsrfKey::random(),
            upstreams: None,
            tasks: None,
        }
    }

    /// Shows a gateway's upstreams and their health.
    pub fn with_upstreams(mut self, upstreams: Arc<dyn UpstreamHealth>) -> Self {
        self.upstreams = Some(upstreams);
        self
    }

    /// Shows the server's tasks.
    pub fn with_tasks(mut self, tasks: Arc<dyn TaskSource>) -> Self {
        self.tasks = Some(tasks);
        self
    }

    /// Whether `principal` may see and stop everyone's work: always on an
    /// unprotected server (whoever passes its Origin and Host checks runs it).
    pub(crate) fn is_operator(&self, protected: bool, principal: Option<&Principal>) -> bool {
        if !protected {
            return true;
        }
        principal.is_some_and(|p| self.config.admin_scopes.iter().all(|s| p.scopes.contains(s)))
    }
}

impl Mount for Console {
    fn route(&self, path: &str) -> Option<Access> {
        if page::serves(path) || assets::serves(path) {
            Some(Access::Public)
        } else if path == "/admin" || path.starts_with("/admin/") {
            Some(Access::Authenticated)
        } else {
            None
        }
    }

    fn serve<'a>(&'a self, request: MountRequest<'a>) -> AuthFuture<'a, http::Response<Bytes>> {
        Box::pin(async move {
            if page::serves(request.path) {
                return page::render(self, &request);
            }
            if assets::serves(request.path) {
                return match assets::find(request.path) {
                    Some(asset) => assets::respond(asset, request.method),
                    None => assets::missing(),
                };
            }
            admin::serve(self, request).await
        })
    }
}
