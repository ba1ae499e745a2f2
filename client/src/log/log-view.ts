// The list side of the page: the filter, the counts, the request list and its buttons, rendered
// from the request log.
import type { CapturedRequest } from '../../../src/shared/schemas/captured-request.js';
import { byId, h, toast } from '../dom.js';
import { maxRequests, type PageEndpoint } from '../endpoint/endpoint.js';
import { searchText } from '../format.js';
import { LogList, type LogListEvents } from './log-list.js';
import type { RequestLog } from './request-log.js';

export interface LogViewEvents extends LogListEvents {
  /** The filter changed. */
  filtered(): void;
  clear(): void;
  /** Export what the filter shows (all, without a filter), oldest first. */
  exportLog(format: 'json' | 'har', requests: CapturedRequest[]): void;
  /** Types from the JSON bodies the filter shows (all, without a filter), oldest first. */
  types(requests: CapturedRequest[], filtered: boolean): void;
  jumpToLatest(): void;
}

export class LogView {
  private readonly filter = byId<HTMLInputElement>('filter');
  private readonly method = byId<HTMLSelectElement>('method-filter');
  private readonly count = byId('count');
  private readonly clearButton = byId<HTMLButtonElement>('clear');
  private readonly exportButton = byId<HTMLButtonElement>('export');
  private readonly exportFormat = byId<HTMLSelectElement>('export-format');
  private readonly typesButton = byId<HTMLButtonElement>('types');
  private readonly retried = byId<HTMLInputElement>('retried-filter');
  /** The seqs in deliveries of more than one attempt, and the log they were found in (its first seq, last seq, length). */
  private retriedSeqs: { of: string; seqs: ReadonlySet<number> } | undefined;
  /** delivery-groups.ts, loaded when "Retried deliveries only" is first ticked. */
  private findRetried: ((requests: readonly CapturedRequest[]) => Set<number>) | undefined;
  private readonly jump = byId<HTMLButtonElement>('jump-latest');
  private readonly listElement = byId('log');
  private readonly empty = byId('empty');
  private readonly emptyText = byId('empty-text');
  private readonly emptyCurl = byId('empty-curl');
  private readonly noMatch = byId('no-match');
  private readonly noMatchText = byId('no-match-text');
  /** Each request's searchable text, built once. */
  private readonly searchable = new WeakMap<CapturedRequest, string>();
  readonly list: LogList;

  constructor(
    private readonly log: RequestLog,
    events: LogViewEvents,
  ) {
    this.list = new LogList(this.listElement, events);
    this.filter.addEventListener('input', () => events.filtered());
    this.method.addEventListener('change', () => events.filtered());
    this.retried.addEventListener('change', () => {
      if (this.findRetried) return events.filtered();
      void import('../../../src/shared/delivery-groups.js').then(
        ({ retriedSeqs }) => {
          this.findRetried = retriedSeqs;
          events.filtered();
        },
        () => {
          this.retried.checked = false;
          toast('The retried filter could not be loaded: reload the page to try again.');
        },
      );
    });
    this.typesButton.addEventListener('click', () => events.types(this.visible().reverse(), this.filtering()));
    byId('clear-filter').addEventListener('click', () => {
      this.clearFilter();
      events.filtered();
      this.filter.focus();
    });
    this.clearButton.addEventListener('click', () => events.clear());
    this.exportButton.addEventListener('click', () =>
      events.exportLog(this.exportFormat.value === 'har' ? 'har' : 'json', this.visible().reverse()),
    );
    this.jump.addEventListener('click', () => events.jumpToLatest());
  }

  matches(request: CapturedRequest): boolean {
    const text = this.filter.value.trim().toLowerCase();
    if (this.method.value !== '' && request.method !== this.method.value) return false;
    if (this.retried.checked && !this.retriedNow().has(request.seq)) return false;
    if (text === '') return true;
    let haystack = this.searchable.get(request);
    if (haystack === undefined) this.searchable.set(request, (haystack = searchText(request)));
    return haystack.includes(text);
  }

  /** `No request matches “text” and the method PUT.` */
  noMatchMessage(): string {
    const text = this.filter.value.trim();
    const what = [text && `“${text}”`, this.method.value && `the method ${this.method.value}`]
      .filter(Boolean)
      .join(' and ');
    if (this.retried.checked)
      return what
        ? `No retried delivery matches ${what}.`
        : 'No delivery was retried: none has more than one attempt here.';
    return `No request matches ${what}.`;
  }

  /** Every filter off (the caller renders). */
  clearFilter(): void {
    this.filter.value = '';
    this.method.value = '';
    this.retried.checked = false;
  }

  /** A filter narrows the list: text, method, or retried deliveries only. */
  private filtering(): boolean {
    return this.filter.value.trim() !== '' || this.method.value !== '' || this.retried.checked;
  }

  /** The retried deliveries' seqs in the log as it is now (found again when it changed); none until delivery-groups.ts has loaded. */
  private retriedNow(): ReadonlySet<number> {
    const { requests } = this.log;
    const of = `${requests[0]?.seq}:${requests.at(-1)?.seq}:${requests.length}`;
    if (!this.findRetried) return new Set();
    if (this.retriedSeqs?.of !== of) this.retriedSeqs = { of, seqs: this.findRetried(requests) };
    return this.retriedSeqs.seqs;
  }

  /** What the filter lets through, newest first. */
  visible(): CapturedRequest[] {
    return this.log.requests.filter((request) => this.matches(request)).reverse();
  }

  /** The empty log's example, for this endpoint's URL; none (undefined) while joining another. */
  showEndpoint(endpoint: PageEndpoint | undefined): void {
    this.emptyCurl.textContent = endpoint
      ? `curl -X POST '${endpoint.url}' -H 'Content-Type: application/json' -d '{"hello":"world"}'`
      : '';
  }

  /** What the empty log says: waiting for the endpoint, for its first request (with an example), or that it expired. */
  private renderEmpty(expired: boolean): void {
    const example = !expired && this.emptyCurl.textContent !== '';
    const text = expired
      ? 'This endpoint has expired: no more requests will arrive.'
      : example
        ? 'Waiting for the first request. Try:'
        : 'Waiting for the endpoint…';
    if (this.emptyText.textContent !== text) this.emptyText.textContent = text;
    this.emptyCurl.hidden = !example;
  }

  /** Clearing is possible over the socket, or over HTTP while polling. */
  enableClear(canChange: boolean): void {
    this.clearButton.disabled = !canChange || this.log.requests.length === 0;
  }

  focusFilter(): void {
    this.filter.focus();
  }

  focusList(): void {
    this.listElement.focus({ preventScroll: true });
  }

  render(endpoint: PageEndpoint | undefined, canChange: boolean, expired: boolean): void {
    const { requests } = this.log;
    this.renderEmpty(expired);
    this.renderMethodOptions();
    const visible = this.visible();
    const filtering = this.filtering();
    const counts = `${this.log.received} received${this.log.dropped > 0 ? `, ${this.log.dropped} dropped` : ''}`;
    this.count.textContent = filtering ? `${visible.length} shown · ${counts}` : counts;
    this.count.title =
      this.log.dropped > 0
        ? `The endpoint keeps only the newest ${maxRequests(endpoint)} requests, within its stored-bytes budget.`
        : '';
    this.empty.hidden = requests.length > 0;
    this.noMatch.hidden = requests.length === 0 || visible.length > 0;
    if (!this.noMatch.hidden) this.noMatchText.textContent = this.noMatchMessage();
    // What is shown is what is exported, and the button says which.
    this.exportButton.textContent = filtering ? `Export shown (${visible.length})` : 'Export all';
    this.exportButton.disabled = visible.length === 0;
    this.typesButton.disabled = visible.length === 0;
    this.enableClear(canChange);

    this.list.update(visible, this.log.selectedSeq);
    this.jump.hidden = this.log.following || this.log.unseen === 0;
    this.jump.textContent = `${this.log.unseen} new — jump to latest`;
  }

  private renderMethodOptions(): void {
    const methods = [...new Set(this.log.requests.map((request) => request.method))].sort();
    const current = [...this.method.options].slice(1).map((option) => option.value);
    if (methods.join() === current.join()) return;
    const chosen = this.method.value;
    this.method.replaceChildren(
      h('option', { attrs: { value: '' }, text: 'All methods' }),
      ...methods.map((method) => h('option', { attrs: { value: method }, text: method })),
    );
    this.method.value = methods.includes(chosen) ? chosen : '';
  }
}
