//! The tools of the `tasks-*` scenarios (SEP-2663). They are written like
//! any other tool; one builder call makes each a task, and their questions
//! and cancellation work the same inside a task.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Deserialize;
use toolport_protocol::ErrorObject;
use toolport_protocol::mrtr::{InputRequest, InputRequests};
use toolport_server::{NoArgs, RequestContext, TaskSupport, ToolEntry, ToolError, tool};

use crate::answers::{ask_for, entered};
use crate::names::*;

pub(super) fn all() -> Vec<ToolEntry> {
    vec![
        greet(),
        slow_compute(),
        failing_job(),
        protocol_error_job(),
        confirm_delete(),
        multi_input(),
        with_task(),
    ]
}

#[derive(Deserialize, JsonSchema)]
struct GreetArgs {
    /// Who to greet.
    name: String,
}

fn greet() -> ToolEntry {
    tool(GREET)
        .description("Greets name; never a task")
        .read_only()
        .handler(|args: GreetArgs| async move { format!("Hello, {}!", args.name) })
}

#[derive(Deserialize, JsonSchema)]
struct ComputeArgs {
    /// How long the computation takes.
    #[serde(default)]
    seconds: f64,
    /// A label echoed in the result.
    #[serde(default)]
    label: Option<String>,
}

fn slow_compute() -> ToolEntry {
    tool(SLOW_COMPUTE)
        .description("Sleeps `seconds`, then answers; runs as a task when the client allows")
        .task_support(TaskSupport::Optional)
        .handler(|args: ComputeArgs| async move {
            let seconds = args.seconds.clamp(0.0, 3600.0);
            tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
            format!(
                "Computed {} in {seconds} s",
                args.label.unwrap_or_else(|| "the result".into())
            )
        })
}

fn failing_job() -> ToolEntry {
    tool(FAILING_JOB)
        .description("Runs only as a task and ends with a tool error after a moment")
        .task_support(TaskSupport::Required)
        .handler(|_: NoArgs| async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Err::<String, _>(ToolError::failed("The job failed: this tool always fails"))
        })
}

fn protocol_error_job() -> ToolEntry {
    tool(PROTOCOL_ERROR_JOB)
        .description("Runs as a task and ends with a JSON-RPC error (the task fails)")
        .task_support(TaskSupport::Optional)
        .handler(|_: NoArgs| async {
            Err::<String, _>(ToolError::Protocol(ErrorObject::internal(
                "the job broke down: a protocol-level failure for testing",
            )))
        })
}

#[derive(Deserialize, JsonSchema)]
struct ConfirmArgs {
    /// The file to delete.
    filename: String,
}

fn confirm_delete() -> ToolEntry {
    tool(CONFIRM_DELETE)
        .description("Asks for confirmation inside its task, then 'deletes' filename")
        .task_support(TaskSupport::Optional)
        .handler(|cx: RequestContext, args: ConfirmArgs| async move {
            let message = format!("Delete {}?", args.filename);
            let answer = cx.elicit("confirm", ask_for(&message, "confirm")).await?;
            let confirmed = entered(&answer, "confirm").is_some_and(|c| c == "true");
            Ok::<_, ToolError>(if confirmed {
                format!("Deleted {}", args.filename)
            } else {
                format!("Kept {}", args.filename)
            })
        })
}

fn multi_input() -> ToolEntry {
    tool(MULTI_INPUT)
        .description("Asks two questions at once inside its task")
        .task_support(TaskSupport::Optional)
        .handler(|cx: RequestContext, _: NoArgs| async move {
            let requests: InputRequests = [
                (
                    "first".to_owned(),
                    InputRequest::Elicit(ask_for("First value?", "name")),
                ),
                (
                    "second".to_owned(),
                    InputRequest::Elicit(ask_for("Second value?", "name")),
                ),
            ]
            .into_iter()
            .collect();
            let answers = cx.input(requests).await?;
            Ok::<_, ToolError>(format!("Got {} answers: {}", answers.len(), serde_json::json!(answers)))
        })
}

fn with_task() -> ToolEntry {
    tool(TEST_TOOL_WITH_TASK)
        .description("Asks user_name through MRTR, then runs as a task that greets them")
        .task_support(TaskSupport::Required)
        .input_before_task()
        .handler(|cx: RequestContext, _: NoArgs| async move {
            let answer = cx.elicit("user_name", ask_for("What is your name?", "name")).await?;
            let name = entered(&answer, "name").unwrap_or_else(|| "stranger".to_owned());
            cx.start_task().await?;
            Ok::<_, ToolError>(format!("Hello, {name}! (greeted from a task)"))
        })
}
