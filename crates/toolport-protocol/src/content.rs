//! Content blocks carried by tool results, prompt messages and sampling.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::meta::Meta;
use crate::resources::Resource;

// Defined where they belong, and still named here, where they were first found.
pub use crate::annotations::{Annotations, Role};
pub use crate::resources::ResourceContents;

/// A block of content in a tool result or a prompt message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum ContentBlock {
    /// Text.
    #[serde(rename = "text")]
    Text(TextContent),
    /// A base64 image.
    #[serde(rename = "image")]
    Image(ImageContent),
    /// Base64 audio (2025-03-26 on).
    #[serde(rename = "audio")]
    Audio(ImageContent),
    /// A link to a resource (2025-06-18 on).
    #[serde(rename = "resource_link")]
    ResourceLink(Resource),
    /// A resource's contents inline.
    #[serde(rename = "resource")]
    Resource(EmbeddedResource),
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text(TextContent {
            text: text.into(),
            annotations: None,
            meta: None,
        })
    }
    /// An image block from base64 data.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Image(ImageContent::new(data, mime_type))
    }
    /// An audio block from base64 data.
    pub fn audio(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ContentBlock::Audio(ImageContent::new(data, mime_type))
    }
    /// The text, when this is a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            ContentBlock::Text(t) => Some(&t.text),
            _ => None,
        }
    }
}

/// Text content.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextContent {
    /// The text.
    pub text: String,
    /// Hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Image or audio content: base64 data and its MIME type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    /// Base64 data.
    pub data: String,
    /// For example `image/png`.
    pub mime_type: String,
    /// Hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ImageContent {
    /// Data and MIME type.
    pub fn new(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        ImageContent {
            data: data.into(),
            mime_type: mime_type.into(),
            annotations: None,
            meta: None,
        }
    }
}

/// A resource embedded in a result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EmbeddedResource {
    /// The contents.
    pub resource: ResourceContents,
    /// Hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Annotations>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Content of a sampling message: the content blocks plus tool use and results
/// (sampling with tools, 2025-11-25 on).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum SamplingContent {
    /// Text.
    #[serde(rename = "text")]
    Text(TextContent),
    /// An image.
    #[serde(rename = "image")]
    Image(ImageContent),
    /// Audio.
    #[serde(rename = "audio")]
    Audio(ImageContent),
    /// The model asks to use a tool.
    #[serde(rename = "tool_use")]
    ToolUse(ToolUseContent),
    /// The result of a tool use.
    #[serde(rename = "tool_result")]
    ToolResult(ToolResultContent),
}

/// A tool use requested by the model during sampling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolUseContent {
    /// Identifies this use.
    pub id: String,
    /// The tool.
    pub name: String,
    /// Its arguments.
    pub input: Map<String, Value>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of a tool use, handed back to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The `id` of the tool use.
    pub tool_use_id: String,
    /// Its content.
    pub content: Vec<ContentBlock>,
    /// Structured output.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the tool failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// One item or several: sampling message content may be either.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany<T> {
    /// A single item.
    One(T),
    /// A list.
    Many(Vec<T>),
}
