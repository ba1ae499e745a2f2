import { describe, expect, it } from 'vitest';
import type { PageEndpoint } from '../../client/src/transport/connection.js';
import { expiryWarning, extendSpan } from '../../client/src/endpoint/lifetime.js';

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const NOW = Date.parse('2026-11-27T12:00:00.000Z');
const kept = (leftMs: number): PageEndpoint => ({
  id: 'stripe-dev',
  key: 'k',
  url: 'http://localhost/api/webhook-endpoint/stripe-dev',
  kind: 'kept',
  createdAt: '2026-11-27T00:00:00.000Z',
  expiresAt: new Date(NOW + leftMs).toISOString(),
  response: { status: 200, body: '', contentType: 'application/json', headers: [], delayMs: 0 },
  graceSeconds: 30,
  maxRequests: 50,
  maxBodyBytes: 64 * 1024,
});

describe('the page: Extend never shortens', () => {
  it('offers the chosen lifetime when it is longer than what is left, else the next longer one, else none', () => {
    expect(extendSpan(2 * HOUR, 30 * 60_000)).toBe(2 * HOUR);
    expect(extendSpan(7 * DAY, HOUR)).toBe(7 * DAY);
    // stripe-dev with 6 d 23 h left and Lifetime 2 h: 7 days, not 2 h.
    expect(extendSpan(2 * HOUR, 6 * DAY + 23 * HOUR)).toBe(7 * DAY);
    expect(extendSpan(DAY, 3 * HOUR)).toBe(DAY);
    expect(extendSpan(2 * HOUR, 5 * HOUR)).toBe(DAY);
    expect(extendSpan(2 * HOUR, 7 * DAY)).toBeUndefined();
    expect(extendSpan(2 * HOUR, 0)).toBe(2 * HOUR);
  });
});

describe('the page: a kept endpoint warns in its last hour', () => {
  it('says how long is left and when it ends, only in the last hour of a kept endpoint', () => {
    expect(expiryWarning(kept(42 * 60_000), NOW)).toMatch(
      /^Expires in 42 min: extend it, or its URL answers 404 from .+\.$/,
    );
    expect(expiryWarning(kept(HOUR), NOW)).toMatch(/^Expires in 1 h: /);
    expect(expiryWarning(kept(HOUR + 1000), NOW)).toBeUndefined();
    expect(expiryWarning(kept(-1000), NOW)).toBeUndefined();
    expect(expiryWarning({ ...kept(60_000), kind: 'live' }, NOW)).toBeUndefined();
    const { expiresAt: _gone, ...noExpiry } = kept(60_000);
    expect(expiryWarning(noExpiry, NOW)).toBeUndefined();
  });
});

describe('the page: before applying, which rule counts start again', () => {
  it('names each counted rule, or says nothing when none counts', async () => {
    const { countsResetNote } = await import('../../client/src/answer/rule-fields.js');
    expect(countsResetNote([])).toBeUndefined();
    expect(countsResetNote([{ answer: { status: 200 } }])).toBeUndefined();
    expect(countsResetNote([{ name: 'fail 3 times first', times: 3, answer: { status: 503 } }, { answer: {} }])).toBe(
      'Applying starts this count again: “fail 3 times first” (first 3) will answer its first matches again.',
    );
    expect(
      countsResetNote([
        { times: 1, answer: {} },
        { name: 'b', times: 2, answer: {} },
      ]),
    ).toBe(
      'Applying starts these counts again: rule 1 (first 1), “b” (first 2) will answer their first matches again.',
    );
  });
});
