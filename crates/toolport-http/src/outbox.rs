//! The bounded queue between a request's handler and its answer: the
//! notifications (and, in the handshake era, requests) a handler sends before
//! its result.
//!
//! Lighter than a channel: most requests send nothing, and a tokio channel
//! allocates a block of slots up front; this allocates only when used.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::Notify;
use toolport_protocol::jsonrpc::Message;

/// A bounded multi-producer, single-consumer queue of messages.
#[derive(Debug)]
pub(crate) struct Outbox {
    queue: Mutex<VecDeque<Message>>,
    capacity: usize,
    readable: Notify,
    writable: Notify,
    closed: AtomicBool,
}

/// The message was not queued: the reader went away (or, for `try_send`, the queue is full).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct NotSent;

impl Outbox {
    pub(crate) fn new(capacity: usize) -> Self {
        Outbox {
            queue: Mutex::new(VecDeque::new()),
            capacity: capacity.max(1),
            readable: Notify::new(),
            writable: Notify::new(),
            closed: AtomicBool::new(false),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Message>> {
        self.queue.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a message, waiting while the queue is full.
    pub(crate) async fn send(&self, message: Message) -> Result<(), NotSent> {
        let mut message = Some(message);
        loop {
            let writable = self.writable.notified();
            tokio::pin!(writable);
            writable.as_mut().enable();
            match self.try_send_inner(&mut message) {
                Ok(()) => return Ok(()),
                Err(Some(NotSent)) => return Err(NotSent),
                Err(None) => writable.await,
            }
        }
    }

    /// Queues a message if there is room now.
    pub(crate) fn try_send(&self, message: Message) -> Result<(), NotSent> {
        let mut message = Some(message);
        self.try_send_inner(&mut message).map_err(|_| NotSent)
    }

    /// `Err(None)`: full; `Err(Some(NotSent))`: nobody reads any more.
    fn try_send_inner(&self, message: &mut Option<Message>) -> Result<(), Option<NotSent>> {
        if self.closed.load(Ordering::Acquire) {
            return Err(Some(NotSent));
        }
        let mut queue = self.lock();
        if queue.len() >= self.capacity {
            return Err(None);
        }
        queue.extend(message.take());
        drop(queue);
        self.readable.notify_one();
        Ok(())
    }

    /// The next message, waiting until there is one.
    pub(crate) async fn recv(&self) -> Message {
        loop {
            if let Some(message) = self.try_recv() {
                return message;
            }
            // `notify_one` leaves a permit when nobody waits, so a message
            // queued between the check and this wait is not missed.
            self.readable.notified().await;
        }
    }

    /// The next message, if one is queued.
    pub(crate) fn try_recv(&self) -> Option<Message> {
        let message = self.lock().pop_front();
        if message.is_some() {
            self.writable.notify_one();
        }
        message
    }

    /// The reader is gone: senders fail from now on.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.writable.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use toolport_protocol::jsonrpc::Notification;

    use super::*;

    fn note(n: i64) -> Message {
        Message::Notification(Notification::new("n", Some(serde_json::json!(n))))
    }

    #[tokio::test]
    async fn messages_arrive_in_order_and_senders_wait_for_room() {
        let outbox = Arc::new(Outbox::new(2));
        outbox.send(note(1)).await.unwrap();
        outbox.send(note(2)).await.unwrap();
        assert_eq!(outbox.try_send(note(9)), Err(NotSent), "full: not queued");
        let sender = tokio::spawn({
            let outbox = outbox.clone();
            async move { outbox.send(note(3)).await }
        });
        for expected in 1..=3 {
            let Message::Notification(n) = outbox.recv().await else {
                unreachable!()
            };
            assert_eq!(n.params, Some(serde_json::json!(expected)));
        }
        sender.await.unwrap().unwrap();
        outbox.close();
        assert_eq!(outbox.send(note(4)).await, Err(NotSent));
    }

    #[tokio::test]
    async fn closing_wakes_a_waiting_sender() {
        let outbox = Arc::new(Outbox::new(1));
        outbox.send(note(1)).await.unwrap();
        let sender = tokio::spawn({
            let outbox = outbox.clone();
            async move { outbox.send(note(2)).await }
        });
        tokio::task::yield_now().await;
        outbox.close();
        assert_eq!(sender.await.unwrap(), Err(NotSent));
    }
}
