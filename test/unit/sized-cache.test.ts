import { describe, expect, it } from 'vitest';
import { createSizedCache } from '../../src/one-process/sized-cache.js';

describe('a cache bounded by what its entries cost', () => {
  it('lets the oldest entries go first when a new one would pass the bound', () => {
    const cache = createSizedCache<string>(100);
    cache.set('a', 'A', 40);
    cache.set('b', 'B', 40);
    cache.set('c', 'C', 40);
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, 'B', 'C']);
    expect(cache.bytes).toBe(80);
    // A read does not make an entry younger: the oldest set still goes first.
    cache.get('b');
    cache.set('d', 'D', 30);
    expect([cache.get('b'), cache.get('c'), cache.get('d')]).toEqual([undefined, 'C', 'D']);
    expect(cache.bytes).toBe(70);
  });

  it('replaces an entry at its new cost, and keeps nothing that costs more than the whole bound', () => {
    const cache = createSizedCache<string>(100);
    cache.set('a', 'A', 40);
    cache.set('a', 'A2', 60);
    expect([cache.get('a'), cache.bytes, cache.size]).toEqual(['A2', 60, 1]);
    cache.set('a', 'huge', 101);
    expect([cache.get('a'), cache.bytes, cache.size]).toEqual([undefined, 0, 0]);
    cache.set('b', 'B', 100);
    expect(cache.get('b')).toBe('B');
  });

  it('forgets one entry or all of them, and their costs with them', () => {
    const cache = createSizedCache<number>(100);
    cache.set('a', 1, 10);
    cache.set('b', 2, 20);
    cache.delete('a');
    cache.delete('missing');
    expect([cache.get('a'), cache.bytes]).toEqual([undefined, 20]);
    cache.clear();
    expect([cache.get('b'), cache.bytes, cache.size]).toEqual([undefined, 0, 0]);
  });
});
