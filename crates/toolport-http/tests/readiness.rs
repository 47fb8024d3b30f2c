//! `/ready` with readiness checks: 200 while every check passes, 503 naming
//! each failing or hanging check otherwise, while `/health` and the MCP
//! endpoint keep answering.

mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use http::StatusCode;
use http_body_util::BodyExt;
use support::*;
use toolport_http::{HttpConfig, HttpServer, ReadinessCheck};
use toolport_server::Server;

#[derive(Debug)]
enum Dependency {
    Up,
    Down(&'static str),
    Hanging,
}

#[async_trait]
impl ReadinessCheck for Dependency {
    fn name(&self) -> &str {
        match self {
            Dependency::Up => "up",
            Dependency::Down(_) => "down",
            Dependency::Hanging => "hanging",
        }
    }

    async fn check(&self) -> Result<(), String> {
        match self {
            Dependency::Up => Ok(()),
            Dependency::Down(reason) => Err((*reason).to_owned()),
            Dependency::Hanging => std::future::pending().await,
        }
    }
}

async fn serve_with(checks: Vec<Dependency>) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let config = HttpConfig {
        bind: "127.0.0.1:0".parse().unwrap(),
        readiness_timeout: Duration::from_millis(200),
        ..HttpConfig::default()
    };
    let mut http = HttpServer::new(Server::builder("ready", "1").build().unwrap(), config);
    for check in checks {
        http = http.with_readiness_check(Arc::new(check));
    }
    let bound = http.bind().await.unwrap();
    let addr = bound.local_addr();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(bound.serve(async move {
        let _ = stopped.await;
    }));
    (addr, stop)
}

async fn get(addr: SocketAddr, path: &str) -> (StatusCode, String) {
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(connection);
    let request = http::Request::get(path)
        .header("host", addr.to_string())
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .unwrap();
    let response = tokio::time::timeout(PATIENCE, sender.send_request(request))
        .await
        .expect("an answer within the patience")
        .unwrap();
    let status = response.status();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, String::from_utf8(body.to_vec()).unwrap())
}

#[tokio::test]
async fn ready_while_every_check_passes() {
    let (addr, _stop) = serve_with(vec![Dependency::Up, Dependency::Up]).await;
    assert_eq!(get(addr, "/ready").await, (StatusCode::OK, "ready\n".to_owned()));
}

#[tokio::test]
async fn a_failing_or_hanging_check_makes_the_replica_unready_but_not_unhealthy() {
    let (addr, _stop) = serve_with(vec![
        Dependency::Up,
        Dependency::Down("connection refused"),
        Dependency::Hanging,
    ])
    .await;
    let (status, body) = get(addr, "/ready").await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(
        body,
        "not ready\ndown: connection refused\nhanging: no answer within 200 ms\n"
    );
    assert_eq!(get(addr, "/health").await.0, StatusCode::OK);
    // The MCP endpoint still answers: readiness steers traffic, it refuses none.
    let answer = send(addr, "POST", &fresh(), &initialize_request()).await;
    assert_eq!(answer.status, StatusCode::OK);
}
