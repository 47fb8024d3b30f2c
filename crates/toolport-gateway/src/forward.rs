//! A request across the hop: the caller's `tools/call`, `prompts/get` or
//! `resources/read` sent to the upstream slot its share mode picks, with the
//! caller's progress token served by the gateway's own (mapped back), the
//! call cancelled upstream when the caller cancels or goes away, and the
//! upstream's questions asked of the caller (`input.rs`, `park.rs`).

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolport_client::{CallOptions, ClientError};
use toolport_protocol::Era;
use toolport_server::{RequestContext, ToolError};

use crate::input::{Asker, CallInput};
use crate::park::{self, Parking, ParkingLot, Sinks, relay_log};
use crate::pool::{Lease, Pool};

/// One upstream's requests, as the registered entries make them.
#[derive(Debug)]
pub(crate) struct Forwarder {
    pub(crate) pool: Arc<Pool>,
    parked: ParkingLot<Value>,
}

impl Forwarder {
    pub(crate) fn new(pool: Arc<Pool>) -> Arc<Forwarder> {
        Arc::new(Forwarder {
            pool,
            parked: ParkingLot::default(),
        })
    }

    fn name(&self) -> &str {
        &self.pool.config.name
    }

    /// Forwards `method` with `params` for the caller of `cx`; the upstream's
    /// result as it came.
    pub(crate) async fn forward(
        self: &Arc<Self>,
        cx: &RequestContext,
        method: &'static str,
        params: Value,
    ) -> Result<Value, ToolError> {
        if cx.protocol_version().era() == Era::Stateless {
            return self.forward_stateless(cx, method, params).await;
        }
        let lease = self.pool.lease(cx, Asker::Session(cx.clone())).await?;
        let (sinks, (mut updates, mut logs)) = Sinks::new();
        let call = send(
            &lease,
            self.name(),
            cx.wants_progress(),
            sinks,
            Asker::Session(cx.clone()),
            method,
            params,
        );
        tokio::pin!(call);
        loop {
            tokio::select! {
                outcome = &mut call => {
                    // What came on the call's stream before its answer goes first.
                    while let Ok(log) = logs.try_recv() {
                        relay_log(cx, log).await;
                    }
                    return outcome;
                }
                Some(p) = updates.recv() => cx.progress(p.progress, p.total, p.message).await,
                Some(log) = logs.recv() => relay_log(cx, log).await,
                // Dropping the call cancels it upstream.
                _ = cx.cancelled() => return Err(ToolError::Cancelled),
            }
        }
    }

    /// A 2026-07-28 caller: the call runs in a task of its own, so it can
    /// stay parked while the caller answers the upstream's questions.
    async fn forward_stateless(
        self: &Arc<Self>,
        cx: &RequestContext,
        method: &'static str,
        params: Value,
    ) -> Result<Value, ToolError> {
        if let Some(resumed) = self.parked.resume(cx).await {
            return self.parked.follow(cx, resumed?).await;
        }
        // The lease is taken with the parking the slot's questions go to.
        let (qtx, parking) = pending_parking();
        let lease = Arc::new(self.pool.lease(cx, Asker::Parked(parking.clone())).await?);
        let wants_progress = cx.wants_progress();
        let name = self.name().to_owned();
        let held = lease.clone();
        let running = park::spawn_with(Box::new(held), qtx, move |sinks| async move {
            send(
                &lease,
                &name,
                wants_progress,
                sinks,
                Asker::Parked(parking),
                method,
                params,
            )
            .await
        });
        self.parked.follow(cx, running).await
    }
}

/// A parking whose questions channel is made before the call starts, so the
/// lease (taken first) and the call share it.
fn pending_parking() -> (tokio::sync::mpsc::Receiver<park::Question>, Arc<Parking>) {
    Parking::channel()
}

/// One request on a leased slot, its errors said the way a caller can act on.
async fn send(
    lease: &Lease,
    upstream: &str,
    wants_progress: bool,
    sinks: Sinks,
    asker: Asker,
    method: &str,
    params: Value,
) -> Result<Value, ToolError> {
    let mut options = CallOptions::default()
        .timeout(Duration::from_secs(lease.slot.config.timeout_seconds))
        .input(Arc::new(CallInput::new(upstream, asker, sinks.logs)));
    if wants_progress {
        options = options.progress(sinks.progress);
    }
    lease
        .instance
        .client
        .request(method, params, options)
        .await
        .map_err(|e| upstream_error(upstream, e))
}

/// How an upstream failure reaches the caller: its own JSON-RPC errors as
/// they are; the rest as a failure naming the upstream and what happened.
fn upstream_error(upstream: &str, error: ClientError) -> ToolError {
    match error {
        ClientError::Remote(e) => ToolError::Protocol(e),
        ClientError::Timeout(limit) => ToolError::Failed(format!(
            "upstream {upstream} did not answer within {limit:?}; the call was cancelled there"
        )),
        ClientError::Disconnected(_) | ClientError::Closed => ToolError::Failed(format!(
            "upstream {upstream} went away while the call was in flight (it is being restarted); the call may or may not have run there"
        )),
        other => ToolError::Failed(format!("upstream {upstream}: {other}")),
    }
}

/// `tools/call` params for `name`.
pub(crate) fn call_params(name: &str, arguments: Value) -> Value {
    match arguments {
        Value::Null => json!({ "name": name }),
        arguments => json!({ "name": name, "arguments": arguments }),
    }
}
