// Tools, resources and prompts of the server, over MCP: lists, a form per
// tool from its input schema, calls with live progress and logs, answers to
// elicitations, cancellation.

import { h, fill, jsonBlock } from './dom.js';
import { schemaFields } from './form.js';
import { McpError } from './mcp.js';

export class ToolsView {
  constructor(client, root = document) {
    this.client = client;
    this.tools = new Map();
    this.list = root.getElementById('tool-list');
    this.detail = root.getElementById('tool-detail');
    this.log = root.getElementById('call-log');
    this.list.addEventListener('click', (event) => {
      const button = event.target.closest('button.tool');
      if (button) this.show(button.dataset.tool);
    });
    client.onServerRequest = (method, params) => {
      if (method === 'elicitation/create') return elicit(params);
      if (method === 'ping') return Promise.resolve({});
      return Promise.reject(new Error(`the console does not answer ${method}`));
    };
  }

  async refresh() {
    const tools = await this.client.listAll('tools/list', 'tools');
    tools.sort((a, b) => a.name.localeCompare(b.name));
    this.tools = new Map(tools.map((t) => [t.name, t]));
    fill(this.list, tools.length
      ? tools.map((t) => h('li', {}, h('button', { type: 'button', class: 'tool', dataset: { tool: t.name } }, t.name), h('small', {}, t.description || '')))
      : h('li', { class: 'hint' }, 'This server offers no tools to you.'));
  }

  show(name) {
    const tool = this.tools.get(name);
    if (!tool) return;
    const fields = schemaFields(tool.inputSchema, `arg-${name}`);
    const problem = h('p', { class: 'error', role: 'alert' });
    const form = h('form', { class: 'schema', id: 'tool-form', dataset: { tool: name } },
      fields.nodes,
      h('button', { type: 'submit', class: 'primary', id: 'call-button' }, `Call ${name}`),
      problem);
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      problem.textContent = '';
      let args;
      try {
        args = fields.read();
      } catch (e) {
        problem.textContent = e.message;
        return;
      }
      this.call(name, args);
    });
    fill(this.detail,
      h('h2', {}, tool.title || tool.name),
      h('p', {}, tool.description || ''),
      tool.annotations && tool.annotations.readOnlyHint ? h('p', { class: 'hint' }, 'read-only') : null,
      form);
  }

  /** Calls a tool, showing its progress, logs and result as they come. */
  async call(name, args) {
    const token = `console-${Date.now()}-${Math.random().toString(36).slice(2)}`;
    const state = h('span', { class: 'state' }, 'running');
    const bar = h('progress', { class: 'progress' });
    const progressText = h('span', { class: 'progress-text' });
    const logs = h('div', { class: 'log' });
    const result = h('div', { class: 'result' });
    const controller = new AbortController();
    let requestId;
    const cancel = h('button', { type: 'button', class: 'secondary cancel' }, 'Cancel');
    const box = h('div', { class: 'call running', dataset: { tool: name } },
      h('div', {}, h('b', {}, name), ' ', state, ' ', cancel),
      bar, progressText, logs, result);
    this.log.prepend(box);
    const finish = (kind, text) => {
      box.className = `call ${kind}`;
      state.textContent = text;
      cancel.remove();
      bar.remove();
    };
    cancel.addEventListener('click', async () => {
      cancel.disabled = true;
      try {
        if (requestId !== undefined) await this.client.cancel(requestId);
      } finally {
        controller.abort();
        finish('cancelled', 'cancelled');
      }
    });
    try {
      const answer = await this.client.request('tools/call', { name, arguments: args, _meta: { progressToken: token } }, {
        started: (id) => { requestId = id; box.dataset.requestId = String(id); },
        progress: (p) => {
          if (p.total) { bar.max = p.total; }
          bar.value = p.progress;
          progressText.textContent = p.message || `${p.progress}${p.total ? ` of ${p.total}` : ''}`;
          box.dataset.progress = String(p.progress);
        },
        log: (m) => logs.append(h('div', {}, `[${m.level}] ${typeof m.data === 'string' ? m.data : JSON.stringify(m.data)}`)),
      }, controller.signal);
      const texts = (answer.content || []).filter((c) => c.type === 'text').map((c) => c.text);
      fill(result,
        texts.map((t) => h('pre', { class: 'result-text' }, t)),
        answer.structuredContent ? jsonBlock(answer.structuredContent) : null);
      if (answer.isError) finish('failed', 'tool error');
      else finish('done', 'done');
    } catch (e) {
      if (controller.signal.aborted) return;
      fill(result, h('p', { class: 'error' }, describe(e)));
      finish('failed', e.status === 403 ? 'forbidden' : 'failed');
    }
  }
}

/** What went wrong, in words a person can act on. */
export function describe(error) {
  if (error instanceof McpError) {
    if (error.status === 403) {
      const scope = /scope="([^"]*)"/.exec(error.challenge || '');
      return `Forbidden: ${error.message}${scope ? ` (needs scope ${scope[1]})` : ''}`;
    }
    if (error.status === 401) return `Not signed in, or the token is no longer valid: ${error.message}`;
    if (error.status === 429) return `Overloaded: ${error.message}`;
    return error.code !== undefined ? `${error.message} (JSON-RPC ${error.code})` : error.message;
  }
  return String(error && error.message ? error.message : error);
}

/** Asks the user through the dialog; resolves with the elicitation result. */
function elicit(params) {
  const dialog = document.getElementById('elicitation');
  const form = document.getElementById('elicitation-form');
  const fields = schemaFields(params.requestedSchema || { properties: {} }, 'elicit');
  const problem = h('p', { class: 'error', role: 'alert' });
  return new Promise((resolve) => {
    const done = (result) => {
      dialog.close();
      resolve(result);
    };
    const accept = h('button', { type: 'button', class: 'primary', id: 'elicit-accept' }, 'Accept');
    accept.addEventListener('click', () => {
      try {
        done({ action: 'accept', content: fields.read() });
      } catch (e) {
        problem.textContent = e.message;
      }
    });
    const decline = h('button', { type: 'button', class: 'secondary', id: 'elicit-decline', onclick: () => done({ action: 'decline' }) }, 'Decline');
    const dismiss = h('button', { type: 'button', class: 'secondary', id: 'elicit-cancel', onclick: () => done({ action: 'cancel' }) }, 'Cancel');
    fill(form, h('p', { class: 'elicit-message' }, params.message || 'The server asks:'), h('div', { class: 'schema' }, fields.nodes), problem, h('div', {}, accept, ' ', decline, ' ', dismiss));
    form.className = 'schema';
    dialog.addEventListener('cancel', () => resolve({ action: 'cancel' }), { once: true });
    dialog.showModal();
  });
}

/** Resources and templates: list, read. */
export async function showResources(client) {
  const list = document.getElementById('resource-list');
  const detail = document.getElementById('resource-detail');
  const [resources, templates] = await Promise.all([
    client.listAll('resources/list', 'resources'),
    client.listAll('resources/templates/list', 'resourceTemplates'),
  ]);
  const read = async (uri) => {
    try {
      const result = await client.request('resources/read', { uri });
      fill(detail, h('h2', {}, uri), (result.contents || []).map((c) => h('pre', { class: 'json' }, c.text !== undefined ? c.text : `(${c.mimeType || 'binary'}, ${(c.blob || '').length} base64 characters)`)));
    } catch (e) {
      fill(detail, h('p', { class: 'error' }, describe(e)));
    }
  };
  fill(list,
    resources.map((r) => h('li', {}, h('button', { type: 'button', onclick: () => read(r.uri) }, r.title || r.name), h('small', {}, r.uri))),
    templates.map((t) => {
      const input = h('input', { type: 'text', value: t.uriTemplate, 'aria-label': t.name });
      return h('li', {}, h('b', {}, t.title || t.name), h('small', {}, t.uriTemplate), input, h('button', { type: 'button', class: 'secondary', onclick: () => read(input.value) }, 'Read'));
    }),
    !resources.length && !templates.length ? h('li', { class: 'hint' }, 'No resources.') : null);
}

/** Prompts: list, a form for the arguments, the messages. */
export async function showPrompts(client) {
  const list = document.getElementById('prompt-list');
  const detail = document.getElementById('prompt-detail');
  const prompts = await client.listAll('prompts/list', 'prompts');
  const open = (prompt) => {
    const schema = { properties: {}, required: [] };
    for (const a of prompt.arguments || []) {
      schema.properties[a.name] = { type: 'string', title: a.title || a.name, description: a.description };
      if (a.required) schema.required.push(a.name);
    }
    const fields = schemaFields(schema, `prompt-${prompt.name}`);
    const out = h('div');
    const form = h('form', { class: 'schema' }, fields.nodes, h('button', { type: 'submit', class: 'primary' }, 'Get'), out);
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        const result = await client.request('prompts/get', { name: prompt.name, arguments: fields.read() });
        fill(out, (result.messages || []).map((m) => h('div', { class: 'call' }, h('b', {}, m.role), h('pre', {}, m.content && m.content.text !== undefined ? m.content.text : JSON.stringify(m.content)))));
      } catch (e) {
        fill(out, h('p', { class: 'error' }, describe(e)));
      }
    });
    fill(detail, h('h2', {}, prompt.title || prompt.name), h('p', {}, prompt.description || ''), form);
  };
  fill(list, prompts.length
    ? prompts.map((p) => h('li', {}, h('button', { type: 'button', onclick: () => open(p) }, p.title || p.name), h('small', {}, p.description || '')))
    : h('li', { class: 'hint' }, 'No prompts.'));
}
