import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { errors } from '../errors.js';
import type { Metrics } from '../metrics.js';
import type { Appended, EndpointKind, EntryBuilder, Store } from '../store/store.js';
import type { ReadBody } from './read-body.js';

/**
 * Stores the request (the store announces it to watchers) and counts it. Not raced with the
 * capture's deadline: once the store has run the capture, its answer stands (a 503 after it
 * stored the request would make the sender's retry a second copy); the store bounds its own wait
 * and refuses to store past what is left of the deadline (store.ts, appendRequest). A body past
 * the read limit is stored, then answered 413.
 */
export function createRequestStorer(deps: {
  config: Pick<Config, 'requestLimits'>;
  store: Store;
  metrics: Metrics;
  debug: boolean;
}) {
  const { config, store, metrics, debug } = deps;
  return async (
    request: FastifyRequest,
    reply: FastifyReply,
    body: ReadBody,
    recordFor: EntryBuilder,
    target: { kind: EndpointKind; endpointId: string; receivedAtMs: number; giveUpAtMs: number },
  ): Promise<Appended> => {
    const { kind, endpointId, receivedAtMs, giveUpAtMs } = target;
    const appended = await store.appendRequest(endpointId, kind, recordFor, receivedAtMs, giveUpAtMs);
    if (appended === undefined) throw errors.ENDPOINT_NOT_FOUND();
    metrics.capturedRequests.inc();
    metrics.capturedBytes.inc(body.size);
    if (body.truncated) metrics.truncations.inc();
    if (debug)
      request.log.debug({ endpointId, seq: appended.seq, method: request.method, size: body.size }, 'request captured');
    if (body.overLimit) {
      // The rest of the body was never read: close the connection rather than drain it.
      reply.header('connection', 'close');
      throw errors.BODY_TOO_LARGE(config.requestLimits.readLimitBytes);
    }
    return appended;
  };
}
