import fastifyWebsocket from '@fastify/websocket';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import type { Bus } from './bus/bus.js';
import type { Config } from './config.js';
import { errors, toErrorBody } from './errors.js';
import { healthRoute } from './http/health-route.js';
import { disableBodyParsing } from './http/methods.js';
import { pageRoute } from './http/page-route.js';
import { receiverRoute } from './http/receiver-route.js';
import { createHub, type Hub } from './live/hub.js';
import { liveRoute } from './live/live-route.js';
import { CloseCode, SUBPROTOCOL } from './live/protocol.js';
import type { Store } from './store/store.js';

export interface AppDeps {
  store: Store;
  bus: Bus;
  /** A pino logger; tests pass one writing to memory. Default: Fastify's own at the config's level. */
  logger?: FastifyBaseLogger;
  /** Where the built page lives (tests may point elsewhere). */
  clientRoot?: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    hub: Hub;
  }
}

/** WebSocket frames from browsers are small control messages; a set-response body is at most 64 KiB. */
const MAX_WS_MESSAGE_BYTES = 128 * 1024;

/** Builds the whole service without listening, so tests and main.ts share it. */
export async function buildApp(config: Config, deps: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: { level: config.logLevel } }),
    trustProxy: config.trustProxy,
    // One line per captured request at debug (receiver-route) instead of two per HTTP request.
    logController: new LogController({ disableRequestLogging: true }),
    routerOptions: { maxParamLength: 200 },
    forceCloseConnections: 'idle',
  }) as unknown as FastifyInstance;

  disableBodyParsing(app);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const known = (errors as Record<string, unknown>)[error.code] !== undefined;
    const status = error.statusCode ?? 500;
    if (known || (status >= 400 && status < 500)) {
      return reply.code(status).send(toErrorBody({ code: error.code ?? 'BAD_REQUEST', message: error.message }));
    }
    request.log.error({ err: error }, 'unhandled error');
    return reply.code(500).send(toErrorBody(errors.INTERNAL()));
  });
  app.setNotFoundHandler((_request, reply) => reply.code(404).send(toErrorBody(errors.NOT_FOUND())));

  const hub = createHub({
    store: deps.store,
    bus: deps.bus,
    graceMs: config.graceMs,
    maxWatchersPerEndpoint: config.maxWatchersPerEndpoint,
    log: app.log,
  });
  app.decorate('hub', hub);

  await app.register(fastifyWebsocket, {
    options: {
      maxPayload: MAX_WS_MESSAGE_BYTES,
      handleProtocols: (protocols) => (protocols.has(SUBPROTOCOL) ? SUBPROTOCOL : false),
    },
    preClose(done) {
      // Tell every watcher why (1001), so pages reconnect to another instance or retry later.
      for (const client of app.websocketServer.clients) client.close(CloseCode.GOING_AWAY, 'server shutting down');
      app.websocketServer.close(() => done());
    },
  });
  app.addHook('onClose', async () => hub.close());

  const baseUrl = (request: FastifyRequest) => config.publicUrl ?? `${request.protocol}://${request.host}`;
  await app.register(healthRoute, { store: deps.store });
  await app.register(receiverRoute, { config, store: deps.store, hub });
  await app.register(liveRoute, { config, store: deps.store, hub, baseUrl });
  await app.register(pageRoute, deps.clientRoot === undefined ? {} : { root: deps.clientRoot });
  return app;
}
