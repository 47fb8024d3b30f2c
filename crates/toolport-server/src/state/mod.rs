//! Where the state lives that several replicas of one server must share:
//! sessions, SSE event logs, idempotency records, rate buckets, the bus of
//! server events, the relay of messages between replicas, and the keys that
//! seal `requestState`.
//!
//! Each is a small object-safe trait (held as `Arc<dyn Trait>`) with an
//! in-memory implementation, the embedded default. Their data is
//! serializable so that a shared store (Redis) can implement them; such a
//! store can fail, so the fallible calls return [`StateError`], which callers
//! turn into a JSON-RPC or HTTP error. With the `store-suite` feature,
//! [`suite`] holds one contract test per trait that every implementation runs.

mod bus;
mod error;
mod events;
mod idempotency;
mod keyring;
mod rate;
mod relay;
mod sessions;
#[cfg(feature = "store-suite")]
pub mod suite;

pub use bus::{EventBus, EventSubscription, MemoryEventBus, ONCE_WINDOW, once_key};
pub use error::{STATE_UNAVAILABLE, StateError, is_state_unavailable};
pub use events::{EventLog, MemoryEventLog, new_stream_id};
pub use idempotency::{ArgumentsDigest, Claim, ClaimGuard, ClaimTicket, IdempotencyStore, MemoryIdempotencyStore};
pub use keyring::{KeyRing, KeyRingError};
pub use rate::{MemoryRateLimiter, RateConfig, RateDecision, RateLimiter};
pub use relay::{MemoryRelay, RELAY_BUFFER, Relay, RelaySubscription, offer};
pub use sessions::{MemorySessionStore, Negotiated, SessionRecord, SessionSettings, SessionStore, SettingsChange};
