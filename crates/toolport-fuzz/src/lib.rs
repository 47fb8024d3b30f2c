//! The bodies of Toolport's fuzz targets: every decoder that reads bytes an
//! attacker controls, each with the properties that must hold whatever the
//! input (no panic, and what decodes encodes back to itself where there is
//! an encoder). `fuzz/` runs them under libFuzzer (cargo-fuzz, nightly);
//! `tests/corpus.rs` replays their corpora (`fuzz/corpus/<target>/`) as
//! ordinary tests on stable Rust, so every crash found stays fixed.

use toolport_protocol::jsonrpc::{self, Frame, Message};
use toolport_rpc::framing::{Line, LineDecoder};

/// A fuzz target: its name (its corpus directory) and its body.
pub type Target = (&'static str, fn(&[u8]));

/// Every target, by name.
pub const TARGETS: &[Target] = &[
    ("jsonrpc", jsonrpc),
    ("framing", framing),
    ("sse", toolport_client::fuzzing::sse),
    ("headers", toolport_http::fuzzing::headers),
    ("routing_headers", toolport_server::fuzzing::routing_headers),
    ("origin", toolport_http::fuzzing::origin),
    ("request_state", toolport_server::fuzzing::request_state),
    ("event_id", toolport_http::fuzzing::event_id),
    ("cursor", toolport_server::fuzzing::cursor),
    ("uri_template", toolport_server::fuzzing::uri_template),
    ("sql_guard", toolport_packs::fuzzing::sql_guard),
    ("bearer", toolport_auth::fuzzing::bearer),
];

/// The body of the target `name`.
///
/// # Panics
/// When there is no such target.
pub fn target(name: &str) -> fn(&[u8]) {
    TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, body)| *body)
        .unwrap_or_else(|| panic!("no fuzz target {name}"))
}

/// JSON-RPC decoding: a message that decodes encodes to JSON that decodes
/// to the same message.
pub fn jsonrpc(data: &[u8]) {
    let Ok(frame) = jsonrpc::decode(data) else { return };
    let messages: Vec<Message> = match frame {
        Frame::Single(message) => vec![message],
        Frame::Batch(items) => items.into_iter().filter_map(Result::ok).collect(),
    };
    for message in messages {
        let encoded = jsonrpc::encode(&message);
        match jsonrpc::decode(&encoded) {
            Ok(Frame::Single(again)) => assert_eq!(
                serde_json::to_value(&again).ok(),
                serde_json::to_value(&message).ok(),
                "a message changed on the way through the encoder"
            ),
            other => panic!("an encoded message does not decode as one: {other:?}"),
        }
    }
}

/// Newline framing: fed in two pieces, the same lines come out as fed
/// whole; no line is longer than the limit.
pub fn framing(data: &[u8]) {
    const LIMIT: usize = 256;
    let collect = |pieces: &[&[u8]]| {
        let mut decoder = LineDecoder::new(LIMIT);
        let mut lines = Vec::new();
        for piece in pieces {
            decoder.feed(piece, |line| {
                lines.push(match line {
                    Line::Complete(bytes) => {
                        assert!(bytes.len() <= LIMIT, "a line over the limit came through");
                        Ok(bytes.to_vec())
                    }
                    Line::TooLong { size, head } => {
                        assert!(size > LIMIT && head.len() <= size);
                        Err(size)
                    }
                })
            });
        }
        lines
    };
    let split = data.first().map_or(0, |b| usize::from(*b)).min(data.len());
    assert_eq!(
        collect(&[data]),
        collect(&[&data[..split], &data[split..]]),
        "chunking changed the lines"
    );
    for line in collect(&[data]).into_iter().flatten() {
        jsonrpc(&line);
    }
}
