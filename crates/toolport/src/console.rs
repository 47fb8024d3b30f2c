//! The web console of `toolport serve --ui`, as the configuration describes
//! it, with the server's tasks when it keeps any and a gateway's upstreams.

use std::path::PathBuf;
use std::sync::Arc;

use toolport::config::Config;
use toolport_console::{Console, ConsoleConfig, ConsoleOAuth, TaskSource, TaskSummary, UpstreamHealth, UpstreamStatus};
use toolport_gateway::Gateway;
use toolport_http::auth::AuthFuture;
use toolport_server::Principal;
use toolport_tasks::TaskEngine;

/// The console for `config`, serving the MCP endpoint at `path`.
pub(crate) fn console(config: &Config, path: &str, tasks: Option<TaskEngine>) -> Console {
    let ui = &config.ui;
    let oauth = match (&config.oauth.issuer, &ui.oauth_client_id) {
        (Some(issuer), Some(client_id)) => Some(ConsoleOAuth {
            issuer: issuer.clone(),
            client_id: client_id.clone(),
            scopes: ui.oauth_scopes.clone().unwrap_or_else(|| config.oauth.scopes.clone()),
            // The same default as the resource server's audience.
            resource: (config.oauth.resource.clone()).unwrap_or_else(|| format!("http://{}{path}", config.http.bind)),
        }),
        _ => None,
    };
    let console = Console::new(ConsoleConfig {
        admin_scopes: ui.admin_scopes.clone(),
        oauth,
        audit_path: config.audit.path.as_deref().filter(|p| *p != "-").map(PathBuf::from),
        bench_report: ui.bench_report.clone(),
    });
    match tasks {
        Some(engine) => console.with_tasks(Arc::new(EngineTasks(engine))),
        None => console,
    }
}

/// A gateway's upstreams, as the console shows them.
#[derive(Debug)]
pub(crate) struct GatewayUpstreams(pub(crate) Gateway);

impl UpstreamHealth for GatewayUpstreams {
    fn upstreams(&self) -> AuthFuture<'_, Vec<UpstreamStatus>> {
        let statuses = self.0.report().into_iter().map(|report| {
            let since = report.since.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
            UpstreamStatus {
                name: report.name,
                transport: report.transport.to_owned(),
                state: report.state.as_str().to_owned(),
                detail: report.why,
                tools: report.tools,
                since: Some(toolport_server::audit::rfc3339(since)),
            }
        });
        let statuses = statuses.collect();
        Box::pin(async move { statuses })
    }
}

/// The task engine's tasks, as the console lists them.
#[derive(Debug)]
struct EngineTasks(TaskEngine);

/// RFC 3339 UTC of milliseconds since the epoch.
fn rfc3339(millis: i64) -> String {
    toolport_server::audit::rfc3339(std::time::Duration::from_millis(millis.max(0) as u64))
}

impl TaskSource for EngineTasks {
    fn tasks<'a>(
        &'a self,
        principal: Option<&'a Principal>,
        _all: bool,
        limit: usize,
    ) -> AuthFuture<'a, Vec<TaskSummary>> {
        // Tasks are kept per owner: the console lists the caller's own (an
        // operator's too; the engine has no listing across owners).
        Box::pin(async move {
            let owner = toolport_server::task_owner(principal);
            match self.0.list(&owner, None, Some(limit)).await {
                Ok(page) => page
                    .tasks
                    .into_iter()
                    .map(|t| TaskSummary {
                        id: t.id.to_string(),
                        status: t.status.mcp_name().to_owned(),
                        tool: Some(t.tool),
                        principal: principal.map(|p| p.subject.clone()),
                        created: rfc3339(t.created_at),
                        updated: rfc3339(t.updated_at),
                    })
                    .collect(),
                Err(e) => {
                    tracing::warn!(error = %e, "tasks not listed for the console");
                    Vec::new()
                }
            }
        })
    }
}
