//! Aggregation: each upstream's tools, prompts, resources and templates in
//! this server's registries. Tools and prompts are named
//! `<upstream><separator><name>`; resources keep their URIs, and a URI two
//! upstreams both offer is refused. Definitions are served verbatim.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolport_protocol::prompts::{GetPromptResult, Prompt};
use toolport_protocol::resources::{ReadResourceResult, Resource, ResourceTemplate};
use toolport_protocol::tools::{CallToolResult, Tool};
use toolport_protocol::{prompts, resources, tools};
use toolport_server::{ResourceEntry, ResourceError, Server, TemplateEntry, ToolError, prompt, tool};

use crate::forward::{Forwarder, call_params};
use crate::pins::Pinning;
use crate::slot::Instance;

/// The `_meta` key of a served tool that names the upstream it comes from
/// (`toolport tools` shows it). The upstream's own name for the tool is
/// under [`UPSTREAM_TOOL_META`].
pub const UPSTREAM_META: &str = "io.toolport/upstream";
/// The `_meta` key with the tool's name at its upstream.
pub const UPSTREAM_TOOL_META: &str = "io.toolport/upstreamTool";

/// The longest tool or prompt name MCP allows.
pub const MAX_NAME: usize = 128;

/// What one upstream offers, read from its lists.
#[derive(Debug, Default, Clone)]
pub(crate) struct Listing {
    pub(crate) tools: Vec<Tool>,
    pub(crate) prompts: Vec<Prompt>,
    pub(crate) resources: Vec<Resource>,
    pub(crate) templates: Vec<ResourceTemplate>,
}

impl Listing {
    /// Reads every list the upstream's capabilities say it has.
    pub(crate) async fn read(instance: &Instance, with_resources: bool) -> Result<Listing, String> {
        let caps = &instance.server.capabilities;
        let client = &instance.client;
        let mut listing = Listing::default();
        if caps.tools.is_some() {
            listing.tools = client.list_tools().await.map_err(|e| format!("tools/list: {e}"))?;
        }
        if caps.prompts.is_some() {
            listing.prompts = client.list_prompts().await.map_err(|e| format!("prompts/list: {e}"))?;
        }
        if caps.resources.is_some() && with_resources {
            listing.resources = client
                .list_resources()
                .await
                .map_err(|e| format!("resources/list: {e}"))?;
            listing.templates = client
                .list_resource_templates()
                .await
                .map_err(|e| format!("resources/templates/list: {e}"))?;
        }
        Ok(listing)
    }
}

/// Which upstream installed what, so a refresh replaces exactly its own.
#[derive(Debug, Default)]
pub(crate) struct Catalog {
    installed: Mutex<BTreeMap<String, Installed>>,
}

#[derive(Debug, Default, Clone)]
struct Installed {
    tools: BTreeSet<String>,
    prompts: BTreeSet<String>,
    resources: BTreeSet<String>,
    templates: BTreeSet<String>,
}

/// A problem with an upstream's definitions: fatal at start-up, logged later.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CatalogError(pub String);

impl Catalog {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Installed>> {
        self.installed.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The names and URIs another upstream already holds.
    fn owner_of_uri(&self, uri: &str, except: &str) -> Option<String> {
        self.lock()
            .iter()
            .find(|(name, i)| name.as_str() != except && (i.resources.contains(uri) || i.templates.contains(uri)))
            .map(|(name, _)| name.clone())
    }

    /// Puts `listing` of `forwarder`'s upstream in `server`'s registries in
    /// place of what it had there. Problems are returned (all of them); the
    /// definitions without problems are installed all the same.
    pub(crate) fn install(
        &self,
        server: &Server,
        separator: &str,
        forwarder: &Arc<Forwarder>,
        listing: &Listing,
        pins: Option<&Pinning>,
    ) -> Vec<CatalogError> {
        let upstream = forwarder.pool.config.name.clone();
        let mut problems = Vec::new();
        let mut now = Installed::default();
        let allowed: Option<BTreeSet<String>> = pins.map(|p| p.review(&upstream, &listing.tools));
        for definition in &listing.tools {
            let name = format!("{upstream}{separator}{}", definition.name);
            if name.len() > MAX_NAME {
                problems.push(CatalogError(format!(
                    "upstream {upstream}: tool {:?} would be named {name:?}, longer than {MAX_NAME} characters; rename the upstream or pick a shorter separator",
                    definition.name
                )));
                continue;
            }
            if allowed.as_ref().is_some_and(|a| !a.contains(&definition.name)) {
                continue; // quarantined: hidden and not callable until approved
            }
            let mut served = definition.clone();
            served.name = name.clone();
            let meta = served.meta.get_or_insert_with(Default::default);
            meta.insert(UPSTREAM_META.into(), Value::String(upstream.clone()));
            meta.insert(UPSTREAM_TOOL_META.into(), Value::String(definition.name.clone()));
            let (fw, upstream_name) = (forwarder.clone(), definition.name.clone());
            let entry = tool(&name).forwarded(served, move |cx, args| {
                let (fw, upstream_name) = (fw.clone(), upstream_name.clone());
                async move {
                    let value = fw.forward(&cx, tools::CALL, call_params(&upstream_name, args)).await?;
                    parse::<CallToolResult>(fw.pool.config.name.as_str(), tools::CALL, value)
                }
            });
            match server.tools().insert(entry) {
                Ok(()) => {
                    now.tools.insert(name);
                }
                Err(e) => problems.push(CatalogError(format!("upstream {upstream}: {}", e.0))),
            }
        }
        for definition in &listing.prompts {
            let name = format!("{upstream}{separator}{}", definition.name);
            if name.len() > MAX_NAME {
                problems.push(CatalogError(format!(
                    "upstream {upstream}: prompt {:?} would be named {name:?}, longer than {MAX_NAME} characters",
                    definition.name
                )));
                continue;
            }
            let mut served = definition.clone();
            served.name = name.clone();
            let (fw, upstream_name) = (forwarder.clone(), definition.name.clone());
            let entry = prompt(&name).forwarded(served, move |cx, args| {
                let (fw, upstream_name) = (fw.clone(), upstream_name.clone());
                async move {
                    let params = json!({ "name": upstream_name, "arguments": args });
                    let value = fw.forward(&cx, prompts::GET, params).await?;
                    parse::<GetPromptResult>(fw.pool.config.name.as_str(), prompts::GET, value)
                }
            });
            match server.prompts().insert(entry) {
                Ok(()) => {
                    now.prompts.insert(name);
                }
                Err(e) => problems.push(CatalogError(format!("upstream {upstream}: {}", e.0))),
            }
        }
        for definition in &listing.resources {
            if let Some(owner) = self.owner_of_uri(&definition.uri, &upstream) {
                problems.push(CatalogError(format!(
                    "upstream {upstream}: resource {:?} is already offered by upstream {owner}; resources keep their URIs, so one of them must go",
                    definition.uri
                )));
                continue;
            }
            let fw = forwarder.clone();
            let entry = ResourceEntry::new(definition.clone(), move |cx, request| {
                let fw = fw.clone();
                async move { read(&fw, cx, request.uri).await }
            });
            server.resources().insert(entry).ok();
            now.resources.insert(definition.uri.clone());
        }
        for definition in &listing.templates {
            if let Some(owner) = self.owner_of_uri(&definition.uri_template, &upstream) {
                problems.push(CatalogError(format!(
                    "upstream {upstream}: resource template {:?} is already offered by upstream {owner}",
                    definition.uri_template
                )));
                continue;
            }
            let fw = forwarder.clone();
            let entry = TemplateEntry::new(definition.clone(), move |cx, request| {
                let fw = fw.clone();
                async move { read(&fw, cx, request.uri).await }
            });
            match server.templates().insert(entry) {
                Ok(()) => {
                    now.templates.insert(definition.uri_template.clone());
                }
                Err(e) => problems.push(CatalogError(format!("upstream {upstream}: {}", e.0))),
            }
        }
        let before = self.lock().insert(upstream, now.clone()).unwrap_or_default();
        remove_gone(server, &before, &now);
        problems
    }

    /// Takes an upstream's entries out of the registries (it is down and optional).
    pub(crate) fn withdraw(&self, server: &Server, upstream: &str) {
        let before = self.lock().remove(upstream).unwrap_or_default();
        remove_gone(server, &before, &Installed::default());
    }

    /// Whether `upstream` offers the resource `uri` (one of its resources,
    /// or a URI one of its templates matches).
    pub(crate) fn offers(&self, upstream: &str, uri: &str) -> bool {
        self.lock()
            .get(upstream)
            .is_some_and(|i| crate::subscriptions::offered(uri, &i.resources, &i.templates))
    }

    /// How many tools of `upstream` are served now.
    pub(crate) fn tool_count(&self, upstream: &str) -> usize {
        self.lock().get(upstream).map_or(0, |i| i.tools.len())
    }

    /// The upstream a served tool name belongs to.
    pub(crate) fn upstream_of_tool(&self, name: &str) -> Option<String> {
        self.lock()
            .iter()
            .find(|(_, i)| i.tools.contains(name))
            .map(|(n, _)| n.clone())
    }
}

fn remove_gone(server: &Server, before: &Installed, now: &Installed) {
    for name in before.tools.difference(&now.tools) {
        server.tools().remove(name);
    }
    for name in before.prompts.difference(&now.prompts) {
        server.prompts().remove(name);
    }
    for uri in before.resources.difference(&now.resources) {
        server.resources().remove(uri);
    }
    for uri in before.templates.difference(&now.templates) {
        server.templates().remove(uri);
    }
}

async fn read(
    fw: &Arc<Forwarder>,
    cx: toolport_server::RequestContext,
    uri: String,
) -> Result<Vec<toolport_protocol::content::ResourceContents>, ResourceError> {
    let value = fw
        .forward(&cx, resources::READ, json!({ "uri": uri }))
        .await
        .map_err(ResourceError::Tool)?;
    let result = parse::<ReadResourceResult>(fw.pool.config.name.as_str(), resources::READ, value)
        .map_err(ResourceError::Tool)?;
    Ok(result.contents)
}

fn parse<T: serde::de::DeserializeOwned>(upstream: &str, method: &str, value: Value) -> Result<T, ToolError> {
    serde_json::from_value(value).map_err(|e| {
        ToolError::Failed(format!(
            "upstream {upstream} answered {method} with something that is not MCP: {e}"
        ))
    })
}
