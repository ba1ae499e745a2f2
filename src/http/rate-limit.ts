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
 * Rate limits through @fastify/rate-limit's store (shared in Redis when there is one), checked
 * by a call of ours rather than the plugin's hook: its hooks share one "already ran" flag per
 * request, so with two on a route only the first ever counted. Each limit counts every request
 * the limits before it let through, in order: a request refused by the first is not counted by
 * the next (asked together, a sender over its own per-address limit could use up an endpoint's
 * limit for everyone). Past a limit: 429 RATE_LIMITED with Retry-After; `refused` may add
 * headers to that answer first.
 */
export function createLimits(
  app: FastifyInstance,
  list: RateLimitOptions[],
): (request: FastifyRequest, reply: FastifyReply, refused?: (reply: FastifyReply) => void) => Promise<void> {
  const limits = list.map((options) => ({
    options,
    count: app.createRateLimit({ max: options.max, timeWindow: options.windowMs, keyGenerator: options.key }),
  }));
  return async (request, reply, refused) => {
    for (const { options, count } of limits) {
      const result = await count(request);
      if (result.isAllowed || !result.isExceeded) continue;
      refused?.(reply);
      reply.header('retry-after', String(result.ttlInSeconds));
      const what = options.what ? ` ${options.what}` : '';
      throw errors.RATE_LIMITED(`(at most ${options.max}${what} per ${options.windowMs / 1000} s)`, `${result.ttlInSeconds} s`);
    }
  };
}
