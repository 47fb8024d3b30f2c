//! One connection to an upstream and its supervision: a stdio process
//! started, watched and restarted with backoff, or an HTTP upstream
//! connected (the client reconnects by itself). A pool holds one slot per
//! sharing key.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use toolport_client::{Client, ClientOptions, ServerInfo, VersionPolicy};

use crate::config::UpstreamConfig;
use crate::credentials::{self, CallerToken};
use crate::input::{SlotHandler, SlotInput};
use crate::metrics;
use crate::process::{StderrTail, UpstreamProcess};

/// Where a slot is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotState {
    /// Starting (or restarting) and opening the conversation.
    Starting,
    /// Connected: calls go through.
    Up,
    /// Crashed or unreachable; waiting for the next restart.
    Down,
    /// Crashed `crash_loop_after` times in a row; restarts go on at the
    /// longest backoff.
    CrashLoop,
    /// Stopped for good (shutdown, or an idle pooled process).
    Stopped,
}

impl SlotState {
    /// The name `/ready` and `/metrics` use.
    pub fn as_str(self) -> &'static str {
        match self {
            SlotState::Starting => "starting",
            SlotState::Up => "up",
            SlotState::Down => "down",
            SlotState::CrashLoop => "crash_loop",
            SlotState::Stopped => "stopped",
        }
    }
}

/// A live conversation with the upstream.
#[derive(Debug)]
pub(crate) struct Instance {
    pub(crate) client: Client,
    pub(crate) server: ServerInfo,
    /// Counts up with each (re)start: list refreshes know a new process.
    pub(crate) generation: u64,
}

/// What a slot's watchers see.
#[derive(Debug, Clone)]
pub(crate) struct Status {
    pub(crate) state: SlotState,
    pub(crate) instance: Option<Arc<Instance>>,
    /// Why it is not up, for errors and `/ready`.
    pub(crate) why: Option<String>,
    /// Crashes in a row.
    pub(crate) crashes: u32,
    /// When the slot entered its state.
    pub(crate) since: std::time::SystemTime,
}

/// One connection slot.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) config: Arc<UpstreamConfig>,
    /// What the slot serves: "" for the shared one, else the sharing key.
    pub(crate) key: String,
    status: watch::Sender<Status>,
    stop: CancellationToken,
    pub(crate) in_flight: AtomicUsize,
    last_used: Mutex<Instant>,
    pub(crate) input: Arc<SlotInput>,
    restarts: AtomicU64,
    /// With `forward_token`: the token of the caller this slot serves.
    pub(crate) caller_token: Arc<CallerToken>,
}

impl Slot {
    /// A slot for `key`, started at once; `caller_token` is the token of the
    /// caller it serves (`forward_token`), none for the shared or catalog one.
    pub(crate) fn start(
        config: Arc<UpstreamConfig>,
        key: String,
        caller_token: Option<toolport_server::Credential>,
    ) -> Arc<Slot> {
        let status = watch::Sender::new(Status {
            state: SlotState::Starting,
            instance: None,
            why: None,
            crashes: 0,
            since: std::time::SystemTime::now(),
        });
        let slot = Arc::new(Slot {
            input: Arc::new(SlotInput::new(config.clone())),
            config,
            key,
            status,
            stop: CancellationToken::new(),
            in_flight: AtomicUsize::new(0),
            last_used: Mutex::new(Instant::now()),
            restarts: AtomicU64::new(0),
            caller_token: Arc::new(CallerToken::new(caller_token)),
        });
        tokio::spawn(supervise(slot.clone()));
        slot
    }

    pub(crate) fn status(&self) -> Status {
        self.status.borrow().clone()
    }

    pub(crate) fn watch(&self) -> watch::Receiver<Status> {
        self.status.subscribe()
    }

    pub(crate) fn touch(&self) {
        *self.last_used.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    pub(crate) fn idle_for(&self) -> Duration {
        self.last_used.lock().unwrap_or_else(|p| p.into_inner()).elapsed()
    }

    /// Stops the slot (and its process) for good.
    pub(crate) fn stop(&self) {
        self.stop.cancel();
    }

    /// Whether the slot was told to stop.
    pub(crate) fn is_stopping(&self) -> bool {
        self.stop.is_cancelled()
    }

    /// Waits until the slot has stopped (bounded by the caller).
    pub(crate) async fn stopped(&self) {
        let mut rx = self.watch();
        let _ = rx.wait_for(|s| s.state == SlotState::Stopped).await;
    }

    fn set(&self, state: SlotState, instance: Option<Arc<Instance>>, why: Option<String>, crashes: u32) {
        // `since` is when the state changed, not when it was last set again.
        let since = match &*self.status.borrow() {
            now if now.state == state => now.since,
            _ => std::time::SystemTime::now(),
        };
        self.status.send_replace(Status {
            state,
            instance,
            why,
            crashes,
            since,
        });
        if self.key.is_empty() {
            metrics::slot_state(&self.config.name, state.as_str());
        }
    }

    /// Waits for the slot to be up, at most `limit`; a slot that is down
    /// answers at once with why.
    pub(crate) async fn ready(&self, limit: Duration) -> Result<Arc<Instance>, String> {
        let mut rx = self.watch();
        let name = &self.config.name;
        let outcome = tokio::time::timeout(limit, rx.wait_for(|s| s.state != SlotState::Starting)).await;
        let status = match outcome {
            Err(_) => return Err(format!("upstream {name} is still starting after {limit:?}")),
            Ok(Err(_)) => return Err(format!("upstream {name} is stopped")),
            Ok(Ok(status)) => status.clone(),
        };
        match (status.state, status.instance) {
            (SlotState::Up, Some(instance)) => Ok(instance),
            (state, _) => Err(format!(
                "upstream {name} is {}{}",
                match state {
                    SlotState::CrashLoop => "crash-looping and held off",
                    SlotState::Stopped => "stopped",
                    _ => "down and being restarted",
                },
                status.why.map(|w| format!(" ({w})")).unwrap_or_default()
            )),
        }
    }

    fn options(&self) -> ClientOptions {
        let version = match self.config.protocol.as_deref() {
            None | Some("auto") => VersionPolicy::Auto,
            Some(v) => v.parse().unwrap_or_default(),
        };
        ClientOptions {
            client_info: toolport_protocol::capabilities::Implementation::new(
                "toolport-gateway",
                env!("CARGO_PKG_VERSION"),
            ),
            version,
            request_timeout: Duration::from_secs(self.config.timeout_seconds),
            ..ClientOptions::default()
        }
    }
}

static GENERATION: AtomicU64 = AtomicU64::new(1);

/// The slot's life: open, serve until the process exits or the connection
/// fails, back off, again; until stopped.
async fn supervise(slot: Arc<Slot>) {
    let restart = slot.config.restart.clone();
    let mut crashes = 0u32;
    loop {
        if slot.stop.is_cancelled() {
            break;
        }
        slot.set(SlotState::Starting, None, None, crashes);
        let started = Instant::now();
        let why = if slot.config.is_stdio() {
            run_process(&slot).await
        } else {
            run_http(&slot).await
        };
        let Some(why) = why else { break };
        slot.restarts.fetch_add(1, Ordering::Relaxed);
        if slot.key.is_empty() {
            metrics::restarted(&slot.config.name);
        }
        crashes = if started.elapsed() >= Duration::from_secs(restart.healthy_after_seconds) {
            1
        } else {
            crashes + 1
        };
        let state = if crashes >= restart.crash_loop_after {
            SlotState::CrashLoop
        } else {
            SlotState::Down
        };
        let delay = restart.backoff(crashes);
        tracing::warn!(
            target: "toolport::upstream",
            upstream = %slot.config.name,
            key = %slot.key,
            crashes,
            state = state.as_str(),
            "{why}; restarting in {delay:?}"
        );
        slot.set(state, None, Some(why), crashes);
        tokio::select! {
            _ = slot.stop.cancelled() => break,
            _ = tokio::time::sleep(delay) => {}
        }
    }
    slot.set(SlotState::Stopped, None, Some("stopped".into()), crashes);
}

/// One life of a stdio process. `None` when the slot was stopped, else why
/// the process is gone.
async fn run_process(slot: &Arc<Slot>) -> Option<String> {
    let config = &slot.config;
    let tail = Arc::new(StderrTail::default());
    let (mut process, transport) = match UpstreamProcess::spawn(config, tail.clone()) {
        Ok(started) => started,
        Err(e) => {
            return Some(format!(
                "cannot start {:?}: {e}",
                config.command.as_deref().unwrap_or_default()
            ));
        }
    };
    tracing::info!(target: "toolport::upstream", upstream = %config.name, key = %slot.key, pid = ?process.id(), "started");
    let client = match Client::over(transport)
        .options(slot.options())
        .handler(SlotHandler(slot.input.clone()))
        .build()
    {
        Ok(client) => client,
        Err(e) => return Some(format!("cannot open the conversation: {e}")),
    };
    let grace = Duration::from_millis(config.restart.stop_grace_ms);
    let opened = tokio::select! {
        opened = client.server() => opened,
        status = process.exited() => {
            return Some(format!("exited while starting ({}){}", describe(status), stderr_hint(&tail)));
        }
        _ = slot.stop.cancelled() => {
            client.close().await;
            process.stop(grace).await;
            return None;
        }
    };
    let server = match opened {
        Ok(server) => server,
        Err(e) => {
            client.close().await;
            process.stop(grace).await;
            return Some(format!("the MCP opening failed: {e}{}", stderr_hint(&tail)));
        }
    };
    ask_for_logs(&client, &server).await;
    let instance = Arc::new(Instance {
        client: client.clone(),
        server,
        generation: GENERATION.fetch_add(1, Ordering::Relaxed),
    });
    slot.set(SlotState::Up, Some(instance), None, 0);
    tokio::select! {
        status = process.exited() => {
            // Its pipes are closed now (the whole group is gone): calls in
            // flight have failed at once; closing drops what is left.
            client.close().await;
            Some(format!("exited ({}){}", describe(status), stderr_hint(&tail)))
        }
        _ = slot.stop.cancelled() => {
            client.close().await;
            process.stop(grace).await;
            None
        }
    }
}

/// An HTTP upstream: connected once; the client reconnects by itself after.
async fn run_http(slot: &Arc<Slot>) -> Option<String> {
    let config = &slot.config;
    let url = config.url.clone().unwrap_or_default();
    let mut builder = Client::http(url.clone())
        .options(slot.options())
        .handler(SlotHandler(slot.input.clone()));
    // A slot serving one caller of a `forward_token` upstream speaks with
    // that caller's token; the rest with the gateway's own, if any.
    if config.forward_token && !slot.key.is_empty() {
        builder = builder.auth(slot.caller_token.clone());
    } else if let Some(own) = credentials::own(config, &url) {
        builder = builder.auth(own);
    }
    let client = match builder.build() {
        Ok(client) => client,
        Err(e) => return Some(format!("bad upstream URL: {e}")),
    };
    let opened = tokio::select! {
        opened = client.server() => opened,
        _ = slot.stop.cancelled() => return None,
    };
    match opened {
        Ok(server) => {
            ask_for_logs(&client, &server).await;
            let instance = Arc::new(Instance {
                client: client.clone(),
                server,
                generation: GENERATION.fetch_add(1, Ordering::Relaxed),
            });
            slot.set(SlotState::Up, Some(instance), None, 0);
            slot.stop.cancelled().await;
            client.close().await;
            None
        }
        Err(e) => {
            client.close().await;
            Some(format!("cannot connect: {e}"))
        }
    }
}

/// A 2026-07-28 upstream sends log messages only to requests that ask for
/// them: every request asks for all (each caller's own level filters them
/// on the way back). A handshake-era upstream sends them without asking.
async fn ask_for_logs(client: &Client, server: &ServerInfo) {
    if server.era() == toolport_protocol::Era::Stateless && server.capabilities.logging.is_some() {
        let _ = client
            .set_log_level(toolport_protocol::logging::LoggingLevel::Debug)
            .await;
    }
}

fn describe(status: std::io::Result<std::process::ExitStatus>) -> String {
    match status {
        Ok(status) => status.to_string(),
        Err(e) => format!("wait failed: {e}"),
    }
}

fn stderr_hint(tail: &StderrTail) -> String {
    let last = tail.last(3);
    if last.is_empty() {
        String::new()
    } else {
        format!("; its stderr ended with: {last}")
    }
}
