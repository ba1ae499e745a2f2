import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.js';
import { maxBodyBytesFor } from '../endpoints/endpoint-records.js';
import { errors } from '../errors.js';
import type { EndpointKind } from '../store/store.js';
import { readBody, type BodyLimits, type ReadBody, type ReadingBudget } from './read-body.js';

/** Seconds a sender refused for capacity should wait. */
const CAPACITY_RETRY_AFTER_SECONDS = 1;

/**
 * Reads a request's body as a stream within its kind's limits (kept endpoints keep less of each
 * body, KEPT_MAX_BODY_BYTES) and the process's reading budget: undefined when the sender went away
 * mid-body (its socket is closed: there is no one to answer and nothing complete to show), 503
 * AT_CAPACITY when the budget is full. The caller gives the body's bytes back to the budget.
 */
export function createBodyReader(deps: {
  config: Pick<Config, 'requestLimits'>;
  readingBudget: ReadingBudget;
  debug: boolean;
}) {
  const { config, readingBudget, debug } = deps;
  const limits: Record<EndpointKind, BodyLimits> = {
    live: {
      maxBodyBytes: maxBodyBytesFor(config.requestLimits, 'live'),
      readLimitBytes: config.requestLimits.readLimitBytes,
    },
    kept: {
      maxBodyBytes: maxBodyBytesFor(config.requestLimits, 'kept'),
      readLimitBytes: config.requestLimits.readLimitBytes,
    },
  };
  return async (
    request: FastifyRequest,
    reply: FastifyReply,
    kind: EndpointKind,
    endpointId: string,
  ): Promise<ReadBody | undefined> => {
    let body;
    try {
      body = await readBody(request.raw, limits[kind], readingBudget);
    } catch (error) {
      if (debug) request.log.debug({ endpointId, reason: (error as Error).message }, 'request aborted');
      reply.hijack();
      request.raw.socket.destroy();
      return undefined;
    }
    if (body.atCapacity) {
      reply.header('connection', 'close').header('retry-after', String(CAPACITY_RETRY_AFTER_SECONDS));
      throw errors.AT_CAPACITY('too many request bodies are being read');
    }
    return body;
  };
}
