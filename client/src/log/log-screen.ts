// The log side of the page: the request log, and the views that show it (the list, the detail,
// the announcements), kept in step as messages arrive and the reader moves.
import type { AnswerRule } from '../../../src/shared/answer-rules.js';
import type { CapturedRequest, RecordedAnswer } from '../../../src/shared/schemas/captured-request.js';
import type { ForwardedMessage, WelcomeMessage } from '../../../src/shared/protocol.js';
import { copy, copyCurl, copyJson, downloadBody, exportLog } from './actions.js';
import { Announcer } from './announcer.js';
import { DetailPane } from '../detail/detail-pane.js';
import { narrowScreen, toast } from '../dom.js';
import { maxRequests, type PageEndpoint } from '../endpoint/endpoint.js';
import { renderBadge } from './forwarded.js';
import { LogView } from './log-view.js';
import { replayBadge, rowBadges, type Replays } from '../transport/replays.js';
import { RequestLog } from './request-log.js';

export interface LogScreenSource {
  endpoint(): PageEndpoint | undefined;
  /** The log can be changed: over the socket, or over HTTP while polling. */
  canChange(): boolean;
  /** The endpoint has expired: nothing more will arrive. */
  expired(): boolean;
  /** The reader asked to clear the log. */
  clear(): void;
  /** The reader asked to delete one request. */
  deleteRequest(seq: number): void;
  /** The rules senders' requests are matched against now. */
  rules(): readonly AnswerRule[];
  /** Replays through the endpoint's hookwatch forward. */
  replays: Replays;
}

type How = 'move' | 'click' | 'enter';

/** Opening a request on a narrow screen pushes a history entry holding this. */
interface DetailHistoryState {
  detail?: number;
}

export function detailInHistory(): boolean {
  return (history.state as DetailHistoryState | null)?.detail !== undefined;
}

export class LogScreen {
  readonly log: RequestLog;
  private readonly view: LogView;
  private readonly detail: DetailPane;
  private readonly announcer = new Announcer();

  constructor(private readonly source: LogScreenSource) {
    this.log = new RequestLog(() => maxRequests(source.endpoint()));
    this.view = new LogView(this.log, {
      select: (seq, how) => this.pick(seq, how),
      badge: (seq) => rowBadges(renderBadge(this.log.forwarded.get(seq)), replayBadge(source.replays.resultFor(seq))),
      filtered: () => this.render(),
      clear: () => source.clear(),
      exportLog: (format, requests) => exportLog(format, requests, source.endpoint()),
      types: (requests, filtered) =>
        void import('../detail/types-dialog.js').then(
          ({ openTypesDialog }) => openTypesDialog(requests, filtered),
          () => toast('Types could not be loaded: reload the page to try again.'),
        ),
      jumpToLatest: () => this.jumpToLatest(),
    });
    this.detail = new DetailPane(
      this.log,
      {
        endpoint: () => source.endpoint(),
        matches: (request) => this.view.matches(request),
        noMatch: () => this.view.noMatchMessage(),
        back: () => this.back(),
        rules: () => source.rules(),
        open: (seq) => this.openAttempt(seq),
        replays: source.replays,
      },
      {
        copyCurl: (request) => copyCurl(request, source.endpoint()),
        copyJson,
        downloadBody,
        copy: (text, what) => void copy(text, what),
        deleteRequest: (request) => source.deleteRequest(request.seq),
      },
    );
    source.replays.onResult = (seq) => this.view.list.refreshBadge(seq);
    narrowScreen.addEventListener('change', () => {
      if (!narrowScreen.matches) this.closeDetail(false);
    });
  }

  get selectedRequest(): CapturedRequest | undefined {
    return this.log.selectedRequest;
  }

  get detailOpen(): boolean {
    return this.detail.open;
  }

  /** Another endpoint: an empty log. */
  reset(): void {
    this.log.reset();
    this.source.replays.clearResults();
    this.view.showEndpoint(undefined);
    this.detail.open = false;
    this.render();
  }

  /** The endpoint's welcome; the caller renders after. */
  welcome(message: WelcomeMessage, resumed: boolean): void {
    this.view.showEndpoint(message.endpoint);
    // `gap` on a first join only means the endpoint dropped requests before this tab came: not news.
    const clearedSelected = this.log.welcome({
      backlog: message.backlog,
      clearedSeq: message.clearedSeq,
      lostWhileAway: resumed && message.gap,
    });
    if (clearedSelected) this.closeDetail(false);
  }

  arrived(request: CapturedRequest): void {
    const { added, live, lost } = this.log.add(request);
    if (!added) return;
    if (lost > 0)
      toast(
        `${lost} request${lost === 1 ? ' was' : 's were'} dropped while away (the endpoint keeps the newest ${maxRequests(this.source.endpoint())})`,
      );
    if (live) this.announcer.arrived(request);
    // The detail of a big arrival is built in a task of its own, after the list shows the row.
    this.render(true);
  }

  /** The store's byte budget let go of the oldest requests: they count as dropped; an open one stays pinned. */
  evicted(throughSeq: number): void {
    this.log.evicted(throughSeq);
    this.render();
  }

  cleared(upTo: number): void {
    if (this.log.cleared(upTo)) this.closeDetail(false);
    this.render();
  }

  /** A watcher deleted request `seq`: it leaves the list, and the detail when open (the newest takes its place). */
  removed(seq: number): void {
    if (this.log.removed(seq)) this.closeDetail(false);
    this.render();
  }

  /** A forwarder's result: on the row's badge and, when that request is open, in its detail. */
  forwarded(message: ForwardedMessage): void {
    if (!this.log.addForwarded(message)) return;
    this.view.list.refreshBadge(message.seq);
    this.detail.updateForwarded(message.seq);
  }

  /** Request `seq`'s sender got its local app's answer: its row and, when open, its detail say so. */
  answered(seq: number, answer: RecordedAnswer): void {
    const request = this.log.answered(seq, answer);
    if (!request) return;
    this.view.list.refreshAnswer(request);
    this.detail.updateAnswer(seq);
  }

  /** Other rules apply now: the open detail's "which rule would answer" follows. */
  rulesChanged(): void {
    this.detail.updateAnswer();
  }

  /** Shows the state; `deferDetail`: the detail pane catches up in the next task (arrivals come in bursts). */
  render(deferDetail = false): void {
    // A filter that hides the open request opens the first match instead.
    this.log.filter((request) => this.view.matches(request));
    this.view.render(this.source.endpoint(), this.source.canChange(), this.source.expired());
    this.detail.render(deferDetail);
  }

  refreshTimes(): void {
    this.view.list.refreshTimes();
  }

  focusFilter(): void {
    this.view.focusFilter();
  }

  /** The reader chose a request: by moving (keys), clicking, or Enter. */
  pick(seq: number, how: How): void {
    // Narrow: the detail takes the screen, and stays on this request while newer ones arrive.
    const takeScreen = how !== 'move' && narrowScreen.matches;
    this.log.select(seq, takeScreen);
    if (takeScreen && !this.detail.open) {
      this.detail.open = true;
      history.pushState({ detail: seq } satisfies DetailHistoryState, '', location.href);
    }
    this.render();
    if (how === 'enter' || (how === 'click' && this.detail.open)) this.detail.focus(this.detail.open);
  }

  /** Another attempt of the open request's delivery, picked in its timeline: opened in its place, the filter cleared if it hid it. */
  openAttempt(seq: number): void {
    const request = this.log.requests.find((held) => held.seq === seq);
    if (request && !this.view.matches(request)) this.view.clearFilter();
    this.log.select(seq, this.detail.open);
    this.render();
    this.detail.focus(this.detail.open);
  }

  /** Narrow screens: back from the detail to the list, onto the row that was open. */
  closeDetail(focusList = true): void {
    if (!this.detail.open) return;
    this.detail.open = false;
    this.log.unstay();
    this.render();
    if (!focusList) return;
    this.view.list.reveal();
    this.view.focusList();
  }

  /** The Back button (or Escape): through the history entry opening pushed, so the phone's Back button stays in step. */
  back(): void {
    if (detailInHistory()) history.back();
    else this.closeDetail();
  }

  move(step: number): void {
    const seq = this.view.list.neighbour(step);
    if (seq === undefined) return;
    this.pick(seq, 'move');
    this.view.list.reveal();
  }

  jumpToLatest(): void {
    const newest = this.view.visible()[0] ?? this.log.newest;
    if (!newest) return;
    this.log.jumpTo(newest.seq);
    this.render();
    this.view.list.scrollToTop();
  }

  /** The skip link: to the detail; on a narrow screen, opens the selected request (or, with none, goes to the answer form). */
  skipToDetail(otherwise: () => void): void {
    if (narrowScreen.matches && !this.detail.open) {
      const request = this.selectedRequest;
      if (request) this.pick(request.seq, 'enter');
      else otherwise();
      return;
    }
    this.detail.skipTo();
  }
}
