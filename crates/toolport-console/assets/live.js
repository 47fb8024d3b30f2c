// The live views, from the admin API (/admin/...) and /metrics: in-flight
// calls (each can be stopped), sessions, gates and rate limits, recent
// errors, the audit tail, the last bench report, upstreams and tasks, and
// charts of requests/s, errors and p50/p99 per tool.

import { h, fill, table } from './dom.js';
import { LineChart } from './chart.js';
import { parse, point } from './metrics.js';

export class Admin {
  constructor(token) {
    this.token = token;
    this.csrf = null;
  }

  headers(extra = {}) {
    const headers = { Accept: 'application/json', ...extra };
    const token = this.token();
    if (token) headers.Authorization = `Bearer ${token}`;
    return headers;
  }

  async get(view) {
    const response = await fetch(`/admin/${view}`, { headers: this.headers() });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
    return body;
  }

  async cancel(id) {
    const response = await fetch(`/admin/calls/${encodeURIComponent(id)}/cancel`, {
      method: 'POST',
      headers: this.headers({ 'X-Toolport-Csrf': this.csrf || '' }),
    });
    const body = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(body.error || `HTTP ${response.status}`);
    return body;
  }
}

const ago = (ms) => (ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`);

export class LiveView {
  constructor(admin) {
    this.admin = admin;
    this.views = {};
  }

  async overview() {
    const overview = await this.admin.get('overview');
    this.admin.csrf = overview.csrf;
    this.views = overview.views;
    document.getElementById('inflight-count').textContent = String(overview.running);
    document.getElementById('session-count').textContent = String(overview.sessions);
    for (const name of ['upstreams', 'tasks', 'audit', 'bench']) {
      const tab = document.querySelector(`nav button[data-tab="${name}"]`);
      if (tab) tab.classList.toggle('unavailable', !overview.views[name]);
    }
    return overview;
  }

  async refresh() {
    const [calls, sessions, limits, errors] = await Promise.all([
      this.admin.get('calls'), this.admin.get('sessions'), this.admin.get('limits'), this.admin.get('errors'),
    ]);
    document.getElementById('inflight-count').textContent = String(calls.calls.length);
    fill(document.getElementById('live-calls'), table([
      ['#', (c) => String(c.id)],
      ['tool', (c) => c.tool],
      ['principal', (c) => c.principal || '—'],
      ['session', (c) => c.session || '—'],
      ['running for', (c) => ago(c.elapsed_ms)],
      ['', (c) => h('button', {
        type: 'button', class: 'secondary stop', dataset: { call: String(c.id) },
        onclick: (event) => { event.target.disabled = true; this.admin.cancel(c.id).catch((e) => { event.target.replaceWith(h('span', { class: 'error' }, e.message)); }); },
      }, 'Stop')],
    ], calls.calls, 'No call is running.'));
    fill(document.getElementById('live-sessions'), table([
      ['session', (s) => s.id], ['principal', (s) => s.principal || '—'], ['protocol', (s) => s.protocol_version],
      ['client', (s) => s.client], ['in flight', (s) => String(s.in_flight)], ['idle', (s) => ago(s.idle_ms)],
    ], sessions.sessions, 'No session on this machine.'));
    fill(document.getElementById('live-limits'),
      table([
        ['gate', (g) => g.gate], ['running', (g) => `${g.in_use} of ${g.max}`], ['waiting', (g) => `${g.waiting} of ${g.queue}`],
      ], limits.gates, 'No concurrency gate is configured.'),
      table([
        ['rate limit', (r) => r.limit], ['per second', (r) => String(r.rate.per_second)], ['burst', (r) => String(r.rate.burst)],
      ], limits.rates, 'No rate limit is configured.'),
      table([
        ['refused by', (r) => r.limit], ['calls refused', (r) => String(r.refused)], ['last', (r) => r.last],
      ], limits.refusals, 'No rate limit refused a call.'));
    fill(document.getElementById('live-errors'), table([
      ['time', (e) => e.time], ['method', (e) => e.method], ['tool', (e) => e.tool || '—'], ['principal', (e) => e.principal || '—'],
      ['outcome', (e) => (e.code !== null && e.code !== undefined ? `${e.outcome} ${e.code}` : e.outcome)], ['message', (e) => e.message],
    ], errors.errors, 'No recent error.'));
  }

  async audit() {
    const root = document.getElementById('audit');
    try {
      const audit = await this.admin.get('audit?limit=100');
      if (!audit.available) return fill(root, h('p', { class: 'hint' }, 'No audit stream is configured ([audit] path).'));
      return fill(root, table([
        ['time', (r) => r.time], ['principal', (r) => r.principal || '—'], ['tool', (r) => r.tool || `(${r.kind || 'record'})`],
        ['outcome', (r) => r.outcome || ''], ['ms', (r) => (r.duration_ms === undefined ? '' : String(r.duration_ms))],
        ['arguments', (r) => (r.arguments === undefined ? '' : JSON.stringify(r.arguments))],
      ], audit.records, 'No call recorded yet.'));
    } catch (e) {
      return fill(root, h('p', { class: 'error' }, e.message));
    }
  }

  async bench() {
    const root = document.getElementById('bench');
    try {
      const bench = await this.admin.get('bench');
      if (!bench.available) {
        return fill(root, h('p', { class: 'hint' }, 'No bench report. Run toolport bench --report FILE.html and set [ui] bench_report = FILE.html.'));
      }
      const response = await fetch('/admin/bench.svg', { headers: this.admin.headers({ Accept: 'image/svg+xml' }) });
      const doc = new DOMParser().parseFromString(await response.text(), 'image/svg+xml');
      const svg = document.importNode(doc.documentElement, true);
      const r = bench.report;
      return fill(root,
        h('p', {}, `${r.tool} on ${r.server}: `, r.knee_concurrency ? `knee at concurrency ${r.knee_concurrency}` : 'knee not reached'),
        svg,
        table([
          ['concurrency', (s) => String(s.concurrency)], ['calls/s', (s) => s.calls_per_second.toFixed(0)],
          ['p50 ms', (s) => s.latency_ms.p50.toFixed(3)], ['p99 ms', (s) => s.latency_ms.p99.toFixed(3)], ['errors', (s) => String(s.errors)],
        ], r.steps));
    } catch (e) {
      return fill(root, h('p', { class: 'error' }, e.message));
    }
  }

  async optional(name) {
    const root = document.getElementById(name);
    try {
      const answer = await this.admin.get(name);
      if (!answer.available) {
        return fill(root, h('p', { class: 'hint' }, name === 'upstreams'
          ? 'This server is not a gateway: it has no upstreams.'
          : 'This server keeps no tasks.'));
      }
      if (name === 'upstreams') {
        return fill(root, table([
          ['upstream', (u) => u.name], ['transport', (u) => u.transport], ['state', (u) => h('span', { class: u.state === 'up' ? '' : 'error' }, u.state)],
          ['tools', (u) => String(u.tools)], ['since', (u) => u.since || '—'], ['detail', (u) => u.detail || ''],
        ], answer.upstreams, 'No upstream is configured.'));
      }
      return fill(root, table([
        ['task', (t) => t.id], ['status', (t) => t.status], ['tool', (t) => t.tool || '—'], ['principal', (t) => t.principal || '—'],
        ['created', (t) => t.created], ['updated', (t) => t.updated],
      ], answer.tasks, 'No task.'));
    } catch (e) {
      return fill(root, h('p', { class: 'error' }, e.message));
    }
  }
}

/** The charts, fed from /metrics every `seconds`. */
export class Charts {
  constructor(root) {
    this.requests = new LineChart('chart-requests', 'Requests per second', '/s');
    this.errors = new LineChart('chart-errors', 'Errors per second', '/s');
    this.p50 = new LineChart('chart-p50', 'p50 latency per tool', ' ms');
    this.p99 = new LineChart('chart-p99', 'p99 latency per tool', ' ms');
    fill(root, h('div', { class: 'charts' }, this.requests.box, this.errors.box, this.p50.box, this.p99.box));
    this.previous = null;
    this.at = 0;
  }

  async sample() {
    const response = await fetch('/metrics');
    if (!response.ok) throw new Error(`/metrics: HTTP ${response.status}`);
    const samples = parse(await response.text());
    const now = performance.now();
    if (this.previous) {
      const p = point(this.previous, samples, Math.max(0.001, (now - this.at) / 1000));
      this.requests.push({ requests: p.requestsPerSecond });
      this.errors.push({ errors: p.errorsPerSecond });
      this.p50.push(Object.fromEntries(Object.keys(p.latency).map((t) => [t, p.latency[t].p50])));
      this.p99.push(Object.fromEntries(Object.keys(p.latency).map((t) => [t, p.latency[t].p99])));
    }
    this.previous = samples;
    this.at = now;
  }
}

