//! The fixture's resources and resource template, and the periodic updates
//! of `test://watched-resource`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde_json::json;
use tokio::task::JoinHandle;
use tokio::time::{Instant, MissedTickBehavior};
use toolport_protocol::content::ResourceContents;
use toolport_protocol::resources::{Resource, ResourceTemplate};
use toolport_server::completion::from_list;
use toolport_server::{ResourceEntry, Server, TemplateEntry};

use crate::data::TEST_IMAGE_PNG_BASE64;
use crate::names::*;

/// How many times `test://watched-resource` has changed in this process.
static WATCHED_REVISION: AtomicU64 = AtomicU64::new(0);

fn resource(uri: &str, name: &str, title: &str, description: &str, mime_type: &str) -> Resource {
    Resource {
        title: Some(title.into()),
        description: Some(description.into()),
        mime_type: Some(mime_type.into()),
        ..Resource::new(uri, name)
    }
}

/// Every fixed resource of the fixture.
pub(crate) fn resources() -> Vec<ResourceEntry> {
    vec![
        ResourceEntry::new(
            resource(
                STATIC_TEXT_URI,
                "static-text",
                "Static Text Resource",
                "A static text resource for testing",
                "text/plain",
            ),
            |_cx, request| async move {
                ResourceContents::text(
                    request.uri,
                    Some("text/plain"),
                    "This is the content of the static text resource.",
                )
            },
        ),
        ResourceEntry::new(
            resource(
                STATIC_BINARY_URI,
                "static-binary",
                "Static Binary Resource",
                "A static binary resource (a PNG image) for testing",
                "image/png",
            ),
            |_cx, request| async move { ResourceContents::blob(request.uri, Some("image/png"), TEST_IMAGE_PNG_BASE64) },
        ),
        ResourceEntry::new(
            resource(
                WATCHED_RESOURCE_URI,
                "watched-resource",
                "Watched Resource",
                "A subscribable resource that changes every few seconds",
                "text/plain",
            ),
            |_cx, request| async move {
                let revision = WATCHED_REVISION.load(Ordering::Relaxed);
                ResourceContents::text(
                    request.uri,
                    Some("text/plain"),
                    format!("Watched resource content (revision {revision})"),
                )
            },
        ),
    ]
}

/// Every resource template of the fixture.
pub(crate) fn templates() -> Vec<TemplateEntry> {
    let template = ResourceTemplate {
        uri_template: TEMPLATE_URI.into(),
        name: "template".into(),
        title: Some("Resource Template".into()),
        description: Some("A resource template with parameter substitution".into()),
        mime_type: Some("application/json".into()),
        ..Default::default()
    };
    let entry = TemplateEntry::new(template, |_cx, request| async move {
        let id = request.variables.get("id").cloned().unwrap_or_default();
        let text = json!({ "id": id, "templateTest": true, "data": format!("Data for ID: {id}") });
        ResourceContents::text(request.uri, Some("application/json"), text.to_string())
    })
    .complete("id", from_list(["123", "456", "789"]));
    vec![entry]
}

/// Changes `test://watched-resource` once: its contents name a new revision
/// and subscribers (handshake era) and listeners (2026-07-28) are told.
pub fn announce_watched_resource_update(server: &Server) {
    WATCHED_REVISION.fetch_add(1, Ordering::Relaxed);
    server.resource_updated(WATCHED_RESOURCE_URI);
}

/// Changes `test://watched-resource` every `every` (the suite's reference
/// fixture: [`crate::WATCHED_RESOURCE_INTERVAL`]) until the task is aborted.
/// Call from inside a tokio runtime; `every` must not be zero.
pub fn spawn_watched_resource_updates(server: Server, every: Duration) -> JoinHandle<()> {
    assert!(!every.is_zero(), "the update period must not be zero");
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval_at(Instant::now() + every, every);
        ticks.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            announce_watched_resource_update(&server);
        }
    })
}
