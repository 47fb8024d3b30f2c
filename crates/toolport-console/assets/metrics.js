// Reading /metrics, the Prometheus text the scraper reads: samples by name
// and labels, and from two scrapes the rates and quantiles the charts draw.

/** Parses the text format: [{name, labels, value}]. */
export function parse(text) {
  const samples = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels = {};
    const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
    let m;
    while ((m = re.exec(match[3] || '')) !== null) {
      labels[m[1]] = m[2].replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    samples.push({ name: match[1], labels, value: Number(match[4]) });
  }
  return samples;
}

function sum(samples, name, filter = () => true) {
  return samples.filter((s) => s.name === name && filter(s.labels)).reduce((a, s) => a + s.value, 0);
}

/** The increase of every series of `name` between scrapes, grouped by `key(labels)`. */
function increase(before, after, name, key, filter = () => true) {
  const out = new Map();
  const prior = new Map(before.filter((s) => s.name === name).map((s) => [JSON.stringify(s.labels), s.value]));
  for (const s of after) {
    if (s.name !== name || !filter(s.labels)) continue;
    const was = prior.get(JSON.stringify(s.labels)) || 0;
    // A counter that went down was reset (a restart): count from zero.
    const delta = s.value >= was ? s.value - was : s.value;
    const k = key(s.labels);
    out.set(k, (out.get(k) || 0) + delta);
  }
  return out;
}

/** The q-quantile from cumulative histogram buckets [[le, count]], as Prometheus' histogram_quantile. */
export function quantile(q, buckets) {
  const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
  if (!sorted.length) return NaN;
  const total = sorted[sorted.length - 1][1];
  if (!(total > 0)) return NaN;
  const rank = q * total;
  let lower = 0;
  let below = 0;
  for (const [le, count] of sorted) {
    if (count >= rank) {
      if (!Number.isFinite(le)) return lower;
      const inBucket = count - below;
      return inBucket > 0 ? lower + (le - lower) * ((rank - below) / inBucket) : le;
    }
    lower = Number.isFinite(le) ? le : lower;
    below = count;
  }
  return lower;
}

/**
 * One point of each chart from two scrapes `seconds` apart: requests/s,
 * errors/s, and p50/p99 (ms) of each tool's calls in between.
 */
export function point(before, after, seconds) {
  const requests = increase(before, after, 'toolport_requests_total', () => 'all');
  const errors = increase(before, after, 'toolport_requests_total', () => 'all', (l) => l.outcome !== 'ok');
  const toolErrors = increase(before, after, 'toolport_tool_calls_total', () => 'all', (l) => l.outcome !== 'ok');
  const calls = increase(before, after, 'toolport_tool_calls_total', (l) => l.tool);
  const buckets = new Map();
  for (const [key, delta] of increase(before, after, 'toolport_tool_call_duration_seconds_bucket', (l) => `${l.tool}\u0000${l.le}`)) {
    const [tool, le] = key.split('\u0000');
    if (!buckets.has(tool)) buckets.set(tool, []);
    buckets.get(tool).push([le === '+Inf' ? Infinity : Number(le), delta]);
  }
  const latency = {};
  for (const [tool, b] of buckets) {
    latency[tool] = { p50: quantile(0.5, b) * 1000, p99: quantile(0.99, b) * 1000 };
  }
  const perSecond = (v) => (v || 0) / seconds;
  return {
    requestsPerSecond: perSecond(requests.get('all')),
    errorsPerSecond: perSecond((errors.get('all') || 0) + (toolErrors.get('all') || 0)),
    callsPerSecond: Object.fromEntries([...calls].map(([tool, n]) => [tool, perSecond(n)])),
    latency,
    inFlight: sum(after, 'toolport_requests_in_flight'),
  };
}
