//! The "everything" fixture server of the official MCP conformance suite.
//!
//! `npx @modelcontextprotocol/conformance server --url http://127.0.0.1:PORT/mcp`
//! runs its server scenarios against a server that exposes a fixed set of
//! tools, resources, resource templates and prompts ([`names`]). This crate
//! registers all of them on a [`toolport_server::Server`], with the behaviour
//! each scenario checks, for both eras of MCP:
//!
//! - the handshake era (the suite's 2025-06-18 / 2025-11-25 requirement sets):
//!   sampling, elicitation and roots are requests sent to the client, logs and
//!   progress are notifications on the request's stream, resources can be
//!   subscribed to;
//! - the stateless era (the 2026-07-28 requirement set): the same handlers
//!   answer with an `InputRequiredResult` carrying a sealed `requestState`,
//!   list changes and resource updates go to `subscriptions/listen` streams.
//!
//! The transport is not part of this crate: the HTTP binary serves
//! [`fixture_server`] (or [`fixture_server_with`]) and starts
//! [`spawn_watched_resource_updates`] next to it.
//!
//! ```
//! let server = toolport_conformance::fixture_server();
//! assert!(server.tools().get(toolport_conformance::names::TEST_SIMPLE_TEXT).is_some());
//! ```

mod answers;
mod data;
pub mod names;
mod prompts;
mod resources;
mod tools;

use std::fmt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use toolport_server::{RequestContext, Server};

pub use data::{
    JSON_SCHEMA_2020_12_INPUT_SCHEMA, TEST_AUDIO_WAV_BASE64, TEST_IMAGE_PNG_BASE64, json_schema_2020_12_input_schema,
};
pub use resources::{announce_watched_resource_update, spawn_watched_resource_updates};

/// The name the fixture gives itself in `serverInfo`.
pub const SERVER_NAME: &str = "toolport-conformance-fixture";

/// How often the suite's reference fixture updates `test://watched-resource`.
pub const WATCHED_RESOURCE_INTERVAL: Duration = Duration::from_secs(3);

/// Closes the response stream of the request `cx` belongs to, if the transport
/// can (the handshake era's SSE polling, SEP-1699). Returns whether it did.
///
/// The framework gives handlers no handle on their transport, so the
/// transport has to recognise the request from what the context carries: its
/// JSON-RPC id ([`RequestContext::request_id`], unique only within a session)
/// and the `_meta` keys MCP does not define ([`RequestContext::meta`]), where a
/// transport can put a private stream key before handing the request over.
pub type StreamCloser = Arc<dyn Fn(&RequestContext) -> bool + Send + Sync>;

/// What can be tuned about the fixture.
#[derive(Clone)]
pub struct FixtureOptions {
    /// Pause between the steps of `test_tool_with_logging` and
    /// `test_tool_with_progress`. The suite describes ~50 ms, so that its
    /// client sees several notifications arrive during one call.
    pub step_delay: Duration,
    /// How long `test_reconnection` waits after asking the transport to close
    /// the stream, before it answers (the suite's reference waits 100 ms).
    pub reconnection_delay: Duration,
    /// The transport's way to close the current request's SSE stream, used by
    /// `test_reconnection`. Without one the tool only waits and answers.
    pub stream_closer: Option<StreamCloser>,
    /// Where tasks live; without an engine the task tools run as plain tools.
    pub tasks: Option<toolport_server::TaskEngine>,
}

impl Default for FixtureOptions {
    fn default() -> Self {
        FixtureOptions {
            step_delay: Duration::from_millis(50),
            reconnection_delay: Duration::from_millis(100),
            stream_closer: None,
            tasks: None,
        }
    }
}

impl fmt::Debug for FixtureOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FixtureOptions")
            .field("step_delay", &self.step_delay)
            .field("reconnection_delay", &self.reconnection_delay)
            .field("stream_closer", &self.stream_closer.is_some())
            .field("tasks", &self.tasks.is_some())
            .finish()
    }
}

/// The fixture with its default options.
pub fn fixture_server() -> Server {
    fixture_server_with(FixtureOptions::default())
}

/// The fixture: every tool, resource, template and prompt the conformance
/// suite's server scenarios call.
///
/// The list-changing tools (`test_trigger_tool_change`,
/// `test_trigger_prompt_change`) hold a handle to the server they change, so
/// a fixture server is never freed; it is meant to live as long as its
/// process.
pub fn fixture_server_with(options: FixtureOptions) -> Server {
    let slot: ServerSlot = Arc::new(OnceLock::new());
    let mut builder = Server::builder(SERVER_NAME, env!("CARGO_PKG_VERSION"))
        .title("Toolport conformance fixture")
        .description("Every tool, resource and prompt the MCP conformance suite's server scenarios use.")
        .instructions(
            "Conformance fixture: the tools named test_* behave exactly as the MCP conformance suite's \
             server scenarios describe.",
        );
    for tool in tools::all(&options, &slot) {
        builder = builder.tool(tool);
    }
    for resource in resources::resources() {
        builder = builder.resource(resource);
    }
    for template in resources::templates() {
        builder = builder.template(template);
    }
    for prompt in prompts::all() {
        builder = builder.prompt(prompt);
    }
    if let Some(engine) = options.tasks.clone() {
        builder = builder.tasks(engine);
    }
    let server = builder.build().expect("the fixture's definitions are valid");
    let _ = slot.set(server.clone());
    server
}

/// The server a handler belongs to, set once it is built.
pub(crate) type ServerSlot = Arc<OnceLock<Server>>;
