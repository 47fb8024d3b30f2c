//! Tools as plain async functions.
//!
//! A tool is an `async fn` taking its argument struct (and, if it wants, the
//! [`RequestContext`]) and returning anything [`IntoToolOutput`]. The argument
//! struct derives `Deserialize` and `schemars::JsonSchema`; its schema becomes
//! the tool's `inputSchema`, and arguments are checked against it before the
//! function runs.
//!
//! ```
//! use schemars::JsonSchema;
//! use serde::Deserialize;
//! use toolport_server::{tool, Server};
//!
//! #[derive(Deserialize, JsonSchema)]
//! struct EchoArgs {
//!     /// What to say back.
//!     message: String,
//! }
//!
//! async fn echo(args: EchoArgs) -> String {
//!     args.message
//! }
//!
//! let server = Server::builder("demo", "1.0.0")
//!     .tool(tool("echo").description("Says the message back").handler(echo))
//!     .build()
//!     .unwrap();
//! assert_eq!(server.tools().names(), ["echo"]);
//! ```

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use toolport_protocol::capabilities::Icon;
use toolport_protocol::content::ContentBlock;
use toolport_protocol::tools::{CallToolResult, Tool, ToolAnnotations};

use toolport_protocol::tasks::TaskSupport;

use crate::context::RequestContext;
use crate::error::ToolError;
use crate::schema::{ArgumentValidator, HeaderParam, header_params, schema_for};

/// A boxed, sendable future.
pub type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// A handler reads its arguments before its future starts, so the call keeps
/// them (for MRTR's state binding, idempotency, the audit) without a copy.
type ErasedToolFn = Arc<dyn Fn(RequestContext, &Value) -> BoxFuture<Result<CallToolResult, ToolError>> + Send + Sync>;

/// A tool ready to register: its definition, its compiled argument validator
/// and its handler.
#[derive(Clone)]
pub struct ToolEntry {
    pub(crate) tool: Tool,
    pub(crate) validator: Option<Arc<ArgumentValidator>>,
    /// The compiled `outputSchema`, when the tool declares one.
    pub(crate) output_validator: Option<Arc<ArgumentValidator>>,
    pub(crate) header_params: Arc<[HeaderParam]>,
    /// The tool's metric handles, registered on first use and kept, so a call
    /// does not build labels or look them up.
    pub(crate) metrics: Arc<std::sync::OnceLock<ToolMetrics>>,
    pub(crate) handler: ErasedToolFn,
    pub(crate) error: Option<String>,
    /// How the tool runs as a task (see [`ToolBuilder::task_support`]).
    pub(crate) tasks: TaskOptions,
}

/// A tool's task settings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct TaskOptions {
    pub(crate) support: TaskSupport,
    /// Run again by another process when the one running it died.
    pub(crate) resumable: bool,
    /// Questions asked before the task exists go through MRTR; the task is
    /// created at [`RequestContext::start_task`] or when the handler ends.
    pub(crate) input_before_task: bool,
}

impl fmt::Debug for ToolEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolEntry")
            .field("name", &self.tool.name)
            .finish_non_exhaustive()
    }
}

impl ToolEntry {
    /// The definition `tools/list` shows.
    pub fn definition(&self) -> &Tool {
        &self.tool
    }

    /// Whether (and how) the tool runs as a task.
    pub fn task_support(&self) -> TaskSupport {
        self.tasks.support
    }

    /// Marks the tool as one that runs as a task: `Optional` lets the client
    /// choose (2025-11-25) or lets the server make every call from a client
    /// that declared the tasks extension a task (2026-07-28); `Required`
    /// refuses plain calls. The handler is the same; progress and input
    /// requests work inside a task. Needs a server built with
    /// [`ServerBuilder::tasks`](crate::ServerBuilder::tasks); without one the
    /// tool runs as a plain tool.
    pub fn with_task_support(mut self, support: TaskSupport) -> Self {
        self.tasks.support = support;
        self.tool.execution = support
            .allows_task()
            .then(|| serde_json::json!({ "taskSupport": support }));
        self
    }

    /// Lets another process run the task again from its arguments when the
    /// process running it died; otherwise such a task ends `failed`.
    pub fn resumable(mut self) -> Self {
        self.tasks.resumable = true;
        self
    }

    /// The handler asks its questions before the task exists (2026-07-28:
    /// through `InputRequiredResult` and the client's retries, as a plain
    /// call would); the task is created when it calls
    /// [`RequestContext::start_task`], or when it ends.
    pub fn input_before_task(mut self) -> Self {
        self.tasks.input_before_task = true;
        self
    }

    pub(crate) fn metrics(&self) -> &ToolMetrics {
        self.metrics.get_or_init(|| ToolMetrics::new(&self.tool.name))
    }

    /// The arguments mirrored into `Mcp-Param-*` HTTP headers.
    pub fn header_params(&self) -> &[HeaderParam] {
        &self.header_params
    }

    /// Runs the tool: validates the arguments, calls the handler, and checks
    /// a successful result against the tool's `outputSchema`. A handler that
    /// panics is an internal error (-32603, its message only in the log);
    /// every caller of a tool, a task's runner included, gets that.
    pub(crate) async fn call(&self, cx: RequestContext, arguments: &Value) -> Result<CallToolResult, ToolError> {
        if let Some(validator) = &self.validator {
            validator.check(arguments, "arguments").map_err(|problems| {
                ToolError::InvalidArguments(format!("Invalid arguments for tool {}: {problems}", self.tool.name))
            })?;
        }
        let result = toolport_rpc::panic::contain("tool", async { (self.handler)(cx, arguments).await })
            .await
            .map_err(|panicked| ToolError::Protocol(panicked.error()))??;
        self.check_output(result)
    }

    /// A tool that declares an `outputSchema` must answer with structured
    /// content that fits it (`server/tools#output-schema`); one that does
    /// not has a bug, and its caller gets an `isError` result saying so
    /// rather than data its schema promised would not be there.
    fn check_output(&self, result: CallToolResult) -> Result<CallToolResult, ToolError> {
        let Some(validator) = &self.output_validator else {
            return Ok(result);
        };
        if result.is_error == Some(true) {
            return Ok(result);
        }
        let problems = match &result.structured_content {
            None => "it has no structuredContent".to_owned(),
            Some(structured) => match validator.check(structured, "structuredContent") {
                Ok(()) => return Ok(result),
                Err(problems) => problems,
            },
        };
        tracing::warn!(tool = %self.tool.name, %problems, "a tool's result does not match its outputSchema");
        Err(ToolError::Failed(format!(
            "The tool {} produced a result that does not match its outputSchema, so it is not returned: {problems}",
            self.tool.name
        )))
    }
}

/// The metrics of one tool: calls by outcome, and their duration.
#[derive(Debug)]
pub(crate) struct ToolMetrics {
    ok: metrics::Counter,
    tool_error: metrics::Counter,
    error: metrics::Counter,
    other: metrics::Counter,
    duration: metrics::Histogram,
}

impl ToolMetrics {
    fn new(name: &str) -> Self {
        let calls = |outcome: &'static str| metrics::counter!("toolport_tool_calls_total", "tool" => name.to_owned(), "outcome" => outcome);
        ToolMetrics {
            ok: calls("ok"),
            tool_error: calls("tool_error"),
            error: calls("error"),
            other: calls("other"),
            duration: metrics::histogram!("toolport_tool_call_duration_seconds", "tool" => name.to_owned()),
        }
    }

    pub(crate) fn record(&self, outcome: &str, elapsed: std::time::Duration) {
        match outcome {
            "ok" => &self.ok,
            "tool_error" => &self.tool_error,
            "error" => &self.error,
            _ => &self.other,
        }
        .increment(1);
        self.duration.record(elapsed.as_secs_f64());
    }
}

/// Starts a tool definition.
pub fn tool(name: impl Into<String>) -> ToolBuilder {
    ToolBuilder {
        tool: Tool::new(name, Map::new()),
    }
}

/// Builds a [`ToolEntry`]: name, description and hints, then a handler.
#[derive(Debug, Clone)]
pub struct ToolBuilder {
    tool: Tool,
}

impl ToolBuilder {
    /// Display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.tool.title = Some(title.into());
        self
    }

    /// What the tool does, for the model.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.tool.description = Some(description.into());
        self
    }

    /// Behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.tool.annotations = Some(annotations);
        self
    }

    /// Marks the tool read-only (changes nothing).
    pub fn read_only(mut self) -> Self {
        self.tool
            .annotations
            .get_or_insert_with(Default::default)
            .read_only_hint = Some(true);
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.tool.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Runs the tool as a task (see [`ToolEntry::with_task_support`]); the
    /// one call a tool author makes to opt in.
    pub fn task_support(self, support: TaskSupport) -> TaskToolBuilder {
        TaskToolBuilder {
            builder: self,
            options: TaskOptions {
                support,
                ..Default::default()
            },
        }
    }

    /// Sets the handler: `async fn(Args) -> Out` or `async fn(RequestContext, Args) -> Out`.
    pub fn handler<H, M>(self, handler: H) -> ToolEntry
    where
        H: ToolHandler<M>,
    {
        let mut tool = self.tool;
        tool.input_schema = H::input_schema();
        tool.output_schema = H::output_schema();
        ToolEntry::assemble(tool, handler.into_erased())
    }

    /// A tool from an existing definition (for example one a gateway learned
    /// from upstream) and a handler on raw JSON arguments. The input schema is
    /// still enforced before the handler runs.
    pub fn raw<F, Fut>(self, definition: Tool, handler: F) -> ToolEntry
    where
        F: Fn(RequestContext, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        ToolEntry::assemble(
            definition,
            Arc::new(move |cx, args: &Value| {
                let handler = handler.clone();
                let args = args.clone();
                Box::pin(async move { handler(cx, args).await })
            }),
        )
    }
}

/// A [`ToolBuilder`] whose tool runs as a task, from
/// [`ToolBuilder::task_support`].
#[derive(Debug, Clone)]
pub struct TaskToolBuilder {
    builder: ToolBuilder,
    options: TaskOptions,
}

impl TaskToolBuilder {
    /// See [`ToolEntry::resumable`].
    pub fn resumable(mut self) -> Self {
        self.options.resumable = true;
        self
    }

    /// See [`ToolEntry::input_before_task`].
    pub fn input_before_task(mut self) -> Self {
        self.options.input_before_task = true;
        self
    }

    /// Sets the handler, as [`ToolBuilder::handler`].
    pub fn handler<H, M>(self, handler: H) -> ToolEntry
    where
        H: ToolHandler<M>,
    {
        let TaskToolBuilder { builder, options } = self;
        options.apply(builder.handler(handler))
    }

    /// A tool from a definition and a raw handler, as [`ToolBuilder::raw`].
    pub fn raw<F, Fut>(self, definition: Tool, handler: F) -> ToolEntry
    where
        F: Fn(RequestContext, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<CallToolResult, ToolError>> + Send + 'static,
    {
        let TaskToolBuilder { builder, options } = self;
        options.apply(builder.raw(definition, handler))
    }
}

impl TaskOptions {
    fn apply(self, entry: ToolEntry) -> ToolEntry {
        let mut entry = entry.with_task_support(self.support);
        entry.tasks = self;
        entry
    }
}

impl ToolEntry {
    /// Checks a definition once, when it is made: its name, its input schema
    /// (an object schema that compiles) and its `x-mcp-header` annotations.
    fn assemble(tool: Tool, handler: ErasedToolFn) -> ToolEntry {
        let name = tool.name.clone();
        let mut error = validate_name(&name).err();
        if tool.input_schema.get("type").and_then(Value::as_str) != Some("object") {
            error.get_or_insert_with(|| {
                format!("tool {name:?}: inputSchema must have type \"object\" (arguments are a struct)")
            });
        }
        let validator = ArgumentValidator::new(&tool.input_schema)
            .map_err(|e| error.get_or_insert_with(|| format!("tool {name:?}: {e}")).clone())
            .ok()
            .map(Arc::new);
        let output_validator = tool.output_schema.as_ref().and_then(|schema| {
            ArgumentValidator::new(schema)
                .map_err(|e| {
                    error
                        .get_or_insert_with(|| format!("tool {name:?}: outputSchema: {e}"))
                        .clone()
                })
                .ok()
                .map(Arc::new)
        });
        let header_params = header_params(&tool.input_schema)
            .map_err(|e| error.get_or_insert_with(|| format!("tool {name:?}: {e}")).clone())
            .unwrap_or_default();
        ToolEntry {
            tool,
            validator,
            output_validator,
            header_params: header_params.into(),
            metrics: Arc::default(),
            handler,
            error,
            tasks: TaskOptions::default(),
        }
    }
}

/// Tool names: 1–128 characters of `[A-Za-z0-9_.-]` (SEP-986, 2025-11-25).
pub(crate) fn validate_name(name: &str) -> Result<(), String> {
    let ok = (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "tool name {name:?} must be 1-128 characters of A-Z, a-z, 0-9, '_', '-' and '.'"
        ))
    }
}

/// A function that can serve as a tool. `M` tells the two shapes apart; you
/// never name it.
pub trait ToolHandler<M>: Send + Sync + 'static {
    /// The `inputSchema`, from the argument type.
    fn input_schema() -> Map<String, Value>;
    /// The `outputSchema`, from the return type.
    fn output_schema() -> Option<Map<String, Value>>;
    /// Type-erases the handler.
    #[doc(hidden)]
    fn into_erased(self) -> ErasedToolFn;
}

/// Marker for `async fn(Args)`.
#[derive(Debug)]
pub struct ArgsOnly;
/// Marker for `async fn(RequestContext, Args)`.
#[derive(Debug)]
pub struct WithContext;

fn parse_args<A: DeserializeOwned>(arguments: &Value) -> Result<A, ToolError> {
    A::deserialize(arguments).map_err(|e| ToolError::InvalidArguments(format!("Invalid arguments: {e}")))
}

impl<F, Fut, A, O> ToolHandler<(ArgsOnly, A)> for F
where
    F: Fn(A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = O> + Send + 'static,
    A: DeserializeOwned + JsonSchema + Send + 'static,
    O: IntoToolOutput,
{
    fn input_schema() -> Map<String, Value> {
        schema_for::<A>()
    }
    fn output_schema() -> Option<Map<String, Value>> {
        O::output_schema()
    }
    fn into_erased(self) -> ErasedToolFn {
        let f = Arc::new(self);
        Arc::new(move |_cx, args: &Value| {
            let f = f.clone();
            let args = parse_args(args);
            Box::pin(async move { f(args?).await.into_tool_output() })
        })
    }
}

impl<F, Fut, A, O> ToolHandler<(WithContext, A)> for F
where
    F: Fn(RequestContext, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = O> + Send + 'static,
    A: DeserializeOwned + JsonSchema + Send + 'static,
    O: IntoToolOutput,
{
    fn input_schema() -> Map<String, Value> {
        schema_for::<A>()
    }
    fn output_schema() -> Option<Map<String, Value>> {
        O::output_schema()
    }
    fn into_erased(self) -> ErasedToolFn {
        let f = Arc::new(self);
        Arc::new(move |cx, args: &Value| {
            let f = f.clone();
            let args = parse_args(args);
            Box::pin(async move { f(cx, args?).await.into_tool_output() })
        })
    }
}

/// The argument type of a tool that takes none.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize, JsonSchema)]
pub struct NoArgs {}

/// What a tool may return.
pub trait IntoToolOutput: Send + 'static {
    /// The `outputSchema` this output implies, if any.
    fn output_schema() -> Option<Map<String, Value>> {
        None
    }
    /// The result.
    fn into_tool_output(self) -> Result<CallToolResult, ToolError>;
}

impl IntoToolOutput for CallToolResult {
    fn into_tool_output(self) -> Result<CallToolResult, ToolError> {
        Ok(self)
    }
}

impl IntoToolOutput for String {
    fn into_tool_output(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolOutput for &'static str {
    fn into_tool_output(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::text(self))
    }
}

impl IntoToolOutput for ContentBlock {
    fn into_tool_output(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(vec![self]))
    }
}

impl IntoToolOutput for Vec<ContentBlock> {
    fn into_tool_output(self) -> Result<CallToolResult, ToolError> {
        Ok(CallToolResult::success(self))
    }
}

impl<T: IntoToolOutput, E: Into<ToolError> + Send + 'static> IntoToolOutput for Result<T, E> {
    fn output_schema() -> Option<Map<String, Value>> {
        T::output_schema()
    }
    fn into_tool_output(self) -> Result<CallToolResult, ToolError> {
        self.map_err(Into::into)?.into_tool_output()
    }
}

/// Structured output: `T` becomes `structuredContent`, its schema the tool's
/// `outputSchema`, and its JSON text a text block for clients that predate
/// structured output.
#[derive(Debug, Clone)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema + Send + 'static> IntoToolOutput for Json<T> {
    fn output_schema() -> Option<Map<String, Value>> {
        Some(schema_for::<T>())
    }
    fn into_tool_output(self) -> Result<CallToolResult, ToolError> {
        let value = serde_json::to_value(&self.0).map_err(ToolError::from)?;
        let mut result = CallToolResult::text(value.to_string());
        result.structured_content = Some(value);
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_follow_sep_986() {
        for ok in ["a", "get_weather", "db.query-v2", &"x".repeat(128)] {
            assert!(validate_name(ok).is_ok(), "{ok}");
        }
        for bad in ["", "has space", "slash/name", "ünïcode", &"x".repeat(129)] {
            assert!(validate_name(bad).is_err(), "{bad}");
        }
    }
}
