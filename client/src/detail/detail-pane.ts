// The detail pane: the selected request, rendered from the request log; on narrow screens it takes
// the screen in place of the list.
import type { AnswerRule } from '../../../src/shared/answer-rules.js';
import type { CapturedRequest } from '../../../src/shared/schemas/captured-request.js';
import { AnswerPanel } from '../answer/answer-panel.js';
import { answeredBy } from './answered-by.js';
import { renderDetail, type DetailActions } from './detail.js';
import { byId, h } from '../dom.js';
import type { PageEndpoint } from '../endpoint/endpoint.js';
import { ForwardedView } from '../log/forwarded.js';
import { renderReplaySection } from './replay-section.js';
import type { Replays } from '../transport/replays.js';
import type { RequestLog } from '../log/request-log.js';
import { renderVerifyPanel } from './verify-panel.js';

export interface DetailPaneSource {
  endpoint(): PageEndpoint | undefined;
  /** Whether the filter lets the request through. */
  matches(request: CapturedRequest): boolean;
  /** What the detail says when the filter lets nothing through. */
  noMatch(): string;
  /** The Back button. */
  back(): void;
  /** The rules senders' requests are matched against now. */
  rules(): readonly AnswerRule[];
  /** Opens another request (an attempt in the delivery timeline). */
  open(seq: number): void;
  /** Replays through the endpoint's hookwatch forward. */
  replays: Replays;
}

/** The views of the open request against the others, fetched with import() the first time one is opened. */
type Insights = [typeof import('./compare-panel.js'), typeof import('./delivery-timeline.js')];
let insights: Promise<Insights> | undefined;
const loadInsights = () => (insights ??= Promise.all([import('./compare-panel.js'), import('./delivery-timeline.js')]));

export class DetailPane {
  private readonly pane = byId('detail');
  private readonly content = byId('detail-content');
  private readonly back = byId<HTMLButtonElement>('back-to-list');
  private readonly layout = byId('layout');
  /** Narrow screens: the detail is shown instead of the list. */
  open = false;
  /** What the pane shows now (-1: nothing rendered yet), and for which endpoint. */
  private renderedSeq: number | undefined = -1;
  private renderedEndpoint: string | undefined;
  private renderedPlaceholder: string | undefined;
  /** The open detail's "Forwarded" section, updated as results come in. */
  private forwardedView: ForwardedView | undefined;
  /** The open detail's "Answer" section, updated as the answer or the rules change. */
  private answerPanel: AnswerPanel | undefined;
  private timer: number | undefined;
  /** Where the open request's delivery timeline and comparison go, and the log they were drawn from. */
  private insightSlots: { delivery: HTMLElement; compare: HTMLElement; drawnFrom: string } | undefined;

  constructor(
    private readonly log: RequestLog,
    private readonly source: DetailPaneSource,
    private readonly actions: DetailActions,
  ) {
    this.back.addEventListener('click', () => source.back());
  }

  /** `defer`: the request itself is rendered in the next task (arrivals come in bursts). */
  render(defer: boolean): void {
    const { unseen } = this.log;
    this.back.textContent = unseen > 0 ? `← Back to list (${unseen} new)` : '← Back to list';
    this.layout.classList.toggle('show-detail', this.open);
    clearTimeout(this.timer);
    if (defer) this.timer = window.setTimeout(() => this.renderSelected(), 0);
    else this.renderSelected();
  }

  /** A forwarder's result came in for `seq`: shown when that request is open. */
  updateForwarded(seq: number): void {
    if (this.renderedSeq === seq) this.forwardedView?.update(this.log.forwarded.get(seq));
  }

  /** Request `seq`'s answer changed (its sender got the local app's), or the rules did (`seq` undefined): shown when open. */
  updateAnswer(seq?: number): void {
    const request = this.log.selectedRequest;
    if (request && this.renderedSeq === request.seq && (seq === undefined || seq === request.seq))
      this.answerPanel?.update(request, this.source.rules());
    // Another attempt's answer shows in the timeline.
    if (request && this.renderedSeq === request.seq && seq !== undefined && this.insightSlots)
      this.insightSlots.drawnFrom = '';
    if (request && this.renderedSeq === request.seq) this.renderInsights(request);
  }

  /** The open request's timeline and comparison, drawn again when the log changed since (an attempt arrived, one was dropped). */
  private renderInsights(request: CapturedRequest): void {
    const slots = this.insightSlots;
    const requests = this.log.requests;
    const drawnFrom = `${requests[0]?.seq}:${requests.at(-1)?.seq}:${requests.length}`;
    if (!slots || slots.drawnFrom === drawnFrom) return;
    slots.drawnFrom = drawnFrom;
    void loadInsights().then(
      ([{ renderComparePanel }, { renderDeliveryTimeline }]) => {
        if (this.insightSlots !== slots || this.renderedSeq !== request.seq) return;
        slots.delivery.replaceChildren(
          renderDeliveryTimeline(request, requests, (seq) => this.source.open(seq), answeredBy) ?? '',
        );
        // A comparison the reader has open stays as it is.
        if (!slots.compare.querySelector('.diff'))
          slots.compare.replaceChildren(
            renderComparePanel(
              request,
              requests.filter((other) => other.seq !== request.seq),
            ),
          );
      },
      () => {
        // A chunk that did not come (the server went away, or was updated): try again on the next render.
        insights = undefined;
        slots.drawnFrom = '';
        if (this.insightSlots === slots)
          slots.compare.replaceChildren(
            h('p', {
              class: 'muted',
              text: 'Compare and the delivery timeline could not be loaded: reload the page to try again.',
            }),
          );
      },
    );
  }

  /** Moves focus to the pane; `scroll`: bring it into view first (when it takes the screen). */
  focus(scroll: boolean): void {
    if (scroll) this.pane.scrollIntoView({ block: 'start' });
    this.pane.focus({ preventScroll: true });
  }

  /** Focus to the pane, scrolling as the browser does (the skip link). */
  skipTo(): void {
    this.pane.focus();
  }

  /** Re-renders the request only when the selection changes, so an open JSON tree stays as it is. */
  private renderSelected(): void {
    const endpoint = this.source.endpoint();
    const request = this.log.selectedRequest;
    const hidden = request !== undefined && !this.source.matches(request);
    const shown = hidden ? undefined : request;
    // With no request to show, what the pane says instead (it follows the filter as it is typed).
    const placeholder =
      shown && endpoint
        ? undefined
        : hidden
          ? this.source.noMatch()
          : this.log.requests.length > 0
            ? 'Select a request to see it here.'
            : endpoint
              ? 'Requests appear here as they arrive.'
              : '';
    if (
      shown?.seq !== this.renderedSeq ||
      endpoint?.url !== this.renderedEndpoint ||
      placeholder !== this.renderedPlaceholder
    ) {
      this.renderedSeq = shown?.seq;
      this.renderedEndpoint = endpoint?.url;
      this.renderedPlaceholder = placeholder;
      this.forwardedView = undefined;
      this.answerPanel = undefined;
      this.insightSlots = undefined;
      if (!shown || !endpoint) {
        this.content.replaceChildren(h('p', { class: 'muted placeholder', text: placeholder ?? '' }));
      } else {
        this.forwardedView = new ForwardedView(this.log.forwarded.get(shown.seq));
        this.answerPanel = new AnswerPanel(shown, this.source.rules());
        const panels = {
          answer: this.answerPanel,
          forwarded: this.forwardedView.element,
          verify: renderVerifyPanel(shown),
        };
        const detail = renderDetail(shown, endpoint.url, this.actions, panels);
        this.insightSlots = {
          delivery: h('div', { class: 'insight-slot' }),
          compare: h('div', { class: 'insight-slot' }),
          drawnFrom: '',
        };
        // The delivery's attempts right under this one's answer; the comparison after everything.
        panels.answer.section.after(this.insightSlots.delivery);
        // Replays beside what forwarders got for the original.
        panels.forwarded.after(renderReplaySection(shown, this.source.replays, endpoint.url));
        detail.append(this.insightSlots.compare);
        this.content.replaceChildren(detail);
        // Another request starts at its top.
        this.pane.scrollTop = 0;
        if (this.open && this.pane.getBoundingClientRect().top < 0) this.pane.scrollIntoView({ block: 'start' });
      }
    }
    if (shown) this.renderInsights(shown);
    const gone = this.content.querySelector<HTMLElement>('.gone');
    if (gone) gone.hidden = !(shown && shown === this.log.pinned);
  }
}
