//! Toolport's command-line program, as a library so its parts (the demo
//! server, the configuration) can be tested and reused.

pub mod client_cli;
pub mod demo;
