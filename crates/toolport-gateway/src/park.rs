//! Upstream calls parked while a 2026-07-28 caller answers a question.
//!
//! A 2026-07-28 caller has no session the gateway could send the upstream's
//! `elicitation/create` on. So the upstream call runs in a task of its own;
//! when the upstream asks, the gateway answers the caller with an
//! `InputRequiredResult` whose sealed `requestState` names the parked call,
//! and keeps the call (and the upstream's question) waiting. The caller's
//! retry, with `inputResponses`, finds the call, hands the answer upstream,
//! and follows the call again, to its result or its next question.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use toolport_protocol::ErrorObject;
use toolport_protocol::mrtr::{InputRequest, InputRequests};
use toolport_server::{InputRequired, RequestContext, ToolError};

/// Calls parked at once, at most; more callers waiting are refused.
const MAX_PARKED: usize = 1024;
/// How long a parked call waits for its caller's retry.
const PARK_TIMEOUT: Duration = Duration::from_secs(600);

/// A question from the upstream and where its answer goes.
pub(crate) type Question = (InputRequest, oneshot::Sender<Result<Value, ErrorObject>>);

/// The upstream side of a parked call: where the upstream's questions go.
#[derive(Debug)]
pub(crate) struct Parking {
    questions: mpsc::Sender<Question>,
}

impl Parking {
    /// A parking and the receiver of its questions.
    pub(crate) fn channel() -> (mpsc::Receiver<Question>, Arc<Parking>) {
        let (questions, rx) = mpsc::channel(1);
        (rx, Arc::new(Parking { questions }))
    }

    /// Asks the caller; resolves when the caller's retry brings the answer.
    pub(crate) async fn ask(&self, request: InputRequest) -> Result<Value, ErrorObject> {
        let (tx, rx) = oneshot::channel();
        self.questions
            .send((request, tx))
            .await
            .map_err(|_| ErrorObject::internal("the call behind the gateway is over"))?;
        rx.await
            .map_err(|_| ErrorObject::internal("the caller behind the gateway did not come back with an answer"))?
    }
}

/// A call in flight whose caller speaks 2026-07-28.
#[derive(Debug)]
pub(crate) struct Running<T> {
    pub(crate) done: oneshot::Receiver<Result<T, ToolError>>,
    pub(crate) questions: mpsc::Receiver<Question>,
    pub(crate) progress: mpsc::UnboundedReceiver<toolport_client::Progress>,
    /// The upstream's log messages on the call's own stream.
    pub(crate) logs: mpsc::UnboundedReceiver<LogMessage>,
    /// Stops the call's task when the call is given up.
    pub(crate) _abort: AbortOnDrop,
    /// Keeps whatever the call holds (its lease) as long as it runs.
    pub(crate) _held: Box<dyn std::any::Any + Send>,
}

/// Aborts a task when dropped.
#[derive(Debug)]
pub(crate) struct AbortOnDrop(pub(crate) tokio::task::AbortHandle);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// An upstream's log message.
pub(crate) type LogMessage = toolport_protocol::logging::LoggingMessageNotificationParams;

/// Where a forwarded call's progress and log messages go, for its caller.
#[derive(Debug, Clone)]
pub(crate) struct Sinks {
    pub(crate) progress: mpsc::UnboundedSender<toolport_client::Progress>,
    pub(crate) logs: mpsc::UnboundedSender<LogMessage>,
}

/// The receiving ends of [`Sinks`].
pub(crate) type Drains = (
    mpsc::UnboundedReceiver<toolport_client::Progress>,
    mpsc::UnboundedReceiver<LogMessage>,
);

impl Sinks {
    pub(crate) fn new() -> (Sinks, Drains) {
        let (progress, progress_rx) = mpsc::unbounded_channel();
        let (logs, logs_rx) = mpsc::unbounded_channel();
        (Sinks { progress, logs }, (progress_rx, logs_rx))
    }
}

/// Passes one log message of the upstream on to the caller of `cx`.
pub(crate) async fn relay_log(cx: &RequestContext, log: LogMessage) {
    cx.log(log.level, log.logger.as_deref(), log.data).await;
}

/// Starts a call that can be parked: its questions arrive on `questions`
/// (the receiver of its [`Parking`]); `start` gets the call's sinks and
/// returns the call's future.
pub(crate) fn spawn_with<T, F>(
    held: Box<dyn std::any::Any + Send>,
    questions: mpsc::Receiver<Question>,
    start: impl FnOnce(Sinks) -> F,
) -> Running<T>
where
    T: Send + 'static,
    F: std::future::Future<Output = Result<T, ToolError>> + Send + 'static,
{
    let (sinks, (progress, logs)) = Sinks::new();
    let (dtx, done) = oneshot::channel();
    // Boxed once here: the call's future is large (the client's whole
    // request), and spawning it by value would copy it into the task's cell
    // and again into its stage, per call.
    let call = Box::pin(start(sinks));
    let task = tokio::spawn(async move {
        let _ = dtx.send(call.await);
    });
    Running {
        done,
        questions,
        progress,
        logs,
        _abort: AbortOnDrop(task.abort_handle()),
        _held: held,
    }
}

/// What the sealed `requestState` of a parked call holds.
#[derive(Debug, Serialize, Deserialize)]
struct ParkState {
    /// The parked call.
    park: u64,
    /// The key its question went out under.
    key: String,
}

struct Parked<T> {
    running: Running<T>,
    question: InputRequest,
    answer: oneshot::Sender<Result<Value, ErrorObject>>,
    since: Instant,
}

/// The parked calls of one kind of result.
pub(crate) struct ParkingLot<T> {
    parked: Mutex<HashMap<u64, Parked<T>>>,
    next: AtomicU64,
}

impl<T> std::fmt::Debug for ParkingLot<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParkingLot").finish_non_exhaustive()
    }
}

impl<T> Default for ParkingLot<T> {
    fn default() -> Self {
        ParkingLot {
            parked: Mutex::default(),
            next: AtomicU64::new(1),
        }
    }
}

impl<T: Send + 'static> ParkingLot<T> {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<u64, Parked<T>>> {
        self.parked.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The call a retry continues, with the caller's answer handed upstream;
    /// `None` when the request is not a retry of a parked call.
    pub(crate) async fn resume(&self, cx: &RequestContext) -> Option<Result<Running<T>, ToolError>> {
        let state: ParkState = cx.request_state()?;
        let parked = self.lock().remove(&state.park);
        let Some(parked) = parked else {
            return Some(Err(ToolError::Failed(
                "the call this answers is no longer waiting at the gateway (it timed out, or the gateway restarted); call the tool again".into(),
            )));
        };
        // The answer is in this retry's inputResponses under the key it was asked with.
        let asked = InputRequests::from([(state.key.clone(), parked.question.clone())]);
        match cx.input(asked).await {
            Ok(mut answers) => {
                let _ = parked
                    .answer
                    .send(Ok(answers.remove(&state.key).unwrap_or(Value::Null)));
                Some(Ok(parked.running))
            }
            Err(e) => {
                // Not answered this time: keep it parked under a new id and ask again.
                Some(Err(match e {
                    ToolError::InputRequired(_) => self.park(parked.running, parked.question, parked.answer),
                    other => other,
                }))
            }
        }
    }

    /// Follows a call until its result, or parks it on its next question.
    pub(crate) async fn follow(&self, cx: &RequestContext, mut running: Running<T>) -> Result<T, ToolError> {
        loop {
            tokio::select! {
                done = &mut running.done => {
                    // What came on the call's stream before its answer goes first.
                    while let Ok(log) = running.logs.try_recv() {
                        relay_log(cx, log).await;
                    }
                    return done.unwrap_or_else(|_| Err(ToolError::Failed("the forwarded call stopped unexpectedly".into())));
                }
                Some((question, answer)) = running.questions.recv() => {
                    return Err(self.park(running, question, answer));
                }
                Some(p) = running.progress.recv() => cx.progress(p.progress, p.total, p.message).await,
                Some(log) = running.logs.recv() => relay_log(cx, log).await,
                _ = cx.cancelled() => return Err(ToolError::Cancelled),
            }
        }
    }

    fn park(
        &self,
        running: Running<T>,
        question: InputRequest,
        answer: oneshot::Sender<Result<Value, ErrorObject>>,
    ) -> ToolError {
        let mut parked = self.lock();
        parked.retain(|_, p| p.since.elapsed() < PARK_TIMEOUT && !p.answer.is_closed());
        if parked.len() >= MAX_PARKED {
            return ToolError::Failed(
                "too many calls wait for their callers' answers at the gateway; try again later".into(),
            );
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let key = format!("upstream-{id}");
        let requests = InputRequests::from([(key.clone(), question.clone())]);
        parked.insert(
            id,
            Parked {
                running,
                question,
                answer,
                since: Instant::now(),
            },
        );
        ToolError::InputRequired(Box::new(
            InputRequired::new(requests).with_state(ParkState { park: id, key }),
        ))
    }
}
