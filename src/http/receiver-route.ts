import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions, onRequestHookHandler } from 'fastify';
import { RECEIVER_HEADERS } from '../answers/receiver-headers.js';
import type { WaitingSenders } from '../answers/waiting-senders.js';
import { createAdmission } from '../capture/admission.js';
import { createCapture } from '../capture/pipeline.js';
import type { ReadingBudget } from '../capture/read-body.js';
import { endpointIdOf, receiverTarget } from '../capture/target.js';
import type { Config } from '../config.js';
import { errors } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { RECEIVER_PREFIXES } from '../shared/protocol.js';
import type { Store } from '../store/store.js';
import { RECEIVER_METHODS } from './methods.js';

export interface ReceiverRouteOptions {
  config: Pick<Config, 'requestLimits' | 'endpointLimits' | 'clientLimits' | 'endpoints' | 'redis'>;
  store: Store;
  metrics: Metrics;
  readingBudget: ReadingBudget;
  /** Aborted when the app closes, so answers waiting out a configured delay go at once. */
  closing: AbortSignal;
  /** Senders waiting for their local app's answer. */
  waitingSenders: WaitingSenders;
}

/**
 * Captures a request to a receiver URL the router could not take (a malformed `%` escape in the
 * sub-path): still a request to the endpoint, so it is limited and captured like any other.
 */
export type CaptureUnrouted = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/**
 * `ANY /api/webhook-tester/<id>[/any/sub/path][?query]` (live) and the same under
 * `/api/webhook-endpoint/` (kept): the routes, wired to the capture pipeline (src/capture,
 * pipeline.ts) with the rate limits checked before the handler.
 */
export function addReceiverRoutes(app: FastifyInstance, options: ReceiverRouteOptions): CaptureUnrouted {
  const { config, store, metrics, readingBudget, closing, waitingSenders } = options;
  // Skip building the per-capture log object when nobody would see it (the hot path).
  const debug = ['debug', 'trace'].includes(app.log.level);
  const admission = createAdmission(app, config);
  const capture = createCapture({ config, store, metrics, readingBudget, admission, waitingSenders, closing, debug });

  // Fastify gives every request a child logger bound to its reqId. That binding only ties
  // together the per-request lines, which this route writes at debug and trace; above those a
  // child would be built for every capture and never used (docs/performance.md), so the route logs
  // through the app's logger instead.
  const childLoggerFactory: RouteOptions['childLoggerFactory'] = (logger, bindings, childOptions) =>
    debug ? logger.child(bindings, childOptions) : logger;

  for (const kind of ['live', 'kept'] as const) {
    const handler = (request: FastifyRequest, reply: FastifyReply) =>
      capture(request, reply, kind, endpointIdOf(request));
    for (const url of [`${RECEIVER_PREFIXES[kind]}:id`, `${RECEIVER_PREFIXES[kind]}:id/*`]) {
      app.route({
        method: RECEIVER_METHODS,
        url,
        onRequest: admission.limited ? (admission.admit as onRequestHookHandler) : [],
        childLoggerFactory,
        handler,
      });
    }
  }

  return async (request, reply) => {
    const target = receiverTarget(request.raw.url ?? '');
    if (!target) {
      reply.headers(RECEIVER_HEADERS);
      throw errors.BAD_REQUEST();
    }
    await admission.admit(request, reply);
    return capture(request, reply, target.kind, target.endpointId);
  };
}
