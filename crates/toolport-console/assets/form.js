// Forms generated from JSON Schema: the input schema of a tool, the
// requested schema of an elicitation, a prompt's arguments. Flat objects of
// strings, numbers, integers, booleans and enums get their own inputs;
// arrays of scalars take one value per line; anything else takes JSON.

import { h } from './dom.js';

/** The form fields for an object schema; `read()` gives the value or throws. */
export function schemaFields(schema, prefix) {
  const properties = (schema && schema.properties) || {};
  const required = new Set((schema && schema.required) || []);
  const fields = Object.entries(properties).map(([name, property]) => field(prefix, name, resolve(schema, property), required.has(name)));
  return {
    nodes: fields.map((f) => f.node),
    read() {
      const value = {};
      for (const f of fields) {
        const v = f.read();
        if (v !== undefined) value[f.name] = v;
        else if (f.required) throw new Error(`${f.name} is required`);
      }
      return value;
    },
  };
}

/** `$ref`s into `$defs`/`definitions` of the same schema, and `anyOf` with null (Option<T>). */
function resolve(root, property) {
  let p = property || {};
  for (let depth = 0; depth < 8 && p.$ref; depth++) {
    const name = p.$ref.split('/').pop();
    p = ((root.$defs || root.definitions || {})[name]) || {};
  }
  if (Array.isArray(p.anyOf)) {
    const real = p.anyOf.filter((s) => s.type !== 'null');
    if (real.length === 1) p = { ...resolve(root, real[0]), description: p.description || real[0].description };
  }
  if (Array.isArray(p.type)) {
    p = { ...p, type: p.type.find((t) => t !== 'null') };
  }
  return p;
}

function field(prefix, name, property, required) {
  const id = `${prefix}-${name}`;
  const title = property.title || name;
  const description = property.description ? h('div', { class: 'description' }, property.description) : null;
  const label = h('label', { for: id }, required ? `${title} *` : title);
  let input;
  let read;
  const values = property.enum || (property.oneOf && property.oneOf.every((o) => 'const' in o) ? property.oneOf.map((o) => o.const) : null);
  if (values) {
    input = h('select', { id, name }, required ? null : h('option', { value: '' }, '—'), values.map((v) => h('option', { value: String(v) }, String(v))));
    if (property.default !== undefined) input.value = String(property.default);
    read = () => (input.value === '' ? undefined : values.find((v) => String(v) === input.value));
  } else if (property.type === 'boolean') {
    input = h('input', { id, name, type: 'checkbox' });
    input.checked = property.default === true;
    read = () => input.checked;
  } else if (property.type === 'integer' || property.type === 'number') {
    input = h('input', {
      id, name, type: 'number', step: property.type === 'integer' ? '1' : 'any', min: property.minimum, max: property.maximum,
    });
    if (property.default !== undefined) input.value = String(property.default);
    read = () => {
      if (input.value.trim() === '') return undefined;
      const n = Number(input.value);
      if (!Number.isFinite(n) || (property.type === 'integer' && !Number.isInteger(n))) {
        throw new Error(`${name} must be ${property.type === 'integer' ? 'a whole number' : 'a number'}`);
      }
      return n;
    };
  } else if (property.type === 'array' && property.items && ['string', 'number', 'integer'].includes(property.items.type)) {
    input = h('textarea', { id, name, rows: 3, placeholder: 'one value per line' });
    read = () => {
      const lines = input.value.split('\n').map((l) => l.trim()).filter(Boolean);
      if (!lines.length) return undefined;
      if (property.items.type === 'string') return lines;
      return lines.map((l) => {
        const n = Number(l);
        if (!Number.isFinite(n)) throw new Error(`${name}: ${l} is not a number`);
        return n;
      });
    };
  } else if (property.type === 'string' || property.type === undefined && !property.properties) {
    input = h('input', { id, name, type: 'text', maxlength: property.maxLength, placeholder: property.format || '' });
    if (property.default !== undefined) input.value = String(property.default);
    read = () => (input.value === '' ? undefined : input.value);
  } else {
    input = h('textarea', { id, name, rows: 4, placeholder: 'JSON' });
    read = () => {
      if (input.value.trim() === '') return undefined;
      try {
        return JSON.parse(input.value);
      } catch (e) {
        throw new Error(`${name} is not JSON: ${e.message}`);
      }
    };
  }
  return { name, required, node: h('div', { class: 'field' }, label, description, input), read };
}
