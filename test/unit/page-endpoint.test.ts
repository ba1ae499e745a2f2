import { describe, expect, it } from 'vitest';
import { credentialsFromLink, maxRequests, shareLink } from '../../client/src/endpoint/endpoint.js';
import { DEFAULT_MAX_REQUESTS, type EndpointInfo } from '../../src/shared/protocol.js';
import * as server from '../../src/shared/schemas/response-config.js';

const endpoint: EndpointInfo = {
  id: 'abc_-1',
  key: 'K3y',
  url: 'http://h.example/api/webhook-tester/abc_-1',
  kind: 'live',
  createdAt: '2026-01-01T00:00:00.000Z',
  response: server.DEFAULT_RESPONSE,
  graceSeconds: 30,
  maxRequests: 20,
  maxBodyBytes: 1024,
};

describe('the page: the endpoint', () => {
  it('reads how many requests it keeps under the new name, else the old, else the default', () => {
    expect(maxRequests(endpoint)).toBe(20);
    // A server from before the rename sends only requestsKept.
    const older = { ...endpoint, maxRequests: undefined, requestsKept: 30 } as unknown as EndpointInfo;
    expect(maxRequests(older)).toBe(30);
    expect(maxRequests({ ...older, requestsKept: undefined })).toBe(DEFAULT_MAX_REQUESTS);
    expect(maxRequests(undefined)).toBe(DEFAULT_MAX_REQUESTS);
  });

  it('reads and writes the share link: #<id>.<key>', () => {
    const here = { origin: 'http://h.example', pathname: '/', href: 'http://h.example/#x' };
    const link = shareLink(endpoint, here);
    expect(link).toBe('http://h.example/#abc_-1.K3y');
    expect(credentialsFromLink(new URL(link).hash)).toEqual({ endpointId: 'abc_-1', key: 'K3y' });
    expect(shareLink(undefined, here)).toBe(here.href);
    for (const hash of ['', '#abc', '#.key', '#abc.k-y', '#a b.key', `#abc.${'k'.repeat(129)}`])
      expect(credentialsFromLink(hash)).toBeUndefined();
  });

  it('reads `#<id>.` as an endpoint its signed-in creator opened without the key, and writes it back', () => {
    const here = { origin: 'http://h.example', pathname: '/', href: 'http://h.example/#x' };
    expect(credentialsFromLink('#abc.')).toEqual({ endpointId: 'abc', key: '' });
    expect(shareLink({ ...endpoint, key: '' }, here)).toBe('http://h.example/#abc_-1.');
  });
});
