// Drive a Toolport server with the official TypeScript SDK client
// (npm @modelcontextprotocol/sdk, StreamableHTTPClientTransport).
//
// usage: TS_SDK=<path to @modelcontextprotocol/sdk/dist/esm> node ts_client.mjs URL
//
// Lists and calls every demo tool, sees progress, answers the booking's
// elicitation, cancels the long task and sees the server stop it. Prints one
// JSON line of what it saw; any failure exits non-zero.
const sdk = process.env.TS_SDK;
const { Client } = await import(`${sdk}/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/client/streamableHttp.js`);
const { ElicitRequestSchema } = await import(`${sdk}/types.js`);

function check(condition, what) {
  if (!condition) throw new Error(`check failed: ${what}`);
}

const url = new URL(process.argv[2]);
const client = new Client({ name: 'toolport-ts-interop', version: '1.0.0' }, { capabilities: { elicitation: {} } });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  check(request.params.message.includes('Book a table'), 'elicitation message');
  return { action: 'accept', content: { name: 'Grace', guests: 2 } };
});
const transport = new StreamableHTTPClientTransport(url);
await client.connect(transport);
const seen = { protocol: transport.protocolVersion, session: Boolean(transport.sessionId) };

const tools = (await client.listTools()).tools.map((t) => t.name).sort();
check(JSON.stringify(tools) === JSON.stringify(['book_table', 'compute_stats', 'echo', 'get_weather', 'long_task']), `tools ${tools}`);

const text = (r) => r.content[0].text;
check(text(await client.callTool({ name: 'echo', arguments: { message: 'from node' } })) === 'from node', 'echo');
check(text(await client.callTool({ name: 'get_weather', arguments: { city: 'Oslo' } })).startsWith('Oslo: '), 'weather');
const stats = await client.callTool({ name: 'compute_stats', arguments: { numbers: [2, 4] } });
check(stats.structuredContent.mean === 3, `stats ${JSON.stringify(stats)}`);
check(text(await client.callTool({ name: 'book_table', arguments: { restaurant: 'Node' } })) === 'Booked a table for 2 at Node under the name Grace.', 'booking');
seen.elicitation = true;

const progress = [];
const done = await client.callTool({ name: 'long_task', arguments: { steps: 4, step_ms: 10 } }, undefined, {
  onprogress: (p) => progress.push(p.progress),
});
check(text(done) === 'finished 4 steps', 'long task');
check(JSON.stringify(progress) === '[1,2,3,4]', `progress ${progress}`);
seen.progress = progress.length;

const jobs = async () => JSON.parse((await client.readResource({ uri: 'demo://jobs' })).contents[0].text);
const before = await jobs();
const abort = new AbortController();
const call = client.callTool({ name: 'long_task', arguments: { steps: 500, step_ms: 50 } }, undefined, {
  signal: abort.signal,
  onprogress: () => abort.abort('enough'),
});
let cancelled = false;
try {
  await call;
} catch {
  cancelled = true;
}
check(cancelled, 'the aborted call rejects');
let after = before;
for (let i = 0; i < 100 && after.cancelled === before.cancelled; i++) {
  await new Promise((r) => setTimeout(r, 50));
  after = await jobs();
}
check(after.cancelled === before.cancelled + 1, `server saw the cancellation: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
seen.cancelled = true;

await transport.terminateSession();
await client.close();
console.log(JSON.stringify(seen));
