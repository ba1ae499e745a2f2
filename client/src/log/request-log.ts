// The requests the page holds and where the reader is among them. No DOM here: the views render
// from it, and it can be tested without a browser.
import type { CapturedRequest, RecordedAnswer } from '../../../src/shared/schemas/captured-request.js';
import type { ForwardedMessage } from '../../../src/shared/protocol.js';
import { ForwardedResults } from './forwarded-results.js';

/** What one arriving request did. */
export interface Arrival {
  /** Held now: not a repeat, and not cleared already. */
  added: boolean;
  /** Arrived live, not in the backlog a welcome announced: news (announced, counted unseen). */
  live: boolean;
  /** Requests dropped while the page was away, counted on the first arrival after such a resume. */
  lost: number;
}

/** What a welcome says about the log. */
export interface LogWelcome {
  /** Backlog requests that follow it: they are not news. */
  backlog: number;
  clearedSeq: number;
  /** A resume that came back to requests already dropped: the next arrival counts them. */
  lostWhileAway: boolean;
}

/**
 * The log: requests by seq, oldest first, at most the endpoint's `maxRequests`; what was received,
 * cleared and dropped; the selected request; and, when newer ones pushed the open request out,
 * that request, pinned until another is picked. Until the reader picks an older request, the
 * newest is selected as it arrives (following); while not following, arrivals count as unseen.
 */
export class RequestLog {
  private held: CapturedRequest[] = [];
  /** Highest seq seen and the seq the log was cleared up to: together they count what was received. */
  private highestSeq = 0;
  private clearedThrough = 0;
  private selected: number | undefined;
  private pinnedRequest: CapturedRequest | undefined;
  private follow = true;
  private unseenCount = 0;
  private backlogLeft = 0;
  /** After a resume or a poll that lost requests: the seq held before, to count the loss on the next arrival. */
  private lostAfter: number | undefined;
  /** Seqs deleted by a watcher (`removed`) after the last clear: received, but not dropped. */
  private readonly removedSeqs = new Set<number>();
  /** What the reader's filter lets through: following means following the newest of these. */
  private shows: (request: CapturedRequest) => boolean = () => true;
  /** What forwarders got, by seq; kept for the pinned request too. */
  readonly forwarded = new ForwardedResults((seq) => this.holds(seq));

  /** `maxRequests`: how many of the newest requests the endpoint keeps, asked at each arrival. */
  constructor(private readonly maxRequests: () => number) {}

  /** Oldest first. */
  get requests(): readonly CapturedRequest[] {
    return this.held;
  }

  get newest(): CapturedRequest | undefined {
    return this.held.at(-1);
  }

  /** The newest request the filter lets through. */
  get newestShown(): CapturedRequest | undefined {
    return this.held.findLast(this.shows);
  }

  /** Requests the endpoint took since the last clear. */
  get received(): number {
    return Math.max(this.highestSeq, this.clearedThrough) - this.clearedThrough;
  }

  /** Received, but no longer held: pushed out by newer ones, evicted, or dropped while away. */
  get dropped(): number {
    return this.received - this.held.length - this.removedSeqs.size;
  }

  get clearedSeq(): number {
    return this.clearedThrough;
  }

  get selectedSeq(): number | undefined {
    return this.selected;
  }

  /** The selected request: held, or pinned after it left the log. */
  get selectedRequest(): CapturedRequest | undefined {
    return (
      this.held.find((request) => request.seq === this.selected) ??
      (this.pinnedRequest?.seq === this.selected ? this.pinnedRequest : undefined)
    );
  }

  /** The open request after it left the log (no longer stored on the server). */
  get pinned(): CapturedRequest | undefined {
    return this.pinnedRequest;
  }

  /** The newest request is selected as it arrives. */
  get following(): boolean {
    return this.follow;
  }

  /** Arrivals while reading an older request. */
  get unseen(): number {
    return this.unseenCount;
  }

  /** Held or pinned. */
  holds(seq: number): boolean {
    return this.pinnedRequest?.seq === seq || this.held.some((request) => request.seq === seq);
  }

  /** Another endpoint, or a new start: nothing held, nothing selected. */
  reset(): void {
    this.held = [];
    this.forwarded.clear();
    this.removedSeqs.clear();
    this.highestSeq = this.clearedThrough = 0;
    this.selected = this.pinnedRequest = this.lostAfter = undefined;
    this.follow = true;
    this.unseenCount = this.backlogLeft = 0;
  }

  /** A welcome (first or resumed). True when it cleared the selected request away. */
  welcome({ backlog, clearedSeq, lostWhileAway }: LogWelcome): boolean {
    this.backlogLeft = backlog;
    this.lostAfter = lostWhileAway ? Math.max(this.highestSeq, clearedSeq) : undefined;
    return this.cleared(clearedSeq);
  }

  add(request: CapturedRequest): Arrival {
    const live = this.backlogLeft === 0;
    if (!live) this.backlogLeft--;
    if (request.seq <= this.clearedThrough || this.held.some((held) => held.seq === request.seq))
      return { added: false, live, lost: 0 };
    let lost = 0;
    if (this.lostAfter !== undefined) {
      lost = Math.max(0, request.seq - this.lostAfter - 1);
      this.lostAfter = undefined;
    }
    this.highestSeq = Math.max(this.highestSeq, request.seq);
    this.held.push(request);
    if ((this.held.at(-2)?.seq ?? 0) > request.seq) this.held.sort((a, b) => a.seq - b.seq);
    const kept = this.maxRequests();
    if (this.held.length > kept) this.letGo(this.held.length - kept);
    // What the filter hides is not news to the reader, and not followed.
    if (!this.shows(request)) return { added: true, live, lost };
    if (live && !this.follow) this.unseenCount++;
    if (this.follow) this.selected = this.newestShown?.seq;
    return { added: true, live, lost };
  }

  /** The store's byte budget let go of the oldest requests, through `throughSeq`: they count as dropped. */
  evicted(throughSeq: number): void {
    this.letGo(this.held.filter((request) => request.seq <= throughSeq).length);
  }

  /** Cleared up to `upTo`, for everyone: those requests never come back. True when the selected one went. */
  cleared(upTo: number): boolean {
    this.clearedThrough = Math.max(this.clearedThrough, upTo);
    this.forwarded.dropThrough(this.clearedThrough);
    for (const seq of this.removedSeqs) if (seq <= this.clearedThrough) this.removedSeqs.delete(seq);
    this.held = this.held.filter((request) => request.seq > this.clearedThrough);
    if (this.pinnedRequest && this.pinnedRequest.seq <= this.clearedThrough) this.pinnedRequest = undefined;
    if (this.selected === undefined || this.selected > this.clearedThrough) return false;
    this.selected = undefined;
    this.follow = true;
    this.unseenCount = 0;
    return true;
  }

  /** A watcher deleted request `seq` (`removed`), for everyone: it never comes back. True when it was the selected one. */
  removed(seq: number): boolean {
    if (seq <= this.clearedThrough) return false;
    const at = this.held.findIndex((request) => request.seq === seq);
    // Counted apart from the dropped only when held (one pushed out before was counted as dropped then).
    if (at !== -1) {
      this.held.splice(at, 1);
      this.removedSeqs.add(seq);
    }
    this.forwarded.dropOne(seq);
    if (this.pinnedRequest?.seq === seq) this.pinnedRequest = undefined;
    if (this.selected !== seq) return false;
    this.selected = this.newestShown?.seq;
    this.follow = true;
    this.unseenCount = 0;
    return true;
  }

  /** Requests after the newest held were dropped before they could be fetched: the next arrival counts them. */
  gap(): void {
    this.lostAfter = Math.max(this.highestSeq, this.clearedThrough);
  }

  /** A forwarder's result, unless its request was cleared. True when it was kept. */
  addForwarded(message: ForwardedMessage): boolean {
    if (message.seq <= this.clearedThrough) return false;
    this.forwarded.add(message);
    return true;
  }

  /** Request `seq`'s sender got its local app's answer (`answered`): its record says so now. The record, or undefined when it is not held. */
  answered(seq: number, answer: RecordedAnswer): CapturedRequest | undefined {
    const request =
      this.held.find((held) => held.seq === seq) ?? (this.pinnedRequest?.seq === seq ? this.pinnedRequest : undefined);
    if (request) request.answer = answer;
    return request;
  }

  /** The reader picked a request. `stay`: on it while newer ones arrive, even when it is the newest. */
  select(seq: number, stay = false): void {
    this.selected = seq;
    if (this.pinnedRequest && this.pinnedRequest.seq !== seq) this.pinnedRequest = undefined;
    this.follow = !stay && seq === this.newestShown?.seq;
    if (this.follow) this.unseenCount = 0;
  }

  /**
   * The reader's filter (it may have changed). When it hides the selected request, the newest
   * request it lets through is selected instead, and followed; when it lets none through, the
   * selection stays, hidden, until the filter changes again.
   */
  filter(shows: (request: CapturedRequest) => boolean): void {
    this.shows = shows;
    const selected = this.selectedRequest;
    if (!selected || shows(selected)) return;
    const first = this.newestShown;
    if (first) this.jumpTo(first.seq);
  }

  /** The reader is no longer held on one request: follow again if it is the newest (or none is selected). */
  unstay(): void {
    this.follow = this.selected === undefined || this.selected === this.newestShown?.seq;
    if (this.follow) this.unseenCount = 0;
  }

  /** Selects `seq` (the newest the reader can see) and follows from there; a pinned request goes. */
  jumpTo(seq: number): void {
    this.pinnedRequest = undefined;
    this.selected = seq;
    this.follow = true;
    this.unseenCount = 0;
  }

  /** The oldest `count` leave the log; the selected one among them stays on screen, pinned. */
  private letGo(count: number): void {
    if (count <= 0) return;
    const out = this.held.slice(0, count);
    this.held = this.held.slice(count);
    this.pinnedRequest = out.find((old) => old.seq === this.selected) ?? this.pinnedRequest;
  }
}
