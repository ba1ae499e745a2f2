import type { CapturedRequest } from '../../src/shared/captured-request.js';
import { h } from './dom.js';
import { bodyBytes, formatBytes, hexDump } from './format.js';
import { parseExact } from './exact-json.js';
import { jsonTree } from './json-tree.js';
import { looksLikeXml, prettyXml } from './xml.js';

/** Bodies longer than this (characters) are shown cut until the reader asks for all of it. */
export const LARGE_BODY = 100 * 1024;
/** How much of a large body the raw view shows at first. */
const PREVIEW = 16 * 1024;

export interface BodyActions {
  copy(text: string, what: string): void;
  downloadBody(request: CapturedRequest): void;
}

interface View {
  name: string;
  build(): HTMLElement;
}

let nextId = 0;

/** The body section: tabs for the structured and the raw view (one at a time), copy and download. */
export function bodySection(request: CapturedRequest, actions: BodyActions): HTMLElement {
  if (request.storedSize === 0) return h('section', { class: 'detail-section' }, h('h3', { text: 'Body (empty)' }), h('p', { class: 'muted', text: 'No body.' }));
  const views = bodyViews(request);
  const title = h('h3', { text: bodyTitle(request, views) });

  const tools = h(
    'div',
    { class: 'actions' },
    h('button', { text: request.bodyEncoding === 'base64' ? 'Copy base64' : 'Copy body', attrs: { type: 'button' }, on: { click: () => actions.copy(request.body, 'Body') } }),
    h('button', { text: 'Download body', attrs: { type: 'button' }, on: { click: () => actions.downloadBody(request) } }),
  );
  const head = h('div', { class: 'section-head' }, title, tools);
  if (views.length === 1) return h('section', { class: 'detail-section' }, head, (views[0] as View).build());
  return h('section', { class: 'detail-section' }, head, tabs(views));
}

function bodyTitle(request: CapturedRequest, views: View[]): string {
  const kind = request.bodyEncoding === 'base64' && bodyText(request) === undefined ? 'binary, ' : request.isJson ? 'JSON, ' : views.some((view) => view.name === 'Pretty') ? 'XML, ' : '';
  return `Body (${kind}${formatBytes(request.storedSize)})`;
}

/**
 * The body as text when its bytes are UTF-8. The server stores valid UTF-8 as base64 too when
 * JSON escaping would cost more than base64 (many quotes or control characters).
 */
export function bodyText(request: CapturedRequest): string | undefined {
  if (request.bodyEncoding === 'utf8') return request.body;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bodyBytes(request));
  } catch {
    return undefined;
  }
}

function bodyViews(request: CapturedRequest): View[] {
  const raw: View = { name: 'Raw', build: () => rawView(request) };
  if (request.bodyEncoding === 'base64') return [raw];
  if (request.isJson) return [{ name: 'Tree', build: () => jsonView(request) }, raw];
  if (!request.truncated && looksLikeXml(request.contentType, request.body)) {
    // Small bodies are tried now, so a body that does not parse gets no "Pretty" tab.
    if (request.body.length <= LARGE_BODY) {
      const pretty = prettyXml(request.body);
      if (pretty !== undefined) return [{ name: 'Pretty', build: () => textBlock(pretty) }, raw];
    } else {
      return [raw, { name: 'Pretty', build: () => textBlock(prettyXml(request.body) ?? 'Not well-formed XML: see the raw body.') }];
    }
  }
  return [raw];
}

function jsonView(request: CapturedRequest): HTMLElement {
  try {
    return jsonTree(parseExact(request.body));
  } catch {
    // isJson comes from the server; a body it flagged always parses.
    return h('p', { class: 'muted', text: 'Could not parse this body: see the raw view.' });
  }
}

/** Text in a scrollable block; keyboard users can focus it to scroll. */
function textBlock(text: string, extraClass = ''): HTMLElement {
  return h('pre', { class: `raw ${extraClass}`.trim(), text, attrs: { tabindex: '0' } });
}

function rawView(request: CapturedRequest): HTMLElement {
  const text = request.bodyEncoding === 'base64' ? bodyText(request) : undefined;
  if (text !== undefined) {
    // Valid UTF-8 kept as base64 only to bound its stored size: it reads as text.
    return h('div', {}, h('p', { class: 'muted', text: 'Text with many characters JSON must escape: stored as base64, shown as text.' }), textBlock(text.length <= LARGE_BODY ? text : `${text.slice(0, PREVIEW)}…`));
  }
  if (request.bodyEncoding === 'base64') {
    return h(
      'div',
      {},
      h('p', { class: 'muted', text: 'Not valid UTF-8: shown as hex, and as base64 below.' }),
      textBlock(hexDump(bodyBytes(request)), 'hex'),
      h('details', {}, h('summary', { text: 'Base64' }), textBlock(request.body)),
    );
  }
  if (request.body.length <= LARGE_BODY) return textBlock(request.body);
  // A large body is cut until asked for: laying out a megabyte of text takes a while.
  const block = textBlock(`${request.body.slice(0, PREVIEW)}…`);
  const all: HTMLButtonElement = h('button', {
    class: 'show-all',
    text: `Show all ${formatBytes(request.storedSize)}`,
    attrs: { type: 'button' },
    on: {
      click: () => {
        block.textContent = request.body;
        all.remove();
        block.focus();
      },
    },
  });
  return h('div', {}, h('p', { class: 'muted', text: `Showing the first ${formatBytes(PREVIEW)}.` }), block, all);
}

/** WAI-ARIA tabs: one tab stop, arrow keys between tabs, each panel built when first shown. */
function tabs(views: View[]): HTMLElement {
  const id = `body-${++nextId}`;
  const list = h('div', { class: 'tabs', attrs: { role: 'tablist', 'aria-label': 'Body view' } });
  const panels: HTMLElement[] = [];
  const buttons: HTMLButtonElement[] = [];
  const choose = (index: number, focus: boolean) => {
    views.forEach((view, i) => {
      const selected = i === index;
      const button = buttons[i] as HTMLButtonElement;
      const panel = panels[i] as HTMLElement;
      button.setAttribute('aria-selected', String(selected));
      button.tabIndex = selected ? 0 : -1;
      panel.hidden = !selected;
      if (selected && !panel.firstChild) panel.append(view.build());
    });
    if (focus) buttons[index]?.focus();
  };
  views.forEach((view, index) => {
    const button = h('button', {
      class: 'tab',
      text: view.name,
      attrs: { type: 'button', role: 'tab', id: `${id}-tab-${index}`, 'aria-controls': `${id}-panel-${index}` },
      on: {
        click: () => choose(index, false),
        keydown: (event) => {
          const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
          if (step === 0 && event.key !== 'Home' && event.key !== 'End') return;
          event.preventDefault();
          event.stopPropagation();
          const target = event.key === 'Home' ? 0 : event.key === 'End' ? views.length - 1 : (index + step + views.length) % views.length;
          choose(target, true);
        },
      },
    });
    buttons.push(button);
    list.append(button);
    panels.push(h('div', { class: 'tab-panel', attrs: { role: 'tabpanel', id: `${id}-panel-${index}`, 'aria-labelledby': `${id}-tab-${index}` } }));
  });
  choose(0, false);
  return h('div', { class: 'body-tabs' }, list, ...panels);
}
