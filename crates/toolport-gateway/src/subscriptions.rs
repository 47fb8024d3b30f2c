//! Resource subscriptions across the hop: while some client of the gateway
//! follows a resource (the server's subscription demand), the upstream that
//! offers it is subscribed to it, on the connection the lists come from;
//! its `notifications/resources/updated` come back through `follow` in
//! `gateway.rs` and go to the sessions and listen streams that follow the
//! resource. After a restart (a new connection) the subscriptions are made
//! again; when the last follower goes, the upstream is unsubscribed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};

use toolport_server::uri_template::UriTemplate;

use crate::forward::Forwarder;
use crate::slot::Instance;

/// What is wanted here and what each upstream was subscribed to.
#[derive(Debug, Default)]
pub(crate) struct Subscriptions {
    wanted: Mutex<BTreeSet<String>>,
    /// By upstream: the connection (generation) and what it is subscribed to.
    made: Mutex<BTreeMap<String, (u64, BTreeSet<String>)>>,
    /// One reconciliation at a time, so two never race on one upstream.
    syncing: tokio::sync::Mutex<()>,
}

impl Subscriptions {
    /// A follower came (`true`) or the last one went.
    pub(crate) fn want(&self, uri: &str, wanted: bool) {
        let mut set = self.wanted.lock().unwrap_or_else(|p| p.into_inner());
        if wanted {
            set.insert(uri.to_owned());
        } else {
            set.remove(uri);
        }
    }

    /// Makes `fw`'s upstream, on `instance`, subscribed to exactly the wanted
    /// resources it offers (`offers` says which URIs those are).
    pub(crate) async fn sync(&self, fw: &Arc<Forwarder>, instance: &Instance, offers: impl Fn(&str) -> bool) {
        let _one = self.syncing.lock().await;
        let name = fw.pool.config.name.clone();
        let can = instance
            .server
            .capabilities
            .resources
            .as_ref()
            .is_some_and(|r| r.subscribe == Some(true));
        let desired: BTreeSet<String> = if can {
            let wanted = self.wanted.lock().unwrap_or_else(|p| p.into_inner());
            wanted.iter().filter(|u| offers(u)).cloned().collect()
        } else {
            BTreeSet::new()
        };
        let current = {
            let made = self.made.lock().unwrap_or_else(|p| p.into_inner());
            match made.get(&name) {
                // A new connection has none of the old one's subscriptions.
                Some((generation, set)) if *generation == instance.generation => set.clone(),
                _ => BTreeSet::new(),
            }
        };
        let mut now = current.clone();
        for uri in desired.difference(&current) {
            match instance.client.subscribe_resource(uri).await {
                Ok(()) => {
                    now.insert(uri.clone());
                    tracing::debug!(target: "toolport::upstream", upstream = %name, %uri, "subscribed");
                }
                Err(e) => {
                    tracing::warn!(target: "toolport::upstream", upstream = %name, %uri, "could not subscribe: {e}")
                }
            }
        }
        for uri in current.difference(&desired) {
            if let Err(e) = instance.client.unsubscribe_resource(uri).await {
                tracing::debug!(target: "toolport::upstream", upstream = %name, %uri, "could not unsubscribe: {e}");
            }
            now.remove(uri);
        }
        self.made
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name, (instance.generation, now));
    }
}

/// Whether `uri` is one of `resources` or matches one of `templates`.
pub(crate) fn offered(uri: &str, resources: &BTreeSet<String>, templates: &BTreeSet<String>) -> bool {
    resources.contains(uri)
        || templates
            .iter()
            .any(|t| UriTemplate::parse(t).is_ok_and(|t| t.matches(uri).is_some()))
}
