// What forwarders (`hookwatch forward`) got from their targets, per captured request. Everything in
// a result comes from a forwarder and its target: it is shown as text only, like captured data.
import type { ForwardedMessage } from '../../../src/shared/protocol.js';
import { h } from '../dom.js';
import { formatBytes } from '../format.js';

/** `200`, or `failed` when the forward did not get an answer. */
function describeOutcome(result: ForwardedMessage): string {
  return result.status === undefined ? 'failed' : String(result.status);
}

/** A colour for the outcome: 2xx/3xx fine, 4xx a warning, 5xx or no answer bad. */
function toneOf(result: ForwardedMessage): 'ok' | 'warn' | 'bad' {
  if (result.status === undefined || result.status >= 500) return 'bad';
  return result.status >= 400 ? 'warn' : 'ok';
}

function describeDuration(ms: number): string {
  return `${Math.round(ms)} ms`;
}

/** `forwarded to http://localhost:3000/hook → 200 in 12 ms` */
export function describeResult(result: ForwardedMessage): string {
  if (result.status === undefined)
    return `forwarded to ${result.target} → failed after ${describeDuration(result.durationMs)}: ${result.error ?? 'no answer'}`;
  return `forwarded to ${result.target} → ${result.status} in ${describeDuration(result.durationMs)}`;
}

/**
 * The list row's small "→ 200" badge for the newest result, or null. It stays short so the path
 * keeps its room; the tooltip lists every result, and the detail shows them all.
 */
export function renderBadge(results: readonly ForwardedMessage[]): HTMLElement | null {
  const newest = results.at(-1);
  if (!newest) return null;
  const count = results.length > 1 ? ` ${results.length} times, newest` : '';
  return h(
    'span',
    { class: `fwd-badge fwd-${toneOf(newest)}`, title: results.map(describeResult).join('\n') },
    h('span', { class: 'offscreen', text: `forwarded${count} ` }),
    `→ ${describeOutcome(newest)}`,
  );
}

/** The answer's body as text: UTF-8 as is, other bytes as base64 with a note. */
function describeBody(result: ForwardedMessage): { note: string; text: string } {
  const cut = result.bodyTruncated ? ', the first 4 KB' : '';
  if (result.bodyEncoding === 'utf8') return { note: `Body${cut}`, text: result.body };
  let bytes: Uint8Array;
  try {
    bytes = Uint8Array.from(atob(result.body), (char) => char.charCodeAt(0));
  } catch {
    return { note: 'Body (not valid base64)', text: result.body };
  }
  try {
    return { note: `Body${cut}`, text: new TextDecoder('utf-8', { fatal: true }).decode(bytes) };
  } catch {
    return { note: `Body (binary, ${formatBytes(bytes.length)}${cut}, as base64)`, text: result.body };
  }
}

function renderAnswer(result: ForwardedMessage): HTMLElement {
  const rows = result.headers.map(([name, value]) =>
    h('tr', {}, h('th', { attrs: { scope: 'row' }, text: name }), h('td', { class: 'value', text: value })),
  );
  const headers =
    rows.length > 0
      ? h(
          'table',
          { class: 'pairs' },
          h('caption', { class: 'offscreen', text: 'Answer headers' }),
          h('tbody', {}, ...rows),
        )
      : h('p', { class: 'muted', text: 'No headers.' });
  const body = describeBody(result);
  const bodyView =
    result.body === ''
      ? h('p', { class: 'muted', text: result.bodyTruncated ? 'Body not shown.' : 'No body.' })
      : h(
          'div',
          {},
          h('p', { class: 'muted', text: body.note }),
          h('pre', { class: 'raw', text: body.text, attrs: { tabindex: '0' } }),
        );
  const summary = `The answer: ${result.headers.length} header${result.headers.length === 1 ? '' : 's'}${result.body === '' ? ', no body' : ', body'}`;
  return h('details', { class: 'fwd-answer' }, h('summary', { text: summary }), headers, bodyView);
}

function renderResult(result: ForwardedMessage): HTMLElement {
  const line = h(
    'p',
    { class: 'fwd-line' },
    'forwarded to ',
    h('code', { text: result.target }),
    ' → ',
    h('strong', { class: `fwd-${toneOf(result)}`, text: describeOutcome(result) }),
  );
  if (result.status === undefined)
    line.append(` after ${describeDuration(result.durationMs)}: ${result.error ?? 'no answer'}`);
  else line.append(` in ${describeDuration(result.durationMs)}`);
  return h('li', {}, line, result.status === undefined ? null : renderAnswer(result));
}

/**
 * The detail's "Forwarded" section. Results can arrive while it is open: update() adds them and
 * keeps the items already shown, so an answer the reader expanded stays expanded.
 */
export class ForwardedView {
  readonly element: HTMLElement;
  private readonly title = h('h3');
  private readonly list = h('ul', { class: 'fwd-list' });
  private readonly items = new Map<ForwardedMessage, HTMLElement>();

  constructor(results: readonly ForwardedMessage[]) {
    this.element = h('section', { class: 'detail-section fwd-section' }, this.title, this.list);
    this.update(results);
  }

  update(results: readonly ForwardedMessage[]): void {
    this.element.hidden = results.length === 0;
    this.title.textContent = `Forwarded (${results.length})`;
    const nodes = results.map((result) => this.items.get(result) ?? renderResult(result));
    this.items.clear();
    results.forEach((result, index) => this.items.set(result, nodes[index] as HTMLElement));
    this.list.replaceChildren(...nodes);
  }
}
