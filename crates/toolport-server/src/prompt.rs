//! Prompts as plain async functions with a typed argument struct.
//!
//! The struct's fields become the prompt's arguments (their doc comments the
//! descriptions, non-`Option` fields the required ones). Prompt argument values
//! are always strings on the wire.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use toolport_protocol::content::Role;
use toolport_protocol::prompts::{GetPromptResult, Prompt, PromptArgument, PromptMessage};

use crate::completion::Completer;
use crate::context::RequestContext;
use crate::error::ToolError;
use crate::schema::schema_for;
use crate::tool::{BoxFuture, validate_name};

type ErasedPromptFn = Arc<dyn Fn(RequestContext, Value) -> BoxFuture<Result<GetPromptResult, ToolError>> + Send + Sync>;

/// A prompt, ready to register.
#[derive(Clone)]
pub struct PromptEntry {
    pub(crate) prompt: Prompt,
    pub(crate) handler: ErasedPromptFn,
    pub(crate) completers: BTreeMap<String, Completer>,
    pub(crate) error: Option<String>,
}

impl fmt::Debug for PromptEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PromptEntry")
            .field("name", &self.prompt.name)
            .finish_non_exhaustive()
    }
}

/// Starts a prompt definition.
pub fn prompt(name: impl Into<String>) -> PromptBuilder {
    PromptBuilder {
        prompt: Prompt {
            name: name.into(),
            ..Default::default()
        },
    }
}

/// Builds a [`PromptEntry`].
#[derive(Debug, Clone)]
pub struct PromptBuilder {
    prompt: Prompt,
}

impl PromptBuilder {
    /// Display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.prompt.title = Some(title.into());
        self
    }

    /// What the prompt is for.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.prompt.description = Some(description.into());
        self
    }

    /// Sets the handler: `async fn(RequestContext, Args) -> Out`.
    pub fn handler<F, Fut, A, O>(self, handler: F) -> PromptEntry
    where
        F: Fn(RequestContext, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = O> + Send + 'static,
        A: DeserializeOwned + JsonSchema + Send + 'static,
        O: IntoPromptResult,
    {
        let mut prompt = self.prompt;
        let error = validate_name(&prompt.name).err();
        let arguments = arguments_from_schema(&schema_for::<A>());
        prompt.arguments = (!arguments.is_empty()).then_some(arguments);
        let handler = Arc::new(handler);
        PromptEntry {
            prompt,
            handler: Arc::new(move |cx, args| {
                let handler = handler.clone();
                Box::pin(async move {
                    let args: A = serde_json::from_value(args).map_err(|e| {
                        ToolError::Protocol(toolport_protocol::ErrorObject::invalid_params(format!(
                            "prompt arguments: {e}"
                        )))
                    })?;
                    handler(cx, args).await.into_prompt_result()
                })
            }),
            completers: BTreeMap::new(),
            error,
        }
    }
}

impl PromptBuilder {
    /// A prompt whose definition belongs to someone else (a gateway's
    /// upstream): served verbatim, its arguments handed on as JSON.
    pub fn forwarded<F, Fut>(self, definition: Prompt, handler: F) -> PromptEntry
    where
        F: Fn(RequestContext, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<GetPromptResult, ToolError>> + Send + 'static,
    {
        let handler = Arc::new(handler);
        PromptEntry {
            error: validate_name(&definition.name).err(),
            prompt: definition,
            handler: Arc::new(move |cx, args| {
                let handler = handler.clone();
                Box::pin(async move { handler(cx, args).await })
            }),
            completers: BTreeMap::new(),
        }
    }
}

impl PromptEntry {
    /// Completes the argument `name` with `completer`.
    pub fn complete(mut self, name: &str, completer: Completer) -> Self {
        self.completers.insert(name.to_owned(), completer);
        self
    }

    /// The definition `prompts/list` shows.
    pub fn definition(&self) -> &Prompt {
        &self.prompt
    }

    /// The names of the required arguments.
    pub(crate) fn required_arguments(&self) -> impl Iterator<Item = &str> {
        self.prompt
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true))
            .map(|a| a.name.as_str())
    }
}

fn arguments_from_schema(schema: &Map<String, Value>) -> Vec<PromptArgument> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| PromptArgument {
            name: name.clone(),
            title: property.get("title").and_then(Value::as_str).map(str::to_owned),
            description: property.get("description").and_then(Value::as_str).map(str::to_owned),
            required: Some(required.contains(&name.as_str())),
        })
        .collect()
}

/// What a prompt handler may return.
pub trait IntoPromptResult: Send + 'static {
    /// The result.
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError>;
}

impl IntoPromptResult for GetPromptResult {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        Ok(self)
    }
}

impl IntoPromptResult for Vec<PromptMessage> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        Ok(GetPromptResult {
            messages: self,
            ..Default::default()
        })
    }
}

impl IntoPromptResult for String {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        vec![PromptMessage::text(Role::User, self)].into_prompt_result()
    }
}

impl<T: IntoPromptResult, E: Into<ToolError> + Send + 'static> IntoPromptResult for Result<T, E> {
    fn into_prompt_result(self) -> Result<GetPromptResult, ToolError> {
        self.map_err(Into::into)?.into_prompt_result()
    }
}
