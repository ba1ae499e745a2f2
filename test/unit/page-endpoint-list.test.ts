import { describe, expect, it } from 'vitest';
import {
  lastAlive,
  LIST_MAX,
  listedExpired,
  listedSummary,
  listForget,
  listOpened,
  listUpdate,
  readList,
  type ListStorage,
} from '../../client/src/endpoint/endpoint-list.js';

/** A Storage of the test's own. */
function memory(initial?: string): ListStorage & { text(): string | undefined } {
  const values = new Map<string, string>(initial === undefined ? [] : [['hookwatch.list', initial]]);
  return {
    getItem: (key) => values.get(key) ?? null,
    setItem: (key, value) => void values.set(key, value),
    text: () => values.get('hookwatch.list'),
  };
}

const NOW = Date.parse('2026-11-27T12:00:00.000Z');
const HOUR = 3600_000;
const kept = (id: string, expiresInMs: number) => ({
  id,
  key: `k${id.replace(/[^A-Za-z0-9]/g, '')}`,
  kind: 'kept' as const,
  url: `http://localhost/api/webhook-endpoint/${id}`,
  expiresAt: new Date(NOW + expiresInMs).toISOString(),
});
const live = (id: string) => ({
  id,
  key: 'key1',
  kind: 'live' as const,
  url: `http://localhost/api/webhook-tester/${id}`,
});

describe('the page: the list of endpoints this browser made or joined', () => {
  it('keeps each endpoint once, the most recently opened first, with its key, kind, expiry and request count', () => {
    const storage = memory();
    listOpened(storage, kept('stripe-dev', 7 * 24 * HOUR), NOW);
    listOpened(storage, live('abc'), NOW + 1000);
    listUpdate(storage, 'stripe-dev', { requests: 3 });
    listOpened(storage, kept('stripe-dev', 7 * 24 * HOUR), NOW + 2000);
    const list = readList(storage);
    expect(list.map((entry) => [entry.id, entry.key, entry.kind, entry.requests])).toEqual([
      ['stripe-dev', 'kstripedev', 'kept', 3],
      ['abc', 'key1', 'live', 0],
    ]);
    expect(listedSummary(list[0]!, NOW)).toBe('Kept · expires in 7 days · 3 requests');
    expect(listedSummary(list[1]!, NOW)).toBe('Live · while a tab watches it · 0 requests');
    listForget(storage, 'stripe-dev');
    expect(readList(storage).map((entry) => entry.id)).toEqual(['abc']);
  });

  it('a visit to / goes back to the newest kept endpoint still alive, never a live or an expired one', () => {
    const storage = memory();
    listOpened(storage, kept('old-one', 5 * HOUR), NOW - 3000);
    listOpened(storage, kept('gone-one', -HOUR), NOW - 2000);
    listOpened(storage, kept('ending-now', 30_000), NOW - 1000);
    listOpened(storage, live('abc'), NOW);
    const list = readList(storage);
    expect(lastAlive(list, NOW)?.id).toBe('old-one');
    expect(
      listedExpired(
        list.find((entry) => entry.id === 'gone-one')!,
        NOW,
      ),
    ).toBe(true);
    expect(
      listedSummary(
        list.find((entry) => entry.id === 'gone-one')!,
        NOW,
      ),
    ).toBe('Kept · expired');
    expect(lastAlive([], NOW)).toBeUndefined();
  });

  it('keeps at most LIST_MAX, dropping the least recently opened', () => {
    const storage = memory();
    for (let i = 0; i < LIST_MAX + 10; i++) listOpened(storage, kept(`ep-${i}`, HOUR), NOW + i);
    const list = readList(storage);
    expect(list).toHaveLength(LIST_MAX);
    expect(list[0]?.id).toBe(`ep-${LIST_MAX + 9}`);
  });

  it('reads back nothing hostile: malformed, huge, wrong shapes, bad ids and keys, script URLs', () => {
    for (const bad of [
      'not json',
      '{"a":1}',
      'null',
      '42',
      `[${'1,'.repeat(40_000)}1]`,
      JSON.stringify('x'.repeat(100_000)),
    ])
      expect(readList(memory(bad))).toEqual([]);
    const entries = [
      {
        id: 'ok-one',
        key: 'abc',
        kind: 'kept',
        url: 'http://h/x',
        expiresAt: '2030-01-01T00:00:00Z',
        requests: 2,
        openedAt: 5,
      },
      { id: '../x', key: 'abc', kind: 'kept', url: 'http://h/x' },
      { id: 'a', key: 'has space', kind: 'live', url: 'http://h/x' },
      { id: 'b', key: 'abc', kind: 'other', url: 'http://h/x' },
      { id: 'c', key: 'abc', kind: 'live', url: 'javascript:alert(1)' },
      { id: 'd', key: 'abc', kind: 'kept', url: 'http://h/x', expiresAt: 'soon' },
      { id: 'e', key: 'abc', kind: 'live', url: 'http://h/x', requests: -1, openedAt: 'x' },
      { id: 'ok-one', key: 'def', kind: 'live', url: 'http://h/y' },
      null,
      [1, 2],
    ];
    const list = readList(memory(JSON.stringify(entries)));
    expect(list.map((entry) => [entry.id, entry.key, entry.requests, entry.openedAt])).toEqual([
      ['ok-one', 'abc', 2, 5],
      ['e', 'abc', 0, 0],
    ]);
  });

  it('works without storage, and when storage throws', () => {
    expect(readList(undefined)).toEqual([]);
    listOpened(undefined, live('abc'), NOW);
    const throwing: ListStorage = {
      getItem: () => {
        throw new Error('SecurityError');
      },
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
    };
    expect(readList(throwing)).toEqual([]);
    expect(() => listOpened(throwing, live('abc'), NOW)).not.toThrow();
  });
});
