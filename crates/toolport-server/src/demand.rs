//! Which resources some client follows right now: counted over handshake-era
//! sessions (`resources/subscribe`, until `unsubscribe` or the session's
//! end) and 2026-07-28 listen streams (their `resourceSubscriptions`, while
//! the stream is open). A server that gets its resources from elsewhere (a
//! gateway, from its upstreams) follows [`Server::subscription_demand`] to
//! subscribe there only while someone here wants the updates.
//!
//! [`Server::subscription_demand`]: crate::Server::subscription_demand

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::mpsc;

/// A resource became wanted or unwanted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DemandChange {
    /// The first follower of `uri` came.
    Wanted(String),
    /// The last follower of `uri` went.
    Unwanted(String),
}

/// The followers of each resource.
#[derive(Debug, Default)]
pub(crate) struct Demand {
    counts: Mutex<HashMap<String, usize>>,
    changes: OnceLock<mpsc::UnboundedSender<DemandChange>>,
}

impl Demand {
    /// Every change from now on, with what is wanted already first; `None`
    /// when someone follows them already.
    pub(crate) fn follow(&self) -> Option<mpsc::UnboundedReceiver<DemandChange>> {
        let (tx, rx) = mpsc::unbounded_channel();
        // The lock orders the set against the changes of the ticket calls.
        let counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        self.changes.set(tx.clone()).ok()?;
        for uri in counts.keys() {
            let _ = tx.send(DemandChange::Wanted(uri.clone()));
        }
        Some(rx)
    }

    /// Counts one follower of `uri` until the ticket is dropped.
    pub(crate) fn ticket(self: &Arc<Self>, uri: &str) -> Ticket {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let count = counts.entry(uri.to_owned()).or_default();
        *count += 1;
        if *count == 1
            && let Some(changes) = self.changes.get()
        {
            let _ = changes.send(DemandChange::Wanted(uri.to_owned()));
        }
        Ticket {
            demand: self.clone(),
            uri: uri.to_owned(),
        }
    }
}

/// One follower of one resource.
#[derive(Debug)]
pub(crate) struct Ticket {
    demand: Arc<Demand>,
    uri: String,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut counts = self.demand.counts.lock().unwrap_or_else(|p| p.into_inner());
        let Some(count) = counts.get_mut(&self.uri) else { return };
        *count -= 1;
        if *count == 0 {
            counts.remove(&self.uri);
            if let Some(changes) = self.demand.changes.get() {
                let _ = changes.send(DemandChange::Unwanted(std::mem::take(&mut self.uri)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_follower_and_the_last_are_announced() {
        let demand = Arc::new(Demand::default());
        let early = demand.ticket("a");
        let mut changes = demand.follow().expect("the first follower");
        assert!(demand.follow().is_none(), "one follower of the changes");
        assert_eq!(changes.try_recv(), Ok(DemandChange::Wanted("a".into())));
        let (b1, b2) = (demand.ticket("b"), demand.ticket("b"));
        assert_eq!(changes.try_recv(), Ok(DemandChange::Wanted("b".into())));
        drop(b1);
        assert!(changes.try_recv().is_err(), "b is still followed");
        drop(b2);
        assert_eq!(changes.try_recv(), Ok(DemandChange::Unwanted("b".into())));
        drop(early);
        assert_eq!(changes.try_recv(), Ok(DemandChange::Unwanted("a".into())));
    }
}
