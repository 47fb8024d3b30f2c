//! `[upstream.limits]`: what an upstream's limits are, and their checks.
//! How they become the server's own layers is `policy.rs`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use toolport_server::policy::{PolicyConfig, RateConfig, ToolPolicyConfig};

/// The limits of one upstream (`[upstream.limits]`): for all its tools
/// together, and per tool under `[upstream.limits.tools.NAME]`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UpstreamLimits {
    /// Calls of its tools running at once, all of them together.
    pub max_concurrent: Option<usize>,
    /// How long a call of one of its tools may run, in milliseconds, unless
    /// the tool has a deadline of its own.
    pub deadline_ms: Option<u64>,
    /// Calls of its tools per second, all tools and callers together.
    pub rate: Option<RateConfig>,
    /// Scopes a caller's token needs for its tools and prompts (needs
    /// `[oauth]`). Its resources keep their URIs: `[oauth] resource_scopes`
    /// covers them.
    pub scopes: Vec<String>,
    /// Per tool, by the upstream's own name for it; a name ending in `*` is
    /// a prefix of such names.
    pub tools: BTreeMap<String, ToolLimits>,
}

/// The limits of one upstream tool (`[upstream.limits.tools.NAME]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ToolLimits {
    /// Its calls running at once.
    pub max_concurrent: Option<usize>,
    /// How long one of its calls may run, in milliseconds.
    pub deadline_ms: Option<u64>,
    /// Its calls per second, all callers together.
    pub rate: Option<RateConfig>,
    /// Scopes a caller's token needs to call it (instead of the upstream's).
    pub scopes: Vec<String>,
}

impl UpstreamLimits {
    pub(crate) fn whole(&self) -> ToolPolicyConfig {
        ToolPolicyConfig {
            max_concurrent: self.max_concurrent,
            deadline_ms: self.deadline_ms,
            rate: self.rate.clone(),
        }
    }

    pub(crate) fn is_policy_empty(policy: &ToolPolicyConfig) -> bool {
        *policy == ToolPolicyConfig::default()
    }
}

impl ToolLimits {
    pub(crate) fn policy(&self) -> ToolPolicyConfig {
        ToolPolicyConfig {
            max_concurrent: self.max_concurrent,
            deadline_ms: self.deadline_ms,
            rate: self.rate.clone(),
        }
    }
}

/// Checks one upstream's limits; `at` names the upstream in messages.
pub(crate) fn check(at: &str, limits: &UpstreamLimits) -> Result<(), String> {
    // The server's own checks, with the whole upstream as the pattern `*`.
    let mut policy = PolicyConfig::none();
    policy.tools.insert("*".into(), limits.whole());
    for (name, tool) in &limits.tools {
        policy.tools.insert(name.clone(), tool.policy());
    }
    if let Err(e) = policy.validate("limits") {
        let key = e.key.replace("limits.tools.*.", "limits.");
        return Err(format!("{at}: {key} = {}: expected {}", e.value, e.expected));
    }
    let scopes = std::iter::once(("limits.scopes".to_owned(), &limits.scopes)).chain(
        limits
            .tools
            .iter()
            .map(|(name, t)| (format!("limits.tools.{name}.scopes"), &t.scopes)),
    );
    for (key, list) in scopes {
        if list.iter().any(|s| s.is_empty() || s.contains(char::is_whitespace)) {
            return Err(format!("{at}: {key} = {list:?}: expected scope names without spaces"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> UpstreamLimits {
        UpstreamLimits {
            max_concurrent: Some(4),
            tools: BTreeMap::from([("write_file".into(), ToolLimits::default())]),
            ..Default::default()
        }
    }

    #[test]
    fn bad_limits_name_the_upstream_and_the_key() {
        let mut up = limits();
        up.rate = Some(RateConfig {
            per_second: 0.0,
            burst: 1,
        });
        let err = check("upstream[0] (\"files\")", &up).unwrap_err();
        assert!(err.contains("limits.rate.per_second"), "{err}");
        let mut up = limits();
        up.tools.get_mut("write_file").unwrap().max_concurrent = Some(0);
        let err = check("u", &up).unwrap_err();
        assert!(err.contains("limits.tools.write_file.max_concurrent"), "{err}");
        let mut up = limits();
        up.scopes = vec!["a b".into()];
        assert!(check("u", &up).unwrap_err().contains("without spaces"));
        let mut up = limits();
        up.tools.insert("a*b".into(), ToolLimits::default());
        assert!(check("u", &up).unwrap_err().contains("pattern"));
    }
}
