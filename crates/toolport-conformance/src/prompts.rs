//! The fixture's prompts.

use schemars::JsonSchema;
use serde::Deserialize;
use toolport_protocol::content::{ContentBlock, EmbeddedResource, ResourceContents, Role};
use toolport_protocol::prompts::{GetPromptResult, PromptMessage};
use toolport_server::completion::from_list;
use toolport_server::{NoArgs, PromptEntry, RequestContext, ToolError, prompt};

use crate::answers::{ask_for, entered};
use crate::data::TEST_IMAGE_PNG_BASE64;
use crate::names::*;

/// Every prompt of the fixture.
pub(crate) fn all() -> Vec<PromptEntry> {
    vec![
        simple(),
        with_arguments(),
        with_embedded_resource(),
        with_image(),
        input_required(),
    ]
}

fn simple() -> PromptEntry {
    prompt(TEST_SIMPLE_PROMPT)
        .title("Simple Test Prompt")
        .description("A simple prompt without arguments")
        .handler(|_cx: RequestContext, _: NoArgs| async {
            vec![PromptMessage::text(Role::User, "This is a simple prompt for testing.")]
        })
}

#[derive(Deserialize, JsonSchema)]
struct TwoArguments {
    /// First test argument.
    arg1: String,
    /// Second test argument.
    arg2: String,
}

fn with_arguments() -> PromptEntry {
    prompt(TEST_PROMPT_WITH_ARGUMENTS)
        .title("Prompt With Arguments")
        .description("A prompt with two required arguments, substituted into its text")
        .handler(|_cx: RequestContext, args: TwoArguments| async move {
            format!("Prompt with arguments: arg1='{}', arg2='{}'", args.arg1, args.arg2)
        })
        .complete(
            "arg1",
            from_list(["paris", "park", "party", "testValue1", "testValue2"]),
        )
        .complete("arg2", from_list(["testValue1", "testValue2", "world"]))
}

#[derive(Deserialize, JsonSchema)]
struct EmbedArguments {
    /// URI of the resource to embed.
    #[serde(rename = "resourceUri")]
    resource_uri: String,
}

fn with_embedded_resource() -> PromptEntry {
    prompt(TEST_PROMPT_WITH_EMBEDDED_RESOURCE)
        .title("Prompt With Embedded Resource")
        .description("A prompt that embeds the resource named by its resourceUri argument")
        .handler(|_cx: RequestContext, args: EmbedArguments| async move {
            let resource = ContentBlock::Resource(EmbeddedResource {
                resource: ResourceContents::text(
                    args.resource_uri,
                    Some("text/plain"),
                    "Embedded resource content for testing.",
                ),
                annotations: None,
                meta: None,
            });
            vec![
                PromptMessage {
                    role: Role::User,
                    content: resource,
                },
                PromptMessage::text(Role::User, "Please process the embedded resource above."),
            ]
        })
}

fn with_image() -> PromptEntry {
    prompt(TEST_PROMPT_WITH_IMAGE)
        .title("Prompt With Image")
        .description("A prompt that includes image content")
        .handler(|_cx: RequestContext, _: NoArgs| async {
            vec![
                PromptMessage {
                    role: Role::User,
                    content: ContentBlock::image(TEST_IMAGE_PNG_BASE64, "image/png"),
                },
                PromptMessage::text(Role::User, "Please analyze the image above."),
            ]
        })
}

fn input_required() -> PromptEntry {
    prompt(TEST_IRR_PROMPT)
        .title("Prompt Needing Input")
        .description("MRTR: asks the user for context (elicitation under the key user_context) before rendering")
        .handler(|cx: RequestContext, _: NoArgs| async move {
            let answer = cx
                .elicit(
                    "user_context",
                    ask_for("What context should the prompt use?", "context"),
                )
                .await?;
            let context = entered(&answer, "context").unwrap_or_else(|| "none".to_owned());
            Ok::<_, ToolError>(GetPromptResult {
                description: Some("A prompt rendered with the user's context".into()),
                messages: vec![PromptMessage::text(
                    Role::User,
                    format!("Prompt with context: {context}"),
                )],
                ..Default::default()
            })
        })
}

/// The prompt `test_trigger_prompt_change` adds and removes.
pub(crate) fn dynamic_prompt() -> PromptEntry {
    prompt(TEST_DYNAMIC_PROMPT)
        .description("Comes and goes with each call of test_trigger_prompt_change")
        .handler(|_cx: RequestContext, _: NoArgs| async { "This prompt was added at run time.".to_owned() })
}
