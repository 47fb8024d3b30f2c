//! Argument completion (`server/utilities/completion`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::meta::Meta;
use crate::result::{ResultType, mcp_result};

/// Method of `completion/complete`.
pub const COMPLETE: &str = "completion/complete";

/// What is being completed: a prompt argument or a resource template variable.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
pub enum CompletionReference {
    /// A prompt, by name.
    #[serde(rename = "ref/prompt")]
    Prompt {
        /// The prompt's name.
        name: String,
        /// Display name.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// A resource template, by its URI template.
    #[serde(rename = "ref/resource")]
    Resource {
        /// The URI template.
        uri: String,
    },
}

/// The argument being completed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompletionArgument {
    /// Its name.
    pub name: String,
    /// What has been typed so far.
    pub value: String,
}

/// Values of arguments already given (2025-06-18 on).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompletionContext {
    /// Argument name to value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<BTreeMap<String, String>>,
}

/// `completion/complete` params.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompleteRequestParams {
    /// What is being completed.
    #[serde(rename = "ref")]
    pub reference: CompletionReference,
    /// The argument.
    pub argument: CompletionArgument,
    /// Other arguments already given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<CompletionContext>,
    /// Request metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The completions.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Completion {
    /// At most 100 values.
    pub values: Vec<String>,
    /// How many there are in all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether there are more than returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_more: Option<bool>,
}

/// `completion/complete` result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CompleteResult {
    /// The completions.
    pub completion: Completion,
    /// `resultType` (2026-07-28).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_type: Option<ResultType>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

mcp_result!(CompleteResult);
