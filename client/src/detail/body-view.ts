import type { CapturedRequest } from '../../../src/shared/schemas/captured-request.js';
import { h } from '../dom.js';
import { bodyBytes, formatBytes, hexDump } from '../format.js';
import { parseExact } from './exact-json.js';
import { jsonTree } from './json-tree.js';
import { looksLikeXml } from './xml-sniff.js';

type XmlModule = typeof import('./xml.js');
/** The XML view (its parser is about 20 KB), once loaded. */
let xml: XmlModule | undefined;
let xmlLoading: Promise<XmlModule> | undefined;
const loadXml = (): Promise<XmlModule> => (xmlLoading ??= import('./xml.js').then((module) => (xml = module)));

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

/** A text body that may be XML: it gets a Pretty tab, once the XML view is loaded. */
function mayBeXml(request: CapturedRequest): boolean {
  return (
    request.bodyEncoding === 'utf8' &&
    !request.isJson &&
    !request.truncated &&
    looksLikeXml(request.contentType, request.body)
  );
}

/**
 * The body section: tabs for the structured and the raw view (one at a time), copy and download.
 * A body that may be XML waits for the XML view to load (the first time only), then shows.
 */
export function bodySection(request: CapturedRequest, actions: BodyActions): HTMLElement {
  if (request.storedSize === 0)
    return h(
      'section',
      { class: 'detail-section' },
      h('h3', { text: 'Body (empty)' }),
      h('p', { class: 'muted', text: 'No body.' }),
    );
  if (mayBeXml(request) && xml === undefined) {
    const waiting = h(
      'section',
      { class: 'detail-section' },
      h('p', { class: 'muted', text: 'Loading the XML view…' }),
    );
    const show = () => waiting.replaceWith(filledSection(request, actions));
    // Not loaded (offline after an update, say): the raw view alone.
    void loadXml().then(show, show);
    return waiting;
  }
  return filledSection(request, actions);
}

function filledSection(request: CapturedRequest, actions: BodyActions): HTMLElement {
  const views = bodyViews(request);
  const title = h('h3', { text: bodyTitle(request, views) });

  const tools = h(
    'div',
    { class: 'actions' },
    h('button', {
      text: request.bodyEncoding === 'base64' ? 'Copy base64' : 'Copy body',
      attrs: { type: 'button' },
      on: { click: () => actions.copy(request.body, 'Body') },
    }),
    h('button', {
      text: 'Download body',
      attrs: { type: 'button' },
      on: { click: () => actions.downloadBody(request) },
    }),
  );
  const head = h('div', { class: 'section-head' }, title, tools);
  if (views.length === 1) return h('section', { class: 'detail-section' }, head, (views[0] as View).build());
  return h('section', { class: 'detail-section' }, head, tabs(views));
}

function bodyTitle(request: CapturedRequest, views: View[]): string {
  const coding = request.bodyEncoding === 'base64' ? contentCoding(request) : undefined;
  const kind =
    coding !== undefined
      ? `${coding}-compressed, `
      : request.bodyEncoding === 'base64' && bodyText(request) === undefined
        ? 'binary, '
        : request.isJson
          ? 'JSON, '
          : views.some((view) => view.name === 'Pretty')
            ? 'XML, '
            : '';
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
  const coding = contentCoding(request);
  // A compressed body: decoded first, marked as such; the raw bytes beside it.
  if (coding !== undefined && request.bodyEncoding === 'base64')
    return [{ name: 'Decoded', build: () => decodedView(request, coding) }, raw];
  if (request.bodyEncoding === 'base64') return [raw];
  if (request.isJson) return [{ name: 'Tree', build: () => jsonView(request) }, raw];
  const prettyXml = mayBeXml(request) ? xml?.prettyXml : undefined;
  if (prettyXml) {
    // Small bodies are tried now, so a body that does not parse gets no "Pretty" tab.
    if (request.body.length <= LARGE_BODY) {
      const pretty = prettyXml(request.body);
      if (pretty !== undefined) return [{ name: 'Pretty', build: () => textBlock(pretty) }, raw];
    } else {
      return [
        raw,
        { name: 'Pretty', build: () => textBlock(prettyXml(request.body) ?? 'Not well-formed XML: see the raw body.') },
      ];
    }
  }
  return [raw];
}

/** The body's content coding (`gzip`, `deflate`, `br`), from its Content-Encoding header. */
function contentCoding(request: CapturedRequest): string | undefined {
  const value = request.headers
    .find(([name]) => name.toLowerCase() === 'content-encoding')?.[1]
    .trim()
    .toLowerCase();
  return value && value !== 'identity' ? value : undefined;
}

/** The Decoded tab: filled once decoded (decoded-body.ts, loaded when first needed). */
function decodedView(request: CapturedRequest, coding: string): HTMLElement {
  const panel = h('div', {}, h('p', { class: 'muted', text: `Decoding ${coding}…` }));
  void import('./decoded-body.js').then(
    async ({ canDecode, decodeBody, MAX_DECODED_BYTES }) => {
      const name = coding === 'x-gzip' ? 'gzip' : coding;
      if (!canDecode(name)) {
        const why =
          name === 'br' ? 'this browser cannot decode Brotli (br) bodies' : `this page cannot decode “${coding}”`;
        return panel.replaceChildren(
          h('p', {
            class: 'muted',
            text: `Not decoded: ${why}. Download the body to decode it (brotli -d, gunzip…), or see its bytes in Raw.`,
          }),
        );
      }
      const decoded = await decodeBody(bodyBytes(request), name);
      const notes = [
        `Decoded from ${name}: ${formatBytes(decoded.bytes.length)} from the ${formatBytes(request.storedSize)} stored.`,
      ];
      if (decoded.cut) notes.push(`Cut at ${formatBytes(MAX_DECODED_BYTES)}: the decoded body is larger.`);
      if (decoded.problem !== undefined)
        notes.push(
          `Decoding stopped early${request.truncated ? ' (the stored body was cut short)' : ''}: ${decoded.problem}.`,
        );
      if (request.truncated && decoded.problem === undefined)
        notes.push('The stored body was cut short: the end may be missing.');
      let text: string | undefined;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(decoded.bytes);
      } catch {
        text = undefined;
      }
      let content: HTMLElement;
      if (text === undefined) content = textBlock(hexDump(decoded.bytes), 'hex');
      else {
        let tree: HTMLElement | undefined;
        try {
          tree = !decoded.cut && text.length <= LARGE_BODY * 10 ? jsonTree(parseExact(text)) : undefined;
        } catch {
          tree = undefined;
        }
        content = tree ?? textBlock(text.length <= LARGE_BODY ? text : `${text.slice(0, PREVIEW)}…`);
      }
      panel.replaceChildren(h('p', { class: 'decoded-note', text: notes.join(' ') }), content);
    },
    () =>
      panel.replaceChildren(
        h('p', { class: 'muted', text: 'Not decoded: the decoder did not load. See the bytes in Raw.' }),
      ),
  );
  return panel;
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
    return h(
      'div',
      {},
      h('p', { class: 'muted', text: 'Text with many characters JSON must escape: stored as base64, shown as text.' }),
      textBlock(text.length <= LARGE_BODY ? text : `${text.slice(0, PREVIEW)}…`),
    );
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
          const target =
            event.key === 'Home'
              ? 0
              : event.key === 'End'
                ? views.length - 1
                : (index + step + views.length) % views.length;
          choose(target, true);
        },
      },
    });
    buttons.push(button);
    list.append(button);
    panels.push(
      h('div', {
        class: 'tab-panel',
        attrs: { role: 'tabpanel', id: `${id}-panel-${index}`, 'aria-labelledby': `${id}-tab-${index}` },
      }),
    );
  });
  choose(0, false);
  return h('div', { class: 'body-tabs' }, list, ...panels);
}
