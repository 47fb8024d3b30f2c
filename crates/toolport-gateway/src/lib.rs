//! The Toolport gateway: any MCP server, as a shared and supervised service,
//! many of them behind one endpoint.
//!
//! Each `[[upstream]]` is a command spoken to over stdio (started in a
//! process group of its own, restarted with backoff when it crashes, its
//! stderr in the logs under its name) or a Streamable HTTP endpoint of either
//! era. Their tools and prompts are served as `<upstream>__<name>`, their
//! resources under their own URIs, by one [`toolport_server::Server`] on
//! either transport; calls are forwarded with progress, cancellation and
//! the upstream's questions (elicitation, sampling, roots) sent to the caller
//! the call came from, in every era combination. See docs/gateway.md.
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use toolport_gateway::{Gateway, GatewaySection, UpstreamConfig};
//! let server = toolport_server::Server::builder("gateway", "1.0.0").build()?;
//! let upstreams = vec![UpstreamConfig::stdio("everything", "npx", &["-y", "@modelcontextprotocol/server-everything"])];
//! let gateway = Gateway::start(GatewaySection::default(), upstreams, &server).await?;
//! // serve `server` over HTTP or stdio; on shutdown:
//! gateway.stop().await;
//! # Ok(()) }
//! ```

mod catalog;
pub mod config;
mod credentials;
mod forward;
mod gateway;
mod input;
mod limits;
mod metrics;
mod park;
pub mod pins;
pub mod policy;
mod pool;
mod process;
mod slot;
mod subscriptions;

pub use catalog::{CatalogError, MAX_NAME, UPSTREAM_META, UPSTREAM_TOOL_META};
pub use config::{ConfigError, GatewaySection, RestartSection, Secret, Share, UpstreamConfig};
pub use gateway::{Gateway, GatewayError, UpstreamReport};
pub use policy::{ToolLimits, UpstreamLimits};
pub use slot::SlotState;
