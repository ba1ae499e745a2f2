import type { Server } from 'node:http';
import fastifyRateLimit from '@fastify/rate-limit';
import fastifyWebsocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance } from 'fastify';
import type { Bus } from './bus/bus.js';
import type { Config } from './config.js';
import { errors, toErrorBody } from './errors.js';
import { createClientErrorHandler } from './http/client-error.js';
import { healthRoute } from './http/health-route.js';
import { metricsRoute } from './http/metrics-route.js';
import { disableBodyParsing } from './http/methods.js';
import { pageRoute } from './http/page-route.js';
import { receiverRoute } from './http/receiver-route.js';
import { createHub, type Hub } from './live/hub.js';
import { liveRoute } from './live/live-route.js';
import { liveUpgrades } from './live/upgrades.js';
import { CloseCode, SUBPROTOCOL } from './live/protocol.js';
import { createMetrics, type RejectionReason } from './metrics.js';
import type { Store } from './store/store.js';

export interface AppDeps {
  store: Store;
  bus: Bus;
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

/** WebSocket frames from browsers are small control messages; a set-response body is at most 64 KiB. */
const MAX_WS_MESSAGE_BYTES = 128 * 1024;

/** HTTP errors counted in `hookwatch_rejections_total`, by the reason label they get. */
const REJECTION_BY_CODE: Partial<Record<string, RejectionReason>> = {
  ENDPOINT_NOT_FOUND: 'endpoint_not_found',
  BODY_TOO_LARGE: 'body_too_large',
  RATE_LIMITED: 'rate_limited',
  ORIGIN_NOT_ALLOWED: 'origin_not_allowed',
};

/** Builds the whole service without listening, so tests and main.ts share it. */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const httpOptions = {
    maxHeaderSize: config.maxHeaderBytes,
    // Node enforces requestTimeout only when headersTimeout is not longer, and only checks every
    // connectionsCheckingInterval (default 30 s).
    headersTimeout: config.requestTimeoutMs,
    connectionsCheckingInterval: Math.min(1000, config.requestTimeoutMs),
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
    // One line per captured request at debug (receiver-route) instead of two per HTTP request.
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { maxParamLength: 200 },
    forceCloseConnections: 'idle',
  }) as unknown as FastifyInstance;

  disableBodyParsing(app);

  // The watcher gauge reads the hub only when scraped, after the hub below exists.
  const metrics = createMetrics({ countEndpoints: () => deps.store.countEndpoints(), countWatchers: () => hub.watcherTotal() });
  const hub = createHub({
    store: deps.store,
    bus: deps.bus,
    graceMs: config.graceMs,
    maxWatchersPerEndpoint: config.maxWatchersPerEndpoint,
    log: app.log,
    onDelivered: (capturedAtMs) => metrics.deliveryLagSeconds.observe((Date.now() - capturedAtMs) / 1000),
  });
  app.decorate('hub', hub);
  const onClientError = createClientErrorHandler({ maxHeaderBytes: config.maxHeaderBytes, metrics, log: app.log });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = (errors as Record<string, unknown>)[error.code] !== undefined;
    const status = error.statusCode ?? 500;
    const rejection = REJECTION_BY_CODE[error.code];
    if (rejection) metrics.reject(rejection);
    if (known || (status >= 400 && status < 500)) {
      return reply.code(status).send(toErrorBody({ code: error.code ?? 'BAD_REQUEST', message: error.message }));
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send(toErrorBody(errors.INTERNAL()));
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(toErrorBody(errors.NOT_FOUND())));

  await app.register(fastifyRateLimit, {
    global: false,
    // Only a 429 carries rate-limit headers: a sender's normal answer stays as configured.
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    addHeaders: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false, 'retry-after': true },
    errorResponseBuilder: (_request, context) => errors.RATE_LIMITED(`(at most ${context.max} per ${config.rateLimitWindowMs / 1000} s)`, context.after),
  });

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
    await live.register(liveRoute, { config, store: deps.store, hub, metrics });
    app.decorate('websocketServer', live.websocketServer);
  });
  app.addHook('onClose', async () => hub.close());

  await app.register(healthRoute, { store: deps.store });
  await app.register(metricsRoute, { metrics });
  await app.register(receiverRoute, { config, store: deps.store, hub, metrics });
  await app.register(pageRoute, deps.clientRoot === undefined ? {} : { root: deps.clientRoot });
  return app;
}
