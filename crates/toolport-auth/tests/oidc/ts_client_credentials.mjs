// The official TypeScript SDK client (npm @modelcontextprotocol/sdk) as an
// OAuth client of a protected Toolport server: client credentials at the
// authorization server the server's metadata names, then tools.
//
// usage: TS_SDK=<.../sdk/dist/esm> node ts_client_credentials.mjs URL ISSUER
// Prints one JSON line of what it saw; any failure exits non-zero.
const sdk = process.env.TS_SDK;
const { Client } = await import(`${sdk}/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/client/streamableHttp.js`);
const { ClientCredentialsProvider } = await import(`${sdk}/client/auth-extensions.js`);

const [url, issuer] = process.argv.slice(2);
const authProvider = new ClientCredentialsProvider({
  clientId: 'cc-client',
  clientSecret: 'cc-secret',
  expectedIssuer: issuer,
  scope: 'mcp:tools files:write',
});
const client = new Client({ name: 'toolport-ts-oauth', version: '1.0.0' }, { capabilities: {} });
await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider }));
const tools = (await client.listTools()).tools.map((t) => t.name).sort();
const whoami = (await client.callTool({ name: 'whoami', arguments: {} })).content[0].text;
const deleted = (await client.callTool({ name: 'delete_file', arguments: {} })).content[0].text;
console.log(JSON.stringify({ tools, whoami, deleted }));
await client.close();
