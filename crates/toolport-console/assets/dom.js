// Small helpers to build DOM nodes: text always goes in as text, never as
// markup, so nothing a server or a tool returns can inject a script.

/** An element with attributes (on* keys become listeners) and children. */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') {
      element.addEventListener(key.slice(2), value);
    } else if (key === 'dataset') {
      Object.assign(element.dataset, value);
    } else if (value === true) {
      element.setAttribute(key, '');
    } else {
      element.setAttribute(key, String(value));
    }
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function fill(element, ...children) {
  element.replaceChildren();
  append(element, children);
}

/** A table of rows; `columns` are [title, row => cell]. */
export function table(columns, rows, empty = 'nothing') {
  if (!rows.length) return h('p', { class: 'hint' }, empty);
  return h('table', {},
    h('thead', {}, h('tr', {}, columns.map(([title]) => h('th', {}, title)))),
    h('tbody', {}, rows.map((row) => h('tr', {}, columns.map(([, cell]) => h('td', {}, cell(row)))))));
}

/** Pretty JSON in a <pre>. */
export function jsonBlock(value) {
  return h('pre', { class: 'json' }, JSON.stringify(value, null, 2));
}
