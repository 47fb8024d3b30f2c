//! A crash-looping required upstream: held off by the backoff, reported in
//! `/ready` and `/metrics` (its own test binary: the metrics recorder is
//! global to the process).

mod support;

use support::*;
use toolport_gateway::{GatewaySection, SlotState};

#[tokio::test]
async fn a_crash_looping_upstream_is_held_off_and_reported() {
    let mut looping = fixture("looping");
    looping.env.insert("FIXTURE_EXIT_AT_START".into(), "3".into());
    let section = GatewaySection {
        start_timeout_seconds: 1,
        ..GatewaySection::default()
    };
    let gw = start_with(section, vec![looping, fixture("fine")], true).await;
    let gateway = gw.gateway.clone();
    eventually("the upstream is reported crash-looping", || {
        let g = gateway.clone();
        async move {
            g.report()
                .iter()
                .any(|r| r.name == "looping" && r.state == SlotState::CrashLoop)
        }
    })
    .await;
    let (status, body) = get(&gw.base, "/ready").await;
    assert_eq!(status, 503, "{body}");
    let (_, metrics) = get(&gw.base, "/metrics").await;
    let restarts = metrics
        .lines()
        .find(|l| l.starts_with("toolport_upstream_restarts_total{upstream=\"looping\"}"))
        .and_then(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .expect("restarts in /metrics");
    assert!(restarts >= 3.0, "{restarts}");
    assert!(
        metrics.contains("toolport_upstream_state{upstream=\"looping\",state=\"crash_loop\"} 1"),
        "{metrics}"
    );
    assert!(
        metrics.contains("toolport_upstream_up{upstream=\"fine\"} 1"),
        "{metrics}"
    );
    // Held off: over half a second, at most a few more starts (backoff 200 ms at most here).
    let before = gateway.report().iter().find(|r| r.name == "looping").unwrap().crashes;
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let after = gateway.report().iter().find(|r| r.name == "looping").unwrap().crashes;
    assert!(after - before <= 4, "{before} -> {after}: not held off");
    let c = client(&gw.url, None).await;
    let r = c
        .call_tool("fine__echo", serde_json::json!({"text": "ok"}))
        .await
        .unwrap();
    assert_eq!(text(&r), "ok");
    gw.stop().await;
}
