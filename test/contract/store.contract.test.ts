import { describe, expect, it } from 'vitest';
import { createMemoryStore } from '../../src/store/memory-store.js';
import type { EndpointRecord, Store } from '../../src/store/store.js';
import { DEFAULT_RESPONSE } from '../../src/response-config.js';

/**
 * What every Store backend must do, written once. A Redis backend joins the list below and
 * runs the same suite against a real server.
 */
const backends: Array<[string, (requestsPerEndpoint: number) => Store]> = [['memory', (requestsPerEndpoint) => createMemoryStore({ requestsPerEndpoint })]];

const endpoint = (id: string): EndpointRecord => ({ id, keyHash: 'ab'.repeat(32), createdAt: '2026-01-01T00:00:00.000Z', response: DEFAULT_RESPONSE });

describe.each(backends)('Store contract: %s', (_name, makeStore) => {
  it('creates, reads and deletes an endpoint; a missing one reads as undefined', async () => {
    const store = makeStore(50);
    expect(await store.createEndpoint(endpoint('a'), 10)).toBe(true);
    expect(await store.getEndpoint('a')).toEqual(endpoint('a'));
    expect(await store.getEndpoint('missing')).toBeUndefined();
    expect(await store.countEndpoints()).toBe(1);
    expect(await store.deleteEndpoint('a')).toBe(true);
    expect(await store.deleteEndpoint('a')).toBe(false);
    expect(await store.getEndpoint('a')).toBeUndefined();
  });

  it('refuses an endpoint past the cap and a duplicate id', async () => {
    const store = makeStore(50);
    expect(await store.createEndpoint(endpoint('a'), 1)).toBe(true);
    expect(await store.createEndpoint(endpoint('b'), 1)).toBe(false);
    expect(await store.createEndpoint(endpoint('a'), 5)).toBe(false);
    expect(await store.countEndpoints()).toBe(1);
  });

  it('numbers requests from 1, puts seq first in the JSON, and returns the response config', async () => {
    const store = makeStore(50);
    await store.createEndpoint(endpoint('a'), 10);
    const first = await store.appendRequest('a', '{"method":"POST"}');
    const second = await store.appendRequest('a', '{}');
    expect(first).toEqual({ request: { seq: 1, json: '{"seq":1,"method":"POST"}' }, response: DEFAULT_RESPONSE });
    expect(second?.request).toEqual({ seq: 2, json: '{"seq":2}' });
    expect(JSON.parse(first?.request.json ?? '')).toEqual({ seq: 1, method: 'POST' });
    expect(await store.appendRequest('missing', '{}')).toBeUndefined();
  });

  it('keeps only the newest requests, oldest first, and lists after a seq', async () => {
    const store = makeStore(3);
    await store.createEndpoint(endpoint('a'), 10);
    for (let i = 0; i < 5; i++) await store.appendRequest('a', `{"i":${i}}`);
    expect((await store.listRequests('a', 0))?.map((r) => r.seq)).toEqual([3, 4, 5]);
    expect((await store.listRequests('a', 4))?.map((r) => r.seq)).toEqual([5]);
    expect(await store.listRequests('a', 5)).toEqual([]);
    expect(await store.listRequests('missing', 0)).toBeUndefined();
  });

  it('clears requests, remembers the cleared seq, and keeps numbering after it', async () => {
    const store = makeStore(50);
    await store.createEndpoint(endpoint('a'), 10);
    expect(await store.clearedSeq('a')).toBe(0);
    await store.appendRequest('a', '{}');
    await store.appendRequest('a', '{}');
    expect(await store.clearRequests('a')).toBe(2);
    expect(await store.clearedSeq('a')).toBe(2);
    expect(await store.listRequests('a', 0)).toEqual([]);
    expect((await store.appendRequest('a', '{}'))?.request.seq).toBe(3);
    expect(await store.clearRequests('missing')).toBeUndefined();
  });

  it('sets the response configuration', async () => {
    const store = makeStore(50);
    await store.createEndpoint(endpoint('a'), 10);
    const response = { status: 500 as const, body: 'boom', contentType: 'text/plain' as const };
    expect(await store.setResponse('a', response)).toBe(true);
    expect((await store.getEndpoint('a'))?.response).toEqual(response);
    expect((await store.appendRequest('a', '{}'))?.response).toEqual(response);
    expect(await store.setResponse('missing', response)).toBe(false);
  });

  it('does not let a caller mutate stored endpoints through returned objects', async () => {
    const store = makeStore(50);
    await store.createEndpoint(endpoint('a'), 10);
    const read = await store.getEndpoint('a');
    if (read) read.keyHash = 'changed';
    expect((await store.getEndpoint('a'))?.keyHash).toBe('ab'.repeat(32));
  });
});
