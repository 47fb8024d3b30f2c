//! Building a [`Client`]: where it connects, its options, the handler that
//! answers the server, the token provider and tool pinning.

use std::sync::atomic::{AtomicBool, AtomicI64};
use std::sync::{Arc, Mutex};

use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

use super::{Client, Inner};
use crate::auth::TokenProvider;
use crate::error::ClientError;
use crate::handler::{ClientHandler, NoInput};
use crate::http::HttpCore;
use crate::inbound::Inbound;
use crate::link::Target;
use crate::options::ClientOptions;
use crate::stdio::ServerCommand;

/// How to build a [`Client`].
#[derive(Debug)]
pub struct ClientBuilder {
    target: Result<TargetSpec, ClientError>,
    options: ClientOptions,
    handler: Arc<dyn ClientHandler>,
    auth: Option<Arc<dyn TokenProvider>>,
    #[cfg(feature = "auth")]
    pinning: Option<crate::pinning::Pinning>,
}

#[derive(Debug)]
enum TargetSpec {
    Stdio(ServerCommand),
    Http(String),
}

impl ClientBuilder {
    /// Replaces the options.
    pub fn options(mut self, options: ClientOptions) -> Self {
        self.options = options;
        self
    }

    /// Sets the handler that answers the server's questions (and so the
    /// capabilities the client declares).
    pub fn handler(mut self, handler: impl ClientHandler) -> Self {
        self.handler = Arc::new(handler);
        self
    }

    /// Sets the token provider for HTTP (`Authorization: Bearer`, 401/403).
    pub fn auth(mut self, provider: impl TokenProvider) -> Self {
        self.auth = Some(Arc::new(provider));
        self
    }

    /// Pins this server's tool definitions under the name `server` in `pins`:
    /// new and changed tools are quarantined (not listed, not callable)
    /// until approved, each event audited by the pins' sink.
    ///
    /// ```no_run
    /// # async fn demo() -> Result<(), toolport_client::ClientError> {
    /// use std::sync::Arc;
    /// use toolport_auth::pinning::{PinStore, ToolPins, TracingAudit};
    /// use toolport_client::Client;
    ///
    /// let pins = Arc::new(ToolPins::new(PinStore::default(), Arc::new(TracingAudit)));
    /// let client = Client::http("http://127.0.0.1:8080/mcp").pin_tools("local", pins.clone()).connect().await?;
    /// assert!(client.list_tools().await?.is_empty(), "nothing is approved yet");
    /// pins.approve_all("local"); // after a person has looked at pins.snapshot()
    /// # Ok(()) }
    /// ```
    #[cfg(feature = "auth")]
    pub fn pin_tools(mut self, server: impl Into<String>, pins: Arc<toolport_auth::pinning::ToolPins>) -> Self {
        self.pinning = Some(crate::pinning::Pinning {
            server: server.into(),
            pins,
        });
        self
    }

    /// Builds the client without connecting: the first call connects.
    pub fn build(self) -> Result<Client, ClientError> {
        let target = match self.target? {
            TargetSpec::Stdio(command) => Target::Stdio(command),
            TargetSpec::Http(url) => Target::Http(Arc::new(HttpCore::new(
                &url,
                self.options.max_connections,
                self.options.max_message_bytes,
                &self.options.extra_root_certificates,
                self.auth,
            )?)),
        };
        let capabilities = self.handler.capabilities();
        Ok(Client {
            inner: Arc::new(Inner {
                in_flight: Semaphore::new(self.options.max_in_flight.max(1)),
                inbound: Arc::new(Inbound::new(
                    self.handler,
                    Arc::new(crate::cache::ResultCache::new(self.options.cache_capacity)),
                )),
                target,
                options: self.options,
                capabilities,
                link: tokio::sync::Mutex::new(None),
                tools: Mutex::default(),
                next_token: AtomicI64::new(1),
                want_events: AtomicBool::new(false),
                subscriptions: Mutex::default(),
                log_level: Mutex::new(None),
                closed: CancellationToken::new(),
                #[cfg(feature = "auth")]
                pinning: self.pinning,
            }),
        })
    }

    /// Builds the client and opens the conversation (spawn or connect, then
    /// `server/discover` or `initialize`).
    pub async fn connect(self) -> Result<Client, ClientError> {
        let client = self.build()?;
        client.server().await?;
        Ok(client)
    }
}

impl Client {
    /// A client for the MCP endpoint at `url` (Streamable HTTP).
    pub fn http(url: impl Into<String>) -> ClientBuilder {
        Self::builder(Ok(TargetSpec::Http(url.into())))
    }

    /// A client that spawns `command` and talks to it over stdio.
    pub fn stdio(command: ServerCommand) -> ClientBuilder {
        Self::builder(Ok(TargetSpec::Stdio(command)))
    }

    fn builder(target: Result<TargetSpec, ClientError>) -> ClientBuilder {
        ClientBuilder {
            target,
            options: ClientOptions::default(),
            handler: Arc::new(NoInput),
            auth: None,
            #[cfg(feature = "auth")]
            pinning: None,
        }
    }
}
