//! The gateway's Prometheus metrics (through the `metrics` facade, rendered
//! at `/metrics` when the HTTP transport installs its recorder):
//!
//! - `toolport_upstream_up{upstream}`: 1 while the upstream (its shared or
//!   catalog connection) is up, else 0;
//! - `toolport_upstream_state{upstream,state}`: 1 for the state it is in
//!   (`starting`, `up`, `down`, `crash_loop`, `stopped`), 0 for the others;
//! - `toolport_upstream_restarts_total{upstream}`: restarts after a crash or
//!   a failed connection;
//! - `toolport_upstream_pooled{upstream}`: processes of a `per_principal` or
//!   `per_session` pool;
//! - `toolport_upstream_scan_findings{upstream}`: the scanner's findings on
//!   its last listing.

/// Every state a slot can be in (`SlotState::as_str`).
const STATES: [&str; 5] = ["starting", "up", "down", "crash_loop", "stopped"];

pub(crate) fn slot_state(upstream: &str, state: &'static str) {
    let up = if state == "up" { 1.0 } else { 0.0 };
    metrics::gauge!("toolport_upstream_up", "upstream" => upstream.to_owned()).set(up);
    for s in STATES {
        let value = if s == state { 1.0 } else { 0.0 };
        metrics::gauge!("toolport_upstream_state", "upstream" => upstream.to_owned(), "state" => s).set(value);
    }
}

pub(crate) fn restarted(upstream: &str) {
    metrics::counter!("toolport_upstream_restarts_total", "upstream" => upstream.to_owned()).increment(1);
}

pub(crate) fn pooled(upstream: &str, processes: usize) {
    metrics::gauge!("toolport_upstream_pooled", "upstream" => upstream.to_owned()).set(processes as f64);
}

pub(crate) fn scan_findings(upstream: &str, findings: usize) {
    metrics::gauge!("toolport_upstream_scan_findings", "upstream" => upstream.to_owned()).set(findings as f64);
}
