//! Which scopes an operation needs, and whether a caller has them, with
//! scope hierarchies (a broader scope implies the narrower ones).

use std::collections::{BTreeMap, BTreeSet};

use toolport_server::admission::{Target, TargetKind};

use super::config::ResourceServerConfig;

/// The scopes each operation needs.
#[derive(Debug, Clone)]
pub(crate) struct ScopePolicy {
    required: Vec<String>,
    tools: BTreeMap<String, Vec<String>>,
    resources: BTreeMap<String, Vec<String>>,
    prompts: BTreeMap<String, Vec<String>>,
    default: Vec<String>,
    hierarchy: BTreeMap<String, Vec<String>>,
}

impl ScopePolicy {
    pub(crate) fn new(config: &ResourceServerConfig) -> Self {
        ScopePolicy {
            required: config.required_scopes.clone(),
            tools: config.tool_scopes.clone(),
            resources: config.resource_scopes.clone(),
            prompts: config.prompt_scopes.clone(),
            default: config.default_scopes.clone(),
            hierarchy: config.scope_hierarchy.clone(),
        }
    }

    /// Every scope `granted` amounts to, following the hierarchy.
    pub(crate) fn effective(&self, granted: &[String]) -> BTreeSet<String> {
        let mut all: BTreeSet<String> = BTreeSet::new();
        let mut todo: Vec<&str> = granted.iter().map(String::as_str).collect();
        while let Some(scope) = todo.pop() {
            if all.insert(scope.to_owned())
                && let Some(implied) = self.hierarchy.get(scope)
            {
                todo.extend(implied.iter().map(String::as_str));
            }
        }
        all
    }

    /// The scopes using `name` needs (besides the ones every request needs):
    /// its own rule, else the longest pattern (`prefix*`) it matches (all of
    /// a gateway's upstream: `files__*`), else the default.
    pub(crate) fn needed(&self, target: TargetKind, name: &str) -> &[String] {
        let rules = match target {
            TargetKind::Tool => &self.tools,
            TargetKind::Prompt => &self.prompts,
            TargetKind::Resource => &self.resources,
        };
        let found = rules.get(name).or_else(|| {
            rules
                .iter()
                .filter_map(|(k, v)| k.strip_suffix('*').map(|p| (p, v)))
                .filter(|(prefix, _)| name.starts_with(prefix))
                .max_by_key(|(prefix, _)| prefix.len())
                .map(|(_, v)| v)
        });
        found.unwrap_or(&self.default)
    }

    /// The scopes an operation needs in all, when `effective` lacks any of
    /// them: `None` means allowed.
    pub(crate) fn missing(&self, effective: &BTreeSet<String>, target: Option<Target<'_>>) -> Option<Vec<String>> {
        let mut needed: Vec<String> = self.required.clone();
        if let Some((kind, name)) = target {
            for s in self.needed(kind, name) {
                if !needed.contains(s) {
                    needed.push(s.clone());
                }
            }
        }
        let lacking = needed.iter().any(|s| !effective.contains(s));
        lacking.then_some(needed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::config::{JwksSource, ResourceServerConfig};

    fn policy() -> ScopePolicy {
        let mut config = ResourceServerConfig::new(
            "https://mcp.example.com/mcp",
            "https://as.example.com",
            JwksSource::Static(Default::default()),
        )
        .tool_scopes("delete", &["files:write"])
        .resource_scopes("file:///secret/*", &["files:secret"])
        .resource_scopes("file:///secret/public.txt", &[])
        .prompt_scopes("triage", &["mail:read"]);
        config.required_scopes = vec!["mcp".into()];
        config
            .scope_hierarchy
            .insert("admin".into(), vec!["files:write".into(), "files:secret".into()]);
        config
            .scope_hierarchy
            .insert("files:write".into(), vec!["files:read".into()]);
        ScopePolicy::new(&config)
    }

    fn granted(scopes: &[&str]) -> Vec<String> {
        scopes.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn each_operation_needs_its_scopes_and_the_hierarchy_counts() {
        let p = policy();
        let user = p.effective(&granted(&["mcp"]));
        assert_eq!(
            p.missing(&user, Some((TargetKind::Tool, "delete"))),
            Some(granted(&["mcp", "files:write"])),
            "the challenge names every scope the operation needs"
        );
        assert_eq!(p.missing(&user, Some((TargetKind::Tool, "echo"))), None);
        let admin = p.effective(&granted(&["mcp", "admin"]));
        assert!(admin.contains("files:read"), "implied transitively");
        assert_eq!(p.missing(&admin, Some((TargetKind::Tool, "delete"))), None);
        assert_eq!(
            p.missing(&user, Some((TargetKind::Resource, "file:///secret/keys"))),
            Some(granted(&["mcp", "files:secret"]))
        );
        assert_eq!(
            p.missing(&user, Some((TargetKind::Resource, "file:///secret/public.txt"))),
            None
        );
        assert_eq!(
            p.missing(&p.effective(&[]), None),
            Some(granted(&["mcp"])),
            "every request needs the required scopes"
        );
    }

    #[test]
    fn tool_and_prompt_patterns_cover_a_gateways_upstream() {
        let config = ResourceServerConfig::new(
            "https://mcp.example.com/mcp",
            "https://as.example.com",
            JwksSource::Static(Default::default()),
        )
        .tool_scopes("files__*", &["files:read"])
        .tool_scopes("files__write_file", &["files:write"])
        .prompt_scopes("files__*", &["files:read"]);
        let p = ScopePolicy::new(&config);
        let reader = p.effective(&granted(&["files:read"]));
        assert_eq!(p.missing(&reader, Some((TargetKind::Tool, "files__read_file"))), None);
        assert_eq!(
            p.missing(&reader, Some((TargetKind::Tool, "files__write_file"))),
            Some(granted(&["files:write"])),
            "a tool's own rule beats the pattern"
        );
        assert_eq!(
            p.missing(&p.effective(&[]), Some((TargetKind::Prompt, "files__summary"))),
            Some(granted(&["files:read"]))
        );
        assert_eq!(p.missing(&p.effective(&[]), Some((TargetKind::Tool, "other__x"))), None);
    }
}
