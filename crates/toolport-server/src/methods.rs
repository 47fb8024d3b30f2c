//! The methods: listing and calling tools, reading resources, getting
//! prompts, completing arguments.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use toolport_protocol::completion::{CompleteRequestParams, CompleteResult, Completion, CompletionReference};
use toolport_protocol::mrtr::{InputRequiredResult, InputResponses};
use toolport_protocol::prompts::{GetPromptRequestParams, ListPromptsResult};
use toolport_protocol::resources::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceRequestParams, ReadResourceResult,
};
use toolport_protocol::result::ResultType;
use toolport_protocol::tools::{CallToolRequestParams, ListToolsResult, PaginatedRequestParams};
use toolport_protocol::{ErrorCode, ErrorObject, ProtocolVersion};

use crate::admission::TargetKind;
use crate::audit::trace_id;
use crate::completion::MAX_COMPLETIONS;
use crate::context::{ContextInner, RequestContext};
use crate::dispatch::{Scope, parse};
use crate::error::{ResourceError, ToolError, error_result};
use crate::extension::{ExtensionResult, MethodHandler};
use crate::input::{StateBinding, StatePayload};
use crate::policy::ToolCall;
use crate::resource::ResourceRequest;
use crate::server::Server;
use crate::tasks::AsTask;

/// What MRTR brought with a retried request.
struct Continuation<'a> {
    /// What a sealed state would be bound to; 2026-07-28 only (the handshake
    /// era has no MRTR). Hashing the arguments waits until a state is opened
    /// or sealed: most calls do neither, so it borrows rather than copies.
    binding: Option<LazyBinding<'a>>,
    responses: BTreeMap<String, Value>,
    state: Option<Value>,
}

struct LazyBinding<'a> {
    method: &'a str,
    target: &'a str,
    arguments: Option<&'a Value>,
    principal: Option<&'a str>,
    digest: std::sync::OnceLock<StateBinding>,
}

impl LazyBinding<'_> {
    fn get(&self) -> &StateBinding {
        self.digest
            .get_or_init(|| StateBinding::new(self.method, self.target, self.arguments, self.principal))
    }
}

/// How a handler run ended, before it is shaped for the wire.
enum Ended<T> {
    Done(T),
    Failed(ToolError),
}

impl Server {
    pub(crate) fn list_tools(&self, scope: &Scope, params: Map<String, Value>) -> Result<Box<RawValue>, ErrorObject> {
        let p: PaginatedRequestParams = parse(params)?;
        let (page, next_cursor) = self.inner.tools.page(
            p.cursor.as_deref(),
            self.inner.options.page_size,
            visible(scope, TargetKind::Tool),
        )?;
        let structured = scope.version.has_structured_output();
        let tools = page
            .iter()
            .map(|entry| {
                let mut tool = entry.tool.clone();
                if !structured {
                    tool.output_schema = None;
                }
                // Task support means something only where tasks exist.
                if self.inner.tasks.is_none() || scope.version < ProtocolVersion::V2025_11_25 {
                    tool.execution = None;
                }
                tool
            })
            .collect();
        self.finish(
            ListToolsResult {
                tools,
                next_cursor,
                ..Default::default()
            },
            scope,
        )
    }

    pub(crate) async fn call_tool(
        &self,
        scope: &Scope,
        params: Map<String, Value>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let p = call_params(params)?;
        let entry = self
            .inner
            .tools
            .get(&p.name)
            .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown tool: {}", p.name)))?;
        let arguments = Value::Object(p.arguments.unwrap_or_default());
        let as_task = self.task_request(scope, &entry, p.task.as_ref())?;
        let continuation = self.continuation(scope, &p.name, Some(&arguments), p.input_responses, p.request_state)?;
        let cx = self.context(scope, &continuation);
        let span = tracing::Span::current();
        span.record("tool", p.name.as_str());
        if let Some(trace) = trace_id(&scope.meta) {
            span.record("trace_id", trace.as_str());
        }
        let call = ToolCall {
            tool: &entry,
            name: &p.name,
            arguments: &arguments,
            principal: scope.call.principal.as_ref(),
            session: scope.call.session_id.as_deref(),
            request_id: &scope.id,
            meta: &scope.meta,
            cancel: &scope.call.cancel,
            started: scope.started,
            waited: false,
        };
        let outcome = match as_task {
            Some(request) => match self.call_as_task(scope, &entry, &arguments, cx.clone(), request).await {
                AsTask::Answered(answer) => return answer,
                AsTask::Ended(outcome) => outcome,
            },
            None => {
                self.inner
                    .policies
                    .run(call, Box::pin(entry.call(cx.clone(), &arguments)))
                    .await
            }
        };
        let ended = match outcome {
            Ok(result) => Ended::Done(result),
            Err(error) => Ended::Failed(error),
        };
        let mut result = match ended {
            Ended::Done(result) => result,
            Ended::Failed(ToolError::Failed(message)) => error_result(message, "failed", false, None),
            Ended::Failed(ToolError::InvalidArguments(message)) => {
                error_result(message, "invalid_arguments", false, None)
            }
            Ended::Failed(ToolError::Coded(failure)) => failure.into_result(),
            Ended::Failed(ToolError::MissingCapability(required)) if !scope.stateless() => error_result(
                format!(
                    "This tool needs a client capability this client did not declare: {}",
                    json!(required)
                ),
                "missing_capability",
                false,
                None,
            ),
            Ended::Failed(error) => return self.fail(scope, error, &continuation, &cx),
        };
        if !scope.version.has_structured_output() {
            result.structured_content = None;
        }
        self.finish(result, scope)
    }

    pub(crate) fn list_resources(
        &self,
        scope: &Scope,
        params: Map<String, Value>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let p: PaginatedRequestParams = parse(params)?;
        let (page, next_cursor) = self.inner.resources.page(
            p.cursor.as_deref(),
            self.inner.options.page_size,
            visible(scope, TargetKind::Resource),
        )?;
        let resources = page.iter().map(|e| e.resource.clone()).collect();
        self.finish(
            ListResourcesResult {
                resources,
                next_cursor,
                ..Default::default()
            },
            scope,
        )
    }

    pub(crate) fn list_templates(
        &self,
        scope: &Scope,
        params: Map<String, Value>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let p: PaginatedRequestParams = parse(params)?;
        let (page, next_cursor) = self.inner.templates.page(
            p.cursor.as_deref(),
            self.inner.options.page_size,
            visible(scope, TargetKind::Resource),
        )?;
        let resource_templates = page.iter().map(|e| e.template.clone()).collect();
        self.finish(
            ListResourceTemplatesResult {
                resource_templates,
                next_cursor,
                ..Default::default()
            },
            scope,
        )
    }

    pub(crate) async fn read_resource(
        &self,
        scope: &Scope,
        params: Map<String, Value>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let p: ReadResourceRequestParams = parse(params)?;
        let (handler, variables, cache) = if let Some(entry) = self.inner.resources.get(&p.uri) {
            (entry.handler.clone(), BTreeMap::new(), entry.cache)
        } else {
            self.inner
                .templates
                .all()
                .into_iter()
                .find_map(|t| t.matcher.matches(&p.uri).map(|vars| (t.handler.clone(), vars, t.cache)))
                .ok_or_else(|| resource_not_found(scope.version, &p.uri))?
        };
        let continuation = self.continuation(scope, &p.uri, None, p.input_responses, p.request_state)?;
        let cx = self.context(scope, &continuation);
        let request = ResourceRequest {
            uri: p.uri.clone(),
            variables,
        };
        let ended = self
            .run(scope, async {
                handler(cx.clone(), request).await.map_err(|e| match e {
                    ResourceError::Tool(t) => t,
                    ResourceError::NotFound(uri) => ToolError::Protocol(resource_not_found(scope.version, &uri)),
                    ResourceError::Failed(m) => ToolError::Failed(m),
                })
            })
            .await;
        match ended {
            Ended::Done(contents) => {
                // The entry's own hints win over the server's; `finish` only
                // fills what is still unset, and only for 2026-07-28.
                let (ttl_ms, cache_scope) = match cache {
                    Some(hints) if scope.stateless() => (Some(hints.ttl_ms), Some(hints.scope)),
                    _ => (None, None),
                };
                self.finish(
                    ReadResourceResult {
                        contents,
                        ttl_ms,
                        cache_scope,
                        ..Default::default()
                    },
                    scope,
                )
            }
            Ended::Failed(error) => self.fail(scope, error, &continuation, &cx),
        }
    }

    pub(crate) fn list_prompts(&self, scope: &Scope, params: Map<String, Value>) -> Result<Box<RawValue>, ErrorObject> {
        let p: PaginatedRequestParams = parse(params)?;
        let (page, next_cursor) = self.inner.prompts.page(
            p.cursor.as_deref(),
            self.inner.options.page_size,
            visible(scope, TargetKind::Prompt),
        )?;
        let prompts = page.iter().map(|e| e.prompt.clone()).collect();
        self.finish(
            ListPromptsResult {
                prompts,
                next_cursor,
                ..Default::default()
            },
            scope,
        )
    }

    pub(crate) async fn get_prompt(
        &self,
        scope: &Scope,
        params: Map<String, Value>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let p: GetPromptRequestParams = parse(params)?;
        let entry = self
            .inner
            .prompts
            .get(&p.name)
            .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown prompt: {}", p.name)))?;
        let arguments = p.arguments.unwrap_or_default();
        let missing: Vec<&str> = entry
            .required_arguments()
            .filter(|a| !arguments.contains_key(*a))
            .collect();
        if !missing.is_empty() {
            return Err(ErrorObject::invalid_params(format!(
                "prompt {} is missing required arguments: {}",
                p.name,
                missing.join(", ")
            )));
        }
        let arguments = serde_json::to_value(arguments).map_err(ErrorObject::internal)?;
        let continuation = self.continuation(scope, &p.name, Some(&arguments), p.input_responses, p.request_state)?;
        let cx = self.context(scope, &continuation);
        match self.run(scope, (entry.handler)(cx.clone(), arguments.clone())).await {
            Ended::Done(result) => self.finish(result, scope),
            Ended::Failed(error) => self.fail(scope, error, &continuation, &cx),
        }
    }

    pub(crate) fn complete(&self, scope: &Scope, params: Map<String, Value>) -> Result<Box<RawValue>, ErrorObject> {
        let p: CompleteRequestParams = parse(params)?;
        let context = p.context.and_then(|c| c.arguments).unwrap_or_default();
        let completer = match &p.reference {
            CompletionReference::Prompt { name, .. } => self
                .inner
                .prompts
                .get(name)
                .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown prompt: {name}")))?
                .completers
                .get(&p.argument.name)
                .cloned(),
            CompletionReference::Resource { uri } => self
                .inner
                .templates
                .get(uri)
                .ok_or_else(|| ErrorObject::invalid_params(format!("Unknown resource template: {uri}")))?
                .completers
                .get(&p.argument.name)
                .cloned(),
        };
        let mut values = completer.map(|c| c(&p.argument.value, &context)).unwrap_or_default();
        let total = values.len();
        values.truncate(MAX_COMPLETIONS);
        let completion = Completion {
            has_more: Some(total > values.len()),
            total: Some(total as u64),
            values,
        };
        self.finish(
            CompleteResult {
                completion,
                ..Default::default()
            },
            scope,
        )
    }

    /// Opens the `requestState` and gathers `inputResponses` of a 2026-07-28
    /// retry. Handshake-era requests carry neither.
    fn continuation<'a>(
        &self,
        scope: &'a Scope,
        target: &'a str,
        arguments: Option<&'a Value>,
        input_responses: Option<InputResponses>,
        request_state: Option<String>,
    ) -> Result<Continuation<'a>, ErrorObject> {
        let mut continuation = Continuation {
            binding: None,
            responses: BTreeMap::new(),
            state: None,
        };
        if !scope.stateless() {
            return Ok(continuation);
        }
        let binding = continuation.binding.insert(LazyBinding {
            method: &scope.method,
            target,
            arguments,
            principal: scope.call.principal.as_ref().map(|p| p.subject.as_str()),
            digest: std::sync::OnceLock::new(),
        });
        if let Some(sealed) = request_state {
            let StatePayload { responses, state } = self
                .inner
                .sealer
                .open(&sealed, binding.get())
                .map_err(|e| ErrorObject::invalid_params(e.to_string()))?;
            continuation.responses = responses;
            continuation.state = state;
        }
        continuation.responses.extend(input_responses.unwrap_or_default());
        Ok(continuation)
    }

    fn context(&self, scope: &Scope, continuation: &Continuation<'_>) -> RequestContext {
        RequestContext::new(ContextInner {
            id: scope.id.clone(),
            version: scope.version,
            client_capabilities: scope.client_capabilities.clone(),
            client_info: scope.client_info.clone(),
            principal: scope.call.principal.clone(),
            cancel: scope.call.cancel.clone(),
            progress_token: scope.progress_token.clone(),
            log_level: scope.log_level,
            channel: scope.call.channel.clone(),
            responses: continuation.responses.clone(),
            state: continuation.state.clone(),
            meta: scope.meta.clone(),
            task: None,
        })
    }

    /// An extension method: its handler gets the context a tool gets (no
    /// MRTR continuation) and runs until it answers or is cancelled.
    pub(crate) async fn call_extension(
        &self,
        handler: Arc<dyn MethodHandler>,
        scope: &Scope,
        params: Map<String, Value>,
    ) -> Result<Box<RawValue>, ErrorObject> {
        let continuation = Continuation {
            binding: None,
            responses: BTreeMap::new(),
            state: None,
        };
        let cx = self.context(scope, &continuation);
        let work = handler.call(cx, params);
        tokio::select! {
            outcome = work => match outcome? {
                Value::Object(fields) => self.finish(ExtensionResult::from(fields), scope),
                _ => Err(ErrorObject::internal(format!("the extension method {} answered something other than an object", scope.method))),
            },
            _ = scope.call.cancel.cancelled() => Err(ErrorObject::new(ErrorCode::REQUEST_TIMEOUT, "Request cancelled")),
        }
    }

    /// Runs a handler until it ends or the request is cancelled; dropping the
    /// handler's future at cancellation stops its work at its next await.
    async fn run<T>(&self, scope: &Scope, work: impl Future<Output = Result<T, ToolError>>) -> Ended<T> {
        tokio::select! {
            outcome = work => match outcome {
                Ok(value) => Ended::Done(value),
                Err(error) => Ended::Failed(error),
            },
            _ = scope.call.cancel.cancelled() => Ended::Failed(ToolError::Cancelled),
        }
    }

    /// Shapes a failure that is not a tool's own `isError` result.
    fn fail(
        &self,
        scope: &Scope,
        error: ToolError,
        continuation: &Continuation<'_>,
        cx: &RequestContext,
    ) -> Result<Box<RawValue>, ErrorObject> {
        match error {
            ToolError::InputRequired(required) if continuation.binding.is_some() => {
                let binding = continuation.binding.as_ref().expect("checked");
                // Seal every answer gathered so far, so the next run sees them all.
                let body = StatePayload {
                    responses: cx.responses().clone(),
                    state: required.state,
                };
                let sealed = self.inner.sealer.seal(binding.get(), body);
                let result = InputRequiredResult {
                    input_requests: (!required.requests.is_empty()).then_some(required.requests),
                    request_state: Some(sealed),
                    result_type: Some(ResultType::InputRequired),
                    meta: None,
                };
                self.finish(result, scope)
            }
            ToolError::InputRequired(_) => Err(ErrorObject::internal(
                "the handler asked for input in a way only protocol version 2026-07-28 supports",
            )),
            ToolError::MissingCapability(required) => Err(crate::error::ToolError::missing_capability_error(&required)),
            ToolError::Cancelled => Err(ErrorObject::new(ErrorCode::REQUEST_TIMEOUT, "Request cancelled")),
            ToolError::Protocol(error) => Err(error),
            ToolError::Failed(message) | ToolError::InvalidArguments(message) => Err(ErrorObject::internal(message)),
            ToolError::Coded(failure) => Err(ErrorObject::internal(failure.message).with_data(json!({
                "code": failure.code,
                "retryable": failure.retryable,
            }))),
        }
    }
}

/// Which entries of a list the caller may see: all of them unless an
/// authorizer decides.
fn visible(scope: &Scope, kind: TargetKind) -> impl Fn(&str) -> bool + '_ {
    let decide = scope.visibility.as_ref().map(|v| v.authorizer.visible(&v.principal));
    move |key| decide.as_ref().is_none_or(|may_see| may_see((kind, key)))
}

/// `tools/call` params. Almost every call sends a name and its arguments
/// and nothing else: those are taken out of the map as they are; anything
/// else (MRTR fields, a malformed field) goes through serde and its errors.
fn call_params(mut params: Map<String, Value>) -> Result<CallToolRequestParams, ErrorObject> {
    if params.keys().any(|k| k != "name" && k != "arguments") {
        return parse(params);
    }
    let plain = |name, arguments| CallToolRequestParams {
        name,
        arguments,
        input_responses: None,
        request_state: None,
        task: None,
        meta: None,
    };
    match (params.remove("name"), params.remove("arguments")) {
        (Some(Value::String(name)), None) => Ok(plain(name, None)),
        (Some(Value::String(name)), Some(Value::Object(arguments))) => Ok(plain(name, Some(arguments))),
        // A field of the wrong type: put it back for serde to explain.
        (name, arguments) => {
            params.extend(name.map(|v| ("name".to_owned(), v)));
            params.extend(arguments.map(|v| ("arguments".to_owned(), v)));
            parse(params)
        }
    }
}

/// "Resource not found": -32002 in the handshake era, -32602 from 2026-07-28 on.
fn resource_not_found(version: ProtocolVersion, uri: &str) -> ErrorObject {
    let code = if version >= ProtocolVersion::V2026_07_28 {
        ErrorCode::INVALID_PARAMS
    } else {
        ErrorCode::RESOURCE_NOT_FOUND_LEGACY
    };
    ErrorObject::new(code, format!("Resource not found: {uri}")).with_data(json!({ "uri": uri }))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn plain_call_params_read_as_serde_reads_them() {
        let cases = [
            json!({"name": "echo", "arguments": {"message": "hi", "n": [1, 2]}}),
            json!({"name": "echo"}),
            json!({"name": "echo", "arguments": {}}),
            json!({"name": "echo", "requestState": "sealed"}),
            json!({"name": "echo", "arguments": {"a": 1}, "task": {"ttl": 5}}),
            json!({"name": 5, "arguments": {}}),
            json!({"name": "echo", "arguments": [1]}),
            json!({"arguments": {}}),
            json!({}),
        ];
        for case in cases {
            let Value::Object(map) = case.clone() else {
                unreachable!()
            };
            let by_serde = parse::<CallToolRequestParams>(map.clone());
            let fast = call_params(map);
            match (fast, by_serde) {
                (Ok(fast), Ok(by_serde)) => assert_eq!(fast, by_serde, "{case}"),
                (Err(fast), Err(by_serde)) => assert_eq!(fast.message, by_serde.message, "{case}"),
                (fast, by_serde) => panic!("{case}: {fast:?} against {by_serde:?}"),
            }
        }
    }
}
