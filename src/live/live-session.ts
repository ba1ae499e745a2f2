import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { customAlphabet, nanoid } from 'nanoid';
import type { WebSocket } from 'ws';
import type { Config } from '../config.js';
import { errors } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { DEFAULT_RESPONSE, parseResponseConfig } from '../response-config.js';
import type { EndpointRecord, Store } from '../store/store.js';
import { parseClientMessage } from './client-messages.js';
import type { Hub } from './hub.js';
import { CloseCode, requestMessage, type EndpointInfo, type ErrorMessage, type WelcomeMessage } from './protocol.js';
import { Watcher } from './watcher.js';

/** What every session shares: built once per app, not once per socket. */
export interface SessionContext {
  config: Config;
  store: Store;
  hub: Hub;
  metrics: Metrics;
  log: FastifyBaseLogger;
  /** Called when a watcher is cut for reading too slowly. */
  onSlowWatcher: (watcher: Watcher) => void;
}

/** A socket must say create or join within this time, so idle sockets cannot pile up unowned. */
const HELLO_TIMEOUT_MS = 10_000;

/** 21 URL-safe characters: 126 random bits (product.md: at least 120). */
const newEndpointId = () => nanoid();
/** 32 alphanumeric characters: about 190 random bits; no `-`/`_` so it double-clicks as one word. */
const newWatchKey = customAlphabet('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 32);

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Constant-time: both sides are SHA-256 digests of equal length. */
function keyMatches(key: string, keyHash: string): boolean {
  return timingSafeEqual(Buffer.from(hashKey(key), 'hex'), Buffer.from(keyHash, 'hex'));
}

function errorMessage(error: { code: string; message: string }, forType?: string): string {
  const message: ErrorMessage = { type: 'error', error: { code: error.code, message: error.message } };
  if (forType !== undefined) message.for = forType;
  return JSON.stringify(message);
}

/**
 * One live socket's side of the protocol: create or join, then set-response and clear. A class
 * rather than a closure per handler, because thousands of sockets may stay open for hours.
 */
export class LiveSession {
  private watcher: Watcher | undefined;
  private endpointId: string | undefined;
  private joining = false;
  private closed = false;
  private helloTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly socket: WebSocket,
    private readonly context: SessionContext,
    /** `https://host/api/webhook-tester/`: the receiver URL without the id. */
    private readonly receiverBase: string,
  ) {
    this.helloTimer = setTimeout(() => socket.close(CloseCode.HELLO_TIMEOUT, 'send create or join first'), HELLO_TIMEOUT_MS);
    this.helloTimer.unref();
  }

  onMessage(data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean): void {
    if (isBinary) return this.send(errorMessage(errors.BAD_MESSAGE('binary frames are not part of the protocol')));
    this.handle(data.toString()).catch((error: unknown) => {
      this.context.log.error({ err: error }, 'live message failed');
      this.send(errorMessage(errors.INTERNAL()));
    });
  }

  onClose(): void {
    this.closed = true;
    this.stopHelloTimer();
    if (this.watcher && this.endpointId !== undefined) this.context.hub.detach(this.endpointId, this.watcher);
  }

  private send(data: string): void {
    this.socket.send(data);
  }

  private stopHelloTimer(): void {
    clearTimeout(this.helloTimer);
    this.helloTimer = undefined;
  }

  private async handle(text: string): Promise<void> {
    const { store, hub, metrics } = this.context;
    const parsed = parseClientMessage(text);
    if (!parsed.ok) {
      metrics.reject('bad_message');
      return this.send(errorMessage(errors.BAD_MESSAGE(parsed.problem), parsed.type));
    }
    const message = parsed.message;

    if (message.type === 'create' || message.type === 'join') {
      if (this.watcher || this.joining) return this.send(errorMessage(errors.ALREADY_JOINED(), message.type));
      this.joining = true;
      this.stopHelloTimer();
      if (message.type === 'create') await this.create();
      else await this.join(message.endpointId, message.key, message.afterSeq ?? 0);
      this.joining = false;
      return;
    }

    const endpointId = this.endpointId;
    if (!this.watcher || endpointId === undefined) return this.send(errorMessage(errors.NOT_JOINED(), message.type));

    if (message.type === 'set-response') {
      const result = parseResponseConfig(message.response);
      if (!result.ok) return this.send(errorMessage(errors.INVALID_RESPONSE_CONFIG(result.message), message.type));
      if (!(await store.setResponse(endpointId, result.value))) return this.expire();
      await hub.publish(endpointId, { data: JSON.stringify({ type: 'response', response: result.value }) });
      return;
    }

    // clear
    const clearedSeq = await store.clearRequests(endpointId);
    if (clearedSeq === undefined) return this.expire();
    await hub.publish(endpointId, { data: JSON.stringify({ type: 'cleared', clearedSeq }) });
  }

  private async create(): Promise<void> {
    const { store, config, metrics, log } = this.context;
    const key = newWatchKey();
    const endpoint: EndpointRecord = {
      id: newEndpointId(),
      keyHash: hashKey(key),
      createdAt: new Date().toISOString(),
      response: DEFAULT_RESPONSE,
    };
    if (!(await store.createEndpoint(endpoint, config.maxEndpoints))) {
      metrics.reject('at_capacity');
      const error = errors.AT_CAPACITY(`${config.maxEndpoints} live endpoints`);
      this.send(errorMessage(error, 'create'));
      this.socket.close(CloseCode.AT_CAPACITY, error.code);
      return;
    }
    log.debug({ endpointId: endpoint.id }, 'endpoint created');
    await this.watch(endpoint, key, 0, true);
  }

  private async join(id: string, key: string, afterSeq: number): Promise<void> {
    const endpoint = await this.context.store.getEndpoint(id);
    // Same answer for a wrong key as for no endpoint: the socket learns nothing about ids.
    if (!endpoint || !keyMatches(key, endpoint.keyHash)) {
      this.send(errorMessage(errors.ENDPOINT_NOT_FOUND(), 'join'));
      this.socket.close(CloseCode.ENDPOINT_NOT_FOUND, errors.ENDPOINT_NOT_FOUND().code);
      return;
    }
    await this.watch(endpoint, key, afterSeq, false);
  }

  private async watch(endpoint: EndpointRecord, key: string, afterSeq: number, created: boolean): Promise<void> {
    const { store, hub, config, metrics } = this.context;
    if (this.closed) {
      if (created) await store.deleteEndpoint(endpoint.id);
      return;
    }
    const candidate = new Watcher(this.socket, endpoint.id, config.maxSocketBufferBytes, this.context.onSlowWatcher);
    candidate.lastSeq = afterSeq;
    if (!(await hub.attach(endpoint.id, candidate))) {
      metrics.reject('too_many_watchers');
      const error = errors.TOO_MANY_WATCHERS(config.maxWatchersPerEndpoint);
      this.send(errorMessage(error, created ? 'create' : 'join'));
      this.socket.close(CloseCode.AT_CAPACITY, error.code);
      return;
    }
    this.watcher = candidate;
    this.endpointId = endpoint.id;
    if (this.closed) return hub.detach(endpoint.id, candidate);

    // Read after attaching: anything captured from here on is held by the watcher, and its
    // seq check drops what the backlog already carried.
    const [backlog, clearedSeq] = await Promise.all([store.listRequests(endpoint.id, afterSeq), store.clearedSeq(endpoint.id)]);
    if (backlog === undefined || clearedSeq === undefined) return this.expire();

    const info: EndpointInfo = {
      id: endpoint.id,
      url: `${this.receiverBase}${endpoint.id}`,
      key,
      createdAt: endpoint.createdAt,
      response: endpoint.response,
      graceSeconds: config.graceMs / 1000,
      requestsKept: config.requestsPerEndpoint,
    };
    const firstSeq = backlog[0]?.seq;
    const welcome: WelcomeMessage = {
      type: 'welcome',
      endpoint: info,
      created,
      backlog: backlog.length,
      clearedSeq,
      gap: firstSeq !== undefined && firstSeq > Math.max(afterSeq, clearedSeq) + 1,
    };
    candidate.send(JSON.stringify(welcome));
    await candidate.replay(backlog.map((stored) => ({ seq: stored.seq, data: requestMessage(stored.json) })));
  }

  private expire(): void {
    this.send('{"type":"expired"}');
    this.socket.close(CloseCode.ENDPOINT_NOT_FOUND, errors.ENDPOINT_NOT_FOUND().code);
  }
}
