//! `toolport serve`: the configuration, the logs, the server, the transport.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, Result};
use toolport::config::{Config, LogFormat, Transport};
use toolport::demo;
use toolport::state::StateReadiness;
use toolport::telemetry::Telemetry;
use toolport_http::{HttpServer, Mounts, ReadinessCheck};
use toolport_packs::{Packs, SqlPack};
use toolport_server::Server;
use toolport_server::state::MemoryEventBus;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// `toolport serve` options. Flags override the configuration file, which
/// the environment overrides in turn.
#[derive(clap::Args)]
pub(crate) struct ServeArgs {
    /// A TOML configuration file.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Serve on stdin/stdout (one JSON-RPC message per line) instead of HTTP.
    #[arg(long)]
    stdio: bool,
    /// Where to listen for HTTP.
    #[arg(long)]
    bind: Option<SocketAddr>,
    /// The path of the MCP endpoint.
    #[arg(long)]
    path: Option<String>,
    /// Serve handshake-era requests without sessions, so any replica can answer any request.
    #[arg(long)]
    stateless: bool,
    /// Serve the demo tools (echo, weather, a long task, ...) instead of the packs.
    #[arg(long)]
    demo: bool,
    /// A JSON file with the packs' settings (see docs/packs.md), instead of the `[packs]` section.
    #[arg(long, env = "TOOLPORT_PACKS_CONFIG")]
    packs_config: Option<PathBuf>,
    /// Serve the web console at /ui (and its admin API at /admin/), like `[ui] enabled = true`.
    #[arg(long)]
    ui: bool,
    /// Serve A2A 1.0 beside MCP, every tool a skill (the Agent Card at
    /// /.well-known/agent-card.json), like `[a2a] enabled = true`.
    #[arg(long)]
    a2a: bool,
    #[command(flatten)]
    oauth: crate::oauth::OAuthArgs,
}

pub(crate) fn run(args: ServeArgs) -> ExitCode {
    let mut config = match Config::load(args.config.as_deref(), std::env::vars()) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("toolport: configuration error: {e}");
            return ExitCode::from(2);
        }
    };
    if args.stdio {
        config.transport = Transport::Stdio;
        if config.audit.enabled && config.audit.path.as_deref() == Some("-") {
            eprintln!(
                "toolport: configuration error: audit.path = \"-\" with --stdio: standard output carries nothing but MCP messages; give a file"
            );
            return ExitCode::from(2);
        }
    }
    if let Some(bind) = args.bind {
        config.http.bind = bind.to_string();
    }
    if let Some(path) = args.path {
        config.http.path = path;
    }
    if args.stateless {
        config.http.sessions = false;
    }
    if args.ui {
        config.ui.enabled = true;
    }
    if args.a2a {
        config.a2a.enabled = true;
    }
    let flags = args.oauth.apply(&mut config.oauth);
    let checked = flags
        .and_then(|()| Ok(config.oauth.check_flags()?))
        .and_then(|()| Ok(config.ui.check_with(&config.oauth)?));
    if let Err(e) = checked {
        eprintln!("toolport: configuration error: {e:#}");
        return ExitCode::from(2);
    }
    if let Some(file) = &args.packs_config {
        match toolport::packs::config(Some(file)) {
            Ok(packs) => config.packs = packs,
            Err(e) => {
                eprintln!("toolport: configuration error: {e:#}");
                return ExitCode::from(2);
            }
        }
    }
    let telemetry = match init_logs(&config) {
        Ok(telemetry) => telemetry,
        Err(e) => {
            eprintln!("toolport: configuration error: {e:#}");
            return ExitCode::from(2);
        }
    };
    // stdio serves one client, and each call is a round trip through its
    // pipes: on one thread a request is read, run and answered without waking
    // another thread (which cost more than the call itself; see
    // docs/performance.md). Blocking work still goes to the blocking pool.
    let runtime = if config.transport == Transport::Stdio {
        tokio::runtime::Builder::new_current_thread().enable_all().build()
    } else {
        tokio::runtime::Builder::new_multi_thread().enable_all().build()
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("toolport: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = runtime.block_on(serve(config, args.demo));
    if let Some(telemetry) = telemetry {
        telemetry.shutdown();
    }
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("toolport: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Logs to stderr and, when configured, spans to an OTLP collector; each
/// with its own filter, so quiet logs do not starve the exported traces.
fn init_logs(config: &Config) -> Result<Option<Telemetry>> {
    // Logs go to stderr: on stdio, stdout carries nothing but MCP messages.
    // TOOLPORT_LOG, when set, wins over the configured level.
    let filter = EnvFilter::try_from_env("TOOLPORT_LOG").unwrap_or_else(|_| EnvFilter::new(&config.log.level));
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false);
    let logs = match config.log.format {
        LogFormat::Text => fmt.with_filter(filter).boxed(),
        LogFormat::Json => fmt
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .with_filter(filter)
            .boxed(),
    };
    let registry = tracing_subscriber::registry().with(logs);
    Ok(match Telemetry::start(&config.telemetry)? {
        None => {
            registry.init();
            None
        }
        Some((telemetry, spans)) => {
            registry.with(spans).init();
            Some(telemetry)
        }
    })
}

async fn serve(config: Config, demo: bool) -> Result<()> {
    if !config.upstream.is_empty() {
        return crate::gateway::serve(config).await;
    }
    // A bare `toolport serve` serves the packs; `--demo` the demo tools.
    let packs = if demo {
        None
    } else {
        Some(Packs::open(&config.packs).await?)
    };
    let mut builder = match &packs {
        None => demo::install(Server::builder("toolport-demo", env!("CARGO_PKG_VERSION")).title("Toolport demo")),
        Some(packs) => packs.install(toolport::packs::builder()),
    }
    .policies(config.limits.clone());
    if let Some(keys) = config.state.key_ring() {
        builder = builder.request_state_keys(keys);
    }
    let shared = config.state.open().context("state.url")?;
    if let Some(redis) = &shared {
        let ttl = std::time::Duration::from_secs(config.limits.idempotency.ttl_seconds);
        builder = builder
            .idempotency_store(redis.idempotency(ttl))
            .rate_limiter(redis.rate_limiter())
            .event_bus(redis.event_bus(MemoryEventBus::DEFAULT_CAPACITY).await);
    }
    let (audit, audit_line) = crate::audit::open(&config.audit)?;
    if let Some(audit) = audit {
        builder = builder.audit(audit);
    }
    let tasks = config.tasks.open().await?;
    let tasks_place = tasks.as_ref().map(|(_, place)| place.clone());
    let mut task_engine = None;
    if let Some((engine, _)) = tasks {
        task_engine = Some(engine.clone());
        builder = builder.tasks(engine);
    }
    let server = builder.build()?;
    // Recovery and expiry, from the start: a previous run's dead tasks end
    // once their leases run out.
    let maintenance = {
        let (server, every) = (server.clone(), config.tasks.maintenance_every());
        tokio::spawn(async move { server.maintain_tasks(every).await })
    };
    // The packs' file watcher lives as long as the server.
    let _running = packs.as_ref().map(|p| p.start(&server)).transpose()?;
    let summary = packs.as_ref().map(Packs::summary).unwrap_or_default();
    if config.transport == Transport::Stdio {
        eprintln!("toolport: {audit_line}");
        server.clone().serve_stdio().await;
        server.close_audit();
        maintenance.abort();
        return Ok(());
    }
    let mut http = config.http_config();
    // The console's pages call the endpoint from its own origin.
    http.same_origin = config.ui.enabled;
    let path = http.path.clone();
    let mut transport = match &shared {
        None => HttpServer::new(server.clone(), http),
        Some(redis) => {
            let events = redis.event_log(http.events_per_stream);
            HttpServer::with_stores(server.clone(), http, redis.sessions(), events)
                .with_relay(redis.relay())
                .with_readiness_check(Arc::new(StateReadiness(redis.clone())))
        }
    };
    let authenticated = config.oauth.issuer.is_some();
    let mut mounts = Mounts::new();
    if config.ui.enabled {
        mounts = mounts.with(Arc::new(crate::console::console(&config, &path, task_engine.clone())));
    }
    if config.a2a.enabled {
        let engine = task_engine.clone().context("A2A needs [tasks] enabled")?;
        mounts = mounts.with(Arc::new(config.a2a.mount(&server, engine, authenticated)?));
    }
    transport = transport.with_mount(Arc::new(mounts));
    if let Some(sql) = packs.as_ref().and_then(|p| p.sql.clone()) {
        transport = transport.with_readiness_check(Arc::new(SqlReadiness(sql)));
    }
    if config.metrics.enabled {
        transport = transport.prometheus().context("cannot install the metrics recorder")?;
    }
    if let Some(auth) =
        crate::oauth::resource_server(&config.oauth, format!("http://{}{path}", config.http.bind)).await?
    {
        eprintln!(
            "toolport: OAuth 2.1 resource server for {}; metadata at {}",
            auth.config().resource,
            auth.metadata_url()
        );
        transport = transport.with_authenticator(auth);
    }
    let bound = transport
        .bind()
        .await
        .with_context(|| format!("cannot listen on {}", config.http.bind))?;
    let address = bound.local_addr();
    eprintln!("toolport: serving MCP (2024-11-05 … 2026-07-28) at http://{address}{path}");
    eprintln!("  point an MCP client at that URL, for example the Python SDK: mcp.Client(\"http://{address}{path}\")");
    eprintln!("  or the MCP Inspector: npx @modelcontextprotocol/inspector (transport \"Streamable HTTP\", that URL)");
    eprintln!("  health: http://{address}/health  ready: http://{address}/ready  metrics: http://{address}/metrics");
    if config.ui.enabled {
        eprintln!("  console: http://{address}/ui");
    }
    if config.a2a.enabled {
        eprintln!("  A2A 1.0: agent card at http://{address}/.well-known/agent-card.json (JSON-RPC and HTTP+JSON)");
    }
    if let Some(url) = &config.state.url {
        eprintln!(
            "  state: shared with the other replicas in {} (prefix {:?})",
            toolport::state::without_password(url),
            config.state.prefix
        );
    }
    for line in summary.iter().chain([&audit_line]) {
        eprintln!("  {line}");
    }
    if let Some(place) = tasks_place {
        eprintln!("  tasks: {place}");
    }
    let (drain, grace) = (config.http.drain_delay_seconds, config.http.shutdown_grace_seconds);
    bound
        .serve(async move {
            crate::signal::shutdown_signal().await;
            eprintln!(
                "toolport: draining: /ready fails now; serving {drain} s more, then in-flight work gets up to {grace} s"
            );
        })
        .await?;
    maintenance.abort();
    // The closing checkpoint: a file that ends without one was cut.
    server.close_audit();
    eprintln!("toolport: stopped");
    Ok(())
}

/// `/ready` fails while the SQL pack's database does not answer: a replica
/// whose database is gone would only fail its `query` calls.
#[derive(Debug)]
struct SqlReadiness(SqlPack);

#[async_trait::async_trait]
impl ReadinessCheck for SqlReadiness {
    fn name(&self) -> &str {
        "sql"
    }

    async fn check(&self) -> Result<(), String> {
        self.0.ping().await.map_err(|e| e.to_string())
    }
}
