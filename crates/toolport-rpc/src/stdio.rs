//! stdio, both sides: serving on this process's stdin/stdout, and talking to a
//! child process as a client does (`basic/transports/stdio`).
//!
//! One JSON-RPC message per line, UTF-8, nothing else on stdout; logs go to
//! stderr. Lines are bounded ([`crate::framing`]); an over-long or malformed
//! line is answered with an error and the connection goes on.
//!
//! This process's stdin and stdout, when both are pipes (how MCP clients
//! start servers), are read and written on the runtime itself, non-blocking:
//! a request then wakes one thread, as it does in a blocking server, instead
//! of three (a reader thread, a runtime worker, a writer thread); that was
//! most of the time of a cheap call. stdin is read by the dispatch loop
//! itself ([`Inbox::Inline`]), so a cheap call is one wake-up, one read and
//! one write. Anything else (a file, a terminal, a socket) is served by two
//! plain threads with blocking I/O: tokio's own stdin goes through the
//! blocking pool and hands every line across threads twice, which costs more
//! than the work itself.

use std::io::{self, BufRead, Write};
use std::process::Stdio;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use toolport_protocol::jsonrpc::{self, ErrorResponse, Message, RequestId};
use toolport_protocol::{ErrorCode, ErrorObject};

use crate::framing::{Line, LineDecoder};
use crate::transport::{Inbox, Incoming, InlineReader, Outgoing, Transport, TransportEnd, channel};

/// Serves on this process's stdin and stdout. Must be called within a
/// runtime with I/O enabled.
pub fn own_stdio(max_line: usize) -> Transport {
    #[cfg(unix)]
    if let Some((stdin, stdout)) = own_pipes() {
        let (mut transport, end) = channel();
        transport.incoming = Inbox::Inline(InlineReader::new(BufReader::new(stdin), max_line, decode_line));
        spawn_writer(stdout, end, |e| tracing::warn!(error = %e, "stdout closed"));
        return transport;
    }
    let (transport, end) = channel();
    let TransportEnd {
        incoming,
        outgoing,
        writer_done,
    } = end;
    std::thread::Builder::new()
        .name("toolport-stdin".into())
        .spawn(move || read_blocking(io::stdin().lock(), max_line, &incoming))
        .expect("spawn the stdin reader thread");
    std::thread::Builder::new()
        .name("toolport-stdout".into())
        .spawn(move || {
            if let Err(e) = write_blocking(io::stdout().lock(), outgoing) {
                tracing::warn!(error = %e, "stdout closed");
            }
            let _ = writer_done.send(());
        })
        .expect("spawn the stdout writer thread");
    transport
}

/// Talks to a child process over its stdin and stdout; its stderr is passed
/// through to ours. The child is killed when the returned [`Child`] is dropped.
pub fn spawn_child(mut command: Command, max_line: usize) -> io::Result<(Transport, Child)> {
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    let mut child = command.spawn()?;
    let stdin = child.stdin.take().expect("stdin is piped");
    let stdout = child.stdout.take().expect("stdout is piped");
    Ok((from_async(BufReader::new(stdout), stdin, max_line), child))
}

/// This process's stdin and stdout as non-blocking pipes registered with the
/// runtime; `None` (and both left as they were) unless both are pipes.
#[cfg(unix)]
fn own_pipes() -> Option<(tokio::net::unix::pipe::Receiver, tokio::net::unix::pipe::Sender)> {
    use std::os::fd::AsFd;
    use tokio::net::unix::pipe;

    // Duplicates share the open file, so they see the same bytes; only the
    // pipe ends are switched to non-blocking, and nothing else in this
    // process reads stdin or writes stdout in stdio mode.
    let stdout = io::stdout().as_fd().try_clone_to_owned().ok()?;
    let stdin = io::stdin().as_fd().try_clone_to_owned().ok()?;
    let sender = pipe::Sender::from_owned_fd(stdout).ok()?;
    match pipe::Receiver::from_owned_fd(stdin) {
        Ok(receiver) => Some((receiver, sender)),
        Err(_) => {
            // The blocking writer thread takes stdout over: make it blocking again.
            let _ = sender.into_blocking_fd();
            None
        }
    }
}

/// A transport over any async byte streams (a child's pipes, a socket, an
/// in-memory duplex in tests).
pub fn from_async<R, W>(reader: R, writer: W, max_line: usize) -> Transport
where
    R: AsyncBufRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    spawn_async(reader, writer, max_line, |e| {
        tracing::debug!(error = %e, "peer's input closed");
    })
}

/// Reads and writes in two tasks; `on_write_error` reports why writing stopped.
fn spawn_async<R, W>(reader: R, writer: W, max_line: usize, on_write_error: fn(&io::Error)) -> Transport
where
    R: AsyncBufRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (transport, end) = channel();
    let incoming = end.incoming.clone();
    tokio::spawn(async move { read_async(reader, max_line, &incoming).await });
    spawn_writer(writer, end, on_write_error);
    transport
}

/// Writes what the transport is given in a task of its own; `on_write_error`
/// reports why writing stopped.
fn spawn_writer<W>(writer: W, end: TransportEnd, on_write_error: fn(&io::Error))
where
    W: AsyncWrite + Unpin + Send + 'static,
{
    let TransportEnd {
        outgoing, writer_done, ..
    } = end;
    tokio::spawn(async move {
        if let Err(e) = write_async(writer, outgoing).await {
            on_write_error(&e);
        }
        let _ = writer_done.send(());
    });
}

fn read_blocking(mut input: impl BufRead, max_line: usize, incoming: &mpsc::Sender<Incoming>) {
    let mut decoder = LineDecoder::new(max_line);
    let mut open = true;
    while open {
        let chunk = match input.fill_buf() {
            Ok([]) => break,
            Ok(chunk) => chunk,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::warn!(error = %e, "stdin failed");
                break;
            }
        };
        let len = chunk.len();
        decoder.feed(chunk, |line| {
            open &= incoming.blocking_send(decode_line(line, max_line)).is_ok()
        });
        input.consume(len);
    }
    decoder.finish(|line| {
        let _ = incoming.blocking_send(decode_line(line, max_line));
    });
}

async fn read_async<R: AsyncBufRead + Unpin>(mut input: R, max_line: usize, incoming: &mpsc::Sender<Incoming>) {
    let mut decoder = LineDecoder::new(max_line);
    // Reused for every chunk: one allocation per connection, not per line.
    let mut decoded = Vec::new();
    loop {
        let chunk = match input.fill_buf().await {
            Ok([]) => break,
            Ok(chunk) => chunk,
            Err(e) => {
                tracing::debug!(error = %e, "peer's output failed");
                break;
            }
        };
        let len = chunk.len();
        decoder.feed(chunk, |line| decoded.push(decode_line(line, max_line)));
        input.consume(len);
        for item in decoded.drain(..) {
            if incoming.send(item).await.is_err() {
                return;
            }
        }
    }
    decoder.finish(|line| decoded.push(decode_line(line, max_line)));
    for item in decoded {
        let _ = incoming.send(item).await;
    }
}

fn decode_line(line: Line<'_>, max_line: usize) -> Incoming {
    match line {
        Line::Complete(bytes) => match jsonrpc::decode(bytes) {
            Ok(frame) => Incoming::Frame(frame),
            Err(error) => Incoming::Invalid(error),
        },
        Line::TooLong { size, head } => {
            tracing::warn!(size, limit = max_line, "discarded an over-long message");
            let error = ErrorObject::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "Invalid Request: the message is {size} bytes, over the {max_line}-byte limit for one line; it was discarded"
                ),
            )
            .with_data(serde_json::json!({ "size": size, "limit": max_line }));
            Incoming::Invalid(ErrorResponse::new(sniff_id(&head), error))
        }
    }
}

/// Finds `"id":<number or string>` near the start of a discarded message, so
/// its sender learns which request failed instead of waiting for a timeout.
fn sniff_id(head: &[u8]) -> Option<RequestId> {
    let text = String::from_utf8_lossy(head);
    let after = &text[text.find("\"id\"")? + 4..];
    let value = after.trim_start().strip_prefix(':')?.trim_start();
    let end = if let Some(rest) = value.strip_prefix('"') {
        rest.find('"')? + 2
    } else {
        value
            .find(|c: char| !(c.is_ascii_digit() || c == '-'))
            .unwrap_or(value.len())
    };
    serde_json::from_str::<serde_json::Value>(&value[..end])
        .ok()
        .as_ref()
        .and_then(RequestId::from_value)
}

fn encode_into(buf: &mut Vec<u8>, item: &Outgoing) {
    match item {
        Outgoing::Message(m) => buf.extend_from_slice(&jsonrpc::encode(m)),
        Outgoing::Batch(items) => {
            // Our own messages always serialize.
            serde_json::to_writer(&mut *buf, items).expect("messages serialize");
        }
        Outgoing::Close => return,
    }
    buf.push(b'\n');
}

fn write_blocking(out: impl Write, mut outgoing: mpsc::Receiver<Outgoing>) -> io::Result<()> {
    let mut out = io::BufWriter::new(out);
    let mut buf = Vec::new();
    while let Some(item) = outgoing.blocking_recv() {
        let mut next = Some(item);
        // Write everything already queued, then flush once.
        while let Some(item) = next.take() {
            if matches!(item, Outgoing::Close) {
                return out.flush();
            }
            buf.clear();
            encode_into(&mut buf, &item);
            out.write_all(&buf)?;
            next = outgoing.try_recv().ok();
        }
        out.flush()?;
    }
    out.flush()
}

async fn write_async<W: AsyncWrite + Unpin>(out: W, mut outgoing: mpsc::Receiver<Outgoing>) -> io::Result<()> {
    let mut out = tokio::io::BufWriter::new(out);
    let mut buf = Vec::new();
    while let Some(item) = outgoing.recv().await {
        let mut next = Some(item);
        while let Some(item) = next.take() {
            if matches!(item, Outgoing::Close) {
                out.flush().await?;
                return out.shutdown().await;
            }
            buf.clear();
            encode_into(&mut buf, &item);
            out.write_all(&buf).await?;
            next = outgoing.try_recv().ok();
        }
        out.flush().await?;
    }
    out.flush().await?;
    out.shutdown().await
}

/// Encodes one message as a stdio line (with its newline).
pub fn encode_line(message: &Message) -> Vec<u8> {
    let mut line = jsonrpc::encode(message);
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    fn inline(reader: tokio::io::DuplexStream) -> Inbox {
        Inbox::Inline(InlineReader::new(BufReader::new(reader), 64, decode_line))
    }

    fn id_of(item: Option<Incoming>) -> Option<RequestId> {
        match item.expect("a message") {
            Incoming::Frame(toolport_protocol::jsonrpc::Frame::Single(Message::Request(r))) => Some(r.id),
            Incoming::Invalid(error) => error.id,
            other => panic!("not a request: {other:?}"),
        }
    }

    #[tokio::test]
    async fn the_inline_reader_splits_chunks_into_messages_in_order() {
        let (mut ours, theirs) = tokio::io::duplex(1024);
        let mut inbox = inline(theirs);
        // Two lines in one chunk, one split across two writes, an
        // over-long one, and a last one without its newline before the end.
        ours.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}\n{\"jsonrpc\":")
            .await
            .unwrap();
        assert_eq!(id_of(inbox.recv().await), Some(RequestId::Number(1)));
        assert_eq!(id_of(inbox.recv().await), Some(RequestId::Number(2)));
        ours.write_all(b"\"2.0\",\"id\":3,\"method\":\"c\"}\n").await.unwrap();
        assert_eq!(id_of(inbox.recv().await), Some(RequestId::Number(3)));
        let long = format!("{{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"{}\"}}\n", "x".repeat(100));
        ours.write_all(long.as_bytes()).await.unwrap();
        let Some(Incoming::Invalid(error)) = inbox.recv().await else {
            panic!("an over-long line is refused")
        };
        assert_eq!(error.id, Some(RequestId::Number(4)));
        ours.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"e\"}")
            .await
            .unwrap();
        drop(ours);
        assert_eq!(id_of(inbox.recv().await), Some(RequestId::Number(5)));
        assert!(inbox.recv().await.is_none(), "the end of input ends the inbox");
        assert!(inbox.recv().await.is_none(), "and it stays ended");
    }

    #[tokio::test]
    async fn a_cancelled_receive_loses_nothing() {
        let (mut ours, theirs) = tokio::io::duplex(1024);
        let mut inbox = inline(theirs);
        // Nothing to read yet: the receive is dropped while it waits.
        tokio::select! {
            biased;
            item = inbox.recv() => panic!("nothing was sent, yet got {item:?}"),
            () = std::future::ready(()) => {}
        }
        ours.write_all(
            b"{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"b\"}\n",
        )
        .await
        .unwrap();
        assert_eq!(id_of(inbox.recv().await), Some(RequestId::Number(7)));
        // The second line, decoded with the first, waits for the next receive.
        assert_eq!(id_of(inbox.recv().await), Some(RequestId::Number(8)));
    }

    #[test]
    fn sniffs_ids_from_the_head_of_a_message() {
        assert_eq!(
            sniff_id(br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"#),
            Some(RequestId::Number(42))
        );
        assert_eq!(sniff_id(br#"{"id" : "abc","#), Some(RequestId::from("abc")));
        assert_eq!(sniff_id(br#"{"jsonrpc":"2.0","method":"x""#), None);
        assert_eq!(sniff_id(br#"{"id":{"#), None);
    }
}
