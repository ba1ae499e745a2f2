import { createHash } from 'node:crypto';
import { afterEach } from 'vitest';
import * as scripts from '../../src/redis/scripts.js';
import { startFaultyProxy, type FaultyProxy } from './faulty-proxy.js';
import { startOnRedis, startPrivateRedis, type PrivateRedis } from './redis-instance.js';

const APPEND_SHA = createHash('sha1').update(scripts.APPEND).digest('hex');

/** A proxied command that runs APPEND: by its SHA (EVALSHA), or by its text the first time a connection sends it (EVAL). */
export const isAppend = (command: string[]): boolean =>
  (command[0] === 'EVALSHA' && command[1] === APPEND_SHA) || (command[0] === 'EVAL' && command[1] === scripts.APPEND);

/**
 * For a describe block that puts private redis-servers through faults: each test's servers,
 * proxies and instances (and whatever it adds to `cleanups`) are stopped after it, newest first.
 */
export function privateRedisRig() {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  });
  return {
    cleanups,
    async redisServer(extraArgs: string[] = []): Promise<PrivateRedis> {
      const redis = await startPrivateRedis(extraArgs);
      cleanups.push(() => redis.stop());
      return redis;
    },
    /** A faulty proxy in front of `redis`. */
    async proxyTo(redis: PrivateRedis): Promise<FaultyProxy> {
      const proxy = await startFaultyProxy({ host: '127.0.0.1', port: redis.port });
      cleanups.push(() => proxy.close());
      return proxy;
    },
    async instance(redisUrl: string, prefix: string, overrides: Parameters<typeof startOnRedis>[0] = {}) {
      const started = await startOnRedis({ redisUrl, redisPrefix: prefix, ...overrides });
      cleanups.push(started.close);
      return started;
    },
  };
}
