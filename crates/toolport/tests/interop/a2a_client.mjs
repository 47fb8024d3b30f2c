// Drive a Toolport A2A server with the official JavaScript SDK client
// (npm @a2a-js/sdk 1.3.0, ClientFactory: JSON-RPC or REST, as the card offers).
//
// usage: [A2A_JS_SDK=<path to @a2a-js/sdk/dist>] node a2a_client.mjs BASE_URL [--binding jsonrpc|rest]
//
// Without --binding the SDK picks the first interface of the card; with it,
// that binding is preferred (preferredTransports "JSONRPC" / "HTTP+JSON").
//
// A2A_JS_SDK defaults to .ci/npm/a2a/node_modules/@a2a-js/sdk/dist in this
// checkout (made by .ci/run). Checks: the agent card, a blocking echo, a
// streamed long_task, get_task, cancel of a non-blocking long_task. Each check
// records what it saw under its own key, or {"error": ...}; the last line of
// stdout is ONE JSON object; the exit code is 0 only if no check failed.
// States are recorded without the TASK_STATE_ prefix ("COMPLETED").
import { fileURLToPath } from "node:url";
import path from "node:path";
import { randomUUID } from "node:crypto";

const here = path.dirname(fileURLToPath(import.meta.url));
const sdk =
  process.env.A2A_JS_SDK ??
  path.join(here, "../../../../.ci/npm/a2a/node_modules/@a2a-js/sdk/dist");
const { ClientFactory, ClientFactoryOptions } = await import(`${sdk}/client/index.js`);
const { Role, TaskState } = await import(`${sdk}/index.js`);

const CHECK_TIMEOUT_MS = 15000;
const base = process.argv[2];
const bindingFlag = process.argv.indexOf("--binding");
const binding = bindingFlag > 0 ? process.argv[bindingFlag + 1] : undefined;
if (!base || (binding !== undefined && !["jsonrpc", "rest"].includes(binding))) {
  console.error("usage: node a2a_client.mjs BASE_URL [--binding jsonrpc|rest]");
  process.exit(2);
}

function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

const shortState = (s) => String(TaskState[s] ?? s).replace(/^TASK_STATE_/, "");

function dataPart(value) {
  return { content: { $case: "data", value }, metadata: undefined, filename: "", mediaType: "" };
}

function userMessage(payload, taskId = "", contextId = "") {
  return {
    messageId: randomUUID(),
    contextId,
    taskId,
    role: Role.ROLE_USER,
    parts: [dataPart(payload)],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: [],
  };
}

const toolCall = (tool, args = {}) => ({ tool, arguments: args });

function artifactTexts(task) {
  return (task.artifacts ?? []).flatMap((a) =>
    (a.parts ?? []).filter((p) => p.content?.$case === "text").map((p) => p.content.value),
  );
}

function isTask(result) {
  return result && typeof result === "object" && "status" in result && !("role" in result);
}

function eventLabel(event) {
  const p = event.payload;
  if (!p) return "unknown";
  switch (p.$case) {
    case "task":
      return `task:${shortState(p.value.status?.state)}`;
    case "statusUpdate":
      return `status:${shortState(p.value.status?.state)}`;
    case "artifactUpdate":
      return "artifact";
    case "message":
      return "message";
    default:
      return `unknown:${p.$case}`;
  }
}

function describeError(e) {
  return {
    type: e?.constructor?.name ?? typeof e,
    name: e?.name,
    code: e?.code ?? e?.envelopeCode,
    message: String(e?.message ?? e).slice(0, 300),
  };
}

const withTimeout = (promise, ms) =>
  Promise.race([
    promise,
    new Promise((_, reject) => setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms).unref()),
  ]);

const results = { binding: binding ?? "card-order" };
const signal = () => AbortSignal.timeout(CHECK_TIMEOUT_MS);

async function runCheck(name, fn) {
  const record = {};
  results[name] = record;
  try {
    await withTimeout(fn(record), CHECK_TIMEOUT_MS);
  } catch (e) {
    record.error = `${e?.name ?? "Error"}: ${e?.message ?? e}`.slice(0, 1000);
    console.error(`--- check ${name} failed`);
    console.error(e?.stack ?? e);
  }
}

let client;
let card;
let blockingTaskId;

async function send(payload, { returnImmediately = false } = {}) {
  const result = await client.sendMessage(
    { message: userMessage(payload), configuration: { returnImmediately } },
    { signal: signal() },
  );
  check(isTask(result), "send answered with a task");
  return result;
}

try {
  const factory = binding
    ? new ClientFactory(
        ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
          preferredTransports: [binding === "rest" ? "HTTP+JSON" : "JSONRPC"],
        }),
      )
    : new ClientFactory();
  client = await withTimeout(factory.createFromUrl(base), CHECK_TIMEOUT_MS);
  card = await client.getAgentCard({ signal: signal() });
} catch (e) {
  console.error(e?.stack ?? e);
  results.fatal = `${e?.name ?? "Error"}: ${e?.message ?? e}`.slice(0, 1000);
  console.log(JSON.stringify(results));
  process.exit(1);
}

await runCheck("card", async (r) => {
  r.name = card.name;
  r.skill_ids = (card.skills ?? []).map((s) => s.id);
  r.bindings = (card.supportedInterfaces ?? []).map((i) => i.protocolBinding);
  r.transport = client.transport.protocolName;
  r.protocol_version = client.protocolVersion;
  r.streaming = Boolean(card.capabilities?.streaming);
  check(r.skill_ids.length > 0, "the card lists skills");
});

await runCheck("blocking", async (r) => {
  const task = await send(toolCall("echo", { message: "hello a2a" }));
  blockingTaskId = task.id;
  r.task_id = task.id;
  r.state = shortState(task.status?.state);
  r.texts = artifactTexts(task);
  check(r.state === "COMPLETED", "echo completes");
  check(r.texts.some((t) => t.includes("hello a2a")), "artifact text carries the echo");
});

await runCheck("streaming", async (r) => {
  const labels = [];
  let working = 0;
  for await (const event of client.sendMessageStream(
    { message: userMessage(toolCall("long_task", { steps: 3, step_ms: 50 })) },
    { signal: signal() },
  )) {
    labels.push(eventLabel(event));
    const p = event.payload;
    if (
      p?.$case === "statusUpdate" &&
      p.value.status?.state === TaskState.TASK_STATE_WORKING &&
      (p.value.status?.message?.parts ?? []).length > 0
    ) {
      working += 1;
    }
    if (labels.length > 500) break;
  }
  r.events = labels;
  r.working_with_message = working;
  check(labels.length > 0 && labels[0].startsWith("task:"), "first event is the task");
  check(labels.includes("status:WORKING"), "a WORKING status update");
  check(labels.at(-1) === "status:COMPLETED", "the stream ends with COMPLETED");
});

await runCheck("get_task", async (r) => {
  check(blockingTaskId, "the blocking check made a task");
  const task = await client.getTask({ id: blockingTaskId, tenant: "" }, { signal: signal() });
  r.same_id = task.id === blockingTaskId;
  r.state = shortState(task.status?.state);
  r.history_length = (task.history ?? []).length;
  const one = await client.getTask(
    { id: blockingTaskId, tenant: "", historyLength: 1 },
    { signal: signal() },
  );
  r.history_length_1 = (one.history ?? []).length;
  check(r.same_id, "get_task returns the task");
  check(r.state === "COMPLETED", "the task is COMPLETED");
  check(r.history_length_1 <= 1, "historyLength=1 limits the history");
});

await runCheck("cancel", async (r) => {
  const task = await send(toolCall("long_task", { steps: 50, step_ms: 100 }), {
    returnImmediately: true,
  });
  r.initial_state = shortState(task.status?.state);
  const canceled = await client.cancelTask({ id: task.id, tenant: "" }, { signal: signal() });
  r.state = shortState(canceled.status?.state);
  try {
    const again = await client.cancelTask({ id: task.id, tenant: "" }, { signal: signal() });
    r.second_cancel = { state: shortState(again.status?.state) };
  } catch (e) {
    r.second_cancel = describeError(e);
  }
  check(["SUBMITTED", "WORKING"].includes(r.initial_state), "returnImmediately gives a live task");
  check(r.state === "CANCELED", "cancel gives CANCELED");
  check(r.second_cancel.code === -32002 || r.second_cancel.name === "TaskNotCancelableError",
    "a second cancel is TaskNotCancelable");
});

const failed = Object.entries(results)
  .filter(([k]) => k !== "binding")
  .filter(([, v]) => v && typeof v === "object" && "error" in v)
  .map(([k]) => k);
results.failed = failed;
console.log(JSON.stringify(results));
process.exit(failed.length ? 1 : 0);
