//! `toolport bench` against the demo server: over HTTP in both eras and over
//! stdio, with its JSON and CSV reports; and a clear failure for a wrong tool.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use serde_json::Value;

fn bench(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolport"))
        .arg("bench")
        .args(args)
        .output()
        .expect("run toolport bench")
}

fn http_server() -> (std::process::Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolport"))
        .args(["serve", "--demo", "--bind", "127.0.0.1:0"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = lines
        .next()
        .unwrap()
        .unwrap()
        .split(" at ")
        .nth(1)
        .unwrap()
        .trim()
        .to_owned();
    std::thread::spawn(move || lines.for_each(drop));
    (child, url)
}

fn check_report(report: &Value, steps: &[u64]) {
    let got: Vec<u64> = report["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["concurrency"].as_u64().unwrap())
        .collect();
    assert_eq!(got, steps);
    for step in report["steps"].as_array().unwrap() {
        assert!(step["calls"].as_u64().unwrap() > 0, "{step}");
        assert_eq!(step["errors"], 0, "{step}");
        assert!(step["latency_ms"]["p50"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn bench_measures_http_in_both_eras_and_stdio() {
    let (mut server, url) = http_server();
    for era in ["stateless", "handshake"] {
        let out = bench(&[
            "--server",
            &url,
            "--era",
            era,
            "--concurrency",
            "1,2",
            "--duration",
            "0.3",
            "--warmup",
            "0.1",
            "--json",
            "-",
        ]);
        assert!(out.status.success(), "{era}: {}", String::from_utf8_lossy(&out.stderr));
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        check_report(&report, &[1, 2]);
        assert_eq!(report["tool"], "echo");
    }
    let out = bench(&[
        "--server",
        &url,
        "--concurrency",
        "2",
        "--duration",
        "0.3",
        "--sse",
        "--csv",
        "-",
    ]);
    assert!(out.status.success());
    let csv = String::from_utf8_lossy(&out.stdout);
    assert!(
        csv.starts_with("concurrency,seconds,calls,calls_per_second,errors,p50_ms"),
        "{csv}"
    );
    assert_eq!(
        csv.lines().nth(1).unwrap().split(',').nth(4),
        Some("0"),
        "no errors: {csv}"
    );
    let wrong = bench(&["--server", &url, "--tool", "no_such_tool", "--duration", "0.2"]);
    assert!(!wrong.status.success());
    let message = String::from_utf8_lossy(&wrong.stderr);
    assert!(
        message.contains("the first call failed") && message.contains("Unknown tool"),
        "{message}"
    );
    server.kill().unwrap();
    let _ = server.wait();
    let out = bench(&[
        "--concurrency",
        "2",
        "--duration",
        "0.3",
        "--json",
        "-",
        "--",
        env!("CARGO_BIN_EXE_toolport"),
        "serve",
        "--demo",
        "--stdio",
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    check_report(&serde_json::from_slice(&out.stdout).unwrap(), &[2]);
    let nowhere = bench(&["--duration", "0.2"]);
    assert!(String::from_utf8_lossy(&nowhere.stderr).contains("--server URL, or -- COMMAND"));
}
