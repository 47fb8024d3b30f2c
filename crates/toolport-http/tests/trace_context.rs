//! The HTTP `traceparent` header is honoured like `_meta.traceparent`
//! (which wins when both are sent), in both eras.

mod support;

use std::sync::Arc;

use http::StatusCode;
use serde_json::{Value, json};
use support::*;
use toolport_http::HttpConfig;
use toolport_http::store::{MemoryEventLog, MemorySessionStore};
use toolport_server::{NoArgs, RequestContext, Server, tool};

const HEADER: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const META: &str = "00-11111111111111111111111111111111-2222222222222222-01";

#[tokio::test]
async fn the_traceparent_header_reaches_the_handler_in_both_eras() {
    let seen = tool("seen").handler(|cx: RequestContext, _: NoArgs| async move {
        let get = |key: &str| cx.meta().get(key).and_then(Value::as_str).unwrap_or("none").to_owned();
        format!("{} {}", get("traceparent"), get("tracestate"))
    });
    let server = Server::builder("trace", "1").tool(seen).build().unwrap();
    let s = serve(
        server,
        HttpConfig::default(),
        Arc::new(MemorySessionStore::new()),
        Arc::new(MemoryEventLog::new(64)),
    )
    .await;
    let session = open_session(s.addr).await;
    let modern_meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
    for modern in [false, true] {
        for with_meta in [false, true] {
            let mut params = json!({"name": "seen", "arguments": {}});
            if modern {
                params["_meta"] = modern_meta.clone();
            }
            if with_meta {
                params["_meta"]["traceparent"] = json!(META);
            }
            let mut headers = if modern {
                let mut h = fresh();
                h.extend([
                    ("mcp-protocol-version", "2026-07-28"),
                    ("mcp-method", "tools/call"),
                    ("mcp-name", "seen"),
                ]);
                h
            } else {
                in_session(&session)
            };
            headers.extend([("traceparent", HEADER), ("tracestate", "vendor=1")]);
            let answer = send(s.addr, "POST", &headers, &request(1, "tools/call", params)).await;
            assert_eq!(answer.status, StatusCode::OK);
            let text = answer.json().await["result"]["content"][0]["text"]
                .as_str()
                .unwrap()
                .to_owned();
            let expected = if with_meta {
                format!("{META} none")
            } else {
                format!("{HEADER} vendor=1")
            };
            assert_eq!(text, expected, "modern {modern}, _meta {with_meta}");
        }
    }
}
