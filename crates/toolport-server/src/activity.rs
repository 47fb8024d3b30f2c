//! What the server is doing right now, for the people who run it: the tool
//! calls in flight (each cancellable by an operator), the recent failures,
//! and the refusals of the rate limits. Read by the console's admin API;
//! kept small and bounded, whatever the load.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::audit::now_rfc3339;
use crate::context::Principal;

/// Recent failures kept: enough to see a pattern, little enough to show.
const RECENT_ERRORS: usize = 100;
/// Distinct rate-limit keys whose refusals are counted; beyond it the
/// oldest is forgotten, so a flood of principals does not grow memory.
const RATE_KEYS: usize = 256;

/// The live activity of one server.
#[derive(Debug, Default)]
pub struct Activity {
    next_id: AtomicU64,
    running: Mutex<BTreeMap<u64, Running>>,
    errors: Mutex<VecDeque<RecentError>>,
    rate_refusals: Mutex<BTreeMap<String, RateRefusals>>,
}

#[derive(Debug)]
struct Running {
    tool: String,
    principal: Option<Owner>,
    session: Option<String>,
    request_id: Value,
    started_at: String,
    started: Instant,
    cancel: CancellationToken,
}

/// Who started a call: its subject and client, compared when someone asks
/// to cancel it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Owner {
    subject: String,
    client_id: Option<String>,
}

impl Owner {
    fn of(principal: &Principal) -> Self {
        Owner {
            subject: principal.subject.clone(),
            client_id: principal.client_id.clone(),
        }
    }
}

/// A tool call in flight.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunningCall {
    /// The server's own number for the call (not the JSON-RPC id, which only
    /// its client knows the meaning of): what [`Activity::cancel`] takes.
    pub id: u64,
    /// The tool.
    pub tool: String,
    /// The caller's subject, when authenticated.
    pub principal: Option<String>,
    /// The handshake-era session, if any.
    pub session: Option<String>,
    /// The JSON-RPC id its client gave it.
    pub request_id: Value,
    /// When it began, RFC 3339 UTC.
    pub started: String,
    /// How long it has run.
    pub elapsed_ms: u64,
}

/// A request or tool call that failed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecentError {
    /// When, RFC 3339 UTC.
    pub time: String,
    /// The method (`tools/call`, ...).
    pub method: String,
    /// The tool, for a tool call.
    pub tool: Option<String>,
    /// The caller's subject, when authenticated.
    pub principal: Option<String>,
    /// `tool_error`, `cancelled`, `error`, `refused` or `forbidden`.
    pub outcome: String,
    /// The JSON-RPC error code, for a protocol error.
    pub code: Option<i64>,
    /// What went wrong, as the caller was told.
    pub message: String,
}

/// The refusals of one rate limit (a principal's or a tool's bucket).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RateRefusals {
    /// Which limit: `principal "alice"` or `tool search`.
    pub limit: String,
    /// Calls it refused since the server started.
    pub refused: u64,
    /// When it last refused one, RFC 3339 UTC.
    pub last: String,
}

/// What became of a request to cancel a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CancelOutcome {
    /// The call was told to stop; it ends at its next await.
    Cancelled,
    /// No call with that number is running (it ended, or never was).
    NotFound,
    /// It runs for another principal, and the asker may not stop others' calls.
    NotYours,
}

/// Counts a call as running until dropped.
#[derive(Debug)]
pub(crate) struct RunningGuard<'a> {
    activity: &'a Activity,
    id: u64,
    /// Fires when an operator cancels the call.
    pub(crate) cancel: CancellationToken,
}

impl Drop for RunningGuard<'_> {
    fn drop(&mut self) {
        self.activity.lock_running().remove(&self.id);
    }
}

impl Activity {
    fn lock_running(&self) -> std::sync::MutexGuard<'_, BTreeMap<u64, Running>> {
        self.running.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers a call as running; it is forgotten when the guard drops.
    pub(crate) fn begin(
        &self,
        tool: &str,
        principal: Option<&Principal>,
        session: Option<&str>,
        request_id: Value,
    ) -> RunningGuard<'_> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let cancel = CancellationToken::new();
        self.lock_running().insert(
            id,
            Running {
                tool: tool.to_owned(),
                principal: principal.map(Owner::of),
                session: session.map(str::to_owned),
                request_id,
                started_at: now_rfc3339(),
                started: Instant::now(),
                cancel: cancel.clone(),
            },
        );
        RunningGuard {
            activity: self,
            id,
            cancel,
        }
    }

    /// The calls in flight, oldest first.
    pub fn running(&self) -> Vec<RunningCall> {
        self.lock_running()
            .iter()
            .map(|(id, r)| RunningCall {
                id: *id,
                tool: r.tool.clone(),
                principal: r.principal.as_ref().map(|p| p.subject.clone()),
                session: r.session.clone(),
                request_id: r.request_id.clone(),
                started: r.started_at.clone(),
                elapsed_ms: r.started.elapsed().as_millis() as u64,
            })
            .collect()
    }

    /// How many calls are in flight.
    pub fn running_count(&self) -> usize {
        self.lock_running().len()
    }

    /// Whether the call numbered `id` runs for `principal` (`None`: the
    /// anonymous caller of an unprotected server).
    pub fn runs_for(&self, id: u64, principal: Option<&Principal>) -> bool {
        self.lock_running()
            .get(&id)
            .is_some_and(|r| r.principal == principal.map(Owner::of))
    }

    /// Stops the call numbered `id`. `by` is who asks; unless `any` (an
    /// operator allowed to stop every call), only the call's own principal
    /// may stop it.
    pub fn cancel(&self, id: u64, by: Option<&Principal>, any: bool) -> CancelOutcome {
        let running = self.lock_running();
        let Some(call) = running.get(&id) else {
            return CancelOutcome::NotFound;
        };
        if !any && call.principal != by.map(Owner::of) {
            return CancelOutcome::NotYours;
        }
        call.cancel.cancel();
        CancelOutcome::Cancelled
    }

    /// The recent failures, newest first.
    pub fn recent_errors(&self) -> Vec<RecentError> {
        self.errors
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .rev()
            .cloned()
            .collect()
    }

    /// The rate limits that refused calls, with how many.
    pub fn rate_refusals(&self) -> Vec<RateRefusals> {
        self.rate_refusals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .cloned()
            .collect()
    }

    pub(crate) fn record_error(&self, error: RecentError) {
        let mut errors = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        if errors.len() == RECENT_ERRORS {
            errors.pop_front();
        }
        errors.push_back(error);
    }

    /// A request refused at admission (malformed, wrong era, forbidden):
    /// `outcome` says which, `code` is the JSON-RPC error code if it has one.
    pub(crate) fn record_refusal(
        &self,
        method: &str,
        principal: Option<&Principal>,
        outcome: &str,
        code: Option<i64>,
        message: String,
    ) {
        self.record_error(RecentError {
            time: now_rfc3339(),
            method: method.to_owned(),
            tool: None,
            principal: principal.map(|p| p.subject.clone()),
            outcome: outcome.to_owned(),
            code,
            message,
        });
    }

    pub(crate) fn record_rate_refusal(&self, limit: String) {
        let mut refusals = self.rate_refusals.lock().unwrap_or_else(|p| p.into_inner());
        if !refusals.contains_key(&limit) && refusals.len() >= RATE_KEYS {
            let oldest = refusals
                .iter()
                .min_by(|a, b| a.1.last.cmp(&b.1.last))
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                refusals.remove(&oldest);
            }
        }
        let now = now_rfc3339();
        let entry = refusals.entry(limit.clone()).or_insert_with(|| RateRefusals {
            limit,
            refused: 0,
            last: now.clone(),
        });
        entry.refused += 1;
        entry.last = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> Principal {
        Principal {
            subject: "alice".into(),
            client_id: Some("console".into()),
            scopes: vec![],
            credential: None,
        }
    }

    #[test]
    fn a_call_is_listed_while_it_runs_and_only_its_owner_or_an_operator_stops_it() {
        let activity = Activity::default();
        let guard = activity.begin("long_task", Some(&alice()), Some("s1"), Value::from(7));
        let running = activity.running();
        assert_eq!(running.len(), 1);
        assert_eq!(running[0].tool, "long_task");
        assert_eq!(running[0].principal.as_deref(), Some("alice"));
        let id = running[0].id;
        assert!(activity.runs_for(id, Some(&alice())));

        let bob = Principal {
            subject: "bob".into(),
            ..alice()
        };
        assert_eq!(activity.cancel(id, Some(&bob), false), CancelOutcome::NotYours);
        assert_eq!(activity.cancel(id, None, false), CancelOutcome::NotYours);
        assert!(!guard.cancel.is_cancelled());
        assert_eq!(activity.cancel(id, Some(&alice()), false), CancelOutcome::Cancelled);
        assert!(guard.cancel.is_cancelled());
        assert_eq!(activity.cancel(id, Some(&bob), true), CancelOutcome::Cancelled);

        drop(guard);
        assert!(activity.running().is_empty());
        assert_eq!(activity.cancel(id, None, true), CancelOutcome::NotFound);
        assert_eq!(activity.cancel(u64::MAX, None, true), CancelOutcome::NotFound);
    }

    #[test]
    fn recent_errors_and_rate_refusals_stay_bounded() {
        let activity = Activity::default();
        for i in 0..(RECENT_ERRORS + 10) {
            activity.record_error(RecentError {
                time: now_rfc3339(),
                method: "tools/call".into(),
                tool: Some("echo".into()),
                principal: None,
                outcome: "error".into(),
                code: Some(-32010),
                message: format!("number {i}"),
            });
        }
        let errors = activity.recent_errors();
        assert_eq!(errors.len(), RECENT_ERRORS);
        assert_eq!(
            errors[0].message,
            format!("number {}", RECENT_ERRORS + 9),
            "newest first"
        );

        for i in 0..(RATE_KEYS * 2) {
            activity.record_rate_refusal(format!("principal {i}"));
        }
        activity.record_rate_refusal("tool echo".into());
        activity.record_rate_refusal("tool echo".into());
        let refusals = activity.rate_refusals();
        assert!(refusals.len() <= RATE_KEYS);
        let echo = refusals.iter().find(|r| r.limit == "tool echo").unwrap();
        assert_eq!(echo.refused, 2);
    }
}
