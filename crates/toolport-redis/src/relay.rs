//! The relay between replicas: one pub/sub channel per topic.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use toolport_server::state::{Relay, RelaySubscription, StateError};

use crate::conn::Connection;
use crate::hub::Hub;

#[derive(Debug)]
pub(crate) struct RedisRelay {
    conn: Connection,
    hub: Arc<Hub>,
}

impl RedisRelay {
    pub(crate) fn new(conn: Connection, hub: Arc<Hub>) -> Self {
        RedisRelay { conn, hub }
    }

    fn channel(&self, topic: &str) -> String {
        self.conn.key(&["relay", topic])
    }
}

#[async_trait]
impl Relay for RedisRelay {
    async fn send(&self, topic: &str, message: Bytes) -> Result<usize, StateError> {
        let mut publish = redis::cmd("PUBLISH");
        publish.arg(self.channel(topic)).arg(message.as_ref());
        self.conn.command(publish).await
    }

    async fn subscribe(&self, topic: &str) -> Result<RelaySubscription, StateError> {
        let subscription = self.hub.subscribe(&self.channel(topic)).await?;
        Ok(RelaySubscription::new(subscription.messages, subscription.guard))
    }

    async fn subscribers(&self, topic: &str) -> Result<usize, StateError> {
        let mut numsub = redis::cmd("PUBSUB");
        numsub.arg("NUMSUB").arg(self.channel(topic));
        let counts: Vec<(String, usize)> = self.conn.command(numsub).await?;
        Ok(counts.first().map_or(0, |(_, n)| *n))
    }
}
