import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RECEIVER_HEADERS } from '../answers/receiver-headers.js';
import { usesRedis, type Config } from '../config.js';
import { errors } from '../errors.js';
import { addressKey } from '../request/address-key.js';
import { createLimits } from '../request/rate-limit.js';
import { endpointIdOf } from './target.js';

/**
 * The first stage of a capture: its rate limits (per address, then per endpoint), and the start
 * of its one deadline. The store calls of one capture share that deadline
 * (REDIS_COMMAND_TIMEOUT_MS from its arrival): the rate limits and the endpoint check give up at
 * it, and the store refuses the append once it is near, so a stalled store costs a sender about
 * that long, not that long per call. Only a store over the network can stall: in memory and on
 * SQLite a step costs no timer.
 */
export interface Admission {
  /** Whether any rate limit is on (the routes then check them before the handler). */
  limited: boolean;
  /** Counts the request against its limits; throws RATE_LIMITED past one. */
  admit(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** When the capture of `request`, received at `receivedAtMs`, gives up on the store. */
  giveUpAt(request: FastifyRequest, receivedAtMs: number): number;
  /** `step`'s result, or STORE_UNAVAILABLE once `giveUpAtMs` passes first (with a store that can stall). */
  beforeDeadline<T>(step: Promise<T>, giveUpAtMs: number): Promise<T>;
}

export function createAdmission(
  app: FastifyInstance,
  config: Pick<Config, 'clientLimits' | 'endpointLimits' | 'redis'>,
): Admission {
  const mayStall = usesRedis(config.redis);
  const beforeDeadline = <T>(step: Promise<T>, giveUpAtMs: number): Promise<T> =>
    mayStall ? raceDeadline(step, giveUpAtMs) : step;
  const windowMs = config.clientLimits.rateLimitWindowMs;
  const limits = [
    config.clientLimits.rateLimitPerAddress > 0 && {
      max: config.clientLimits.rateLimitPerAddress,
      windowMs,
      key: (request: FastifyRequest) => `receiver-address:${addressKey(request.ip)}`,
    },
    config.endpointLimits.rateLimitPerEndpoint > 0 && {
      max: config.endpointLimits.rateLimitPerEndpoint,
      windowMs,
      key: (request: FastifyRequest) => `receiver-endpoint:${endpointIdOf(request)}`,
    },
  ].filter((limit) => limit !== false);
  const limited = createLimits(app, limits);
  const receiverHeaders = (reply: FastifyReply) => reply.headers(RECEIVER_HEADERS);
  /** When each request arrived (its rate limits were asked): the start of its capture's one deadline. */
  const arrivals = new WeakMap<object, number>();
  return {
    limited: limits.length > 0,
    admit(request, reply) {
      if (!mayStall) return limited(request, reply, receiverHeaders);
      const arrivedAtMs = Date.now();
      arrivals.set(request.raw, arrivedAtMs);
      return beforeDeadline(limited(request, reply, receiverHeaders), arrivedAtMs + config.redis.redisCommandTimeoutMs);
    },
    giveUpAt: (request, receivedAtMs) =>
      (arrivals.get(request.raw) ?? receivedAtMs) + config.redis.redisCommandTimeoutMs,
    beforeDeadline,
  };
}

/**
 * The step's result, or STORE_UNAVAILABLE once `giveUpAtMs` passes first (the step goes on, and
 * what it finally says is dropped: a late capture is refused by the store itself, see appendRequest).
 */
async function raceDeadline<T>(step: Promise<T>, giveUpAtMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(errors.STORE_UNAVAILABLE()), Math.max(0, giveUpAtMs - Date.now()));
  });
  try {
    return await Promise.race([step, late]);
  } finally {
    clearTimeout(timer);
  }
}
