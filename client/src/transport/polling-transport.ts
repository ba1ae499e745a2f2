import { pageApi } from './access.js';
import {
  clearRequests,
  createEndpoint,
  pollRequests,
  setResponse,
  type ApiRefusal,
  type EndpointRef,
} from '../../../src/shared/api-client.js';
import {
  DEFAULT_MAX_REQUESTS,
  RECEIVER_PREFIXES,
  type ClearMessage,
  type ClientMessage,
  type ForwardedMessage,
  type SetResponseMessage,
} from '../../../src/shared/protocol.js';
import type { PollAnswer } from '../../../src/shared/schemas/endpoints-api.js';
import { DEFAULT_RESPONSE } from '../../../src/shared/response-limits.js';
import { createFields, type Credentials, type EndpointKind, type PageEndpoint } from '../endpoint/endpoint.js';
import { knownEndpoint } from '../endpoint/settings.js';
import type { Session, Transport, TransportEvents } from './transport.js';

/** How often the page polls when it has no socket. */
export const POLL_MS = 3000;

export interface PollingEvents extends TransportEvents {
  /** The API answered a poll (or made the endpoint): polling works. Comes before what the answer brings. */
  answered(): void;
  /** A poll got no answer; the next is due at `at` (epoch ms). */
  unanswered(at: number): void;
  /** The first request failed: not even HTTP gets through. Polling has stopped. */
  failed(): void;
  /** Requests after the newest one held were dropped before a poll could fetch them. */
  gap(): void;
}

type Outcome = 'ok' | 'more' | 'gone' | 'failed';

/**
 * The endpoints API in place of a socket: creates the endpoint there when there is none yet,
 * then asks for the requests after the newest one held every POLL_MS, and makes changes (the
 * answer, clearing) with HTTP requests. What it learns comes out as the socket's messages.
 */
export class PollingTransport implements Transport {
  private timer: number | undefined;
  private closed = false;
  /** A kept endpoint's expiry as last told: a poll telling a later one brings `extended`. */
  private expiresAt: string | undefined;

  constructor(
    private readonly session: Readonly<Session>,
    private readonly events: PollingEvents,
  ) {}

  /** The first request, then polling; `failed` when that first request fails. */
  async start(): Promise<void> {
    const outcome = this.session.credentials ? await this.poll() : await this.create();
    if (this.closed || outcome === 'gone') return;
    if (outcome === 'failed') this.events.failed();
    else this.schedule(outcome === 'more' ? 0 : POLL_MS);
  }

  /** Polls at once instead of at the next tick. */
  pollNow(): void {
    this.schedule(0);
  }

  /** Makes a change over HTTP; it comes back as the message the socket would have brought. */
  send(message: ClientMessage): boolean {
    if (this.closed || (message.type !== 'set-response' && message.type !== 'clear')) return false;
    void this.change(message);
    return true;
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
  }

  private schedule(delay: number): void {
    clearTimeout(this.timer);
    this.timer = window.setTimeout(() => {
      void this.poll().then((outcome) => {
        if (this.closed || outcome === 'gone') return;
        if (outcome === 'failed') this.events.unanswered(Date.now() + POLL_MS);
        this.schedule(outcome === 'more' ? 0 : POLL_MS);
      });
    }, delay);
  }

  private async create(): Promise<Outcome> {
    const answer = await createEndpoint(pageApi(), {
      kind: this.session.kind,
      ...createFields(this.session.kind, this.session.keptOptions),
    });
    if (this.closed) return 'failed';
    if (!answer.ok) {
      this.reportError(answer, 'create');
      return 'failed';
    }
    const endpoint = answer.value;
    this.expiresAt = endpoint.expiresAt;
    this.events.answered();
    this.events.welcome({
      type: 'welcome',
      endpoint,
      created: true,
      backlog: 0,
      clearedSeq: 0,
      lastSeq: 0,
      gap: false,
    });
    return 'ok';
  }

  /** One poll: the requests after the newest one held, and the clears and losses since the last poll. */
  private async poll(): Promise<Outcome> {
    const credentials = this.session.credentials as Credentials;
    const answer = await pollRequests(pageApi(), this.endpointRef(), this.session.lastSeq);
    if (this.closed) return 'failed';
    if (answer.status === 404) {
      this.events.expired();
      return 'gone';
    }
    if (!answer.ok) return 'failed';
    const log = answer.value;
    this.events.answered();
    if (!this.session.welcomed) {
      const endpoint = endpointFor(credentials, log);
      this.events.welcome({
        type: 'welcome',
        endpoint,
        created: false,
        backlog: log.requests.length,
        clearedSeq: log.clearedSeq,
        lastSeq: log.lastSeq,
        gap: log.gap,
      });
    } else {
      if (log.clearedSeq > this.session.clearedSeq)
        this.events.message({ type: 'cleared', clearedSeq: log.clearedSeq });
      if (log.gap) this.events.gap();
      // Extended meanwhile (here or in another tab): as the socket's `extended` message says it.
      if (log.expiresAt && log.expiresAt !== this.expiresAt)
        this.events.message({ type: 'extended', expiresAt: log.expiresAt });
    }
    if (log.expiresAt) this.expiresAt = log.expiresAt;
    // Each forward result right after its request, as a joining socket's backlog brings them
    // (none from an older instance behind the same address, whose answer has no `forwarded`).
    const forwarded = new Map<number, ForwardedMessage[]>();
    for (const result of log.forwarded ?? []) forwarded.set(result.seq, [...(forwarded.get(result.seq) ?? []), result]);
    for (const request of log.requests) {
      this.events.message({ type: 'request', request });
      for (const result of forwarded.get(request.seq) ?? []) this.events.message(result);
      forwarded.delete(request.seq);
    }
    for (const results of forwarded.values()) for (const result of results) this.events.message(result);
    return log.more ? 'more' : 'ok';
  }

  private async change(message: SetResponseMessage | ClearMessage): Promise<void> {
    if (message.type === 'clear') {
      const answer = await clearRequests(pageApi(), this.endpointRef());
      if (this.closed) return;
      if (answer.ok) this.events.message({ type: 'cleared', clearedSeq: answer.value.clearedSeq });
      else this.refused(answer, message.type);
    } else {
      const answer = await setResponse(pageApi(), this.endpointRef(), message.response);
      if (this.closed) return;
      if (answer.ok) this.events.message({ type: 'response', response: answer.value.response });
      else this.refused(answer, message.type);
    }
  }

  /** A change that did not go through: the endpoint is gone, or the error is told. */
  private refused(answer: ApiRefusal, what: string): void {
    if (answer.status === 404) this.events.expired();
    else this.reportError(answer, what);
  }

  private reportError(answer: ApiRefusal, what: string): void {
    // No answer at all (status 0): the caller retries; there is nothing more to say.
    if (answer.error) this.events.message({ type: 'error', error: answer.error, for: what });
    else if (answer.status !== 0)
      this.events.message({
        type: 'error',
        error: { code: 'HTTP', message: `The server answered ${answer.status}` },
        for: what,
      });
  }

  /** The endpoint polled; no key: the signed-in creator opening its own endpoint (own-endpoints.ts). */
  private endpointRef(): EndpointRef {
    const { endpointId, key } = this.session.credentials as Credentials;
    return { id: endpointId, key };
  }
}

/** The endpoint a first poll found: as this browser last saw it, else what the poll tells. */
function endpointFor({ endpointId, key }: Credentials, log: PollAnswer): PageEndpoint {
  const known = knownEndpoint(endpointId);
  if (known) return { ...known, key };
  const kind: EndpointKind = log.expiresAt ? 'kept' : 'live';
  return {
    id: endpointId,
    key,
    kind,
    url: `${location.origin}${RECEIVER_PREFIXES[kind]}${endpointId}`,
    createdAt: '',
    ...(log.expiresAt ? { expiresAt: log.expiresAt } : {}),
    response: DEFAULT_RESPONSE,
    graceSeconds: Number.NaN,
    maxRequests: DEFAULT_MAX_REQUESTS,
    maxBodyBytes: Number.NaN,
    partial: true,
  };
}
