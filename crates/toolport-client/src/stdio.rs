//! The stdio transport: a spawned server process, one JSON-RPC message per
//! line, driven by the Peer engine of `toolport-rpc` (ids, the pending table,
//! `notifications/cancelled` when a call is dropped).

use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::value::RawValue;
use tokio::process::{Child, Command};
use toolport_protocol::{ErrorObject, Notification, Request};
use toolport_rpc::framing::DEFAULT_MAX_LINE;
use toolport_rpc::peer::{Peer, PeerOptions, RequestContext, RpcError, Service, connect};
use toolport_rpc::stdio::spawn_child;
use toolport_rpc::transport::{Outgoing, Transport};

use crate::error::ClientError;
use crate::inbound::Inbound;

/// A server command: program, arguments, environment, working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerCommand {
    /// The program.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Extra environment variables.
    pub env: Vec<(OsString, OsString)>,
    /// The working directory, when not ours.
    pub cwd: Option<PathBuf>,
}

impl ServerCommand {
    /// A program and its arguments.
    pub fn new(program: impl Into<OsString>, args: impl IntoIterator<Item = impl Into<OsString>>) -> Self {
        ServerCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
            cwd: None,
        }
    }

    /// Adds an environment variable.
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }
}

/// A running server process and the conversation with it.
#[derive(Debug)]
pub(crate) struct StdioWire {
    peer: Peer,
    child: Mutex<Option<Child>>,
}

/// Requests the Peer engine waits on never time out by themselves: the
/// client puts its own deadline around every call.
const NO_ENGINE_TIMEOUT: Duration = Duration::from_secs(365 * 24 * 3600);

impl StdioWire {
    /// Starts the server process.
    pub(crate) fn spawn(command: &ServerCommand, inbound: Arc<Inbound>) -> Result<StdioWire, ClientError> {
        let mut cmd = Command::new(&command.program);
        cmd.args(&command.args);
        for (k, v) in &command.env {
            cmd.env(k, v);
        }
        if let Some(dir) = &command.cwd {
            cmd.current_dir(dir);
        }
        let (transport, child) = spawn_child(cmd, DEFAULT_MAX_LINE)
            .map_err(|e| ClientError::Spawn(format!("{}: {e}", command.program.to_string_lossy())))?;
        Ok(Self::over(transport, Some(child), inbound))
    }

    /// The conversation over a transport someone else opened (and whose
    /// process, if any, they own).
    pub(crate) fn over(transport: Transport, child: Option<Child>, inbound: Arc<Inbound>) -> StdioWire {
        let options = PeerOptions {
            request_timeout: NO_ENGINE_TIMEOUT,
            drain_timeout: Duration::from_secs(1),
            ..PeerOptions::default()
        };
        let (peer, connection) = connect(transport, options);
        tokio::spawn(connection.serve(InboundService(inbound)));
        StdioWire {
            peer,
            child: Mutex::new(child),
        }
    }

    pub(crate) async fn request(
        &self,
        method: &str,
        params: Option<serde_json::Value>,
    ) -> Result<Box<RawValue>, ClientError> {
        self.peer
            .request_with(method, params, NO_ENGINE_TIMEOUT, None)
            .await
            .map_err(|e| match e {
                RpcError::Remote(e) => ClientError::Remote(e),
                RpcError::Timeout(t) => ClientError::Timeout(t),
                RpcError::Cancelled | RpcError::Closed => {
                    ClientError::Disconnected("the server process closed its output or exited".into())
                }
            })
    }

    pub(crate) async fn notify(&self, method: &str, params: Option<serde_json::Value>) -> Result<(), ClientError> {
        self.peer
            .notify(method, params)
            .await
            .map_err(|_| ClientError::Disconnected("the server process is gone".into()))
    }

    pub(crate) fn is_alive(&self) -> bool {
        !self.peer.is_closed()
    }

    /// Closes the server's input, gives it `grace` to exit, then kills it.
    pub(crate) async fn shutdown(&self, grace: Duration) {
        let _ = self.peer.send(Outgoing::Close).await;
        let child = self.child.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(mut child) = child
            && tokio::time::timeout(grace, child.wait()).await.is_err()
        {
            let _ = child.kill().await;
        }
    }
}

/// Answers the server's requests and takes its notifications.
struct InboundService(Arc<Inbound>);

impl Service for InboundService {
    async fn call(&self, request: Request, _cx: RequestContext) -> Result<Box<RawValue>, ErrorObject> {
        let value = self.0.request(request, None).await?;
        serde_json::value::to_raw_value(&value).map_err(ErrorObject::internal)
    }

    fn notification(&self, notification: Notification, _peer: &Peer) {
        self.0.notification(notification);
    }
}
