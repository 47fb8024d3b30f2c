//! `toolport serve` with `[[upstream]]` entries: the gateway (docs/gateway.md).

use std::sync::Arc;

use anyhow::{Context, Result};
use toolport::config::{Config, Transport};
use toolport_gateway::Gateway;
use toolport_http::{HttpServer, Mounts};
use toolport_server::Server;

/// Starts the upstreams, serves their tools, stops them on shutdown.
pub(crate) async fn serve(config: Config) -> Result<()> {
    // `[upstream.limits]` as entries of `[limits]` and `[oauth]`.
    let scopes = (&config.oauth.tool_scopes, &config.oauth.prompt_scopes);
    let (limits, scopes) = toolport_gateway::policy::layers(&config.limits, scopes, &config.gateway, &config.upstream)?;
    let mut oauth = config.oauth.clone();
    // Tokens are kept past authentication only for an upstream that takes them.
    let keep_token = config.upstream.iter().any(|u| u.forward_token);
    (oauth.tool_scopes, oauth.prompt_scopes) = (scopes.tools, scopes.prompts);
    let mut builder = Server::builder("toolport-gateway", env!("CARGO_PKG_VERSION"))
        .title("Toolport gateway")
        .policies(limits);
    let (audit, audit_line) = crate::audit::open(&config.audit)?;
    if let Some(audit) = audit {
        builder = builder.audit(audit);
    }
    let server = builder.build()?;
    let (gateway_section, upstreams) = (config.gateway.clone(), config.upstream.clone());
    if config.transport == Transport::Stdio {
        let gateway = Gateway::start(gateway_section, upstreams, &server).await?;
        server.serve_stdio().await;
        gateway.stop().await;
        return Ok(());
    }
    let http = config.http_config();
    let path = http.path.clone();
    let mut transport = HttpServer::new(server.clone(), http);
    // The recorder first, so the upstreams' first states are counted.
    if config.metrics.enabled {
        transport = transport.prometheus().context("cannot install the metrics recorder")?;
    }
    let gateway = Gateway::start(gateway_section, upstreams, &server).await?;
    transport = transport.with_readiness_check(Arc::new(gateway.clone()));
    let mut mounts = Mounts::new();
    if config.ui.enabled {
        let console = crate::console::console(&config, &path, None);
        let upstreams = Arc::new(crate::console::GatewayUpstreams(gateway.clone()));
        mounts = mounts.with(Arc::new(console.with_upstreams(upstreams)));
    }
    if config.a2a.enabled {
        // The upstreams' tools as skills; their tasks in the task store.
        let Some((engine, _)) = config.tasks.open().await? else {
            anyhow::bail!("A2A needs [tasks] enabled: every A2A task is a durable task");
        };
        mounts = mounts.with(Arc::new(config.a2a.mount(&server, engine, oauth.issuer.is_some())?));
    }
    transport = transport.with_mount(Arc::new(mounts));
    if let Some(auth) =
        crate::oauth::resource_server_keeping(&oauth, format!("http://{}{path}", config.http.bind), keep_token).await?
    {
        transport = transport.with_authenticator(auth);
    }
    let bound = match transport.bind().await {
        Ok(bound) => bound,
        Err(e) => {
            gateway.stop().await;
            return Err(e).with_context(|| format!("cannot listen on {}", config.http.bind));
        }
    };
    let address = bound.local_addr();
    eprintln!("toolport: gateway serving MCP (2024-11-05 … 2026-07-28) at http://{address}{path}");
    for report in gateway.report() {
        eprintln!(
            "  upstream {}: {}{}",
            report.name,
            report.state.as_str(),
            report.why.map(|w| format!(" ({w})")).unwrap_or_default()
        );
    }
    if config.a2a.enabled {
        eprintln!(
            "  A2A 1.0: agent card at http://{address}/.well-known/agent-card.json (the upstreams' tools as skills)"
        );
    }
    eprintln!("  {audit_line}");
    eprintln!("  health: http://{address}/health  ready: http://{address}/ready  metrics: http://{address}/metrics");
    let outcome = bound
        .serve(async move {
            crate::signal::shutdown_signal().await;
            eprintln!("toolport: draining; the upstreams stop after the in-flight work");
        })
        .await;
    gateway.stop().await;
    eprintln!("toolport: stopped");
    Ok(outcome?)
}
