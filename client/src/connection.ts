import { LIVE_PATH, SUBPROTOCOL, type ClientMessage, type ServerMessage, type WelcomeMessage } from '../../src/live/protocol.js';

export type ConnectionState = 'connecting' | 'live' | 'reconnecting' | 'expired';

export interface Credentials {
  endpointId: string;
  key: string;
}

export interface ConnectionEvents {
  state(state: ConnectionState, detail?: string): void;
  /** `resumed`: this socket re-joined after a drop, picking up after the requests already held. */
  welcome(message: WelcomeMessage, resumed: boolean): void;
  message(message: ServerMessage): void;
}

const CLOSE_NOT_FOUND = 4004;
const CLOSE_AT_CAPACITY = 4503;
const CLOSE_PROTOCOL = 1002;

/**
 * One live socket that keeps itself up: on any unexpected close it reconnects with backoff and
 * joins again with `afterSeq` = the highest seq seen, so the log resumes with no gap and no repeat.
 */
export class LiveConnection {
  private socket: WebSocket | undefined;
  private credentials: Credentials | undefined;
  private lastSeq = 0;
  private attempt = 0;
  private retryTimer: number | undefined;
  private stopped = false;
  /** A welcome arrived since start(): any later welcome is a resume. */
  private welcomed = false;
  private nextAttempt: number | undefined;

  constructor(private readonly events: ConnectionEvents) {}

  /** Joins the given endpoint, or creates one when none is given. */
  start(credentials: Credentials | undefined): void {
    this.stop();
    this.stopped = false;
    this.credentials = credentials;
    this.lastSeq = 0;
    this.attempt = 0;
    this.welcomed = false;
    this.open();
  }

  /** When the next reconnect attempt is due (epoch ms), or undefined when none is waiting. */
  get nextAttemptAt(): number | undefined {
    return this.nextAttempt;
  }

  /** Skips the rest of the backoff wait and reconnects now. */
  retryNow(): void {
    if (this.nextAttempt === undefined || this.stopped) return;
    clearTimeout(this.retryTimer);
    this.nextAttempt = undefined;
    this.open();
  }

  /** Highest request seq the page holds; resume starts after it. */
  seen(seq: number): void {
    if (seq > this.lastSeq) this.lastSeq = seq;
  }

  send(message: ClientMessage): boolean {
    if (this.socket?.readyState !== WebSocket.OPEN) return false;
    this.socket.send(JSON.stringify(message));
    return true;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.nextAttempt = undefined;
    const socket = this.socket;
    this.socket = undefined;
    if (socket && socket.readyState <= WebSocket.OPEN) socket.close(1000, 'page left this endpoint');
  }

  private open(): void {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    const socket = new WebSocket(`${scheme}://${location.host}${LIVE_PATH}`, SUBPROTOCOL);
    this.socket = socket;
    this.events.state(this.attempt === 0 ? 'connecting' : 'reconnecting');

    socket.onopen = () => {
      if (this.credentials) socket.send(JSON.stringify({ type: 'join', ...this.credentials, afterSeq: this.lastSeq }));
      else socket.send(JSON.stringify({ type: 'create' }));
    };
    socket.onmessage = (event) => {
      const message = JSON.parse(String(event.data)) as ServerMessage;
      if (message.type === 'welcome') {
        this.attempt = 0;
        this.credentials = { endpointId: message.endpoint.id, key: message.endpoint.key };
        const resumed = this.welcomed;
        this.welcomed = true;
        this.events.state('live');
        this.events.welcome(message, resumed);
        return;
      }
      if (message.type === 'request') this.seen(message.request.seq);
      if (message.type === 'expired') this.expire();
      if (message.type === 'error' && message.error.code === 'ENDPOINT_NOT_FOUND') this.expire();
      this.events.message(message);
    };
    socket.onclose = (event) => {
      if (this.socket !== socket || this.stopped) return;
      this.socket = undefined;
      if (event.code === CLOSE_NOT_FOUND) return this.expire();
      if (event.code === CLOSE_PROTOCOL) return this.events.state('expired', event.reason);
      this.scheduleRetry(event.code === CLOSE_AT_CAPACITY ? 10_000 : undefined);
    };
  }

  private expire(): void {
    this.stopped = true;
    clearTimeout(this.retryTimer);
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
}
