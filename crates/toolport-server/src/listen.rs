//! `subscriptions/listen` (2026-07-28): a long-lived request whose answer
//! stream carries the notifications the client opted into, each tagged with
//! the listen request's id. The first message is the acknowledgement.

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use toolport_protocol::ErrorObject;
use toolport_protocol::jsonrpc::Notification;
use toolport_protocol::meta::{Meta, keys};
use toolport_protocol::result::EmptyResult;
use toolport_protocol::subscriptions::{self, SubscriptionFilter, SubscriptionsListenRequestParams};

use crate::dispatch::{Scope, parse};
use crate::events::ServerEvent;
use crate::server::Server;
use crate::tasks::TaskFollow;
use toolport_protocol::tasks;

fn wanted(filter: &SubscriptionFilter, event: &ServerEvent) -> bool {
    match event {
        ServerEvent::ToolsChanged => filter.tools_list_changed == Some(true),
        ServerEvent::PromptsChanged => filter.prompts_list_changed == Some(true),
        ServerEvent::ResourcesChanged => filter.resources_list_changed == Some(true),
        ServerEvent::ResourceUpdated(uri) => filter.resource_subscriptions.iter().flatten().any(|u| u == uri),
    }
}

/// The next changes of the followed tasks; never, without any.
async fn follow(tasks: &mut Option<TaskFollow>) -> Vec<Value> {
    match tasks {
        Some(tasks) => tasks.next().await,
        None => std::future::pending().await,
    }
}

impl Server {
    pub(crate) async fn listen(&self, scope: &Scope, params: Map<String, Value>) -> Result<Box<RawValue>, ErrorObject> {
        let p: SubscriptionsListenRequestParams = parse(params)?;
        let mut filter = p.notifications;
        let mut tasks = self
            .follow_tasks(scope, filter.task_ids.as_deref().unwrap_or_default())
            .await?;
        if filter.task_ids.is_some() {
            filter.task_ids = Some(tasks.as_ref().map(|t| t.accepted()).unwrap_or_default());
        }
        let subscription_id = serde_json::to_value(&scope.id).map_err(ErrorObject::internal)?;
        let tag = Meta::from_iter([(keys::SUBSCRIPTION_ID.to_owned(), subscription_id)]);
        // Subscribe before acknowledging, so nothing that happens after the
        // acknowledgement can be missed.
        let mut events = self.events();
        let ack = json!({ "notifications": filter, "_meta": tag });
        let channel = &scope.call.channel;
        if channel
            .notify(Notification::new(subscriptions::ACKNOWLEDGED, Some(ack)))
            .await
            .is_err()
        {
            return Err(ErrorObject::internal("the listener went away"));
        }
        loop {
            let batch = tokio::select! {
                batch = events.next() => batch,
                changed = follow(&mut tasks) => {
                    for params in changed {
                        let mut params = params;
                        params["_meta"] = Value::Object(tag.clone());
                        if channel.notify(Notification::new(tasks::NOTIFICATION, Some(params))).await.is_err() {
                            return Err(ErrorObject::internal("the listener went away"));
                        }
                    }
                    continue;
                }
                _ = scope.call.cancel.cancelled() => break,
                _ = self.inner.shutdown.cancelled() => break,
            };
            let Some(batch) = batch else { break };
            for event in batch.iter().filter(|e| wanted(&filter, e)) {
                let mut note = event.notification();
                let mut params = note.params.take().unwrap_or_else(|| json!({}));
                params["_meta"] = Value::Object(tag.clone());
                note.params = Some(params);
                if channel.notify(note).await.is_err() {
                    return Err(ErrorObject::internal("the listener went away"));
                }
            }
        }
        self.finish(
            EmptyResult {
                result_type: None,
                meta: Some(tag),
            },
            scope,
        )
    }
}
