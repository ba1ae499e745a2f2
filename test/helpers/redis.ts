import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

/** The Redis the tests use: REDIS_URL, else the machine's own on 127.0.0.1:6379 (.ci/run makes sure one runs). */
export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix no other test (or deployment) uses: tests never flush a shared database. */
export function testPrefix(): string {
  return `hookwatch-test:${randomBytes(6).toString('hex')}:`;
}

export function connectRedis(url = redisUrl): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: false });
  client.on('error', () => undefined);
  return client;
}

/** Deletes every key under the prefix (SCAN, never FLUSH). */
export async function dropPrefix(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
}
