import { createHash, timingSafeEqual } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import { customAlphabet, nanoid } from 'nanoid';
import type { WebSocket } from 'ws';
import type { Config } from '../config.js';
import { errors } from '../errors.js';
import { parseResponseConfig, DEFAULT_RESPONSE } from '../response-config.js';
import type { EndpointRecord, Store } from '../store/store.js';
import { parseClientMessage } from './client-messages.js';
import type { Metrics } from '../metrics.js';
import type { Hub } from './hub.js';
import { CloseCode, LIVE_PATH, RECEIVER_PREFIX, SUBPROTOCOL, requestMessage, type EndpointInfo, type ErrorMessage, type WelcomeMessage } from './protocol.js';
import { Watcher } from './watcher.js';

export interface LiveRouteOptions {
  config: Config;
  store: Store;
  hub: Hub;
  metrics: Metrics;
  /** Base URL senders use, for this request (PUBLIC_URL, or derived from the request). */
  baseUrl: (request: FastifyRequest) => string;
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

/** The WebSocket route of the live protocol (docs/protocol.md). */
export async function liveRoute(app: FastifyInstance, options: LiveRouteOptions): Promise<void> {
  const { config, store, hub, metrics } = options;
  const configuredOrigins = new Set([...config.allowedOrigins, ...(config.publicUrl ? [new URL(config.publicUrl).origin] : [])]);

  // A browser always sends Origin on a WebSocket handshake; only the page's own origin (and the
  // configured ones) may open live sockets, so another site cannot drive a visitor's browser here.
  // Clients that send no Origin (curl, scripts, servers) are not browsers and are let through.
  const checkOrigin: onRequestHookHandler = async (request) => {
    const origin = request.headers.origin;
    if (origin === undefined || configuredOrigins.has(origin) || origin === `${request.protocol}://${request.host}`) return;
    throw errors.ORIGIN_NOT_ALLOWED(origin);
  };
  const onRequest: onRequestHookHandler[] = [checkOrigin];
  if (config.liveConnectsPerAddress > 0) {
    onRequest.push(app.rateLimit({ max: config.liveConnectsPerAddress, timeWindow: config.rateLimitWindowMs, groupId: 'live-connect' }));
  }

  // One heartbeat for all sockets: a socket that has not answered the previous ping is dead.
  const unanswered = new WeakSet<WebSocket>();
  const heartbeat = setInterval(() => {
    for (const client of app.websocketServer.clients) {
      if (unanswered.has(client)) {
        client.terminate();
        continue;
      }
      unanswered.add(client);
      client.ping();
    }
  }, config.heartbeatMs);
  heartbeat.unref();
  app.addHook('onClose', async () => clearInterval(heartbeat));

  app.get(LIVE_PATH, { websocket: true, onRequest }, (socket: WebSocket, request: FastifyRequest) => {
    // Take what the socket needs from the upgrade request and keep no reference to it: a live
    // socket may stay open for hours, and the request object is several KiB.
    // The app logger, not a per-request child: one less object per open socket.
    const log = app.log;
    const receiverBase = `${options.baseUrl(request)}${RECEIVER_PREFIX}`;
    // @fastify/websocket's own 'error' listener closes over the request and reply; ours does not.
    socket.removeAllListeners('error');
    socket.on('error', (error) => log.debug({ err: error }, 'live socket error'));
    // @fastify/websocket routes the upgrade through Fastify with a stand-in HTTP response bound to
    // the TCP socket; unbind it so the response, the request and their Fastify wrappers can be
    // collected while the socket lives on (about 3 KiB per watcher).
    const tcp = request.raw.socket as Socket & { _httpMessage?: ServerResponse | null };
    tcp._httpMessage?.detachSocket(tcp);
    if (socket.protocol !== SUBPROTOCOL) {
      socket.close(CloseCode.PROTOCOL_ERROR, `use the WebSocket subprotocol ${SUBPROTOCOL}`);
      return;
    }

    let watcher: Watcher | undefined;
    let endpointId: string | undefined;
    let joining = false;
    let closed = false;

    // Listeners go on before any await, so no frame or close is missed.
    const helloTimer = setTimeout(() => socket.close(CloseCode.HELLO_TIMEOUT, 'send create or join first'), HELLO_TIMEOUT_MS);
    helloTimer.unref();
    socket.on('pong', () => unanswered.delete(socket));

    socket.on('close', () => {
      closed = true;
      clearTimeout(helloTimer);
      if (watcher && endpointId !== undefined) hub.detach(endpointId, watcher);
    });
    socket.on('message', (data, isBinary) => {
      if (isBinary) return socket.send(errorMessage(errors.BAD_MESSAGE('binary frames are not part of the protocol')));
      handle(data.toString()).catch((error: unknown) => {
        log.error({ err: error }, 'live message failed');
        socket.send(errorMessage(errors.INTERNAL()));
      });
    });

    async function handle(text: string): Promise<void> {
      const parsed = parseClientMessage(text);
      if (!parsed.ok) {
        metrics.reject('bad_message');
        return socket.send(errorMessage(errors.BAD_MESSAGE(parsed.problem), parsed.type));
      }
      const message = parsed.message;

      if (message.type === 'create' || message.type === 'join') {
        if (watcher || joining) return socket.send(errorMessage(errors.ALREADY_JOINED(), message.type));
        joining = true;
        clearTimeout(helloTimer);
        if (message.type === 'create') await create();
        else await join(message.endpointId, message.key, message.afterSeq ?? 0);
        joining = false;
        return;
      }

      if (!watcher || endpointId === undefined) return socket.send(errorMessage(errors.NOT_JOINED(), message.type));

      if (message.type === 'set-response') {
        const result = parseResponseConfig(message.response);
        if (!result.ok) return socket.send(errorMessage(errors.INVALID_RESPONSE_CONFIG(result.message), message.type));
        if (!(await store.setResponse(endpointId, result.value))) return expire();
        await hub.publish(endpointId, { data: JSON.stringify({ type: 'response', response: result.value }) });
        return;
      }

      // clear
      const clearedSeq = await store.clearRequests(endpointId);
      if (clearedSeq === undefined) return expire();
      await hub.publish(endpointId, { data: JSON.stringify({ type: 'cleared', clearedSeq }) });
    }

    async function create(): Promise<void> {
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
        socket.send(errorMessage(error, 'create'));
        socket.close(CloseCode.AT_CAPACITY, error.code);
        return;
      }
      log.debug({ endpointId: endpoint.id }, 'endpoint created');
      await watch(endpoint, key, 0, true);
    }

    async function join(id: string, key: string, afterSeq: number): Promise<void> {
      const endpoint = await store.getEndpoint(id);
      // Same answer for a wrong key as for no endpoint: the socket learns nothing about ids.
      if (!endpoint || !keyMatches(key, endpoint.keyHash)) {
        socket.send(errorMessage(errors.ENDPOINT_NOT_FOUND(), 'join'));
        socket.close(CloseCode.ENDPOINT_NOT_FOUND, errors.ENDPOINT_NOT_FOUND().code);
        return;
      }
      await watch(endpoint, key, afterSeq, false);
    }

    async function watch(endpoint: EndpointRecord, key: string, afterSeq: number, created: boolean): Promise<void> {
      if (closed) {
        if (created) await store.deleteEndpoint(endpoint.id);
        return;
      }
      const candidate = new Watcher(socket, config.maxSocketBufferBytes, () => {
        metrics.reject('slow_watcher');
        log.warn({ endpointId: endpoint.id }, 'slow watcher disconnected');
      });
      candidate.lastSeq = afterSeq;
      if (!(await hub.attach(endpoint.id, candidate))) {
        metrics.reject('too_many_watchers');
        const error = errors.TOO_MANY_WATCHERS(config.maxWatchersPerEndpoint);
        socket.send(errorMessage(error, created ? 'create' : 'join'));
        socket.close(CloseCode.AT_CAPACITY, error.code);
        return;
      }
      watcher = candidate;
      endpointId = endpoint.id;
      if (closed) return hub.detach(endpoint.id, candidate);

      // Read after attaching: anything captured from here on is held by the watcher, and its
      // seq check drops what the backlog already carried.
      const [backlog, clearedSeq] = await Promise.all([store.listRequests(endpoint.id, afterSeq), store.clearedSeq(endpoint.id)]);
      if (backlog === undefined || clearedSeq === undefined) return expire();

      const info: EndpointInfo = {
        id: endpoint.id,
        url: `${receiverBase}${endpoint.id}`,
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

    function expire(): void {
      socket.send('{"type":"expired"}');
      socket.close(CloseCode.ENDPOINT_NOT_FOUND, errors.ENDPOINT_NOT_FOUND().code);
    }
  });
}
