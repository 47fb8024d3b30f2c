//! The slots of one upstream, by share mode: one for everybody (`shared`),
//! one per principal or per session (bounded by `max_processes`, idle ones
//! stopped after `idle_timeout_seconds`), and the catalog slot the lists are
//! read from when calls go to pooled slots.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use toolport_server::{RequestContext, ToolError};

use crate::config::{Share, UpstreamConfig};
use crate::input::{ActiveCall, Asker};
use crate::metrics;
use crate::slot::{Instance, Slot};

/// The slots of one upstream.
#[derive(Debug)]
pub(crate) struct Pool {
    pub(crate) config: Arc<UpstreamConfig>,
    /// The slot lists are read from: in `shared` mode also the one calls use.
    pub(crate) catalog: Arc<Slot>,
    keyed: Mutex<HashMap<String, Arc<Slot>>>,
    next_request: AtomicU64,
}

/// A call's hold on a slot: counted in flight, its caller reachable for the
/// slot's questions; a one-request slot is stopped when it ends.
#[derive(Debug)]
pub(crate) struct Lease {
    pub(crate) slot: Arc<Slot>,
    pub(crate) instance: Arc<Instance>,
    one_off: bool,
    _active: ActiveCall,
}

impl Drop for Lease {
    fn drop(&mut self) {
        self.slot.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.slot.touch();
        if self.one_off {
            self.slot.stop();
        }
    }
}

impl Pool {
    pub(crate) fn start(config: Arc<UpstreamConfig>) -> Arc<Pool> {
        let pool = Arc::new(Pool {
            catalog: Slot::start(config.clone(), String::new(), None),
            config,
            keyed: Mutex::default(),
            next_request: AtomicU64::new(1),
        });
        if pool.config.share != Share::Shared {
            tokio::spawn(reap_idle(Arc::downgrade(&pool)));
        }
        pool
    }

    fn keyed(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Slot>>> {
        self.keyed.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How many pooled slots are running.
    pub(crate) fn pooled(&self) -> usize {
        self.keyed().len()
    }

    /// The slot for the caller of `cx`, and whether it serves this request only.
    fn slot_for(&self, cx: &RequestContext) -> Result<(Arc<Slot>, bool), ToolError> {
        let (key, one_off) = match self.config.share {
            Share::Shared => return Ok((self.catalog.clone(), false)),
            // With the caller's own token, a session upstream may be bound to
            // the token's client too: one slot per subject and client.
            Share::PerPrincipal if self.config.forward_token => (
                format!(
                    "principal:{}\u{1f}{}",
                    cx.principal().map(|p| p.subject.as_str()).unwrap_or(""),
                    cx.principal().and_then(|p| p.client_id.as_deref()).unwrap_or("")
                ),
                false,
            ),
            Share::PerPrincipal => (
                format!("principal:{}", cx.principal().map(|p| p.subject.as_str()).unwrap_or("")),
                false,
            ),
            Share::PerSession => match cx.session_key() {
                Some(session) => (format!("session:{session}"), false),
                // 2026-07-28 has no sessions: a process for this request alone.
                None => (
                    format!("request:{}", self.next_request.fetch_add(1, Ordering::Relaxed)),
                    true,
                ),
            },
        };
        let mut keyed = self.keyed();
        keyed.retain(|_, slot| !slot.is_stopping());
        if let Some(slot) = keyed.get(&key) {
            return Ok((slot.clone(), one_off));
        }
        if keyed.len() >= self.config.max_processes {
            // Make room by stopping the longest-idle slot with nothing in flight.
            let idle = keyed
                .iter()
                .filter(|(_, s)| s.in_flight.load(Ordering::Relaxed) == 0)
                .max_by_key(|(_, s)| s.idle_for())
                .map(|(k, _)| k.clone());
            match idle {
                Some(k) => {
                    if let Some(slot) = keyed.remove(&k) {
                        slot.stop();
                    }
                }
                None => {
                    return Err(ToolError::Failed(format!(
                        "upstream {}: all {} of its processes are busy with other callers; try again shortly",
                        self.config.name, self.config.max_processes
                    )));
                }
            }
        }
        let slot = Slot::start(self.config.clone(), key.clone(), caller_token(cx));
        keyed.insert(key, slot.clone());
        metrics::pooled(&self.config.name, keyed.len());
        Ok((slot, one_off))
    }

    /// A hold on a live slot for the caller of `cx`: waits for a starting
    /// slot (a new pooled process) up to the call's timeout; a slot that is
    /// down answers at once.
    pub(crate) async fn lease(&self, cx: &RequestContext, asker: Asker) -> Result<Lease, ToolError> {
        if self.config.forward_token && caller_token(cx).is_none() {
            return Err(ToolError::Failed(format!(
                "upstream {} takes the caller's own token (forward_token), and this request came without one",
                self.config.name
            )));
        }
        let (slot, one_off) = self.slot_for(cx)?;
        if self.config.forward_token {
            // The caller's newest token (the slot serves this caller only).
            slot.caller_token.set(caller_token(cx));
        }
        slot.in_flight.fetch_add(1, Ordering::Relaxed);
        let active = slot.input.enter(asker);
        let wait = Duration::from_secs(self.config.timeout_seconds);
        let ready = tokio::select! {
            ready = slot.ready(wait) => ready,
            _ = cx.cancelled() => Err("cancelled".to_owned()),
        };
        match ready {
            Ok(instance) => Ok(Lease {
                slot,
                instance,
                one_off,
                _active: active,
            }),
            Err(why) => {
                slot.in_flight.fetch_sub(1, Ordering::Relaxed);
                if one_off {
                    slot.stop();
                }
                Err(ToolError::Failed(format!("{why}; try again shortly")))
            }
        }
    }

    /// Stops every slot and waits (up to `limit`) until they have stopped.
    pub(crate) async fn stop(&self, limit: Duration) {
        let mut slots: Vec<Arc<Slot>> = self.keyed().drain().map(|(_, s)| s).collect();
        slots.push(self.catalog.clone());
        for slot in &slots {
            slot.stop();
        }
        let all = futures_join(slots.iter().map(|s| s.stopped()));
        let _ = tokio::time::timeout(limit, all).await;
    }
}

/// The token the caller of `cx` came with, when the authentication layer kept it.
fn caller_token(cx: &RequestContext) -> Option<toolport_server::Credential> {
    cx.principal().and_then(|p| p.credential.clone())
}

async fn futures_join<F: std::future::Future<Output = ()>>(futures: impl Iterator<Item = F>) {
    for f in futures {
        f.await;
    }
}

/// Stops pooled slots idle past the timeout; ends with the pool.
async fn reap_idle(pool: std::sync::Weak<Pool>) {
    loop {
        let Some(p) = pool.upgrade() else { return };
        let idle = Duration::from_secs(p.config.idle_timeout_seconds);
        let period = (idle / 4).clamp(Duration::from_millis(100), Duration::from_secs(30));
        {
            let mut keyed = p.keyed();
            keyed.retain(|_, slot| {
                let keep = !slot.is_stopping() && (slot.in_flight.load(Ordering::Relaxed) > 0 || slot.idle_for() < idle);
                if !keep {
                    tracing::info!(target: "toolport::upstream", upstream = %p.config.name, key = %slot.key, "stopping an idle process");
                    slot.stop();
                }
                keep
            });
            metrics::pooled(&p.config.name, keyed.len());
        }
        drop(p);
        tokio::time::sleep(period).await;
    }
}
