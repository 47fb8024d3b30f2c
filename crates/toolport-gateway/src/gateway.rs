//! The gateway: its upstreams started, their listings installed and kept up
//! to date, `/ready` from the required ones, and shutdown.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use toolport_client::ClientEvent;
use toolport_server::Server;

use crate::catalog::{Catalog, CatalogError, Listing};
use crate::config::{self, ConfigError, GatewaySection, UpstreamConfig};
use crate::forward::Forwarder;
use crate::metrics;
use crate::pins::{self, Pinning};
use crate::pool::Pool;
use crate::slot::{Instance, SlotState};
use crate::subscriptions::Subscriptions;

/// Why the gateway did not start.
#[derive(Debug, thiserror::Error)]
pub enum GatewayError {
    /// The configuration is wrong.
    #[error("configuration: {0}")]
    Config(#[from] ConfigError),
    /// An upstream's definitions cannot be served (names too long, resource
    /// URIs two upstreams offer).
    #[error("upstream definitions refused:\n  {}", .0.iter().map(|e| e.0.as_str()).collect::<Vec<_>>().join("\n  "))]
    Definitions(Vec<CatalogError>),
    /// The pins file cannot be read.
    #[error("{0}")]
    Pins(#[from] toolport_auth::pinning::PinError),
}

/// How one upstream is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamReport {
    /// Its name.
    pub name: String,
    /// The state of its shared (or catalog) connection.
    pub state: SlotState,
    /// Whether `/ready` depends on it.
    pub required: bool,
    /// Crashes in a row.
    pub crashes: u32,
    /// Why it is not up.
    pub why: Option<String>,
    /// Processes of its pool (`per_principal`, `per_session`).
    pub pooled: usize,
    /// `stdio` or `http`.
    pub transport: &'static str,
    /// Tools served from it now.
    pub tools: usize,
    /// When its state last changed.
    pub since: std::time::SystemTime,
}

/// A running gateway. Dropping it does not stop the upstreams: call
/// [`Gateway::stop`].
#[derive(Debug, Clone)]
pub struct Gateway {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    server: Server,
    section: GatewaySection,
    upstreams: Vec<Arc<Forwarder>>,
    catalog: Catalog,
    pins: Option<Pinning>,
    stop: CancellationToken,
    subscriptions: Subscriptions,
}

impl Gateway {
    /// Starts every upstream, waits (up to `start_timeout_seconds`) for their
    /// first listings and installs them in `server`'s registries. An upstream
    /// not up by then is installed when it comes up. Definitions that cannot
    /// be served are an error here, so a bad configuration fails at start-up.
    pub async fn start(
        section: GatewaySection,
        upstreams: Vec<UpstreamConfig>,
        server: &Server,
    ) -> Result<Gateway, GatewayError> {
        config::check(&section, &upstreams)?;
        let pins = section.pins.as_deref().map(Pinning::open).transpose()?;
        let forwarders = upstreams
            .into_iter()
            .map(|c| Forwarder::new(Pool::start(Arc::new(c))))
            .collect();
        let gateway = Gateway {
            inner: Arc::new(Inner {
                server: server.clone(),
                section,
                upstreams: forwarders,
                catalog: Catalog::default(),
                pins,
                stop: CancellationToken::new(),
                subscriptions: Subscriptions::default(),
            }),
        };
        let limit = Duration::from_secs(gateway.inner.section.start_timeout_seconds);
        let mut problems = Vec::new();
        for fw in &gateway.inner.upstreams {
            let slot = &fw.pool.catalog;
            let mut rx = slot.watch();
            let _ = tokio::time::timeout(limit, rx.wait_for(|s| s.state != SlotState::Starting)).await;
            let status = slot.status();
            match status.instance {
                Some(instance) => problems.extend(gateway.refresh(fw, &instance).await),
                None => tracing::warn!(target: "toolport::upstream", upstream = %fw.pool.config.name,
                    state = status.state.as_str(), why = ?status.why, "not up at start-up; its tools come when it does"),
            }
        }
        if !problems.is_empty() {
            gateway.stop().await;
            return Err(GatewayError::Definitions(problems));
        }
        for fw in &gateway.inner.upstreams {
            tokio::spawn(follow(gateway.clone(), fw.clone()));
        }
        if gateway.inner.pins.is_some() {
            tokio::spawn(watch_pins(gateway.clone()));
        }
        match server.subscription_demand() {
            Some(demand) => {
                tokio::spawn(follow_demand(gateway.clone(), demand));
            }
            None => tracing::warn!(target: "toolport::upstream",
                "another part of this server follows its subscriptions: downstream subscriptions are not made upstream"),
        }
        Ok(gateway)
    }

    /// Reads an upstream's lists and installs them; the problems found.
    async fn refresh(&self, fw: &Arc<Forwarder>, instance: &Instance) -> Vec<CatalogError> {
        let name = fw.pool.config.name.as_str();
        let listing = match Listing::read(instance, fw.pool.config.resources).await {
            Ok(listing) => listing,
            Err(why) => {
                tracing::warn!(target: "toolport::upstream", upstream = %name, "cannot read its lists: {why}");
                return Vec::new();
            }
        };
        let others: Vec<String> = self
            .inner
            .server
            .tools()
            .names()
            .into_iter()
            .filter(|t| self.inner.catalog.upstream_of_tool(t).as_deref() != Some(name))
            .collect();
        metrics::scan_findings(name, pins::scan(name, &listing.tools, others));
        let problems = self.inner.catalog.install(
            &self.inner.server,
            &self.inner.section.separator,
            fw,
            &listing,
            self.inner.pins.as_ref(),
        );
        self.sync_subscriptions(fw, instance).await;
        tracing::info!(target: "toolport::upstream", upstream = %name,
            tools = listing.tools.len(), prompts = listing.prompts.len(), resources = listing.resources.len(),
            templates = listing.templates.len(), version = %instance.server.protocol_version, "listing installed");
        problems
    }

    /// Subscribes `fw`'s upstream to the wanted resources it offers (and
    /// unsubscribes it from the rest).
    async fn sync_subscriptions(&self, fw: &Arc<Forwarder>, instance: &Instance) {
        let (catalog, name) = (&self.inner.catalog, fw.pool.config.name.as_str());
        self.inner
            .subscriptions
            .sync(fw, instance, |uri| catalog.offers(name, uri))
            .await;
    }

    /// Every upstream's state, for `/ready`, logs and tests.
    pub fn report(&self) -> Vec<UpstreamReport> {
        self.inner
            .upstreams
            .iter()
            .map(|fw| {
                let status = fw.pool.catalog.status();
                UpstreamReport {
                    name: fw.pool.config.name.clone(),
                    state: status.state,
                    required: fw.pool.config.required,
                    crashes: status.crashes,
                    why: status.why,
                    pooled: fw.pool.pooled(),
                    transport: if fw.pool.config.is_stdio() { "stdio" } else { "http" },
                    tools: self.inner.catalog.tool_count(&fw.pool.config.name),
                    since: status.since,
                }
            })
            .collect()
    }

    /// The upstream a served tool comes from.
    pub fn upstream_of_tool(&self, tool: &str) -> Option<String> {
        self.inner.catalog.upstream_of_tool(tool)
    }

    /// Stops every upstream: pooled and shared processes get their input
    /// closed, then SIGTERM, then SIGKILL, each after the stop grace.
    pub async fn stop(&self) {
        self.inner.stop.cancel();
        for fw in &self.inner.upstreams {
            let grace = Duration::from_millis(fw.pool.config.restart.stop_grace_ms);
            fw.pool.stop(grace * 3).await;
        }
    }
}

/// Follows one upstream: a new connection (a restart) is listed and
/// installed again; its list changes are installed; an optional upstream
/// that goes down has its entries withdrawn.
async fn follow(gateway: Gateway, fw: Arc<Forwarder>) {
    let mut rx = fw.pool.catalog.watch();
    let first = rx.borrow().instance.clone();
    let mut generation = first.as_ref().map(|i| i.generation);
    let mut events = match first {
        Some(instance) => instance.client.events().await.ok(),
        None => None,
    };
    loop {
        tokio::select! {
            _ = gateway.inner.stop.cancelled() => return,
            changed = rx.changed() => {
                if changed.is_err() {
                    return;
                }
                let status = rx.borrow_and_update().clone();
                match status.instance {
                    Some(instance) if Some(instance.generation) != generation => {
                        generation = Some(instance.generation);
                        events = instance.client.events().await.ok();
                        for p in gateway.refresh(&fw, &instance).await {
                            tracing::error!(target: "toolport::upstream", "{p}");
                        }
                    }
                    Some(_) => {}
                    None => {
                        events = None;
                        if !fw.pool.config.required && status.state != SlotState::Starting {
                            gateway.inner.catalog.withdraw(&gateway.inner.server, &fw.pool.config.name);
                        }
                    }
                }
            }
            Some(event) = next_event(&mut events) => on_event(&gateway, &fw, event).await,
        }
    }
}

async fn next_event(events: &mut Option<toolport_client::Events>) -> Option<ClientEvent> {
    match events {
        Some(e) => e.next().await,
        None => std::future::pending().await,
    }
}

async fn on_event(gateway: &Gateway, fw: &Arc<Forwarder>, event: ClientEvent) {
    let name = &fw.pool.config.name;
    match event {
        ClientEvent::ToolsListChanged
        | ClientEvent::PromptsListChanged
        | ClientEvent::ResourcesListChanged
        | ClientEvent::Lagged(_) => {
            if let Some(instance) = fw.pool.catalog.status().instance {
                for p in gateway.refresh(fw, &instance).await {
                    tracing::error!(target: "toolport::upstream", "{p}");
                }
            }
        }
        ClientEvent::ResourceUpdated { uri } => gateway.inner.server.resource_updated(&uri),
        ClientEvent::Log(log) => {
            tracing::info!(target: "toolport::upstream", upstream = %name, level = ?log.level, logger = ?log.logger, data = %log.data, "upstream log")
        }
        _ => {}
    }
}

/// Follows the server's subscription demand: each change is made upstream.
async fn follow_demand(
    gateway: Gateway,
    mut demand: tokio::sync::mpsc::UnboundedReceiver<toolport_server::DemandChange>,
) {
    loop {
        let change = tokio::select! {
            _ = gateway.inner.stop.cancelled() => return,
            change = demand.recv() => change,
        };
        let Some(change) = change else { return };
        match &change {
            toolport_server::DemandChange::Wanted(uri) => gateway.inner.subscriptions.want(uri, true),
            toolport_server::DemandChange::Unwanted(uri) => gateway.inner.subscriptions.want(uri, false),
        }
        for fw in &gateway.inner.upstreams {
            if let Some(instance) = fw.pool.catalog.status().instance {
                gateway.sync_subscriptions(fw, &instance).await;
            }
        }
    }
}

/// Installs the listings again when the pins file changed (an approval).
async fn watch_pins(gateway: Gateway) {
    let Some(pins) = gateway.inner.pins.as_ref() else {
        return;
    };
    loop {
        tokio::select! {
            _ = gateway.inner.stop.cancelled() => return,
            _ = tokio::time::sleep(Duration::from_millis(500)) => {}
        }
        if pins.reload_if_changed() {
            for fw in &gateway.inner.upstreams {
                if let Some(instance) = fw.pool.catalog.status().instance {
                    for p in gateway.refresh(fw, &instance).await {
                        tracing::error!(target: "toolport::upstream", "{p}");
                    }
                }
            }
        }
    }
}

#[async_trait::async_trait]
impl toolport_http::ReadinessCheck for Gateway {
    fn name(&self) -> &str {
        "upstreams"
    }

    /// Fails while a required upstream is not up, naming it and why.
    async fn check(&self) -> Result<(), String> {
        let down: Vec<String> = self
            .report()
            .into_iter()
            .filter(|r| r.required && r.state != SlotState::Up)
            .map(|r| {
                format!(
                    "upstream {} is {}{}",
                    r.name,
                    r.state.as_str(),
                    r.why.map(|w| format!(" ({w})")).unwrap_or_default()
                )
            })
            .collect();
        if down.is_empty() { Ok(()) } else { Err(down.join("; ")) }
    }
}
