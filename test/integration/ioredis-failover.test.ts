import { Cluster, Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { startCluster, startSentinelSet, type RedisAddress } from '../helpers/redis-setups.js';

/** Resolves when `condition()` holds; throws after `timeoutMs` (polls, for states with no event). */
async function waitFor(what: string, condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function connectDirect(address: RedisAddress): Redis {
  const client = new Redis({ ...address, maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  return client;
}

describe('sentinel set', () => {
  it('with failoverDetector on, the client follows the switch before the old primary is demoted', async () => {
    const set = await startSentinelSet();
    // The detector subscribes to +switch-master on the sentinels and reconnects at once.
    const client = new Redis({ sentinels: set.sentinels, name: set.name, failoverDetector: true });
    client.on('error', () => undefined);
    const direct: Redis[] = [];
    try {
      expect(await client.set('before', '1')).toBe('OK');
      const before = await set.primary();
      const after = await set.failover();
      const newPrimary = connectDirect(after);
      const oldPrimary = connectDirect(before);
      direct.push(newPrimary, oldPrimary);
      let attempt = 0;
      await waitFor(
        'a write through the client to reach the new primary',
        async () => {
          attempt += 1;
          const written = await client.set('after', String(attempt)).then(
            () => true,
            () => false,
          );
          return written && (await newPrimary.get('after')) === String(attempt);
        },
        5_000,
      );
      // Still a master: the client moved because of the announcement, not the demotion.
      expect((await oldPrimary.role())[0]).toBe('master');
    } finally {
      client.disconnect();
      for (const connection of direct) connection.disconnect();
      await set.stop();
    }
  }, 20_000);
});

describe('cluster', () => {
  it('an ioredis Cluster client reads every key back after a slot moves to another node, and keeps working during the move', async () => {
    const set = await startCluster(3);
    const client = new Cluster(set.nodes);
    client.on('error', () => undefined);
    try {
      // 100 keys over 10 hash tags: 10 slots, spread over the nodes.
      const keys = Array.from({ length: 100 }, (_, i) => `item:{${i % 10}}:${i}`);
      await Promise.all(keys.map((key) => client.set(key, `value of ${key}`)));

      const slot = Number(await client.call('CLUSTER', 'KEYSLOT', keys[0] as string));
      const from = await set.slotOwner(slot);
      const to = (from + 1) % set.nodes.length;
      const hitsKey = 'item:{0}:hits';

      // Traffic on the moving slot during the move: ioredis follows ASK for keys already moved
      // and MOVED once the slot is the target's; no command should fail.
      let moving = true;
      let hits = 0;
      const traffic = (async () => {
        while (moving) {
          await client.incr(hitsKey);
          hits += 1;
          expect(await client.get(keys[0] as string)).toBe(`value of ${keys[0]}`);
        }
      })();
      await set.reshard(slot, to, { batchSize: 2 });
      moving = false;
      await traffic;

      expect(await set.slotOwner(slot)).toBe(to);
      const target = connectDirect(set.nodes[to] as RedisAddress);
      const source = connectDirect(set.nodes[from] as RedisAddress);
      try {
        expect(await target.call('CLUSTER', 'COUNTKEYSINSLOT', slot)).toBe(11);
        expect(await source.call('CLUSTER', 'COUNTKEYSINSLOT', slot)).toBe(0);
      } finally {
        target.disconnect();
        source.disconnect();
      }
      expect(await Promise.all(keys.map((key) => client.get(key)))).toEqual(keys.map((key) => `value of ${key}`));
      expect(hits).toBeGreaterThan(0);
      expect(await client.get(hitsKey)).toBe(String(hits));
    } finally {
      client.disconnect();
      await set.stop();
    }
  }, 30_000);
});
