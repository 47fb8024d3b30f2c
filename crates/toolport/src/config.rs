//! Configuration: one TOML file, every key overridable by an environment
//! variable, checked completely at start-up.
//!
//! Environment overrides: `TOOLPORT_<SECTION>__<KEY>` for any key (double
//! underscore between levels, for example `TOOLPORT_HTTP__BIND` or
//! `TOOLPORT_LIMITS__TOOLS__SEARCH__DEADLINE_MS`), and the familiar names
//! `MCP_TRANSPORT`, `MAX_CONCURRENT_TOOLS`, `SESSION_TIMEOUT_SECONDS`,
//! `DB_POOL_SIZE`, `OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_SERVICE_NAME`,
//! `OAUTH_ISSUER`, `OAUTH_JWKS_URI`, `OAUTH_RESOURCE`, `TOOLPORT_STATE_URL`,
//! `TOOLPORT_SEAL_KEYS` and `TOOLPORT_AUDIT_KEY_FILE`.
//! Values are read as TOML (`10`, `true`, `["a", "b"]`), or as a string when
//! they are not valid TOML.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use toolport_http::{HttpConfig, ResponseMode};
use toolport_server::policy::PolicyConfig;

mod audit;
mod oauth;
pub use self::audit::{AuditSection, default_key_file};
pub use self::oauth::OAuthSection;

/// The whole configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// `http` (the default) or `stdio` (`MCP_TRANSPORT`).
    pub transport: Transport,
    /// The HTTP transport.
    pub http: HttpSection,
    /// Limits, deadlines, rate limits and idempotency around tool calls.
    pub limits: PolicyConfig,
    /// The audit stream.
    pub audit: AuditSection,
    /// Logging.
    pub log: LogSection,
    /// Prometheus metrics at `/metrics`.
    pub metrics: MetricsSection,
    /// The filesystem and SQL packs a bare `toolport serve` offers (docs/packs.md).
    pub packs: toolport_packs::PacksConfig,
    /// Export of request spans over OTLP.
    pub telemetry: TelemetrySection,
    /// The endpoint as an OAuth 2.1 resource server (docs/security.md).
    pub oauth: OAuthSection,
    /// Gateway-wide settings (docs/gateway.md).
    pub gateway: toolport_gateway::GatewaySection,
    /// MCP servers served through this one (`[[upstream]]`, docs/gateway.md);
    /// with any, `toolport serve` is a gateway instead of the packs server.
    pub upstream: Vec<toolport_gateway::UpstreamConfig>,
    /// Durable tasks (docs/tasks.md).
    pub tasks: crate::tasks::TasksSection,
    /// State shared by replicas (Redis) and the keys that seal `requestState`.
    pub state: crate::state::StateSection,
    /// The web console at `/ui` and its admin API (docs/console.md).
    pub ui: UiSection,
    /// A2A beside MCP (docs/a2a.md).
    pub a2a: crate::a2a::A2aSection,
}

/// The web console's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UiSection {
    /// Serve the console at `/ui` and its API at `/admin/` (`--ui`).
    pub enabled: bool,
    /// With OAuth on: the scopes that let a caller see and stop everyone's
    /// work; others see their own. Empty: every authenticated caller.
    pub admin_scopes: Vec<String>,
    /// With OAuth on: the console's client id at the authorization server (a
    /// public client with the redirect URI `<origin>/ui/callback`); unset:
    /// the console takes a pasted token only.
    pub oauth_client_id: Option<String>,
    /// The scopes the console signs in with; default: `oauth.scopes`.
    pub oauth_scopes: Option<Vec<String>>,
    /// The report of `toolport bench --report` (or `--json`) the console shows.
    pub bench_report: Option<PathBuf>,
}

impl UiSection {
    /// Checks the section against the final `[oauth]` (flags applied).
    pub fn check_with(&self, oauth: &OAuthSection) -> Result<(), ConfigError> {
        match &self.oauth_client_id {
            Some(id) if oauth.issuer.is_none() => Err(ConfigError::Invalid {
                key: "ui.oauth_client_id".into(),
                value: format!("{id:?}"),
                expected: "oauth.issuer as well: the console signs in at the server's authorization server".into(),
                origin: "with the [oauth] settings in force".into(),
            }),
            _ => Ok(()),
        }
    }
}

impl Default for UiSection {
    fn default() -> Self {
        UiSection {
            enabled: false,
            admin_scopes: vec![toolport_console::DEFAULT_ADMIN_SCOPE.to_owned()],
            oauth_client_id: None,
            oauth_scopes: None,
            bench_report: None,
        }
    }
}

/// OpenTelemetry export.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TelemetrySection {
    /// An OTLP/HTTP collector (`OTEL_EXPORTER_OTLP_ENDPOINT`), for example
    /// `http://127.0.0.1:4318`; spans go to its `/v1/traces`. None: no export.
    pub otlp_endpoint: Option<String>,
    /// The `service.name` of the exported spans (`OTEL_SERVICE_NAME`).
    pub service_name: String,
}

impl Default for TelemetrySection {
    fn default() -> Self {
        TelemetrySection {
            otlp_endpoint: None,
            service_name: "toolport".into(),
        }
    }
}

/// How the server is reached.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// Streamable HTTP; also spelled `streamable-http`, the transport's name
    /// in the spec and in the SDKs' deployment settings.
    #[default]
    #[serde(alias = "streamable-http")]
    Http,
    /// stdin/stdout.
    Stdio,
}

/// The HTTP transport's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HttpSection {
    /// Where to listen.
    pub bind: String,
    /// The MCP endpoint's path.
    pub path: String,
    /// Origins allowed besides loopback ones; `*` for any.
    pub allowed_origins: Vec<String>,
    /// Host names a request may address; loopback names by default when bound to loopback.
    pub allowed_hosts: Option<Vec<String>>,
    /// Largest request body.
    pub max_body_bytes: usize,
    /// Handshake-era sessions (`false`: stateless, any replica answers any request).
    pub sessions: bool,
    /// How long an unused session lives (`SESSION_TIMEOUT_SECONDS`).
    pub session_timeout_seconds: u64,
    /// Most sessions at once.
    pub max_sessions: usize,
    /// Interval of keep-alive comments on idle SSE streams.
    pub keep_alive_seconds: u64,
    /// How long a handshake-era request waits for its vanished client to resume.
    pub resume_grace_seconds: u64,
    /// After SIGTERM: how long `/ready` fails while the server still serves,
    /// so a load balancer stops routing here first.
    pub drain_delay_seconds: u64,
    /// Then: how long in-flight requests may take to finish.
    pub shutdown_grace_seconds: u64,
    /// Always answer with SSE when the client accepts it (`false`: JSON unless the request streams).
    pub always_sse: bool,
}

impl Default for HttpSection {
    fn default() -> Self {
        let d = HttpConfig::default();
        HttpSection {
            bind: d.bind.to_string(),
            path: d.path,
            allowed_origins: d.allowed_origins,
            allowed_hosts: d.allowed_hosts,
            max_body_bytes: d.max_body_bytes,
            sessions: d.sessions,
            session_timeout_seconds: d.session_idle_timeout.as_secs(),
            max_sessions: d.max_sessions,
            keep_alive_seconds: d.keep_alive.as_secs(),
            resume_grace_seconds: d.resume_grace.as_secs(),
            drain_delay_seconds: DRAIN_DELAY_SECONDS,
            shutdown_grace_seconds: d.shutdown_grace.as_secs(),
            always_sse: false,
        }
    }
}

/// `toolport serve` drains this long by default: about what a load
/// balancer or Kubernetes takes to notice a failing `/ready` and route away.
const DRAIN_DELAY_SECONDS: u64 = 5;

/// Logging settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LogSection {
    /// A tracing filter, for example `info` or `toolport_http=debug,warn`.
    pub level: String,
    /// `text` or `json`.
    pub format: LogFormat,
}

impl Default for LogSection {
    fn default() -> Self {
        LogSection {
            level: "warn".into(),
            format: LogFormat::Text,
        }
    }
}

/// How log lines look.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// For people.
    #[default]
    Text,
    /// One JSON object per line, for log pipelines.
    Json,
}

/// Metrics settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsSection {
    /// Serve Prometheus metrics at `/metrics`.
    pub enabled: bool,
}

impl Default for MetricsSection {
    fn default() -> Self {
        MetricsSection { enabled: true }
    }
}

/// Why the configuration cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The file cannot be read.
    #[error("cannot read {path}: {reason}")]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The file is not TOML.
    #[error("{path} is not valid TOML: {reason}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// What the parser said.
        reason: String,
    },
    /// A key has a value that does not work.
    #[error("{key} = {value} ({origin}): expected {expected}")]
    Invalid {
        /// The key, for example `limits.max_concurrent`.
        key: String,
        /// The value given.
        value: String,
        /// What would work.
        expected: String,
        /// Where the value came from: the file or an environment variable.
        origin: String,
    },
}

/// The familiar environment variables and the keys they set.
const ALIASES: &[(&str, &str)] = &[
    ("MCP_TRANSPORT", "transport"),
    ("MAX_CONCURRENT_TOOLS", "limits.max_concurrent"),
    ("SESSION_TIMEOUT_SECONDS", "http.session_timeout_seconds"),
    ("DB_POOL_SIZE", "packs.sql.pool_size"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "telemetry.otlp_endpoint"),
    ("OTEL_SERVICE_NAME", "telemetry.service_name"),
    ("OAUTH_ISSUER", "oauth.issuer"),
    ("OAUTH_JWKS_URI", "oauth.jwks_uri"),
    ("OAUTH_RESOURCE", "oauth.resource"),
    ("TOOLPORT_STATE_URL", "state.url"),
    ("TOOLPORT_SEAL_KEYS", "state.seal_keys"),
    ("TOOLPORT_AUDIT_KEY_FILE", "audit.key_file"),
];

impl Config {
    /// Reads the file (if any), applies the environment, and checks everything.
    pub fn load(path: Option<&Path>, env: impl IntoIterator<Item = (String, String)>) -> Result<Config, ConfigError> {
        let file_name = path.map_or_else(|| "defaults".to_owned(), |p| p.display().to_string());
        let mut table = match path {
            None => toml::Table::new(),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| ConfigError::Unreadable {
                    path: path.to_owned(),
                    reason: e.to_string(),
                })?;
                text.parse::<toml::Table>().map_err(|e| ConfigError::Syntax {
                    path: path.to_owned(),
                    reason: e.to_string(),
                })?
            }
        };
        let mut origins: Vec<(String, String)> = Vec::new();
        for (var, raw) in env {
            let key = match ALIASES.iter().find(|(alias, _)| *alias == var) {
                Some((_, key)) => (*key).to_owned(),
                None => match var.strip_prefix("TOOLPORT_") {
                    // TOOLPORT_LOG and friends that are not double-underscore paths are other settings.
                    Some(rest) if rest.contains("__") || ["TRANSPORT"].contains(&rest) => rest
                        .split("__")
                        .map(str::to_ascii_lowercase)
                        .collect::<Vec<_>>()
                        .join("."),
                    _ => continue,
                },
            };
            set(&mut table, &key, parse_env_value(&raw));
            origins.push((key, var));
        }
        let source_of = |key: &str| {
            origins
                .iter()
                .rev()
                .find(|(k, _)| key == k || key.starts_with(&format!("{k}.")))
                .map_or_else(
                    || file_name.clone(),
                    |(_, var)| format!("from the environment variable {var}"),
                )
        };
        let config: Config = serde_path_to_error::deserialize(toml::Value::Table(table.clone())).map_err(|e| {
            let key = e.path().to_string();
            let value = lookup(&table, &key).map_or_else(|| "(missing)".to_owned(), |v| v.to_string());
            ConfigError::Invalid {
                origin: source_of(&key),
                key,
                value,
                expected: expected_from(&e.inner().to_string()),
            }
        })?;
        config
            .validate()
            .map_err(|(key, value, expected)| ConfigError::Invalid {
                origin: source_of(&key),
                key,
                value,
                expected,
            })?;
        Ok(config)
    }

    /// Checks what the types cannot.
    fn validate(&self) -> Result<(), (String, String, String)> {
        let bad = |key: &str, value: String, expected: &str| Err((key.to_owned(), value, expected.to_owned()));
        let quoted = |s: &str| format!("{s:?}");
        if let Err(e) = toolport_gateway::config::check(&self.gateway, &self.upstream) {
            return bad("upstream", "(see the message)".into(), &e.0);
        }
        let scopes = (&self.oauth.tool_scopes, &self.oauth.prompt_scopes);
        if let Err(e) = toolport_gateway::policy::layers(&self.limits, scopes, &self.gateway, &self.upstream) {
            return bad("upstream", "(see the message)".into(), &e.0);
        }
        if self.upstream.iter().any(|u| u.forward_token) && self.oauth.issuer.is_none() {
            return bad(
                "oauth.issuer",
                String::new(),
                "the issuer of the callers' tokens that forward_token passes on (without [oauth] there are none)",
            );
        }
        if toolport_gateway::policy::wants_scopes(&self.upstream) && self.oauth.issuer.is_none() {
            return bad(
                "oauth.issuer",
                String::new(),
                "the issuer whose tokens carry the scopes [upstream.limits] asks for",
            );
        }
        let h = &self.http;
        if h.bind.parse::<SocketAddr>().is_err() {
            return bad(
                "http.bind",
                quoted(&h.bind),
                "an address and port such as 127.0.0.1:8080",
            );
        }
        if !h.path.starts_with('/') {
            return bad("http.path", quoted(&h.path), "a path starting with /");
        }
        if h.session_timeout_seconds == 0 {
            return bad("http.session_timeout_seconds", "0".into(), "at least 1 second");
        }
        if h.keep_alive_seconds == 0 {
            return bad("http.keep_alive_seconds", "0".into(), "at least 1 second");
        }
        if h.max_body_bytes < 1024 {
            return bad(
                "http.max_body_bytes",
                h.max_body_bytes.to_string(),
                "at least 1024 bytes",
            );
        }
        if tracing_subscriber::EnvFilter::try_new(&self.log.level).is_err() {
            return bad(
                "log.level",
                quoted(&self.log.level),
                "a tracing filter such as info or toolport_http=debug,warn",
            );
        }
        if let Some(endpoint) = &self.telemetry.otlp_endpoint
            && (!endpoint.starts_with("http://") || endpoint.parse::<http::Uri>().map_or(true, |u| u.host().is_none()))
        {
            return bad(
                "telemetry.otlp_endpoint",
                quoted(endpoint),
                "an OTLP/HTTP collector URL such as http://127.0.0.1:4318 (plain http: a local collector or sidecar)",
            );
        }
        self.oauth.validate()?;
        if let Some(scope) = self.ui.admin_scopes.iter().find(|s| s.is_empty() || s.contains(' ')) {
            return bad("ui.admin_scopes", quoted(scope), "scope names without spaces");
        }
        self.tasks.validate()?;
        self.a2a.validate()?;
        if self.a2a.enabled && !self.tasks.enabled {
            return bad(
                "a2a.enabled",
                "true".into(),
                "tasks.enabled = true: every A2A task is a durable task",
            );
        }
        self.state.validate()?;
        if self.audit.path.as_deref() == Some("") {
            return bad("audit.path", "\"\"".into(), "a file name, or - for standard output");
        }
        if self.audit.enabled && self.audit.path.as_deref() == Some("-") && self.transport == Transport::Stdio {
            return bad(
                "audit.path",
                "\"-\"".into(),
                "a file: with transport stdio, standard output carries nothing but MCP messages",
            );
        }
        if self.audit.checkpoint_every == 0 {
            return bad("audit.checkpoint_every", "0".into(), "a number of records of 1 or more");
        }
        self.limits.validate("limits").map_err(|e| (e.key, e.value, e.expected))
    }

    /// The HTTP transport's configuration.
    pub fn http_config(&self) -> HttpConfig {
        let h = &self.http;
        HttpConfig {
            bind: h.bind.parse().expect("checked by validate"),
            path: h.path.clone(),
            allowed_origins: h.allowed_origins.clone(),
            allowed_hosts: h.allowed_hosts.clone(),
            max_body_bytes: h.max_body_bytes,
            sessions: h.sessions,
            session_idle_timeout: Duration::from_secs(h.session_timeout_seconds),
            max_sessions: h.max_sessions,
            keep_alive: Duration::from_secs(h.keep_alive_seconds),
            resume_grace: Duration::from_secs(h.resume_grace_seconds),
            drain_delay: Duration::from_secs(h.drain_delay_seconds),
            shutdown_grace: Duration::from_secs(h.shutdown_grace_seconds),
            response_mode: if h.always_sse {
                ResponseMode::Sse
            } else {
                ResponseMode::Auto
            },
            ..HttpConfig::default()
        }
    }
}

/// serde's "invalid type: string \"x\", expected usize" → "a whole number (got a string)".
fn expected_from(message: &str) -> String {
    // toml appends "in `key`" on a second line; the key is already named.
    let first = message.lines().next().unwrap_or(message).trim();
    let Some((what, expected)) = first.split_once(", expected ") else {
        return first.to_owned();
    };
    let expected = match expected {
        "usize" | "u64" | "u32" | "u16" | "u8" => "a whole number, 0 or more",
        "i64" | "i32" => "a whole number",
        "f64" | "f32" => "a number",
        "a boolean" => "true or false",
        other => other,
    };
    let got = what
        .strip_prefix("invalid type: ")
        .or_else(|| what.strip_prefix("invalid value: "))
        .unwrap_or(what);
    format!("{expected} (got {got})")
}

fn parse_env_value(raw: &str) -> toml::Value {
    format!("v = {raw}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_owned()))
}

fn set(table: &mut toml::Table, key: &str, value: toml::Value) {
    let mut parts = key.split('.').peekable();
    let mut current = table;
    while let Some(part) = parts.next() {
        if parts.peek().is_none() {
            current.insert(part.to_owned(), value);
            return;
        }
        let entry = current
            .entry(part.to_owned())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        current = entry.as_table_mut().expect("made a table");
    }
}

fn lookup<'t>(table: &'t toml::Table, key: &str) -> Option<&'t toml::Value> {
    let mut parts = key.split('.');
    let mut value = table.get(parts.next()?)?;
    for part in parts {
        value = value.as_table()?.get(part)?;
    }
    Some(value)
}
