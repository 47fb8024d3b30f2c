//! The server: its identity, its registries and its options.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolport_protocol::ProtocolVersion;
use toolport_protocol::capabilities::{Implementation, ListChangedCapability, ResourcesCapability, ServerCapabilities};

use crate::audit::AuditLog;
pub use crate::cache::CacheHints;
use crate::events::ServerEvent;
use crate::extension::{Extension, Extensions};
use crate::input::StateSealer;
use crate::policy::{Policies, PolicyConfig, PolicyStores};
use crate::prompt::PromptEntry;
use crate::registry::{DefinitionError, Registry};
use crate::resource::{ResourceEntry, TemplateEntry};
use crate::state::{EventBus, EventSubscription, IdempotencyStore, KeyRing, MemoryEventBus, RateLimiter};
use crate::task_state::TaskRuntime;
use crate::tool::ToolEntry;
use toolport_tasks::TaskEngine;

/// Tunable behaviour of a server.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Entries per page of a list result.
    pub page_size: usize,
    /// Cache hints for `tools/list`, `prompts/list`, `resources/list`,
    /// `resources/templates/list` and `server/discover`.
    pub list_cache: CacheHints,
    /// Cache hints for `resources/read`.
    pub read_cache: CacheHints,
    /// How long a `requestState` stays valid.
    pub request_state_ttl: Duration,
    /// The versions this server speaks; the default is all of them.
    pub versions: Vec<ProtocolVersion>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            page_size: 100,
            list_cache: CacheHints::default(),
            read_cache: CacheHints::default(),
            request_state_ttl: Duration::from_secs(600),
            versions: ProtocolVersion::ALL.to_vec(),
        }
    }
}

/// An MCP server: tools, resources and prompts behind both protocol eras.
/// Cheap to clone; clones share everything.
#[derive(Clone)]
pub struct Server {
    pub(crate) inner: Arc<ServerInner>,
}

pub(crate) struct ServerInner {
    pub(crate) info: Implementation,
    /// `info` as JSON, put into every 2026-07-28 result's `_meta`.
    pub(crate) info_value: Value,
    /// The `_meta` of a 2026-07-28 result that has none of its own
    /// (`{"io.modelcontextprotocol/serverInfo": info}`), serialized once.
    pub(crate) info_meta_raw: Box<serde_json::value::RawValue>,
    pub(crate) instructions: Option<String>,
    pub(crate) tools: Registry<ToolEntry>,
    pub(crate) resources: Registry<ResourceEntry>,
    pub(crate) templates: Registry<TemplateEntry>,
    pub(crate) prompts: Registry<PromptEntry>,
    /// Where list changes and resource updates are announced.
    pub(crate) events: Arc<dyn EventBus>,
    pub(crate) sealer: StateSealer,
    pub(crate) options: ServerOptions,
    /// Fires on shutdown: long-lived requests (listen) end with a result.
    pub(crate) shutdown: CancellationToken,
    /// Limits, deadlines and idempotency around tool calls.
    pub(crate) policies: Policies,
    /// Where tool calls are recorded, if anywhere.
    pub(crate) audit: Option<Arc<AuditLog>>,
    /// Methods and capabilities beyond the core protocol.
    pub(crate) extensions: Extensions,
    /// The calls running now and the recent failures.
    pub(crate) activity: Arc<crate::activity::Activity>,
    /// Metric handles per method, registered on first use.
    pub(crate) method_metrics: std::sync::OnceLock<crate::metrics::MethodMetrics>,
    /// Which resources clients follow right now.
    pub(crate) demand: Arc<crate::demand::Demand>,
    /// Durable tasks, when the server runs tools as tasks.
    pub(crate) tasks: Option<Arc<TaskRuntime>>,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.inner.info.name)
            .field("tools", &self.inner.tools)
            .finish()
    }
}

/// Builds a [`Server`].
#[derive(Debug)]
pub struct ServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<ToolEntry>,
    resources: Vec<ResourceEntry>,
    templates: Vec<TemplateEntry>,
    prompts: Vec<PromptEntry>,
    options: ServerOptions,
    key_ring: Option<KeyRing>,
    policies: PolicyConfig,
    audit: Option<AuditLog>,
    pub(crate) extensions: Vec<Extension>,
    idempotency_store: Option<Arc<dyn IdempotencyStore>>,
    rate_limiter: Option<Arc<dyn RateLimiter>>,
    event_bus: Option<Arc<dyn EventBus>>,
    /// Set by [`ServerBuilder::tasks`].
    pub(crate) tasks: Option<Arc<TaskRuntime>>,
}

impl Server {
    /// Starts building a server with this name and version.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> ServerBuilder {
        ServerBuilder {
            info: Implementation::new(name, version),
            instructions: None,
            tools: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            prompts: Vec::new(),
            options: ServerOptions::default(),
            key_ring: None,
            policies: PolicyConfig::default(),
            audit: None,
            extensions: Vec::new(),
            idempotency_store: None,
            rate_limiter: None,
            event_bus: None,
            tasks: None,
        }
    }

    /// Who this server says it is.
    pub fn info(&self) -> &Implementation {
        &self.inner.info
    }

    /// The tools; add and remove while serving.
    pub fn tools(&self) -> &Registry<ToolEntry> {
        &self.inner.tools
    }

    /// The fixed resources.
    pub fn resources(&self) -> &Registry<ResourceEntry> {
        &self.inner.resources
    }

    /// The resource templates.
    pub fn templates(&self) -> &Registry<TemplateEntry> {
        &self.inner.templates
    }

    /// The prompts.
    pub fn prompts(&self) -> &Registry<PromptEntry> {
        &self.inner.prompts
    }

    /// The options.
    pub fn options(&self) -> &ServerOptions {
        &self.inner.options
    }

    /// Announces that a resource's contents changed: subscribers and listeners
    /// get `notifications/resources/updated`.
    pub fn resource_updated(&self, uri: &str) {
        self.inner.events.publish(ServerEvent::ResourceUpdated(uri.to_owned()));
    }

    /// When a resource gets its first follower here (a session's
    /// `resources/subscribe`, a listen stream's `resourceSubscriptions`) and
    /// when it loses its last (unsubscribed, session ended, stream closed),
    /// starting with the resources followed already. For a server whose
    /// resources live elsewhere, to subscribe there only while wanted. One
    /// receiver per server: `None` once taken.
    pub fn subscription_demand(&self) -> Option<tokio::sync::mpsc::UnboundedReceiver<crate::DemandChange>> {
        self.inner.demand.follow()
    }

    /// Announces that a resource's contents changed, as one `version` of it
    /// (for a file: its modification time and size). Replicas that each
    /// notice the same change (they watch one shared folder) announce the
    /// same version, and a shared bus delivers it once, not once per replica.
    pub fn resource_updated_version(&self, uri: &str, version: &str) {
        self.inner
            .events
            .publish_once(ServerEvent::ResourceUpdated(uri.to_owned()), version);
    }

    /// Every change from now on.
    pub fn events(&self) -> EventSubscription {
        self.inner.events.subscribe()
    }

    /// Waits until every audit record of the calls answered so far is
    /// written and flushed (a record is queued before its call is answered).
    /// Blocks the calling thread; returns at once without an audit stream.
    pub fn flush_audit(&self) {
        if let Some(audit) = &self.inner.audit {
            audit.sync();
        }
    }

    /// The tool calls running now, the recent failures and the rate limits'
    /// refusals: what an operator looks at (the console's admin API).
    pub fn activity(&self) -> &crate::activity::Activity {
        &self.inner.activity
    }

    /// The concurrency gates as they are now: configured ones, and the
    /// principals' gates that hold or queue a call.
    pub fn gates(&self) -> Vec<crate::policy::GateState> {
        self.inner.policies.gate_states()
    }

    /// The configured rate limits.
    pub fn rate_limits(&self) -> &[crate::policy::RateLimitState] {
        self.inner.policies.rate_limits()
    }

    /// Declares every metric this server records (its `# HELP` text) and
    /// creates each series it knows of at zero, in the metrics recorder
    /// installed now: a scrape right after start-up sees every series, not
    /// only those a request happened to touch. Call it once the recorder is
    /// installed; tools added later appear with their first call.
    pub fn register_metrics(&self) {
        crate::metrics::describe();
        let _ = self
            .inner
            .method_metrics
            .get_or_init(crate::metrics::MethodMetrics::all);
        for entry in self.inner.tools.all() {
            entry.metrics();
            crate::metrics::register_tool(&entry.definition().name);
        }
    }

    /// Writes the audit stream's closing checkpoint and ends it; calls
    /// audited after this are refused (and logged). Call it at shutdown,
    /// once no calls run.
    pub fn close_audit(&self) {
        if let Some(audit) = &self.inner.audit {
            audit.close();
        }
    }

    /// Ends long-lived requests (listen streams) with a result; used on shutdown.
    pub fn shutdown(&self) {
        self.inner.shutdown.cancel();
    }

    /// What this server offers, for `initialize` and `server/discover`.
    pub fn capabilities(&self) -> ServerCapabilities {
        let listed = Some(ListChangedCapability {
            list_changed: Some(true),
        });
        ServerCapabilities {
            tools: listed.clone(),
            prompts: listed,
            resources: Some(ResourcesCapability {
                subscribe: Some(true),
                list_changed: Some(true),
            }),
            logging: Some(Default::default()),
            completions: Some(Default::default()),
            extensions: self.inner.extensions.advertised(),
            ..Default::default()
        }
    }

    /// The task engine, when the server runs tools as tasks.
    pub fn task_engine(&self) -> Option<&TaskEngine> {
        self.inner.tasks.as_ref().map(|t| &t.engine)
    }

    /// Keeps the tasks healthy until shutdown: every `every`, tasks whose
    /// process died are failed (or, for a resumable tool, run again here) and
    /// tasks past their time to live are deleted. Returns at once without
    /// tasks.
    pub async fn maintain_tasks(&self, every: Duration) {
        let Some(runtime) = self.inner.tasks.clone() else {
            return;
        };
        let (claimed_tx, mut claimed) = tokio::sync::mpsc::channel(64);
        let maintenance = tokio::spawn(runtime.engine.clone().maintain(every, claimed_tx));
        loop {
            tokio::select! {
                task = claimed.recv() => match task {
                    Some(task) => self.resume_task(task),
                    None => break,
                },
                _ = self.inner.shutdown.cancelled() => break,
            }
        }
        maintenance.abort();
    }

    /// The 2025-11-25 `tasks` capability, when tools run as tasks.
    pub(crate) fn tasks_capability(&self) -> Option<serde_json::Value> {
        self.inner
            .tasks
            .as_ref()
            .map(|_| serde_json::json!({ "list": {}, "cancel": {}, "requests": { "tools": { "call": {} } } }))
    }

    /// Whether `version` is one this server speaks.
    pub fn supports(&self, version: ProtocolVersion) -> bool {
        self.inner.options.versions.contains(&version)
    }
}

impl ServerBuilder {
    /// Display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// What the server is, for people.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.info.description = Some(description.into());
        self
    }

    /// How to use the server, for the model.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Adds a tool.
    pub fn tool(mut self, entry: ToolEntry) -> Self {
        self.tools.push(entry);
        self
    }

    /// Adds a resource.
    pub fn resource(mut self, entry: ResourceEntry) -> Self {
        self.resources.push(entry);
        self
    }

    /// Adds a resource template.
    pub fn template(mut self, entry: TemplateEntry) -> Self {
        self.templates.push(entry);
        self
    }

    /// Adds a prompt.
    pub fn prompt(mut self, entry: PromptEntry) -> Self {
        self.prompts.push(entry);
        self
    }

    /// Replaces the options.
    pub fn options(mut self, options: ServerOptions) -> Self {
        self.options = options;
        self
    }

    /// The secret that seals `requestState` (a key ring of one key, id
    /// `"0"`). Replicas behind one load balancer must share it; without one,
    /// a random key is made and states do not survive a restart.
    pub fn request_state_key(mut self, key: [u8; 32]) -> Self {
        self.key_ring = Some(KeyRing::new("0", key).expect("a valid key id"));
        self
    }

    /// The keys that seal and open `requestState`: the first seals, all
    /// open, so that replicas can rotate keys without refusing states in
    /// flight.
    pub fn request_state_keys(mut self, keys: KeyRing) -> Self {
        self.key_ring = Some(keys);
        self
    }

    /// Where idempotency records live (a shared store across replicas); by
    /// default in memory, keeping results for the configured time to live.
    pub fn idempotency_store(mut self, store: Arc<dyn IdempotencyStore>) -> Self {
        self.idempotency_store = Some(store);
        self
    }

    /// Where rate buckets live (a shared store across replicas); by default
    /// in memory.
    pub fn rate_limiter(mut self, limiter: Arc<dyn RateLimiter>) -> Self {
        self.rate_limiter = Some(limiter);
        self
    }

    /// The bus that carries list changes and resource updates (a shared one
    /// across replicas); by default within this process.
    pub fn event_bus(mut self, bus: Arc<dyn EventBus>) -> Self {
        self.event_bus = Some(bus);
        self
    }

    /// Limits, deadlines, rate limits and idempotency keys for tool calls.
    pub fn policies(mut self, policies: PolicyConfig) -> Self {
        self.policies = policies;
        self
    }

    /// Records every tool call in an audit stream.
    pub fn audit(mut self, audit: AuditLog) -> Self {
        self.audit = Some(audit);
        self
    }

    /// Adds an extension: its methods are answered in both eras and its
    /// settings advertised under `capabilities.extensions`.
    pub fn extension(mut self, extension: Extension) -> Self {
        self.extensions.push(extension);
        self
    }

    /// Builds the server, or names the first definition that is invalid.
    pub fn build(self) -> Result<Server, DefinitionError> {
        let tasks = self.tasks;
        let extensions = Extensions::new(self.extensions, crate::metrics::CORE_METHODS)?;
        let audit = self.audit.map(Arc::new);
        let events = self.event_bus.unwrap_or_else(|| Arc::new(MemoryEventBus::default()));
        let ttl = self.options.request_state_ttl;
        let sealer = StateSealer::new(self.key_ring.unwrap_or_else(KeyRing::random), ttl);
        let activity = Arc::new(crate::activity::Activity::default());
        let inner = ServerInner {
            info_value: serde_json::to_value(&self.info).expect("implementation info serializes"),
            info_meta_raw: serde_json::value::to_raw_value(
                &[(toolport_protocol::meta::keys::SERVER_INFO, &self.info)]
                    .into_iter()
                    .collect::<std::collections::BTreeMap<_, _>>(),
            )
            .expect("implementation info serializes"),
            info: self.info,
            instructions: self.instructions,
            tools: Registry::new(events.clone()),
            resources: Registry::new(events.clone()),
            templates: Registry::new(events.clone()),
            prompts: Registry::new(events.clone()),
            events,
            sealer,
            options: self.options,
            shutdown: CancellationToken::new(),
            policies: Policies::new(
                self.policies,
                PolicyStores {
                    idempotency: self.idempotency_store,
                    rates: self.rate_limiter,
                    audit: audit.clone(),
                    activity: activity.clone(),
                },
            ),
            activity,
            audit,
            method_metrics: std::sync::OnceLock::new(),
            demand: Arc::default(),
            extensions,
            tasks,
        };
        for t in self.tools {
            inner.tools.insert(t)?;
        }
        for r in self.resources {
            inner.resources.insert(r)?;
        }
        for t in self.templates {
            inner.templates.insert(t)?;
        }
        for p in self.prompts {
            inner.prompts.insert(p)?;
        }
        Ok(Server { inner: Arc::new(inner) })
    }
}
