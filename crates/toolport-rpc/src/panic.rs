//! Panics contained where handlers run: a handler that panics answers
//! JSON-RPC -32603 with a generic message, its panic message goes to the
//! log (never to the caller: it may name paths, queries or values), the
//! panic is counted in `toolport_panics_total{site}`, and the connection,
//! the session and the process go on.
//!
//! This needs `panic = "unwind"` (the default); a build with
//! `panic = "abort"` stops the process at the first panic instead.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use toolport_protocol::{ErrorCode, ErrorObject};

/// What the caller of a handler that panicked is told.
pub const PANIC_MESSAGE: &str = "Internal error: the handler failed unexpectedly; the server logged the details";

pin_project_lite::pin_project! {
    /// A future that turns a panic while it is polled into `Err(Panicked)`.
    #[derive(Debug)]
    pub struct Contained<F> {
        #[pin]
        inner: F,
        site: &'static str,
    }
}

/// A handler panicked; its message has been logged and counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Panicked {
    /// Where it ran: `tool`, `request`, `connection`, ...
    pub site: &'static str,
}

impl Panicked {
    /// The JSON-RPC error the caller gets: -32603 with a generic message.
    pub fn error(self) -> ErrorObject {
        ErrorObject::new(ErrorCode::INTERNAL_ERROR, PANIC_MESSAGE)
    }
}

/// Runs `future`, catching a panic in any of its polls. `site` labels the
/// log line and the counter.
pub fn contain<F: Future>(site: &'static str, future: F) -> Contained<F> {
    Contained { inner: future, site }
}

impl<F: Future> Future for Contained<F> {
    type Output = Result<F::Output, Panicked>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let (site, inner) = (*this.site, this.inner);
        // A future that panicked is not polled again (its state may be
        // broken; it is dropped with this one), so unwind safety holds.
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(output)) => Poll::Ready(Ok(output)),
            Err(payload) => {
                record(site, payload.as_ref());
                Poll::Ready(Err(Panicked { site }))
            }
        }
    }
}

/// Logs and counts a panic caught at `site`.
pub fn record(site: &'static str, payload: &(dyn Any + Send)) {
    tracing::error!(
        site,
        panic = message(payload),
        "a handler panicked; the caller got an internal error"
    );
    metrics::counter!("toolport_panics_total", "site" => site).increment(1);
}

/// The text a panic was raised with (`panic!("...")`), when it has one.
pub fn message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&'static str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a panic without a message)")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_becomes_an_error_and_an_answer_goes_through() {
        let fine = contain("test", async { 7 }).await;
        assert_eq!(fine, Ok(7));
        let failed = contain("test", async {
            tokio::task::yield_now().await;
            panic!("secret path /etc/shadow");
        })
        .await;
        let panicked: Result<(), _> = failed;
        let error = panicked.unwrap_err().error();
        assert_eq!(error.code, ErrorCode::INTERNAL_ERROR);
        assert!(!error.message.contains("shadow"), "{}", error.message);
        let formatted = std::panic::catch_unwind(|| panic!("{} {}", "with", "format")).unwrap_err();
        assert_eq!(message(formatted.as_ref()), "with format");
    }
}
