import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions, onRequestHookHandler } from 'fastify';
import { toRequestDraft } from '../capture/captured-request.js';
import { readBody } from '../capture/read-body.js';
import { createUtcTimeFormatter } from '../capture/utc-time.js';
import type { Config } from '../config.js';
import { errors } from '../errors.js';
import type { Hub } from '../live/hub.js';
import type { Metrics } from '../metrics.js';
import { RECEIVER_PREFIX, requestMessage } from '../live/protocol.js';
import type { ResponseConfig } from '../response-config.js';
import type { Store } from '../store/store.js';
import { RECEIVER_METHODS } from './methods.js';

export interface ReceiverRouteOptions {
  config: Config;
  store: Store;
  hub: Hub;
  metrics: Metrics;
}

/** Says whether an answer came from the endpoint's configuration or from Hookwatch itself. */
export const RESPONSE_SOURCE_HEADER = 'x-hookwatch-response';

/** On every answer from a receiver URL, configured or error (product.md item 5). */
export const RECEIVER_HEADERS = Object.freeze({
  'content-security-policy': 'sandbox',
  'x-content-type-options': 'nosniff',
  'access-control-allow-origin': '*',
  'access-control-expose-headers': '*',
  [RESPONSE_SOURCE_HEADER]: 'error',
});

/**
 * `ANY /api/webhook-tester/<id>[/any/sub/path][?query]`: captures the request, stores it, fans it
 * out to the endpoint's watchers, and answers with the endpoint's response configuration.
 */
export async function receiverRoute(app: FastifyInstance, options: ReceiverRouteOptions): Promise<void> {
  const { config, store, hub, metrics } = options;
  const limits = { maxBodyBytes: config.maxBodyBytes, readLimitBytes: config.readLimitBytes };
  const captureOptions = { maxJsonDepth: config.maxJsonDepth, formatTime: createUtcTimeFormatter() };
  // Skip building the per-capture log object when nobody would see it (the hot path).
  const debug = ['debug', 'trace'].includes(app.log.level);

  // Every answer from a receiver URL, configured or error: nothing in it may run script on our
  // origin (CSP sandbox, nosniff), and browser-based senders may read it (CORS open).
  // A callback hook, not an async one: it runs on every request and needs no promise.
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(RECEIVER_HEADERS);
    done();
  });

  const handler = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const receivedAtMs = Date.now();
    const endpointId = request.params.id;

    let body;
    try {
      body = await readBody(request.raw, limits);
    } catch (error) {
      // The sender went away mid-body: there is no one to answer and nothing complete to show.
      request.log.debug({ endpointId, reason: (error as Error).message }, 'request aborted');
      reply.hijack();
      request.raw.socket.destroy();
      return;
    }

    const rawUrl = request.raw.url ?? '';
    const draft = toRequestDraft({
      method: request.method,
      url: rawUrl,
      subPath: subPathOf(rawUrl),
      rawHeaders: request.raw.rawHeaders,
      body: body.kept,
      size: body.size,
      truncated: body.truncated,
      remoteAddress: request.ip,
      receivedAtMs,
    }, captureOptions);
    // Serialised once here; the store puts `seq` first and every watcher gets the same string.
    const appended = await store.appendRequest(endpointId, JSON.stringify(draft));
    if (!appended) throw errors.ENDPOINT_NOT_FOUND();

    metrics.capturedRequests.inc();
    metrics.capturedBytes.inc(body.size);
    if (body.truncated) metrics.truncations.inc();
    await hub.publish(endpointId, { seq: appended.request.seq, data: requestMessage(appended.request.json), capturedAtMs: receivedAtMs });
    if (debug) request.log.debug({ endpointId, seq: appended.request.seq, method: request.method, size: body.size }, 'request captured');

    if (body.overLimit) {
      // The rest of the body was never read: close the connection rather than drain it.
      reply.header('connection', 'close');
      throw errors.BODY_TOO_LARGE(config.readLimitBytes);
    }
    return sendConfigured(request, reply, appended.response);
  };

  // Limits run before the body is read; a limited request is answered 429 and not captured.
  const rateLimits: onRequestHookHandler[] = [];
  if (config.rateLimitPerAddress > 0) {
    rateLimits.push(app.rateLimit({ max: config.rateLimitPerAddress, timeWindow: config.rateLimitWindowMs, groupId: 'receiver-address' }));
  }
  if (config.rateLimitPerEndpoint > 0) {
    rateLimits.push(
      app.rateLimit({
        max: config.rateLimitPerEndpoint,
        timeWindow: config.rateLimitWindowMs,
        keyGenerator: (request) => (request.params as { id: string }).id,
        groupId: 'receiver-endpoint',
      }),
    );
  }

  // Fastify gives every request a child logger bound to its reqId. That binding only ties
  // together the per-request lines, which this route writes at debug and trace; above those a
  // child would be built (about 1 µs) for every capture and never used, so the route logs
  // through the app's logger instead.
  const childLoggerFactory: RouteOptions['childLoggerFactory'] = (logger, bindings, childOptions) =>
    debug ? logger.child(bindings, childOptions) : logger;

  for (const url of [`${RECEIVER_PREFIX}:id`, `${RECEIVER_PREFIX}:id/*`]) {
    app.route({ method: RECEIVER_METHODS, url, onRequest: rateLimits, childLoggerFactory, handler });
  }
}

function sendConfigured(request: FastifyRequest, reply: FastifyReply, response: ResponseConfig) {
  reply.header(RESPONSE_SOURCE_HEADER, 'configured');
  const preflightMethod = request.method === 'OPTIONS' ? request.headers['access-control-request-method'] : undefined;
  if (preflightMethod !== undefined) {
    // A CORS preflight is captured like any request, but answered so the browser lets the real
    // request through whatever status is configured.
    const requestedHeaders = request.headers['access-control-request-headers'];
    reply.headers({
      'access-control-allow-methods': preflightMethod,
      'access-control-max-age': '600',
      ...(requestedHeaders === undefined ? {} : { 'access-control-allow-headers': requestedHeaders }),
    });
    return reply.code(204).send();
  }
  reply.code(response.status);
  if (response.status === 204 || response.body === '') return reply.send();
  const charset = response.contentType.startsWith('text/') || response.contentType === 'application/json' ? '; charset=utf-8' : '';
  return reply.type(`${response.contentType}${charset}`).send(response.body);
}

/** `/api/webhook-tester/<id>/github/push?x=1` -> `/github/push`. */
function subPathOf(rawUrl: string): string {
  const queryStart = rawUrl.indexOf('?');
  const path = queryStart === -1 ? rawUrl : rawUrl.slice(0, queryStart);
  const slash = path.indexOf('/', RECEIVER_PREFIX.length);
  return slash === -1 ? '' : path.slice(slash);
}
