//! Which scopes an operation needs, and whether a caller has them, with
//! scope hierarchies (a broader scope implies the narrower ones).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::config::ResourceServerConfig;

/// The kinds of things scopes guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Tool,
    Resource,
    Prompt,
}

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

    /// The scopes using `name` needs (besides the ones every request needs).
    pub(crate) fn needed(&self, target: Target, name: &str) -> &[String] {
        let found = match target {
            Target::Tool => self.tools.get(name),
            Target::Prompt => self.prompts.get(name),
            Target::Resource => self.resources.get(name).or_else(|| {
                // The longest matching prefix pattern wins.
                self.resources
                    .iter()
                    .filter_map(|(k, v)| k.strip_suffix('*').map(|p| (p, v)))
                    .filter(|(prefix, _)| name.starts_with(prefix))
                    .max_by_key(|(prefix, _)| prefix.len())
                    .map(|(_, v)| v)
            }),
        };
        found.unwrap_or(&self.default)
    }

    /// The scopes an operation needs in all, when `effective` lacks any of
    /// them: `None` means allowed.
    pub(crate) fn missing(&self, effective: &BTreeSet<String>, target: Option<(Target, &str)>) -> Option<Vec<String>> {
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

/// What a JSON-RPC request touches, for the scope check.
pub(crate) fn target_of<'a>(method: &str, params: Option<&'a Value>) -> Option<(Target, &'a str)> {
    let str_param = |key: &str| params.and_then(|p| p.get(key)).and_then(Value::as_str);
    match method {
        "tools/call" => Some((Target::Tool, str_param("name").unwrap_or(""))),
        "prompts/get" => Some((Target::Prompt, str_param("name").unwrap_or(""))),
        "resources/read" | "resources/subscribe" | "resources/unsubscribe" => {
            Some((Target::Resource, str_param("uri").unwrap_or("")))
        }
        "completion/complete" => {
            let reference = params.and_then(|p| p.get("ref"))?;
            match reference.get("type").and_then(Value::as_str)? {
                "ref/prompt" => Some((Target::Prompt, reference.get("name").and_then(Value::as_str)?)),
                "ref/resource" => Some((Target::Resource, reference.get("uri").and_then(Value::as_str)?)),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

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
            p.missing(&user, Some((Target::Tool, "delete"))),
            Some(granted(&["mcp", "files:write"])),
            "the challenge names every scope the operation needs"
        );
        assert_eq!(p.missing(&user, Some((Target::Tool, "echo"))), None);
        let admin = p.effective(&granted(&["mcp", "admin"]));
        assert!(admin.contains("files:read"), "implied transitively");
        assert_eq!(p.missing(&admin, Some((Target::Tool, "delete"))), None);
        assert_eq!(
            p.missing(&user, Some((Target::Resource, "file:///secret/keys"))),
            Some(granted(&["mcp", "files:secret"]))
        );
        assert_eq!(
            p.missing(&user, Some((Target::Resource, "file:///secret/public.txt"))),
            None
        );
        assert_eq!(
            p.missing(&p.effective(&[]), None),
            Some(granted(&["mcp"])),
            "every request needs the required scopes"
        );
    }

    #[test]
    fn requests_name_their_targets() {
        assert_eq!(
            target_of("tools/call", Some(&json!({"name": "delete"}))),
            Some((Target::Tool, "delete"))
        );
        assert_eq!(
            target_of("resources/read", Some(&json!({"uri": "file:///a"}))),
            Some((Target::Resource, "file:///a"))
        );
        assert_eq!(
            target_of(
                "completion/complete",
                Some(&json!({"ref": {"type": "ref/prompt", "name": "p"}}))
            ),
            Some((Target::Prompt, "p"))
        );
        assert_eq!(
            target_of("tools/call", None),
            Some((Target::Tool, "")),
            "a call without a name still gets the default scopes checked"
        );
        assert_eq!(target_of("tools/list", None), None);
    }
}
