//! Reading `text/event-stream` (the WHATWG "server-sent events" format), as
//! Streamable HTTP answers and GET streams use it.
//!
//! Events are bounded: a server that never ends an event cannot make the
//! client buffer without limit.

/// One event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// `id:`, when the event set one (it becomes the stream's last event id).
    pub(crate) id: Option<String>,
    /// `event:`, when set.
    pub(crate) event: Option<String>,
    /// The `data:` lines joined with `\n`; empty for priming events.
    pub(crate) data: String,
    /// `retry:` in milliseconds, when set.
    pub(crate) retry: Option<u64>,
}

impl SseEvent {
    /// Whether this event carries a message (no `event:` or `event: message`,
    /// and some data).
    pub(crate) fn is_message(&self) -> bool {
        !self.data.trim().is_empty() && self.event.as_deref().is_none_or(|e| e == "message")
    }
}

/// Splits a byte stream into events.
#[derive(Debug)]
pub(crate) struct SseDecoder {
    line: Vec<u8>,
    current: SseEvent,
    has_data: bool,
    touched: bool,
    /// The previous chunk ended in `\r`: a `\n` starting the next one belongs to it.
    after_cr: bool,
    max_event: usize,
    size: usize,
}

impl SseDecoder {
    /// A decoder for events of at most `max_event` bytes.
    pub(crate) fn new(max_event: usize) -> Self {
        SseDecoder {
            line: Vec::new(),
            current: SseEvent::default(),
            has_data: false,
            touched: false,
            after_cr: false,
            max_event,
            size: 0,
        }
    }

    /// Feeds a chunk; pushes every event it completes. Fails when an event
    /// grows past the limit.
    pub(crate) fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), String> {
        for &b in chunk {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\n' | b'\r' => {
                    self.after_cr = b == b'\r';
                    self.end_line(out);
                }
                _ => {
                    self.line.push(b);
                    self.size += 1;
                    if self.size > self.max_event {
                        return Err(format!("an event of the stream is over {} bytes", self.max_event));
                    }
                }
            }
        }
        Ok(())
    }

    fn end_line(&mut self, out: &mut Vec<SseEvent>) {
        let line = String::from_utf8_lossy(&std::mem::take(&mut self.line)).into_owned();
        if line.is_empty() {
            if self.touched {
                let mut event = std::mem::take(&mut self.current);
                if self.has_data && event.data.ends_with('\n') {
                    event.data.pop();
                }
                out.push(event);
            }
            self.has_data = false;
            self.touched = false;
            self.size = 0;
            return;
        }
        if line.starts_with(':') {
            return; // a comment (keep-alive)
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        self.touched = true;
        match field {
            "data" => {
                self.current.data.push_str(value);
                self.current.data.push('\n');
                self.has_data = true;
            }
            "id" if !value.contains('\0') => self.current.id = Some(value.to_owned()),
            "event" => self.current.event = Some(value.to_owned()),
            "retry" => self.current.retry = value.parse().ok(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(chunks: &[&str]) -> Vec<SseEvent> {
        let mut d = SseDecoder::new(1024);
        let mut out = Vec::new();
        for c in chunks {
            d.feed(c.as_bytes(), &mut out).unwrap();
        }
        out
    }

    #[test]
    fn events_split_across_chunks_and_line_endings() {
        let events = decode(&[
            "id: 1-0\nretry: 500\ndata: \n\n: keep-alive\n\n",
            "event: message\r\nid: 1-1\r\ndata: {\"a\"",
            ":1}\r\n\r\ndata: x\rdata: y\r\r",
        ]);
        assert_eq!(events.len(), 3);
        assert_eq!(events[0].id.as_deref(), Some("1-0"));
        assert_eq!(events[0].retry, Some(500));
        assert!(!events[0].is_message());
        assert_eq!(events[1].data, "{\"a\":1}");
        assert!(events[1].is_message());
        assert_eq!(events[2].data, "x\ny");
    }

    #[test]
    fn other_event_types_are_not_messages_and_sizes_are_bounded() {
        let events = decode(&["event: endpoint\ndata: /x\n\n"]);
        assert!(!events[0].is_message());
        let mut d = SseDecoder::new(8);
        let mut out = Vec::new();
        assert!(d.feed(b"data: 0123456789", &mut out).is_err());
    }
}
