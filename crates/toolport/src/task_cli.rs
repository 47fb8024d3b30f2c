//! `toolport call NAME --task` and `toolport tasks list | get | cancel`:
//! tasks from the command line, in either protocol revision (2026-07-28
//! has no `tasks/list`; `get` and `cancel` work in both).

use anyhow::Result;
use clap::Subcommand;
use serde_json::{Value, json};
use toolport_client::{CallOptions, Client, TaskStart, TaskState};
use toolport_protocol::tools::CallToolResult;

use crate::cli_common::{Target, print_content, print_json, print_table};

/// `toolport tasks ...`.
#[derive(Debug, Subcommand)]
pub enum TaskAction {
    /// List this caller's tasks, newest first (2025-11-25 servers).
    List(Target),
    /// Show one task: its status, and its result or error once it ended.
    Get {
        /// The task id.
        id: String,
        /// Where the server is.
        #[command(flatten)]
        target: Target,
    },
    /// Cancel a task.
    Cancel {
        /// The task id.
        id: String,
        /// Where the server is.
        #[command(flatten)]
        target: Target,
    },
}

impl TaskAction {
    /// Where the server is.
    pub(crate) fn target(&self) -> &Target {
        match self {
            TaskAction::List(t) | TaskAction::Get { target: t, .. } | TaskAction::Cancel { target: t, .. } => t,
        }
    }

    pub(crate) async fn execute(&self, client: &Client, json: bool) -> Result<()> {
        match self {
            TaskAction::List(_) => {
                let mut all = Vec::new();
                let mut cursor = None;
                // Bounded: a thousand pages at most.
                for _ in 0..1000 {
                    let (page, next) = client.list_tasks(cursor.as_deref()).await?;
                    all.extend(page);
                    match next {
                        Some(next) => cursor = Some(next),
                        None => break,
                    }
                }
                if json {
                    return print_json(&all.iter().map(shown).collect::<Vec<_>>());
                }
                let rows = all
                    .iter()
                    .map(|t| {
                        vec![
                            t.task_id.clone(),
                            t.status.clone(),
                            t.created_at.clone(),
                            t.status_message.clone().unwrap_or_default(),
                        ]
                    })
                    .collect();
                print_table(&["TASK", "STATUS", "CREATED", "MESSAGE"], rows, "no tasks");
            }
            TaskAction::Get { id, .. } => {
                let mut task = client.get_task(id).await?;
                // 2025-11-25 keeps the outcome behind tasks/result, which
                // answers at once for a task that ended.
                if task.is_terminal() && task.status != "cancelled" && task.result.is_none() && task.error.is_none() {
                    match client.task_result(id, None).await {
                        Ok(result) => task.result = Some(result),
                        Err(toolport_client::ClientError::Remote(error)) => task.error = Some(error),
                        Err(e) => return Err(e.into()),
                    }
                }
                if json {
                    return print_json(&shown(&task));
                }
                println!("{}  {}", task.task_id, task.status);
                if let Some(message) = &task.status_message {
                    println!("  {message}");
                }
                if let Some(result) = &task.result {
                    print_content(&result.content);
                }
                if let Some(error) = &task.error {
                    println!("  error {}: {}", error.code.0, error.message);
                }
            }
            TaskAction::Cancel { id, .. } => {
                client.cancel_task(id).await?;
                if !json {
                    println!("cancel of {id} sent");
                }
            }
        }
        Ok(())
    }
}

/// A task as JSON, for `--json`.
fn shown(task: &TaskState) -> Value {
    json!({
        "taskId": task.task_id,
        "status": task.status,
        "statusMessage": task.status_message,
        "createdAt": task.created_at,
        "lastUpdatedAt": task.last_updated_at,
        "ttlMs": task.ttl_ms,
        "pollIntervalMs": task.poll_interval_ms,
        "result": task.result,
        "error": task.error,
    })
}

/// `toolport call NAME --task`: starts the task, shows its status on
/// stderr while it runs, and returns the tool's result.
pub(crate) async fn call_as_task(
    client: &Client,
    name: &str,
    arguments: Value,
    ttl_ms: Option<u64>,
) -> Result<CallToolResult> {
    let task = match client
        .call_tool_as_task(name, arguments, ttl_ms, CallOptions::default())
        .await?
    {
        TaskStart::Done(result) => return Ok(result),
        TaskStart::Task(task) => task,
    };
    eprintln!("task {} {}", task.task_id, task.status);
    let watcher = {
        let (client, id) = (client.clone(), task.task_id.clone());
        let mut last = (task.status.clone(), task.status_message.clone());
        let poll = std::time::Duration::from_millis(task.poll_interval_ms.unwrap_or(1000).clamp(50, 10_000));
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(poll).await;
                let Ok(now) = client.get_task(&id).await else { continue };
                let shown = (now.status.clone(), now.status_message.clone());
                if shown != last {
                    eprintln!(
                        "task {id} {}{}",
                        now.status,
                        now.status_message
                            .as_deref()
                            .map(|m| format!(": {m}"))
                            .unwrap_or_default()
                    );
                    last = shown;
                }
                if now.is_terminal() {
                    return;
                }
            }
        })
    };
    let result = client.task_result(&task.task_id, None).await;
    watcher.abort();
    Ok(result?)
}
