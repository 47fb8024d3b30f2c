//! `[upstream.limits]`: the server's own policy layers (concurrency gates,
//! deadlines, rate limits) and the resource server's scopes, for one
//! upstream as a whole and for each of its tools.
//!
//! Nothing here enforces anything: the settings become entries of the
//! server's `[limits.tools]` and of `[oauth] tool_scopes`/`prompt_scopes`
//! under the served names, the whole upstream as the pattern
//! `<upstream><separator>*`, which those layers apply to every tool that
//! matches (together: one gate, one bucket). So a gateway's calls meet the
//! same layers, with the same errors, as any Toolport server's.

use std::collections::BTreeMap;

use toolport_server::policy::PolicyConfig;

use crate::config::{ConfigError, GatewaySection, UpstreamConfig};
pub use crate::limits::{ToolLimits, UpstreamLimits};

/// Whether any upstream asks for scopes (which need `[oauth]`).
pub fn wants_scopes(upstreams: &[UpstreamConfig]) -> bool {
    upstreams
        .iter()
        .any(|u| !u.limits.scopes.is_empty() || u.limits.tools.values().any(|t| !t.scopes.is_empty()))
}

fn served(section: &GatewaySection, upstream: &UpstreamConfig, tool: &str) -> String {
    format!("{}{}{tool}", upstream.name, section.separator)
}

/// Puts `entries` in `into`, refusing a name `into` already has (set by
/// hand in the section `what`).
fn merge<V>(into: &mut BTreeMap<String, V>, entries: Vec<(String, V)>, what: &str) -> Result<(), ConfigError> {
    for (name, value) in entries {
        if into.contains_key(&name) {
            return Err(ConfigError(format!(
                "{what}.{name:?} is set there and by an upstream's limits; keep one of them"
            )));
        }
        into.insert(name, value);
    }
    Ok(())
}

/// `base` (the `[limits]` section) with every upstream's limits added under
/// the served names.
pub fn merged_limits(
    base: &PolicyConfig,
    section: &GatewaySection,
    upstreams: &[UpstreamConfig],
) -> Result<PolicyConfig, ConfigError> {
    let mut entries = Vec::new();
    for up in upstreams {
        let whole = up.limits.whole();
        if !UpstreamLimits::is_policy_empty(&whole) {
            entries.push((served(section, up, "*"), whole));
        }
        for (tool, limits) in &up.limits.tools {
            let policy = limits.policy();
            if !UpstreamLimits::is_policy_empty(&policy) {
                entries.push((served(section, up, tool), policy));
            }
        }
    }
    let mut merged = base.clone();
    merge(&mut merged.tools, entries, "limits.tools")?;
    Ok(merged)
}

/// The scope rules the upstreams' limits add: for tools and for prompts, by
/// served name or pattern.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScopeRules {
    /// By tool name or pattern.
    pub tools: BTreeMap<String, Vec<String>>,
    /// By prompt name or pattern.
    pub prompts: BTreeMap<String, Vec<String>>,
}

/// `tool_scopes` and `prompt_scopes` (of `[oauth]`) with the upstreams'
/// scopes added: an upstream's `scopes` for all its tools and prompts, a
/// tool's own for that tool.
pub fn merged_scopes(
    base: &ScopeRules,
    section: &GatewaySection,
    upstreams: &[UpstreamConfig],
) -> Result<ScopeRules, ConfigError> {
    let (mut tools, mut prompts) = (Vec::new(), Vec::new());
    for up in upstreams {
        if !up.limits.scopes.is_empty() {
            tools.push((served(section, up, "*"), up.limits.scopes.clone()));
            prompts.push((served(section, up, "*"), up.limits.scopes.clone()));
        }
        for (tool, limits) in &up.limits.tools {
            if !limits.scopes.is_empty() {
                tools.push((served(section, up, tool), limits.scopes.clone()));
            }
        }
    }
    let mut merged = base.clone();
    merge(&mut merged.tools, tools, "oauth.tool_scopes")?;
    merge(&mut merged.prompts, prompts, "oauth.prompt_scopes")?;
    Ok(merged)
}

/// Scope rules by name or pattern.
type Rules = BTreeMap<String, Vec<String>>;

/// `[limits]` and `[oauth]`'s `tool_scopes` and `prompt_scopes` with
/// every upstream's limits added under its served names.
pub fn layers(
    limits: &PolicyConfig,
    (tool_scopes, prompt_scopes): (&Rules, &Rules),
    section: &GatewaySection,
    upstreams: &[UpstreamConfig],
) -> Result<(PolicyConfig, ScopeRules), ConfigError> {
    let base = ScopeRules {
        tools: tool_scopes.clone(),
        prompts: prompt_scopes.clone(),
    };
    Ok((
        merged_limits(limits, section, upstreams)?,
        merged_scopes(&base, section, upstreams)?,
    ))
}

#[cfg(test)]
mod tests {
    use toolport_server::policy::ToolPolicyConfig;

    use super::*;

    fn upstream() -> UpstreamConfig {
        let mut up = UpstreamConfig::stdio("files", "x", &[]);
        up.limits = UpstreamLimits {
            max_concurrent: Some(4),
            scopes: vec!["files:read".into()],
            tools: BTreeMap::from([(
                "write_file".into(),
                ToolLimits {
                    deadline_ms: Some(500),
                    scopes: vec!["files:write".into()],
                    ..Default::default()
                },
            )]),
            ..Default::default()
        };
        up
    }

    #[test]
    fn limits_become_entries_under_the_served_names() {
        let section = GatewaySection::default();
        let merged = merged_limits(&PolicyConfig::default(), &section, &[upstream()]).unwrap();
        assert_eq!(merged.tools["files__*"].max_concurrent, Some(4));
        assert_eq!(merged.tools["files__write_file"].deadline_ms, Some(500));
        let scopes = merged_scopes(&ScopeRules::default(), &section, &[upstream()]).unwrap();
        assert_eq!(scopes.tools["files__*"], ["files:read"]);
        assert_eq!(scopes.prompts["files__*"], ["files:read"]);
        assert_eq!(scopes.tools["files__write_file"], ["files:write"]);
        let mut by_hand = PolicyConfig::default();
        by_hand
            .tools
            .insert("files__write_file".into(), ToolPolicyConfig::default());
        let err = merged_limits(&by_hand, &section, &[upstream()]).unwrap_err();
        assert!(err.0.contains("keep one of them"), "{err}");
    }
}
