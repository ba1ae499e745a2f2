import type { CapturedRequest, MultipartPart, ParamMap } from '../../../src/shared/schemas/captured-request.js';
import { REDACTED } from '../../../src/shared/redact.js';
import { replayUrl } from '../../../src/shared/to-curl.js';
import { bodySection, type BodyActions } from './body-view.js';
import { download, h } from '../dom.js';
import { bodyBytes, formatBytes, localDateTimeParts, utc } from '../format.js';

export interface DetailActions extends BodyActions {
  copyCurl(request: CapturedRequest): void;
  copyJson(request: CapturedRequest): void;
  deleteRequest(request: CapturedRequest): void;
}

/** A query longer than this is folded in the detail's title (it is listed in full below anyway). */
const LONG_QUERY = 80;
/** Rows shown per step in a name/value table: a 1 MB form body can hold 250,000 fields. */
const PAIRS_STEP = 200;

function section(title: string, ...content: Array<Node | null>): HTMLElement {
  return h('section', { class: 'detail-section' }, h('h3', { text: title }), ...content);
}

/** Name/value pairs, pulled a step at a time, and how many there are in all. */
interface Pairs {
  count: number;
  next: Iterator<[string, string]>;
}

function listPairs(pairs: Array<[string, string]>): Pairs {
  return { count: pairs.length, next: pairs[Symbol.iterator]() };
}

/** A query or form as pairs, repeated names once per value; walked lazily (a form can hold 250,000 fields). */
function paramPairs(params: ParamMap): Pairs {
  const names = Object.keys(params);
  let count = 0;
  for (const name of names) {
    const value = params[name] as string | string[];
    count += Array.isArray(value) ? value.length : 1;
  }
  function* walk(): Generator<[string, string]> {
    for (const name of names) {
      const value = params[name] as string | string[];
      if (Array.isArray(value)) for (const item of value) yield [name, item];
      else yield [name, value];
    }
  }
  return { count, next: walk() };
}

/** A value cell; a value a kept endpoint redacted reads as such, its stored text ("[redacted]") kept. */
function valueCell(value: string, redacted: boolean): HTMLElement {
  if (!redacted) return h('td', { class: 'value', text: value });
  return h(
    'td',
    { class: 'value', title: 'Kept endpoints store secret headers as [redacted]: the real value was never stored.' },
    h('span', { class: 'redacted', text: value }),
    ' ',
    h('span', { class: 'redacted-note', text: 'redacted before storage' }),
  );
}

/**
 * Name/value rows, a step at a time; with `copy`, each value gets its own copy button.
 * `redacted`: names (lower case) whose `[redacted]` values mark a value that was never stored.
 */
function pairsTable(
  caption: string,
  pairs: Pairs,
  copy?: (value: string, what: string) => void,
  redacted?: ReadonlySet<string>,
  cells?: ReadonlyMap<string, HTMLElement>,
): HTMLElement {
  const body = h('tbody');
  const table = h('table', { class: 'pairs' }, h('caption', { class: 'offscreen', text: caption }), body);
  let shown = 0;
  const appendRows = (): HTMLElement | null => {
    for (let step = 0; step < PAIRS_STEP; step++) {
      const next = pairs.next.next();
      if (next.done) break;
      const [name, value] = next.value;
      const cell =
        cells?.get(name) ?? valueCell(value, value === REDACTED && redacted?.has(name.toLowerCase()) === true);
      const row = h('tr', {}, h('th', { attrs: { scope: 'row' }, text: name }), cell);
      if (copy) {
        const button = h('button', {
          class: 'copy-value',
          text: 'Copy',
          attrs: { type: 'button', 'aria-label': `Copy ${name} value` },
          on: { click: () => copy(value, `${name} value`) },
        });
        row.append(h('td', { class: 'copy-cell' }, button));
      }
      body.append(row);
      shown++;
    }
    const left = pairs.count - shown;
    if (left <= 0) return null;
    const more: HTMLButtonElement = h('button', {
      class: 'more',
      text: `Show ${Math.min(PAIRS_STEP, left)} more (${left} not shown)`,
      attrs: { type: 'button' },
      on: {
        click: () => {
          const next = appendRows();
          more.replaceWith(next ?? '');
          // Keep keyboard focus near: on the next step's button, else on the table.
          if (next) next.focus();
          else {
            table.tabIndex = -1;
            table.focus();
          }
        },
      },
    });
    return more;
  };
  const more = appendRows();
  return more ? h('div', {}, table, more) : table;
}

/** A time as pieces, each kept on one line. */
function timeCell(pieces: string[]): HTMLElement {
  return h(
    'td',
    { class: 'value' },
    ...pieces.flatMap((piece, index) => [index > 0 ? ' ' : null, h('span', { class: 'nowrap', text: piece })]),
  );
}

/** The full URL, with a long query string folded behind a toggle. */
function urlLine(fullUrl: string): HTMLElement {
  const queryStart = fullUrl.indexOf('?');
  const code = h('code', { class: 'detail-url', text: fullUrl });
  if (queryStart === -1 || fullUrl.length - queryStart <= LONG_QUERY) return code;
  const folded = `${fullUrl.slice(0, queryStart + 40)}…`;
  code.textContent = folded;
  const toggle: HTMLButtonElement = h('button', {
    class: 'link-button',
    text: `Show the full query (${fullUrl.length - queryStart - 1} characters)`,
    attrs: { type: 'button', 'aria-expanded': 'false' },
    on: {
      click: () => {
        const open = toggle.getAttribute('aria-expanded') !== 'true';
        toggle.setAttribute('aria-expanded', String(open));
        code.textContent = open ? fullUrl : folded;
        toggle.textContent = open
          ? 'Fold the query'
          : `Show the full query (${fullUrl.length - queryStart - 1} characters)`;
      },
    },
  });
  return h('div', { class: 'url-fold' }, code, toggle);
}

/** A multipart body's parts: fields with their text, files with a download of their own bytes. */
function partsTable(request: CapturedRequest, parts: MultipartPart[]): HTMLElement {
  const rows = parts.map((part, index) => {
    const kind = part.filename === null ? 'field' : `file ${part.filename || '(no name)'}`;
    const size = `${formatBytes(part.size)}${part.truncated ? ', cut short' : ''}`;
    let content: Node;
    if (part.filename === null)
      content = h('code', { class: 'part-text', text: part.text ?? '(text not kept: over 64 KiB of fields)' });
    else if (part.offset === null)
      content = h('span', { class: 'muted', text: 'bytes not located in the stored body' });
    else {
      const { offset } = part;
      content = h('button', {
        text: 'Download',
        attrs: { type: 'button', 'aria-label': `Download part ${index + 1}, ${part.filename || part.name}` },
        on: {
          click: () =>
            download(
              part.filename || `part-${index + 1}`,
              bodyBytes(request).slice(offset, offset + part.size) as BlobPart,
              part.contentType ?? 'application/octet-stream',
            ),
        },
      });
    }
    return h(
      'tr',
      {},
      h('th', { attrs: { scope: 'row' }, text: part.name }),
      h('td', { text: kind }),
      h('td', { text: part.contentType ?? '—' }),
      h('td', { text: size }),
      h('td', {}, content),
    );
  });
  const head = h(
    'tr',
    {},
    ...['Name', 'Kind', 'Type', 'Size', 'Content'].map((title) => h('th', { attrs: { scope: 'col' }, text: title })),
  );
  return h(
    'div',
    { class: 'table-scroll' },
    h(
      'table',
      { class: 'parts' },
      h('caption', { class: 'offscreen', text: 'Multipart parts' }),
      h('thead', {}, head),
      h('tbody', {}, ...rows),
    ),
  );
}

/** Sections built by their own modules, which keep updating them while the detail is open. */
export interface DetailPanels {
  /** What the sender got and what chose it: a cell of the facts, and a section of its own. */
  answer: { fact: HTMLElement; section: HTMLElement };
  /** What forwarders got for this request. */
  forwarded: HTMLElement;
  /** Checking the request's signature. */
  verify: HTMLElement;
}

/** The selected request, every detail as text. */
export function renderDetail(
  request: CapturedRequest,
  receiverUrl: string,
  actions: DetailActions,
  panels: DetailPanels,
): HTMLElement {
  const fullUrl = replayUrl(request, receiverUrl);
  const local = localDateTimeParts(request.receivedAt);
  const utcText = utc(request.receivedAt);
  const facts: Array<[string, string]> = [
    ['Time', local.join(' ')],
    ['UTC', utcText],
    ['From', request.remoteAddress],
    [
      'Size',
      `${formatBytes(request.size)}${request.truncated ? ` (truncated: ${formatBytes(request.storedSize)} kept)` : ''}`,
    ],
    ['Content type', request.contentType ?? '—'],
  ];
  facts.push(['Answered', '']);
  facts.push(['Sequence', `#${request.seq}`]);

  const header = h(
    'header',
    { class: 'detail-head' },
    h(
      'h2',
      { class: 'detail-title' },
      h('span', { class: `method method-${request.method.toLowerCase()}`, text: request.method }),
      h('span', { class: 'offscreen', text: ` request #${request.seq}` }),
    ),
    urlLine(fullUrl),
    h(
      'div',
      { class: 'actions' },
      h('button', {
        text: 'Copy as cURL',
        attrs: { type: 'button', 'aria-keyshortcuts': 'c' },
        on: { click: () => actions.copyCurl(request) },
      }),
      h('button', { text: 'Copy JSON', attrs: { type: 'button' }, on: { click: () => actions.copyJson(request) } }),
      h('button', {
        text: 'Delete',
        class: 'danger',
        attrs: { type: 'button', 'aria-label': `Delete request #${request.seq}` },
        on: { click: () => actions.deleteRequest(request) },
      }),
    ),
  );

  const query = paramPairs(request.query);
  const parts: HTMLElement[] = [
    header,
    h('p', {
      class: 'gone warning',
      text: 'No longer stored on the server: newer requests pushed it out. This copy stays here until you pick another request.',
      attrs: { hidden: '' },
    }),
    // The times in pieces that never break inside ("5:20:01.123 PM", not "…123 P / M").
    pairsTable(
      'Facts',
      listPairs(facts),
      undefined,
      undefined,
      new Map([
        ['Time', timeCell(local)],
        ['UTC', timeCell([utcText.slice(0, 10), utcText.slice(11)])],
        ['Answered', panels.answer.fact],
      ]),
    ),
    panels.answer.section,
    panels.forwarded,
  ];
  if (request.truncated) {
    parts.push(
      h('p', {
        class: 'warning',
        text: `Body truncated: the sender sent ${formatBytes(request.size)}, the first ${formatBytes(request.storedSize)} are kept.`,
      }),
    );
  }
  if (query.count > 0)
    parts.push(section(`Query (${query.count})`, pairsTable('Query parameters', query, actions.copy)));
  const redacted = new Set((request.redacted ?? []).map((name) => name.toLowerCase()));
  parts.push(
    section(
      `Headers (${request.headers.length})`,
      pairsTable('Headers', listPairs(request.headers), actions.copy, redacted),
    ),
  );
  if (request.form) {
    const form = paramPairs(request.form);
    parts.push(section(`Form fields (${form.count})`, pairsTable('Form fields', form, actions.copy)));
  }
  if (request.parts) parts.push(section(`Parts (${request.parts.length})`, partsTable(request, request.parts)));
  if (request.omitted.length > 0) {
    parts.push(
      h('p', {
        class: 'muted',
        text: `Not parsed, to keep the record small: ${request.omitted.join(', ')} (the body is complete below).`,
      }),
    );
  }
  parts.push(bodySection(request, actions), panels.verify);
  return h(
    'article',
    { class: 'detail', attrs: { 'aria-label': `${request.method} request #${request.seq}` } },
    ...parts,
  );
}
