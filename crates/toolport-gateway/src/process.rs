//! One stdio upstream process: started in a process group of its own (so the
//! grandchildren `npx` or a shell start die with it), its stderr read line by
//! line into the logs under the upstream's name and kept, bounded, for the
//! error a failed start reports; stopped gracefully (input closed, SIGTERM to
//! the group, SIGKILL to the group).

use std::collections::VecDeque;
use std::io;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustix::process::{Pid, Signal, kill_process_group};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::process::{Child, Command};
use toolport_rpc::framing::DEFAULT_MAX_LINE;
use toolport_rpc::stdio::from_async;
use toolport_rpc::transport::Transport;

use crate::config::UpstreamConfig;

/// Lines of stderr kept per upstream (the newest), and the longest line kept.
const STDERR_LINES: usize = 32;
const STDERR_LINE_BYTES: usize = 2048;

/// The newest lines an upstream wrote to stderr.
#[derive(Debug, Default)]
pub(crate) struct StderrTail {
    lines: Mutex<VecDeque<String>>,
}

impl StderrTail {
    fn push(&self, line: String) {
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        if lines.len() == STDERR_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// The last few lines, joined, for an error message.
    pub(crate) fn last(&self, n: usize) -> String {
        let lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        let skip = lines.len().saturating_sub(n);
        lines.iter().skip(skip).cloned().collect::<Vec<_>>().join(" | ")
    }
}

/// A started upstream process.
#[derive(Debug)]
pub(crate) struct UpstreamProcess {
    child: Child,
    /// The process group: the child's pid, as it leads a group of its own.
    group: Option<Pid>,
}

impl UpstreamProcess {
    /// Starts `config`'s command; its stdin and stdout become the returned
    /// transport, its stderr goes to the logs and to `tail`.
    pub(crate) fn spawn(config: &UpstreamConfig, tail: Arc<StderrTail>) -> io::Result<(UpstreamProcess, Transport)> {
        let program = config.command.as_deref().unwrap_or_default();
        let mut command = Command::new(program);
        command
            .args(&config.args)
            .envs(&config.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // A group of its own: signals reach everything it started.
            .process_group(0)
            .kill_on_drop(true);
        if let Some(dir) = &config.cwd {
            command.current_dir(dir);
        }
        let mut child = command.spawn()?;
        let group = child.id().and_then(|id| Pid::from_raw(id as i32));
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(read_stderr(config.name.clone(), stderr, tail));
        }
        let transport = from_async(BufReader::new(stdout), stdin, DEFAULT_MAX_LINE);
        Ok((UpstreamProcess { child, group }, transport))
    }

    /// The process id.
    pub(crate) fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Waits until the process exits, then kills what is left of its group
    /// (a grandchild holding the pipes would otherwise keep calls hanging).
    pub(crate) async fn exited(&mut self) -> io::Result<ExitStatus> {
        let status = self.child.wait().await;
        self.signal(Signal::KILL);
        status
    }

    /// Sends `signal` to the whole process group; a group already gone is fine.
    pub(crate) fn signal(&self, signal: Signal) {
        if let Some(group) = self.group
            && let Err(e) = kill_process_group(group, signal)
            && e != rustix::io::Errno::SRCH
        {
            tracing::debug!(error = %e, "could not signal the upstream's process group");
        }
    }

    /// Stops the process: its input is already closed (the caller closed the
    /// conversation); after `grace` the group gets SIGTERM, after another
    /// `grace` SIGKILL.
    pub(crate) async fn stop(mut self, grace: Duration) {
        if tokio::time::timeout(grace, self.child.wait()).await.is_err() {
            self.signal(Signal::TERM);
            if tokio::time::timeout(grace, self.child.wait()).await.is_err() {
                self.signal(Signal::KILL);
                let _ = self.child.wait().await;
            }
        }
        self.signal(Signal::KILL);
    }
}

/// Logs an upstream's stderr, one bounded line at a time, labelled with its
/// name; a line longer than [`STDERR_LINE_BYTES`] is cut.
async fn read_stderr(name: String, stderr: impl AsyncRead + Unpin, tail: Arc<StderrTail>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        // Read at most a bounded line; the rest of a longer one is skipped.
        let mut limited = (&mut reader).take(STDERR_LINE_BYTES as u64);
        match limited.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.last() != Some(&b'\n') && line.len() == STDERR_LINE_BYTES {
            // Skip the rest of an overlong line, a bounded piece at a time.
            let mut rest = Vec::new();
            loop {
                rest.clear();
                match (&mut reader)
                    .take(STDERR_LINE_BYTES as u64)
                    .read_until(b'\n', &mut rest)
                    .await
                {
                    Ok(0) | Err(_) => return,
                    Ok(_) if rest.last() == Some(&b'\n') => break,
                    Ok(_) => {}
                }
            }
        }
        let text = String::from_utf8_lossy(&line).trim_end().to_owned();
        if text.is_empty() {
            continue;
        }
        tracing::info!(target: "toolport::upstream", upstream = %name, "stderr: {text}");
        tail.push(text);
    }
}
