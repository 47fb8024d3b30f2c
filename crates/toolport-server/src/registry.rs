//! Run-time registries of tools, resources, templates and prompts.
//!
//! Entries can be added and removed while the server is serving; every change
//! is announced on the server's event channel, which becomes a `list_changed`
//! notification for handshake-era connections and for 2026-07-28 listeners.
//! Entries are kept sorted by key, so lists come out in a deterministic order
//! (2026-07-28 asks for one) and cursors stay valid across unrelated changes.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::{Arc, RwLock};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use toolport_protocol::ErrorObject;

use crate::events::ServerEvent;
use crate::prompt::PromptEntry;
use crate::resource::{ResourceEntry, TemplateEntry};
use crate::state::EventBus;
use crate::tool::ToolEntry;

/// Something a registry holds.
pub trait Entry: Send + Sync + 'static {
    /// The unique key: a tool's or prompt's name, a resource's URI, a template.
    fn key(&self) -> &str;
    /// Why the definition is unusable, if it is.
    fn definition_error(&self) -> Option<&str>;
    /// The event announcing a change to this kind of entry.
    fn changed() -> ServerEvent;
}

impl Entry for ToolEntry {
    fn key(&self) -> &str {
        &self.tool.name
    }
    fn definition_error(&self) -> Option<&str> {
        self.error.as_deref()
    }
    fn changed() -> ServerEvent {
        ServerEvent::ToolsChanged
    }
}

impl Entry for PromptEntry {
    fn key(&self) -> &str {
        &self.prompt.name
    }
    fn definition_error(&self) -> Option<&str> {
        self.error.as_deref()
    }
    fn changed() -> ServerEvent {
        ServerEvent::PromptsChanged
    }
}

impl Entry for ResourceEntry {
    fn key(&self) -> &str {
        &self.resource.uri
    }
    fn definition_error(&self) -> Option<&str> {
        None
    }
    fn changed() -> ServerEvent {
        ServerEvent::ResourcesChanged
    }
}

impl Entry for TemplateEntry {
    fn key(&self) -> &str {
        &self.template.uri_template
    }
    fn definition_error(&self) -> Option<&str> {
        self.error.as_deref()
    }
    fn changed() -> ServerEvent {
        ServerEvent::ResourcesChanged
    }
}

/// A definition that cannot be registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct DefinitionError(pub String);

/// One kind of entry, by key.
pub struct Registry<T> {
    entries: RwLock<BTreeMap<String, Arc<T>>>,
    events: Arc<dyn EventBus>,
}

impl<T> fmt::Debug for Registry<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let len = self.entries.read().map(|e| e.len()).unwrap_or_default();
        f.debug_struct("Registry").field("len", &len).finish()
    }
}

impl<T: Entry> Registry<T> {
    pub(crate) fn new(events: Arc<dyn EventBus>) -> Self {
        Registry {
            entries: RwLock::default(),
            events,
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, Arc<T>>> {
        // Every write is a single insert or remove; a panic cannot leave the
        // map half-changed, so a poisoned lock is still good to read.
        self.entries.read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, BTreeMap<String, Arc<T>>> {
        self.entries.write().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds or replaces an entry and announces the change.
    pub fn insert(&self, entry: T) -> Result<(), DefinitionError> {
        if let Some(e) = entry.definition_error() {
            return Err(DefinitionError(e.to_owned()));
        }
        self.write().insert(entry.key().to_owned(), Arc::new(entry));
        self.events.publish(T::changed());
        Ok(())
    }

    /// Removes an entry; announces the change if there was one.
    pub fn remove(&self, key: &str) -> bool {
        let removed = self.write().remove(key).is_some();
        if removed {
            self.events.publish(T::changed());
        }
        removed
    }

    /// The entry with this key.
    pub fn get(&self, key: &str) -> Option<Arc<T>> {
        self.read().get(key).cloned()
    }

    /// Every key, in order.
    pub fn names(&self) -> Vec<String> {
        self.read().keys().cloned().collect()
    }

    /// Every entry, in order.
    pub fn all(&self) -> Vec<Arc<T>> {
        self.read().values().cloned().collect()
    }

    /// How many entries there are.
    pub fn len(&self) -> usize {
        self.read().len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// One page of entries after `cursor`, and the cursor of the next page.
    pub(crate) fn page(
        &self,
        cursor: Option<&str>,
        size: usize,
        keep: impl Fn(&str) -> bool,
    ) -> Result<(Vec<Arc<T>>, Option<String>), ErrorObject> {
        let after = cursor.map(decode_cursor).transpose()?;
        let entries = self.read();
        let iter: Box<dyn Iterator<Item = (&String, &Arc<T>)>> = match &after {
            Some(key) => {
                Box::new(entries.range::<String, _>((std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded)))
            }
            None => Box::new(entries.iter()),
        };
        // Entries the caller may not see are skipped before the page is
        // cut, so every page but the last is full.
        let mut iter = iter.filter(|(key, _)| keep(key));
        let page: Vec<(&String, &Arc<T>)> = iter.by_ref().take(size).collect();
        let next = match (page.last(), iter.next()) {
            (Some((last, _)), Some(_)) => Some(encode_cursor(last)),
            _ => None,
        };
        Ok((page.into_iter().map(|(_, v)| v.clone()).collect(), next))
    }
}

/// Cursors are opaque to clients: a version tag and the last key, base64url.
pub(crate) fn encode_cursor(last_key: &str) -> String {
    URL_SAFE_NO_PAD.encode(format!("1:{last_key}"))
}

pub(crate) fn decode_cursor(cursor: &str) -> Result<String, ErrorObject> {
    URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .and_then(|s| s.strip_prefix("1:").map(str::to_owned))
        .ok_or_else(|| ErrorObject::invalid_params("invalid cursor; use a nextCursor this server returned"))
}
