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
    map
}

/// Checks arguments against a tool's input schema.
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

    /// `Ok` or a message naming each problem and where it is.
    pub(crate) fn check(&self, arguments: &Value) -> Result<(), String> {
        let mut problems = Vec::new();
        let mut total = 0;
        for error in self.validator.iter_errors(arguments) {
            total += 1;
            if problems.len() < MAX_REPORTED {
                let at = error.instance_path().to_string();
                let at = if at.is_empty() {
                    "arguments".to_owned()
                } else {
                    format!("arguments{at}")
                };
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
