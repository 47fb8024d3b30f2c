//! `toolport bench --soak DURATION`: many agents, each with a few calls in
//! flight, for a long time. Every answer is checked against its own
//! argument (the tool must say its `message` back, as `echo` does), so an
//! answer that is lost or reaches the wrong caller is counted; per interval
//! the server's RSS and the latency percentiles are sampled, so growth and
//! drift show. A lost or misrouted answer fails the run.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use hdrhistogram::Histogram;
use serde_json::{Value, json};

use super::Target;

/// The longest one call may take before it counts as lost.
const CALL_TIMEOUT: Duration = Duration::from_secs(30);

/// What a soak run is asked to do.
#[derive(Debug, Clone)]
pub(crate) struct SoakPlan {
    pub(crate) duration: Duration,
    pub(crate) agents: usize,
    pub(crate) parallel: usize,
    pub(crate) interval: Duration,
    /// The server process whose RSS is sampled.
    pub(crate) pid: Option<u32>,
}

/// One interval's numbers.
#[derive(Debug, Clone)]
struct Sample {
    at: Duration,
    calls: u64,
    lost: u64,
    misrouted: u64,
    p50_ms: f64,
    p99_ms: f64,
    rss_kib: Option<u64>,
}

#[derive(Default)]
struct Counters {
    calls: AtomicU64,
    lost: AtomicU64,
    misrouted: AtomicU64,
    first_problem: Mutex<Option<String>>,
}

impl Counters {
    fn problem(&self, counter: &AtomicU64, what: String) {
        counter.fetch_add(1, Ordering::Relaxed);
        self.first_problem
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(what);
    }
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid bounds")
}

/// The resident set of `pid`, in KiB (Linux `/proc`).
fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Reads `90`, `90s`, `10m`, `1h`.
pub(crate) fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, unit) = match text.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => text.split_at(i),
        None => (text, "s"),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("{text:?} is not a duration such as 60s or 10m"))?;
    let seconds = match unit {
        "s" => value,
        "m" => value * 60.0,
        "h" => value * 3600.0,
        "ms" => value / 1000.0,
        _ => return Err(format!("{text:?}: the unit must be ms, s, m or h")),
    };
    if !(seconds > 0.0 && seconds.is_finite()) {
        return Err(format!("{text:?} must be longer than nothing"));
    }
    Ok(Duration::from_secs_f64(seconds))
}

/// Runs the soak; its report as JSON. Fails when an answer was lost or misrouted.
pub(crate) async fn run(target: &Target, plan: &SoakPlan) -> Result<Value> {
    let pid = match target {
        Target::Stdio(stdio) => plan.pid.or_else(|| stdio.pid()),
        Target::Http(_) => plan.pid,
    };
    // Before any load; "start" is after the first interval, once the
    // server has warmed up (buffers, pools, caches), so growth means growth.
    let rss_before = pid.and_then(rss_kib);
    let counters = Arc::new(Counters::default());
    let latencies = Arc::new(Mutex::new(histogram()));
    let started = Instant::now();
    let deadline = started + plan.duration;
    let mut lanes = tokio::task::JoinSet::new();
    for agent in 0..plan.agents {
        // Handshake era: a session per agent, its lanes sharing it.
        let http = match target {
            Target::Http(http) => Some(http.with_own_session().await?),
            Target::Stdio(_) => None,
        };
        for lane in 0..plan.parallel {
            let (counters, latencies) = (counters.clone(), latencies.clone());
            let stdio = match target {
                Target::Stdio(stdio) => Some(stdio.clone()),
                Target::Http(_) => None,
            };
            let http = http.clone();
            lanes.spawn(async move {
                let mut sender = match &http {
                    Some(http) => match http.connect().await {
                        Ok(sender) => Some(sender),
                        Err(e) => {
                            counters.problem(&counters.lost, format!("agent {agent}: {e:#}"));
                            return;
                        }
                    },
                    None => None,
                };
                let mut n = 0u64;
                while Instant::now() < deadline {
                    n += 1;
                    let message = format!("agent {agent} lane {lane} call {n}");
                    let arguments = json!({ "message": message });
                    let t = Instant::now();
                    let answer = match (&http, &mut sender, &stdio) {
                        (Some(http), Some(sender), _) => {
                            tokio::time::timeout(CALL_TIMEOUT, http.call_with(sender, &arguments)).await
                        }
                        (_, _, Some(stdio)) => tokio::time::timeout(CALL_TIMEOUT, stdio.call_with(&arguments)).await,
                        _ => unreachable!("a lane has a target"),
                    };
                    let elapsed = t.elapsed();
                    counters.calls.fetch_add(1, Ordering::Relaxed);
                    match answer {
                        Ok(Ok(result)) => {
                            let said = result["content"][0]["text"].as_str().unwrap_or("");
                            if said_back(&message, &result) {
                                let micros = (elapsed.as_micros() as u64).clamp(1, 60_000_000);
                                let _ = latencies.lock().unwrap_or_else(|p| p.into_inner()).record(micros);
                            } else {
                                counters.problem(&counters.misrouted, format!("{message:?} was answered {said:?}"));
                            }
                        }
                        Ok(Err(e)) => {
                            counters.problem(&counters.lost, format!("{message}: {e:#}"));
                            // A broken connection is replaced.
                            if let (Some(http), Some(slot)) = (&http, &mut sender)
                                && let Ok(fresh) = http.connect().await
                            {
                                *slot = fresh;
                            }
                        }
                        Err(_) => {
                            counters.problem(&counters.lost, format!("{message}: no answer within {CALL_TIMEOUT:?}"))
                        }
                    }
                }
            });
        }
    }
    let mut samples = Vec::new();
    let (mut calls_before, mut lost_before, mut misrouted_before) = (0, 0, 0);
    let mut ticker = tokio::time::interval_at(tokio::time::Instant::now() + plan.interval, plan.interval);
    loop {
        let done = tokio::select! {
            _ = ticker.tick() => false,
            _ = async { while lanes.join_next().await.is_some() {} } => true,
        };
        let interval = std::mem::replace(&mut *latencies.lock().unwrap_or_else(|p| p.into_inner()), histogram());
        let (calls, lost, misrouted) = (
            counters.calls.load(Ordering::Relaxed),
            counters.lost.load(Ordering::Relaxed),
            counters.misrouted.load(Ordering::Relaxed),
        );
        let sample = Sample {
            at: started.elapsed(),
            calls: calls - calls_before,
            lost: lost - lost_before,
            misrouted: misrouted - misrouted_before,
            p50_ms: interval.value_at_quantile(0.50) as f64 / 1000.0,
            p99_ms: interval.value_at_quantile(0.99) as f64 / 1000.0,
            rss_kib: pid.and_then(rss_kib),
        };
        (calls_before, lost_before, misrouted_before) = (calls, lost, misrouted);
        if sample.calls > 0 || !done {
            print_sample(&sample);
            samples.push(sample);
        }
        if done {
            break;
        }
    }
    let elapsed = started.elapsed();
    let rss_end = pid.and_then(rss_kib);
    let rss_start = samples.first().and_then(|s| s.rss_kib).or(rss_before);
    let (calls, lost, misrouted) = (calls_before, lost_before, misrouted_before);
    let growth = match (rss_start, rss_end) {
        (Some(a), Some(b)) if a > 0 => Some((b as f64 - a as f64) / a as f64 * 100.0),
        _ => None,
    };
    println!(
        "soak: {calls} calls in {:.0} s ({:.0}/s) by {} agents x {} parallel; {lost} lost, {misrouted} misrouted; RSS after the first interval {} -> at the end {}{}",
        elapsed.as_secs_f64(),
        calls as f64 / elapsed.as_secs_f64().max(1e-9),
        plan.agents,
        plan.parallel,
        rss_start.map_or("?".into(), mib),
        rss_end.map_or("?".into(), mib),
        growth.map_or(String::new(), |g| format!(" ({g:+.1} %)")),
    );
    let report = json!({
        "duration_s": elapsed.as_secs_f64(),
        "agents": plan.agents,
        "parallel": plan.parallel,
        "calls": calls,
        "lost": lost,
        "misrouted": misrouted,
        "rss_before_kib": rss_before,
        "rss_start_kib": rss_start,
        "rss_end_kib": rss_end,
        "rss_growth_percent": growth,
        "intervals": samples.iter().map(|s| json!({
            "at_s": s.at.as_secs_f64(),
            "calls": s.calls,
            "lost": s.lost,
            "misrouted": s.misrouted,
            "p50_ms": s.p50_ms,
            "p99_ms": s.p99_ms,
            "rss_kib": s.rss_kib,
        })).collect::<Vec<_>>(),
    });
    if lost + misrouted > 0 {
        let first = counters.first_problem.lock().unwrap_or_else(|p| p.into_inner()).clone();
        println!("{report}");
        bail!(
            "{lost} answers lost and {misrouted} misrouted; the first: {}",
            first.unwrap_or_default()
        );
    }
    Ok(report)
}

/// Whether a result is the answer to the call that sent `message`.
fn said_back(message: &str, result: &Value) -> bool {
    result["isError"] != true && result["content"][0]["text"].as_str() == Some(message)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

fn print_sample(s: &Sample) {
    println!(
        "{:>7.0} s  {:>8} calls  {:>4} lost  {:>4} misrouted  p50 {:>7.2} ms  p99 {:>8.2} ms  RSS {}",
        s.at.as_secs_f64(),
        s.calls,
        s.lost,
        s.misrouted,
        s.p50_ms,
        s.p99_ms,
        s.rss_kib.map_or("?".into(), mib)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_is_only_the_one_to_its_own_call() {
        let answer = json!({"content": [{"type": "text", "text": "agent 1 lane 0 call 7"}]});
        assert!(said_back("agent 1 lane 0 call 7", &answer));
        assert!(!said_back("agent 1 lane 0 call 70", &answer));
        assert!(!said_back("agent 10 lane 0 call 7", &answer));
        assert!(!said_back("x", &json!({"content": []})));
        assert!(!said_back(
            "x",
            &json!({"content": [{"type": "text", "text": "x"}], "isError": true})
        ));
    }

    #[test]
    fn durations_read_as_people_write_them() {
        assert_eq!(parse_duration("90"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        for bad in ["", "0", "ten", "5d", "-3s"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
