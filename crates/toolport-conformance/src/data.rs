//! Media and schemas the fixture hands out.

use serde_json::{Map, Value, json};

/// A 1x1 PNG (one teal pixel), base64.
pub const TEST_IMAGE_PNG_BASE64: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR42mNgaGgAAAGEAQFocvOPAAAAAElFTkSuQmCC";

/// A WAV file (8 kHz, mono, 8-bit PCM, eight samples of silence), base64.
pub const TEST_AUDIO_WAV_BASE64: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

/// The `inputSchema` the `json-schema-2020-12` scenario expects back, keyword
/// for keyword: `$schema`, `$defs` (with an `$anchor`), `$ref`, `allOf`/`anyOf`,
/// `if`/`then`/`else` and `additionalProperties: false` (SEP-1613, SEP-2106).
pub fn json_schema_2020_12_input_schema() -> Map<String, Value> {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": { "type": "string" },
                    "city": { "type": "string" }
                }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" }
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": {
            "properties": { "contactMethod": { "const": "phone" } },
            "required": ["contactMethod"]
        },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false
    });
    object(schema)
}

/// [`json_schema_2020_12_input_schema`] as JSON text, for documentation and
/// for transports that want to compare bytes.
pub const JSON_SCHEMA_2020_12_INPUT_SCHEMA: &str = r##"{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","$defs":{"address":{"$anchor":"addressDef","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},"properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"},"contactMethod":{"type":"string","enum":["phone","email"]},"phone":{"type":"string"},"email":{"type":"string"}},"allOf":[{"anyOf":[{"required":["phone"]},{"required":["email"]}]}],"if":{"properties":{"contactMethod":{"const":"phone"}},"required":["contactMethod"]},"then":{"required":["phone"]},"else":{"required":["email"]},"additionalProperties":false}"##;

/// A JSON object literal as a map.
pub(crate) fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("expected a JSON object, got {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_text_and_the_schema_agree() {
        let text: Value = serde_json::from_str(JSON_SCHEMA_2020_12_INPUT_SCHEMA).unwrap();
        assert_eq!(text, Value::Object(json_schema_2020_12_input_schema()));
    }
}
