//! `toolport serve --oauth-issuer ...`: the binary as an OAuth 2.1 resource
//! server, configured from flags (keys from a JWK set file here; from the
//! issuer's metadata or --oauth-jwks-uri in production).

mod support;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use http::StatusCode;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use support::{ACCEPT, JSON, call};
use toolport_auth::http::{HttpClient, HyperClient};

struct Serving(Child);

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn keys() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../toolport-auth/tests/keys")
}

fn token(resource: &str, scope: &str) -> String {
    token_of("alice", resource, scope)
}

fn token_of(subject: &str, resource: &str, scope: &str) -> String {
    let now = jsonwebtoken::get_current_timestamp();
    let claims = json!({"iss": "https://as.test", "aud": resource, "sub": subject, "scope": scope,
        "iat": now, "exp": now + 300});
    let mut header = Header::new(Algorithm::RS256);
    header.kid = Some("rsa-1".into());
    let key = EncodingKey::from_rsa_pem(&std::fs::read(keys().join("rsa-1.pem")).unwrap()).unwrap();
    jsonwebtoken::encode(&header, &claims, &key).unwrap()
}

/// `toolport serve --demo` protected by tokens of `https://as.test` signed
/// with the test key, `long_task` needing `jobs:run`, with `extra` flags;
/// the server, its address, its directory and its start-up lines.
fn start(name: &str, extra: &[&str]) -> (Serving, std::net::SocketAddr, PathBuf, Vec<String>) {
    let jwk: Value = serde_json::from_str(&std::fs::read_to_string(keys().join("rsa-1.jwk.json")).unwrap()).unwrap();
    let dir = std::env::temp_dir().join(format!("toolport-serve-oauth-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let jwks = dir.join("jwks.json");
    std::fs::write(&jwks, json!({"keys": [jwk]}).to_string()).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr: std::net::SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    // Each setting from another place: the issuer from the environment, the
    // keys and basic scope from the file, a tool's scope from a flag.
    let config = dir.join("toolport.toml");
    let file = format!(
        "[oauth]\njwks_file = {:?}\nscopes = [\"mcp:tools\"]\n",
        jwks.display().to_string()
    );
    std::fs::write(&config, file).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["serve", "--demo", "--bind", &addr.to_string(), "--config"])
        .arg(&config)
        .args(["--oauth-tool-scope", "long_task=jobs:run"])
        .args(extra)
        .env("OAUTH_ISSUER", "https://as.test")
        .env("TOOLPORT_DATA_DIR", &dir)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let serving = Serving(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut lines = Vec::new();
    while !lines.iter().any(|l: &String| l.contains("serving MCP")) {
        lines.push(
            rx.recv_timeout(Duration::from_secs(20))
                .expect("the server starts within 20 s"),
        );
    }
    (serving, addr, dir, lines)
}

#[tokio::test]
async fn serve_protects_the_endpoint_when_given_an_issuer() {
    let (serving, addr, dir, lines) = start("mcp", &[]);
    let resource = format!("http://{addr}/mcp");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("OAuth 2.1 resource server for") && l.contains(&resource)),
        "{lines:?}"
    );

    let metadata = HyperClient::default()
        .send(
            http::Request::get(format!("http://{addr}/.well-known/oauth-protected-resource/mcp"))
                .body(Bytes::new())
                .unwrap(),
        )
        .await
        .unwrap();
    let document: Value = serde_json::from_slice(metadata.body()).unwrap();
    assert_eq!(document["resource"], resource);
    assert_eq!(document["authorization_servers"], json!(["https://as.test"]));

    let initialize = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let (status, headers, _) = call(addr, "POST", &[JSON, ACCEPT], initialize).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        headers["www-authenticate"]
            .to_str()
            .unwrap()
            .contains(r#"scope="mcp:tools""#)
    );

    let bearer = format!("Bearer {}", token(&resource, "mcp:tools"));
    let (status, headers, _) = call(addr, "POST", &[JSON, ACCEPT, ("authorization", &bearer)], initialize).await;
    assert_eq!(status, StatusCode::OK);
    let session = headers["mcp-session-id"].to_str().unwrap().to_owned();
    let in_session = [
        JSON,
        ACCEPT,
        ("authorization", bearer.as_str()),
        ("mcp-session-id", session.as_str()),
        ("mcp-protocol-version", "2025-11-25"),
    ];
    let (_, _, listed) = call(
        addr,
        "POST",
        &in_session,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    )
    .await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"echo") && !names.contains(&"long_task"), "{names:?}");
    drop(serving);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[tokio::test]
async fn a2a_takes_the_callers_token_and_skills_keep_their_scopes() {
    let (serving, addr, dir, _) = start("a2a", &["--a2a"]);
    let base = format!("http://{addr}");
    // The card is public and says how to authenticate.
    let card = toolport_a2a::A2aClient::card(&base).await.unwrap();
    assert_eq!(card.capabilities.extended_agent_card, Some(true));
    assert!(
        card.security_schemes.contains_key("bearer"),
        "{:?}",
        card.security_schemes
    );
    // The bindings are not.
    let send = r#"{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard"}"#;
    let (status, headers, _) = call(addr, "POST", &[JSON, ("a2a-version", "1.0")], send).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(headers.contains_key("www-authenticate"));
    let resource = format!("http://{addr}/mcp");
    let (client, _) = toolport_a2a::A2aClient::discover(&base, None).await.unwrap();
    let client = client.bearer(token(&resource, "mcp:tools"));
    let extended = client.extended_card().await.unwrap();
    assert_eq!(extended.name, card.name);
    let run = |tool: &str, arguments: Value| {
        toolport_a2a::SendMessageRequest::new(toolport_a2a::Message::user(vec![toolport_a2a::Part::data(
            json!({"tool": tool, "arguments": arguments}),
        )]))
    };
    let toolport_a2a::StreamResponse::Task(echoed) = client.send(run("echo", json!({"message": "hi"}))).await.unwrap()
    else {
        panic!("a task")
    };
    assert_eq!(echoed.status.state, toolport_a2a::TaskState::Completed);
    // long_task needs jobs:run, which this token lacks: the task fails saying so.
    let toolport_a2a::StreamResponse::Task(refused) = client.send(run("long_task", json!({"steps": 1}))).await.unwrap()
    else {
        panic!("a task")
    };
    assert_eq!(refused.status.state, toolport_a2a::TaskState::Failed);
    let why = refused.status.message.map(|m| m.text()).unwrap_or_default();
    assert!(why.contains("jobs:run"), "{why}");
    // Another principal's tasks are not this one's.
    let other = token_of("bob", &resource, "mcp:tools");
    let (bob, _) = toolport_a2a::A2aClient::discover(&base, None).await.unwrap();
    let bob = bob.bearer(other);
    let missing = bob.get(&echoed.id, None).await.unwrap_err();
    assert!(
        matches!(missing, toolport_a2a::ClientError::Agent { code: -32001, .. }),
        "{missing:?}"
    );
    drop(serving);
    std::fs::remove_dir_all(&dir).unwrap();
}
