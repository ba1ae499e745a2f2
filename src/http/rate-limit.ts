import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../errors.js';

export interface RateLimitOptions {
  max: number;
  windowMs: number;
  /** The counted key; a prefix per limit keeps limits apart in one (Redis) store. */
  key: (request: FastifyRequest) => string;
  /** What is counted, for the error message (`live sockets`); empty for requests. */
  what?: string;
}

/**
 * One rate limit through @fastify/rate-limit's store (shared in Redis when there is one),
 * checked by a call of ours rather than the plugin's hook: its hooks share one "already ran"
 * flag per request, so with two on a route only the first ever counted. Past the limit: 429
 * RATE_LIMITED with Retry-After; `refused` may add headers to that answer first.
 */
export function createLimit(app: FastifyInstance, options: RateLimitOptions): (request: FastifyRequest, reply: FastifyReply, refused?: (reply: FastifyReply) => void) => Promise<void> {
  const limit = app.createRateLimit({ max: options.max, timeWindow: options.windowMs, keyGenerator: options.key });
  const what = options.what ? ` ${options.what}` : '';
  return async (request, reply, refused) => {
    const result = await limit(request);
    if (result.isAllowed || !result.isExceeded) return;
    refused?.(reply);
    reply.header('retry-after', String(result.ttlInSeconds));
    throw errors.RATE_LIMITED(`(at most ${options.max}${what} per ${options.windowMs / 1000} s)`, `${result.ttlInSeconds} s`);
  };
}
