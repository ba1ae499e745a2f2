import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  DEFAULT_KEPT_SPAN_MS,
  KNOWN_MAX,
  knownEndpoint,
  rememberEndpoint,
  saveKeptSpan,
  savedKeptSpan,
  savedKind,
  saveKind,
} from '../../client/src/endpoint/settings.js';
import type { EndpointInfo } from '../../src/shared/protocol.js';

/** localStorage, in memory; `broken` makes every call throw, as a browser with storage switched off does. */
function fakeStorage() {
  const items = new Map<string, string>();
  const storage = {
    broken: false,
    items,
    getItem(key: string) {
      if (storage.broken) throw new DOMException('denied', 'SecurityError');
      return items.get(key) ?? null;
    },
    setItem(key: string, value: string) {
      if (storage.broken) throw new DOMException('full', 'QuotaExceededError');
      items.set(key, value);
    },
  };
  return storage;
}

const endpoint = (id: string): EndpointInfo => ({
  id,
  key: `key-of-${id}`,
  url: `http://h.example/api/webhook-tester/${id}`,
  kind: 'live',
  createdAt: '2026-01-01T00:00:00.000Z',
  response: { status: 200, body: '', contentType: 'application/json', headers: [], delayMs: 0 },
  graceSeconds: 30,
  maxRequests: 50,
  maxBodyBytes: 1024,
});

let storage: ReturnType<typeof fakeStorage>;
beforeEach(() => {
  storage = fakeStorage();
  vi.stubGlobal('localStorage', storage);
});
afterEach(() => vi.unstubAllGlobals());

describe('the page: its saved settings', () => {
  it('remembers the kind of new endpoints, live unless kept was chosen', () => {
    expect(savedKind()).toBe('live');
    saveKind('kept');
    expect(savedKind()).toBe('kept');
    storage.items.set('hookwatch.kind', 'something else');
    expect(savedKind()).toBe('live');
  });

  it('remembers a kept endpoint’s span, 2 h until one told it', () => {
    expect(savedKeptSpan()).toBe(DEFAULT_KEPT_SPAN_MS);
    saveKeptSpan(3600_000);
    expect(savedKeptSpan()).toBe(3600_000);
    storage.items.set('hookwatch.keptSpanMs', 'nonsense');
    expect(savedKeptSpan()).toBe(DEFAULT_KEPT_SPAN_MS);
  });

  it('remembers endpoints without their keys, the most recently seen 20', () => {
    for (let i = 0; i <= KNOWN_MAX; i++) rememberEndpoint(endpoint(`e${i}`));
    expect(knownEndpoint('e0')).toBeUndefined();
    expect(knownEndpoint('e1')?.url).toBe('http://h.example/api/webhook-tester/e1');
    expect(storage.items.get('hookwatch.endpoints')).not.toContain('key-of-');
    // Seeing one again makes it the most recent.
    rememberEndpoint(endpoint('e1'));
    rememberEndpoint(endpoint('new'));
    expect(knownEndpoint('e1')).toBeDefined();
    expect(knownEndpoint('e2')).toBeUndefined();
    expect(knownEndpoint('__proto__')).toBeUndefined();
  });

  it('carries on without storage: defaults, nothing remembered, nothing thrown', () => {
    storage.broken = true;
    expect(() => saveKind('kept')).not.toThrow();
    expect(() => rememberEndpoint(endpoint('x'))).not.toThrow();
    expect(savedKind()).toBe('live');
    expect(savedKeptSpan()).toBe(DEFAULT_KEPT_SPAN_MS);
    expect(knownEndpoint('x')).toBeUndefined();
    storage.broken = false;
    storage.items.set('hookwatch.endpoints', '{not json');
    expect(knownEndpoint('x')).toBeUndefined();
  });
});
