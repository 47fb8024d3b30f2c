//! `toolport bench --plot FILE.svg --report FILE.html`: the plot is valid
//! SVG (parsed as XML) with the knee marked where the sweep's knee is, the
//! HTML report carries it, and the console serves the last report.
//!
//! The knee is made certain: long_task is limited to one call at a time, so
//! throughput cannot grow past concurrency 1.

mod support;

use std::process::Command;

use serde_json::Value;
use support::spawn_serve;

fn get(base: &str, path: &str) -> (u16, String) {
    let addr = base.trim_start_matches("http://").to_owned();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        use http_body_util::BodyExt;
        let stream = tokio::net::TcpStream::connect(&addr).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
        tokio::spawn(conn);
        let request = http::Request::get(path)
            .header("host", &addr)
            .body(http_body_util::Empty::<bytes::Bytes>::new())
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        let status = response.status().as_u16();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    })
}

#[test]
fn the_plot_is_valid_svg_with_the_knee_marked_and_the_console_shows_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let (svg_path, html_path, json_path) = (
        dir.path().join("bench.svg"),
        dir.path().join("bench.html"),
        dir.path().join("bench.json"),
    );
    let (_served, url) = spawn_serve(
        Command::new(env!("CARGO_BIN_EXE_toolport"))
            .arg("--demo")
            .env("TOOLPORT_LIMITS__TOOLS__LONG_TASK__MAX_CONCURRENT", "1"),
    );
    let out = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["bench", "--server", &url, "--tool", "long_task"])
        .args(["--args", r#"{"steps":1,"step_ms":20}"#, "--concurrency", "1,2,4"])
        .args(["--duration", "0.5", "--warmup", "0.1", "--plot"])
        .arg(&svg_path)
        .arg("--report")
        .arg(&html_path)
        .arg("--json")
        .arg(&json_path)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert_eq!(report["knee_concurrency"], 1, "a gate of one: {report:#}");
    for step in report["steps"].as_array().unwrap() {
        let counted: u64 = step["histogram"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| b["count"].as_u64().unwrap())
            .sum();
        assert_eq!(
            counted,
            step["calls"].as_u64().unwrap(),
            "every call in the histogram: {step}"
        );
    }

    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("not valid XML: {e}"));
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    assert_eq!(root.tag_name().namespace(), Some("http://www.w3.org/2000/svg"));
    let knee = doc
        .descendants()
        .find(|n| n.attribute("id") == Some("knee"))
        .expect("the knee is marked");
    assert_eq!(knee.attribute("data-concurrency"), Some("1"));
    assert!(knee.descendants().any(|n| n.has_tag_name("line")), "a line marks it");
    let text: String = knee.descendants().filter_map(|n| n.text()).collect();
    assert!(text.contains("knee: concurrency 1"), "{text}");
    for id in ["throughput", "latency"] {
        assert!(doc.descendants().any(|n| n.attribute("id") == Some(id)), "{id} chart");
    }
    let histograms = doc
        .descendants()
        .filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("histogram")))
        .count();
    assert_eq!(histograms, 3, "one latency histogram per step");

    let html = std::fs::read_to_string(&html_path).unwrap();
    assert!(html.starts_with("<!doctype html>"));
    assert!(html.contains("id=\"knee\""));

    // The console shows the last report.
    let (_console, console_url) = spawn_serve(
        Command::new(env!("CARGO_BIN_EXE_toolport"))
            .args(["--demo", "--ui"])
            .env("TOOLPORT_UI__BENCH_REPORT", &html_path),
    );
    let base = console_url.trim_end_matches("/mcp");
    let (status, body) = get(base, "/admin/bench");
    assert_eq!(status, 200, "{body}");
    let shown: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(shown["available"], true);
    assert_eq!(shown["report"]["knee_concurrency"], 1);
    let (status, plot) = get(base, "/admin/bench.svg");
    assert_eq!(status, 200);
    roxmltree::Document::parse(&plot).expect("the console's plot is valid SVG");
    // A report file that is not one is a clear error, not a crash.
    std::fs::write(&html_path, "<html>not a report</html>").unwrap();
    let (status, body) = get(base, "/admin/bench");
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("neither bench JSON nor an HTML report"), "{body}");
}
