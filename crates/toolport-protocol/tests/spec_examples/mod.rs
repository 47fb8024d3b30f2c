#![allow(missing_docs)]
// Examples from the MCP specification, schema/2026-07-28/examples/<Type>/<name>.json,
// minified. The spec is the authority on the wire format; these are its own words.
pub(crate) const EXAMPLES: &[(&str, &str, &str)] = &[
    (
        "AudioContent",
        "audio-wav-content",
        r#"{"type":"audio","data":"UklGRiQAAABXQVZFZm10IBAAAAABAAEARKwAAIhYAQACABAAZGF0YQAAAAA=","mimeType":"audio/wav"}"#,
    ),
    (
        "BlobResourceContents",
        "image-file-contents",
        r#"{"uri":"file:///example.png","mimeType":"image/png","blob":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="}"#,
    ),
    (
        "BooleanSchema",
        "boolean-input-schema",
        r#"{"type":"boolean","title":"Display Name","description":"Description text","default":false}"#,
    ),
    (
        "CallToolRequest",
        "call-tool-request",
        r#"{"jsonrpc":"2.0","id":"call-tool-example","method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"name":"get_weather","arguments":{"location":"New York"}}}"#,
    ),
    (
        "CallToolRequestParams",
        "get-weather-tool-call-params",
        r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"name":"get_weather","arguments":{"location":"New York"}}"#,
    ),
    (
        "CallToolRequestParams",
        "tool-call-params-with-progress-token",
        r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{},"progressToken":"oivaizmir"},"name":"build_simulation","arguments":{"city":"Micropolis"}}"#,
    ),
    (
        "CallToolResult",
        "invalid-tool-input-error",
        r#"{"resultType":"complete","content":[{"type":"text","text":"Invalid departure date: must be in the future. Current date is 08/08/2025."}],"isError":true}"#,
    ),
    (
        "CallToolResult",
        "result-with-array-structured-content",
        r#"{"resultType":"complete","content":[{"type":"text","text":"Found 2 users: Alice (alice@example.com) and Bob (bob@example.com)."}],"structuredContent":[{"id":"1","name":"Alice","email":"alice@example.com"},{"id":"2","name":"Bob","email":"bob@example.com"}]}"#,
    ),
    (
        "CallToolResult",
        "result-with-structured-content",
        r#"{"resultType":"complete","content":[{"type":"text","text":"{\"temperature\": 22.5, \"conditions\": \"Partly cloudy\", \"humidity\": 65}"}],"structuredContent":{"temperature":22.5,"conditions":"Partly cloudy","humidity":65}}"#,
    ),
    (
        "CallToolResult",
        "result-with-unstructured-text",
        r#"{"resultType":"complete","content":[{"type":"text","text":"Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy"}],"isError":false}"#,
    ),
    (
        "CallToolResultResponse",
        "call-tool-result-response",
        r#"{"jsonrpc":"2.0","id":"call-tool-example","result":{"resultType":"complete","content":[{"type":"text","text":"Current weather in New York:\nTemperature: 72°F\nConditions: Partly cloudy"}],"isError":false}}"#,
    ),
    (
        "CancelledNotification",
        "user-requested-cancellation",
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"123","reason":"User requested cancellation"}}"#,
    ),
    (
        "CancelledNotificationParams",
        "user-requested-cancellation",
        r#"{"requestId":"123","reason":"User requested cancellation"}"#,
    ),
    (
        "ClientCapabilities",
        "elicitation-form-and-url-mode-support",
        r#"{"elicitation":{"form":{},"url":{}}}"#,
    ),
    (
        "ClientCapabilities",
        "elicitation-form-only-implicit",
        r#"{"elicitation":{}}"#,
    ),
    (
        "ClientCapabilities",
        "extensions-ui-mime-types",
        r#"{"extensions":{"io.modelcontextprotocol/ui":{"mimeTypes":["text/html;profile=mcp-app"]}}}"#,
    ),
    (
        "ClientCapabilities",
        "roots-minimum-baseline-support",
        r#"{"roots":{}}"#,
    ),
    (
        "ClientCapabilities",
        "sampling-context-inclusion-support-deprecated",
        r#"{"sampling":{"context":{}}}"#,
    ),
    (
        "ClientCapabilities",
        "sampling-minimum-baseline-support",
        r#"{"sampling":{}}"#,
    ),
    (
        "ClientCapabilities",
        "sampling-tool-use-support",
        r#"{"sampling":{"tools":{}}}"#,
    ),
    (
        "CompleteRequest",
        "completion-request",
        r#"{"jsonrpc":"2.0","id":"completion-example","method":"completion/complete","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"ref":{"type":"ref/prompt","name":"code_review"},"argument":{"name":"language","value":"py"}}}"#,
    ),
    (
        "CompleteRequestParams",
        "prompt-argument-completion-with-context",
        r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"ref":{"type":"ref/prompt","name":"code_review"},"argument":{"name":"framework","value":"fla"},"context":{"arguments":{"language":"python"}}}"#,
    ),
    (
        "CompleteRequestParams",
        "prompt-argument-completion",
        r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"ref":{"type":"ref/prompt","name":"code_review"},"argument":{"name":"language","value":"py"}}"#,
    ),
    (
        "CompleteResult",
        "multiple-completion-values-with-more-available",
        r#"{"resultType":"complete","completion":{"values":["python","pytorch","pyside"],"total":10,"hasMore":true}}"#,
    ),
    (
        "CompleteResult",
        "single-completion-value",
        r#"{"resultType":"complete","completion":{"values":["flask"],"total":1,"hasMore":false}}"#,
    ),
    (
        "CompleteResultResponse",
        "completion-result-response",
        r#"{"jsonrpc":"2.0","id":"completion-example","result":{"resultType":"complete","completion":{"values":["flask"],"total":1,"hasMore":false}}}"#,
    ),
    (
        "CreateMessageRequest",
        "sampling-request",
        r#"{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"modelPreferences":{"hints":[{"name":"claude-3-sonnet"}],"intelligencePriority":0.8,"speedPriority":0.5},"systemPrompt":"You are a helpful assistant.","maxTokens":100}}"#,
    ),
    (
        "CreateMessageRequestParams",
        "basic-request",
        r#"{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"modelPreferences":{"hints":[{"name":"claude-3-sonnet"}],"intelligencePriority":0.8,"speedPriority":0.5},"systemPrompt":"You are a helpful assistant.","maxTokens":100}"#,
    ),
    (
        "CreateMessageRequestParams",
        "follow-up-with-tool-results",
        r#"{"messages":[{"role":"user","content":{"type":"text","text":"What's the weather like in Paris and London?"}},{"role":"assistant","content":[{"type":"tool_use","id":"call_abc123","name":"get_weather","input":{"city":"Paris"}},{"type":"tool_use","id":"call_def456","name":"get_weather","input":{"city":"London"}}]},{"role":"user","content":[{"type":"tool_result","toolUseId":"call_abc123","content":[{"type":"text","text":"Weather in Paris: 18°C, partly cloudy"}]},{"type":"tool_result","toolUseId":"call_def456","content":[{"type":"text","text":"Weather in London: 15°C, rainy"}]}]}],"tools":[{"name":"get_weather","description":"Get current weather for a city","inputSchema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}],"maxTokens":1000}"#,
    ),
    (
        "CreateMessageRequestParams",
        "request-with-tools",
        r#"{"messages":[{"role":"user","content":{"type":"text","text":"What's the weather like in Paris and London?"}}],"tools":[{"name":"get_weather","description":"Get current weather for a city","inputSchema":{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"]}}],"toolChoice":{"mode":"auto"},"maxTokens":1000}"#,
    ),
    (
        "CreateMessageResult",
        "final-response",
        r#"{"role":"assistant","content":{"type":"text","text":"Based on the current weather data:\n\n- **Paris**: 18°C and partly cloudy - quite pleasant!\n- **London**: 15°C and rainy - you'll want an umbrella.\n\nParis has slightly warmer and drier conditions today."},"model":"claude-3-sonnet-20240307","stopReason":"endTurn"}"#,
    ),
    (
        "CreateMessageResult",
        "text-response",
        r#"{"role":"assistant","content":{"type":"text","text":"The capital of France is Paris."},"model":"claude-3-sonnet-20240307","stopReason":"endTurn"}"#,
    ),
    (
        "CreateMessageResult",
        "tool-use-response",
        r#"{"role":"assistant","content":[{"type":"tool_use","id":"call_abc123","name":"get_weather","input":{"city":"Paris"}},{"type":"tool_use","id":"call_def456","name":"get_weather","input":{"city":"London"}}],"model":"claude-3-sonnet-20240307","stopReason":"toolUse"}"#,
    ),
    (
        "DiscoverRequest",
        "server-discover-request",
        r#"{"jsonrpc":"2.0","id":"discover-1","method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    ),
    (
        "DiscoverResult",
        "server-capabilities-discovery",
        r#"{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"resources":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}},"instructions":"This server provides weather and resource utilities. Prefer `get_weather` for forecast lookups.","ttlMs":3600000,"cacheScope":"public"}"#,
    ),
    (
        "DiscoverResultResponse",
        "discover-result-response",
        r#"{"jsonrpc":"2.0","id":"discover-1","result":{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"resources":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ExampleServer","version":"1.0.0"}},"ttlMs":3600000,"cacheScope":"public"}}"#,
    ),
    (
        "ElicitRequest",
        "elicitation-request",
        r#"{"method":"elicitation/create","params":{"mode":"form","message":"Please provide your GitHub username","requestedSchema":{"type":"object","properties":{"name":{"type":"string","title":"GitHub Username","description":"Your GitHub username"}},"required":["name"]}}}"#,
    ),
    (
        "ElicitRequestFormParams",
        "elicit-multiple-fields",
        r#"{"mode":"form","message":"Please provide your contact information","requestedSchema":{"type":"object","properties":{"name":{"type":"string","description":"Your full name"},"email":{"type":"string","format":"email","description":"Your email address"},"age":{"type":"number","minimum":18,"description":"Your age"}},"required":["name","email"]}}"#,
    ),
    (
        "ElicitRequestFormParams",
        "elicit-single-field",
        r#"{"mode":"form","message":"Please provide your GitHub username","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}"#,
    ),
    (
        "ElicitRequestURLParams",
        "elicit-sensitive-data",
        r#"{"mode":"url","url":"https://mcp.example.com/ui/set_api_key","message":"Please provide your API key to continue."}"#,
    ),
    ("ElicitResult", "accept-url-mode-no-content", r#"{"action":"accept"}"#),
    (
        "ElicitResult",
        "input-multiple-fields",
        r#"{"action":"accept","content":{"name":"Monalisa Octocat","email":"octocat@github.com","age":30}}"#,
    ),
    (
        "ElicitResult",
        "input-single-field",
        r#"{"action":"accept","content":{"name":"octocat"}}"#,
    ),
    (
        "EmbeddedResource",
        "embedded-file-resource-with-annotations",
        r#"{"type":"resource","resource":{"uri":"file:///project/src/main.rs","mimeType":"text/x-rust","text":"fn main() {\n    println!(\"Hello world!\");\n}"},"annotations":{"audience":["user","assistant"],"priority":0.7,"lastModified":"2025-05-03T14:30:00Z"}}"#,
    ),
    (
        "GetPromptRequest",
        "get-prompt-request",
        r#"{"jsonrpc":"2.0","id":"get-prompt-example","method":"prompts/get","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"name":"code_review","arguments":{"code":"def hello():\n    print('world')"}}}"#,
    ),
    (
        "GetPromptRequestParams",
        "get-code-review-prompt",
        r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"name":"code_review","arguments":{"code":"def hello():\n    print('world')"}}"#,
    ),
    (
        "GetPromptResult",
        "code-review-prompt",
        r#"{"resultType":"complete","description":"Code review prompt","messages":[{"role":"user","content":{"type":"text","text":"Please review this Python code:\ndef hello():\n    print('world')"}}]}"#,
    ),
    (
        "GetPromptResultResponse",
        "get-prompt-result-response",
        r#"{"jsonrpc":"2.0","id":"get-prompt-example","result":{"resultType":"complete","description":"Code review prompt","messages":[{"role":"user","content":{"type":"text","text":"Please review this Python code:\ndef hello():\n    print('world')"}}]}}"#,
    ),
    (
        "HeaderMismatchError",
        "header-mismatch",
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Header mismatch: Mcp-Name header value 'foo' does not match body value 'bar'"}}"#,
    ),
    (
        "ImageContent",
        "image-png-content-with-annotations",
        r#"{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==","mimeType":"image/png","annotations":{"audience":["user"],"priority":0.9}}"#,
    ),
    (
        "InputRequests",
        "elicitation-and-sampling-input-requests",
        r#"{"github_login":{"method":"elicitation/create","params":{"mode":"form","message":"Please provide your GitHub username","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}},"capital_of_france":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"maxTokens":100}}}"#,
    ),
    (
        "InputRequiredResult",
        "input-required-result-with-elicitation-and-sampling-and-request-state",
        r#"{"resultType":"input_required","inputRequests":{"github_login":{"method":"elicitation/create","params":{"message":"Please provide your GitHub username","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}},"capital_of_france":{"method":"sampling/createMessage","params":{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"maxTokens":100}}},"requestState":"eyJsb2NhdGlvbiI6Ik5ldyBZb3JrIn0"}"#,
    ),
    (
        "InputRequiredResult",
        "input-required-result-with-request-state-only",
        r#"{"resultType":"input_required","requestState":"eyJwcm9ncmVzcyI6IjUwJSIsInN0YXRlIjoicHJvY2Vzc2luZyJ9"}"#,
    ),
    (
        "InputResponses",
        "elicitation-and-sampling-input-responses",
        r#"{"github_login":{"action":"accept","content":{"name":"octocat"}},"capital_of_france":{"role":"assistant","content":{"type":"text","text":"The capital of France is Paris."},"model":"claude-3-sonnet-20240307","stopReason":"endTurn"}}"#,
    ),
    (
        "InternalError",
        "unexpected-error",
        r#"{"code":-32603,"message":"Internal error"}"#,
    ),
    (
        "InvalidParamsError",
        "invalid-cursor",
        r#"{"code":-32602,"message":"Invalid cursor"}"#,
    ),
    (
        "InvalidParamsError",
        "invalid-tool-arguments",
        r#"{"code":-32602,"message":"Invalid arguments for tool calculate: Missing required property 'expression'"}"#,
    ),
    (
        "InvalidParamsError",
        "unknown-prompt",
        r#"{"code":-32602,"message":"Unknown prompt: invalid_prompt_name"}"#,
    ),
    (
        "InvalidParamsError",
        "unknown-tool",
        r#"{"code":-32602,"message":"Unknown tool: invalid_tool_name"}"#,
    ),
    (
        "ListPromptsRequest",
        "list-prompts-request",
        r#"{"jsonrpc":"2.0","id":"list-prompts-example","method":"prompts/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    ),
    (
        "ListPromptsResult",
        "prompts-list-with-cursor-and-ttl",
        r#"{"resultType":"complete","prompts":[{"name":"code_review","title":"Request Code Review","description":"Asks the LLM to analyze code quality and suggest improvements","arguments":[{"name":"code","description":"The code to review","required":true}],"icons":[{"src":"https://example.com/review-icon.svg","mimeType":"image/svg+xml","sizes":["any"]}]}],"nextCursor":"next-page-cursor","ttlMs":600000,"cacheScope":"public"}"#,
    ),
    (
        "ListPromptsResultResponse",
        "list-prompts-result-response",
        r#"{"jsonrpc":"2.0","id":"list-prompts-example","result":{"resultType":"complete","prompts":[{"name":"code_review","title":"Request Code Review","description":"Asks the LLM to analyze code quality and suggest improvements","arguments":[{"name":"code","description":"The code to review","required":true}],"icons":[{"src":"https://example.com/review-icon.svg","mimeType":"image/svg+xml","sizes":["any"]}]}],"nextCursor":"next-page-cursor","ttlMs":600000,"cacheScope":"public"}}"#,
    ),
    (
        "ListResourceTemplatesRequest",
        "list-resource-templates-request",
        r#"{"jsonrpc":"2.0","id":"list-resource-templates-example","method":"resources/templates/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    ),
    (
        "ListResourceTemplatesResult",
        "resource-templates-list-with-cursor-and-ttl",
        r#"{"resultType":"complete","resourceTemplates":[{"uriTemplate":"file:///{path}","name":"Project Files","title":"📁 Project Files","description":"Access files in the project directory","mimeType":"application/octet-stream","icons":[{"src":"https://example.com/folder-icon.png","mimeType":"image/png","sizes":["48x48"]}]}],"nextCursor":"next-page-cursor","ttlMs":3600000,"cacheScope":"public"}"#,
    ),
    (
        "ListResourceTemplatesResultResponse",
        "list-resource-templates-result-response",
        r#"{"jsonrpc":"2.0","id":"list-resource-templates-example","result":{"resultType":"complete","resourceTemplates":[{"uriTemplate":"file:///{path}","name":"Project Files","title":"Project Files","description":"Access files in the project directory","mimeType":"application/octet-stream","icons":[{"src":"https://example.com/folder-icon.png","mimeType":"image/png","sizes":["48x48"]}]}],"ttlMs":3600000,"cacheScope":"public"}}"#,
    ),
    (
        "ListResourcesRequest",
        "list-resources-request",
        r#"{"jsonrpc":"2.0","id":"list-resources-example","method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    ),
    (
        "ListResourcesResult",
        "resources-list-with-cursor-and-ttl",
        r#"{"resultType":"complete","resources":[{"uri":"file:///project/src/main.rs","name":"main.rs","title":"Rust Software Application Main File","description":"Primary application entry point","mimeType":"text/x-rust","icons":[{"src":"https://example.com/rust-file-icon.png","mimeType":"image/png","sizes":["48x48"]}]}],"nextCursor":"eyJwYWdlIjogM30=","ttlMs":600000,"cacheScope":"private"}"#,
    ),
    (
        "ListResourcesResultResponse",
        "list-resources-result-response",
        r#"{"jsonrpc":"2.0","id":"list-resources-example","result":{"resultType":"complete","resources":[{"uri":"file:///project/src/main.rs","name":"main.rs","title":"Rust Software Application Main File","description":"Primary application entry point","mimeType":"text/x-rust","icons":[{"src":"https://example.com/rust-file-icon.png","mimeType":"image/png","sizes":["48x48"]}]}],"nextCursor":"eyJwYWdlIjogM30=","ttlMs":600000,"cacheScope":"private"}}"#,
    ),
    (
        "ListRootsRequest",
        "list-roots-request",
        r#"{"id":"list-roots-example","method":"roots/list"}"#,
    ),
    (
        "ListRootsResult",
        "multiple-root-directories",
        r#"{"roots":[{"uri":"file:///home/user/repos/frontend","name":"Frontend Repository"},{"uri":"file:///home/user/repos/backend","name":"Backend Repository"}]}"#,
    ),
    (
        "ListRootsResult",
        "single-root-directory",
        r#"{"roots":[{"uri":"file:///home/user/projects/myproject","name":"My Project"}]}"#,
    ),
    (
        "ListToolsRequest",
        "list-tools-request",
        r#"{"jsonrpc":"2.0","id":"list-tools-example","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#,
    ),
    (
        "ListToolsResult",
        "tools-list-with-cursor-and-ttl",
        r#"{"resultType":"complete","tools":[{"name":"get_weather","title":"Weather Information Provider","description":"Get current weather information for a location","inputSchema":{"type":"object","properties":{"location":{"type":"string","description":"City name or zip code"}},"required":["location"]},"icons":[{"src":"https://example.com/weather-icon.png","mimeType":"image/png","sizes":["48x48"]}]}],"nextCursor":"next-page-cursor","ttlMs":300000,"cacheScope":"public"}"#,
    ),
    (
        "ListToolsResultResponse",
        "list-tools-result-response",
        r#"{"jsonrpc":"2.0","id":"list-tools-example","result":{"resultType":"complete","tools":[{"name":"get_weather","title":"Weather Information Provider","description":"Get current weather information for a location","inputSchema":{"type":"object","properties":{"location":{"type":"string","description":"City name or zip code"}},"required":["location"]},"icons":[{"src":"https://example.com/weather-icon.png","mimeType":"image/png","sizes":["48x48"]}]}],"nextCursor":"next-page-cursor","ttlMs":3600000,"cacheScope":"public"}}"#,
    ),
    (
        "LoggingMessageNotification",
        "log-database-connection-failed",
        r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","logger":"database","data":{"error":"Connection failed","details":{"host":"localhost","port":5432}}}}"#,
    ),
    (
        "LoggingMessageNotificationParams",
        "log-database-connection-failed",
        r#"{"level":"error","logger":"database","data":{"error":"Connection failed","details":{"host":"localhost","port":5432}}}"#,
    ),
    (
        "MethodNotFoundError",
        "prompts-not-supported",
        r#"{"code":-32601,"message":"Prompts not supported","data":{"reason":"Server does not support the prompts capability"}}"#,
    ),
    (
        "MissingRequiredClientCapabilityError",
        "missing-elicitation-capability",
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"Server requires the elicitation capability for this request","data":{"requiredCapabilities":{"elicitation":{}}}}}"#,
    ),
    (
        "ModelPreferences",
        "with-hints-and-priorities",
        r#"{"hints":[{"name":"claude-3-sonnet"},{"name":"claude"}],"costPriority":0.3,"speedPriority":0.8,"intelligencePriority":0.5}"#,
    ),
    (
        "NumberSchema",
        "number-input-schema",
        r#"{"type":"number","title":"Display Name","description":"Description text","minimum":0,"maximum":100,"default":50}"#,
    ),
    (
        "PaginatedRequestParams",
        "list-with-cursor",
        r#"{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"cursor":"eyJwYWdlIjogMn0="}"#,
    ),
    (
        "ParseError",
        "invalid-json",
        r#"{"code":-32700,"message":"Parse error: Invalid JSON"}"#,
    ),
    (
        "ProgressNotification",
        "progress-message",
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"oivaizmir","progress":50,"total":100,"message":"Reticulating splines..."}}"#,
    ),
    (
        "ProgressNotificationParams",
        "progress-message",
        r#"{"progressToken":"oivaizmir","progress":50,"total":100,"message":"Reticulating splines..."}"#,
    ),
    (
        "PromptListChangedNotification",
        "prompts-list-changed",
        r#"{"jsonrpc":"2.0","method":"notifications/prompts/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}}"#,
    ),
    (
        "ReadResourceRequest",
        "read-resource-request",
        r#"{"jsonrpc":"2.0","id":"read-resource-example","method":"resources/read","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"uri":"file:///project/src/main.rs"}}"#,
    ),
    (
        "ReadResourceResult",
        "file-resource-contents",
        r#"{"resultType":"complete","contents":[{"uri":"file:///project/src/main.rs","mimeType":"text/x-rust","text":"fn main() {\n    println!(\"Hello world!\");\n}"}],"ttlMs":60000,"cacheScope":"private"}"#,
    ),
    (
        "ReadResourceResultResponse",
        "read-resource-result-response-with-ttl",
        r#"{"jsonrpc":"2.0","id":"read-resource-with-ttl-example","result":{"resultType":"complete","contents":[{"uri":"file:///project/src/main.rs","mimeType":"text/x-rust","text":"fn main() {\n    println!(\"Hello world!\");\n}"}],"ttlMs":60000,"cacheScope":"private"}}"#,
    ),
    (
        "ReadResourceResultResponse",
        "read-resource-result-response",
        r#"{"jsonrpc":"2.0","id":"read-resource-example","result":{"resultType":"complete","contents":[{"uri":"file:///project/src/main.rs","mimeType":"text/x-rust","text":"fn main() {\n    println!(\"Hello world!\");\n}"}]}}"#,
    ),
    (
        "Resource",
        "file-resource-with-annotations",
        r#"{"uri":"file:///project/README.md","name":"README.md","title":"Project Documentation","mimeType":"text/markdown","annotations":{"audience":["user"],"priority":0.8,"lastModified":"2025-01-12T15:00:58Z"}}"#,
    ),
    (
        "ResourceLink",
        "file-resource-link",
        r#"{"type":"resource_link","uri":"file:///project/src/main.rs","name":"main.rs","description":"Primary application entry point","mimeType":"text/x-rust"}"#,
    ),
    (
        "ResourceListChangedNotification",
        "resources-list-changed",
        r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}}"#,
    ),
    (
        "ResourceUpdatedNotification",
        "file-resource-updated-notification",
        r#"{"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"},"uri":"file:///project/src/main.rs"}}"#,
    ),
    (
        "ResourceUpdatedNotificationParams",
        "file-resource-updated",
        r#"{"uri":"file:///project/src/main.rs"}"#,
    ),
    (
        "Root",
        "project-directory",
        r#"{"uri":"file:///home/user/projects/myproject","name":"My Project"}"#,
    ),
    (
        "SamplingMessage",
        "multiple-content-blocks",
        r#"{"role":"user","content":[{"type":"tool_result","toolUseId":"call_123","content":[{"type":"text","text":"Result 1"}]},{"type":"tool_result","toolUseId":"call_456","content":[{"type":"text","text":"Result 2"}]}]}"#,
    ),
    (
        "SamplingMessage",
        "single-content-block",
        r#"{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}"#,
    ),
    (
        "ServerCapabilities",
        "completions-minimum-baseline-support",
        r#"{"completions":{}}"#,
    ),
    (
        "ServerCapabilities",
        "extensions-tasks",
        r#"{"extensions":{"io.modelcontextprotocol/tasks":{}}}"#,
    ),
    (
        "ServerCapabilities",
        "logging-minimum-baseline-support",
        r#"{"logging":{}}"#,
    ),
    (
        "ServerCapabilities",
        "prompts-list-changed-notifications",
        r#"{"prompts":{"listChanged":true}}"#,
    ),
    (
        "ServerCapabilities",
        "prompts-minimum-baseline-support",
        r#"{"prompts":{}}"#,
    ),
    (
        "ServerCapabilities",
        "resources-all-notifications",
        r#"{"resources":{"subscribe":true,"listChanged":true}}"#,
    ),
    (
        "ServerCapabilities",
        "resources-list-changed-notifications-only",
        r#"{"resources":{"listChanged":true}}"#,
    ),
    (
        "ServerCapabilities",
        "resources-minimum-baseline-support",
        r#"{"resources":{}}"#,
    ),
    (
        "ServerCapabilities",
        "resources-subscription-to-individual-resource-updates-only",
        r#"{"resources":{"subscribe":true}}"#,
    ),
    (
        "ServerCapabilities",
        "tools-list-changed-notifications",
        r#"{"tools":{"listChanged":true}}"#,
    ),
    (
        "ServerCapabilities",
        "tools-minimum-baseline-support",
        r#"{"tools":{}}"#,
    ),
    (
        "StringSchema",
        "email-input-schema",
        r#"{"type":"string","title":"Display Name","description":"Description text","minLength":3,"maxLength":50,"format":"email","default":"user@example.com"}"#,
    ),
    (
        "SubscriptionsAcknowledgedNotification",
        "listen-acknowledged",
        r#"{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"},"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///project/config.json"]}}}"#,
    ),
    (
        "SubscriptionsListenRequest",
        "listen-for-list-changes",
        r#"{"jsonrpc":"2.0","id":"listen-1","method":"subscriptions/listen","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"ExampleClient","version":"1.0.0"},"io.modelcontextprotocol/clientCapabilities":{}},"notifications":{"toolsListChanged":true,"resourceSubscriptions":["file:///project/config.json"]}}}"#,
    ),
    (
        "SubscriptionsListenResult",
        "listen-closed",
        r#"{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}"#,
    ),
    (
        "SubscriptionsListenResultResponse",
        "listen-closed-response",
        r#"{"jsonrpc":"2.0","id":"listen-1","result":{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}}"#,
    ),
    (
        "TextContent",
        "text-content",
        r#"{"type":"text","text":"Tool result text"}"#,
    ),
    (
        "TextResourceContents",
        "text-file-contents",
        r#"{"uri":"file:///example.txt","mimeType":"text/plain","text":"Resource content"}"#,
    ),
    (
        "TitledMultiSelectEnumSchema",
        "titled-color-multi-select-schema",
        r##"{"type":"array","title":"Color Selection","description":"Choose your favorite colors","minItems":1,"maxItems":2,"items":{"anyOf":[{"const":"#FF0000","title":"Red"},{"const":"#00FF00","title":"Green"},{"const":"#0000FF","title":"Blue"}]},"default":["#FF0000","#00FF00"]}"##,
    ),
    (
        "TitledSingleSelectEnumSchema",
        "titled-color-select-schema",
        r##"{"type":"string","title":"Color Selection","description":"Choose your favorite color","oneOf":[{"const":"#FF0000","title":"Red"},{"const":"#00FF00","title":"Green"},{"const":"#0000FF","title":"Blue"}],"default":"#FF0000"}"##,
    ),
    (
        "Tool",
        "tool-with-array-output-schema",
        r#"{"name":"list_users","title":"User List","description":"Returns a list of all users","inputSchema":{"type":"object","properties":{}},"outputSchema":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string","description":"User ID"},"name":{"type":"string","description":"User name"},"email":{"type":"string","description":"User email"}},"required":["id","name","email"]}}}"#,
    ),
    (
        "Tool",
        "tool-with-composition-input-schema",
        r#"{"name":"find_resource","title":"Resource Finder","description":"Find a resource by ID or name","inputSchema":{"type":"object","oneOf":[{"properties":{"id":{"type":"string","description":"Resource ID"}},"required":["id"]},{"properties":{"name":{"type":"string","description":"Resource name"}},"required":["name"]}]}}"#,
    ),
    (
        "Tool",
        "with-default-2020-12-input-schema",
        r#"{"name":"calculate_sum","description":"Add two numbers","inputSchema":{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}"#,
    ),
    (
        "Tool",
        "with-explicit-draft-07-input-schema",
        r#"{"name":"calculate_sum","description":"Add two numbers","inputSchema":{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}}"#,
    ),
    (
        "Tool",
        "with-no-parameters",
        r#"{"name":"get_current_time","description":"Returns the current server time","inputSchema":{"type":"object","additionalProperties":false}}"#,
    ),
    (
        "Tool",
        "with-output-schema-for-structured-content",
        r#"{"name":"get_weather_data","title":"Weather Data Retriever","description":"Get current weather data for a location","inputSchema":{"type":"object","properties":{"location":{"type":"string","description":"City name or zip code"}},"required":["location"]},"outputSchema":{"type":"object","properties":{"temperature":{"type":"number","description":"Temperature in celsius"},"conditions":{"type":"string","description":"Weather conditions description"},"humidity":{"type":"number","description":"Humidity percentage"}},"required":["temperature","conditions","humidity"]}}"#,
    ),
    (
        "ToolListChangedNotification",
        "tools-list-changed",
        r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-1"}}}"#,
    ),
    (
        "ToolResultContent",
        "get-weather-tool-result",
        r#"{"type":"tool_result","toolUseId":"call_abc123","content":[{"type":"text","text":"Weather in Paris: 18°C, partly cloudy"}]}"#,
    ),
    (
        "ToolUseContent",
        "get-weather-tool-use",
        r#"{"type":"tool_use","id":"call_abc123","name":"get_weather","input":{"city":"Paris"}}"#,
    ),
    (
        "UnsupportedProtocolVersionError",
        "unsupported-version",
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"Unsupported protocol version","data":{"supported":["2026-07-28","2025-11-25"],"requested":"1900-01-01"}}}"#,
    ),
    (
        "UntitledMultiSelectEnumSchema",
        "color-multi-select-schema",
        r#"{"type":"array","title":"Color Selection","description":"Choose your favorite colors","minItems":1,"maxItems":2,"items":{"type":"string","enum":["Red","Green","Blue"]},"default":["Red","Green"]}"#,
    ),
    (
        "UntitledSingleSelectEnumSchema",
        "color-select-schema",
        r#"{"type":"string","title":"Color Selection","description":"Choose your favorite color","enum":["Red","Green","Blue"],"default":"Red"}"#,
    ),
];
