//! The `_meta` of a request, read into the fields MCP defines.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::map::{Meta, keys};
use crate::capabilities::{ClientCapabilities, Implementation};
use crate::logging::LoggingLevel;
use crate::progress::ProgressToken;

/// The `_meta` of a request, with the keys MCP defines pulled out.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RequestMeta {
    /// Where progress notifications for this request should point.
    #[serde(rename = "progressToken", default, skip_serializing_if = "Option::is_none")]
    pub progress_token: Option<ProgressToken>,
    /// The 2026-07-28 protocol version; `None` on a handshake-era request.
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub protocol_version: Option<String>,
    /// The client's capabilities (2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<ClientCapabilities>,
    /// The client's identity (2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// The lowest level of `notifications/message` wanted for this request (2026-07-28).
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
    /// Every other key, kept as it came.
    #[serde(flatten)]
    pub other: Meta,
}

impl RequestMeta {
    /// Reads a request's `_meta` object, taking the keys MCP defines out of
    /// it. Faster than deserializing with `#[serde(flatten)]`, which buffers
    /// the whole object; this is on every request's path.
    ///
    /// ```
    /// use toolport_protocol::meta::RequestMeta;
    /// let meta = RequestMeta::from_value(serde_json::json!({
    ///     "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    ///     "io.modelcontextprotocol/clientCapabilities": {},
    ///     "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    /// })).unwrap();
    /// assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
    /// assert!(meta.other.contains_key("traceparent"));
    /// ```
    pub fn from_value(value: Value) -> Result<RequestMeta, String> {
        let Value::Object(map) = value else {
            return Err("_meta must be an object".into());
        };
        fn typed<T: serde::de::DeserializeOwned>(key: &str, value: Value) -> Result<Option<T>, String> {
            serde_json::from_value(value)
                .map(Some)
                .map_err(|e| format!("_meta {key}: {e}"))
        }
        // One pass over the object, each entry moved where it belongs
        // (cheaper than looking every known key up and removing it).
        let mut meta = RequestMeta::default();
        for (key, value) in map {
            match key.as_str() {
                keys::PROGRESS_TOKEN => meta.progress_token = typed(&key, value)?,
                keys::PROTOCOL_VERSION => meta.protocol_version = typed(&key, value)?,
                // What clients send most: no capabilities, read without serde.
                keys::CLIENT_CAPABILITIES if value.as_object().is_some_and(Map::is_empty) => {
                    meta.client_capabilities = Some(ClientCapabilities::default());
                }
                keys::CLIENT_CAPABILITIES => meta.client_capabilities = typed(&key, value)?,
                keys::CLIENT_INFO => meta.client_info = typed(&key, value)?,
                keys::LOG_LEVEL => meta.log_level = typed(&key, value)?,
                _ => {
                    meta.other.insert(key, value);
                }
            }
        }
        Ok(meta)
    }

    /// Whether this `_meta` speaks the stateless era: any `io.modelcontextprotocol/`
    /// key but the progress token marks a 2026-07-28 request.
    pub fn is_stateless(&self) -> bool {
        self.protocol_version.is_some() || self.client_capabilities.is_some() || self.client_info.is_some()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn from_value_reads_what_serde_reads() {
        let cases = [
            json!({}),
            json!({"progressToken": "p1", "traceparent": "00-abc", "x.example/k": [1, {"a": null}]}),
            json!({
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
                "io.modelcontextprotocol/logLevel": "warning",
                "progressToken": 7
            }),
            json!({"io.modelcontextprotocol/clientCapabilities": {"sampling": {}, "roots": {"listChanged": true}}}),
        ];
        for case in cases {
            let by_serde: RequestMeta = serde_json::from_value(case.clone()).unwrap();
            assert_eq!(RequestMeta::from_value(case.clone()).unwrap(), by_serde, "{case}");
        }
        for bad in [
            json!([]),
            json!({"progressToken": null}),
            json!({"io.modelcontextprotocol/protocolVersion": 2026}),
            json!({"io.modelcontextprotocol/clientCapabilities": "all"}),
            json!({"io.modelcontextprotocol/clientInfo": {"name": "no version"}}),
            json!({"io.modelcontextprotocol/logLevel": "loud"}),
        ] {
            let error = RequestMeta::from_value(bad.clone()).expect_err(&bad.to_string());
            assert!(error.starts_with("_meta"), "{bad}: {error}");
        }
    }
}
