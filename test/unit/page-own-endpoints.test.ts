import { describe, expect, it } from 'vitest';
import { ownListItem, type OwnEndpoint } from '../../client/src/endpoint/own-endpoints.js';
import { DEFAULT_RESPONSE } from '../../src/shared/schemas/response-config.js';

const NOW = Date.parse('2026-01-01T12:00:00Z');
const base: OwnEndpoint = {
  id: 'ada-stripe',
  url: 'http://h.example/api/webhook-endpoint/ada-stripe',
  kind: 'kept',
  createdAt: '2026-01-01T11:00:00.000Z',
  expiresAt: '2026-01-01T13:00:00.000Z',
  response: DEFAULT_RESPONSE,
  graceSeconds: 30,
  maxRequests: 50,
  maxBodyBytes: 65536,
};

describe("the page: a signed-in user's own endpoints from the server", () => {
  it("shows a kept one with its time left, a live one as watched, and marks this tab's", () => {
    expect(ownListItem(base, undefined, NOW)).toEqual({
      id: 'ada-stripe',
      name: 'ada-stripe',
      summary: 'Kept · expires in 1 h · yours on this server',
      current: false,
      expired: false,
    });
    expect(ownListItem(base, 'ada-stripe', NOW).current).toBe(true);
    const live: OwnEndpoint = { ...base, id: 'V1StGXR8', kind: 'live' };
    delete live.expiresAt;
    expect(ownListItem(live, undefined, NOW)).toMatchObject({
      summary: 'Live · while a tab watches it · yours on this server',
      expired: false,
    });
  });

  it('offers a kept one past its expiry, or with an unreadable one, as expired only', () => {
    expect(ownListItem({ ...base, expiresAt: '2026-01-01T11:59:59.000Z' }, undefined, NOW)).toMatchObject({
      summary: 'Kept · expired · yours on this server',
      expired: true,
    });
    expect(ownListItem({ ...base, expiresAt: 'not a date' }, undefined, NOW).expired).toBe(true);
  });
});
