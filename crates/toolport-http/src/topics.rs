//! The relay's topics for a session's streams, and what a replica running
//! a stream says on them (see [`crate::replicas`]).

use bytes::Bytes;
use toolport_server::state::Relay;

pub(crate) fn stream_topic(session: &str, stream: u64) -> String {
    format!("stream:{stream}:{session}")
}

/// Tells a follower on another replica that a stream has new events.
pub(crate) async fn announce_event(relay: &dyn Relay, session: &str, stream: u64) {
    if let Err(e) = relay.send(&stream_topic(session, stream), Bytes::new()).await {
        // The follower reads the log on its own too.
        tracing::debug!(session, stream, error = %e, "a new event was not announced to followers");
    }
}

/// Whether a replica other than this one follows the stream.
pub(crate) async fn followed_elsewhere(relay: &dyn Relay, session: &str, stream: u64) -> bool {
    match relay.subscribers(&stream_topic(session, stream)).await {
        Ok(n) => n > 0,
        // Not knowing is no reason to cancel someone's request.
        Err(_) => true,
    }
}
