import type { CapturedRequest } from '../../../src/shared/schemas/captured-request.js';
import { answerMark as markOf } from '../detail/answered-by.js';
import { h } from '../dom.js';
import { ago, formatBytes, localTime, shortPath, utc } from '../format.js';

export interface LogListEvents {
  /** The reader chose a request: moved onto it with keys, clicked it, or pressed Enter on it. */
  select(seq: number, how: 'move' | 'click' | 'enter'): void;
  /** The badge a row shows under its path (what a forwarder got), or null. */
  badge(seq: number): HTMLElement | null;
}

/**
 * The request log as one listbox: a single Tab stop, arrow keys inside, the selection shown
 * with aria-selected and followed by aria-activedescendant. Rows are kept by seq and reused, so
 * a new arrival adds one row and the row the reader is looking at stays where it is.
 */
export class LogList {
  private readonly rows = new Map<number, HTMLElement>();
  private order: number[] = [];
  private selected: number | undefined;

  constructor(
    private readonly element: HTMLElement,
    private readonly events: LogListEvents,
  ) {
    element.addEventListener('click', (event) => {
      const row = (event.target as HTMLElement).closest<HTMLElement>('[role="option"]');
      if (row) events.select(Number(row.dataset.seq), 'click');
    });
    element.addEventListener('keydown', (event) => this.onKey(event));
  }

  /** Shows `visible` (newest first) with `selected` marked. */
  update(visible: CapturedRequest[], selected: number | undefined): void {
    const anchor = this.anchor();
    const anchorTop = anchor?.getBoundingClientRect().top;

    const keep = new Set<number>();
    let cursor = this.element.firstElementChild;
    for (const request of visible) {
      keep.add(request.seq);
      let row = this.rows.get(request.seq);
      if (!row) {
        row = this.row(request);
        this.rows.set(request.seq, row);
      }
      if (row === cursor) cursor = cursor.nextElementSibling;
      else this.element.insertBefore(row, cursor);
    }
    while (cursor) {
      const next = cursor.nextElementSibling;
      cursor.remove();
      cursor = next;
    }
    for (const seq of this.rows.keys()) if (!keep.has(seq)) this.rows.delete(seq);
    this.order = visible.map((request) => request.seq);
    this.element.hidden = visible.length === 0;

    this.selected = selected;
    for (const [seq, row] of this.rows) row.setAttribute('aria-selected', String(seq === selected));
    const active = selected === undefined ? undefined : this.rows.get(selected);
    if (active) this.element.setAttribute('aria-activedescendant', active.id);
    else this.element.removeAttribute('aria-activedescendant');

    // Rows added above the one the reader looks at push it down: scroll by as much to hold it still.
    if (anchor?.isConnected && anchorTop !== undefined) {
      const shift = anchor.getBoundingClientRect().top - anchorTop;
      if (shift !== 0) this.scroller().scrollBy(0, shift);
    }
  }

  /** Brings the selected row into view (after a keyboard move). */
  reveal(): void {
    if (this.selected !== undefined) this.rows.get(this.selected)?.scrollIntoView({ block: 'nearest' });
  }

  scrollToTop(): void {
    if (this.isOwnScroller()) this.element.scrollTop = 0;
    else this.element.scrollIntoView({ block: 'nearest' });
  }

  /** The seq `step` rows away from the selection (+1 is older), clamped; the newest when none is selected. */
  neighbour(step: number): number | undefined {
    if (this.order.length === 0) return undefined;
    const index = this.selected === undefined ? -1 : this.order.indexOf(this.selected);
    if (index === -1) return this.order[0];
    return this.order[Math.min(this.order.length - 1, Math.max(0, index + step))];
  }

  /** Rebuilds one row's forwarding badge, after something it shows changed; the answer's mark stays. */
  refreshBadge(seq: number): void {
    const slot = this.rows.get(seq)?.querySelector('.badge-slot');
    const badge = this.events.badge(seq);
    slot?.replaceChildren(...Array.from(slot.querySelectorAll('.answer-mark')), ...(badge ? [badge] : []));
  }

  /** Rebuilds one row's answer, after its sender got the local app's (`answered`). */
  refreshAnswer(request: CapturedRequest): void {
    const row = this.rows.get(request.seq);
    if (!row) return;
    row.querySelector('.answer-status')?.replaceWith(answerStatus(request));
    const slot = row.querySelector('.badge-slot') as HTMLElement;
    slot.querySelector('.answer-mark')?.remove();
    const mark = answerMark(request);
    if (mark) slot.prepend(mark);
  }

  /** Updates the "5 s ago" next to each time. */
  refreshTimes(now = Date.now()): void {
    for (const row of this.rows.values()) {
      const label = row.querySelector('.ago') as HTMLElement;
      const text = ago(now - Number(row.dataset.time));
      if (label.textContent !== text) label.textContent = text;
    }
  }

  private row(request: CapturedRequest): HTMLElement {
    const time = Date.parse(request.receivedAt);
    const path = shortPath(request);
    const clock = localTime(request.receivedAt);
    // The name is the row's text: method, path, status, time, age, size, marks (grid and flex items, so read apart).
    return h(
      'div',
      {
        class: 'row',
        attrs: {
          role: 'option',
          id: `request-${request.seq}`,
          'data-seq': String(request.seq),
          'data-time': String(time),
        },
      },
      h('span', { class: `method method-${request.method.toLowerCase()}`, text: request.method }),
      // The whole path in the tooltip, for one longer than the row.
      h('span', { class: 'path', text: path, title: path }),
      h(
        'span',
        { class: 'meta' },
        answerStatus(request),
        h('time', { attrs: { datetime: request.receivedAt }, title: utc(request.receivedAt), text: clock }),
        h('span', { class: 'ago', text: ago(Date.now() - time) }),
        h('span', { class: 'size', text: formatBytes(request.size) }),
      ),
      // Under the path (app.css; after the meta, to be read after it), so the path keeps its width on rows that have one: what chose the answer, what a forwarder got.
      h('span', { class: 'badge-slot' }, answerMark(request), this.events.badge(request.seq)),
    );
  }

  private onKey(event: KeyboardEvent): void {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    const page = Math.max(1, Math.floor(this.element.clientHeight / 44));
    const steps: Record<string, number> = {
      ArrowDown: 1,
      ArrowUp: -1,
      PageDown: page,
      PageUp: -page,
      Home: -Infinity,
      End: Infinity,
    };
    const step = steps[event.key];
    let target: number | undefined;
    if (step !== undefined) {
      target = Number.isFinite(step) ? this.neighbour(step) : step < 0 ? this.order[0] : this.order.at(-1);
    } else if ((event.key === 'Enter' || event.key === ' ') && this.selected !== undefined) {
      event.preventDefault();
      this.events.select(this.selected, 'enter');
      return;
    }
    if (target === undefined) return;
    event.preventDefault();
    event.stopPropagation();
    this.events.select(target, 'move');
    this.reveal();
  }

  /** The first row still (partly) in view: the one to hold still. Undefined at the top of the list. */
  private anchor(): HTMLElement | undefined {
    const top = this.isOwnScroller() ? this.element.getBoundingClientRect().top : 0;
    let first = true;
    for (
      let row = this.element.firstElementChild as HTMLElement | null;
      row;
      row = row.nextElementSibling as HTMLElement | null
    ) {
      if (row.getBoundingClientRect().bottom > top) return first ? undefined : row;
      first = false;
    }
    return undefined;
  }

  /** Wide screens scroll the list itself; narrow ones scroll the page. */
  private isOwnScroller(): boolean {
    return getComputedStyle(this.element).overflowY === 'auto';
  }

  private scroller(): HTMLElement | Window {
    return this.isOwnScroller() ? this.element : window;
  }
}

/** The status the sender got: said as "answered 503" to a screen reader, coloured by class but readable without. */
function answerStatus(request: CapturedRequest): HTMLElement {
  const { status } = request.answer;
  const tone = status >= 500 ? 'bad' : status >= 400 ? 'warn' : 'ok';
  return h(
    'span',
    { class: `answer-status answer-${tone}` },
    h('span', { class: 'offscreen', text: 'answered ' }),
    String(status),
  );
}

/** "by rule 2", "by local app": when a rule or the local app chose the answer, in words. */
function answerMark(request: CapturedRequest): HTMLElement | null {
  const mark = markOf(request.answer);
  return mark
    ? h(
        'span',
        { class: 'answer-mark', title: mark.label },
        h('span', { class: 'offscreen', text: 'answered by ' }),
        mark.text,
      )
    : null;
}
