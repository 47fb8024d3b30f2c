//! Protocol revisions and the two eras they fall into.
//!
//! MCP revisions up to 2025-11-25 open a connection with an `initialize`
//! handshake ([`Era::Handshake`]); 2026-07-28 dropped the handshake and carries
//! the version in every request's `_meta` ([`Era::Stateless`]). See
//! `basic/versioning` of each revision.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// One released revision of the MCP specification.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum ProtocolVersion {
    /// The first release; stdio in practice.
    V2024_11_05,
    /// Streamable HTTP, batching, OAuth, tool annotations.
    V2025_03_26,
    /// Structured tool output, elicitation; batching removed.
    V2025_06_18,
    /// Icons, URL elicitation, sampling with tools, tasks.
    V2025_11_25,
    /// Stateless: per-request `_meta`, `server/discover`, MRTR, subscriptions/listen.
    V2026_07_28,
}

/// How a revision establishes the protocol version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Era {
    /// `initialize` handshake; state scoped to a connection or HTTP session.
    Handshake,
    /// No handshake; every request names its version in `_meta`.
    Stateless,
}

impl ProtocolVersion {
    /// Every revision this crate speaks, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];
    /// The newest revision.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2026_07_28;
    /// The newest revision with an `initialize` handshake: what a handshake
    /// answers when the client asks for a version we do not know.
    pub const LATEST_HANDSHAKE: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// The wire form, for example `"2025-11-25"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// The era this revision belongs to.
    pub const fn era(self) -> Era {
        match self {
            ProtocolVersion::V2026_07_28 => Era::Stateless,
            _ => Era::Handshake,
        }
    }

    /// Whether JSON-RPC batches are allowed (2025-03-26 only).
    pub const fn allows_batches(self) -> bool {
        matches!(self, ProtocolVersion::V2025_03_26)
    }

    /// Whether tools may declare `outputSchema` and return `structuredContent`.
    pub fn has_structured_output(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// Whether `elicitation/create` exists.
    pub fn has_elicitation(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// Versions supported in the given era, newest first.
    pub fn supported_in(era: Era) -> impl Iterator<Item = ProtocolVersion> {
        ProtocolVersion::ALL.into_iter().rev().filter(move |v| v.era() == era)
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A version string this crate does not speak.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unsupported protocol version {0:?}")]
pub struct UnknownVersion(pub String);

impl FromStr for ProtocolVersion {
    type Err = UnknownVersion;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ProtocolVersion::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownVersion(s.to_owned()))
    }
}

impl Serialize for ProtocolVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ProtocolVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_parse_and_order() {
        for v in ProtocolVersion::ALL {
            assert_eq!(v.as_str().parse::<ProtocolVersion>().unwrap(), v);
        }
        assert!("2025-13-01".parse::<ProtocolVersion>().is_err());
        assert!(ProtocolVersion::V2025_03_26 < ProtocolVersion::V2026_07_28);
        assert_eq!(ProtocolVersion::LATEST.era(), Era::Stateless);
        assert_eq!(ProtocolVersion::LATEST_HANDSHAKE.era(), Era::Handshake);
        let batch: Vec<_> = ProtocolVersion::ALL
            .into_iter()
            .filter(|v| v.allows_batches())
            .collect();
        assert_eq!(batch, [ProtocolVersion::V2025_03_26]);
        let stateless: Vec<_> = ProtocolVersion::supported_in(Era::Stateless).collect();
        assert_eq!(stateless, [ProtocolVersion::V2026_07_28]);
    }
}
