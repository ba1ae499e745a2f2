import { signedOut, tokenHeaders } from './access.js';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { DEFAULT_MAX_REQUESTS, RECEIVER_PREFIXES, type ClearMessage, type ClientMessage, type EndpointInfo, type ForwardedMessage, type SetResponseMessage } from '../../src/shared/protocol.js';
import { DEFAULT_RESPONSE } from '../../src/shared/response-limits.js';
import { createFields, type Credentials, type EndpointKind, type PageEndpoint } from './endpoint.js';
import { knownEndpoint } from './settings.js';
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

/** What `GET /api/endpoints/<id>/requests` answers (docs/protocol.md, "The endpoints API"). */
interface PollAnswer {
  lastSeq: number;
  clearedSeq: number;
  gap: boolean;
  /** The page was full: more requests wait, ask again at once. */
  more?: boolean;
  expiresAt: string | null;
  /** The latest forward result of each request in `requests` that has one (absent from older servers). */
  forwarded?: ForwardedMessage[];
  requests: CapturedRequest[];
}

interface HttpAnswer {
  status: number;
  body: unknown;
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
    const answer = await this.http('POST', '/api/endpoints', { kind: this.session.kind, ...createFields(this.session.kind, this.session.keptOptions) });
    if (this.closed) return 'failed';
    if (answer.status !== 201) {
      this.reportError(answer, 'create');
      return 'failed';
    }
    const endpoint = answer.body as EndpointInfo;
    this.expiresAt = endpoint.expiresAt;
    this.events.answered();
    this.events.welcome({ type: 'welcome', endpoint, created: true, backlog: 0, clearedSeq: 0, lastSeq: 0, gap: false });
    return 'ok';
  }

  /** One poll: the requests after the newest one held, and the clears and losses since the last poll. */
  private async poll(): Promise<Outcome> {
    const credentials = this.session.credentials as Credentials;
    const answer = await this.http('GET', `/api/endpoints/${encodeURIComponent(credentials.endpointId)}/requests?afterSeq=${this.session.lastSeq}`);
    if (this.closed) return 'failed';
    if (answer.status === 404) {
      this.events.expired();
      return 'gone';
    }
    if (answer.status !== 200) return 'failed';
    const log = answer.body as PollAnswer;
    this.events.answered();
    if (!this.session.welcomed) {
      const endpoint = endpointFor(credentials, log);
      this.events.welcome({ type: 'welcome', endpoint, created: false, backlog: log.requests.length, clearedSeq: log.clearedSeq, lastSeq: log.lastSeq, gap: log.gap });
    } else {
      if (log.clearedSeq > this.session.clearedSeq) this.events.message({ type: 'cleared', clearedSeq: log.clearedSeq });
      if (log.gap) this.events.gap();
      // Extended meanwhile (here or in another tab): as the socket's `extended` message says it.
      if (log.expiresAt && log.expiresAt !== this.expiresAt) this.events.message({ type: 'extended', expiresAt: log.expiresAt });
    }
    if (log.expiresAt) this.expiresAt = log.expiresAt;
    // Each forward result right after its request, as a joining socket's backlog brings them.
    const forwarded = new Map<number, ForwardedMessage[]>();
    for (const result of log.forwarded ?? []) forwarded.set(result.seq, [...(forwarded.get(result.seq) ?? []), result]);
    for (const request of log.requests) {
      this.events.message({ type: 'request', request });
      for (const result of forwarded.get(request.seq) ?? []) this.events.message(result);
      forwarded.delete(request.seq);
    }
    for (const results of forwarded.values()) for (const result of results) this.events.message(result);
    return log.more === true ? 'more' : 'ok';
  }

  private async change(message: SetResponseMessage | ClearMessage): Promise<void> {
    const base = `/api/endpoints/${encodeURIComponent((this.session.credentials as Credentials).endpointId)}`;
    const answer = message.type === 'clear' ? await this.http('DELETE', `${base}/requests`) : await this.http('PUT', `${base}/response`, message.response);
    if (this.closed) return;
    if (answer.status === 404) return this.events.expired();
    if (answer.status !== 200) return this.reportError(answer, message.type);
    if (message.type === 'clear') this.events.message({ type: 'cleared', clearedSeq: (answer.body as { clearedSeq: number }).clearedSeq });
    else this.events.message({ type: 'response', response: (answer.body as Pick<SetResponseMessage, 'response'>).response });
  }

  private reportError(answer: HttpAnswer, what: string): void {
    const error = (answer.body as { error?: { code: string; message: string } } | undefined)?.error;
    // No answer at all (status 0): the caller retries; there is nothing more to say.
    if (error) this.events.message({ type: 'error', error, for: what });
    else if (answer.status !== 0) this.events.message({ type: 'error', error: { code: 'HTTP', message: `The server answered ${answer.status}` }, for: what });
  }

  private async http(method: string, path: string, body?: unknown): Promise<HttpAnswer> {
    // No key: the signed-in creator opening its own endpoint (own-endpoints.ts).
    const headers: Record<string, string> = { ...tokenHeaders() };
    if (this.session.credentials?.key) headers.authorization = `Bearer ${this.session.credentials.key}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      const response = await fetch(path, { method, headers, cache: 'no-store', ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      if (response.status === 401) signedOut();
      return { status: response.status, body: await response.json().catch(() => undefined) };
    } catch {
      return { status: 0, body: undefined };
    }
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
