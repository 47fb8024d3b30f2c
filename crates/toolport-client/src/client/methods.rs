//! The typed methods: tools, resources, prompts, completion, ping, log
//! level, subscriptions.

use super::*;

impl Client {
    async fn typed<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Value,
        options: CallOptions,
    ) -> Result<T, ClientError> {
        let value = self.request(method, params, options).await?;
        serde_json::from_value(value).map_err(|e| ClientError::Protocol(format!("{method} result: {e}")))
    }

    /// Every item of a paginated list, following `nextCursor`.
    async fn list_all<T: DeserializeOwned>(&self, method: &str, field: &str) -> Result<Vec<T>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        let mut seen = BTreeSet::new();
        for _ in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => json!({ "cursor": c }),
                None => json!({}),
            };
            let mut page = self.request(method, params, CallOptions::default()).await?;
            let Some(Value::Array(list)) = page.get_mut(field).map(Value::take) else {
                return Err(ClientError::Protocol(format!(
                    "the {method} result has no {field} array"
                )));
            };
            for item in list {
                match serde_json::from_value::<T>(item) {
                    Ok(item) => items.push(item),
                    Err(e) => tracing::warn!(%method, error = %e, "skipped an entry that does not parse"),
                }
            }
            cursor = page.get("nextCursor").and_then(Value::as_str).map(str::to_owned);
            match &cursor {
                None => return Ok(items),
                Some(c) if !seen.insert(c.clone()) => {
                    return Err(ClientError::Protocol(format!("{method} repeated the cursor {c:?}")));
                }
                Some(_) => {}
            }
        }
        Err(ClientError::Protocol(format!(
            "{method} has more than {MAX_PAGES} pages"
        )))
    }

    /// All the server's tools. Tools with invalid `x-mcp-header` annotations
    /// are left out (2026-07-28 asks clients to reject them), and so are
    /// quarantined ones when the client pins tool definitions.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let all: Vec<Tool> = self.list_all(tools::LIST, "tools").await?;
        let mut notes = HashMap::new();
        let mut kept = Vec::with_capacity(all.len());
        for tool in all {
            match header_params(&tool.input_schema) {
                Ok(header_params) => {
                    let hints = tool.annotations.as_ref();
                    let retry_safe =
                        hints.is_some_and(|a| a.read_only_hint == Some(true) || a.idempotent_hint == Some(true));
                    notes.insert(
                        tool.name.clone(),
                        ToolNote {
                            header_params,
                            retry_safe,
                        },
                    );
                    kept.push(tool);
                }
                Err(why) => tracing::warn!(tool = %tool.name, %why, "left out a tool with an invalid x-mcp-header"),
            }
        }
        *lock(&self.inner.tools) = notes;
        #[cfg(feature = "auth")]
        if let Some(pinning) = &self.inner.pinning {
            return Ok(pinning.review(kept));
        }
        Ok(kept)
    }

    /// Calls a tool. `arguments` is a JSON object (or null for none).
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, ClientError> {
        self.call_tool_with(name, arguments, CallOptions::default()).await
    }

    /// Calls a tool with a timeout or a progress sink.
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Value,
        options: CallOptions,
    ) -> Result<CallToolResult, ClientError> {
        let arguments = match arguments {
            Value::Null => None,
            Value::Object(map) => Some(Value::Object(map)),
            other => {
                return Err(ClientError::InvalidInput(format!(
                    "tool arguments must be a JSON object, not {other}"
                )));
            }
        };
        #[cfg(feature = "auth")]
        if let Some(pinning) = &self.inner.pinning
            && !pinning.callable(name)
        {
            // A tool not listed since the client started is reviewed first.
            self.list_tools().await?;
            if !pinning.callable(name) {
                return Err(ClientError::Quarantined(name.to_owned()));
            }
        }
        let mut params = json!({ "name": name });
        if let Some(arguments) = arguments {
            params["arguments"] = arguments;
        }
        let backoff = self.inner.options.backoff;
        let mut failures = 0;
        loop {
            let result = match self.typed(tools::CALL, params.clone(), options.clone()).await {
                // A 2026-07-28 server wants headers for arguments this client did
                // not know about: learn the tool's definition and send it again.
                Err(ClientError::Remote(e)) if e.code == ErrorCode::HEADER_MISMATCH => {
                    self.list_tools().await?;
                    self.typed(tools::CALL, params.clone(), options.clone()).await
                }
                other => other,
            }?;
            // A failure the server says another try may fix, of a call that
            // is safe to send again: sent again after a pause.
            let Some(retry_after) = retryable_failure(&result) else {
                return Ok(result);
            };
            let safe = options.carries_idempotency_key() || self.retry_safe(tools::CALL, &params_map(&params));
            failures += 1;
            if !safe || failures >= backoff.max_attempts || self.inner.closed.is_cancelled() {
                return Ok(result);
            }
            tracing::debug!(tool = %name, failures, "retrying a retryable tool failure");
            tokio::time::sleep(super::pause_before_retry(&backoff, failures, retry_after)).await;
        }
    }

    /// All the server's resources.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_all(resources::LIST, "resources").await
    }

    /// All the server's resource templates.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, ClientError> {
        self.list_all(resources::TEMPLATES_LIST, "resourceTemplates").await
    }

    /// Reads a resource.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        self.typed(resources::READ, json!({ "uri": uri }), CallOptions::default())
            .await
    }

    /// All the server's prompts.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all(prompts::LIST, "prompts").await
    }

    /// Gets a prompt with its arguments.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: BTreeMap<String, String>,
    ) -> Result<GetPromptResult, ClientError> {
        let mut params = json!({ "name": name });
        if !arguments.is_empty() {
            params["arguments"] = json!(arguments);
        }
        self.typed(prompts::GET, params, CallOptions::default()).await
    }

    /// Asks for completions of an argument.
    pub async fn complete(&self, params: CompleteRequestParams) -> Result<CompleteResult, ClientError> {
        let params = serde_json::to_value(params).map_err(|e| ClientError::InvalidInput(e.to_string()))?;
        self.typed(completion::COMPLETE, params, CallOptions::default()).await
    }

    /// Checks the server answers: `ping` in the handshake era,
    /// `server/discover` in 2026-07-28 (which has no ping).
    pub async fn ping(&self) -> Result<(), ClientError> {
        let method = match self.server().await?.era() {
            Era::Handshake => lifecycle::PING,
            Era::Stateless => lifecycle::DISCOVER,
        };
        self.request(method, json!({}), CallOptions::default()).await.map(drop)
    }

    /// Asks for log messages at `level` and above: `logging/setLevel` in the
    /// handshake era, `_meta` on every request in 2026-07-28.
    pub async fn set_log_level(&self, level: LoggingLevel) -> Result<(), ClientError> {
        *lock(&self.inner.log_level) = Some(level);
        if self.server().await?.era() == Era::Handshake {
            self.request(logging::SET_LEVEL, json!({ "level": level }), CallOptions::default())
                .await?;
        }
        Ok(())
    }

    /// Subscribes to changes of a resource; they arrive as
    /// [`ClientEvent::ResourceUpdated`](crate::ClientEvent::ResourceUpdated) through [`Client::events`].
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        lock(&self.inner.subscriptions).insert(uri.to_owned());
        self.resubscribe(resources::SUBSCRIBE, uri).await
    }

    /// Ends a subscription.
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), ClientError> {
        lock(&self.inner.subscriptions).remove(uri);
        self.resubscribe(resources::UNSUBSCRIBE, uri).await
    }

    async fn resubscribe(&self, method: &str, uri: &str) -> Result<(), ClientError> {
        let link = self.link_with_retries().await?;
        match link.server.era() {
            Era::Handshake => self
                .request(method, json!({ "uri": uri }), CallOptions::default())
                .await
                .map(drop),
            Era::Stateless => {
                // The listen stream carries the subscriptions: open it anew.
                self.inner.want_events.store(true, Ordering::SeqCst);
                self.listen_and_wait(&link).await;
                Ok(())
            }
        }
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Option<Value>) -> Result<(), ClientError> {
        self.link_with_retries().await?.notify(method, params).await
    }
}

/// For an `isError` result marked retryable (`_meta` under
/// `dev.toolport/error`): `Some` with the wait the server asked for, if any.
fn retryable_failure(result: &CallToolResult) -> Option<Option<std::time::Duration>> {
    if result.is_error != Some(true) {
        return None;
    }
    let detail = result.meta.as_ref()?.get(ERROR_META)?;
    if detail.get("retryable").and_then(Value::as_bool) != Some(true) {
        return None;
    }
    Some(
        detail
            .get("retryAfterMs")
            .and_then(Value::as_u64)
            .map(std::time::Duration::from_millis),
    )
}

/// The `_meta` key of Toolport's tool failures (`toolport_server::ERROR_META`).
const ERROR_META: &str = "dev.toolport/error";

fn params_map(params: &Value) -> serde_json::Map<String, Value> {
    params.as_object().cloned().unwrap_or_default()
}
