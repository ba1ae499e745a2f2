import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it, it as vitestIt } from 'vitest';
import type { Bus, BusMessage } from '../../src/bus/bus.js';
import { createMemoryBus } from '../../src/one-process/memory-bus.js';
import { createRedisBus } from '../../src/redis/bus.js';
import { DEFAULT_RESPONSE, type ResponseConfig } from '../../src/shared/schemas/response-config.js';
import { ONLY_DEFAULT } from '../../src/shared/answer-rules.js';
import { createMemoryStore } from '../../src/one-process/memory-store.js';
import { createRedisStore, type RedisStore } from '../../src/redis/store.js';
import { createStoreByKind } from '../../src/one-process/store-by-kind.js';
import { openDatabase, type SqliteDatabase } from '../../src/one-process/sqlite-database.js';
import { createSqliteStore } from '../../src/one-process/sqlite-store.js';
import {
  STORED_REQUEST_OVERHEAD_BYTES,
  type NewEntry,
  type EndpointKind,
  type EndpointRecord,
  type Store,
  type StoreLimits,
} from '../../src/store/store.js';
import {
  elementLength,
  encodeRecord,
  recordBuffer,
  v1RequestMessage,
  type StoredRequest,
} from '../../src/store/stored-request.js';
import { splitRecord } from '../../src/shared/request-frame.js';
import { connectRedis, dropPrefix, testPrefix } from '../helpers/redis.js';
import { startTopologies } from '../helpers/sentinel-and-cluster.js';

/**
 * What every Store backend must do, written once and run on each backend with `describe.each`:
 * in memory, and on a real Redis under a prefix of its own per test. A backend is made from
 * limits and a clock, and comes with the bus it announces on.
 */
interface Backend {
  store: Store;
  bus: Bus;
}
type MakeBackend = (limits: StoreLimits, now: () => number) => Backend;
/** Cases whose endpoints must share one partition (caps and the store-wide budget are per partition on Redis: docs/deploy.md). */
const ONE_PARTITION_CASES = new Set([
  'refuses an endpoint past the cap and a duplicate id',
  'counts each kind against its own cap',
  "keeps the store's byte budget across endpoints: the oldest requests anywhere go first",
  'counts a forward result with its request: replacing it changes the stored bytes by the difference, and a grown request is trimmed and evicted for like a new one',
]);

const redisClients: Redis[] = [];
const topologies = await startTopologies();
const databases: Array<{ db: SqliteDatabase; dir: string }> = [];
/** A fresh database file in a folder of its own (WAL and all, as DATA_DIR has it). */
const freshDatabase = (): SqliteDatabase => {
  const dir = mkdtempSync(join(tmpdir(), 'hookwatch-contract-'));
  const db = openDatabase(dir);
  databases.push({ db, dir });
  return db;
};
const prefixes: string[] = [];
const backends: Array<[string, MakeBackend, { partitions: number }?]> = [
  [
    'memory',
    (limits, now) => {
      const bus = createMemoryBus();
      return { store: createMemoryStore({ ...limits, bus, now }), bus };
    },
  ],
  [
    'sqlite',
    (limits, now) => {
      const bus = createMemoryBus();
      return {
        store: createSqliteStore({ ...limits, maxDiskBytes: limits.maxStoredBytes, db: freshDatabase(), bus, now }),
        bus,
      };
    },
  ],
  [
    'one process (live in memory, kept in SQLite)',
    (limits, now) => {
      const bus = createMemoryBus();
      const live = createMemoryStore({ ...limits, bus, now });
      const kept = createSqliteStore({ ...limits, maxDiskBytes: limits.maxStoredBytes, db: freshDatabase(), bus, now });
      return { store: createStoreByKind({ live, kept }), bus };
    },
  ],
  [
    'redis',
    (limits, now) => {
      const prefix = testPrefix();
      const [commands, subscriber] = [connectRedis(), connectRedis()];
      redisClients.push(commands, subscriber);
      prefixes.push(prefix);
      return {
        store: createRedisStore({ ...limits, redis: commands, prefix, now, commandTimeoutMs: 2000 }),
        bus: createRedisBus({ publisher: commands, subscriber, prefix }),
      };
    },
  ],
  [
    'redis sentinel (a primary, a replica, a sentinel)',
    (limits, now) => {
      const [commands, subscriber] = [topologies.sentinelClient(), topologies.sentinelClient()];
      const prefix = testPrefix();
      return {
        store: createRedisStore({
          ...limits,
          redis: commands,
          prefix,
          now,
          commandTimeoutMs: 2000,
          replicaWaitMs: 1000,
        }),
        bus: createRedisBus({ publisher: commands, subscriber, prefix }),
      };
    },
  ],
  [
    'redis cluster (3 masters)',
    (limits, now) => {
      const [commands, subscriber] = [topologies.clusterClient(), topologies.clusterClient(true)];
      const prefix = testPrefix();
      // One partition: the store-wide budget is per partition (docs/deploy.md), and these tests check it as one.
      return {
        store: createRedisStore({ ...limits, redis: commands, prefix, now, commandTimeoutMs: 2000 }),
        bus: createRedisBus({ publisher: commands, subscriber, prefix }),
      };
    },
  ],
  [
    'redis cluster, production settings (48 partitions)',
    (limits, now) => {
      const [commands, subscriber] = [topologies.clusterClient(), topologies.clusterClient(true)];
      const prefix = testPrefix();
      return {
        store: createRedisStore({ ...limits, redis: commands, prefix, now, commandTimeoutMs: 2000, partitions: 48 }),
        bus: createRedisBus({ publisher: commands, subscriber, prefix, partitions: 48 }),
      };
    },
    { partitions: 48 },
  ],
];

afterAll(async () => {
  await topologies.stop();
  for (const { db, dir } of databases) {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const [cleaner] = redisClients;
  if (cleaner) for (const prefix of prefixes) await dropPrefix(cleaner, prefix);
  await Promise.all(redisClients.map((client) => client.quit()));
});

const MIB = 1024 * 1024;
const LIMITS: StoreLimits = {
  requestsPerEndpoint: 50,
  maxStoredBytes: 64 * MIB,
  maxStoredBytesPerEndpoint: 16 * MIB,
  maxResponseConfigBytes: 64 * MIB,
};
// Real time: the Redis backend also sets key expiry (a backstop), which Redis judges by its own clock.
const T0 = Date.now();
const HOUR = 60 * 60 * 1000;

const endpoint = (id: string, kind: 'live' | 'kept' = 'live'): EndpointRecord => ({
  id,
  kind,
  keyHash: 'ab'.repeat(32),
  createdAt: '2026-01-01T00:00:00.000Z',
  response: DEFAULT_RESPONSE,
});
/** Appends a ready draft, as the receiver does with one built for the endpoint's response; the seq given. */
const append = async (store: Store, id: string, json: string, capturedAtMs: number, kind: EndpointKind = 'live') =>
  (await store.appendRequest(id, kind, () => entryOf(json), capturedAtMs))?.seq;
/** A draft answered by the default answer alone (`answer` its record JSON). */
const entryOf = (json: string, answer = '{"status":200,"delayMs":0,"by":"default"}'): NewEntry => ({
  record: encodeRecord(json, new Uint8Array()),
  choices: ONLY_DEFAULT,
  answers: [answer],
});
/** A stored request's seq, header fields and answer (the body left out: these records have none). */
const record = (stored: StoredRequest | undefined) =>
  stored
    ? ({
        seq: stored.seq,
        ...splitRecord(recordBuffer(stored.record)).header,
        answer: JSON.parse(stored.answer) as unknown,
      } as Record<string, unknown>)
    : undefined;

describe.each(backends)('Store contract: %s', (_name, makeBackend, shape) => {
  // With many partitions, the cases that need their endpoints in one partition are left to the backends above.
  const it = (name: string, test: () => Promise<void>) =>
    (ONE_PARTITION_CASES.has(name) && (shape?.partitions ?? 1) > 1 ? vitestIt.skip : vitestIt)(name, test);
  let clock = T0;
  afterEach(() => {
    clock = T0;
  });
  /** A fresh store and bus, a clock the test moves, and what the bus carries for `watch`ed ids. */
  const make = (limits: Partial<StoreLimits> = {}) => {
    const { store, bus } = makeBackend({ ...LIMITS, ...limits }, () => clock);
    const heard: Array<[string, BusMessage]> = [];
    bus.onMessage((id, message) => heard.push([id, message]));
    const create = (id: string, options: { max?: number; deadlineMs?: number; kind?: 'live' | 'kept' } = {}) =>
      store.createEndpoint(endpoint(id, options.kind), {
        maxEndpoints: options.max ?? 10,
        deadlineMs: options.deadlineMs ?? clock + HOUR,
      });
    const events = () =>
      heard
        .filter(([, message]) => message.seq === undefined)
        .map(([id, message]) => [id, JSON.parse(String(message.data)) as unknown]);
    return { store, bus, heard, events, create, watch: (id: string) => bus.subscribe(id) };
  };

  it('creates, reads and deletes an endpoint; a missing one reads as undefined', async () => {
    const { store, create } = make();
    expect(await create('a')).toBe('created');
    expect(await store.getEndpoint('a')).toEqual(endpoint('a'));
    expect(await store.getEndpoint('missing')).toBeUndefined();
    expect(await store.countEndpoints()).toBe(1);
    expect(await store.deleteEndpoint('a')).toBe(true);
    expect(await store.deleteEndpoint('a')).toBe(false);
    expect(await store.getEndpoint('a')).toBeUndefined();
  });

  it('refuses an endpoint past the cap and a duplicate id', async () => {
    const { store, create } = make();
    expect(await create('a', { max: 1 })).toBe('created');
    expect(await create('b', { max: 1 })).toBe('full');
    expect(await create('a', { max: 5 })).toBe('taken');
    expect(await store.countEndpoints()).toBe(1);
  });

  it('numbers requests from 1, builds the request message with seq first, and announces it in order', async () => {
    const { store, heard, create, watch } = make();
    await create('a');
    await watch('a');
    expect(await append(store, 'a', '{"method":"POST"}', 1000)).toBe(1);
    expect(await append(store, 'a', '{}', 2000)).toBe(2);
    const log = await store.readLog('a', 0);
    expect(v1RequestMessage(log?.requests[0] as StoredRequest)).toBe(
      '{"type":"request","request":{"seq":1,"method":"POST","body":"","bodyEncoding":"utf8","answer":{"status":200,"delayMs":0,"by":"default"}}}',
    );
    expect(record(log?.requests[1])).toEqual({ seq: 2, answer: { status: 200, delayMs: 0, by: 'default' } });
    await expect.poll(() => heard.length).toBe(2);
    const announced = heard.map(([id, message]) => [
      id,
      message.seq,
      message.request?.answer,
      (message.request ? recordBuffer(message.request.record) : undefined)?.toString('hex'),
      message.capturedAtMs,
    ]);
    expect(announced).toEqual(
      [1000, 2000].map((capturedAtMs, at) => {
        const stored = log?.requests[at] as StoredRequest;
        return ['a', stored.seq, stored.answer, recordBuffer(stored.record).toString('hex'), capturedAtMs];
      }),
    );
    expect(await append(store, 'missing', '{}', 0)).toBeUndefined();
  });

  it('keeps only the newest requests, oldest first, and reads after a seq with the counters', async () => {
    const { store, create } = make({ requestsPerEndpoint: 3 });
    await create('a');
    for (let i = 0; i < 5; i++) await append(store, 'a', `{"i":${i}}`, 0);
    const all = await store.readLog('a', 0);
    expect(all?.requests.map((r) => r.seq)).toEqual([3, 4, 5]);
    expect(all?.lastSeq).toBe(5);
    expect(all?.clearedSeq).toBe(0);
    expect((await store.readLog('a', 4))?.requests.map((r) => r.seq)).toEqual([5]);
    expect((await store.readLog('a', 5))?.requests).toEqual([]);
    expect(await store.readLog('missing', 0)).toBeUndefined();
  });

  it('clears requests, remembers the cleared seq, and keeps numbering after it', async () => {
    const { store, create } = make();
    await create('a');
    await append(store, 'a', '{}', 0);
    await append(store, 'a', '{}', 0);
    expect(await store.clearRequests('a')).toBe(2);
    expect(await store.readLog('a', 0)).toEqual({ requests: [], lastSeq: 2, clearedSeq: 2 });
    expect(await append(store, 'a', '{}', 0)).toBe(3);
    expect(await store.clearRequests('missing')).toBeUndefined();
  });

  it('deletes one stored request with its forward result and bytes, announced; its seq is never given again, and the rest keep theirs', async () => {
    const { store, events, create, watch } = make({ requestsPerEndpoint: 3 });
    await create('a');
    await watch('a');
    for (let i = 1; i <= 3; i++) await append(store, 'a', `{"i":${i}}`, 0);
    const bytes = (await store.stats()).storedBytes;
    const report = JSON.stringify({ type: 'forwarded', seq: 2, status: 201 });
    expect(await store.setForwarded('a', 2, report)).toBe(true);
    expect(await store.deleteRequest('a', 2)).toBe(true);
    expect(await store.deleteRequest('a', 2)).toBe(false);
    expect(await store.deleteRequest('a', 9)).toBe(false);
    expect(await store.deleteRequest('missing', 1)).toBeUndefined();
    expect((await store.stats()).storedBytes).toBe(bytes - bytes / 3);
    const log = await store.readLog('a', 0);
    expect(log?.requests.map((r) => [r.seq, record(r)?.i])).toEqual([
      [1, 1],
      [3, 3],
    ]);
    expect([log?.lastSeq, log?.clearedSeq]).toEqual([3, 0]);
    expect((await store.readLog('a', 1))?.requests.map((r) => r.seq)).toEqual([3]);
    // Stored ones after the gap are still found by their seq.
    expect(await store.setAnswer('a', 3, '{"status":202,"delayMs":0,"by":"forwarder"}')).toBe(true);
    expect(await store.setForwarded('a', 2, report)).toBe(false);
    // The count keeps the newest requests held: the oldest goes once a fourth is stored.
    expect(await append(store, 'a', '{"i":4}', 0)).toBe(4);
    expect(await append(store, 'a', '{"i":5}', 0)).toBe(5);
    expect((await store.readLog('a', 0))?.requests.map((r) => r.seq)).toEqual([3, 4, 5]);
    expect(await store.deleteRequest('a', 5)).toBe(true);
    expect(await append(store, 'a', '{"i":6}', 0)).toBe(6);
    await expect
      .poll(() => events().filter(([, event]) => (event as { type: string }).type === 'removed').length)
      .toBe(2);
    expect(events().filter(([, event]) => (event as { type: string }).type === 'removed')).toEqual([
      ['a', { type: 'removed', seq: 2 }],
      ['a', { type: 'removed', seq: 5 }],
    ]);
    await store.clearRequests('a');
    expect((await store.stats()).storedBytes).toBe(0);
  });

  it('sets the response configuration', async () => {
    const { store, create } = make();
    await create('a');
    const response = {
      status: 503,
      body: 'boom',
      contentType: 'text/plain' as const,
      headers: [['Retry-After', '5']] as Array<[string, string]>,
      delayMs: 100,
    };
    expect(await store.setResponse('a', response)).toBe('set');
    expect((await store.getEndpoint('a'))?.response).toEqual(response);
    expect(await store.setResponse('missing', response)).toBeUndefined();
  });

  it('does not let a caller mutate stored endpoints through returned objects', async () => {
    const { store, create } = make();
    await create('a');
    const read = await store.getEndpoint('a');
    if (read) read.keyHash = 'changed';
    expect((await store.getEndpoint('a'))?.keyHash).toBe('ab'.repeat(32));
  });

  it('announces every change of stored state in the same step as the change: response, cleared, and deleted (which ends the endpoint)', async () => {
    const { store, heard, events, create, watch } = make();
    await create('a');
    await watch('a');
    const response = { ...DEFAULT_RESPONSE, status: 418 };
    await store.setResponse('a', response);
    await append(store, 'a', '{}', 0);
    await store.clearRequests('a');
    expect(await store.deleteEndpoint('a')).toBe(true);
    await expect.poll(() => heard.length).toBe(4);
    expect(events()).toEqual([
      ['a', { type: 'response', response }],
      ['a', { type: 'cleared', clearedSeq: 1 }],
      ['a', { type: 'expired', reason: 'deleted' }],
    ]);
    expect(heard.map(([, message]) => message.ends === true)).toEqual([false, false, false, true]);
    // Nothing to announce for what is not there.
    expect(await store.deleteEndpoint('a')).toBe(false);
    expect(await store.setResponse('a', response)).toBeUndefined();
    expect(await store.clearRequests('a')).toBeUndefined();
    expect(heard.length).toBe(4);
  });

  it("extends a kept endpoint's life, announced to its watchers; a live one is not extended", async () => {
    const { store, events, create, watch } = make();
    await create('k', { kind: 'kept', deadlineMs: clock + 1000 });
    await create('l');
    await watch('k');
    const extended = await store.extendEndpoint('k', clock + 5000);
    expect(extended?.expiresAt).toBe(new Date(clock + 5000).toISOString());
    expect((await store.getEndpoint('k'))?.expiresAt).toBe(new Date(clock + 5000).toISOString());
    await expect.poll(() => events().length).toBe(1);
    expect(events()).toEqual([['k', { type: 'extended', expiresAt: new Date(clock + 5000).toISOString() }]]);
    clock += 2000;
    expect(await store.getEndpoint('k')).toBeDefined();
    expect(await store.extendEndpoint('l', clock + 5000)).toBeUndefined();
    expect(await store.extendEndpoint('missing', clock + 5000)).toBeUndefined();
    clock += 3001;
    expect(await store.getEndpoint('k')).toBeUndefined();
  });

  it('builds each record for the endpoint as stored: kept endpoints redact unless created with redact false', async () => {
    const { store } = make();
    await store.createEndpoint({ ...endpoint('secret', 'kept') }, { maxEndpoints: 10, deadlineMs: clock + HOUR });
    await store.createEndpoint(
      { ...endpoint('clear', 'kept'), redact: false },
      { maxEndpoints: 10, deadlineMs: clock + HOUR },
    );
    await store.createEndpoint(endpoint('live'), { maxEndpoints: 10, deadlineMs: clock + HOUR });
    const seen: Array<[string, boolean]> = [];
    for (const [id, kind] of [
      ['secret', 'kept'],
      ['clear', 'kept'],
      ['live', 'live'],
    ] as const) {
      await store.appendRequest(id, kind, (_response, redact) => (seen.push([id, redact]), entryOf('{}')), 0);
    }
    expect(seen).toEqual([
      ['secret', true],
      ['clear', false],
      ['live', false],
    ]);
    expect((await store.getEndpoint('clear'))?.redact).toBe(false);
  });

  it('keeps the latest forward result with its request, announced, and drops it with the request', async () => {
    const { store, events, create, watch } = make({ requestsPerEndpoint: 2 });
    await create('a');
    await watch('a');
    await append(store, 'a', '{}', 0);
    const first = JSON.stringify({ type: 'forwarded', seq: 1, status: 500 });
    const latest = JSON.stringify({ type: 'forwarded', seq: 1, status: 201 });
    expect(await store.setForwarded('a', 1, first)).toBe(true);
    expect(await store.setForwarded('a', 1, latest)).toBe(true);
    expect(await store.setForwarded('a', 9, latest)).toBe(false);
    expect(await store.setForwarded('missing', 1, latest)).toBe(false);
    expect((await store.readLog('a', 0))?.requests.map((r) => [r.seq, r.forwarded])).toEqual([[1, latest]]);
    await expect.poll(() => events().length).toBe(2);
    await append(store, 'a', '{}', 0);
    await append(store, 'a', '{}', 0);
    // Request 1 was trimmed: its result went with it, and no other request has one.
    expect((await store.readLog('a', 0))?.requests.map((r) => [r.seq, r.forwarded])).toEqual([
      [2, undefined],
      [3, undefined],
    ]);
    expect(await store.setForwarded('a', 1, latest)).toBe(false);
  });

  it("keeps an endpoint's byte budget: its oldest requests go, and its watchers are told", async () => {
    const body = `{"pad":"${'x'.repeat(100 * 1024)}"}`;
    const cost = body.length + 40 + STORED_REQUEST_OVERHEAD_BYTES;
    const { store, events, create, watch } = make({ maxStoredBytesPerEndpoint: Math.floor(cost * 3.5) });
    await create('a');
    await watch('a');
    for (let i = 0; i < 5; i++) await append(store, 'a', body, 0);
    expect((await store.readLog('a', 0))?.requests.map((r) => r.seq)).toEqual([3, 4, 5]);
    await expect.poll(() => events().length).toBe(2);
    expect(events()).toEqual([
      ['a', { type: 'evicted', throughSeq: 1 }],
      ['a', { type: 'evicted', throughSeq: 2 }],
    ]);
    expect((await store.stats()).evictedRequests).toBe(2);
  });

  it("keeps the store's byte budget across endpoints: the oldest requests anywhere go first", async () => {
    const body = `{"pad":"${'x'.repeat(100 * 1024)}"}`;
    const cost = body.length + 40 + STORED_REQUEST_OVERHEAD_BYTES;
    const { store, events, create, watch } = make({
      maxStoredBytes: Math.floor(cost * 4.5),
      maxStoredBytesPerEndpoint: cost * 4,
    });
    for (const id of ['a', 'b']) {
      await create(id);
      await watch(id);
    }
    await append(store, 'a', body, 0); // a1
    await append(store, 'b', body, 0); // b1
    await append(store, 'a', body, 0); // a2
    await append(store, 'b', body, 0); // b2
    await append(store, 'b', body, 0); // b3: a1 goes
    await append(store, 'b', body, 0); // b4: b1 goes
    // Redis evicts across endpoints in a step of its own, just after the capture that passed the budget.
    await expect.poll(async () => (await store.readLog('a', 0))?.requests.map((r) => r.seq)).toEqual([2]);
    await expect.poll(async () => (await store.readLog('b', 0))?.requests.map((r) => r.seq)).toEqual([2, 3, 4]);
    expect((await store.stats()).storedBytes).toBeLessThanOrEqual(cost * 4.5);
    await expect.poll(() => events().length).toBe(2);
    expect(events()).toEqual(
      expect.arrayContaining([
        ['a', { type: 'evicted', throughSeq: 1 }],
        ['b', { type: 'evicted', throughSeq: 1 }],
      ]),
    );
    // Clearing and deleting give their bytes back.
    await store.clearRequests('b');
    await store.deleteEndpoint('a');
    expect((await store.stats()).storedBytes).toBe(0);
  });

  it('counts a forward result with its request: replacing it changes the stored bytes by the difference, and a grown request is trimmed and evicted for like a new one', async () => {
    const body = `{"pad":"${'x'.repeat(10 * 1024)}"}`;
    const report = (fill: string) => JSON.stringify({ type: 'forwarded', seq: 1, body: fill });
    const { store, events, create, watch } = make({ maxStoredBytes: 200 * 1024, maxStoredBytesPerEndpoint: 60 * 1024 });
    for (const id of ['a', 'b']) {
      await create(id);
      await watch(id);
    }
    for (let i = 0; i < 3; i++) await append(store, 'a', body, 0);
    const base = (await store.stats()).storedBytes;
    expect(await store.setForwarded('a', 2, report('y'.repeat(1000)))).toBe(true);
    expect((await store.stats()).storedBytes).toBe(base + report('y'.repeat(1000)).length);
    // Replaced, not added: the bytes follow the latest one.
    expect(await store.setForwarded('a', 2, report('z'.repeat(200)))).toBe(true);
    expect((await store.stats()).storedBytes).toBe(base + report('z'.repeat(200)).length);
    // Past the endpoint's budget, its oldest requests go, their results with them.
    expect(await store.setForwarded('a', 3, report('w'.repeat(40 * 1024)))).toBe(true);
    expect((await store.readLog('a', 0))?.requests.map((r) => r.seq)).toEqual([3]);
    await expect
      .poll(() => events().filter(([, message]) => (message as { type: string }).type === 'evicted'))
      .toEqual([['a', { type: 'evicted', throughSeq: 2 }]]);
    const [held] = (await store.readLog('a', 0))?.requests ?? [];
    expect((await store.stats()).storedBytes).toBe(
      (held ? elementLength(held.answer, held.record) : 0) +
        report('w'.repeat(40 * 1024)).length +
        STORED_REQUEST_OVERHEAD_BYTES,
    );
    // Past the store's budget, the oldest requests anywhere go.
    for (let i = 0; i < 4; i++) await append(store, 'b', body, 0);
    for (let seq = 1; seq <= 4; seq++) await store.setForwarded('b', seq, report('v'.repeat(30 * 1024)));
    expect((await store.stats()).storedBytes).toBeLessThanOrEqual(200 * 1024);
    await store.deleteEndpoint('a');
    await store.deleteEndpoint('b');
    expect((await store.stats()).storedBytes).toBe(0);
  });

  it('lets a live endpoint live while any instance holds a lease, then a grace after the last one leaves', async () => {
    const { store, create } = make();
    await create('a', { deadlineMs: clock + 1000 });
    expect(await store.holdEndpoints(['a', 'gone'], 'instance-1', clock + 10_000, 5000)).toEqual(['gone']);
    expect(await store.holdEndpoints(['a'], 'instance-2', clock + 10_000, 5000)).toEqual([]);
    clock += 9000;
    await store.releaseEndpoint('a', 'instance-1', 5000);
    // instance-2 still holds it: alive past instance-1's release plus the grace.
    clock += 5500;
    expect(await store.getEndpoint('a')).toBeDefined();
    await store.releaseEndpoint('a', 'instance-2', 5000);
    clock += 4999;
    expect(await store.getEndpoint('a')).toBeDefined();
    clock += 2;
    expect(await store.getEndpoint('a')).toBeUndefined();
    expect(await append(store, 'a', '{}', 0)).toBeUndefined();
    expect(await store.holdEndpoints(['a'], 'instance-1', clock + 10_000, 5000)).toEqual(['a']);
    expect(await store.countEndpoints()).toBe(0);
  });

  it('lets the endpoint of an instance that died live a lease and a grace, then sweeps it with its requests', async () => {
    const { store, create } = make();
    await create('a', { deadlineMs: clock + 1000 });
    await store.holdEndpoints(['a'], 'doomed', clock + 10_000, 5000);
    await append(store, 'a', '{"x":1}', 0);
    clock += 14_999;
    expect(await store.getEndpoint('a')).toBeDefined();
    clock += 2;
    expect(await store.getEndpoint('a')).toBeUndefined();
    expect(await store.sweepExpired()).toBe(1);
    expect((await store.stats()).storedBytes).toBe(0);
    // The id is free again once swept (ids are random; this only shows nothing is left).
    expect(await create('a')).toBe('created');
  });

  it('counts watchers over every instance that still holds a lease', async () => {
    const { store, create } = make();
    await create('a');
    await store.holdEndpoints(['a'], 'i1', clock + 10_000, 1000);
    await store.holdEndpoints(['a'], 'i2', clock + 20_000, 1000);
    expect(await store.countWatchers('a', 'i1', 2)).toBe(2);
    expect(await store.countWatchers('a', 'i2', 3)).toBe(5);
    clock += 15_000;
    // i1's lease ran out (it died): its watchers are not counted.
    expect(await store.countWatchers('a', 'i2', 1)).toBe(1);
    expect(await store.countWatchers('missing', 'i1', 1)).toBeUndefined();
  });

  it('keeps a kept endpoint until its fixed deadline, whatever the leases say', async () => {
    const { store, create } = make();
    await create('k', { kind: 'kept', deadlineMs: clock + 2 * HOUR });
    await store.holdEndpoints(['k'], 'instance-1', clock + 10_000, 5000);
    await store.releaseEndpoint('k', 'instance-1', 0);
    clock += 2 * HOUR - 1;
    expect((await store.getEndpoint('k'))?.kind).toBe('kept');
    clock += 1;
    expect(await store.getEndpoint('k')).toBeUndefined();
    expect(await store.holdEndpoints(['k'], 'instance-1', clock + 10_000, 5000)).toEqual(['k']);
  });

  it('counts each kind against its own cap', async () => {
    const { store, create } = make();
    expect(await create('live', { max: 1 })).toBe('created');
    expect(await create('kept', { max: 1, kind: 'kept' })).toBe('created');
    expect(await create('kept-2', { max: 1, kind: 'kept' })).toBe('full');
    expect(await create('live-2', { max: 1 })).toBe('full');
    expect(await store.countEndpoints()).toBe(2);
  });

  it('counts only living endpoints against the cap, expired ones not yet swept included', async () => {
    const { store, create } = make();
    await create('a', { max: 1, deadlineMs: clock + 1000 });
    clock += 1001;
    expect(await create('b', { max: 1 })).toBe('created');
    expect(await store.countEndpoints()).toBe(1);
  });

  it("finds an endpoint's kind, and stores each request under the response configuration in force", async () => {
    const { store, create } = make();
    await create('a');
    await create('k', { kind: 'kept' });
    expect(await store.findEndpointKind('a')).toBe('live');
    expect(await store.findEndpointKind('k')).toBe('kept');
    expect(await store.findEndpointKind('missing')).toBeUndefined();

    const draftFor = (response: ResponseConfig) => entryOf('{}', String(response.status));
    expect(await store.appendRequest('a', 'live', draftFor, 0)).toEqual({
      seq: 1,
      response: DEFAULT_RESPONSE,
      choice: 0,
      responder: false,
    });
    const conflict = { ...DEFAULT_RESPONSE, status: 409 };
    await store.setResponse('a', conflict);
    expect(await store.appendRequest('a', 'live', draftFor, 0)).toEqual({
      seq: 2,
      response: conflict,
      choice: 0,
      responder: false,
    });
    expect((await store.readLog('a', 0))?.requests.map((stored) => record(stored)?.answer)).toEqual([200, 409]);
    // The wrong kind is no endpoint: nothing stored.
    expect(await store.appendRequest('a', 'kept', draftFor, 0)).toBeUndefined();
    expect((await store.readLog('a', 0))?.lastSeq).toBe(2);

    await store.deleteEndpoint('a');
    expect(await store.appendRequest('a', 'live', draftFor, 0)).toBeUndefined();
  });

  it('takes the first answer choice whose rule has answers left, counts it with the endpoint, and starts the counts again with a new configuration', async () => {
    const { store, create } = make();
    await create('a', { kind: 'kept' });
    // Rule 0 answers twice, rule 2 once; then the default.
    const choices = [
      { rule: 0, times: 2 },
      { rule: 2, times: 1 },
      { rule: -1, times: 0 },
    ];
    const draft: NewEntry = {
      record: encodeRecord('{}', new Uint8Array()),
      choices,
      answers: ['"r0"', '"r2"', '"default"'],
    };
    const taken: number[] = [];
    for (let i = 0; i < 4; i++) taken.push((await store.appendRequest('a', 'kept', () => draft, 0))?.choice ?? -9);
    expect(taken).toEqual([0, 0, 1, 2]);
    expect((await store.readLog('a', 0))?.requests.map((stored) => record(stored)?.answer)).toEqual([
      'r0',
      'r0',
      'r2',
      'default',
    ]);
    // A rule without `times` always answers when it is reached.
    const unlimited: NewEntry = {
      record: encodeRecord('{}', new Uint8Array()),
      choices: [
        { rule: 0, times: 2 },
        { rule: 1, times: 0 },
        { rule: -1, times: 0 },
      ],
      answers: ['"r0"', '"r1"', '"default"'],
    };
    expect((await store.appendRequest('a', 'kept', () => unlimited, 0))?.choice).toBe(1);
    await store.setResponse('a', { ...DEFAULT_RESPONSE, status: 201 });
    expect((await store.appendRequest('a', 'kept', () => draft, 0))?.choice).toBe(0);
  });

  it("replaces a stored request's answer and announces it in the same step", async () => {
    const { store, create, watch, events } = make();
    await create('a');
    await watch('a');
    await append(store, 'a', '{"method":"POST"}', 0);
    const forwarder = '{"status":202,"delayMs":15,"by":"forwarder","droppedHeaders":["set-cookie"]}';
    expect(await store.setAnswer('a', 1, forwarder)).toBe(true);
    expect(record((await store.readLog('a', 0))?.requests[0])).toEqual({
      seq: 1,
      method: 'POST',
      answer: JSON.parse(forwarder) as unknown,
    });
    await expect
      .poll(events)
      .toContainEqual(['a', { type: 'answered', seq: 1, answer: JSON.parse(forwarder) as unknown }]);
    expect(await store.setAnswer('a', 2, forwarder)).toBe(false);
    expect(await store.setAnswer('missing', 1, forwarder)).toBe(false);
  });

  it('the latest responder claim holds, an earlier one waits its turn and holds again when the latest lets go; changes are said in the append and to watchers', async () => {
    const { store, create, watch, events } = make();
    await create('a');
    await watch('a');
    expect((await store.appendRequest('a', 'live', () => entryOf('{}'), 0))?.responder).toBe(false);
    expect(await store.setResponder('a', 'one', clock + 30_000, 'claim')).toBe(true);
    expect((await store.appendRequest('a', 'live', () => entryOf('{}'), 0))?.responder).toBe(true);
    expect(await store.setResponder('a', 'two', clock + 30_000, 'claim')).toBe(true);
    expect((await store.getEndpoint('a'))?.responder).toBe('two');
    // The first claim was replaced but waits its turn: it renews, and holds again once the second lets go.
    expect(await store.setResponder('a', 'one', clock + 60_000, 'renew')).toBe(true);
    expect(await store.setResponder('a', 'two', clock + 60_000, 'renew')).toBe(true);
    expect(await store.setResponder('a', 'two', 0, 'release')).toBe(true);
    expect((await store.getEndpoint('a'))?.responder).toBe('one');
    expect((await store.appendRequest('a', 'live', () => entryOf('{}'), 0))?.responder).toBe(true);
    expect(await store.setResponder('a', 'one', 0, 'release')).toBe(true);
    expect(await store.setResponder('a', 'one', 0, 'release')).toBe(false);
    expect(await store.setResponder('a', 'never', clock + 1000, 'renew')).toBe(false);
    expect((await store.appendRequest('a', 'live', () => entryOf('{}'), 0))?.responder).toBe(false);
    await expect
      .poll(() => events().filter(([, message]) => (message as { type: string }).type === 'responder'))
      .toEqual([
        ['a', { type: 'responder', id: 'one' }],
        ['a', { type: 'responder', id: 'two' }],
        ['a', { type: 'responder', id: 'one' }],
        ['a', { type: 'responder', id: null }],
      ]);
    // A waiting claim that lapses cannot come back; one that is not renewed lapses.
    await store.setResponder('a', 'three', clock + 10_000, 'claim');
    await store.setResponder('a', 'four', clock + 30_000, 'claim');
    clock += 20_000;
    expect(await store.setResponder('a', 'four', 0, 'release')).toBe(true);
    expect((await store.getEndpoint('a'))?.responder).toBeUndefined();
    await store.setResponder('a', 'five', clock + 30_000, 'claim');
    clock += 30_001;
    expect((await store.appendRequest('a', 'live', () => entryOf('{}'), 0))?.responder).toBe(false);
    expect(await store.setResponder('missing', 'x', clock + 1, 'claim')).toBe(false);
  });

  it('stores nothing and takes no seq when the draft cannot be built', async () => {
    const { store, create } = make();
    await create('a');
    const failing = () => {
      throw new Error('no draft');
    };
    await expect(store.appendRequest('a', 'live', failing, 0)).rejects.toThrow('no draft');
    expect(await append(store, 'a', '{}', 0)).toBe(1);
    expect((await store.readLog('a', 0))?.requests.map((stored) => stored.seq)).toEqual([1]);
  });
});

describe('Redis store: instances on one prefix', () => {
  const two = () => {
    const prefix = testPrefix();
    prefixes.push(prefix);
    return [0, 1].map(() => {
      const commands = connectRedis();
      redisClients.push(commands);
      return createRedisStore({ ...LIMITS, redis: commands, prefix, commandTimeoutMs: 2000 });
    }) as [RedisStore, RedisStore];
  };

  it("counts a rule's answers across instances", async () => {
    const [a, c] = two();
    await a.createEndpoint(endpoint('e'), { maxEndpoints: 10, deadlineMs: Date.now() + HOUR });
    const draft: NewEntry = {
      record: encodeRecord('{}', new Uint8Array()),
      choices: [
        { rule: 0, times: 3 },
        { rule: -1, times: 0 },
      ],
      answers: ['503', '200'],
    };
    const taken = await Promise.all(
      Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : c).appendRequest('e', 'live', () => draft, 0)),
    );
    expect(taken.filter((appended) => appended?.choice === 0)).toHaveLength(3);
    expect((await a.readLog('e', 0))?.requests.map((stored) => record(stored)?.answer)).toEqual([
      503, 503, 503, 200, 200, 200, 200, 200,
    ]);
  });

  it('builds a draft again when another instance changed the response configuration since this one last saw it', async () => {
    const [a, c] = two();
    await a.createEndpoint(endpoint('e'), { maxEndpoints: 10, deadlineMs: Date.now() + HOUR });
    const drafts: number[] = [];
    const draftFor = (response: ResponseConfig) => {
      drafts.push(response.status);
      return entryOf('{}', String(response.status));
    };
    expect((await c.appendRequest('e', 'live', draftFor, 0))?.response.status).toBe(200);
    await a.setResponse('e', { ...DEFAULT_RESPONSE, status: 409 });
    expect((await c.appendRequest('e', 'live', draftFor, 0))?.response.status).toBe(409);
    // C built its second draft for the 200 it knew, Redis refused it, and C built it for 409.
    expect(drafts).toEqual([200, 200, 409]);
    expect((await a.readLog('e', 0))?.requests.map((stored) => record(stored)?.answer)).toEqual([200, 409]);
  });

  it('gives back the bytes of an endpoint whose keys expired before any sweep, and keeps storing', async () => {
    const prefix = testPrefix();
    prefixes.push(prefix);
    const commands = connectRedis();
    redisClients.push(commands);
    // The store's clock runs an hour behind Redis's, so the keys' backstop expiry (an hour after
    // the deadline) comes while the store still holds the endpoint alive: as when no instance swept.
    let now = Date.now() - HOUR - 10_000;
    const store = createRedisStore({
      ...LIMITS,
      maxStoredBytes: 2000,
      redis: commands,
      prefix,
      now: () => now,
      commandTimeoutMs: 2000,
    });
    await store.createEndpoint(endpoint('old', 'kept'), { maxEndpoints: 10, deadlineMs: Date.now() - HOUR + 1500 });
    const body = (fill: string) => JSON.stringify({ body: fill.repeat(300) });
    expect(await append(store, 'old', body('x'), 0, 'kept')).toBe(1);
    await expect
      .poll(() => commands.exists(`${prefix}ep:old`, `${prefix}rq:old`), { timeout: 5000, interval: 100 })
      .toBe(0);
    now = Date.now();
    expect(await store.sweepExpired()).toBe(1);
    expect((await store.stats()).storedBytes).toBe(0);

    await store.createEndpoint(endpoint('new', 'kept'), { maxEndpoints: 10, deadlineMs: now + HOUR });
    // Past the 2000-byte budget the oldest go, the swept endpoint's leftover age entry skipped.
    for (let seq = 1; seq <= 6; seq++) expect(await append(store, 'new', body('y'), 0, 'kept')).toBe(seq);
    // Evicted in a step of its own, just after the capture that passed the budget.
    const counted = async () => {
      const held = (await store.readLog('new', 0))?.requests ?? [];
      const bytes = held.reduce(
        (sum, stored) => sum + elementLength(stored.answer, stored.record) + STORED_REQUEST_OVERHEAD_BYTES,
        0,
      );
      return { fewer: held.length < 6, matches: (await store.stats()).storedBytes === bytes, within: bytes <= 2000 };
    };
    await expect.poll(counted).toEqual({ fewer: true, matches: true, within: true });
  });

  it('tells a capture that an endpoint deleted on another instance is gone', async () => {
    const [a, c] = two();
    await a.createEndpoint(endpoint('e'), { maxEndpoints: 10, deadlineMs: Date.now() + HOUR });
    expect(await c.findEndpointKind('e')).toBe('live');
    await a.deleteEndpoint('e');
    expect(await append(c, 'e', '{}', 0)).toBeUndefined();
    expect(await c.findEndpointKind('e')).toBeUndefined();
  });
});
