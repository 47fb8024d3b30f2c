//! The server framework over an in-memory connection: run-time registries
//! with list_changed, pagination, logging levels per era, progress, listen,
//! completion, prompts and handshake-era elicitation sent to the client.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use toolport_protocol::content::ResourceContents;
use toolport_protocol::elicitation::ElicitRequestParams;
use toolport_protocol::logging::LoggingLevel;
use toolport_protocol::resources::{Resource, ResourceTemplate};
use toolport_protocol::result::CacheScope;
use toolport_rpc::PeerOptions;
use toolport_rpc::stdio::from_async;
use toolport_server::completion::from_list;
use toolport_server::{
    CacheHints, NoArgs, RequestContext, ResourceEntry, Server, ServerOptions, TemplateEntry, ToolError, prompt, tool,
};

#[derive(Deserialize, JsonSchema)]
struct Count {
    /// How far to count.
    to: u32,
}

#[derive(Deserialize, JsonSchema)]
struct Greeting {
    /// Who to greet.
    name: String,
    /// How, optionally.
    style: Option<String>,
}

fn test_server(page_size: usize) -> Server {
    Server::builder("test", "0.0.1")
        .options(ServerOptions {
            page_size,
            ..ServerOptions::default()
        })
        .tool(tool("count").handler(|cx: RequestContext, args: Count| async move {
            for i in 1..=args.to {
                cx.progress(f64::from(i), Some(f64::from(args.to)), None).await;
            }
            cx.log(LoggingLevel::Debug, None, json!("debug line")).await;
            cx.log(LoggingLevel::Warning, Some("count"), json!("warning line"))
                .await;
            format!("counted to {}", args.to)
        }))
        .tool(tool("ask").handler(|cx: RequestContext, _: NoArgs| async move {
            let form = json!({"type": "object", "properties": {"ok": {"type": "boolean"}}});
            let Value::Object(schema) = form else { unreachable!() };
            let answer = cx.elicit("q", ElicitRequestParams::form("Proceed?", schema)).await?;
            Ok::<_, ToolError>(format!("{:?}", answer.action))
        }))
        .resource(ResourceEntry::new(
            Resource::new("mem://a", "a"),
            |_cx, req| async move { ResourceContents::text(req.uri, None, "A") },
        ))
        .resource(
            ResourceEntry::new(Resource::new("mem://cached", "cached"), |_cx, req| async move {
                ResourceContents::text(req.uri, None, "C")
            })
            .cache(CacheHints {
                ttl_ms: 5000,
                scope: CacheScope::Public,
            }),
        )
        .template(
            TemplateEntry::new(
                ResourceTemplate {
                    uri_template: "mem://items/{id}".into(),
                    name: "item".into(),
                    ..Default::default()
                },
                |_cx, req| async move { ResourceContents::text(req.uri.clone(), None, req.variables["id"].clone()) },
            )
            .cache(CacheHints {
                ttl_ms: 750,
                scope: CacheScope::Private,
            })
            .complete("id", from_list(["apple", "apricot", "banana"])),
        )
        .prompt(
            prompt("greet")
                .handler(|_cx, args: Greeting| async move {
                    format!("{} {}", args.style.unwrap_or_else(|| "Hello".into()), args.name)
                })
                .complete("name", from_list(["Ada", "Alan", "Grace"])),
        )
        .build()
        .unwrap()
}

struct Client {
    to_server: DuplexStream,
    from_server: Lines<BufReader<DuplexStream>>,
    next_id: i64,
}

const META: &str =
    r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

impl Client {
    fn connect(server: &Server) -> Client {
        let (to_server, server_in) = tokio::io::duplex(1 << 16);
        let (server_out, from_server) = tokio::io::duplex(1 << 16);
        let transport = from_async(BufReader::new(server_in), server_out, 1 << 20);
        tokio::spawn(server.clone().serve_transport(transport, PeerOptions::default()));
        Client {
            to_server,
            from_server: BufReader::new(from_server).lines(),
            next_id: 0,
        }
    }

    async fn send(&mut self, message: Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.to_server.write_all(line.as_bytes()).await.unwrap();
    }

    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(5), self.from_server.next_line())
            .await
            .expect("a message within 5 s")
            .unwrap()
            .unwrap();
        serde_json::from_str(&line).unwrap()
    }

    /// Sends a request; returns its answer and the notifications before it.
    async fn request(&mut self, method: &str, params: Value) -> (Value, Vec<Value>) {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let mut notes = Vec::new();
        loop {
            let m = self.recv().await;
            if m["id"] == id && m.get("method").is_none() {
                return (m, notes);
            }
            notes.push(m);
        }
    }

    async fn initialize(&mut self, capabilities: Value) {
        let (answer, _) = self
            .request("initialize", json!({"protocolVersion": "2025-11-25", "capabilities": capabilities, "clientInfo": {"name": "t", "version": "1"}}))
            .await;
        assert_eq!(answer["result"]["protocolVersion"], "2025-11-25");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }
}

fn modern(params: Value) -> Value {
    let mut params = params;
    params["_meta"] = serde_json::from_str(META).unwrap();
    params
}

#[tokio::test]
async fn tools_added_and_removed_while_serving_announce_list_changed() {
    let server = test_server(100);
    let mut client = Client::connect(&server);
    client.initialize(json!({})).await;
    server
        .tools()
        .insert(tool("late").handler(|_: NoArgs| async { "late" }))
        .unwrap();
    assert_eq!(
        client.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    let (answer, _) = client.request("tools/call", json!({"name": "late"})).await;
    assert_eq!(answer["result"]["content"][0]["text"], "late");
    assert!(server.tools().remove("late"));
    assert_eq!(client.recv().await["method"], "notifications/tools/list_changed");
    let (answer, _) = client.request("tools/call", json!({"name": "late"})).await;
    assert_eq!(answer["error"]["code"], -32602);
    // An invalid definition is refused and announces nothing.
    assert!(
        server
            .tools()
            .insert(tool("bad name").handler(|_: NoArgs| async { "" }))
            .is_err()
    );
}

#[tokio::test]
async fn lists_are_paginated_with_opaque_cursors() {
    let server = test_server(1);
    let mut client = Client::connect(&server);
    client.initialize(json!({})).await;
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..5 {
        let params = match &cursor {
            Some(c) => json!({"cursor": c}),
            None => json!({}),
        };
        let (answer, _) = client.request("tools/list", params).await;
        names.extend(
            answer["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["name"].as_str().unwrap().to_owned()),
        );
        cursor = answer["result"]["nextCursor"].as_str().map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    assert_eq!(names, ["ask", "count"]);
    let (answer, _) = client.request("tools/list", json!({"cursor": "not a cursor!"})).await;
    assert_eq!(answer["error"]["code"], -32602);
}

#[tokio::test]
async fn progress_and_logs_follow_each_eras_rules() {
    let server = test_server(100);
    let mut client = Client::connect(&server);
    // 2026-07-28 without logLevel: progress yes, logs no.
    let mut params = modern(json!({"name": "count", "arguments": {"to": 2}}));
    params["_meta"]["progressToken"] = json!("p");
    let (answer, notes) = client.request("tools/call", params.clone()).await;
    assert_eq!(answer["result"]["content"][0]["text"], "counted to 2");
    let methods: Vec<&str> = notes.iter().map(|n| n["method"].as_str().unwrap()).collect();
    assert_eq!(methods, ["notifications/progress", "notifications/progress"]);
    assert_eq!(
        notes[1]["params"],
        json!({"progressToken": "p", "progress": 2, "total": 2})
    );
    // With logLevel warning: only the warning.
    params["_meta"]["io.modelcontextprotocol/logLevel"] = json!("warning");
    let (_, notes) = client.request("tools/call", params).await;
    let logs: Vec<&Value> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 1);
    assert_eq!(
        logs[0]["params"],
        json!({"level": "warning", "logger": "count", "data": "warning line"})
    );
    // Handshake era: every level until logging/setLevel narrows it.
    client.initialize(json!({})).await;
    let (_, notes) = client
        .request("tools/call", json!({"name": "count", "arguments": {"to": 1}}))
        .await;
    assert_eq!(
        notes.iter().filter(|n| n["method"] == "notifications/message").count(),
        2
    );
    let (answer, _) = client.request("logging/setLevel", json!({"level": "error"})).await;
    assert_eq!(answer["result"], json!({}));
    let (_, notes) = client
        .request("tools/call", json!({"name": "count", "arguments": {"to": 1}}))
        .await;
    assert!(notes.iter().all(|n| n["method"] != "notifications/message"));
}

#[tokio::test]
async fn handshake_elicitation_goes_to_the_client_and_back() {
    let server = test_server(100);
    let mut client = Client::connect(&server);
    client.initialize(json!({"elicitation": {}})).await;
    client
        .send(json!({"jsonrpc": "2.0", "id": "call", "method": "tools/call", "params": {"name": "ask"}}))
        .await;
    let question = client.recv().await;
    assert_eq!(question["method"], "elicitation/create");
    assert_eq!(question["params"]["message"], "Proceed?");
    client
        .send(json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "decline"}}))
        .await;
    let answer = client.recv().await;
    assert_eq!(answer["result"]["content"][0]["text"], "Decline");
    // Without the capability the tool fails in a way the model can read.
    let mut client = Client::connect(&server);
    client.initialize(json!({})).await;
    let (answer, _) = client.request("tools/call", json!({"name": "ask"})).await;
    assert_eq!(answer["result"]["isError"], true);
}

#[tokio::test]
async fn listen_acknowledges_then_tags_only_what_was_asked_for() {
    let server = test_server(100);
    let mut client = Client::connect(&server);
    client
        .send(json!({"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
            "params": modern(json!({"notifications": {"toolsListChanged": true, "resourceSubscriptions": ["mem://a"]}}))}))
        .await;
    let ack = client.recv().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "L");
    server.prompts().remove("greet"); // not asked for: nothing is sent
    server.resource_updated("mem://other"); // not asked for
    server.resource_updated("mem://a");
    server.tools().remove("ask");
    let first = client.recv().await;
    assert_eq!(
        first,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
        "params": {"uri": "mem://a", "_meta": {"io.modelcontextprotocol/subscriptionId": "L"}}})
    );
    let second = client.recv().await;
    assert_eq!(second["method"], "notifications/tools/list_changed");
    assert_eq!(second["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "L");
    // Shutting down ends the listen with its result.
    server.shutdown();
    let end = client.recv().await;
    assert_eq!(end["id"], "L");
    assert_eq!(end["result"]["resultType"], "complete");
    assert_eq!(end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "L");
}

#[tokio::test]
async fn resources_templates_prompts_and_completion() {
    let server = test_server(100);
    let mut client = Client::connect(&server);
    let (answer, _) = client
        .request("resources/read", modern(json!({"uri": "mem://items/42"})))
        .await;
    assert_eq!(
        answer["result"]["contents"],
        json!([{"uri": "mem://items/42", "text": "42"}])
    );
    let (answer, _) = client
        .request("resources/read", modern(json!({"uri": "mem://nothing"})))
        .await;
    assert_eq!(answer["error"]["code"], -32602);
    client.initialize(json!({})).await;
    let (answer, _) = client.request("resources/read", json!({"uri": "mem://nothing"})).await;
    assert_eq!(answer["error"]["code"], -32002);
    let (answer, _) = client.request("prompts/list", json!({})).await;
    assert_eq!(
        answer["result"]["prompts"][0]["arguments"],
        json!([{"name": "name", "description": "Who to greet.", "required": true}, {"name": "style", "description": "How, optionally.", "required": false}])
    );
    let (answer, _) = client
        .request("prompts/get", json!({"name": "greet", "arguments": {"name": "Ada"}}))
        .await;
    assert_eq!(answer["result"]["messages"][0]["content"]["text"], "Hello Ada");
    let (answer, _) = client
        .request("prompts/get", json!({"name": "greet", "arguments": {}}))
        .await;
    assert_eq!(answer["error"]["code"], -32602);
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing required arguments: name")
    );
    let (answer, _) = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "greet"}, "argument": {"name": "name", "value": "a"}}),
        )
        .await;
    assert_eq!(
        answer["result"]["completion"],
        json!({"values": ["Ada", "Alan"], "total": 2, "hasMore": false})
    );
    let (answer, _) = client
        .request("completion/complete", json!({"ref": {"type": "ref/resource", "uri": "mem://items/{id}"}, "argument": {"name": "id", "value": "ap"}}))
        .await;
    assert_eq!(answer["result"]["completion"]["values"], json!(["apple", "apricot"]));
    let (answer, _) = client
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "x", "value": ""}}),
        )
        .await;
    assert_eq!(answer["error"]["code"], -32602);
    let (answer, _) = client.request("resources/subscribe", json!({"uri": "mem://a"})).await;
    assert_eq!(answer["result"], json!({}));
    server.resource_updated("mem://a");
    assert_eq!(
        client.recv().await,
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "mem://a"}})
    );
}

#[tokio::test]
async fn resources_and_templates_carry_their_own_cache_hints_in_2026_07_28_only() {
    let server = test_server(100);
    let mut client = Client::connect(&server);
    let read = |uri: &str| modern(json!({ "uri": uri }));
    let (answer, _) = client.request("resources/read", read("mem://cached")).await;
    assert_eq!(
        (
            answer["result"]["ttlMs"].clone(),
            answer["result"]["cacheScope"].clone()
        ),
        (json!(5000), json!("public"))
    );
    let (answer, _) = client.request("resources/read", read("mem://items/7")).await;
    assert_eq!(
        (
            answer["result"]["ttlMs"].clone(),
            answer["result"]["cacheScope"].clone()
        ),
        (json!(750), json!("private"))
    );
    // Without hints of its own, a resource gets the server's read_cache.
    let (answer, _) = client.request("resources/read", read("mem://a")).await;
    assert_eq!(
        (
            answer["result"]["ttlMs"].clone(),
            answer["result"]["cacheScope"].clone()
        ),
        (json!(0), json!("private"))
    );
    client.initialize(json!({})).await;
    let (answer, _) = client.request("resources/read", json!({"uri": "mem://cached"})).await;
    assert_eq!(answer["result"]["contents"][0]["text"], "C");
    assert!(
        answer["result"].get("ttlMs").is_none() && answer["result"].get("cacheScope").is_none(),
        "{answer}"
    );
}
