// An MCP client for the console: Streamable HTTP, protocol 2025-11-25, one
// session. Requests are POSTed; an answer that streams (SSE) delivers
// progress and log notifications and the server's requests (elicitation)
// before the result. Cancelling sends notifications/cancelled.

const VERSION = '2025-11-25';

/** An error the server answered, with its HTTP status and JSON-RPC error. */
export class McpError extends Error {
  constructor(message, { status, code, data, challenge } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.data = data;
    this.challenge = challenge;
  }
}

export class McpClient {
  /**
   * @param {string} endpoint the MCP endpoint's path
   * @param {() => (string|null)} token the bearer token, if any
   */
  constructor(endpoint, token) {
    this.endpoint = endpoint;
    this.token = token;
    this.session = null;
    this.nextId = 1;
    this.serverInfo = null;
    this.capabilities = null;
    /** Answers server requests: (method, params) => Promise<result>. */
    this.onServerRequest = async (method) => { throw new McpError(`unsupported request ${method}`); };
  }

  headers(extra = {}) {
    const headers = {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': VERSION,
      ...extra,
    };
    if (this.session) headers['Mcp-Session-Id'] = this.session;
    const token = this.token();
    if (token) headers.Authorization = `Bearer ${token}`;
    return headers;
  }

  async connect() {
    this.session = null;
    const result = await this.request('initialize', {
      protocolVersion: VERSION,
      capabilities: { elicitation: { form: {} } },
      clientInfo: { name: 'toolport-console', version: '1' },
    });
    this.serverInfo = result.serverInfo;
    this.capabilities = result.capabilities;
    await this.notify('notifications/initialized', {});
    return result;
  }

  async notify(method, params) {
    const response = await fetch(this.endpoint, {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({ jsonrpc: '2.0', method, params }),
    });
    if (!response.ok && response.status !== 202) {
      throw await failure(response);
    }
  }

  /** Answers a request the server sent us. */
  async respond(id, result, error) {
    const message = error
      ? { jsonrpc: '2.0', id, error }
      : { jsonrpc: '2.0', id, result };
    await fetch(this.endpoint, { method: 'POST', headers: this.headers(), body: JSON.stringify(message) });
  }

  /**
   * Sends a request. `on.progress(params)` and `on.log(params)` see its
   * notifications; `signal` aborts the wait (the caller cancels first).
   * Resolves with the result, rejects with an McpError.
   */
  async request(method, params, on = {}, signal = undefined) {
    const id = this.nextId++;
    if (on.started) on.started(id);
    const response = await fetch(this.endpoint, {
      method: 'POST',
      headers: this.headers(),
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
      signal,
    });
    if (method === 'initialize') {
      this.session = response.headers.get('Mcp-Session-Id');
    }
    if (response.status === 404 && this.session && method !== 'initialize') {
      // The session ended (expired, server restarted): start a new one once.
      await this.connect();
      return this.request(method, params, on, signal);
    }
    const type = response.headers.get('Content-Type') || '';
    if (type.startsWith('text/event-stream')) {
      return this.readStream(response, id, on);
    }
    if (!response.ok) throw await failure(response);
    return unwrap(await response.json());
  }

  async readStream(response, id, on) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n/g, '\n');
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const event = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = event.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n');
        if (!data) continue;
        const message = JSON.parse(data);
        if (message.id === id && ('result' in message || 'error' in message)) {
          reader.cancel().catch(() => {});
          return unwrap(message);
        }
        await this.dispatch(message, on);
      }
    }
    throw new McpError('the answer stream ended without a result');
  }

  async dispatch(message, on) {
    if (message.method === 'notifications/progress') {
      if (on.progress) on.progress(message.params);
    } else if (message.method === 'notifications/message') {
      if (on.log) on.log(message.params);
    } else if (message.method && 'id' in message) {
      try {
        const result = await this.onServerRequest(message.method, message.params);
        await this.respond(message.id, result);
      } catch (e) {
        await this.respond(message.id, undefined, { code: -32603, message: String(e.message || e) });
      }
    }
  }

  /** Asks the server to stop request `id`. */
  cancel(id, reason = 'cancelled from the console') {
    return this.notify('notifications/cancelled', { requestId: id, reason });
  }

  /** Every page of a list method. */
  async listAll(method, key) {
    const items = [];
    let cursor;
    for (let page = 0; page < 100; page++) {
      const result = await this.request(method, cursor ? { cursor } : {});
      items.push(...(result[key] || []));
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    return items;
  }
}

function unwrap(message) {
  if (message.error) {
    throw new McpError(message.error.message, { code: message.error.code, data: message.error.data, status: 200 });
  }
  return message.result;
}

async function failure(response) {
  let message = `HTTP ${response.status}`;
  let code;
  let data;
  try {
    const body = await response.json();
    if (body.error) {
      message = body.error.message || message;
      code = body.error.code;
      data = body.error.data;
    }
  } catch {
    // Not JSON: the status says it.
  }
  return new McpError(message, {
    status: response.status,
    code,
    data,
    challenge: response.headers.get('WWW-Authenticate'),
  });
}
