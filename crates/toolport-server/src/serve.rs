//! Serving a connection: this process's stdio, a child's pipes, any
//! [`Transport`]. One connection is one handshake-era session.

use std::sync::Arc;

use serde_json::value::RawValue;
use toolport_protocol::jsonrpc::{Notification, Request};
use toolport_protocol::{ErrorObject, ProtocolVersion, lifecycle};
use toolport_rpc::framing::DEFAULT_MAX_LINE;
use toolport_rpc::{Peer, PeerChannel, PeerOptions, RequestContext, Service, Transport, connect};

use crate::dispatch::CallContext;
use crate::events::ServerEvent;
use crate::server::Server;
use crate::session::Session;

/// One connection's view of the server.
#[derive(Debug, Clone)]
pub struct ServerConnection {
    server: Server,
    session: Arc<Session>,
    channel: Arc<dyn PeerChannel>,
}

impl ServerConnection {
    /// A connection of `server` talking through `peer`.
    pub fn new(server: Server, peer: Peer) -> Self {
        ServerConnection {
            server,
            session: Arc::new(Session::new()),
            channel: Arc::new(peer),
        }
    }

    /// The handshake-era session of this connection.
    pub fn session(&self) -> &Arc<Session> {
        &self.session
    }
}

impl Service for ServerConnection {
    async fn call(&self, request: Request, cx: RequestContext) -> Result<Box<RawValue>, ErrorObject> {
        let call = CallContext {
            session: self.session.clone(),
            channel: self.channel.clone(),
            cancel: cx.cancel,
            principal: None,
            session_id: None,
        };
        self.server.handle(request, call).await
    }

    fn notification(&self, notification: Notification, _peer: &Peer) {
        match notification.method.as_str() {
            lifecycle::INITIALIZED => tracing::debug!("client initialized"),
            other => tracing::debug!(method = other, "notification ignored"),
        }
    }

    fn in_order(&self, request: &Request) -> bool {
        request.method == lifecycle::INITIALIZE
    }

    fn batch_allowed(&self) -> bool {
        self.session
            .negotiated()
            .is_some_and(|n| n.version == ProtocolVersion::V2025_03_26)
    }
}

impl Server {
    /// Serves on this process's stdin and stdout until stdin closes.
    pub async fn serve_stdio(self) {
        self.serve_transport(toolport_rpc::stdio::own_stdio(DEFAULT_MAX_LINE), PeerOptions::default())
            .await
    }

    /// Serves one connection over any transport until it closes.
    pub async fn serve_transport(self, transport: Transport, options: PeerOptions) {
        let (peer, connection) = connect(transport, options);
        let conn = ServerConnection::new(self.clone(), peer.clone());
        let forwarder = tokio::spawn(forward_changes(self, conn.session.clone(), peer));
        connection.serve(conn).await;
        forwarder.abort();
    }
}

/// Handshake-era notifications: list changes once initialized, resource
/// updates for what the session subscribed to. (2026-07-28 clients get these
/// only on `subscriptions/listen`.)
async fn forward_changes(server: Server, session: Arc<Session>, peer: Peer) {
    let mut events = server.events();
    let closed = peer.closed();
    loop {
        let batch = tokio::select! {
            batch = events.next() => batch,
            _ = closed.cancelled() => return,
        };
        let Some(batch) = batch else { return };
        if session.negotiated().is_none() {
            continue;
        }
        for event in batch {
            if let ServerEvent::ResourceUpdated(uri) = &event
                && !session.is_subscribed(uri)
            {
                continue;
            }
            let note = event.notification();
            if peer.notify(&note.method, note.params).await.is_err() {
                return;
            }
        }
    }
}
