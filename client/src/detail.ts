import type { CapturedRequest, ParamMap } from '../../src/capture/captured-request.js';
import { replayUrl } from '../../src/capture/to-curl.js';
import { h } from './dom.js';
import { bodyBytes, formatBytes, hexDump, utc } from './format.js';
import { jsonTree } from './json-tree.js';

export interface DetailActions {
  copyCurl(request: CapturedRequest): void;
  copyJson(request: CapturedRequest): void;
  downloadBody(request: CapturedRequest): void;
}

function section(title: string, ...content: Array<Node | null>): HTMLElement {
  return h('section', { class: 'detail-section' }, h('h3', { text: title }), ...content);
}

function pairsTable(caption: string, pairs: Array<[string, string]>): HTMLElement {
  const body = h('tbody');
  for (const [name, value] of pairs) body.append(h('tr', {}, h('th', { attrs: { scope: 'row' }, text: name }), h('td', { text: value })));
  return h('table', { class: 'pairs' }, h('caption', { class: 'offscreen', text: caption }), body);
}

function paramPairs(params: ParamMap): Array<[string, string]> {
  return Object.entries(params).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((v): [string, string] => [name, v]));
}

/** The selected request, every detail as text. */
export function renderDetail(request: CapturedRequest, receiverUrl: string, actions: DetailActions): HTMLElement {
  const fullUrl = replayUrl(request, receiverUrl);
  const facts: Array<[string, string]> = [
    ['Time', utc(request.receivedAt)],
    ['From', request.remoteAddress],
    ['Size', `${formatBytes(request.size)}${request.truncated ? ` (truncated: ${formatBytes(request.storedSize)} kept)` : ''}`],
    ['Content type', request.contentType ?? '—'],
    ['Sequence', `#${request.seq}`],
  ];

  const header = h(
    'header',
    { class: 'detail-head' },
    h('div', { class: 'detail-title' }, h('span', { class: `method method-${request.method.toLowerCase()}`, text: request.method }), h('code', { class: 'detail-url', text: fullUrl })),
    h(
      'div',
      { class: 'actions' },
      h('button', { text: 'Copy as cURL', attrs: { type: 'button', 'aria-keyshortcuts': 'c' }, on: { click: () => actions.copyCurl(request) } }),
      h('button', { text: 'Copy JSON', attrs: { type: 'button' }, on: { click: () => actions.copyJson(request) } }),
      request.storedSize > 0 ? h('button', { text: 'Download body', attrs: { type: 'button' }, on: { click: () => actions.downloadBody(request) } }) : null,
    ),
  );

  const query = paramPairs(request.query);
  const parts: HTMLElement[] = [header, pairsTable('Facts', facts)];
  if (request.truncated) {
    parts.push(h('p', { class: 'warning', text: `Body truncated: the sender sent ${formatBytes(request.size)}, the first ${formatBytes(request.storedSize)} are kept.` }));
  }
  if (query.length > 0) parts.push(section(`Query (${query.length})`, pairsTable('Query parameters', query)));
  parts.push(section(`Headers (${request.headers.length})`, pairsTable('Headers', request.headers)));
  if (request.form) parts.push(section('Form fields', pairsTable('Form fields', paramPairs(request.form))));
  if (request.isJson) {
    try {
      parts.push(section('JSON body', jsonTree(JSON.parse(request.body))));
    } catch {
      // isJson comes from the server; a body it flagged always parses. Show the raw body regardless.
    }
  }
  parts.push(section(rawTitle(request), rawBody(request)));
  return h('article', { class: 'detail', attrs: { 'aria-label': `${request.method} request #${request.seq}` } }, ...parts);
}

function rawTitle(request: CapturedRequest): string {
  if (request.storedSize === 0) return 'Body (empty)';
  return request.bodyEncoding === 'base64' ? `Body (binary, ${formatBytes(request.storedSize)})` : `Raw body (${formatBytes(request.storedSize)})`;
}

function rawBody(request: CapturedRequest): HTMLElement {
  if (request.storedSize === 0) return h('p', { class: 'muted', text: 'No body.' });
  if (request.bodyEncoding === 'utf8') return h('pre', { class: 'raw', text: request.body });
  return h(
    'div',
    {},
    h('p', { class: 'muted', text: 'Not valid UTF-8: shown as hex, and as base64 below.' }),
    h('pre', { class: 'raw hex', text: hexDump(bodyBytes(request)) }),
    h('details', {}, h('summary', { text: 'Base64' }), h('pre', { class: 'raw', text: request.body })),
  );
}
