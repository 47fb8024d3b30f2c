//! `toolport tools | call | resources | read | prompts | prompt`: talk to any
//! MCP server from the command line, over Streamable HTTP (`--server URL`)
//! or stdio (`-- COMMAND ARGS...`). Tables for people, `--json` for scripts,
//! and every failure says what to do about it.

use std::collections::BTreeMap;
use std::io::{BufRead, IsTerminal, Write};
use std::time::Duration;

use anyhow::{Context, Result, anyhow, bail};
use clap::Subcommand;
use serde_json::{Map, Value};
use toolport_client::handler::{self, BoxFuture};
use toolport_client::{Client, ClientError, ClientHandler, ClientOptions, ServerCommand, StaticToken};
use toolport_protocol::ErrorObject;
use toolport_protocol::capabilities::ClientCapabilities;
use toolport_protocol::elicitation::{ElicitAction, ElicitRequestParams, ElicitResult};

use crate::cli_common::{Target, print_content, print_json, print_resource, print_table, summary};

/// The client subcommands of `toolport`.
#[derive(Debug, Subcommand)]
pub enum ClientCommand {
    /// List the server's tools.
    Tools(Target),
    /// Call a tool.
    Call {
        /// The tool's name.
        name: String,
        /// The arguments, as a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        /// Run the call as a task (status shown on stderr while it runs).
        #[arg(long)]
        task: bool,
        /// With --task: how long the server should keep the task, in ms (2025-11-25).
        #[arg(long, requires = "task")]
        ttl_ms: Option<u64>,
        /// Where the server is.
        #[command(flatten)]
        target: Target,
    },
    /// Work with tasks: list, get, cancel.
    Tasks {
        /// What to do.
        #[command(subcommand)]
        action: crate::task_cli::TaskAction,
    },
    /// List the server's resources and resource templates.
    Resources(Target),
    /// Read a resource.
    Read {
        /// The resource's URI.
        uri: String,
        /// Where the server is.
        #[command(flatten)]
        target: Target,
    },
    /// List the server's prompts.
    Prompts(Target),
    /// Get a prompt.
    Prompt {
        /// The prompt's name.
        name: String,
        /// An argument, as NAME=VALUE (repeat for more).
        #[arg(long = "arg", value_name = "NAME=VALUE")]
        args: Vec<String>,
        /// Where the server is.
        #[command(flatten)]
        target: Target,
    },
}

impl ClientCommand {
    /// Runs the command. On failure it prints what went wrong and what to do
    /// about it, and exits with status 1.
    pub async fn run(self) -> Result<()> {
        let target = match &self {
            ClientCommand::Tasks { action } => Some(action.target()),
            _ => None,
        };
        let outcome = match &self {
            ClientCommand::Tasks { action } => match connect(target.expect("set above")) {
                Err(e) => Err(e),
                Ok(client) => {
                    let outcome = action.execute(&client, action.target().json).await;
                    client.close().await;
                    outcome
                }
            },
            ClientCommand::Tools(t)
            | ClientCommand::Call { target: t, .. }
            | ClientCommand::Resources(t)
            | ClientCommand::Read { target: t, .. }
            | ClientCommand::Prompts(t)
            | ClientCommand::Prompt { target: t, .. } => match connect(t) {
                Err(e) => Err(e),
                Ok(client) => {
                    let outcome = self.execute(&client, t.json).await;
                    client.close().await;
                    outcome
                }
            },
        };
        if let Err(e) = outcome {
            // A plain message for people (no backtrace), and exit status 1.
            match e.downcast::<ClientError>() {
                Ok(e) => eprintln!("error: {e}\n  what to do: {}", e.hint()),
                Err(e) => eprintln!("error: {e:#}"),
            }
            std::process::exit(1);
        }
        Ok(())
    }

    async fn execute(&self, client: &Client, json: bool) -> Result<()> {
        match self {
            ClientCommand::Tools(_) => {
                if !offers(client, Offer::Tools).await? {
                    return nothing_offered(Offer::Tools, json, &serde_json::json!([]));
                }
                let tools = client.list_tools().await?;
                if json {
                    return print_json(&tools);
                }
                let rows = tools
                    .iter()
                    .map(|t| vec![t.name.clone(), summary(t.description.as_deref().or(t.title.as_deref()))])
                    .collect();
                print_table(&["TOOL", "DESCRIPTION"], rows, "no tools");
            }
            ClientCommand::Tasks { .. } => unreachable!("answered in run"),
            ClientCommand::Call {
                name,
                args,
                task,
                ttl_ms,
                ..
            } => {
                require(client, Offer::Tools).await?;
                let arguments: Value = serde_json::from_str(args).map_err(|e| {
                    anyhow!(
                        "--args is not valid JSON ({e}); pass an object, for example --args '{{\"city\": \"Paris\"}}'"
                    )
                })?;
                if !arguments.is_object() {
                    bail!("--args must be a JSON object, for example --args '{{\"city\": \"Paris\"}}'");
                }
                let result = if *task {
                    crate::task_cli::call_as_task(client, name, arguments, *ttl_ms).await?
                } else {
                    client.call_tool(name, arguments).await?
                };
                if json {
                    print_json(&result)?;
                } else {
                    print_content(&result.content);
                    if result.content.is_empty()
                        && let Some(structured) = &result.structured_content
                    {
                        println!("{}", serde_json::to_string_pretty(structured)?);
                    }
                }
                if result.is_error == Some(true) {
                    bail!("the tool {name} reported an error (shown above); check its arguments with `toolport tools`");
                }
            }
            ClientCommand::Resources(_) => {
                if !offers(client, Offer::Resources).await? {
                    let empty = serde_json::json!({"resources": [], "resourceTemplates": []});
                    return nothing_offered(Offer::Resources, json, &empty);
                }
                let resources = client.list_resources().await?;
                let templates = match client.list_resource_templates().await {
                    Ok(t) => t,
                    Err(ClientError::Remote(e)) if e.code == toolport_protocol::ErrorCode::METHOD_NOT_FOUND => {
                        Vec::new()
                    }
                    Err(e) => return Err(e.into()),
                };
                if json {
                    return print_json(&serde_json::json!({"resources": resources, "resourceTemplates": templates}));
                }
                let mut rows: Vec<Vec<String>> = resources
                    .iter()
                    .map(|r| vec![r.uri.clone(), r.name.clone(), r.mime_type.clone().unwrap_or_default()])
                    .collect();
                rows.extend(templates.iter().map(|t| {
                    vec![
                        t.uri_template.clone(),
                        format!("{} (template)", t.name),
                        t.mime_type.clone().unwrap_or_default(),
                    ]
                }));
                print_table(&["URI", "NAME", "MIME TYPE"], rows, "no resources");
            }
            ClientCommand::Read { uri, .. } => {
                require(client, Offer::Resources).await?;
                let result = client.read_resource(uri).await?;
                if json {
                    return print_json(&result);
                }
                for contents in &result.contents {
                    print_resource(contents);
                }
            }
            ClientCommand::Prompts(_) => {
                if !offers(client, Offer::Prompts).await? {
                    return nothing_offered(Offer::Prompts, json, &serde_json::json!([]));
                }
                let prompts = client.list_prompts().await?;
                if json {
                    return print_json(&prompts);
                }
                let rows = prompts
                    .iter()
                    .map(|p| {
                        let args: Vec<String> = p
                            .arguments
                            .iter()
                            .flatten()
                            .map(|a| {
                                if a.required == Some(true) {
                                    a.name.clone()
                                } else {
                                    format!("[{}]", a.name)
                                }
                            })
                            .collect();
                        vec![p.name.clone(), args.join(" "), summary(p.description.as_deref())]
                    })
                    .collect();
                print_table(&["PROMPT", "ARGUMENTS", "DESCRIPTION"], rows, "no prompts");
            }
            ClientCommand::Prompt { name, args, .. } => {
                require(client, Offer::Prompts).await?;
                let mut arguments = BTreeMap::new();
                for arg in args {
                    let (k, v) = arg
                        .split_once('=')
                        .ok_or_else(|| anyhow!("--arg {arg:?} is not NAME=VALUE, for example --arg city=Paris"))?;
                    arguments.insert(k.to_owned(), v.to_owned());
                }
                let result = client.get_prompt(name, arguments).await?;
                if json {
                    return print_json(&result);
                }
                if let Some(description) = &result.description {
                    println!("# {description}");
                }
                for message in &result.messages {
                    let role = serde_json::to_value(message.role)?;
                    print!("{}: ", role.as_str().unwrap_or("?"));
                    print_content(std::slice::from_ref(&message.content));
                }
            }
        }
        Ok(())
    }
}

/// What a server may offer, by the capability it declares for it.
#[derive(Debug, Clone, Copy)]
enum Offer {
    Tools,
    Resources,
    Prompts,
}

impl Offer {
    fn noun(self) -> &'static str {
        match self {
            Offer::Tools => "tools",
            Offer::Resources => "resources",
            Offer::Prompts => "prompts",
        }
    }
}

/// Whether the server declared the capability (`basic/lifecycle`: each side
/// uses only what was negotiated), so nothing is asked of a server that
/// said it has none.
async fn offers(client: &Client, offer: Offer) -> Result<bool> {
    let capabilities = client.server().await?.capabilities;
    Ok(match offer {
        Offer::Tools => capabilities.tools.is_some(),
        Offer::Resources => capabilities.resources.is_some(),
        Offer::Prompts => capabilities.prompts.is_some(),
    })
}

/// Fails, saying so, when the server does not offer `offer`.
async fn require(client: &Client, offer: Offer) -> Result<()> {
    if offers(client, offer).await? {
        return Ok(());
    }
    bail!(
        "the server offers no {} (it did not declare the {} capability); see what it offers with `toolport tools`, `toolport resources` and `toolport prompts`",
        offer.noun(),
        offer.noun()
    )
}

/// The answer of a listing command when the server offers none: an empty
/// list for scripts, a sentence for people; success either way.
fn nothing_offered(offer: Offer, json: bool, empty: &Value) -> Result<()> {
    if json {
        return print_json(empty);
    }
    eprintln!("(the server offers no {})", offer.noun());
    Ok(())
}

fn connect(target: &Target) -> Result<Client> {
    let extra_root_certificates = match &target.ca_file {
        None => Vec::new(),
        Some(path) => std::fs::read(path).with_context(|| format!("reading the CA file {}", path.display()))?,
    };
    let options = ClientOptions {
        extra_root_certificates,
        client_info: toolport_protocol::capabilities::Implementation::new("toolport-cli", env!("CARGO_PKG_VERSION")),
        version: target.protocol,
        request_timeout: Duration::from_secs(target.timeout.max(1)),
        probe_timeout: Duration::from_secs(target.timeout.clamp(1, 10)),
        ..ClientOptions::default()
    };
    let builder = match (&target.server, target.command.split_first()) {
        (Some(_), Some(_)) => bail!("give either --server URL or -- COMMAND, not both"),
        (None, None) => bail!(
            "no server given: use --server http://HOST:PORT/mcp for HTTP, or -- COMMAND ARGS... to run one over stdio"
        ),
        (Some(url), None) => {
            let builder = Client::http(url);
            match (&target.bearer, &target.client_id, &target.client_secret) {
                (Some(token), _, _) => builder.auth(StaticToken::new(token)),
                (None, Some(id), Some(secret)) => builder.auth(client_credentials(url, id, secret)),
                _ => builder,
            }
        }
        (None, Some((program, args))) => Client::stdio(ServerCommand::new(program, args)),
    };
    let builder = builder.options(options);
    let builder = if std::io::stdin().is_terminal() {
        builder.handler(Terminal)
    } else {
        builder
    };
    Ok(builder.build()?)
}

/// The OAuth client-credentials flow for `url`: discovery from the server's
/// 401, then a token from its authorization server for this client.
fn client_credentials(
    url: &str,
    id: &str,
    secret: &str,
) -> toolport_client::oauth::OAuth<toolport_auth::client::OAuthClient> {
    use std::sync::Arc;
    use toolport_auth::client::{Grant, HeadlessUserAgent, OAuthClient, OAuthConfig, PreRegistered};
    use toolport_auth::http::{HttpClient, HyperClient};

    let http: Arc<dyn HttpClient> = Arc::new(HyperClient::default());
    // No person takes part: the redirect URI is never visited.
    let mut config = OAuthConfig::new(url, "toolport", "http://127.0.0.1:1/unused");
    config.grant = Grant::ClientCredentials;
    config.pre_registered = Some(PreRegistered {
        client_id: id.to_owned(),
        client_secret: Some(secret.to_owned()),
        issuer: None,
        auth_method: None,
    });
    let nobody = Arc::new(HeadlessUserAgent::new(http.clone()));
    toolport_client::oauth::OAuth::new(OAuthClient::new(config, http, nobody))
}

/// Answers elicitation by asking the person at the terminal.
#[derive(Debug)]
struct Terminal;

impl ClientHandler for Terminal {
    fn capabilities(&self) -> ClientCapabilities {
        handler::capabilities(true, false, false)
    }

    fn elicit(&self, request: ElicitRequestParams) -> BoxFuture<'_, Result<ElicitResult, ErrorObject>> {
        Box::pin(async move {
            tokio::task::spawn_blocking(move || ask(&request))
                .await
                .map_err(ErrorObject::internal)?
                .map_err(ErrorObject::internal)
        })
    }
}

/// Asks for each field of a form on stderr; an empty line takes the
/// default, `!` declines.
fn ask(request: &ElicitRequestParams) -> std::io::Result<ElicitResult> {
    let mut err = std::io::stderr();
    writeln!(
        err,
        "the server asks: {} (enter accepts the [default], ! declines)",
        request.message
    )?;
    let mut content = Map::new();
    let properties = request
        .requested_schema
        .as_ref()
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let stdin = std::io::stdin();
    for (name, schema) in properties {
        let kind = schema.get("type").and_then(Value::as_str).unwrap_or("string");
        let label = schema.get("title").and_then(Value::as_str).unwrap_or(&name);
        let default = schema.get("default");
        loop {
            match default {
                Some(d) => write!(err, "  {label} ({kind}) [{d}]: ")?,
                None => write!(err, "  {label} ({kind}): ")?,
            }
            err.flush()?;
            let mut line = String::new();
            if stdin.lock().read_line(&mut line)? == 0 || line.trim() == "!" {
                return Ok(ElicitResult {
                    action: ElicitAction::Decline,
                    content: None,
                    meta: None,
                });
            }
            let line = line.trim();
            let value = match (line.is_empty(), default, kind) {
                (true, Some(d), _) => Some(d.clone()),
                (true, None, _) => None,
                (false, _, "integer") => line.parse::<i64>().ok().map(Value::from),
                (false, _, "number") => line.parse::<f64>().ok().map(Value::from),
                (false, _, "boolean") => line.parse::<bool>().ok().map(Value::from),
                (false, _, _) => Some(Value::from(line)),
            };
            match value {
                Some(v) => {
                    content.insert(name.clone(), v);
                    break;
                }
                None if line.is_empty() => break,
                None => writeln!(err, "  that is not a {kind}; try again")?,
            }
        }
    }
    Ok(ElicitResult {
        action: ElicitAction::Accept,
        content: Some(content),
        meta: None,
    })
}
