import {
  CloseCode,
  type ClientMessage,
  type ServerMessage,
  type WelcomeMessage,
} from '../../../src/shared/protocol.js';
import type { Credentials, EndpointKind, KeptOptions, PageEndpoint } from '../endpoint/endpoint.js';
import { PollingTransport } from './polling-transport.js';
import { rememberEndpoint } from '../endpoint/settings.js';
import { SocketTransport } from './socket-transport.js';
import type { Session } from './transport.js';

export type { Credentials, EndpointKind, KeptOptions, PageEndpoint } from '../endpoint/endpoint.js';
export { POLL_MS } from './polling-transport.js';

/** `polling`: no socket, the page asks the HTTP API every few seconds instead. */
export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'polling' | 'expired';

export interface ConnectionEvents {
  state(state: ConnectionState): void;
  /** `resumed`: this socket re-joined after a drop, picking up after the requests already held. */
  welcome(message: WelcomeMessage, resumed: boolean): void;
  message(message: ServerMessage): void;
  /** While polling: requests after the last one held were dropped before this poll could fetch them. */
  gap(): void;
}

/**
 * What the connection is doing: a ConnectionState, or `stopped` (not started, or the page left
 * the endpoint), or `unanswered` (polling, but the last poll got no answer: shown as reconnecting,
 * counting down to the next poll).
 */
type Phase = ConnectionState | 'stopped' | 'unanswered';

/** How often it tries the socket again while polling. */
const SOCKET_RETRY_MS = 30_000;
/** Sockets in a row that must fail to connect before the page falls back to polling. */
const FAILED_SOCKETS_BEFORE_POLLING = 2;
/** The server is at capacity: the next try waits at least this long. */
const AT_CAPACITY_WAIT_MS = 10_000;

/**
 * The page's link to its endpoint: one live socket that keeps itself up (on any unexpected close
 * it reconnects with backoff and joins again with `afterSeq` = the highest seq seen, so the log
 * resumes with no gap and no repeat). When sockets cannot connect at all (a proxy without
 * WebSocket support) but the HTTP API answers, it polls that API instead, every 3 s, and tries
 * the socket again every 30 s, returning to it when it connects.
 */
export class LiveConnection {
  private phase: Phase = 'stopped';
  private session: Session = { credentials: undefined, kind: 'live', lastSeq: 0, clearedSeq: 0, welcomed: false };
  /** The live socket; while polling, the socket being tried. */
  private socket: SocketTransport | undefined;
  /** The HTTP API, from the first request sent to it until a socket welcome. */
  private polling: PollingTransport | undefined;
  /** The next socket: after a backoff wait, or while polling every SOCKET_RETRY_MS. */
  private retryTimer: number | undefined;
  private nextAttempt: number | undefined;
  /** Reconnects in a row, for the backoff. */
  private attempt = 0;
  /** Sockets in a row that closed without getting through to the server. */
  private failedSockets = 0;
  /** Sockets failed in this page and have not come back since: a new endpoint starts over HTTP at once. */
  private socketsFail = false;

  constructor(private readonly events: ConnectionEvents) {}

  /** Joins the given endpoint, or creates one of `kind` (a kept one with `keptOptions`) when none is given. */
  start(credentials: Credentials | undefined, kind: EndpointKind = 'live', keptOptions?: KeptOptions): void {
    this.stop();
    this.session = {
      credentials,
      kind,
      ...(keptOptions ? { keptOptions } : {}),
      lastSeq: 0,
      clearedSeq: 0,
      welcomed: false,
    };
    this.attempt = this.failedSockets = 0;
    if (this.socketsFail) {
      this.enter('connecting');
      this.openHttp();
    } else this.openSocket();
  }

  /** When the next reconnect attempt (or, polling unanswered, the next poll) is due (epoch ms), or undefined when none is waiting. */
  get nextAttemptAt(): number | undefined {
    return this.nextAttempt;
  }

  /** Skips the rest of the backoff wait and reconnects now; while polling, tries the socket (and polls) now. */
  retryNow(): void {
    if (this.pollingWorks()) {
      if (this.socket) return;
      this.cancelRetry();
      this.openSocket();
      this.polling?.pollNow();
    } else if (this.phase === 'reconnecting' && this.nextAttempt !== undefined) {
      this.cancelRetry();
      this.openSocket();
    }
  }

  /** Sends on the socket or, while polling, makes the same change over HTTP. False when neither can. */
  send(message: ClientMessage): boolean {
    return (this.pollingWorks() ? this.polling : this.socket)?.send(message) ?? false;
  }

  stop(): void {
    this.phase = 'stopped';
    this.closeAll();
  }

  private pollingWorks(): boolean {
    return this.phase === 'polling' || this.phase === 'unanswered';
  }

  private enter(phase: Phase): void {
    this.phase = phase;
    if (phase !== 'stopped') this.events.state(phase === 'unanswered' ? 'reconnecting' : phase);
  }

  private closeAll(): void {
    this.cancelRetry();
    this.socket?.close();
    this.polling?.close();
    this.socket = this.polling = undefined;
  }

  private cancelRetry(): void {
    clearTimeout(this.retryTimer);
    this.nextAttempt = undefined;
  }

  private expire(): void {
    this.closeAll();
    this.enter('expired');
  }

  private openSocket(): void {
    this.socket = new SocketTransport(this.session, {
      welcome: (message) => this.socketWelcome(message),
      message: (message) => this.received(message),
      expired: () => this.expire(),
      closed: (code, reached) => this.socketClosed(code, reached),
    });
    // While polling, a socket is tried in the background: the state stays as it is.
    if (!this.pollingWorks()) this.enter(this.attempt === 0 ? 'connecting' : 'reconnecting');
  }

  /** The socket got through: polling (if any) ends. */
  private socketWelcome(message: WelcomeMessage): void {
    this.polling?.close();
    this.polling = undefined;
    this.socketsFail = false;
    this.cancelRetry();
    this.attempt = this.failedSockets = 0;
    this.enter('live');
    this.welcomed(message);
  }

  private welcomed(message: WelcomeMessage): void {
    const endpoint: PageEndpoint = message.endpoint;
    this.session.credentials = { endpointId: endpoint.id, key: endpoint.key };
    this.session.clearedSeq = Math.max(this.session.clearedSeq, message.clearedSeq);
    // Ahead of the endpoint (its store lost writes this tab saw): resume from its real last seq.
    this.session.lastSeq = Math.min(this.session.lastSeq, message.lastSeq);
    if (!endpoint.partial) rememberEndpoint(endpoint);
    const resumed = this.session.welcomed;
    this.session.welcomed = true;
    this.events.welcome(message, resumed);
  }

  private received(message: ServerMessage): void {
    if (message.type === 'request') this.session.lastSeq = Math.max(this.session.lastSeq, message.request.seq);
    if (message.type === 'cleared') this.session.clearedSeq = Math.max(this.session.clearedSeq, message.clearedSeq);
    this.events.message(message);
  }

  private socketClosed(code: number, reached: boolean): void {
    this.socket = undefined;
    // Still no socket: poll on, and try again later.
    if (this.pollingWorks()) return this.retrySocketLater();
    this.failedSockets = reached ? 0 : this.failedSockets + 1;
    if (this.failedSockets >= FAILED_SOCKETS_BEFORE_POLLING) this.openHttp();
    else this.scheduleRetry(code === CloseCode.AT_CAPACITY ? AT_CAPACITY_WAIT_MS : 0);
  }

  private scheduleRetry(minimumMs: number): void {
    this.attempt++;
    // 250 ms, 500 ms, 1 s … up to 8 s, with jitter so many tabs do not reconnect in lockstep.
    const backoff = Math.min(8000, 250 * 2 ** (this.attempt - 1)) * (0.75 + Math.random() / 2);
    const delay = Math.max(backoff, minimumMs);
    clearTimeout(this.retryTimer);
    this.nextAttempt = Date.now() + delay;
    this.enter('reconnecting');
    this.retryTimer = window.setTimeout(() => {
      this.nextAttempt = undefined;
      this.openSocket();
    }, delay);
  }

  private retrySocketLater(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = window.setTimeout(() => this.openSocket(), SOCKET_RETRY_MS);
  }

  /**
   * Sockets do not get through. When the HTTP API answers, carry on over it (creating the
   * endpoint there when there is none yet); when it does not either, the network is down:
   * keep reconnecting the socket with backoff.
   */
  private openHttp(): void {
    const polling = new PollingTransport(this.session, {
      answered: () => this.pollAnswered(),
      unanswered: (at) => {
        // Not even HTTP answers: say so, with when the next poll is due.
        this.nextAttempt = at;
        this.enter('unanswered');
      },
      failed: () => {
        polling.close();
        this.polling = undefined;
        this.scheduleRetry(0);
      },
      gap: () => this.events.gap(),
      welcome: (message) => this.welcomed(message),
      message: (message) => this.received(message),
      expired: () => this.expire(),
    });
    this.polling = polling;
    void polling.start();
  }

  private pollAnswered(): void {
    if (this.phase === 'polling') return;
    if (this.phase !== 'unanswered') {
      this.socketsFail = true;
      this.attempt = 0;
      this.retrySocketLater();
    }
    this.nextAttempt = undefined;
    this.enter('polling');
  }
}
