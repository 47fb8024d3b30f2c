//! `toolport a2a card | send | get | list | cancel URL ...`: any A2A 1.0
//! agent from the command line (`toolport a2a send URL hello`,
//! `toolport a2a get URL TASK`). Answers print as JSON (streamed items one per
//! line); errors say what the agent answered.

use anyhow::{Context, Result, bail};
use clap::{Args, Subcommand, ValueEnum};
use serde_json::Value;
use toolport_a2a::{A2aClient, Binding, ListTasksQuery, Message, Part, SendMessageConfiguration, SendMessageRequest};

/// Where the agent is and how to talk to it.
#[derive(Debug, Args)]
pub struct AgentTarget {
    /// The agent's base URL (where /.well-known/agent-card.json is), for example http://127.0.0.1:8080.
    url: String,
    /// The binding to use when the card offers several.
    #[arg(long, value_enum)]
    binding: Option<BindingArg>,
    /// A bearer token for agents that require one.
    #[arg(long, env = "TOOLPORT_BEARER", hide_env_values = true)]
    bearer: Option<String>,
}

/// A binding, as named on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum BindingArg {
    /// JSON-RPC 2.0.
    Jsonrpc,
    /// HTTP+JSON.
    Rest,
}

/// `toolport a2a ...`.
#[derive(Debug, Subcommand)]
pub enum A2aAction {
    /// Print the agent's card.
    Card(AgentTarget),
    /// Send a message: text, and/or a JSON data part.
    Send {
        /// Where the agent is.
        #[command(flatten)]
        target: AgentTarget,
        /// The text of the message.
        text: Option<String>,
        /// A JSON value sent as a data part, e.g. '{"tool":"echo","arguments":{"message":"hi"}}'.
        #[arg(long)]
        data: Option<String>,
        /// Continue this task (one that asked for input).
        #[arg(long)]
        task_id: Option<String>,
        /// In this conversation.
        #[arg(long)]
        context_id: Option<String>,
        /// Stream the task's updates, one JSON line each.
        #[arg(long)]
        stream: bool,
        /// Answer as soon as the task exists, without waiting for it.
        #[arg(long, conflicts_with = "stream")]
        no_wait: bool,
    },
    /// Print a task.
    Get {
        /// Where the agent is.
        #[command(flatten)]
        target: AgentTarget,
        /// The task id.
        id: String,
        /// At most this many messages of history.
        #[arg(long)]
        history: Option<i32>,
    },
    /// List the caller's tasks, newest first (every page).
    List {
        /// Where the agent is.
        #[command(flatten)]
        target: AgentTarget,
        /// Only this conversation's.
        #[arg(long)]
        context_id: Option<String>,
    },
    /// Cancel a task.
    Cancel {
        /// Where the agent is.
        #[command(flatten)]
        target: AgentTarget,
        /// The task id.
        id: String,
    },
}

impl A2aAction {
    fn target(&self) -> &AgentTarget {
        match self {
            A2aAction::Card(t)
            | A2aAction::Send { target: t, .. }
            | A2aAction::Get { target: t, .. }
            | A2aAction::List { target: t, .. }
            | A2aAction::Cancel { target: t, .. } => t,
        }
    }

    /// Runs the command.
    pub async fn run(self) -> Result<()> {
        let target = self.target();
        if let A2aAction::Card(_) = self {
            let card = A2aClient::card(&target.url).await.context("reading the agent card")?;
            return print(&card);
        }
        let prefer = target.binding.map(|b| match b {
            BindingArg::Jsonrpc => Binding::JsonRpc,
            BindingArg::Rest => Binding::Rest,
        });
        let (mut client, _) = A2aClient::discover(&target.url, prefer)
            .await
            .context("reading the agent card")?;
        if let Some(token) = &target.bearer {
            client = client.bearer(token);
        }
        match self {
            A2aAction::Card(_) => unreachable!("answered above"),
            A2aAction::Send {
                text,
                data,
                task_id,
                context_id,
                stream,
                no_wait,
                ..
            } => {
                let mut parts = Vec::new();
                if let Some(text) = text {
                    parts.push(Part::text(text));
                }
                if let Some(data) = data {
                    let value: Value = serde_json::from_str(&data).context("--data is not JSON")?;
                    parts.push(Part::data(value));
                }
                if parts.is_empty() {
                    bail!("say something: give a text, --data, or both");
                }
                let mut message = Message::user(parts);
                message.task_id = task_id;
                message.context_id = context_id;
                let mut request = SendMessageRequest::new(message);
                request.configuration = Some(SendMessageConfiguration {
                    return_immediately: no_wait,
                    ..SendMessageConfiguration::default()
                });
                if stream {
                    let mut events = client.send_streaming(request).await?;
                    while let Some(item) = events.next().await {
                        println!("{}", serde_json::to_string(&item?)?);
                    }
                    return Ok(());
                }
                print(&client.send(request).await?)
            }
            A2aAction::Get { id, history, .. } => print(&client.get(&id, history).await?),
            A2aAction::List { context_id, .. } => {
                let mut tasks = Vec::new();
                let mut query = ListTasksQuery {
                    context_id,
                    ..ListTasksQuery::default()
                };
                // Bounded: a thousand pages at most.
                for _ in 0..1000 {
                    let page = client.list(&query).await?;
                    tasks.extend(page.tasks);
                    if page.next_page_token.is_empty() {
                        break;
                    }
                    query.page_token = Some(page.next_page_token);
                }
                print(&tasks)
            }
            A2aAction::Cancel { id, .. } => print(&client.cancel(&id).await?),
        }
    }
}

fn print(value: &impl serde::Serialize) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(subcommand)]
        action: A2aAction,
    }

    #[test]
    fn every_command_takes_the_url_first() {
        Cli::command().debug_assert();
        let cli = Cli::try_parse_from(["a2a", "send", "http://127.0.0.1:1", "hello", "--data", "{}"]).unwrap();
        let A2aAction::Send { target, text, data, .. } = cli.action else {
            panic!("send")
        };
        assert_eq!(
            (target.url.as_str(), text.as_deref(), data.as_deref()),
            ("http://127.0.0.1:1", Some("hello"), Some("{}"))
        );
        let cli = Cli::try_parse_from(["a2a", "send", "http://127.0.0.1:1", "--data", "{}"]).unwrap();
        assert!(matches!(cli.action, A2aAction::Send { text: None, .. }));
        let cli = Cli::try_parse_from(["a2a", "get", "http://127.0.0.1:1", "task-1", "--history", "2"]).unwrap();
        assert!(matches!(cli.action, A2aAction::Get { ref id, history: Some(2), .. } if id == "task-1"));
        assert!(Cli::try_parse_from(["a2a", "send", "http://x", "--stream", "--no-wait", "hi"]).is_err());
    }
}
