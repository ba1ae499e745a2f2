import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import fastifyRateLimit from '@fastify/rate-limit';
import fastifyWebsocket from '@fastify/websocket';
import type { Cluster, Redis } from 'ioredis';
import { nanoid } from 'nanoid';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { createAccess, type Access } from './access/access.js';
import type { Bus } from './bus/bus.js';
import { createReadingBudget } from './capture/read-body.js';
import type { Config } from './config.js';
import { createEndpointService, type EndpointAudit, type EndpointService } from './endpoints/endpoint-service.js';
import { errors } from './errors.js';
import { refuseHandedOver } from './http/raw-errors.js';
import { createClientErrorHandler } from './http/client-error.js';
import { limitConnections } from './http/connection-limits.js';
import { endpointsRoute } from './http/endpoints-route.js';
import { createErrorHandler, handleRouterError } from './http/error-handler.js';
import { healthRoute } from './http/health-route.js';
import { metricsRoute } from './http/metrics-route.js';
import { disableBodyParsing } from './http/methods.js';
import { openApiRoute } from './http/openapi-route.js';
import { pageRoute } from './http/page-route.js';
import { createPublicBase } from './request/public-base.js';
import { accessRoute } from './http/access-route.js';
import { createAddressLimit, type CreateLimit } from './request/rate-limit.js';
import { addReceiverRoutes, type CaptureUnrouted } from './http/receiver-route.js';
import { createUnsentReplies } from './http/unsent-replies.js';
import { createHub, type Hub } from './socket/hub.js';
import { socketRoute } from './socket/socket-route.js';
import { liveUpgrades } from './socket/upgrades.js';
import { createMetrics, type Metrics } from './metrics.js';
import { CloseCode, MAX_WS_MESSAGE_BYTES, SUBPROTOCOL, SUBPROTOCOL_V1 } from './shared/protocol.js';
import { createWaitingSenders } from './answers/waiting-senders.js';
import { createWaits } from './endpoints/waits.js';
import type { Store } from './store/store.js';

export interface AppDeps {
  store: Store;
  bus: Bus;
  /** With Redis: the client the rate limits share (a connection main.ts owns). */
  rateLimitRedis?: Redis | Cluster;
  /** This instance's name as a lease holder; default a new random one. */
  instanceId?: string;
  /** A pino logger; tests pass one writing to memory. Default: Fastify's own at the config's level. */
  logger?: FastifyBaseLogger;
  /** Where the built page lives (tests may point elsewhere). */
  clientRoot?: string;
  /** PEM certificate and key: serve HTTPS. main.ts reads them from TLS_CERT_FILE / TLS_KEY_FILE. */
  tls?: { cert: Buffer; key: Buffer };
}

declare module 'fastify' {
  interface FastifyInstance {
    hub: Hub;
    /** The receiver's capture for a request the router could not take (receiver-route.ts). */
    captureUnrouted: CaptureUnrouted;
    /**
     * Reads ACCESS_TOKENS_FILE again (main.ts calls it on SIGHUP): the number of tokens now. A
     * removed token stops working for new calls at once and closes its open sockets at their
     * next heartbeat. Throws AccessTokensError (the old tokens stay) on a bad file.
     */
    reloadAccess: () => number;
  }
}

/**
 * The largest frame a browser may send. A `set-response` is the largest message: a body of
 * 64 KiB of UTF-8, which JSON escaping may grow up to six times, plus headers. Anything larger
 * is past every documented limit, and ws closes the socket with 1009.
 */

/** Builds the whole service without listening, so tests and main.ts share it. */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const { store, bus } = deps;
  const app = createFastify(config, deps, (error, socket) => onClientError(error, socket));
  // Node drops headers past 2,000 lines without a word; the head's byte limit bounds them instead.
  app.server.maxHeadersCount = 0;
  disableBodyParsing(app);

  const readingBudget = createReadingBudget(config.processLimits.maxReadingBytes);
  const unsentReplies = createUnsentReplies({
    maxBytes: config.processLimits.maxApiAnswerBytes,
    maxBytesPerAddress: config.clientLimits.maxApiAnswerBytesPerAddress,
  });
  // The gauges read their sources only when scraped, once everything below exists.
  const metrics = createMetrics({
    countEndpoints: () => store.countEndpoints(),
    countWatchers: () => hub.watcherTotal(),
    storeStats: () => store.stats(),
    readingBytes: () => readingBudget.held(),
    openConnections: () => openConnections(),
    apiAnswerBytes: () => unsentReplies.held(),
  });
  const openConnections = limitConnections(
    app.server,
    {
      maxConnections: config.processLimits.maxConnections,
      maxConnectionsPerAddress: config.clientLimits.maxConnectionsPerAddress,
      tls: deps.tls !== undefined,
      trustProxy: config.server.trustProxy,
    },
    metrics,
  );
  const hub = createHub({
    store,
    bus,
    instanceId: deps.instanceId ?? nanoid(),
    leaseMs: config.endpoints.leaseMs,
    graceMs: config.endpoints.graceMs,
    maxWatchersPerEndpoint: config.endpointLimits.maxWatchersPerEndpoint,
    log: app.log,
    onDelivered: (capturedAtMs) => metrics.deliveryLagSeconds.observe((Date.now() - capturedAtMs) / 1000),
  });
  app.decorate('hub', hub);
  const waits = createWaits(hub, bus);
  app.addHook('onClose', async () => hub.close());
  const access = createAccess(config.access, config.server.trustProxy);
  if (config.access.accessMode === 'proxy' && config.server.trustProxy === true) {
    // Every peer is then believed, so anyone who reaches this port directly can name any user.
    app.log.warn(
      "ACCESS_MODE=proxy with TRUST_PROXY=true believes the user header from every address: list the sign-in proxy's addresses instead, unless only the proxy can reach this port",
    );
  }
  app.decorate('reloadAccess', () => access.reload());
  // Who created or deleted what: the user, never a key, a token or a body.
  const audit: EndpointAudit = (event, endpoint, user) => {
    if (event === 'created') metrics.endpointsCreated.inc({ kind: endpoint.kind, mode: config.access.accessMode });
    app.log.info(
      { endpointId: endpoint.id, kind: endpoint.kind, ...(user === undefined ? {} : { user }) },
      `endpoint ${event}`,
    );
  };
  const service = createEndpointService({ store, bus, config, audit });

  const { sendError, handleError } = createErrorHandler(metrics);
  const onClientError = createClientErrorHandler({
    maxHeaderBytes: config.requestLimits.maxHeaderBytes,
    metrics,
    log: app.log,
  });
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => sendError(errors.NOT_FOUND(), request, reply));
  answerOddRequests(app, metrics);

  // With Redis the limits are counted there, so every instance enforces the same ones.
  await app.register(fastifyRateLimit, {
    global: false,
    ...(deps.rateLimitRedis
      ? { redis: deps.rateLimitRedis, nameSpace: `${config.redis.redisPrefix}rl:`, skipOnError: true }
      : {}),
  });
  // One count for every way to make a kept endpoint: the API and the live socket's `create`.
  const countCreate = createCountCreate(app, config.clientLimits);
  sweepExpired(app, store, config.storage.cleanupIntervalMs);
  // Aborted on close, so answers waiting out a configured delay go at once.
  const closing = new AbortController();
  app.addHook('onClose', async () => closing.abort());

  await registerSocket(app, { config, store, service, hub, metrics, countCreate, access });
  await app.register(accessRoute, { access });
  await app.register(healthRoute, { store });
  await app.register(metricsRoute, { metrics });
  await app.register(openApiRoute);
  await app.register(endpointsRoute, {
    config,
    store,
    service,
    waits,
    readingBudget,
    unsentReplies,
    countCreate,
    access,
    publicBaseFor: createPublicBase(config.server.publicUrl),
  });
  const waitingSenders = createWaitingSenders(waits, {
    timeoutMs: config.requestLimits.respondTimeoutMs,
    maxWaiting: config.processLimits.respondMaxWaiting,
    maxWaitingPerAddress: config.clientLimits.respondMaxWaitingPerAddress,
    maxBytes: config.processLimits.respondMaxBytes,
  });
  app.decorate(
    'captureUnrouted',
    addReceiverRoutes(app, { config, store, metrics, readingBudget, closing: closing.signal, waitingSenders }),
  );
  await app.register(pageRoute, deps.clientRoot === undefined ? {} : { root: deps.clientRoot });
  return app;
}

/** The Fastify instance with the HTTP server's bounds; `onClientError` answers what Node's parser rejects. */
function createFastify(
  config: Pick<Config, 'server' | 'requestLimits'>,
  deps: AppDeps,
  onClientError: (error: NodeJS.ErrnoException, socket: Socket) => void,
): FastifyInstance {
  const httpOptions = {
    maxHeaderSize: config.requestLimits.maxHeaderBytes,
    // The head must arrive within headersTimeout from the connection's start, which also gives
    // a new connection a short time to send its first bytes. Node enforces these only every
    // connectionsCheckingInterval (default 30 s).
    headersTimeout: config.requestLimits.headersTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, config.requestLimits.headersTimeoutMs),
  };
  return Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: { level: config.server.logLevel } }),
    ...(deps.tls ? { https: { ...httpOptions, cert: deps.tls.cert, key: deps.tls.key } } : { http: httpOptions }),
    trustProxy: config.server.trustProxy,
    // Slowloris bounds: the whole request within requestTimeout, idle keep-alive closed after idleTimeoutMs.
    requestTimeout: config.requestLimits.requestTimeoutMs,
    keepAliveTimeout: config.requestLimits.idleTimeoutMs,
    // Called only once listening, when the handler exists.
    clientErrorHandler: onClientError,
    // Errors the router raises before any route: answered in our format, and a receiver URL the
    // router cannot decode is still captured.
    frameworkErrors: (error, request, reply) =>
      handleRouterError(error, request, reply, request.server.captureUnrouted, request.server.errorHandler),
    // One line per captured request at debug (receiver-route) instead of two per HTTP request.
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { maxParamLength: 200 },
    forceCloseConnections: 'idle',
  }) as unknown as FastifyInstance;
}

/**
 * Creations counted per client address (KEPT_CREATES_PER_ADDRESS), or for a signed-in user per
 * user instead (KEPT_CREATES_PER_USER), whatever address they come from: users behind one
 * office address do not share a count, and one user cannot spread over many addresses.
 */
function createCountCreate(app: FastifyInstance, limits: Config['clientLimits']): CreateLimit {
  const window = { windowMs: limits.rateLimitWindowMs, what: 'new endpoints' };
  const byAddress =
    limits.keptCreatesPerAddress > 0
      ? createAddressLimit(app, { name: 'endpoint-create', max: limits.keptCreatesPerAddress, ...window })
      : undefined;
  const byUser =
    limits.keptCreatesPerUser > 0
      ? createAddressLimit(app, { name: 'user-create', max: limits.keptCreatesPerUser, ...window })
      : undefined;
  return async ({ address, user }) => (user === undefined ? byAddress?.(address) : byUser?.(user));
}

/** What Node would otherwise answer itself, not in our format. */
function answerOddRequests(app: FastifyInstance, metrics: Metrics): void {
  // An `Expect` other than 100-continue: Node would answer a bare 417 itself. It is a request
  // like any other here (RFC 9110 section 10.1.1 lets a server ignore it), so route it.
  app.server.on('checkExpectation', (request, response) => app.routing(request, response));
  // CONNECT asks for a tunnel, which this server never opens; without a listener Node closes the
  // connection without a word.
  app.server.on('connect', (_request, socket: Duplex) => {
    metrics.reject('bad_request');
    refuseHandedOver(socket, {
      ...errors.BAD_REQUEST(),
      message: 'CONNECT is not supported: this server opens no tunnels',
    });
  });
}

/** Expired endpoints are already gone for every request; this frees what they held. */
function sweepExpired(app: FastifyInstance, store: Store, intervalMs: number): void {
  const sweeper = setInterval(() => {
    store.sweepExpired().catch((error: unknown) => app.log.warn({ err: error }, 'sweeping expired endpoints failed'));
  }, intervalMs);
  sweeper.unref();
  app.addHook('onClose', async () => clearInterval(sweeper));
}

/**
 * The WebSocket plugin in a context of its own with the live route only: registered on the root
 * it adds two hooks and a handler wrapper to every route, receivers included; here upgrades
 * reach it only for /api/live.
 */
async function registerSocket(
  app: FastifyInstance,
  options: {
    config: Config;
    store: Store;
    service: EndpointService;
    hub: Hub;
    metrics: Metrics;
    countCreate: CreateLimit;
    access: Access;
  },
): Promise<void> {
  const upgrades = liveUpgrades(app.server);
  await app.register(async (live) => {
    await live.register(fastifyWebsocket, {
      options: {
        // Not an HTTP server: the emitter above, which passes on the live path's upgrades only.
        server: upgrades as unknown as Server,
        maxPayload: MAX_WS_MESSAGE_BYTES,
        // One client message per turn of the event loop: a socket streaming tiny frames would
        // otherwise have thousands handled in one go while /healthz and captures wait. Clients
        // send few messages (set-response, clear, reports), so this costs the hot path nothing.
        allowSynchronousEvents: false,
        handleProtocols: (protocols) =>
          protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : protocols.has(SUBPROTOCOL_V1) ? SUBPROTOCOL_V1 : false,
      },
      preClose(done) {
        // Tell every watcher why (1001), so pages reconnect to another instance or retry later.
        for (const client of live.websocketServer.clients) client.close(CloseCode.GOING_AWAY, 'server shutting down');
        live.websocketServer.close(() => done());
      },
    });
    await live.register(socketRoute, options);
    app.decorate('websocketServer', live.websocketServer);
  });
}
