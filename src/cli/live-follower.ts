import type WebSocket from 'ws';
import type { CapturedRequest } from '../shared/schemas/captured-request.js';
import {
  CloseCode,
  SUBPROTOCOL,
  type ClientMessage,
  type JoinMessage,
  type ReplayOrderMessage,
  type ResponderMessage,
  type ServerMessage,
  type WelcomeMessage,
} from '../shared/protocol.js';
import { decodeServerMessage } from '../shared/request-frame.js';
import { backoffDelay, formatSeconds, sleep } from './backoff.js';
import { describeError } from './send-request.js';
import type { ShareLink } from './share-link.js';

export interface FollowerHandlers {
  /** After every welcome; `resumed` is false for the first one. */
  onJoined(welcome: WelcomeMessage, resumed: boolean): void;
  /** Each request to act on: once, in seq order, across reconnects. */
  onRequest(request: CapturedRequest): void;
  /** Something the user should know: a lost connection, a reconnect, a server error. */
  onStatus(message: string): void;
  /** Who answers the endpoint's senders changed (`hookwatch forward --respond`). */
  onResponder?(message: ResponderMessage): void;
  /** A page asked for a replay (only a socket that sent `announce-forwarder` gets these). */
  onReplay?(message: ReplayOrderMessage): void;
}

export type FollowEnd =
  | { reason: 'stopped' }
  /** The endpoint does not exist (any more), or the key is wrong: close 4004 or `expired`. */
  | { reason: 'gone'; message: string }
  /** Could not join at all, or the server cannot be talked to. */
  | { reason: 'failed'; message: string };

export interface FollowerOptions {
  link: ShareLink;
  /** Replay the stored requests after this seq on the first join. Unset: only new requests. */
  fromSeq?: number;
  handlers: FollowerHandlers;
  /** How often we ping the server; a ping unanswered by the next one means the link is dead. */
  pingMs?: number;
  /** ACCESS_MODE=token: sent in every join, never in the socket's URL. */
  accessToken?: string | undefined;
}

type ConnectionEnd =
  { kind: 'closed'; message: string; joined: boolean } | { kind: 'gone' } | { kind: 'fatal'; message: string };

/**
 * Watches one endpoint over the live socket and keeps watching across drops: each reconnect
 * joins with `afterSeq` = the highest seq already handed on, so the server replays exactly what
 * was missed (docs/protocol.md, Lifecycle 4). Nothing is handed on twice.
 */
export class LiveFollower {
  /** Highest seq handed to onRequest or skipped as old backlog: where a resume starts. */
  private resumeSeq: number;
  /** On the first join without --from-seq the stored backlog is old news: skip it. */
  private skipBacklog: boolean;
  private backlogLeft = 0;
  private joinedOnce = false;
  private stopped = false;
  private paused = false;
  private socket: WebSocket | undefined;
  /** The socket once its welcome is in: only a joined socket may send anything but create/join. */
  private joinedSocket: WebSocket | undefined;
  private readonly stopController = new AbortController();
  private wakeResumed: (() => void) | undefined;
  /** ws, imported by run(): a command's --help never loads it. */
  private WebSocketClass: typeof WebSocket | undefined;

  constructor(private readonly options: FollowerOptions) {
    this.resumeSeq = options.fromSeq ?? 0;
    this.skipBacklog = options.fromSeq === undefined;
  }

  /** The highest seq handed on (or skipped): what a later `--from-seq` should start after. */
  get lastSeq(): number {
    return this.resumeSeq;
  }

  /** Connects, joins, and follows until stopped, gone, or (before the first join) failed. */
  async run(): Promise<FollowEnd> {
    this.WebSocketClass ??= (await import('ws')).default;
    if (this.stopped) return { reason: 'stopped' };
    let attempt = 0;
    for (;;) {
      const end = await this.connectOnce();
      if (this.stopped) return { reason: 'stopped' };
      if (end.kind === 'gone') {
        return {
          reason: 'gone',
          message: this.joinedOnce
            ? 'the endpoint is gone: it expired'
            : 'endpoint not found: it expired, or the share link is wrong',
        };
      }
      if (end.kind === 'fatal') return { reason: 'failed', message: end.message };
      // Failing the very first time is most likely a wrong host or port: say so rather than retry forever.
      if (!this.joinedOnce)
        return { reason: 'failed', message: `cannot join via ${this.options.link.liveUrl}: ${end.message}` };
      if (end.joined) attempt = 0;
      const delay = backoffDelay(attempt++);
      this.options.handlers.onStatus(
        `${end.joined ? 'connection lost' : 'reconnect failed'} (${end.message}); reconnecting in ${formatSeconds(delay)}`,
      );
      if (!(await sleep(delay, this.stopController.signal))) return { reason: 'stopped' };
      // A paused reader (its consumer is behind) reconnects only when it can read again.
      if (this.paused) await new Promise<void>((resolve) => (this.wakeResumed = resolve));
      if (this.stopped) return { reason: 'stopped' };
    }
  }

  /** Closes the socket; run() then resolves `stopped`. No request is handed on after this. */
  stop(): void {
    this.stopped = true;
    this.stopController.abort();
    this.wakeResumed?.();
    const socket = this.socket;
    if (!socket) return;
    socket.close(1000);
    // A server that does not answer the close frame must not hold the process open.
    setTimeout(() => socket.terminate(), 1000).unref();
  }

  /** Stops reading from the socket while the consumer catches up (the server buffers, then cuts us). */
  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.socket?.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.socket?.resume();
    this.wakeResumed?.();
    this.wakeResumed = undefined;
  }

  /**
   * Sends a message on the joined socket. False when there is none right now (reconnecting,
   * stopped): the message is dropped, since what it reports is also in the terminal.
   */
  send(message: ClientMessage): boolean {
    const socket = this.joinedSocket;
    if (socket === undefined || socket.readyState !== socket.OPEN) return false;
    socket.send(JSON.stringify(message));
    return true;
  }

  private joinMessage(): JoinMessage {
    const { endpointId, key } = this.options.link;
    const message: JoinMessage = { type: 'join', endpointId, key };
    if (this.resumeSeq > 0) message.afterSeq = this.resumeSeq;
    if (this.options.accessToken !== undefined) message.token = this.options.accessToken;
    return message;
  }

  private connectOnce(): Promise<ConnectionEnd> {
    const WebSocketClass = this.WebSocketClass as typeof WebSocket;
    return new Promise((resolve) => {
      // The URL carries no key: the key travels only inside the join message.
      const socket = new WebSocketClass(this.options.link.liveUrl, [SUBPROTOCOL], { handshakeTimeout: 10_000 });
      this.socket = socket;
      let joined = false;
      let gone = false;
      let problem: string | undefined;
      let answered = true;
      const pinger = setInterval(() => {
        if (this.paused) return;
        if (!answered) {
          problem = 'the server stopped answering pings';
          socket.terminate();
          return;
        }
        answered = false;
        socket.ping();
      }, this.options.pingMs ?? 15_000);

      socket.on('open', () => {
        if (this.paused) socket.pause();
        socket.send(JSON.stringify(this.joinMessage()));
      });
      socket.on('pong', () => (answered = true));
      socket.on('error', (error) => (problem = describeError(error)));
      socket.on('message', (data, isBinary) => {
        answered = true;
        let message: ServerMessage;
        try {
          message = decodeServerMessage(isBinary ? (data as Buffer) : data.toString());
        } catch {
          return this.options.handlers.onStatus('ignored a message from the server that it could not read');
        }
        if (message.type === 'welcome') {
          joined = true;
          this.joinedSocket = socket;
          this.onWelcome(message);
        } else if (message.type === 'request') {
          this.onRequest(message.request);
        } else if (message.type === 'responder') {
          this.options.handlers.onResponder?.(message);
        } else if (message.type === 'replay') {
          this.options.handlers.onReplay?.(message);
        } else if (message.type === 'expired') {
          gone = true;
        } else if (message.type === 'error') {
          if (message.error.code === 'ENDPOINT_NOT_FOUND') gone = true;
          else {
            problem = `${message.error.code}: ${message.error.message}`;
            this.options.handlers.onStatus(`server error ${problem}`);
          }
        }
      });
      socket.on('close', (code, reason) => {
        clearInterval(pinger);
        if (this.socket === socket) this.socket = undefined;
        if (this.joinedSocket === socket) this.joinedSocket = undefined;
        if (gone || code === CloseCode.ENDPOINT_NOT_FOUND) return resolve({ kind: 'gone' });
        // A missing or withdrawn token does not come back by retrying.
        if (code === CloseCode.UNAUTHORIZED)
          return resolve({
            kind: 'fatal',
            message: problem ?? 'this server needs an access token (--token or HOOKWATCH_TOKEN)',
          });
        if (code === CloseCode.PROTOCOL_ERROR)
          return resolve({
            kind: 'fatal',
            message: `the server refused the ${SUBPROTOCOL} protocol (${reason.toString() || 'close 1002'})`,
          });
        const why =
          code === CloseCode.AT_CAPACITY
            ? 'the server is at capacity'
            : code === CloseCode.GOING_AWAY
              ? 'the server is shutting down'
              : (problem ??
                (code === 1006
                  ? 'the connection was cut'
                  : `closed with code ${code}${reason.length > 0 ? ` ${reason.toString()}` : ''}`));
        resolve({ kind: 'closed', message: why, joined });
      });
    });
  }

  private onWelcome(welcome: WelcomeMessage): void {
    const resumed = this.joinedOnce;
    this.joinedOnce = true;
    // Past the endpoint's last seq (--from-seq too high, or the server lost writes): the server
    // sends what comes after its real last seq, and so must this guard let through.
    if (this.resumeSeq > welcome.lastSeq) this.resumeSeq = welcome.lastSeq;
    if (this.skipBacklog) {
      this.backlogLeft = welcome.backlog;
      if (this.backlogLeft === 0) this.skipBacklog = false;
    }
    this.options.handlers.onJoined(welcome, resumed);
  }

  private onRequest(request: CapturedRequest): void {
    if (this.stopped) return;
    if (this.skipBacklog && this.backlogLeft > 0) {
      this.resumeSeq = Math.max(this.resumeSeq, request.seq);
      if (--this.backlogLeft === 0) this.skipBacklog = false;
      return;
    }
    // The server sends each seq once per join, in order; this guards the hand-over across joins.
    if (request.seq <= this.resumeSeq) return;
    this.resumeSeq = request.seq;
    this.options.handlers.onRequest(request);
  }
}
