//! Where handshake-era session and event state lives: the traits and
//! in-memory implementations of [`toolport_server::state`], re-exported here
//! for whoever builds an [`HttpServer`](crate::HttpServer) with other stores.

use std::future::Future;
use std::task::{Context, Poll, Waker};

use tokio::runtime::{Handle, RuntimeFlavor};
pub use toolport_server::state::{
    EventLog, MemoryEventLog, MemorySessionStore, SessionRecord, SessionSettings, SessionStore, SettingsChange,
    StateError,
};

/// Runs a store call from the parts of the request path that do not await
/// yet (session lookup in the endpoint, event recording on SSE streams).
///
/// A call that answers on its first poll (the in-memory stores always do)
/// costs nothing more. One that waits (a network round trip) is waited for
/// with the worker thread handed over to blocking (`block_in_place`), which
/// needs the multi-threaded runtime; on a current-thread runtime it would
/// stall every other task, so it fails as `Unavailable` instead. Those paths
/// await the stores directly once they are asynchronous.
pub(crate) fn ready<T>(call: impl Future<Output = Result<T, StateError>>) -> Result<T, StateError> {
    let mut call = std::pin::pin!(call);
    if let Poll::Ready(answer) = call.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        return answer;
    }
    match Handle::try_current() {
        Ok(runtime) if runtime.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(|| runtime.block_on(call))
        }
        _ => Err(StateError::Unavailable(
            "the store did not answer at once, and this request path cannot wait for it on this runtime".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A store call that waits once before it answers.
    async fn slow() -> Result<u8, StateError> {
        tokio::task::yield_now().await;
        Ok(7)
    }

    #[test]
    fn a_call_that_answers_at_once_needs_no_runtime() {
        let store = MemorySessionStore::new();
        assert_eq!(ready(store.count()), Ok(0));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_that_waits_is_waited_for_on_the_multi_threaded_runtime() {
        assert_eq!(ready(slow()), Ok(7));
    }

    #[tokio::test]
    async fn a_call_that_waits_is_unavailable_on_a_current_thread_runtime() {
        assert!(matches!(ready(slow()), Err(StateError::Unavailable(_))));
    }
}
