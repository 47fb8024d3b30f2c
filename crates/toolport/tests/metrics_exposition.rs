//! `/metrics` of a freshly started `toolport serve`, before any request: every
//! series is declared with `# HELP` and `# TYPE`, and the series operators
//! alert on are there at zero, beside the process metrics and build info.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::process::Command;

use support::spawn_serve;

/// What a scrape declares: the `# HELP` and `# TYPE` of each metric family,
/// and every sample's name with its labels.
#[derive(Debug, Default)]
struct Exposition {
    help: BTreeSet<String>,
    types: BTreeMap<String, String>,
    samples: Vec<(String, String)>,
}

fn parse(text: &str) -> Exposition {
    let mut out = Exposition::default();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(rest) = line.strip_prefix("# HELP ") {
            let (name, help) = rest.split_once(' ').unwrap_or((rest, ""));
            assert!(!help.trim().is_empty(), "empty HELP for {name}");
            out.help.insert(name.to_owned());
        } else if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').expect("TYPE has a kind");
            out.types.insert(name.to_owned(), kind.to_owned());
        } else if line.starts_with('#') {
            continue;
        } else {
            let end = line.find(['{', ' ']).expect("a sample has a value");
            let labels = line[end..].rsplit_once(' ').map_or("", |(l, _)| l).trim();
            out.samples.push((line[..end].to_owned(), labels.to_owned()));
        }
    }
    out
}

/// The family a sample belongs to (`x_bucket` of histogram `x` is `x`).
fn family<'a>(exposition: &Exposition, sample: &'a str) -> &'a str {
    for suffix in ["_bucket", "_sum", "_count"] {
        if let Some(base) = sample.strip_suffix(suffix)
            && matches!(
                exposition.types.get(base).map(String::as_str),
                Some("histogram" | "summary")
            )
        {
            return base;
        }
    }
    sample
}

async fn scrape(url: &str) -> String {
    let base = url.trim_end_matches("/mcp");
    let addr: std::net::SocketAddr = base.trim_start_matches("http://").parse().unwrap();
    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, conn) = hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(conn);
    let request = http::Request::get("/metrics")
        .header("host", addr.to_string())
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .unwrap();
    let response = sender.send_request(request).await.unwrap();
    assert_eq!(response.status(), http::StatusCode::OK);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
    assert!(content_type.starts_with("text/plain"), "{content_type}");
    use http_body_util::BodyExt;
    let body = response.into_body().collect().await.unwrap().to_bytes();
    String::from_utf8(body.to_vec()).unwrap()
}

#[tokio::test]
async fn a_fresh_server_declares_every_series_with_help_and_type() {
    let (_served, url) = spawn_serve(Command::new(env!("CARGO_BIN_EXE_toolport")).arg("--demo"));
    let text = scrape(&url).await;
    let exposition = parse(&text);
    assert!(!exposition.samples.is_empty(), "{text}");
    for (sample, _) in &exposition.samples {
        let family = family(&exposition, sample);
        assert!(exposition.help.contains(family), "no # HELP for {sample}:\n{text}");
        assert!(exposition.types.contains_key(family), "no # TYPE for {sample}:\n{text}");
    }
    // Declared families all have samples: nothing is announced and missing.
    let sampled: BTreeSet<&str> = exposition.samples.iter().map(|(s, _)| family(&exposition, s)).collect();
    for declared in exposition.types.keys() {
        assert!(
            sampled.contains(declared.as_str()),
            "{declared} declared without a sample"
        );
    }
    let has = |name: &str, labels: &str| {
        exposition
            .samples
            .iter()
            .any(|(s, l)| s == name && labels.split(',').all(|want| l.contains(want)))
    };
    for (name, labels) in [
        ("toolport_requests_total", r#"method="tools/call",outcome="ok""#),
        ("toolport_request_duration_seconds_bucket", r#"method="tools/call""#),
        ("toolport_requests_in_flight", ""),
        ("toolport_tool_calls_total", r#"tool="echo",outcome="ok""#),
        ("toolport_tool_calls_total", r#"tool="long_task",outcome="tool_error""#),
        ("toolport_tool_call_duration_seconds_bucket", r#"tool="book_table""#),
        ("toolport_rejections_total", r#"reason="queue_full""#),
        ("toolport_deadlines_exceeded_total", r#"tool="echo""#),
        ("toolport_queue_wait_seconds_count", ""),
        ("toolport_sessions", ""),
        ("toolport_panics_total", r#"site="tool""#),
        ("toolport_stream_disconnects_total", r#"reason="slow_consumer""#),
        ("toolport_build_info", r#"server="toolport-demo""#),
        ("process_resident_memory_bytes", ""),
        ("process_cpu_seconds_total", ""),
        ("process_open_fds", ""),
        ("process_max_fds", ""),
        ("process_start_time_seconds", ""),
    ] {
        assert!(
            has(name, labels),
            "{name}{{{labels}}} missing from a fresh scrape:\n{text}"
        );
    }
    assert_eq!(exposition.types["process_cpu_seconds_total"], "counter");
    assert_eq!(exposition.types["toolport_tool_call_duration_seconds"], "histogram");
    let rss_line = text
        .lines()
        .find(|l| l.starts_with("process_resident_memory_bytes "))
        .unwrap();
    let rss: f64 = rss_line.rsplit(' ').next().unwrap().parse().unwrap();
    assert!(rss > 1e6, "a running server has more than 1 MB resident: {rss_line}");
}
