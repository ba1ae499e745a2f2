import type { FastifyBaseLogger } from 'fastify';
import type { WebSocket } from 'ws';
import type { Bus } from '../bus/bus.js';
import type { Config } from '../config.js';
import { errors, rejectionReasonOf } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { createEndpoint, keyMatches, responseConfigsFull, toEndpointInfo } from '../endpoints.js';
import { parseResponseConfig } from '../shared/response-config.js';
import { StoreUnavailableError, type EndpointKind, type EndpointRecord, type RequestLog, type Store } from '../store/store.js';
import { parseClientMessage } from './client-messages.js';
import type { Hub } from './hub.js';
import { CloseCode, type ClientMessage } from '../shared/protocol.js';
import { clearedMessage, errorMessage, EXPIRED_MESSAGE, forwardedMessage, responseChangedMessage, welcomeMessage } from './server-messages.js';
import { toFramed, Watcher, writeBounded } from './watcher.js';
import { redactForwarded } from './redact-forwarded.js';
import type { AddressLimit } from '../http/rate-limit.js';

/** What every session shares: built once per app, not once per socket. */
export interface SessionContext {
  config: Config;
  store: Store;
  bus: Bus;
  hub: Hub;
  metrics: Metrics;
  log: FastifyBaseLogger;
  /** KEPT_CREATES_PER_ADDRESS, counted with the endpoints API's creations; undefined when off. */
  countCreate: AddressLimit | undefined;
  /** Header names the operator redacts besides the built-in rule (REDACT_HEADERS), lower case. */
  redactAlso: ReadonlySet<string>;
  /** Called when a watcher is cut for reading too slowly. */
  onSlowWatcher: (watcher: Watcher) => void;
}

/** A socket must say create or join within this time, so idle sockets cannot pile up unowned. */
const HELLO_TIMEOUT_MS = 10_000;
/**
 * What a `forwarded` message costs in the socket's message budget: a forwarder reports every
 * captured request, so it may send ten times the rate of a tab's own messages.
 */
const FORWARDED_COST = 0.1;
/** Malformed messages in a row after which the socket is closed (1008): a client that keeps sending junk is broken or hostile. */
export const BAD_MESSAGE_RUN = 10;
/**
 * Bytes of messages one socket may have waiting their turn: twice the largest frame. A burst
 * within the rate arrives in one read and drains at once while the store keeps up; past this the
 * store is not keeping up, and the socket is told so and closed (1013) rather than queued
 * without bound.
 */
const MAX_WAITING_BYTES = 1024 * 1024;
/** What a waiting message is counted as beyond its text: its parsed form and its place in line. */
const WAITING_UPKEEP_BYTES = 512;

/**
 * One live socket's side of the protocol: create or join, then set-response and clear. A class
 * rather than a closure per handler, because thousands of sockets may stay open for hours.
 * Everything it sends goes through `send`, which checks the socket's backlog first, and what a
 * socket may send is bounded: a message rate (token bucket, no timer) and a run of bad messages.
 */
export class LiveSession {
  private watcher: Watcher | undefined;
  private endpointId: string | undefined;
  /** The endpoint stores secrets redacted (kept endpoints): so are the local app's answers relayed to its watchers. */
  private redactsSecrets = false;
  private closed = false;
  private helloTimer: NodeJS.Timeout | undefined;
  private badRun = 0;
  /** The messages before the newest one, handled one at a time; and their size while they wait. */
  private inOrder: Promise<void> = Promise.resolve();
  private waitingBytes = 0;
  private tokens: number;
  private refilledAtMs = Date.now();
  private readonly openedAtMs = Date.now();

  constructor(
    private readonly socket: WebSocket,
    private readonly context: SessionContext,
    /** `https://host`: where senders reach this server. */
    private readonly publicBase: string,
    /** The client's address key (address-key.ts), for per-address limits. */
    private readonly addressKey: string,
  ) {
    this.tokens = 2 * context.config.liveMessagesPerSecond;
    this.startHelloTimer(HELLO_TIMEOUT_MS);
  }

  onMessage(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    if (this.closed) return;
    const text = isBinary ? '' : data.toString();
    // Charged a forwarder report's cost before parsing (so a flood is refused before any parse
    // work), and the rest of a whole message once parsing shows it is anything else: the text's
    // first bytes prove nothing (`{"type":"forwarded","type":"set-response"}` is a set-response).
    if (!this.takeToken(FORWARDED_COST)) return this.tooManyMessages();
    const bytes = text.length + WAITING_UPKEEP_BYTES;
    if (this.waitingBytes + bytes > MAX_WAITING_BYTES) {
      this.context.log.warn('a live socket\'s messages are waiting on a slow store; closing it');
      return this.storeUnavailable();
    }
    if (isBinary) return this.badMessage('binary frames are not part of the protocol', undefined);
    // Parsed at once (a malformed message is answered at once), handled in the order sent: a
    // set-response right after create, or a corrected join right after a refused one, finds the
    // socket in the state the messages before it left.
    const parsed = parseClientMessage(text);
    if ((!parsed.ok || parsed.message.type !== 'forwarded') && !this.takeToken(1 - FORWARDED_COST)) return this.tooManyMessages();
    if (!parsed.ok) return this.badMessage(parsed.problem, parsed.type);
    this.badRun = 0;
    this.waitingBytes += bytes;
    this.inOrder = this.inOrder
      .then(() => (this.closed ? undefined : this.handle(parsed.message)))
      .catch((error: unknown) => this.failed(error))
      .finally(() => (this.waitingBytes -= bytes));
  }

  private tooManyMessages(): void {
    const error = errors.TOO_MANY_MESSAGES(this.context.config.liveMessagesPerSecond);
    this.reject(error);
    this.send(errorMessage(error));
    this.closeWith(CloseCode.TOO_MANY_MESSAGES, error.code);
  }

  private failed(error: unknown): void {
    if (error instanceof StoreUnavailableError) {
      this.context.log.warn({ err: error }, 'store unavailable');
      return this.storeUnavailable();
    }
    this.context.log.error({ err: error }, 'live message failed');
    this.send(errorMessage(errors.INTERNAL()));
  }

  /** Nothing this socket can do until the store is back: says so, and lets it reconnect. */
  private storeUnavailable(): void {
    const unavailable = errors.STORE_UNAVAILABLE();
    this.reject(unavailable);
    this.send(errorMessage(unavailable));
    this.closeWith(CloseCode.TRY_AGAIN_LATER, unavailable.code);
  }

  onClose(): void {
    this.closed = true;
    this.stopHelloTimer();
    if (this.watcher && this.endpointId !== undefined) this.context.hub.detach(this.endpointId, this.watcher);
  }

  /** Every reply goes through here: bounded like request delivery, so no reply can grow memory. */
  private send(data: string): void {
    if (this.watcher) return this.watcher.send(data);
    writeBounded(this.socket, toFramed(data).frame, this.context.config.maxSocketBufferBytes, () => this.socket.terminate());
  }

  private closeWith(code: number, reason: string): void {
    this.closed = true;
    this.socket.close(code, reason);
  }

  private reject(error: { code: string }): void {
    const reason = rejectionReasonOf(error.code);
    if (reason) this.context.metrics.reject(reason);
  }

  private takeToken(cost: number): boolean {
    const now = Date.now();
    const perSecond = this.context.config.liveMessagesPerSecond;
    this.tokens = Math.min(2 * perSecond, this.tokens + ((now - this.refilledAtMs) / 1000) * perSecond);
    this.refilledAtMs = now;
    if (this.tokens < cost) return false;
    this.tokens -= cost;
    return true;
  }

  private badMessage(problem: string, type: string | undefined): void {
    const error = errors.BAD_MESSAGE(problem);
    this.reject(error);
    this.send(errorMessage(error, type));
    if (++this.badRun >= BAD_MESSAGE_RUN) this.closeWith(CloseCode.POLICY_VIOLATION, `${BAD_MESSAGE_RUN} malformed messages in a row`);
  }

  private startHelloTimer(ms: number): void {
    this.helloTimer = setTimeout(() => this.closeWith(CloseCode.HELLO_TIMEOUT, 'send create or join first'), ms);
    this.helloTimer.unref();
  }

  private stopHelloTimer(): void {
    clearTimeout(this.helloTimer);
    this.helloTimer = undefined;
  }

  private async handle(message: ClientMessage | { type: 'set-response'; response: unknown }): Promise<void> {
    const { store, bus } = this.context;

    if (message.type === 'create' || message.type === 'join') {
      if (this.watcher) return this.send(errorMessage(errors.ALREADY_JOINED(), message.type));
      // A create or join in progress is not cut by the timer; one that ends without watching
      // anything (a refused join, the socket still open) leaves what was left of the 10 s.
      this.stopHelloTimer();
      try {
        if (message.type === 'create') await this.create(message.kind ?? 'live');
        else await this.join(message.endpointId, message.key, message.afterSeq ?? 0);
      } finally {
        if (!this.watcher && !this.closed) this.startHelloTimer(Math.max(0, this.openedAtMs + HELLO_TIMEOUT_MS - Date.now()));
      }
      return;
    }

    const endpointId = this.endpointId;
    if (!this.watcher || endpointId === undefined) return this.send(errorMessage(errors.NOT_JOINED(), message.type));

    if (message.type === 'forwarded') {
      await bus.publish(endpointId, { data: forwardedMessage(this.redactsSecrets ? redactForwarded(message, this.context.redactAlso) : message) });
      return;
    }

    if (message.type === 'set-response') {
      const result = parseResponseConfig(message.response);
      if (!result.ok) {
        const error = errors.INVALID_RESPONSE_CONFIG(result.message);
        this.reject(error);
        return this.send(errorMessage(error, message.type));
      }
      const set = await store.setResponse(endpointId, result.value);
      if (set === undefined) return this.expire();
      if (set === 'full') {
        const error = errors.AT_CAPACITY(responseConfigsFull(this.context.config));
        this.reject(error);
        return this.send(errorMessage(error, message.type));
      }
      await bus.publish(endpointId, { data: responseChangedMessage(result.value) });
      return;
    }

    // clear
    const clearedSeq = await store.clearRequests(endpointId);
    if (clearedSeq === undefined) return this.expire();
    await bus.publish(endpointId, { data: clearedMessage(clearedSeq) });
  }

  private async create(kind: EndpointKind): Promise<void> {
    const { store, config, log } = this.context;
    // Live endpoints are bounded by the sockets that hold them; kept ones outlive the socket.
    const limited = kind === 'kept' ? await this.context.countCreate?.(this.addressKey) : undefined;
    if (limited) {
      this.reject(limited.error);
      this.send(errorMessage(limited.error, 'create'));
      this.closeWith(CloseCode.TOO_MANY_MESSAGES, limited.error.code);
      return;
    }
    const created = await createEndpoint(store, config, kind);
    if (!created) {
      const error = errors.AT_CAPACITY(kind === 'kept' ? `${config.maxKeptEndpoints} kept endpoints` : `${config.maxEndpoints} live endpoints`);
      this.reject(error);
      this.send(errorMessage(error, 'create'));
      this.closeWith(CloseCode.AT_CAPACITY, error.code);
      return;
    }
    log.debug({ endpointId: created.endpoint.id, kind }, 'endpoint created');
    await this.watch(created.endpoint.id, created.key, 0, true);
  }

  private async join(id: string, key: string, afterSeq: number): Promise<void> {
    const endpoint = await this.context.store.getEndpoint(id);
    // Same answer for a wrong key as for no endpoint: the socket learns nothing about ids.
    if (!endpoint || !keyMatches(key, endpoint.keyHash)) {
      const error = errors.ENDPOINT_NOT_FOUND();
      this.reject(error);
      this.send(errorMessage(error, 'join'));
      this.closeWith(CloseCode.ENDPOINT_NOT_FOUND, error.code);
      return;
    }
    await this.watch(endpoint.id, key, afterSeq, false);
  }

  private async watch(endpointId: string, key: string, afterSeq: number, created: boolean): Promise<void> {
    const { store, hub, config } = this.context;
    const forType = created ? 'create' : 'join';
    if (this.closed) {
      if (created) await store.deleteEndpoint(endpointId);
      return;
    }
    const candidate = new Watcher(this.socket, endpointId, config.maxSocketBufferBytes, this.context.onSlowWatcher);
    candidate.lastSeq = afterSeq;
    const attached = await hub.attach(endpointId, candidate);
    if (attached === 'gone') return this.expire();
    if (attached !== 'attached') {
      if (created) await store.deleteEndpoint(endpointId).catch(() => undefined);
      // 'failed': the bus or the store could not be reached; the client retries later.
      const error = attached === 'full' ? errors.TOO_MANY_WATCHERS(config.maxWatchersPerEndpoint) : errors.STORE_UNAVAILABLE();
      this.reject(error);
      this.send(errorMessage(error, forType));
      this.closeWith(attached === 'full' ? CloseCode.AT_CAPACITY : CloseCode.TRY_AGAIN_LATER, error.code);
      return;
    }
    if (this.closed) return hub.detach(endpointId, candidate);

    // Read after attaching, the endpoint included: anything captured or changed from here on
    // reaches the watcher, and its seq check drops what the backlog already carried.
    let endpoint: EndpointRecord | undefined;
    let log: RequestLog | undefined;
    try {
      [endpoint, log] = await Promise.all([store.getEndpoint(endpointId), store.readLog(endpointId, afterSeq)]);
    } catch (error) {
      // Attached but never watching: left attached, its lease would be renewed for as long as
      // the process lives and hold a watcher slot.
      hub.detach(endpointId, candidate);
      if (created) await store.deleteEndpoint(endpointId).catch(() => undefined);
      throw error;
    }
    if (endpoint === undefined || log === undefined) {
      hub.detach(endpointId, candidate);
      return this.expire();
    }
    if (afterSeq > log.lastSeq) {
      // A resume from a number this endpoint never gave (another endpoint's, or a lost store):
      // accepting it would silently hold back every request up to it.
      hub.detach(endpointId, candidate);
      return this.badMessage(`afterSeq ${afterSeq} is past this endpoint's last request (${log.lastSeq})`, forType);
    }
    // Closed while reading: onClose had no watcher to detach, so it is done here.
    if (this.closed) return hub.detach(endpointId, candidate);
    this.watcher = candidate;
    this.endpointId = endpointId;
    this.redactsSecrets = endpoint.kind === 'kept';

    const info = toEndpointInfo(endpoint, key, this.publicBase, config);
    const firstSeq = log.requests[0]?.seq;
    candidate.send(
      welcomeMessage({
        endpoint: info,
        created,
        backlog: log.requests.length,
        clearedSeq: log.clearedSeq,
        lastSeq: log.lastSeq,
        gap: firstSeq !== undefined ? firstSeq > Math.max(afterSeq, log.clearedSeq) + 1 : log.lastSeq > Math.max(afterSeq, log.clearedSeq),
      }),
    );
    // Not awaited: the backlog is paced by the socket's drain, and the socket's next messages
    // (set-response, clear) should not wait for it.
    candidate.replay(log.requests.map((stored) => toFramed(stored.message, stored.seq))).catch((error: unknown) => this.failed(error));
  }

  private expire(): void {
    this.send(EXPIRED_MESSAGE);
    this.closeWith(CloseCode.ENDPOINT_NOT_FOUND, errors.ENDPOINT_NOT_FOUND().code);
  }
}
