import type { CapturedRequest } from '../../src/shared/captured-request.js';
import {
  LIVE_PATH,
  RECEIVER_PREFIXES,
  SUBPROTOCOL,
  type ClearMessage,
  type ClientMessage,
  type EndpointInfo,
  type ServerMessage,
  type SetResponseMessage,
  type WelcomeMessage,
} from '../../src/shared/protocol.js';

/** `polling`: no socket, the page asks the HTTP API every few seconds instead. */
export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'polling' | 'expired';
export type EndpointKind = EndpointInfo['kind'];

/**
 * An endpoint as the page knows it. `partial`: joined over HTTP, which does not tell the
 * endpoint's answer, limits or creation time, and this browser had not seen it before.
 */
export interface PageEndpoint extends EndpointInfo {
  partial?: boolean;
}

export interface Credentials {
  endpointId: string;
  key: string;
}

export interface ConnectionEvents {
  state(state: ConnectionState, detail?: string): void;
  /** `resumed`: this socket re-joined after a drop, picking up after the requests already held. */
  welcome(message: WelcomeMessage, resumed: boolean): void;
  message(message: ServerMessage): void;
  /** While polling: requests after the last one held were dropped before this poll could fetch them. */
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
  requests: CapturedRequest[];
}

interface HttpAnswer {
  status: number;
  body: unknown;
}

const CLOSE_NOT_FOUND = 4004;
const CLOSE_AT_CAPACITY = 4503;
const CLOSE_PROTOCOL = 1002;
const CLOSE_ABNORMAL = 1006;

/** How often the page polls when it has no socket. */
export const POLL_MS = 3000;
/** How often it tries the socket again meanwhile. */
const SOCKET_RETRY_MS = 30_000;
/** Sockets in a row that must fail to connect before the page falls back to polling. */
const FAILED_SOCKETS_BEFORE_POLLING = 2;
const KNOWN_KEY = 'hookwatch.endpoints';
const KNOWN_MAX = 20;

/**
 * The page's link to its endpoint: one live socket that keeps itself up (on any unexpected close
 * it reconnects with backoff and joins again with `afterSeq` = the highest seq seen, so the log
 * resumes with no gap and no repeat). When sockets cannot connect at all (a proxy without
 * WebSocket support) but the HTTP API answers, it polls that API instead, every 3 s, and tries
 * the socket again every 30 s, returning to it when it connects.
 */
export class LiveConnection {
  private socket: WebSocket | undefined;
  private credentials: Credentials | undefined;
  private kind: EndpointKind = 'live';
  private lastSeq = 0;
  private clearedSeq = 0;
  private attempt = 0;
  /** Sockets in a row that closed without getting through to the server. */
  private failedSockets = 0;
  private retryTimer: number | undefined;
  private pollTimer: number | undefined;
  private stopped = false;
  /** A welcome arrived since start(): any later welcome is a resume. */
  private welcomed = false;
  private nextAttempt: number | undefined;
  /** Answers come from polling the HTTP API; the socket is tried again in the background. */
  private polling = false;
  /** Sockets failed in this page: a new endpoint starts over HTTP at once. */
  private socketsBlocked = false;
  /** Bumped by stop(): an HTTP answer for an earlier endpoint is dropped. */
  private run = 0;

  constructor(private readonly events: ConnectionEvents) {}

  /** Joins the given endpoint, or creates one of `kind` when none is given. */
  start(credentials: Credentials | undefined, kind: EndpointKind = 'live'): void {
    this.stop();
    this.stopped = false;
    this.credentials = credentials;
    this.kind = kind;
    this.lastSeq = this.clearedSeq = 0;
    this.attempt = this.failedSockets = 0;
    this.welcomed = false;
    if (this.socketsBlocked) {
      this.events.state('connecting');
      void this.tryHttp();
    } else this.open();
  }

  /** When the next reconnect attempt is due (epoch ms), or undefined when none is waiting. */
  get nextAttemptAt(): number | undefined {
    return this.nextAttempt;
  }

  /** Skips the rest of the backoff wait and reconnects now; while polling, tries the socket (and polls) now. */
  retryNow(): void {
    if (this.stopped) return;
    if (this.polling) {
      if (this.socket) return;
      clearTimeout(this.retryTimer);
      this.nextAttempt = undefined;
      this.open();
      this.schedulePoll(0);
      return;
    }
    if (this.nextAttempt === undefined) return;
    clearTimeout(this.retryTimer);
    this.nextAttempt = undefined;
    this.open();
  }

  /** Highest request seq the page holds; resume starts after it. */
  seen(seq: number): void {
    if (seq > this.lastSeq) this.lastSeq = seq;
  }

  /** Sends on the socket or, while polling, makes the same change over HTTP. False when neither can. */
  send(message: ClientMessage): boolean {
    if (this.polling) {
      if (message.type !== 'set-response' && message.type !== 'clear') return false;
      void this.changeOverHttp(message);
      return true;
    }
    if (this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(message));
    return true;
  }

  stop(): void {
    this.stopped = true;
    this.run++;
    this.polling = false;
    clearTimeout(this.retryTimer);
    clearTimeout(this.pollTimer);
    this.nextAttempt = undefined;
    const socket = this.socket;
    this.socket = undefined;
    if (socket && socket.readyState <= WebSocket.OPEN) socket.close(1000, 'page left this endpoint');
  }

  private open(): void {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(`${scheme}://${location.host}${LIVE_PATH}`, SUBPROTOCOL);
    this.socket = socket;
    let opened = false;
    let welcomed = false;
    // While polling, a socket attempt happens in the background: the state stays as it is.
    if (!this.polling) this.events.state(this.attempt === 0 ? 'connecting' : 'reconnecting');

    socket.onopen = () => {
      opened = true;
      if (this.credentials) socket.send(JSON.stringify({ type: 'join', ...this.credentials, afterSeq: this.lastSeq }));
      else socket.send(JSON.stringify({ type: 'create', kind: this.kind }));
    };
    socket.onmessage = (event) => {
      if (this.socket !== socket) return;
      const message = JSON.parse(String(event.data)) as ServerMessage;
      if (message.type === 'welcome') {
        welcomed = true;
        this.leavePolling();
        this.attempt = this.failedSockets = 0;
        this.credentials = { endpointId: message.endpoint.id, key: message.endpoint.key };
        this.clearedSeq = Math.max(this.clearedSeq, message.clearedSeq);
        remember(message.endpoint);
        const resumed = this.welcomed;
        this.welcomed = true;
        this.events.state('live');
        this.events.welcome(message, resumed);
        return;
      }
      if (message.type === 'request') this.seen(message.request.seq);
      if (message.type === 'cleared') this.clearedSeq = Math.max(this.clearedSeq, message.clearedSeq);
      if (message.type === 'expired') this.expire();
      if (message.type === 'error' && message.error.code === 'ENDPOINT_NOT_FOUND') this.expire();
      this.events.message(message);
    };
    socket.onclose = (event) => {
      if (this.socket !== socket || this.stopped) return;
      this.socket = undefined;
      if (event.code === CLOSE_NOT_FOUND) return this.expire();
      if (event.code === CLOSE_PROTOCOL) return this.events.state('expired', event.reason);
      // Still no socket: poll on, and try again later.
      if (this.polling) return this.scheduleSocketRetry();
      // Never reached the server (a browser reports a refused or blocked upgrade as 1006 before
      // `open`); a close code from a server, even before `open`, means it answered.
      if (!welcomed && (opened ? event.code === CLOSE_ABNORMAL : event.code < 4000)) this.failedSockets++;
      else this.failedSockets = 0;
      if (this.failedSockets >= FAILED_SOCKETS_BEFORE_POLLING) return void this.tryHttp();
      this.scheduleRetry(event.code === CLOSE_AT_CAPACITY ? 10_000 : undefined);
    };
  }

  private expire(): void {
    this.stopped = true;
    this.polling = false;
    clearTimeout(this.retryTimer);
    clearTimeout(this.pollTimer);
    this.nextAttempt = undefined;
    this.events.state('expired');
  }

  private scheduleRetry(minimumMs?: number): void {
    this.attempt++;
    // 250 ms, 500 ms, 1 s … up to 8 s, with jitter so many tabs do not reconnect in lockstep.
    const backoff = Math.min(8000, 250 * 2 ** (this.attempt - 1)) * (0.75 + Math.random() / 2);
    const delay = Math.max(backoff, minimumMs ?? 0);
    this.nextAttempt = Date.now() + delay;
    this.events.state('reconnecting');
    this.retryTimer = window.setTimeout(() => {
      this.nextAttempt = undefined;
      this.open();
    }, delay);
  }

  // ---- without a socket: the endpoints API ----

  /**
   * Sockets do not get through. When the HTTP API answers, carry on over it (creating the
   * endpoint there when there is none yet); when it does not either, the network is down:
   * keep reconnecting the socket with backoff.
   */
  private async tryHttp(): Promise<void> {
    const run = this.run;
    const outcome = this.credentials ? await this.poll() : await this.create();
    if (run !== this.run || outcome === 'gone') return;
    if (outcome === 'failed') this.scheduleRetry();
    else this.schedulePoll(outcome === 'more' ? 0 : POLL_MS);
  }

  private async create(): Promise<'ok' | 'failed'> {
    const run = this.run;
    const answer = await this.http('POST', '/api/endpoints', { kind: this.kind });
    if (run !== this.run) return 'failed';
    if (answer.status !== 201) {
      this.reportError(answer, 'create');
      return 'failed';
    }
    const endpoint = answer.body as EndpointInfo;
    this.credentials = { endpointId: endpoint.id, key: endpoint.key };
    remember(endpoint);
    this.enterPolling();
    this.welcomed = true;
    this.events.welcome({ type: 'welcome', endpoint, created: true, backlog: 0, clearedSeq: 0, lastSeq: 0, gap: false }, false);
    return 'ok';
  }

  /** One poll: the requests after the last one held, and the clears and losses since the last poll. */
  private async poll(): Promise<'ok' | 'more' | 'gone' | 'failed'> {
    const { run, polling } = this;
    const credentials = this.credentials as Credentials;
    const answer = await this.http('GET', `/api/endpoints/${encodeURIComponent(credentials.endpointId)}/requests?afterSeq=${this.lastSeq}`);
    // Stopped, or the socket came back meanwhile: it carries on from here.
    if (run !== this.run || polling !== this.polling) return 'failed';
    if (answer.status === 404) {
      this.expire();
      return 'gone';
    }
    if (answer.status !== 200) return 'failed';
    const log = answer.body as PollAnswer;
    this.enterPolling();
    if (!this.welcomed) {
      this.welcomed = true;
      this.clearedSeq = log.clearedSeq;
      const welcome: WelcomeMessage = { type: 'welcome', endpoint: endpointFor(credentials, log), created: false, backlog: log.requests.length, clearedSeq: log.clearedSeq, lastSeq: log.lastSeq, gap: log.gap };
      this.events.welcome(welcome, false);
    } else {
      if (log.clearedSeq > this.clearedSeq) {
        this.clearedSeq = log.clearedSeq;
        this.events.message({ type: 'cleared', clearedSeq: log.clearedSeq });
      }
      if (log.gap) this.events.gap();
    }
    for (const request of log.requests) {
      this.seen(request.seq);
      this.events.message({ type: 'request', request });
    }
    return log.more === true ? 'more' : 'ok';
  }

  private schedulePoll(delay: number): void {
    clearTimeout(this.pollTimer);
    this.pollTimer = window.setTimeout(() => {
      const run = this.run;
      void this.poll().then((outcome) => {
        if (run !== this.run || !this.polling || outcome === 'gone') return;
        // Not even HTTP answers: say so, with when the next poll is due; and when it does again.
        const failing = outcome === 'failed';
        const wasFailing = this.nextAttempt !== undefined;
        this.nextAttempt = failing ? Date.now() + POLL_MS : undefined;
        if (failing || wasFailing) this.events.state(failing ? 'reconnecting' : 'polling');
        this.schedulePoll(outcome === 'more' ? 0 : POLL_MS);
      });
    }, delay);
  }

  private enterPolling(): void {
    if (this.polling) return;
    this.polling = this.socketsBlocked = true;
    this.attempt = 0;
    this.nextAttempt = undefined;
    this.events.state('polling');
    this.scheduleSocketRetry();
  }

  private leavePolling(): void {
    this.polling = this.socketsBlocked = false;
    clearTimeout(this.pollTimer);
    this.nextAttempt = undefined;
  }

  private scheduleSocketRetry(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = window.setTimeout(() => this.open(), SOCKET_RETRY_MS);
  }

  /** A change made over HTTP comes back as the message the socket would have brought. */
  private async changeOverHttp(message: SetResponseMessage | ClearMessage): Promise<void> {
    const run = this.run;
    const base = `/api/endpoints/${encodeURIComponent((this.credentials as Credentials).endpointId)}`;
    const answer = message.type === 'clear' ? await this.http('DELETE', `${base}/requests`) : await this.http('PUT', `${base}/response`, message.response);
    if (run !== this.run) return;
    if (answer.status === 404) return this.expire();
    if (answer.status !== 200) return this.reportError(answer, message.type);
    if (message.type === 'clear') {
      const { clearedSeq } = answer.body as { clearedSeq: number };
      this.clearedSeq = Math.max(this.clearedSeq, clearedSeq);
      this.events.message({ type: 'cleared', clearedSeq });
    } else this.events.message({ type: 'response', response: (answer.body as Pick<SetResponseMessage, 'response'>).response });
  }

  private reportError(answer: HttpAnswer, what: string): void {
    const error = (answer.body as { error?: { code: string; message: string } } | undefined)?.error;
    // No answer at all (status 0): the caller retries; there is nothing more to say.
    if (error) this.events.message({ type: 'error', error, for: what });
    else if (answer.status !== 0) this.events.message({ type: 'error', error: { code: 'HTTP', message: `The server answered ${answer.status}` }, for: what });
  }

  private async http(method: string, path: string, body?: unknown): Promise<HttpAnswer> {
    const headers: Record<string, string> = {};
    if (this.credentials) headers.authorization = `Bearer ${this.credentials.key}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      const response = await fetch(path, { method, headers, cache: 'no-store', ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
      return { status: response.status, body: await response.json().catch(() => undefined) };
    } catch {
      return { status: 0, body: undefined };
    }
  }
}

// ---- endpoints this browser has seen, so that joining one over HTTP can still show it fully ----

type KnownEndpoint = Omit<EndpointInfo, 'key'>;

function knownEndpoints(): Record<string, KnownEndpoint> {
  try {
    return (JSON.parse(localStorage.getItem(KNOWN_KEY) ?? '{}') as Record<string, KnownEndpoint>) ?? {};
  } catch {
    return {};
  }
}

/** Remembers an endpoint's description (never its key), for the last 20 endpoints. */
function remember(endpoint: EndpointInfo): void {
  const { key: _key, ...known } = endpoint;
  const all = knownEndpoints();
  delete all[endpoint.id];
  const kept = Object.entries(all).slice(-(KNOWN_MAX - 1));
  try {
    localStorage.setItem(KNOWN_KEY, JSON.stringify(Object.fromEntries([...kept, [endpoint.id, known]])));
  } catch {
    // Storage off or full: joining over HTTP then shows less.
  }
}

/** The endpoint a first poll found: as this browser last saw it, else what the poll tells. */
function endpointFor({ endpointId, key }: Credentials, log: PollAnswer): PageEndpoint {
  const known = knownEndpoints()[endpointId];
  if (known) return { ...known, key };
  const kind: EndpointKind = log.expiresAt ? 'kept' : 'live';
  return {
    id: endpointId,
    key,
    kind,
    url: `${location.origin}${RECEIVER_PREFIXES[kind]}${endpointId}`,
    createdAt: '',
    ...(log.expiresAt ? { expiresAt: log.expiresAt } : {}),
    response: { status: 200, body: '', contentType: 'application/json', headers: [], delayMs: 0 },
    graceSeconds: Number.NaN,
    requestsKept: 50,
    maxBodyBytes: Number.NaN,
    partial: true,
  };
}
