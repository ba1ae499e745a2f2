import { describe, expect, it } from 'vitest';
import type { PageEndpoint } from '../../client/src/transport/connection.js';
import { formatLimit, formatSpan, keptSpan, lifetimeText } from '../../client/src/endpoint/lifetime.js';

const createdAt = '2026-11-22T16:00:00.000Z';
const base: PageEndpoint = {
  id: 'abc',
  key: 'k',
  url: 'http://localhost/api/webhook-tester/abc',
  kind: 'live',
  createdAt,
  response: { status: 200, body: '', contentType: 'application/json', headers: [], delayMs: 0 },
  graceSeconds: 30,
  maxRequests: 50,
  maxBodyBytes: 1024 * 1024,
};
const kept: PageEndpoint = { ...base, kind: 'kept', expiresAt: '2026-11-22T18:00:00.000Z', maxBodyBytes: 64 * 1024 };
const at = (iso: string) => Date.parse(iso);

describe('the lifetime line', () => {
  it('formats spans by the minute, and by the second in the last minute', () => {
    expect(formatSpan(2 * 3600_000)).toBe('2 h');
    expect(formatSpan(2 * 3600_000 - 1)).toBe('1 h 59 min');
    expect(formatSpan(90 * 60_000)).toBe('1 h 30 min');
    expect(formatSpan(61_000)).toBe('1 min');
    expect(formatSpan(59_999)).toBe('1 min');
    expect(formatSpan(59_000)).toBe('59 s');
    expect(formatSpan(400)).toBe('1 s');
    expect(formatSpan(-5)).toBe('0 s');
    expect(formatSpan(24 * 3600_000)).toBe('1 day');
    expect(formatSpan(7 * 24 * 3600_000)).toBe('7 days');
    expect(formatSpan(7 * 24 * 3600_000 - 1)).toBe('6 d 23 h');
  });

  it('formats limits in round units', () => {
    expect(formatLimit(1024 * 1024)).toBe('1 MB');
    expect(formatLimit(64 * 1024)).toBe('64 KB');
    expect(formatLimit(1536 * 1024)).toBe('1.5 MB');
    expect(formatLimit(500)).toBe('500 B');
  });

  it('says how a live endpoint lives, and counts down a kept one', () => {
    expect(lifetimeText(base, at(createdAt))).toBe(
      'lives while a tab watches it, then 30 s · keeps the newest 50 requests · bodies up to 1 MB',
    );
    expect(lifetimeText(kept, at('2026-11-22T16:00:05.000Z'))).toMatch(
      /^expires in 1 h 59 min \(.+ local\) · keeps the newest 50 requests · bodies up to 64 KB$/,
    );
    expect(lifetimeText(kept, at('2026-11-22T17:59:18.200Z'))).toMatch(/^expires in 42 s /);
    expect(lifetimeText(kept, at('2026-11-22T18:00:00.000Z'))).toBe(
      'expiring now · keeps the newest 50 requests · bodies up to 64 KB',
    );
    expect(keptSpan(kept)).toBe(2 * 3600_000);
    expect(keptSpan(base)).toBeUndefined();
  });

  it('leaves out what an endpoint joined over HTTP did not tell', () => {
    const partial: PageEndpoint = { ...kept, createdAt: '', partial: true };
    expect(lifetimeText(partial, at('2026-11-22T17:00:00.000Z'))).toMatch(/^expires in 1 h \(.+ local\)$/);
    expect(keptSpan(partial)).toBeUndefined();
    expect(lifetimeText({ ...base, graceSeconds: Number.NaN, partial: true }, 0)).toBe(
      'lives while a tab watches it, then a short grace',
    );
  });
});
