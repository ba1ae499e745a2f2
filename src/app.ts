import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';
import fastifyRateLimit from '@fastify/rate-limit';
import fastifyWebsocket from '@fastify/websocket';
import type { Redis } from 'ioredis';
import { nanoid } from 'nanoid';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Bus } from './bus/bus.js';
import { createReadingBudget, SenderGoneError } from './capture/read-body.js';
import type { Config } from './config.js';
import { errors, rejectionReasonOf, toErrorBody } from './errors.js';
import { refuseHandedOver, RESPONSE_SOURCE_HEADER } from './http/answers.js';
import { createClientErrorHandler } from './http/client-error.js';
import { limitConnections } from './http/connection-limits.js';
import { endpointsRoute } from './http/endpoints-route.js';
import { healthRoute } from './http/health-route.js';
import { createPublicBase } from './http/public-base.js';
import { metricsRoute } from './http/metrics-route.js';
import { disableBodyParsing } from './http/methods.js';
import { pageRoute } from './http/page-route.js';
import { createUnsentAnswers } from './http/unsent-answers.js';
import { createAddressLimit } from './http/rate-limit.js';
import { receiverRoute, receiverTarget, type UnroutedCapture } from './http/receiver-route.js';
import { createEndpointService } from './endpoints/endpoint-service.js';
import { createHub, type Hub } from './live/hub.js';
import { liveRoute } from './live/live-route.js';
import { liveUpgrades } from './live/upgrades.js';
import { CloseCode, SUBPROTOCOL } from './shared/protocol.js';
import { createMetrics } from './metrics.js';
import { StoreUnavailableError, type Store } from './store/store.js';

export interface AppDeps {
  store: Store;
  bus: Bus;
  /** With Redis: the client the rate limits share (a connection main.ts owns). */
  rateLimitRedis?: Redis;
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
  }
}

/**
 * The largest frame a browser may send. A `set-response` is the largest message: a body of
 * 64 KiB of UTF-8, which JSON escaping may grow up to six times, plus headers. Anything larger
 * is past every documented limit, and ws closes the socket with 1009.
 */
const MAX_WS_MESSAGE_BYTES = 512 * 1024;

/** Builds the whole service without listening, so tests and main.ts share it. */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const httpOptions = {
    maxHeaderSize: config.maxHeaderBytes,
    // The head must arrive within headersTimeout from the connection's start, which also gives
    // a new connection a short time to send its first bytes. Node enforces these only every
    // connectionsCheckingInterval (default 30 s).
    headersTimeout: config.headersTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, config.headersTimeoutMs),
  };
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: { level: config.logLevel } }),
    ...(deps.tls ? { https: { ...httpOptions, cert: deps.tls.cert, key: deps.tls.key } } : { http: httpOptions }),
    trustProxy: config.trustProxy,
    // Slowloris bounds: the whole request within requestTimeout, idle keep-alive closed after idleTimeoutMs.
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.idleTimeoutMs,
    // Called only once listening, after onClientError below exists.
    clientErrorHandler: (error, socket) => onClientError(error, socket),
    // Errors the router raises before any route: answered in our format, and a receiver URL the
    // router cannot decode is still captured.
    frameworkErrors: (error, request, reply) => onFrameworkError(error, request, reply),
    // One line per captured request at debug (receiver-route) instead of two per HTTP request.
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { maxParamLength: 200 },
    forceCloseConnections: 'idle',
  }) as unknown as FastifyInstance;

  // Node drops headers past 2,000 lines without a word; the head's byte limit bounds them instead.
  app.server.maxHeadersCount = 0;
  disableBodyParsing(app);

  const readingBudget = createReadingBudget(config.maxReadingBytes);
  const unsentAnswers = createUnsentAnswers({ maxBytes: config.maxApiAnswerBytes, maxBytesPerAddress: config.maxApiAnswerBytesPerAddress });
  // The gauges read their sources only when scraped, after everything below exists.
  const metrics = createMetrics({
    countEndpoints: () => deps.store.countEndpoints(),
    countWatchers: () => hub.watcherTotal(),
    storeStats: () => deps.store.stats(),
    readingBytes: () => readingBudget.held(),
    openConnections: () => openConnections(),
    apiAnswerBytes: () => unsentAnswers.held(),
  });
  const openConnections = limitConnections(
    app.server,
    { maxConnections: config.maxConnections, maxConnectionsPerAddress: config.maxConnectionsPerAddress, tls: deps.tls !== undefined, trustProxy: config.trustProxy },
    metrics,
  );
  const hub = createHub({
    store: deps.store,
    bus: deps.bus,
    instanceId: deps.instanceId ?? nanoid(),
    leaseMs: config.leaseMs,
    graceMs: config.graceMs,
    maxWatchersPerEndpoint: config.maxWatchersPerEndpoint,
    log: app.log,
    onDelivered: (capturedAtMs) => metrics.deliveryLagSeconds.observe((Date.now() - capturedAtMs) / 1000),
  });
  app.decorate('hub', hub);
  const service = createEndpointService({ store: deps.store, bus: deps.bus, config });
  const onClientError = createClientErrorHandler({ maxHeaderBytes: config.maxHeaderBytes, metrics, log: app.log });

  const sendError = (error: { code: string; message: string; statusCode?: number }, request: FastifyRequest, reply: FastifyReply) => {
    const reason = rejectionReasonOf(error.code);
    if (reason) metrics.reject(reason);
    reply.header(RESPONSE_SOURCE_HEADER, 'error');
    // A refused upgrade must not leave a half-open connection waiting for a protocol switch.
    if (request.headers.upgrade !== undefined) reply.header('connection', 'close');
    return reply.code(error.statusCode ?? 500).send(toErrorBody(error));
  };
  const handleError = (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof StoreUnavailableError) {
      request.log.warn({ err: error }, 'store unavailable');
      return sendError(errors.STORE_UNAVAILABLE(), request, reply);
    }
    if (error instanceof SenderGoneError) {
      // Not a fault: any client can hang up mid-body, and there is no one left to answer.
      request.log.debug({ reason: error.message }, 'request aborted');
      reply.hijack();
      request.raw.socket.destroy();
      return undefined;
    }
    const known = (errors as Record<string, unknown>)[error.code] !== undefined;
    const status = error.statusCode ?? 500;
    if (known) return sendError(error, request, reply);
    if (status >= 400 && status < 500) return sendError(errors.BAD_REQUEST(), request, reply);
    request.log.error({ err: error }, 'unhandled error');
    return sendError(errors.INTERNAL(), request, reply);
  };
  app.setErrorHandler(handleError);
  app.setNotFoundHandler((request, reply) => sendError(errors.NOT_FOUND(), request, reply));
  // Set by the receiver route: captures a request to a receiver URL the router could not take.
  const unrouted: UnroutedCapture = {};
  const onFrameworkError = async (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    try {
      const toReceiver = receiverTarget(request.raw.url ?? '') !== undefined;
      if (error.code === 'FST_ERR_BAD_URL' && toReceiver && unrouted.capture) return await unrouted.capture(request, reply);
      // An id longer than any we give out.
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH' && toReceiver) throw errors.ENDPOINT_NOT_FOUND();
      throw errors.BAD_REQUEST();
    } catch (thrown) {
      return handleError(thrown as FastifyError, request, reply);
    }
  };

  // An `Expect` other than 100-continue: Node would answer a bare 417 itself. It is a request
  // like any other here (RFC 9110 section 10.1.1 lets a server ignore it), so route it.
  app.server.on('checkExpectation', (request, response) => app.routing(request, response));
  // CONNECT asks for a tunnel, which this server never opens; without a listener Node closes the
  // connection without a word.
  app.server.on('connect', (_request, socket: Duplex) => {
    metrics.reject('bad_request');
    refuseHandedOver(socket, { ...errors.BAD_REQUEST(), message: 'CONNECT is not supported: this server opens no tunnels' });
  });

  // With Redis the limits are counted there, so every instance enforces the same ones.
  await app.register(fastifyRateLimit, {
    global: false,
    ...(deps.rateLimitRedis ? { redis: deps.rateLimitRedis, nameSpace: `${config.redisPrefix}rl:`, skipOnError: true } : {}),
  });

  // One count for every way to make a kept endpoint: the API and the live socket's `create`.
  const countCreate =
    config.keptCreatesPerAddress > 0
      ? createAddressLimit(app, { name: 'endpoint-create', max: config.keptCreatesPerAddress, windowMs: config.rateLimitWindowMs, what: 'new endpoints' })
      : undefined;

  // Expired endpoints are already gone for every request; this frees what they held.
  const sweeper = setInterval(() => {
    deps.store.sweepExpired().catch((error: unknown) => app.log.warn({ err: error }, 'sweeping expired endpoints failed'));
  }, config.cleanupIntervalMs);
  sweeper.unref();
  app.addHook('onClose', async () => clearInterval(sweeper));

  // Aborted on close, so answers waiting out a configured delay go at once.
  const closing = new AbortController();
  app.addHook('onClose', async () => closing.abort());

  // The WebSocket plugin lives in its own context with the live route only. Registered on the
  // root it adds two hooks and a handler wrapper to every route, receivers included; here
  // upgrades reach it only for /api/live.
  const upgrades = liveUpgrades(app.server);
  await app.register(async (live) => {
    await live.register(fastifyWebsocket, {
      options: {
        // Not an HTTP server: the emitter above, which passes on the live path's upgrades only.
        server: upgrades as unknown as Server,
        maxPayload: MAX_WS_MESSAGE_BYTES,
        handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
      },
      preClose(done) {
        // Tell every watcher why (1001), so pages reconnect to another instance or retry later.
        for (const client of live.websocketServer.clients) client.close(CloseCode.GOING_AWAY, 'server shutting down');
        live.websocketServer.close(() => done());
      },
    });
    await live.register(liveRoute, { config, store: deps.store, service, hub, metrics, countCreate });
    app.decorate('websocketServer', live.websocketServer);
  });
  app.addHook('onClose', async () => hub.close());

  await app.register(healthRoute, { store: deps.store });
  await app.register(metricsRoute, { metrics });
  await app.register(endpointsRoute, { config, store: deps.store, service, readingBudget, unsentAnswers, countCreate, publicBaseFor: createPublicBase(config.publicUrl) });
  await app.register(receiverRoute, { config, store: deps.store, metrics, readingBudget, closing: closing.signal, unrouted });
  await app.register(pageRoute, deps.clientRoot === undefined ? {} : { root: deps.clientRoot });
  return app;
}
