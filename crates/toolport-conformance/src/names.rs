//! Every name the conformance suite's server scenarios call, with the
//! scenario that calls it.

// ----- tools: content (tools-call-*) -----

/// `tools-call-simple-text`: one text block.
pub const TEST_SIMPLE_TEXT: &str = "test_simple_text";
/// `tools-call-image`: one PNG image block.
pub const TEST_IMAGE_CONTENT: &str = "test_image_content";
/// `tools-call-audio`: one `audio/wav` block.
pub const TEST_AUDIO_CONTENT: &str = "test_audio_content";
/// `tools-call-embedded-resource`: one embedded text resource.
pub const TEST_EMBEDDED_RESOURCE: &str = "test_embedded_resource";
/// `tools-call-mixed-content`: text, image and embedded resource.
pub const TEST_MULTIPLE_CONTENT_TYPES: &str = "test_multiple_content_types";
/// `tools-call-error`: an `isError` result.
pub const TEST_ERROR_HANDLING: &str = "test_error_handling";

// ----- tools: notifications -----

/// `tools-call-with-logging`: three `info` log messages during the call.
pub const TEST_TOOL_WITH_LOGGING: &str = "test_tool_with_logging";
/// `tools-call-with-progress`: progress 0, 50, 100 of 100.
pub const TEST_TOOL_WITH_PROGRESS: &str = "test_tool_with_progress";
/// `server-sse-polling` (SEP-1699): asks the transport to close the stream mid-call.
pub const TEST_RECONNECTION: &str = "test_reconnection";

// ----- tools: asking the client (handshake era: requests; 2026-07-28: MRTR) -----

/// `tools-call-sampling`: argument `prompt`; asks the client's model.
pub const TEST_SAMPLING: &str = "test_sampling";
/// `tools-call-elicitation`: argument `message`; asks the user for username and email.
pub const TEST_ELICITATION: &str = "test_elicitation";
/// `elicitation-sep1034-defaults`: a form with a default for every primitive type.
pub const TEST_ELICITATION_SEP1034_DEFAULTS: &str = "test_elicitation_sep1034_defaults";
/// `elicitation-sep1330-enums`: a form with all five enum shapes.
pub const TEST_ELICITATION_SEP1330_ENUMS: &str = "test_elicitation_sep1330_enums";

// ----- tools: schemas -----

/// `json-schema-2020-12`: a hand-written 2020-12 input schema that must survive `tools/list`.
pub const JSON_SCHEMA_2020_12_TOOL: &str = "json_schema_2020_12_tool";
/// `http-custom-header-server-validation` (SEP-2243): a string argument with `x-mcp-header`.
pub const TEST_HEADER_PARAM: &str = "test_header_param";
/// The `x-mcp-header` name of [`TEST_HEADER_PARAM`]'s `region` argument (`Mcp-Param-Region`).
pub const TEST_HEADER_PARAM_HEADER: &str = "Region";

// ----- tools: 2026-07-28 diagnostics (server-stateless) -----

/// `server-stateless`: needs the sampling capability; without it, -32021.
pub const TEST_MISSING_CAPABILITY: &str = "test_missing_capability";
/// `server-stateless`: reports progress, then asks for input; the response
/// stream must carry no independent requests.
pub const TEST_STREAMING_ELICITATION: &str = "test_streaming_elicitation";
/// `server-stateless`: logs; without `_meta` `logLevel` nothing may be sent.
pub const TEST_LOGGING_TOOL: &str = "test_logging_tool";
/// `server-stateless`: changes the tool list (adds or removes [`TEST_DYNAMIC_TOOL`]).
pub const TEST_TRIGGER_TOOL_CHANGE: &str = "test_trigger_tool_change";
/// `server-stateless`: changes the prompt list (adds or removes [`TEST_DYNAMIC_PROMPT`]).
pub const TEST_TRIGGER_PROMPT_CHANGE: &str = "test_trigger_prompt_change";
/// The tool [`TEST_TRIGGER_TOOL_CHANGE`] toggles.
pub const TEST_DYNAMIC_TOOL: &str = "test_dynamic_tool";

// ----- tools: MRTR (input-required-result-*) -----

/// A1, A7, A10, A14, A15: elicitation under the key `user_name`.
pub const TEST_IRR_ELICITATION: &str = "test_input_required_result_elicitation";
/// A2: sampling under the key `capital_question`.
pub const TEST_IRR_SAMPLING: &str = "test_input_required_result_sampling";
/// A3: `roots/list` under the key `client_roots`.
pub const TEST_IRR_LIST_ROOTS: &str = "test_input_required_result_list_roots";
/// A4: elicitation `confirm` plus the handler's own `requestState`.
pub const TEST_IRR_REQUEST_STATE: &str = "test_input_required_result_request_state";
/// A5: elicitation, sampling and roots at once.
pub const TEST_IRR_MULTIPLE_INPUTS: &str = "test_input_required_result_multiple_inputs";
/// A6: two rounds of elicitation (`step1`, then `step2`).
pub const TEST_IRR_MULTI_ROUND: &str = "test_input_required_result_multi_round";
/// A12: a tampered `requestState` is refused.
pub const TEST_IRR_TAMPERED_STATE: &str = "test_input_required_result_tampered_state";
/// A13: asks only for what the client declared.
pub const TEST_IRR_CAPABILITIES: &str = "test_input_required_result_capabilities";

// ----- resources -----

/// `resources-read-text`.
pub const STATIC_TEXT_URI: &str = "test://static-text";
/// `resources-read-binary`.
pub const STATIC_BINARY_URI: &str = "test://static-binary";
/// `resources-subscribe` / `resources-unsubscribe`: subscribable, updated periodically.
pub const WATCHED_RESOURCE_URI: &str = "test://watched-resource";
/// `resources-templates-read`: `test://template/123/data` reads id 123.
pub const TEMPLATE_URI: &str = "test://template/{id}/data";

// ----- tasks (the `tasks-*` scenarios of the extension io.modelcontextprotocol/tasks) -----

/// Never a task: greets `name`.
pub const GREET: &str = "greet";
/// Task-supporting: sleeps `seconds`, then answers; cancellable.
pub const SLOW_COMPUTE: &str = "slow_compute";
/// Task required: ends with a tool error (`isError`).
pub const FAILING_JOB: &str = "failing_job";
/// Task-supporting: ends with a JSON-RPC error.
pub const PROTOCOL_ERROR_JOB: &str = "protocol_error_job";
/// Task-supporting: asks for confirmation (one input request) inside the task.
pub const CONFIRM_DELETE: &str = "confirm_delete";
/// Task-supporting: asks two questions at once inside the task.
pub const MULTI_INPUT: &str = "multi_input";
/// Task required: asks `user_name` through MRTR first, then becomes a task.
pub const TEST_TOOL_WITH_TASK: &str = "test_tool_with_task";

// ----- prompts -----

/// `prompts-get-simple`.
pub const TEST_SIMPLE_PROMPT: &str = "test_simple_prompt";
/// `prompts-get-with-args` and `completion-complete`: arguments `arg1`, `arg2`.
pub const TEST_PROMPT_WITH_ARGUMENTS: &str = "test_prompt_with_arguments";
/// `prompts-get-embedded-resource`: argument `resourceUri`.
pub const TEST_PROMPT_WITH_EMBEDDED_RESOURCE: &str = "test_prompt_with_embedded_resource";
/// `prompts-get-with-image`.
pub const TEST_PROMPT_WITH_IMAGE: &str = "test_prompt_with_image";
/// `input-required-result-non-tool-request` (A9): elicitation under the key `user_context`.
pub const TEST_IRR_PROMPT: &str = "test_input_required_result_prompt";
/// The prompt [`TEST_TRIGGER_PROMPT_CHANGE`] toggles.
pub const TEST_DYNAMIC_PROMPT: &str = "test_dynamic_prompt";
