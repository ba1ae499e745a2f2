import { describe, expect, it } from 'vitest';
import type { Bus, BusMessage } from '../../src/bus/bus.js';
import { createMemoryBus } from '../../src/bus/memory-bus.js';
import { DEFAULT_RESPONSE } from '../../src/response-config.js';
import { createMemoryStore } from '../../src/store/memory-store.js';
import { recordOf, STORED_REQUEST_OVERHEAD_BYTES, type EndpointRecord, type Store, type StoreLimits } from '../../src/store/store.js';

/**
 * What every Store backend must do, written once and run on each backend with `describe.each`.
 * A backend is made from limits and the bus it announces on.
 */
type MakeStore = (limits: StoreLimits, bus: Bus) => Store;
const backends: Array<[string, MakeStore]> = [['memory', (limits, bus) => createMemoryStore({ ...limits, bus })]];

const MIB = 1024 * 1024;
const LIMITS: StoreLimits = { requestsPerEndpoint: 50, maxStoredBytes: 64 * MIB, maxStoredBytesPerEndpoint: 16 * MIB };

const endpoint = (id: string): EndpointRecord => ({ id, kind: 'live', keyHash: 'ab'.repeat(32), createdAt: '2026-01-01T00:00:00.000Z', response: DEFAULT_RESPONSE });
const json = (text: string) => text;
const record = (message: Buffer | undefined) => (message ? (JSON.parse(recordOf(message).toString()) as Record<string, unknown>) : undefined);

/** A bus that records what is announced for every endpoint it is told about. */
function recordingBus(): { bus: Bus; heard: Array<[string, BusMessage]>; watch: (id: string) => Promise<void> } {
  const bus = createMemoryBus();
  const heard: Array<[string, BusMessage]> = [];
  bus.onMessage((id, message) => heard.push([id, message]));
  return { bus, heard, watch: (id) => bus.subscribe(id) };
}

describe.each(backends)('Store contract: %s', (_name, makeStore) => {
  const make = (limits: Partial<StoreLimits> = {}) => {
    const recording = recordingBus();
    return { store: makeStore({ ...LIMITS, ...limits }, recording.bus), ...recording };
  };

  it('creates, reads and deletes an endpoint; a missing one reads as undefined', async () => {
    const { store } = make();
    expect(await store.createEndpoint(endpoint('a'), 10)).toBe(true);
    expect(await store.getEndpoint('a')).toEqual(endpoint('a'));
    expect(await store.getEndpoint('missing')).toBeUndefined();
    expect(await store.countEndpoints()).toBe(1);
    expect(await store.deleteEndpoint('a')).toBe(true);
    expect(await store.deleteEndpoint('a')).toBe(false);
    expect(await store.getEndpoint('a')).toBeUndefined();
  });

  it('refuses an endpoint past the cap and a duplicate id', async () => {
    const { store } = make();
    expect(await store.createEndpoint(endpoint('a'), 1)).toBe(true);
    expect(await store.createEndpoint(endpoint('b'), 1)).toBe(false);
    expect(await store.createEndpoint(endpoint('a'), 5)).toBe(false);
    expect(await store.countEndpoints()).toBe(1);
  });

  it('numbers requests from 1, builds the request message with seq first, and announces it', async () => {
    const { store, heard, watch } = make();
    await store.createEndpoint(endpoint('a'), 10);
    await watch('a');
    const first = await store.appendRequest('a', json('{"method":"POST"}'), 1000);
    const second = await store.appendRequest('a', json('{}'), 2000);
    expect(first?.seq).toBe(1);
    expect(first?.message.toString()).toBe('{"type":"request","request":{"seq":1,"method":"POST"}}');
    expect(record(second?.message)).toEqual({ seq: 2 });
    expect(heard.map(([id, message]) => [id, message.seq, String(message.data), message.capturedAtMs])).toEqual([
      ['a', 1, first?.message.toString(), 1000],
      ['a', 2, second?.message.toString(), 2000],
    ]);
    expect(await store.appendRequest('missing', json('{}'), 0)).toBeUndefined();
  });

  it('keeps only the newest requests, oldest first, and reads after a seq with the counters', async () => {
    const { store } = make({ requestsPerEndpoint: 3 });
    await store.createEndpoint(endpoint('a'), 10);
    for (let i = 0; i < 5; i++) await store.appendRequest('a', json(`{"i":${i}}`), 0);
    const all = await store.readLog('a', 0);
    expect(all?.requests.map((r) => r.seq)).toEqual([3, 4, 5]);
    expect(all?.lastSeq).toBe(5);
    expect(all?.clearedSeq).toBe(0);
    expect((await store.readLog('a', 4))?.requests.map((r) => r.seq)).toEqual([5]);
    expect((await store.readLog('a', 5))?.requests).toEqual([]);
    expect(await store.readLog('missing', 0)).toBeUndefined();
  });

  it('clears requests, remembers the cleared seq, and keeps numbering after it', async () => {
    const { store } = make();
    await store.createEndpoint(endpoint('a'), 10);
    await store.appendRequest('a', json('{}'), 0);
    await store.appendRequest('a', json('{}'), 0);
    expect(await store.clearRequests('a')).toBe(2);
    const log = await store.readLog('a', 0);
    expect(log).toEqual({ requests: [], lastSeq: 2, clearedSeq: 2 });
    expect((await store.appendRequest('a', json('{}'), 0))?.seq).toBe(3);
    expect(await store.clearRequests('missing')).toBeUndefined();
  });

  it('sets the response configuration', async () => {
    const { store } = make();
    await store.createEndpoint(endpoint('a'), 10);
    const response = { status: 503, body: 'boom', contentType: 'text/plain' as const, headers: [['Retry-After', '5']] as Array<[string, string]>, delayMs: 100 };
    expect(await store.setResponse('a', response)).toBe(true);
    expect((await store.getEndpoint('a'))?.response).toEqual(response);
    expect(await store.setResponse('missing', response)).toBe(false);
  });

  it('does not let a caller mutate stored endpoints through returned objects', async () => {
    const { store } = make();
    await store.createEndpoint(endpoint('a'), 10);
    const read = await store.getEndpoint('a');
    if (read) read.keyHash = 'changed';
    expect((await store.getEndpoint('a'))?.keyHash).toBe('ab'.repeat(32));
  });

  it("keeps an endpoint's byte budget: its oldest requests go, and its watchers are told", async () => {
    const body = json(`{"pad":"${'x'.repeat(100 * 1024)}"}`);
    const cost = body.length + 60 + STORED_REQUEST_OVERHEAD_BYTES;
    const { store, heard, watch } = make({ maxStoredBytesPerEndpoint: Math.floor(cost * 3.5) });
    await store.createEndpoint(endpoint('a'), 10);
    await watch('a');
    for (let i = 0; i < 5; i++) await store.appendRequest('a', body, 0);
    expect((await store.readLog('a', 0))?.requests.map((r) => r.seq)).toEqual([3, 4, 5]);
    const evictions = heard.filter(([, message]) => message.seq === undefined).map(([, message]) => JSON.parse(String(message.data)) as unknown);
    expect(evictions).toEqual([
      { type: 'evicted', throughSeq: 1 },
      { type: 'evicted', throughSeq: 2 },
    ]);
  });

  it("keeps the store's byte budget across endpoints: the oldest requests anywhere go first", async () => {
    const body = json(`{"pad":"${'x'.repeat(100 * 1024)}"}`);
    const cost = body.length + 60 + STORED_REQUEST_OVERHEAD_BYTES;
    const { store, heard, watch } = make({ maxStoredBytes: Math.floor(cost * 4.5), maxStoredBytesPerEndpoint: cost * 4 });
    for (const id of ['a', 'b']) {
      await store.createEndpoint(endpoint(id), 10);
      await watch(id);
    }
    await store.appendRequest('a', body, 0); // a1
    await store.appendRequest('b', body, 0); // b1
    await store.appendRequest('a', body, 0); // a2
    await store.appendRequest('b', body, 0); // b2
    expect((await store.stats()).storedBytes).toBeLessThanOrEqual(cost * 4.5);
    await store.appendRequest('b', body, 0); // b3: a1 goes
    await store.appendRequest('b', body, 0); // b4: b1 goes
    expect((await store.readLog('a', 0))?.requests.map((r) => r.seq)).toEqual([2]);
    expect((await store.readLog('b', 0))?.requests.map((r) => r.seq)).toEqual([2, 3, 4]);
    expect((await store.stats()).storedBytes).toBeLessThanOrEqual(cost * 4.5);
    const evictions = heard.filter(([, message]) => message.seq === undefined).map(([id, message]) => [id, JSON.parse(String(message.data)) as unknown]);
    expect(evictions).toEqual([
      ['a', { type: 'evicted', throughSeq: 1 }],
      ['b', { type: 'evicted', throughSeq: 1 }],
    ]);
    // Clearing and deleting give their bytes back.
    await store.clearRequests('b');
    await store.deleteEndpoint('a');
    expect((await store.stats()).storedBytes).toBe(0);
  });
});
