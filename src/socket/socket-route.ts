import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { WebSocket } from 'ws';
import type { Access } from '../access/access.js';
import type { EndpointService } from '../endpoints/endpoint-service.js';
import type { Config } from '../config.js';
import { errors } from '../errors.js';
import { addressKey, PerAddressCount } from '../request/address-key.js';
import { createPublicBase, requestOrigin } from '../request/public-base.js';
import { createLimits, type CreateLimit } from '../request/rate-limit.js';
import type { Metrics } from '../metrics.js';
import type { Store } from '../store/store.js';
import type { Hub } from './hub.js';
import { SocketSession, type SessionContext } from './socket-session.js';
import { CloseCode, LIVE_PATH, SUBPROTOCOL, SUBPROTOCOL_V1 } from '../shared/protocol.js';

export interface LiveRouteOptions {
  config: SessionContext['config'] & Pick<Config, 'server' | 'clientLimits'>;
  store: Store;
  service: EndpointService;
  hub: Hub;
  metrics: Metrics;
  /** KEPT_CREATES_PER_ADDRESS (per user for a signed-in one), shared with the endpoints API. */
  countCreate: CreateLimit;
  /** Who may create and join (ACCESS_MODE). */
  access: Access;
}

/** The WebSocket route of the live protocol (docs/protocol.md). */
export async function socketRoute(app: FastifyInstance, options: LiveRouteOptions): Promise<void> {
  const { config, store, service, hub, metrics, countCreate, access } = options;
  const configuredOrigins = new Set([
    ...config.server.allowedOrigins,
    ...(config.server.publicUrl ? [new URL(config.server.publicUrl).origin] : []),
  ]);

  // A browser always sends Origin on a WebSocket handshake; only the page's own origin (and the
  // configured ones) may open live sockets, so another site cannot drive a visitor's browser here.
  // Clients that send no Origin (curl, scripts, servers) are not browsers and are let through.
  const checkOrigin: onRequestHookHandler = async (request) => {
    const origin = request.headers.origin;
    if (origin === undefined || configuredOrigins.has(origin) || origin === requestOrigin(request)) return;
    throw errors.ORIGIN_NOT_ALLOWED(origin);
  };
  // Open sockets per address: each holds at most one endpoint, so this also bounds the live
  // endpoints one address keeps alive. Counted from the handshake to the TCP close.
  const openSockets = new PerAddressCount(config.clientLimits.maxLiveSocketsPerAddress);
  const countOpenSocket: onRequestHookHandler = async (request) => {
    if (request.headers.upgrade === undefined) return;
    const key = addressKey(request.ip);
    if (!openSockets.take(key)) throw errors.TOO_MANY_SOCKETS(config.clientLimits.maxLiveSocketsPerAddress);
    request.raw.socket.once('close', () => openSockets.give(key));
  };
  const onRequest: onRequestHookHandler[] = [checkOrigin];
  // Proxy mode: the sign-in proxy names the user on the handshake, so a socket without one is
  // refused there (401), before it counts against anything. Token mode: the token comes in the
  // first message instead, never in the URL.
  if (access.mode === 'proxy') onRequest.push(async (request) => void access.userOf(request.raw));
  if (config.clientLimits.liveConnectsPerAddress > 0) {
    const limitConnects = createLimits(app, [
      {
        max: config.clientLimits.liveConnectsPerAddress,
        windowMs: config.clientLimits.rateLimitWindowMs,
        key: (request: FastifyRequest) => `live-connect:${addressKey(request.ip)}`,
        what: 'live sockets',
      },
    ]);
    // Not the limit itself as the hook: a hook's third argument is Fastify's `done`.
    onRequest.push((request, reply) => limitConnects(request, reply));
  }
  onRequest.push(countOpenSocket);

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
      // A withdrawn token (ACCESS_TOKENS_FILE reloaded) ends its sockets within a heartbeat.
      sessions.get(client)?.checkAccess();
    }
  }, config.socketLimits.heartbeatMs);
  heartbeat.unref();
  app.addHook('onClose', async () => clearInterval(heartbeat));

  // Shared by every socket: a session is one object, with no closures of its own. The app
  // logger, not a per-request child: one less object per open socket.
  const context: SessionContext = {
    config,
    store,
    service,
    hub,
    metrics,
    log: app.log,
    countCreate,
    access,
    onSlowWatcher: (watcher) => {
      metrics.reject('slow_watcher');
      app.log.warn({ endpointId: watcher.endpointId }, 'slow watcher disconnected');
    },
  };
  const publicBaseFor = createPublicBase(config.server.publicUrl);
  // ws calls listeners with the socket as `this`; the session is looked up, not captured.
  const sessions = new WeakMap<WebSocket, SocketSession>();
  function onMessage(this: WebSocket, data: Buffer | ArrayBuffer | Buffer[], isBinary: boolean) {
    sessions.get(this)?.onMessage(data, isBinary);
  }
  function onClose(this: WebSocket) {
    sessions.get(this)?.onClose();
  }
  function onPong(this: WebSocket) {
    unanswered.delete(this);
  }
  const onError = (error: Error) => app.log.debug({ err: error }, 'live socket error');

  const wsHandler = (socket: WebSocket, request: FastifyRequest) => {
    // Take what the socket needs from the upgrade request and keep no reference to it: a live
    // socket may stay open for hours, and the request object is several KiB.
    // Base URL senders use: PUBLIC_URL, or the origin this socket came to.
    const publicBase = publicBaseFor(request);
    // @fastify/websocket's own 'error' listener closes over the request and reply; ours does not.
    socket.removeAllListeners('error');
    socket.on('error', onError);
    // @fastify/websocket routes the upgrade through Fastify with a stand-in HTTP response bound to
    // the TCP socket; unbind it so the response, the request and their Fastify wrappers can be
    // collected while the socket lives on (about 3 KiB per watcher).
    const tcp = request.raw.socket as Socket & { _httpMessage?: ServerResponse | null };
    tcp._httpMessage?.detachSocket(tcp);
    if (socket.protocol !== SUBPROTOCOL && socket.protocol !== SUBPROTOCOL_V1) {
      socket.close(CloseCode.PROTOCOL_ERROR, `use the WebSocket subprotocol ${SUBPROTOCOL}`);
      return;
    }

    // Listeners go on before any await, so no frame or close is missed.
    const proxyUser = access.mode === 'proxy' ? access.userOf(request.raw) : undefined;
    sessions.set(socket, new SocketSession(socket, context, publicBase, addressKey(request.ip), proxyUser));
    socket.on('pong', onPong);
    socket.on('close', onClose);
    socket.on('message', onMessage);
  };

  app.route({
    method: 'GET',
    url: LIVE_PATH,
    onRequest,
    wsHandler,
    // A plain HTTP request to the socket's path (no Upgrade header).
    handler: async () => {
      throw errors.UPGRADE_REQUIRED();
    },
  });
}
