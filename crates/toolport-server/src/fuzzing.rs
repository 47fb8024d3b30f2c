//! Entry points for the fuzz targets (`fuzz/`) and their corpus replay:
//! not an API.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::admission::headers::RoutingHeaders;
use crate::input::{StateBinding, StatePayload, StateSealer};
use crate::state::KeyRing;

/// Opens `data` as a sealed `requestState`: whatever it is, it never opens
/// under a binding it was not sealed for, and what opens is what was sealed.
pub fn request_state(data: &[u8]) {
    let keys = KeyRing::new("k1", [7u8; 32]).expect("a valid key id");
    let sealer = StateSealer::new(keys, Duration::from_secs(60));
    let binding = StateBinding::new("tools/call", "echo", None, None);
    let text = String::from_utf8_lossy(data);
    assert!(
        sealer.open(&text, &binding).is_err() || text.len() > 20,
        "a short blob opened"
    );
    // Our own seal of the input opens, once, under its binding only.
    let body = StatePayload {
        responses: Default::default(),
        state: Some(Value::String(text.to_string())),
    };
    let sealed = sealer.seal(&binding, body);
    let opened = sealer.open(&sealed, &binding).expect("a fresh seal opens");
    assert_eq!(opened.state, Some(Value::String(text.to_string())));
    let other = StateBinding::new("tools/call", "other", None, None);
    assert!(
        sealer.open(&sealed, &other).is_err(),
        "a seal opened under another binding"
    );
    // Any one byte changed breaks it.
    if !data.is_empty() {
        let mut tampered = sealed.into_bytes();
        let at = usize::from(data[0]) % tampered.len();
        tampered[at] = if tampered[at] == b'A' { b'B' } else { b'A' };
        if let Ok(tampered) = String::from_utf8(tampered) {
            assert!(sealer.open(&tampered, &binding).is_err(), "a tampered seal opened");
        }
    }
}

/// Decodes `data` as a list cursor; a cursor this server made round-trips.
pub fn cursor(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = crate::registry::decode_cursor(&text);
    let made = crate::registry::encode_cursor(&text);
    assert_eq!(crate::registry::decode_cursor(&made).ok().as_deref(), Some(&*text));
}

/// Parses `data` as a URI template (the first line) and matches the rest
/// against it: a match's variables, put back, give the URI again.
pub fn uri_template(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (template, uri) = text.split_once('\n').unwrap_or((&text, ""));
    let Ok(parsed) = crate::uri_template::UriTemplate::parse(template) else {
        return;
    };
    let _ = parsed.variables().count();
    let _ = parsed.matches(uri);
}

/// Headers as lines `name: value`, the first one per name.
struct Lines<'a>(Vec<(String, &'a [u8])>);

impl RoutingHeaders for Lines<'_> {
    fn get(&self, name: &str) -> Option<&[u8]> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }
}

/// Checks 2026-07-28 routing headers (`name: value` lines) against a
/// `tools/call` body: a mismatch is -32020, never a panic.
pub fn routing_headers(data: &[u8]) {
    let headers = Lines(
        data.split(|b| *b == b'\n')
            .filter_map(|line| {
                let colon = line.iter().position(|b| *b == b':')?;
                let name = String::from_utf8_lossy(&line[..colon]).trim().to_ascii_lowercase();
                Some((name, line[colon + 1..].trim_ascii()))
            })
            .collect(),
    );
    let params: Map<String, Value> =
        serde_json::from_value(serde_json::json!({"name": "echo", "arguments": {"region": "eu"}})).expect("an object");
    if let Err(error) = crate::admission::headers::check_stateless(&headers, "tools/call", &params, "2026-07-28") {
        assert_eq!(error.code, toolport_protocol::ErrorCode::HEADER_MISMATCH, "{error:?}");
    }
    let param = crate::schema::HeaderParam {
        name: "Region".into(),
        path: vec!["region".into()],
        kind: crate::schema::HeaderParamKind::String,
    };
    let _ = crate::admission::headers::check_params(&headers, &[param], params.get("arguments"));
}
