//! Tool arguments mirrored into HTTP headers (2026-07-28,
//! `basic/transports/streamable-http#custom-headers-from-tool-parameters`):
//! a primitive input property annotated with `x-mcp-header: Name` travels in
//! an `Mcp-Param-Name` header as well as in the body, so proxies can route on
//! it. Servers check the header against the body; clients must send it and
//! must refuse tools whose annotations are invalid.
//!
//! Values that are not plain visible ASCII (non-ASCII, control characters,
//! leading or trailing whitespace, or text that itself looks like the
//! sentinel) are sent as `=?base64?<base64 of the UTF-8>?=`.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

/// The prefix of a base64-encoded header value.
const SENTINEL_START: &str = "=?base64?";
/// The suffix of a base64-encoded header value.
const SENTINEL_END: &str = "?=";

/// A tool argument mirrored into an `Mcp-Param-{name}` HTTP header
/// (`x-mcp-header`, 2026-07-28 `basic/transports/streamable-http`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeaderParam {
    /// The `{name}` part of the header name, as the schema spells it.
    pub name: String,
    /// The chain of `properties` keys from the schema root to the argument.
    pub path: Vec<String>,
    /// The argument's primitive type.
    pub kind: HeaderParamKind,
}

/// The types an `x-mcp-header` argument may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderParamKind {
    /// A string, sent as it is.
    String,
    /// An integer, compared numerically.
    Integer,
    /// `true` or `false`.
    Boolean,
}

/// The `x-mcp-header` annotations of an input schema, or why they are invalid
/// (empty or non-token names, duplicates, non-primitive types, or an
/// annotation not reachable through `properties` alone).
pub fn header_params(schema: &Map<String, Value>) -> Result<Vec<HeaderParam>, String> {
    let mut found = Vec::new();
    collect_header_params(schema, &mut Vec::new(), &mut found)?;
    let mut seen = std::collections::BTreeSet::new();
    for p in &found {
        if !seen.insert(p.name.to_ascii_lowercase()) {
            return Err(format!("x-mcp-header {:?} is used twice", p.name));
        }
    }
    // Annotations anywhere else (items, anyOf, $defs...) make the tool invalid.
    let reachable = found.len();
    if count_annotations(&Value::Object(schema.clone())) != reachable {
        return Err("x-mcp-header may only annotate properties reachable through `properties`".into());
    }
    Ok(found)
}

fn collect_header_params(
    schema: &Map<String, Value>,
    path: &mut Vec<String>,
    out: &mut Vec<HeaderParam>,
) -> Result<(), String> {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Ok(());
    };
    for (key, property) in properties {
        let Some(property) = property.as_object() else { continue };
        path.push(key.clone());
        if let Some(name) = property.get("x-mcp-header") {
            let name = name.as_str().ok_or("x-mcp-header must be a string")?;
            let token = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
            if !token {
                return Err(format!("x-mcp-header {name:?} is not an HTTP header name token"));
            }
            let kind = match property.get("type").and_then(Value::as_str) {
                Some("string") => HeaderParamKind::String,
                Some("integer") => HeaderParamKind::Integer,
                Some("boolean") => HeaderParamKind::Boolean,
                other => {
                    return Err(format!(
                        "x-mcp-header {name:?} annotates a {other:?}, not a string, integer or boolean"
                    ));
                }
            };
            out.push(HeaderParam {
                name: name.to_owned(),
                path: path.clone(),
                kind,
            });
        }
        collect_header_params(property, path, out)?;
        path.pop();
    }
    Ok(())
}

fn count_annotations(value: &Value) -> usize {
    match value {
        Value::Object(map) => {
            usize::from(map.contains_key("x-mcp-header")) + map.values().map(count_annotations).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_annotations).sum(),
        _ => 0,
    }
}

/// The header value for `value`: itself when it is plain visible ASCII
/// (inner spaces allowed), otherwise `=?base64?...?=`.
///
/// ```
/// use toolport_protocol::param_headers::encode_value;
/// assert_eq!(encode_value("us west 1"), "us west 1");
/// assert_eq!(encode_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
/// assert_eq!(encode_value("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
/// ```
pub fn encode_value(value: &str) -> String {
    let plain = value.bytes().all(|b| (0x20..0x7f).contains(&b))
        && value.trim() == value
        && !(value.starts_with(SENTINEL_START) && value.ends_with(SENTINEL_END));
    if plain {
        value.to_owned()
    } else {
        format!("{SENTINEL_START}{}{SENTINEL_END}", STANDARD.encode(value))
    }
}

/// Decodes a header value: the text inside `=?base64?...?=`, or the value as
/// it is. `None` when the base64 part is invalid or not UTF-8.
pub fn decode_value(value: &str) -> Option<String> {
    match value
        .strip_prefix(SENTINEL_START)
        .and_then(|v| v.strip_suffix(SENTINEL_END))
    {
        None => Some(value.to_owned()),
        Some(encoded) => STANDARD.decode(encoded).ok().and_then(|b| String::from_utf8(b).ok()),
    }
}

impl HeaderParam {
    /// The header name, `Mcp-Param-{name}`.
    pub fn header_name(&self) -> String {
        format!("Mcp-Param-{}", self.name)
    }

    /// The header value for these arguments: `None` when the argument is
    /// absent or null (the header is then left out) or not of the declared type.
    pub fn value_in(&self, arguments: &Map<String, Value>) -> Option<String> {
        let (first, rest) = self.path.split_first()?;
        let value = rest.iter().try_fold(arguments.get(first)?, |v, key| v.get(key))?;
        match (self.kind, value) {
            (HeaderParamKind::String, Value::String(s)) => Some(encode_value(s)),
            (HeaderParamKind::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => Some(n.to_string()),
            (HeaderParamKind::Boolean, Value::Bool(b)) => Some(b.to_string()),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_params_are_found_and_checked() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "nested": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}},
            "plain": {"type": "string"}
        }});
        let params = header_params(schema.as_object().unwrap()).unwrap();
        assert_eq!(params.len(), 2);
        assert_eq!(
            params[1],
            HeaderParam {
                name: "Region".into(),
                path: vec!["region".into()],
                kind: HeaderParamKind::String
            }
        );
        assert_eq!(params[0].path, ["nested", "n"]);
        for bad in [
            serde_json::json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
            serde_json::json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            serde_json::json!({"properties": {"a": {"type": "string", "x-mcp-header": "has space"}}}),
            serde_json::json!({"properties": {"a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}}),
            serde_json::json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "X"}}}}),
        ] {
            assert!(header_params(bad.as_object().unwrap()).is_err(), "{bad}");
        }
    }

    #[test]
    fn values_are_encoded_only_when_they_must_be() {
        for plain in ["us-west1", "", "us west 1", "SELECT * FROM users", "=?base64?"] {
            assert_eq!(encode_value(plain), plain);
        }
        for unsafe_value in [
            " lead",
            "trail ",
            "\tindented",
            "line1\nline2",
            "line1\r\nline2",
            "é",
            "=?base64?SGk=?=",
        ] {
            let encoded = encode_value(unsafe_value);
            assert!(encoded.starts_with(SENTINEL_START), "{unsafe_value:?} -> {encoded}");
            assert_eq!(decode_value(&encoded).as_deref(), Some(unsafe_value));
        }
        assert_eq!(decode_value("=?base64?!!?="), None);
    }

    #[test]
    fn argument_values_follow_the_declared_type() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "o": {"type": "object", "properties": {"n": {"type": "integer", "x-mcp-header": "N"}}}
        }});
        let params = header_params(schema.as_object().unwrap()).unwrap();
        let args = serde_json::json!({"region": "Hello, 世界", "priority": 42, "verbose": null, "o": {"n": 7}});
        let args = args.as_object().unwrap();
        let mut got: Vec<(String, Option<String>)> =
            params.iter().map(|p| (p.header_name(), p.value_in(args))).collect();
        got.sort();
        assert_eq!(
            got,
            [
                ("Mcp-Param-N".into(), Some("7".into())),
                ("Mcp-Param-Priority".into(), Some("42".into())),
                (
                    "Mcp-Param-Region".into(),
                    Some("=?base64?SGVsbG8sIOS4lueVjA==?=".into())
                ),
                ("Mcp-Param-Verbose".into(), None),
            ]
        );
    }
}
