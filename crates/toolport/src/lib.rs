//! Toolport's command-line program, as a library so its parts (the demo
//! server, the packs server, the configuration) can be tested and reused.

pub mod demo;
pub mod packs;
