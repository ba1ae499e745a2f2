import type { FastifyBaseLogger } from 'fastify';
import type { Access } from '../access/access.js';
import type { WebSocket } from 'ws';
import type { Config } from '../config.js';
import { toEndpointInfo, type EndpointInfoSettings } from '../endpoints/endpoint-records.js';
import type { EndpointService, Outcome } from '../endpoints/endpoint-service.js';
import { errors, rejectionReasonOf } from '../errors.js';
import type { CreateLimit } from '../request/rate-limit.js';
import type { Metrics } from '../metrics.js';
import {
  CloseCode,
  MAX_WS_MESSAGE_BYTES,
  SUBPROTOCOL_V1,
  type ClientMessage,
  type CreateMessage,
  type ReplayMessage,
} from '../shared/protocol.js';
import { errorMessage, EXPIRED_MESSAGE, responderMessage, welcomeMessage } from '../shared/server-messages.js';
import { nanoid } from 'nanoid';
import { RESPONDER_LEASE_MS } from '../endpoints/endpoint-service.js';
import { StoreUnavailableError, type EndpointRecord, type Store } from '../store/store.js';
import { parseClientMessage } from './client-messages.js';
import type { Hub } from './hub.js';
import { MessageBudget } from './message-budget.js';
import { relayReplayProgress, ReplayRelay } from './replay-relay.js';
import { requestFramed, toFramed, Watcher, writeBounded } from './watcher.js';
import { textFrame } from './frame.js';

/** What every session shares: built once per app, not once per socket. */
export interface SessionContext {
  config: EndpointInfoSettings & Pick<Config, 'socketLimits'>;
  store: Store;
  service: EndpointService;
  hub: Hub;
  metrics: Metrics;
  log: FastifyBaseLogger;
  /** KEPT_CREATES_PER_ADDRESS (per user for a signed-in one), counted with the endpoints API's creations; undefined when off. */
  countCreate: CreateLimit | undefined;
  /** Who may create and join (ACCESS_MODE); absent: anyone (open). */
  access?: Access;
  /** Called when a watcher is cut for reading too slowly. */
  onSlowWatcher: (watcher: Watcher) => void;
}

/** A socket must say create or join within this time, so idle sockets cannot pile up unowned. */
export const HELLO_TIMEOUT_MS = 10_000;
/**
 * What a `forwarded` message costs in the socket's message budget: a forwarder reports every
 * captured request, so it may send ten times the rate of a tab's own messages.
 */
const FORWARDED_COST = 0.1;
/**
 * What a parsed message costs: a forwarder's report and a responder's answer FORWARDED_COST (a
 * local answer also a token per MiB of its text, so a flood of large answers is cut off sooner),
 * anything else (a malformed message too) a whole token.
 */
function costOf(parsed: ReturnType<typeof parseClientMessage>, textLength: number): number {
  if (!parsed.ok) return 1;
  if (
    parsed.message.type === 'forwarded' ||
    parsed.message.type === 'replay-started' ||
    parsed.message.type === 'replay-result'
  )
    return FORWARDED_COST;
  if (parsed.message.type === 'local-answer') return FORWARDED_COST + textLength / (1024 * 1024);
  return 1;
}

/** Malformed messages in a row after which the socket is closed (1008): a client that keeps sending junk is broken or hostile. */
export const BAD_MESSAGE_RUN = 10;
/**
 * Bytes of messages one socket may have waiting their turn: twice the largest frame. A burst
 * within the rate arrives in one read and drains at once while the store keeps up; past this the
 * store is not keeping up, and the socket is told so and closed (1013) rather than queued
 * without bound.
 */
const MAX_WAITING_BYTES = 2 * MAX_WS_MESSAGE_BYTES;
/** What a waiting message is counted as beyond its text: its parsed form and its place in line. */
const WAITING_UPKEEP_BYTES = 512;

/** A socket that claimed the responder role (`hookwatch forward --respond`): its token, and the timer renewing its claim. */
interface Responder {
  token: string;
  renewal: NodeJS.Timeout;
}

/**
 * Where a socket is in its life. `hello`: it must send create or join before its timer runs out.
 * `joining`: a create or join is under way (the timer waits; a join that ends without watching
 * goes back to `hello` with what was left of the time). `watching`: it watches one endpoint.
 * `closed`: nothing more is handled. Changed only by `enter`.
 */
type State =
  | { name: 'hello'; timer: NodeJS.Timeout }
  | { name: 'joining' }
  | { name: 'watching'; watcher: Watcher; endpoint: EndpointRecord; responder?: Responder; replays?: ReplayRelay }
  | { name: 'closed' };

/** How a refused message is answered: the error, for which message type, and whether the socket closes. */
interface Refusal {
  forType?: string | undefined;
  close?: number;
}

/**
 * One live socket's side of the protocol: create or join, then set-response, clear and
 * forwarder reports. A class rather than a closure per handler, because thousands of sockets may
 * stay open for hours. Everything it sends goes through `send`, which checks the socket's backlog
 * first, and what a socket may send is bounded: a message rate, the bytes waiting their turn, and
 * a run of bad messages. Messages are parsed at once and handled one at a time, in the order sent.
 */
export class SocketSession {
  private state: State;
  private readonly budget: MessageBudget;
  private badRun = 0;
  /** The messages before the newest one, handled one at a time. */
  private inOrder: Promise<void> = Promise.resolve();
  private readonly openedAtMs = Date.now();
  /** The signed-in user: from the handshake (proxy mode), or from the token of the last create or join (token mode). */
  private user: string | undefined;
  /** Token mode: the token this socket signed in with, checked again at each heartbeat. */
  private token: string | undefined;
  /** The tokens' generation (access.ts) the token was last found in. */
  private tokenGeneration = 0;

  constructor(
    private readonly socket: WebSocket,
    private readonly context: SessionContext,
    /** `https://host`: where senders reach this server. */
    private readonly publicBase: string,
    /** The client's address key (address-key.ts), for per-address limits. */
    private readonly addressKey: string,
    /** Proxy mode: the user the sign-in proxy named in the handshake (socket-route.ts checked it). */
    proxyUser?: string,
  ) {
    this.user = proxyUser;
    this.budget = new MessageBudget(context.config.socketLimits.liveMessagesPerSecond);
    this.state = { name: 'hello', timer: this.helloTimer() };
  }

  /** A method, not a field test: the state changes across the awaits of a join. */
  private isClosed(): boolean {
    return this.state.name === 'closed';
  }

  /** The state's name, for tests and logs. */
  get stateName(): State['name'] {
    return this.state.name;
  }

  onMessage(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    if (this.state.name === 'closed') return;
    const text = isBinary ? '' : data.toString();
    // Charged a forwarder report's cost before parsing (so a flood is refused before any parse
    // work), and the rest of a whole message once parsing shows it is anything else: the text's
    // first bytes prove nothing (`{"type":"forwarded","type":"set-response"}` is a set-response).
    if (!this.budget.take(FORWARDED_COST)) return this.tooManyMessages();
    const bytes = text.length + WAITING_UPKEEP_BYTES;
    if (this.budget.waitingBytes + bytes > MAX_WAITING_BYTES) {
      this.context.log.warn("a live socket's messages are waiting on a slow store; closing it");
      return this.storeUnavailable();
    }
    if (isBinary) return this.badMessage('binary frames are not part of the protocol', undefined);
    const parsed = parseClientMessage(text);
    if (!this.budget.take(costOf(parsed, text.length) - FORWARDED_COST)) return this.tooManyMessages();
    if (!parsed.ok) return this.badMessage(parsed.problem, parsed.type);
    this.badRun = 0;
    // Handled in the order sent: a set-response right after create, or a corrected join right
    // after a refused one, finds the socket in the state the messages before it left.
    this.budget.waitingBytes += bytes;
    this.inOrder = this.inOrder
      .then(() => (this.state.name === 'closed' ? undefined : this.handle(parsed.message)))
      .catch((error: unknown) => this.failed(error))
      .finally(() => (this.budget.waitingBytes -= bytes));
  }

  onClose(): void {
    this.enter({ name: 'closed' });
  }

  /**
   * Called at each heartbeat: a socket whose token was withdrawn (ACCESS_TOKENS_FILE reloaded)
   * is told and closed with 4401, so a removed token stops watching within a heartbeat.
   */
  checkAccess(): void {
    const { access } = this.context;
    if (
      access?.mode !== 'token' ||
      this.token === undefined ||
      this.state.name === 'closed' ||
      access.generation === this.tokenGeneration
    )
      return;
    this.tokenGeneration = access.generation;
    if (access.userOfToken(this.token) === undefined) this.refuse(access.refusal(), { close: CloseCode.UNAUTHORIZED });
  }

  /** Token mode: signs the socket in with the token of a create or join; false (refused and closed) when it is not valid. */
  private signIn(message: { type: string; token?: string | undefined }): boolean {
    const { access } = this.context;
    if (access?.mode !== 'token') return true;
    this.user = access.userOfToken(message.token);
    this.token = this.user === undefined ? undefined : message.token;
    this.tokenGeneration = access.generation;
    if (this.user !== undefined) return true;
    this.refuse(access.refusal(), { forType: message.type, close: CloseCode.UNAUTHORIZED });
    return false;
  }

  // ---- the one place the state changes ----

  private enter(next: State): void {
    const previous = this.state;
    if (previous.name === 'closed') return;
    if (previous.name === 'hello') clearTimeout(previous.timer);
    if (previous.name === 'watching' && next.name === 'closed') {
      this.context.hub.detach(previous.watcher.endpointId, previous.watcher);
      if (previous.responder) this.letGo(previous.endpoint.id, previous.responder);
      previous.replays?.close();
    }
    this.state = next;
  }

  /** Back to waiting for a create or join, with what is left of the socket's first 10 s. */
  private enterHello(): void {
    this.enter({ name: 'hello', timer: this.helloTimer(Math.max(0, this.openedAtMs + HELLO_TIMEOUT_MS - Date.now())) });
  }

  private helloTimer(ms = HELLO_TIMEOUT_MS): NodeJS.Timeout {
    const timer = setTimeout(() => this.closeWith(CloseCode.HELLO_TIMEOUT, 'send create or join first'), ms);
    timer.unref();
    return timer;
  }

  private closeWith(code: number, reason: string): void {
    this.enter({ name: 'closed' });
    this.socket.close(code, reason);
  }

  // ---- answering ----

  /** Every reply goes through here: bounded like request delivery, so no reply can grow memory. */
  private send(data: string): void {
    if (this.state.name === 'watching') return this.state.watcher.send(data);
    writeBounded(this.socket, textFrame(data), this.context.config.socketLimits.maxSocketBufferBytes, () =>
      this.socket.terminate(),
    );
  }

  /** The one way a message is refused: counted, answered with its error, and the socket closed when asked. */
  private refuse(error: { code: string; message: string }, how: Refusal = {}): void {
    const reason = rejectionReasonOf(error.code);
    if (reason) this.context.metrics.reject(reason);
    this.send(errorMessage(error, how.forType));
    if (how.close !== undefined) this.closeWith(how.close, error.code);
  }

  private tooManyMessages(): void {
    this.refuse(errors.TOO_MANY_MESSAGES(this.context.config.socketLimits.liveMessagesPerSecond), {
      close: CloseCode.TOO_MANY_MESSAGES,
    });
  }

  private badMessage(problem: string, forType: string | undefined): void {
    const close = ++this.badRun >= BAD_MESSAGE_RUN ? CloseCode.POLICY_VIOLATION : undefined;
    this.refuse(errors.BAD_MESSAGE(problem), { forType });
    if (close !== undefined) this.closeWith(close, `${BAD_MESSAGE_RUN} malformed messages in a row`);
  }

  /** Nothing this socket can do until the store is back: says so, and lets it reconnect. */
  private storeUnavailable(): void {
    this.refuse(errors.STORE_UNAVAILABLE(), { close: CloseCode.TRY_AGAIN_LATER });
  }

  /** The endpoint is gone: the client shows it as expired and offers a new URL. */
  private expire(): void {
    this.send(EXPIRED_MESSAGE);
    this.closeWith(CloseCode.ENDPOINT_NOT_FOUND, errors.ENDPOINT_NOT_FOUND().code);
  }

  /** An endpoint action's error: a gone endpoint ends the socket; anything else is answered and the socket stays. */
  private refuseOutcome(outcome: Outcome<unknown> & { ok: false }, forType: string): void {
    if (outcome.error.code === 'ENDPOINT_NOT_FOUND') return this.expire();
    this.refuse(outcome.error, { forType });
  }

  private failed(error: unknown): void {
    if (error instanceof StoreUnavailableError) {
      this.context.log.warn({ err: error }, 'store unavailable');
      return this.storeUnavailable();
    }
    this.context.log.error({ err: error }, 'live message failed');
    this.send(errorMessage(errors.INTERNAL()));
  }

  // ---- the messages ----

  private async handle(message: ClientMessage | { type: 'set-response'; response: unknown }): Promise<void> {
    if (message.type === 'create' || message.type === 'join') {
      if (this.state.name === 'watching') return this.refuse(errors.ALREADY_JOINED(), { forType: message.type });
      if (!this.signIn(message)) return;
      this.enter({ name: 'joining' });
      try {
        if (message.type === 'create') await this.create(message);
        else await this.join(message.endpointId, message.key, message.afterSeq ?? 0);
      } finally {
        if (this.state.name === 'joining') this.enterHello();
      }
      return;
    }

    if (this.state.name !== 'watching') return this.refuse(errors.NOT_JOINED(), { forType: message.type });
    const { service } = this.context;
    const { endpoint } = this.state;
    if (message.type === 'forwarded') return service.relayForwarded(endpoint, message);
    if (message.type === 'claim-responder') return this.claimResponder(endpoint.id);
    if (message.type === 'announce-forwarder') {
      this.state.watcher.forwarder = true;
      return;
    }
    if (message.type === 'replay') return this.replay(message);
    if (message.type === 'replay-started' || message.type === 'replay-result') {
      if (!this.state.watcher.forwarder)
        return this.refuse(errors.BAD_MESSAGE(`send announce-forwarder before ${message.type}`), {
          forType: message.type,
        });
      return relayReplayProgress(service, endpoint.id, message);
    }
    if (message.type === 'local-answer') {
      if (!this.state.responder)
        return this.refuse(errors.BAD_MESSAGE('send claim-responder before local-answer'), { forType: message.type });
      const relayed = await service.relayLocalAnswer(endpoint.id, this.state.responder.token, message);
      return relayed.ok ? undefined : this.refuse(relayed.error, { forType: message.type });
    }
    const outcome =
      message.type === 'set-response'
        ? await service.setResponse(endpoint.id, message.response)
        : await service.clear(endpoint.id);
    // Applied: every watcher, this one included, hears of it from the store's announcement.
    if (!outcome.ok) this.refuseOutcome(outcome, message.type);
  }

  /** A tab's replay, ordered from the endpoint's forwarders (replay-relay.ts). */
  private async replay(message: ReplayMessage): Promise<void> {
    if (this.state.name !== 'watching') return;
    const { endpoint, watcher } = this.state;
    const { config, service } = this.context;
    this.state.replays ??= new ReplayRelay(
      watcher,
      endpoint.id,
      service,
      endpoint.kind === 'kept' ? config.requestLimits.keptMaxBodyBytes : config.requestLimits.maxBodyBytes,
    );
    const problem = await this.state.replays.order(message);
    if (problem !== undefined) this.refuse(errors.BAD_MESSAGE(problem), { forType: 'replay' });
  }

  /**
   * This socket answers the endpoint's senders from now on: the claim is renewed while the socket
   * watches, and given back when it closes. Every watcher hears `responder` from the store; this
   * socket is also told the id is its own.
   */
  private async claimResponder(endpointId: string): Promise<void> {
    if (this.state.name !== 'watching' || this.state.responder) return;
    const token = nanoid(12);
    const renewal = setInterval(() => {
      this.context.service.setResponder(endpointId, token, 'renew').then(
        // A claim a later one replaced waits its turn and is renewed all the same; one that is
        // gone (lapsed, or the endpoint ended) stops here.
        (holds) => (holds ? undefined : clearInterval(renewal)),
        (error: unknown) =>
          this.context.log.warn({ err: error, endpointId }, 'renewing a responder claim failed; retrying'),
      );
    }, RESPONDER_LEASE_MS / 3);
    renewal.unref();
    this.state.responder = { token, renewal };
    if (!(await this.context.service.setResponder(endpointId, token, 'claim'))) return this.expire();
    this.send(responderMessage(token, true));
  }

  /** A closing responder gives its claim back, so senders stop waiting for it at once. */
  private letGo(endpointId: string, responder: Responder): void {
    clearInterval(responder.renewal);
    this.context.service
      .setResponder(endpointId, responder.token, 'release')
      .catch((error: unknown) =>
        this.context.log.warn({ err: error, endpointId }, 'giving a responder claim back failed; it lapses'),
      );
  }

  private async create(message: CreateMessage): Promise<void> {
    const { type: _type, token: _token, ...choices } = message;
    // Live endpoints are bounded by the sockets that hold them; kept ones outlive the socket.
    const limited =
      message.kind === 'kept'
        ? await this.context.countCreate?.({ address: this.addressKey, user: this.user })
        : undefined;
    if (limited) return this.refuse(limited.error, { forType: 'create', close: CloseCode.TOO_MANY_MESSAGES });
    const created = await this.context.service.create(choices, this.user, this.addressKey);
    if (!created.ok) {
      // Full: nothing to retry on this socket. A bad choice or a taken name: the client may try another.
      const close = created.error.code === 'AT_CAPACITY' ? CloseCode.AT_CAPACITY : undefined;
      return this.refuse(created.error, { forType: 'create', ...(close === undefined ? {} : { close }) });
    }
    await this.watch(created.value.endpoint.id, created.value.key, 0, true);
  }

  private async join(id: string, key: string | undefined, afterSeq: number): Promise<void> {
    const authorized = await this.context.service.authorize(id, key, this.user);
    // Same answer for a wrong key as for no endpoint: the socket learns nothing about ids.
    if (!authorized.ok) return this.refuse(authorized.error, { forType: 'join', close: CloseCode.ENDPOINT_NOT_FOUND });
    await this.watch(authorized.value.id, key, afterSeq, false);
  }

  /**
   * Attaches a watcher, then reads the endpoint and its backlog: anything captured or changed
   * from the attach on reaches the watcher, and its seq check drops what the backlog already
   * carried. A watcher attached but never watching (the socket closed meanwhile, or a read
   * failed) is detached at once: left attached, its lease would be renewed for as long as the
   * process lives and hold a watcher slot. `key` undefined: opened by its creator without one,
   * whose welcome then carries an empty key.
   */
  private async watch(endpointId: string, key: string | undefined, afterSeq: number, created: boolean): Promise<void> {
    const { store, hub, config, service } = this.context;
    const forType = created ? 'create' : 'join';
    const forgetCreated = () => (created ? store.deleteEndpoint(endpointId).catch(() => false) : undefined);
    if (this.isClosed()) return void (await forgetCreated());

    const candidate = new Watcher(
      this.socket,
      endpointId,
      this.socket.protocol === SUBPROTOCOL_V1 ? 1 : 2,
      config.socketLimits.maxSocketBufferBytes,
      this.context.onSlowWatcher,
    );
    candidate.lastSeq = afterSeq;
    const attached = await hub.attach(endpointId, candidate);
    if (attached === 'gone') return this.expire();
    if (attached !== 'attached') {
      await forgetCreated();
      // 'failed': the bus or the store could not be reached; the client retries later.
      if (attached === 'full')
        return this.refuse(errors.TOO_MANY_WATCHERS(config.endpointLimits.maxWatchersPerEndpoint), {
          forType,
          close: CloseCode.AT_CAPACITY,
        });
      return this.refuse(errors.STORE_UNAVAILABLE(), { forType, close: CloseCode.TRY_AGAIN_LATER });
    }

    let endpoint: EndpointRecord | undefined;
    let since: Awaited<ReturnType<EndpointService['readSince']>>;
    try {
      if (this.isClosed()) return hub.detach(endpointId, candidate);
      [endpoint, since] = await Promise.all([store.getEndpoint(endpointId), service.readSince(endpointId, afterSeq)]);
    } catch (error) {
      hub.detach(endpointId, candidate);
      await forgetCreated();
      throw error;
    }
    if (endpoint === undefined || !since.ok) {
      hub.detach(endpointId, candidate);
      return this.expire();
    }
    const { log, gap } = since.value;
    // A client ahead of the endpoint (its afterSeq past the last seq given) gets what comes after
    // the real last seq: by its own claim it holds everything up to there.
    if (afterSeq > log.lastSeq) candidate.lastSeq = log.lastSeq;
    // Closed while reading: onClose had no watcher to detach, so it is done here; an endpoint
    // made for this socket is deleted, since no one else holds its key.
    if (this.isClosed()) {
      hub.detach(endpointId, candidate);
      return void (await forgetCreated());
    }
    this.enter({ name: 'watching', watcher: candidate, endpoint });

    const info = toEndpointInfo(endpoint, key ?? '', this.publicBase, config);
    candidate.send(
      welcomeMessage({
        endpoint: info,
        created,
        backlog: log.requests.length,
        clearedSeq: log.clearedSeq,
        lastSeq: log.lastSeq,
        gap,
      }),
    );
    // Not awaited: the backlog is paced by the socket's drain, and the socket's next messages
    // (set-response, clear) should not wait for it.
    const backlog = log.requests.flatMap((stored) =>
      stored.forwarded === undefined ? [requestFramed(stored)] : [requestFramed(stored), toFramed(stored.forwarded)],
    );
    candidate.replay(backlog).catch((error: unknown) => this.failed(error));
  }
}
