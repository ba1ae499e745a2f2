import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { failInFlight, IN_FLIGHT_AT_CUT } from '../../src/redis/clients.js';
import { privateRedisRig } from '../helpers/redis-rig.js';

/**
 * Commands written to Redis when their connection is cut fail at once as of unknown outcome,
 * and ioredis sends none of them again on its own: on a connection that reconnects (one Redis,
 * Sentinel) and on one that does not (each node of a Cluster, which would send them elsewhere).
 */
describe('commands in flight at a cut', () => {
  const { cleanups, redisServer, proxyTo } = privateRedisRig();

  for (const [name, reconnects] of [
    ['a connection that reconnects (one Redis, Sentinel)', true],
    ["a Cluster node's connection, which does not", false],
  ] as const) {
    it(`${name}: fails them as of unknown outcome, and none reaches Redis afterwards`, async () => {
      const redis = await redisServer();
      const proxy = await proxyTo(redis);
      const client = failInFlight(
        new Redis(proxy.url, {
          autoResendUnfulfilledCommands: false,
          enableAutoPipelining: true,
          maxRetriesPerRequest: 1,
          retryStrategy: reconnects ? () => 50 : () => null,
        }),
      );
      client.on('error', () => undefined);
      cleanups.push(async () => client.disconnect());
      await client.set('before', '1');
      const sets = proxy.countCommands((command) => command[0] === 'INCR');
      proxy.pause();
      const inFlight = Promise.allSettled(Array.from({ length: 5 }, () => client.incr('counter')));
      await expect.poll(() => proxy.held(), { timeout: 2000 }).toBeGreaterThan(0);
      proxy.killAll();
      proxy.resume();
      const outcomes = await inFlight;
      expect(
        outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as Error).message : 'fulfilled')),
      ).toEqual(Array.from({ length: 5 }, () => IN_FLIGHT_AT_CUT));
      if (reconnects) {
        // Back, and working: the next command goes through, and it is the only INCR Redis saw.
        await expect.poll(() => client.incr('counter').catch(() => 0), { timeout: 5000 }).toBe(1);
        expect(sets()).toBe(1);
      } else {
        expect(sets()).toBe(0);
      }
    });
  }
});
