//! Toolport's command-line program, as a library so its parts (the demo
//! server, the packs server, the configuration, the client commands) can be tested
//! and reused.

pub mod a2a;
pub mod a2a_cli;
mod cli_common;
pub mod client_cli;
pub mod config;
pub mod demo;
pub mod packs;
pub mod state;
pub mod task_cli;
pub mod tasks;
pub mod telemetry;
