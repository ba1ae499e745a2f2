import { describe, expect, it } from 'vitest';
import { ForwardedResults, LOOSE_SEQS, RESULTS_PER_SEQ } from '../../client/src/log/forwarded-results.js';
import type { ForwardedMessage } from '../../src/shared/protocol.js';

const result = (seq: number, status = 200): ForwardedMessage => ({
  type: 'forwarded',
  seq,
  target: `http://localhost:3000/hook/${seq}`,
  status,
  durationMs: 12,
  headers: [],
  body: '',
  bodyEncoding: 'utf8',
  bodyTruncated: false,
});

describe('ForwardedResults (the page)', () => {
  it('keeps every result for a request, up to the newest five', () => {
    const results = new ForwardedResults(() => true);
    for (let status = 200; status < 200 + RESULTS_PER_SEQ + 2; status++) results.add(result(1, status));
    expect(results.get(1).map((r) => r.status)).toEqual([202, 203, 204, 205, 206]);
    expect(results.get(2)).toEqual([]);
  });

  it('keeps results for requests it does not hold, at most 50 seqs, dropping the lowest first', () => {
    const held = new Set([1]);
    const results = new ForwardedResults((seq) => held.has(seq));
    results.add(result(1));
    for (let seq = 2; seq <= LOOSE_SEQS + 11; seq++) results.add(result(seq));
    // The held request keeps its result; of the 60 loose ones, the 50 highest stay.
    expect(results.get(1)).toHaveLength(1);
    expect(results.get(11)).toEqual([]);
    expect(results.get(12)).toHaveLength(1);
    expect(results.get(LOOSE_SEQS + 11)).toHaveLength(1);
  });

  it('forgets what a clear removed, and everything on clear()', () => {
    const results = new ForwardedResults(() => true);
    for (const seq of [1, 2, 3]) results.add(result(seq));
    results.dropThrough(2);
    expect([1, 2, 3].map((seq) => results.get(seq).length)).toEqual([0, 0, 1]);
    results.clear();
    expect(results.get(3)).toEqual([]);
  });
});
