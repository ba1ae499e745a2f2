import { h } from './dom.js';

/** Nodes deeper than this start collapsed; the server flags JSON only up to MAX_JSON_DEPTH anyway. */
const OPEN_DEPTH = 3;
/** Children shown per object or array before "… N more"; keeps huge arrays from freezing the page. */
const MAX_CHILDREN = 500;

/** A collapsible, text-only view of a parsed JSON value (native <details>: keyboard accessible). */
export function jsonTree(value: unknown): HTMLElement {
  return h('div', { class: 'json-tree' }, node(undefined, value, 0));
}

function node(key: string | undefined, value: unknown, depth: number): HTMLElement {
  const label = key === undefined ? null : h('span', { class: 'json-key', text: `${JSON.stringify(key)}: ` });
  if (value === null || typeof value !== 'object') {
    return h('div', { class: 'json-leaf' }, label, h('span', { class: `json-${value === null ? 'null' : typeof value}`, text: JSON.stringify(value) }));
  }
  const entries: Array<[string, unknown]> = Array.isArray(value) ? value.map((item, index) => [String(index), item]) : Object.entries(value);
  const [open, close] = Array.isArray(value) ? ['[', ']'] : ['{', '}'];
  // Collapsed: `key: { 3 keys }`. Open: `key: {`, the children, then `}` on its own line.
  const collapsed = h('span', { class: 'json-collapsed' }, h('span', { class: 'json-count', text: ` ${entries.length} ${Array.isArray(value) ? 'items' : 'keys'} ` }), close);
  const summary = h('summary', {}, label, h('span', { class: 'json-punct', text: open }), collapsed);
  const details = h('details', { class: 'json-node' }, summary);
  if (depth < OPEN_DEPTH) details.open = true;
  const children = h('div', { class: 'json-children' });
  for (const [childKey, child] of entries.slice(0, MAX_CHILDREN)) children.append(node(Array.isArray(value) ? undefined : childKey, child, depth + 1));
  if (entries.length > MAX_CHILDREN) children.append(h('div', { class: 'muted', text: `… ${entries.length - MAX_CHILDREN} more` }));
  details.append(children, h('div', { class: 'json-punct', text: close }));
  return details;
}
