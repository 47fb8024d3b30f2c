// The official TypeScript SDK (npm @modelcontextprotocol/sdk) serving the
// benchmark's echo tool over stateless Streamable HTTP with JSON answers, on
// 127.0.0.1. A stateless transport cannot be reused, so each request gets a
// new server and transport, as the SDK's own stateless example does.
//
// usage: TS_SDK=<sdk>/dist/esm node ts_echo.mjs PORT
import http from 'node:http';

const sdk = process.env.TS_SDK;
const { McpServer } = await import(`${sdk}/server/mcp.js`);
const { StreamableHTTPServerTransport } = await import(`${sdk}/server/streamableHttp.js`);
const z = (await import(`${sdk}/../../../../zod/index.js`).catch(() => import('zod'))).z;

function server() {
  const s = new McpServer({ name: 'ts-echo', version: '1.0.0' });
  s.tool('echo', 'Returns the message.', { message: z.string() }, async ({ message }) => ({
    content: [{ type: 'text', text: message }],
  }));
  return s;
}

http
  .createServer(async (req, res) => {
    if (req.url !== '/mcp' || req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const s = server();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      transport.close();
      s.close();
    });
    await s.connect(transport);
    await transport.handleRequest(req, res, body);
  })
  .listen(Number(process.argv[2]), '127.0.0.1');
