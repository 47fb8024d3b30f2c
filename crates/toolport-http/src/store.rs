//! Where handshake-era session and event state lives: the traits and
//! in-memory implementations of [`toolport_server::state`], re-exported here
//! for whoever builds an [`HttpServer`](crate::HttpServer) with other stores.

pub use toolport_server::state::{
    EventLog, MemoryEventLog, MemorySessionStore, SessionRecord, SessionSettings, SessionStore, SettingsChange,
    StateError,
};
