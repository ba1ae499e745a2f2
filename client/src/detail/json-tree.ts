import { h } from '../dom.js';
import type { ExactValue } from './exact-json.js';

/** Nodes this shallow open by themselves when small enough and within the budget. */
const OPEN_DEPTH = 3;
/** A node with more children than this starts collapsed (the root always opens). */
const OPEN_MAX_CHILDREN = 50;
/** Nodes built without the reader asking: on first render, and each time they open a node. */
const NODE_BUDGET = 400;
/** Children built per step; "Show N more" builds the next step. Keeps a huge array from freezing the page. */
const STEP = 200;
/** Strings longer than this are cut until asked for: a megabyte on one line is slow to lay out. */
const LONG_STRING = 2000;

interface Budget {
  nodes: number;
}

/**
 * A collapsible, text-only view of a parsed JSON value (native <details>: keyboard accessible).
 * Lazy: a node's children are built only when it opens, a step at a time, so a hostile body
 * (half a million numbers, say) costs a few hundred DOM nodes until the reader asks for more.
 * Numbers show as they were sent (exact-json.ts).
 */
export function jsonTree(value: ExactValue): HTMLElement {
  return h('div', { class: 'json-tree' }, node(undefined, value, 0, { nodes: NODE_BUDGET }));
}

function count(size: number, isArray: boolean): string {
  return `${size} ${isArray ? 'item' : 'key'}${size === 1 ? '' : 's'}`;
}

function node(key: string | undefined, value: ExactValue, depth: number, budget: Budget): HTMLElement {
  budget.nodes--;
  const label = key === undefined ? null : h('span', { class: 'json-key', text: `${JSON.stringify(key)}: ` });
  switch (value.kind) {
    case 'string':
      if (value.value.length > LONG_STRING) return longString(label, value.value);
      return h(
        'div',
        { class: 'json-leaf' },
        label,
        h('span', { class: 'json-string', text: JSON.stringify(value.value) }),
      );
    case 'number':
      return h('div', { class: 'json-leaf' }, label, h('span', { class: 'json-number', text: value.text }));
    case 'boolean':
      return h('div', { class: 'json-leaf' }, label, h('span', { class: 'json-boolean', text: String(value.value) }));
    case 'null':
      return h('div', { class: 'json-leaf' }, label, h('span', { class: 'json-null', text: 'null' }));
    default:
      return branch(label, value, depth, budget);
  }
}

function branch(
  label: HTMLElement | null,
  value: Extract<ExactValue, { size: number }>,
  depth: number,
  budget: Budget,
): HTMLElement {
  const isArray = value.kind === 'array';
  const { size } = value;
  const [open, close] = isArray ? ['[', ']'] : ['{', '}'];
  if (size === 0)
    return h('div', { class: 'json-leaf' }, label, h('span', { class: 'json-punct', text: open + close }));

  // Collapsed: `key: [ 3 items ]`. Open: `key: [`, the children, then `]` on its own line.
  const collapsed = h(
    'span',
    { class: 'json-collapsed' },
    h('span', { class: 'json-count', text: ` ${count(size, isArray)} ` }),
    close,
  );
  const details = h(
    'details',
    { class: 'json-node' },
    h('summary', {}, label, h('span', { class: 'json-punct', text: open }), collapsed),
  );
  let built = false;
  const build = (stepBudget: Budget) => {
    if (built) return;
    built = true;
    const children = h('div', { class: 'json-children' });
    const childAt = (index: number): readonly [string | undefined, ExactValue] => value.child(index);
    appendStep(children, size, 0, childAt, depth + 1, stepBudget);
    details.append(children, h('div', { class: 'json-punct', text: close }));
  };

  if (depth === 0 || (depth < OPEN_DEPTH && size <= OPEN_MAX_CHILDREN && budget.nodes >= size)) {
    details.open = true;
    build(budget);
  }
  // Opened by the reader: build now, with a fresh budget for small children to open themselves.
  details.addEventListener('toggle', () => details.open && build({ nodes: NODE_BUDGET }));
  return details;
}

function longString(label: HTMLElement | null, value: string): HTMLElement {
  const text = h('span', {
    class: 'json-string',
    text: `${JSON.stringify(value.slice(0, LONG_STRING)).slice(0, -1)}…`,
  });
  const all: HTMLButtonElement = h('button', {
    class: 'more',
    text: `Show all ${value.length} characters`,
    attrs: { type: 'button' },
    on: {
      click: () => {
        text.textContent = JSON.stringify(value);
        all.remove();
      },
    },
  });
  return h('div', { class: 'json-leaf' }, label, text, ' ', all);
}

function appendStep(
  container: HTMLElement,
  size: number,
  from: number,
  childAt: (index: number) => readonly [string | undefined, ExactValue],
  depth: number,
  budget: Budget,
): void {
  const end = Math.min(size, from + STEP);
  for (let index = from; index < end; index++) {
    const [key, child] = childAt(index);
    container.append(node(key, child, depth, budget));
  }
  if (end === size) return;
  const left = size - end;
  const more: HTMLButtonElement = h('button', {
    class: 'more',
    text: `Show ${Math.min(STEP, left)} more (${left} not shown)`,
    attrs: { type: 'button' },
    on: {
      click: () => {
        more.remove();
        appendStep(container, size, end, childAt, depth, { nodes: NODE_BUDGET });
        // The button is gone: keep keyboard focus nearby (the next "Show more", else the new children).
        const target =
          container.querySelector<HTMLElement>(':scope > .more') ??
          container.children[end]?.querySelector<HTMLElement>('summary');
        if (target) target.focus();
        else {
          container.tabIndex = -1;
          container.focus();
        }
      },
    },
  });
  container.append(more);
}
