// The detail's "Compare" section: the open request against the one before it or any other the
// log holds, as a list of what changed (diff-requests.ts). Loaded with import() when a request is
// opened, so the first load does not carry it. Captured text goes in as text only.
import type { CapturedRequest } from '../../../src/shared/schemas/captured-request.js';
import { diffRequests, type BodyDiff, type PairLine, type RequestDiff } from '../../../src/shared/diff-requests.js';
import { h } from '../dom.js';
import { localTime, shortPath } from '../format.js';

/** Unchanged lines kept around each change in a text body; longer runs fold. */
const CONTEXT_LINES = 2;
/** Lines of a text body's diff drawn at most: two 1 MiB bodies can differ in 100,000 lines. */
const MAX_DRAWN_LINES = 2000;

const MARKS: Record<PairLine['kind'], { symbol: string; word: string }> = {
  same: { symbol: ' ', word: 'same' },
  added: { symbol: '+', word: 'added' },
  removed: { symbol: '−', word: 'removed' },
  changed: { symbol: '~', word: 'changed' },
  moved: { symbol: '↕', word: 'moved' },
};

function mark(kind: PairLine['kind']): HTMLElement {
  const { symbol, word } = MARKS[kind];
  return h(
    'span',
    { class: 'diff-mark', attrs: { 'aria-hidden': 'true' }, text: symbol },
    h('span', { class: 'offscreen', text: word }),
  );
}

function label(request: CapturedRequest): string {
  return `#${request.seq} ${request.method} ${shortPath(request)} · ${localTime(request.receivedAt)}`;
}

/** `before → after`, or the one value a line has. */
function values(line: { kind: PairLine['kind']; before?: string; after?: string }): HTMLElement {
  if (line.kind === 'changed') {
    return h(
      'span',
      { class: 'diff-values' },
      h('del', { class: 'diff-before', text: line.before ?? '' }),
      h('span', { class: 'diff-arrow', attrs: { 'aria-hidden': 'true' }, text: ' → ' }),
      h('ins', { class: 'diff-after', text: line.after ?? '' }),
    );
  }
  return h('span', { class: 'diff-values', text: line.kind === 'removed' ? (line.before ?? '') : (line.after ?? '') });
}

function pairList(title: string, lines: PairLine[]): HTMLElement {
  const changed = lines.filter((line) => line.kind !== 'same').length;
  const list = h(
    'ol',
    { class: 'diff-lines', attrs: { 'aria-label': title } },
    ...lines.map((line) =>
      h(
        'li',
        { class: `diff-line diff-${line.kind}` },
        mark(line.kind),
        h('span', { class: 'diff-name', text: line.name }),
        values(line),
      ),
    ),
  );
  return h(
    'div',
    { class: 'diff-block' },
    h('h4', { text: `${title}: ${changed === 0 ? 'no change' : `${changed} changed`}` }),
    list,
  );
}

function bodyBlock(body: BodyDiff): HTMLElement {
  const title = h('h4');
  const block = h('div', { class: 'diff-block' }, title);
  switch (body.kind) {
    case 'same':
      title.textContent = 'Body: no change';
      return block;
    case 'form':
      return pairList('Body (form fields)', body.fields);
    case 'bytes':
      title.textContent = 'Body (binary): changed';
      block.append(
        h('p', {
          text: `${body.beforeBytes} bytes before, ${body.afterBytes} now; they first differ at byte ${body.firstDifference}.`,
        }),
      );
      return block;
    case 'json': {
      title.textContent = `Body (JSON): ${body.changes.length === 0 ? 'the same values (only spacing or key order differ)' : `${body.changes.length}${body.capped ? '+' : ''} value${body.changes.length === 1 ? '' : 's'} changed`}`;
      const list = h(
        'ol',
        { class: 'diff-lines', attrs: { 'aria-label': 'Body changes' } },
        ...body.changes.map((change) =>
          h(
            'li',
            { class: `diff-line diff-${change.kind}` },
            mark(change.kind),
            h('code', { class: 'diff-name', text: change.path }),
            values(change),
          ),
        ),
      );
      block.append(list);
      if (body.capped) block.append(h('p', { class: 'muted', text: 'Only the first 500 changes are listed.' }));
      return block;
    }
    case 'text': {
      const changed = body.lines.filter((line) => line.kind !== 'same').length;
      title.textContent = `Body (text): ${changed} line${changed === 1 ? '' : 's'} changed`;
      const items: HTMLElement[] = [];
      let left = 0;
      body.lines.forEach((line, index) => {
        if (items.length >= MAX_DRAWN_LINES) return void (line.kind !== 'same' && left++);
        const near = body.lines
          .slice(Math.max(0, index - CONTEXT_LINES), index + CONTEXT_LINES + 1)
          .some((other) => other.kind !== 'same');
        if (line.kind !== 'same' || near)
          items.push(
            h(
              'li',
              { class: `diff-line diff-${line.kind}` },
              mark(line.kind),
              h('code', { class: 'diff-text', text: line.text }),
            ),
          );
        else if (items.at(-1)?.classList.contains('diff-fold') !== true)
          items.push(h('li', { class: 'diff-fold muted', text: '⋯ unchanged lines' }));
      });
      block.append(h('ol', { class: 'diff-lines diff-text-lines', attrs: { 'aria-label': 'Body lines' } }, ...items));
      if (left > 0) block.append(h('p', { class: 'muted', text: `${left} more changed lines not drawn.` }));
      if (body.capped)
        block.append(
          h('p', {
            class: 'muted',
            text: 'Too many lines to align: the changed stretch is shown as removed, then added.',
          }),
        );
      return block;
    }
  }
}

export function renderDiff(diff: RequestDiff, before: CapturedRequest, after: CapturedRequest): HTMLElement {
  const view = h('div', { class: 'diff' });
  view.append(
    h('p', {
      class: 'diff-summary',
      text: diff.same ? `No difference from #${before.seq}.` : `From #${before.seq} to #${after.seq}:`,
    }),
  );
  if (diff.same) return view;
  const line = [
    diff.method.before !== diff.method.after
      ? { kind: 'changed' as const, name: 'Method', before: diff.method.before, after: diff.method.after }
      : undefined,
    diff.path.before !== diff.path.after
      ? { kind: 'changed' as const, name: 'Path', before: diff.path.before, after: diff.path.after }
      : undefined,
  ].filter((entry) => entry !== undefined);
  if (line.length > 0) view.append(pairList('Request line', line));
  if (diff.query.some((entry) => entry.kind !== 'same')) view.append(pairList('Query', diff.query));
  view.append(pairList('Headers', diff.headers), bodyBlock(diff.body));
  return view;
}

/**
 * The section: a choice of the other request (the one before this one first) and the diff,
 * shown on demand. `others`: the requests held besides this one, oldest first.
 */
export function renderComparePanel(request: CapturedRequest, others: readonly CapturedRequest[]): HTMLElement {
  const section = h(
    'section',
    { class: 'detail-section compare', attrs: { 'aria-labelledby': `compare-title-${request.seq}` } },
    h('h3', { attrs: { id: `compare-title-${request.seq}` }, text: 'Compare' }),
  );
  if (others.length === 0) {
    section.append(h('p', { class: 'muted', text: 'No other request to compare with yet.' }));
    return section;
  }
  const previous = others.findLast((other) => other.seq < request.seq) ?? others[0];
  const select = h(
    'select',
    { attrs: { id: `compare-with-${request.seq}` } },
    ...[...others].reverse().map((other) =>
      h('option', {
        attrs: { value: String(other.seq) },
        text: `${label(other)}${other === previous ? ' (the one before)' : ''}`,
      }),
    ),
  );
  if (previous) select.value = String(previous.seq);
  const result = h('div', { class: 'compare-result' });
  const show = () => {
    const other = others.find((candidate) => String(candidate.seq) === select.value);
    if (other) result.replaceChildren(renderDiff(diffRequests(other, request), other, request));
  };
  const button = h('button', { text: 'Show differences', attrs: { type: 'button' }, on: { click: show } });
  select.addEventListener('change', () => {
    if (result.firstChild) show();
  });
  section.append(
    h(
      'div',
      { class: 'compare-form' },
      h('label', { attrs: { for: select.id }, text: 'Compare with' }),
      select,
      button,
    ),
    result,
  );
  return section;
}
