import type { Cluster, Redis } from 'ioredis';
import type { RedisCalls, ScriptName } from './calls.js';
import * as scripts from './scripts.js';

/** Batches one eviction runs at most before it lets the next capture over the budget start another. */
const EVICT_BATCHES = 20;
/** The share of Redis's memory stored requests must hold for a capture refused for memory to evict the oldest of them. */
const REQUESTS_FILL_SHARE = 0.5;

interface EvictionDeps {
  redis: Redis | Cluster;
  bounded: RedisCalls['bounded'];
  /** Runs a script on a partition with the given endpoints' keys declared (redis/store.ts). */
  run: (
    name: ScriptName,
    partition: string,
    ids: readonly string[],
    ...args: Array<string | number>
  ) => Promise<unknown>;
  /** What stored requests cost, over every partition. */
  storedBytes: () => Promise<number>;
}

/**
 * Eviction across a partition's endpoints, off the capture's path: a capture that passed the
 * partition's byte budget starts it (evictSoon), and one refused for memory makes room with it
 * when stored requests are what fills Redis.
 */
export function createEviction({ redis, bounded, run, storedBytes }: EvictionDeps) {
  /**
   * Brings the partition within its byte budget, or (force: Redis is out of memory) makes room:
   * the oldest requests anywhere in it go. It reads the oldest first, then evicts with their
   * endpoints' keys declared, a batch at a time.
   */
  const evict = async (partition: string, force: boolean) => {
    for (let batch = 0; batch < EVICT_BATCHES; batch++) {
      const oldest = await bounded(redis.zrange(`${partition}aged`, 0, String(scripts.EVICT_BATCH - 1)));
      const owners = [...new Set(oldest.map((entry) => entry.slice(0, entry.indexOf(' '))))];
      if (owners.length === 0) return;
      const [, over] = (await run('EVICT', partition, owners, scripts.EVICT_BATCH, force ? 1 : 0, ...owners)) as [
        number,
        number,
      ];
      if (force || Number(over) === 0) return;
    }
  };
  /**
   * One eviction at a time per partition; a capture over the budget meanwhile has it run once
   * more when it ends (its last batch may have looked before that capture was stored).
   */
  const evicting = new Map<string, boolean>();
  const evictSoon = (partition: string) => {
    if (evicting.has(partition)) {
      evicting.set(partition, true);
      return;
    }
    evicting.set(partition, false);
    void evict(partition, false)
      .catch(() => undefined)
      .finally(() => {
        const again = evicting.get(partition) === true;
        evicting.delete(partition);
        if (again) evictSoon(partition);
      });
  };
  /**
   * Whether stored requests hold at least half of the memory Redis uses (every primary's, on a
   * Cluster): evicting them for memory something else holds would empty the log and still not
   * make room.
   */
  const requestsFillRedis = async (): Promise<boolean> => {
    const primaries = (redis as Cluster).isCluster ? (redis as Cluster).nodes('master') : [redis as Redis];
    const used = (await bounded(Promise.all(primaries.map((node) => node.info('memory'))))).reduce(
      (sum, info) => sum + Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0),
      0,
    );
    return (await storedBytes()) >= used * REQUESTS_FILL_SHARE;
  };
  return { evict, evictSoon, requestsFillRedis };
}
