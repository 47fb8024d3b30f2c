// A small line chart drawn as inline SVG: a rolling window of points, one
// line per series, the latest values in the legend.

const NS = 'http://www.w3.org/2000/svg';
const WIDTH = 480;
const HEIGHT = 160;
const PAD = { left: 48, right: 10, top: 10, bottom: 20 };
const COLORS = ['#1f6feb', '#cf222e', '#2da44e', '#8250df', '#bf8700', '#0a3069', '#953800'];

function el(tag, attributes = {}) {
  const node = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attributes)) node.setAttribute(k, String(v));
  return node;
}

export class LineChart {
  /** @param {string} id  @param {string} title  @param {string} unit */
  constructor(id, title, unit, keep = 60) {
    this.keep = keep;
    this.unit = unit;
    this.series = new Map();
    this.updates = 0;
    this.svg = el('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img', 'aria-label': title });
    this.box = document.createElement('div');
    this.box.className = 'chart-box';
    this.box.id = id;
    const heading = document.createElement('h3');
    heading.textContent = title;
    this.legend = document.createElement('div');
    this.legend.className = 'hint legend';
    this.box.append(heading, this.svg, this.legend);
  }

  /** Adds one point per named value (NaN: no point this time). */
  push(values) {
    for (const [name, value] of Object.entries(values)) {
      if (!this.series.has(name)) this.series.set(name, []);
    }
    for (const [name, points] of this.series) {
      const v = values[name];
      points.push(Number.isFinite(v) ? v : null);
      while (points.length > this.keep) points.shift();
    }
    this.updates += 1;
    this.box.dataset.updates = String(this.updates);
    this.draw();
  }

  draw() {
    const all = [...this.series.values()].flat().filter((v) => v !== null);
    const max = niceCeiling(Math.max(0, ...all));
    const x = (i) => PAD.left + (WIDTH - PAD.left - PAD.right) * (i / Math.max(1, this.keep - 1));
    const y = (v) => HEIGHT - PAD.bottom - (HEIGHT - PAD.top - PAD.bottom) * (max > 0 ? v / max : 0);
    this.svg.replaceChildren();
    this.svg.append(
      el('line', { x1: PAD.left, y1: HEIGHT - PAD.bottom, x2: WIDTH - PAD.right, y2: HEIGHT - PAD.bottom, stroke: '#999' }),
      el('line', { x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: HEIGHT - PAD.bottom, stroke: '#999' }),
    );
    for (const value of [max, max / 2]) {
      const label = el('text', { x: PAD.left - 4, y: y(value) + 4, 'text-anchor': 'end', 'font-size': 10 });
      label.textContent = format(value);
      this.svg.append(label, el('line', { x1: PAD.left, y1: y(value), x2: WIDTH - PAD.right, y2: y(value), stroke: '#eee' }));
    }
    const legend = [];
    let index = 0;
    for (const [name, points] of this.series) {
      const color = COLORS[index++ % COLORS.length];
      const offset = this.keep - points.length;
      const coordinates = points.map((v, i) => (v === null ? null : `${x(i + offset).toFixed(1)},${y(v).toFixed(1)}`)).filter(Boolean);
      if (coordinates.length) {
        this.svg.append(el('polyline', { points: coordinates.join(' '), fill: 'none', stroke: color, 'stroke-width': 1.5, class: 'series', 'data-series': name }));
      }
      const last = [...points].reverse().find((v) => v !== null);
      legend.push(`${name}: ${last === undefined ? '–' : format(last)}${this.unit}`);
    }
    this.legend.textContent = legend.join('   ');
  }
}

function niceCeiling(value) {
  if (!(value > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  return [1, 2, 5, 10].map((m) => m * magnitude).find((v) => v >= value);
}

function format(value) {
  if (value >= 100) return value.toFixed(0);
  if (value >= 1) return value.toFixed(1);
  return value.toFixed(3);
}
