//! Where handshake-era session and event state lives: the traits and
//! in-memory implementations of [`toolport_server::state`], re-exported here
//! for whoever builds an [`HttpServer`](crate::HttpServer) with other stores.

use std::future::Future;
use std::task::{Context, Poll, Waker};

pub use toolport_server::state::{
    EventLog, MemoryEventLog, MemorySessionStore, SessionRecord, SessionSettings, SessionStore, StateError,
};

/// Runs a store call from the parts of the request path that do not wait
/// yet (the endpoint and stream code are synchronous there): the call must
/// answer on its first poll, as the in-memory stores do. A store that would
/// wait (a network round trip) gets `Unavailable` here instead of blocking a
/// runtime thread; those paths await the store once they are asynchronous.
pub(crate) fn ready<T>(call: impl Future<Output = Result<T, StateError>>) -> Result<T, StateError> {
    let mut call = std::pin::pin!(call);
    match call.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(answer) => answer,
        Poll::Pending => Err(StateError::Unavailable(
            "the store did not answer at once, and this request path cannot wait for it yet".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ready_call_answers_and_a_waiting_one_is_unavailable() {
        let store = MemorySessionStore::new();
        assert_eq!(ready(store.count()), Ok(0));
        let waits = async {
            std::future::pending::<()>().await;
            Ok::<(), StateError>(())
        };
        assert!(matches!(ready(waits), Err(StateError::Unavailable(_))));
    }
}
