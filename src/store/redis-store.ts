import type { Redis } from 'ioredis';
import type { EndpointRecord, Store, StoreLimits, StoredRequest } from './store.js';
import { STORED_REQUEST_OVERHEAD_BYTES, StoreUnavailableError } from './store.js';
import * as scripts from './redis-scripts.js';

export interface RedisStoreOptions extends StoreLimits {
  /** A connection main.ts owns (opened, closed and given an 'error' listener there). */
  redis: Redis;
  /** Every key and channel starts with it (`hookwatch:v1:`). */
  prefix: string;
  /** The clock deadlines are judged by (tests inject one). */
  now?: () => number;
}

/** Endpoints swept per script run, so one sweep never blocks Redis for long. */
const SWEEP_BATCH = 200;

type Command = (...args: Array<string | number>) => Promise<unknown>;

/**
 * Endpoints, requests and lifetimes in Redis, shared by every instance: each operation is one
 * script (redis-scripts.ts), so it is atomic and one round trip. Requests are announced on the
 * Redis bus's channels by the script that stores them. Any Redis failure (down, or slower than
 * the client's command timeout) surfaces as StoreUnavailableError.
 */
export function createRedisStore(options: RedisStoreOptions): Store {
  const { redis, prefix } = options;
  const now = options.now ?? Date.now;
  // ioredis sends each script by its SHA (EVALSHA) and loads it when Redis does not know it.
  for (const [name, lua] of Object.entries(scripts)) redis.defineCommand(`hookwatch${name}`, { numberOfKeys: 0, lua });
  /** Runs a script; `Buffer` variants give bulk replies as Buffers (stored messages stay bytes). */
  const run = (name: keyof typeof scripts | 'READ_LOGBuffer', ...args: Array<string | number>): Promise<unknown> => {
    const method = (redis as unknown as Record<string, Command>)[`hookwatch${name}`] as Command;
    return method.call(redis, prefix, ...args).catch((error: unknown) => Promise.reject(new StoreUnavailableError(error)));
  };

  return {
    async createEndpoint(endpoint, { maxEndpoints, deadlineMs }) {
      const { response, ...rest } = endpoint;
      const created = await run('CREATE', endpoint.id, JSON.stringify(rest), JSON.stringify(response), endpoint.kind, deadlineMs, now(), maxEndpoints);
      return created === 1;
    },

    async getEndpoint(id) {
      const found = (await run('GET', id, now())) as [string, string] | null;
      if (!found) return undefined;
      return { ...(JSON.parse(found[0]) as Omit<EndpointRecord, 'response'>), response: JSON.parse(found[1]) as EndpointRecord['response'] };
    },

    async deleteEndpoint(id) {
      return (await run('DELETE', id, now())) === 1;
    },

    async countEndpoints() {
      return Number(await run('COUNT', now()));
    },

    async setResponse(id, response) {
      return (await run('SET_RESPONSE', id, now(), JSON.stringify(response))) === 1;
    },

    async holdEndpoints(ids, instanceId, leaseUntilMs, graceMs) {
      if (ids.length === 0) return [];
      return (await run('HOLD', now(), instanceId, leaseUntilMs, graceMs, ...ids)) as string[];
    },

    async countWatchers(id, instanceId, localCount) {
      const total = await run('COUNT_WATCHERS', id, now(), instanceId, localCount);
      return total === null ? undefined : Number(total);
    },

    async releaseEndpoint(id, instanceId, graceMs) {
      await run('RELEASE', id, now(), instanceId, graceMs);
    },

    async sweepExpired() {
      let swept = 0;
      for (;;) {
        const batch = Number(await run('SWEEP', now(), SWEEP_BATCH));
        swept += batch;
        if (batch < SWEEP_BATCH) return swept;
      }
    },

    async appendRequest(id, draftJson, capturedAtMs) {
      const seq = await run('APPEND', 
        id,
        now(),
        draftJson,
        capturedAtMs,
        options.requestsPerEndpoint,
        options.maxStoredBytesPerEndpoint,
        options.maxStoredBytes,
        STORED_REQUEST_OVERHEAD_BYTES,
      );
      return seq === null ? undefined : Number(seq);
    },

    async readLog(id, afterSeq) {
      const reply = (await run('READ_LOGBuffer', id, now(), afterSeq)) as Array<number | Buffer> | null;
      if (!reply) return undefined;
      const requests: StoredRequest[] = [];
      for (let i = 2; i + 1 < reply.length; i += 2) requests.push({ seq: Number(reply[i]), message: reply[i + 1] as Buffer });
      return { lastSeq: Number(reply[0]), clearedSeq: Number(reply[1]), requests };
    },

    async clearRequests(id) {
      const cleared = await run('CLEAR', id, now());
      return cleared === null ? undefined : Number(cleared);
    },

    async stats() {
      const [storedBytes, evictedRequests] = (await run('STATS')) as [number, number];
      return { storedBytes: Number(storedBytes), evictedRequests: Number(evictedRequests) };
    },
  };
}
