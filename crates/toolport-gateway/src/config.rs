//! The `[gateway]` section and the `[[upstream]]` entries of a configuration
//! file, and their checks: every mistake is found at start-up, named by the
//! upstream and the key.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Gateway-wide settings (`[gateway]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct GatewaySection {
    /// Between an upstream's name and its tool's or prompt's name
    /// (`files__read_file`). `__` by default, as most gateways settled on.
    pub separator: String,
    /// The pins file: approved upstream tool definitions (`toolport pins`).
    /// Without one, pinning is off and every upstream tool is served.
    pub pins: Option<PathBuf>,
    /// How long `toolport serve` waits for each upstream's first listing at
    /// start-up before it serves without it.
    pub start_timeout_seconds: u64,
}

impl Default for GatewaySection {
    fn default() -> Self {
        GatewaySection {
            separator: "__".into(),
            pins: None,
            start_timeout_seconds: 60,
        }
    }
}

/// Who shares one upstream process (or, over HTTP, one upstream session).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Share {
    /// One for every caller.
    #[default]
    Shared,
    /// One per authenticated principal (subject); unauthenticated callers
    /// share one.
    PerPrincipal,
    /// One per handshake-era session; a 2026-07-28 request, which has no
    /// session, gets one of its own for that request.
    PerSession,
}

impl Share {
    /// The configuration's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Share::Shared => "shared",
            Share::PerPrincipal => "per_principal",
            Share::PerSession => "per_session",
        }
    }
}

/// A secret from the configuration: never shown by `Debug`.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// How a crashed stdio upstream is restarted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RestartSection {
    /// The first delay before a restart, in milliseconds; doubled after each
    /// crash in a row.
    pub initial_backoff_ms: u64,
    /// The longest delay between restarts, in milliseconds.
    pub max_backoff_ms: u64,
    /// A process that ran at least this long had not crash-looped: the next
    /// crash starts the backoff over.
    pub healthy_after_seconds: u64,
    /// Crashes in a row after which the upstream is reported `crash_loop`
    /// (in `/ready` and `/metrics`); restarts go on at the longest delay.
    pub crash_loop_after: u32,
    /// How long a stopping process gets after its input is closed, and again
    /// after SIGTERM, before its process group is killed.
    pub stop_grace_ms: u64,
}

impl Default for RestartSection {
    fn default() -> Self {
        RestartSection {
            initial_backoff_ms: 500,
            max_backoff_ms: 30_000,
            healthy_after_seconds: 30,
            crash_loop_after: 5,
            stop_grace_ms: 2_000,
        }
    }
}

impl RestartSection {
    /// The delay before the restart that follows `crashes` crashes in a row.
    pub fn backoff(&self, crashes: u32) -> Duration {
        let initial = Duration::from_millis(self.initial_backoff_ms);
        let max = Duration::from_millis(self.max_backoff_ms.max(self.initial_backoff_ms));
        initial
            .saturating_mul(1u32 << crashes.saturating_sub(1).min(20))
            .min(max)
    }
}

/// One `[[upstream]]`: a command spoken to over stdio, or a Streamable HTTP
/// endpoint of either era.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamConfig {
    /// The prefix of its tools and prompts: letters, digits, `_` and `-`.
    pub name: String,
    /// The program (stdio).
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables for it.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Its working directory.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// The MCP endpoint (Streamable HTTP).
    #[serde(default)]
    pub url: Option<String>,
    /// A fixed bearer token for the HTTP upstream (with `forward_token`:
    /// for reading its lists only).
    #[serde(default)]
    pub bearer: Option<Secret>,
    /// OAuth client credentials for the HTTP upstream: the client id...
    #[serde(default)]
    pub client_id: Option<String>,
    /// ...and its secret.
    #[serde(default)]
    pub client_secret: Option<Secret>,
    /// Pass the caller's own token on to this upstream with each of the
    /// caller's calls. Off by default: a token issued for this gateway is not
    /// meant for anyone else (the upstream must accept tokens issued for the
    /// gateway). Needs `share = "per_principal"` or `"per_session"`; the
    /// lists are read with `bearer` or the client credentials if given.
    #[serde(default)]
    pub forward_token: bool,
    /// Who shares one process or upstream session.
    #[serde(default)]
    pub share: Share,
    /// The most processes (or upstream sessions) of a `per_principal` or
    /// `per_session` pool at once.
    #[serde(default = "default_max_processes")]
    pub max_processes: usize,
    /// A pooled process unused this long is stopped.
    #[serde(default = "default_idle_timeout")]
    pub idle_timeout_seconds: u64,
    /// A required upstream that is down makes `/ready` fail; an optional one
    /// only drops its tools while it is down.
    #[serde(default = "yes")]
    pub required: bool,
    /// `auto` (the default: 2026-07-28 if the upstream speaks it, else the
    /// handshake) or a protocol version to speak exactly.
    #[serde(default)]
    pub protocol: Option<String>,
    /// Serve the upstream's resources and templates (under their own URIs).
    /// `false` for a second upstream that offers the same URIs as another.
    #[serde(default = "yes")]
    pub resources: bool,
    /// How long one forwarded request may take, in seconds.
    #[serde(default = "default_timeout")]
    pub timeout_seconds: u64,
    /// Restarts of a stdio upstream.
    #[serde(default)]
    pub restart: RestartSection,
    /// Our policy layers around its calls (`[upstream.limits]`).
    #[serde(default)]
    pub limits: crate::limits::UpstreamLimits,
}

fn default_max_processes() -> usize {
    16
}
fn default_idle_timeout() -> u64 {
    300
}
fn default_timeout() -> u64 {
    60
}
fn yes() -> bool {
    true
}

impl UpstreamConfig {
    /// A stdio upstream with defaults.
    pub fn stdio(name: impl Into<String>, command: impl Into<String>, args: &[&str]) -> Self {
        UpstreamConfig {
            command: Some(command.into()),
            args: args.iter().map(|a| (*a).to_owned()).collect(),
            ..Self::empty(name.into())
        }
    }

    /// An HTTP upstream with defaults.
    pub fn http(name: impl Into<String>, url: impl Into<String>) -> Self {
        UpstreamConfig {
            url: Some(url.into()),
            ..Self::empty(name.into())
        }
    }

    fn empty(name: String) -> Self {
        UpstreamConfig {
            name,
            command: None,
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            bearer: None,
            client_id: None,
            client_secret: None,
            forward_token: false,
            share: Share::Shared,
            max_processes: default_max_processes(),
            idle_timeout_seconds: default_idle_timeout(),
            required: true,
            protocol: None,
            resources: true,
            timeout_seconds: default_timeout(),
            restart: RestartSection::default(),
            limits: crate::limits::UpstreamLimits::default(),
        }
    }

    /// Whether it is spoken to over stdio.
    pub fn is_stdio(&self) -> bool {
        self.command.is_some()
    }
}

/// A configuration mistake, named by upstream and key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ConfigError(pub String);

/// Checks the gateway section and every upstream.
pub fn check(gateway: &GatewaySection, upstreams: &[UpstreamConfig]) -> Result<(), ConfigError> {
    let bad = |m: String| Err(ConfigError(m));
    if gateway.separator.is_empty()
        || !gateway
            .separator
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        return bad(format!(
            "gateway.separator = {:?}: expected one or more of A-Z, a-z, 0-9, '_', '-', '.' (tool names allow no others)",
            gateway.separator
        ));
    }
    let mut names = BTreeSet::new();
    for (i, up) in upstreams.iter().enumerate() {
        let at = format!("upstream[{i}] ({:?})", up.name);
        if up.name.is_empty()
            || up.name.len() > 64
            || !up
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
        {
            return bad(format!(
                "{at}: name must be 1-64 characters of A-Z, a-z, 0-9, '_' and '-'"
            ));
        }
        if up.name.contains(&gateway.separator) {
            return bad(format!(
                "{at}: name contains the separator {:?}, so prefixed names would be ambiguous",
                gateway.separator
            ));
        }
        if !names.insert(up.name.as_str()) {
            return bad(format!("{at}: another upstream has the same name"));
        }
        match (&up.command, &up.url) {
            (Some(_), Some(_)) => return bad(format!("{at}: give either command (stdio) or url (HTTP), not both")),
            (None, None) => return bad(format!("{at}: give command (stdio) or url (HTTP)")),
            (Some(c), None) if c.trim().is_empty() => return bad(format!("{at}: command is empty")),
            (None, Some(url)) if !(url.starts_with("http://") || url.starts_with("https://")) => {
                return bad(format!("{at}: url = {url:?}: expected an http:// or https:// URL"));
            }
            _ => {}
        }
        if up.is_stdio() {
            for key in [
                ("bearer", up.bearer.is_some()),
                ("client_id", up.client_id.is_some()),
                ("forward_token", up.forward_token),
            ] {
                if key.1 {
                    return bad(format!("{at}: {} is for HTTP upstreams (url), not commands", key.0));
                }
            }
        }
        if up.bearer.is_some() && up.client_id.is_some() {
            return bad(format!(
                "{at}: choose one credential of the gateway's own: bearer, or client_id + client_secret"
            ));
        }
        if up.client_id.is_some() != up.client_secret.is_some() {
            return bad(format!("{at}: client_id and client_secret go together"));
        }
        if up.forward_token && up.share == Share::Shared {
            return bad(format!(
                "{at}: forward_token needs share = \"per_principal\" or \"per_session\": a shared upstream connection would carry one caller's token for another's calls"
            ));
        }
        if up.max_processes == 0 {
            return bad(format!("{at}: max_processes must be at least 1"));
        }
        if up.timeout_seconds == 0 {
            return bad(format!("{at}: timeout_seconds must be at least 1"));
        }
        crate::limits::check(&at, &up.limits).map_err(ConfigError)?;
        if let Some(p) = &up.protocol
            && p != "auto"
            && p.parse::<toolport_protocol::ProtocolVersion>().is_err()
        {
            return bad(format!(
                "{at}: protocol = {p:?}: expected auto or a protocol version such as 2025-11-25"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(up: UpstreamConfig) -> Result<(), ConfigError> {
        check(&GatewaySection::default(), &[up])
    }

    #[test]
    fn good_upstreams_pass() {
        assert_eq!(one(UpstreamConfig::stdio("files", "npx", &["x"])), Ok(()));
        assert_eq!(one(UpstreamConfig::http("remote", "http://127.0.0.1:1/mcp")), Ok(()));
    }

    #[test]
    fn mistakes_name_the_upstream_and_the_key() {
        let cases = [
            (UpstreamConfig::stdio("a b", "x", &[]), "name must be"),
            (UpstreamConfig::stdio("a__b", "x", &[]), "separator"),
            (UpstreamConfig::stdio("", "x", &[]), "name must be"),
            (UpstreamConfig::http("h", "ftp://x"), "http:// or https://"),
            (UpstreamConfig::stdio("s", " ", &[]), "command is empty"),
            (
                UpstreamConfig {
                    url: Some("http://x".into()),
                    ..UpstreamConfig::stdio("s", "x", &[])
                },
                "not both",
            ),
            (
                UpstreamConfig {
                    bearer: Some(Secret("t".into())),
                    ..UpstreamConfig::stdio("s", "x", &[])
                },
                "bearer is for HTTP",
            ),
            (
                UpstreamConfig {
                    client_id: Some("c".into()),
                    ..UpstreamConfig::http("h", "http://x")
                },
                "go together",
            ),
            (
                UpstreamConfig {
                    max_processes: 0,
                    ..UpstreamConfig::http("h", "http://x")
                },
                "max_processes",
            ),
            (
                UpstreamConfig {
                    protocol: Some("1999-01-01".into()),
                    ..UpstreamConfig::http("h", "http://x")
                },
                "protocol",
            ),
        ];
        for (up, expected) in cases {
            let name = up.name.clone();
            let err = one(up).expect_err(&name).0;
            assert!(err.contains(expected), "{name}: {err}");
        }
        let twice = [
            UpstreamConfig::stdio("a", "x", &[]),
            UpstreamConfig::stdio("a", "y", &[]),
        ];
        assert!(
            check(&GatewaySection::default(), &twice)
                .unwrap_err()
                .0
                .contains("same name")
        );
        let sep = GatewaySection {
            separator: "/".into(),
            ..GatewaySection::default()
        };
        assert!(check(&sep, &[]).unwrap_err().0.contains("separator"));
    }

    #[test]
    fn secrets_are_redacted_and_backoff_doubles_to_its_cap() {
        let up = UpstreamConfig {
            bearer: Some(Secret("hunter2".into())),
            ..UpstreamConfig::http("h", "http://x")
        };
        assert!(!format!("{up:?}").contains("hunter2"));
        let r = RestartSection {
            initial_backoff_ms: 100,
            max_backoff_ms: 1000,
            ..RestartSection::default()
        };
        let steps: Vec<u64> = (1..7).map(|n| r.backoff(n).as_millis() as u64).collect();
        assert_eq!(steps, [100, 200, 400, 800, 1000, 1000]);
    }
}
