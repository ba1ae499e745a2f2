import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
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
      throw errors.RATE_LIMITED(
        `(at most ${options.max}${what} per ${options.windowMs / 1000} s)`,
        `${result.ttlInSeconds} s`,
      );
    }
  };
}

/** A count per client address through the same store, for callers that hold no HTTP request (a live socket's `create`). */
export type AddressLimit = (
  addressKey: string,
) => Promise<{ error: FastifyError; retryAfterSeconds: number } | undefined>;

/** A creation counted for its caller: the signed-in user when there is one, else the client address key; resolves like an AddressLimit. */
export type CreateLimit = (caller: { address: string; user: string | undefined }) => ReturnType<AddressLimit>;

/**
 * `max` per `windowMs` per address key (address-key.ts), counted in @fastify/rate-limit's store
 * like the limits above. Resolves to the RATE_LIMITED error to give with its Retry-After, or
 * undefined when allowed.
 */
export function createAddressLimit(
  app: FastifyInstance,
  options: { name: string; max: number; windowMs: number; what: string },
): AddressLimit {
  const count = app.createRateLimit({
    max: options.max,
    timeWindow: options.windowMs,
    keyGenerator: (request) => `${options.name}:${request.ip}`,
  });
  return async (addressKey) => {
    // The plugin reads only these two fields of a request when our key generator is given.
    const result = await count({ ip: addressKey, routeOptions: { config: {} } } as unknown as FastifyRequest);
    if (result.isAllowed || !result.isExceeded) return undefined;
    const error = errors.RATE_LIMITED(
      `(at most ${options.max} ${options.what} per ${options.windowMs / 1000} s)`,
      `${result.ttlInSeconds} s`,
    );
    return { error, retryAfterSeconds: result.ttlInSeconds };
  };
}
