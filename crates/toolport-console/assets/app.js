// The console's entry point: signs in if the server is protected, connects
// over MCP, and keeps the live views fresh.

import { h } from './dom.js';
import { McpClient } from './mcp.js';
import { token, renderAuth, completeSignIn, settings } from './auth.js';
import { ToolsView, showResources, showPrompts, describe } from './tools.js';
import { Admin, LiveView, Charts } from './live.js';

const LIVE_EVERY_MS = 1000;
const CHARTS_EVERY_MS = 2000;

const status = (text, kind = '') => {
  const pill = document.getElementById('connection');
  pill.textContent = text;
  pill.className = `pill ${kind}`;
};

const client = new McpClient(document.body.dataset.endpoint || '/mcp', token);
const tools = new ToolsView(client);
const admin = new Admin(token);
const live = new LiveView(admin);
const charts = new Charts(document.getElementById('charts'));
let connected = false;
let current = 'tools';

function showTab(name) {
  current = name;
  for (const button of document.querySelectorAll('nav button')) button.classList.toggle('active', button.dataset.tab === name);
  for (const section of document.querySelectorAll('section.tab')) section.hidden = section.id !== `tab-${name}`;
  if (!connected) return;
  const loads = {
    resources: () => showResources(client),
    prompts: () => showPrompts(client),
    audit: () => live.audit(),
    bench: () => live.bench(),
    upstreams: () => live.optional('upstreams'),
    tasks: () => live.optional('tasks'),
  };
  if (loads[name]) loads[name]().catch((e) => document.getElementById(`tab-${name}`).append(h('p', { class: 'error' }, describe(e))));
}

document.getElementById('tabs').addEventListener('click', (event) => {
  const button = event.target.closest('button[data-tab]');
  if (button) showTab(button.dataset.tab);
});

async function connect() {
  renderAuth(connect);
  if (settings().protected && !token()) {
    connected = false;
    status('sign in to continue', 'bad');
    return;
  }
  try {
    status('connecting…');
    await client.connect();
    await tools.refresh();
    await live.overview();
    connected = true;
    status(`connected · ${client.serverInfo ? client.serverInfo.name : ''}`, 'ok');
    showTab(current);
  } catch (e) {
    connected = false;
    status(describe(e), 'bad');
  }
}

async function tick() {
  if (connected) {
    try {
      await live.overview();
      await live.refresh();
    } catch (e) {
      status(`live views: ${e.message}`, 'bad');
    }
  }
  setTimeout(tick, LIVE_EVERY_MS);
}

async function chartTick() {
  try {
    await charts.sample();
  } catch {
    // /metrics may be off ([metrics] enabled = false): the charts stay empty.
  }
  setTimeout(chartTick, CHARTS_EVERY_MS);
}

async function start() {
  try {
    await completeSignIn();
  } catch (e) {
    status(e.message, 'bad');
  }
  await connect();
  tick();
  chartTick();
}

start();
