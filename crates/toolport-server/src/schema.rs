//! JSON Schema generation (schemars, 2020-12) and validation (jsonschema).
//!
//! Schemas are generated once, when a tool or prompt is defined, with every
//! subschema inlined: clients differ in how well they follow `$ref`, and MCP
//! 2026-07-28 forbids dereferencing network refs anyway. The `$schema` key is
//! left out because 2020-12 is MCP's default dialect (2025-11-25 on) and some
//! strict clients refused the key.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// The JSON Schema of `T` as an object, ready for `inputSchema`/`outputSchema`.
pub fn schema_for<T: JsonSchema>() -> Map<String, Value> {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let schema = settings.into_generator().into_root_schema_for::<T>();
    let mut map = match schema.to_value() {
        Value::Object(map) => map,
        // `true`/`false` schemas: any value, or none.
        Value::Bool(true) => Map::new(),
        other => Map::from_iter([("not".to_owned(), Value::Bool(other == Value::Bool(true)))]),
    };
    map.remove("$schema");
    map.remove("title");
    let mut value = Value::Object(map);
    strip_nonstandard_formats(&mut value);
    match value {
        Value::Object(map) => map,
        _ => unreachable!("still an object"),
    }
}

/// The formats JSON Schema 2020-12 defines. schemars also writes Rust-specific
/// ones (`uint`, `int64`, `double`) that validators in other languages warn
/// about; the `minimum`/`maximum` it writes next to them already say the range.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

fn strip_nonstandard_formats(value: &mut Value) {
    match value {
        Value::Object(map) => {
            if map
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !STANDARD_FORMATS.contains(&f))
            {
                map.remove("format");
            }
            map.values_mut().for_each(strip_nonstandard_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_nonstandard_formats),
        _ => {}
    }
}

pub use toolport_protocol::param_headers::{HeaderParam, HeaderParamKind, header_params};

/// Checks values against a compiled schema: a tool's arguments against its
/// `inputSchema`, its structured results against its `outputSchema`.
pub(crate) struct ArgumentValidator {
    validator: jsonschema::Validator,
}

impl std::fmt::Debug for ArgumentValidator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ArgumentValidator")
    }
}

/// Most problems listed in one error message; the model needs the first few,
/// not a wall of text.
const MAX_REPORTED: usize = 5;

impl ArgumentValidator {
    /// Compiles a schema. Remote and file `$ref`s are not resolved (the
    /// crate's resolvers are compiled out), so a hostile schema cannot make
    /// the server fetch anything.
    pub(crate) fn new(schema: &Map<String, Value>) -> Result<Self, String> {
        let schema = Value::Object(schema.clone());
        jsonschema::draft202012::new(&schema)
            .map(|validator| ArgumentValidator { validator })
            .map_err(|e| format!("invalid JSON Schema: {e}"))
    }

    /// `Ok` or a message naming each problem and where it is; `what` names
    /// the checked value in it (`arguments`, `structuredContent`).
    pub(crate) fn check(&self, arguments: &Value, what: &str) -> Result<(), String> {
        // The common case, valid arguments, costs no allocation.
        if self.validator.is_valid(arguments) {
            return Ok(());
        }
        let mut problems = Vec::new();
        let mut total = 0;
        for error in self.validator.iter_errors(arguments) {
            total += 1;
            if problems.len() < MAX_REPORTED {
                let at = error.instance_path().to_string();
                let at = format!("{what}{at}");
                problems.push(format!("{at}: {error}"));
            }
        }
        if problems.is_empty() {
            return Ok(());
        }
        if total > problems.len() {
            problems.push(format!("and {} more", total - problems.len()));
        }
        Err(problems.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Sample {
        count: usize,
        ratio: f64,
        when: Option<String>,
        nested: Vec<Inner>,
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        id: u32,
    }

    #[test]
    fn schemas_are_inline_2020_12_without_rust_formats() {
        let schema = Value::Object(schema_for::<Sample>());
        let text = schema.to_string();
        assert!(!text.contains("$ref") && !text.contains("$defs"), "{text}");
        assert!(!text.contains("\"uint") && !text.contains("\"double\""), "{text}");
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"]["count"]["minimum"], 0);
        assert_eq!(
            schema["properties"]["nested"]["items"]["properties"]["id"]["type"],
            "integer"
        );
        assert!(schema.get("$schema").is_none());
    }
}
