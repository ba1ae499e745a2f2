import { describe, expect, it } from 'vitest';
import {
  formatShareLink,
  liveUrlFor,
  parseServerBase,
  parseShareLink,
  redactKeys,
  ShareLinkError,
} from '../../src/cli/share-link.js';

describe('share links', () => {
  it('reads the endpoint id and key from the fragment, and the socket URL from the origin', () => {
    expect(parseShareLink('https://hooks.example.com/#V1StGXR8_Z5jdHi6B-myT.k8Wabc123')).toEqual({
      endpointId: 'V1StGXR8_Z5jdHi6B-myT',
      key: 'k8Wabc123',
      origin: 'https://hooks.example.com',
      liveUrl: 'wss://hooks.example.com/api/live',
    });
    expect(parseShareLink(' http://127.0.0.1:8080/#a.b\n').liveUrl).toBe('ws://127.0.0.1:8080/api/live');
  });

  it('round-trips with formatShareLink', () => {
    const link = formatShareLink('http://localhost:3000', 'id_-1', 'KEY9');
    expect(link).toBe('http://localhost:3000/#id_-1.KEY9');
    expect(parseShareLink(link)).toMatchObject({ endpointId: 'id_-1', key: 'KEY9' });
  });

  it.each([
    ['not a url', /not a URL/],
    ['ws://host/#a.b', /must start with http/],
    ['http://host/', /has no #<endpointId>\.<key> part/],
    ['http://host/#abc', /key is missing or malformed/],
    ['http://host/#abc.', /key is missing or malformed/],
    ['http://host/#abc.k-y', /key is missing or malformed/],
    [`http://host/#${'x'.repeat(65)}.key`, /endpoint id is malformed/],
    [`http://host/#id.${'k'.repeat(129)}`, /key is missing or malformed/],
    ['http://host/#i%20d.key', /endpoint id is malformed/],
  ])('refuses %s without quoting it', (text, message) => {
    let error: unknown;
    try {
      parseShareLink(text);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ShareLinkError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain(text.trim());
  });

  it('takes a server base URL with no path, and maps http(s) to ws(s)', () => {
    expect(parseServerBase('https://hooks.example.com/')).toBe('https://hooks.example.com');
    expect(parseServerBase('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(() => parseServerBase('http://host/app')).toThrow(/base URL only/);
    expect(liveUrlFor('https://h:1')).toBe('wss://h:1/api/live');
  });

  it('redacts keys from any text', () => {
    expect(redactKeys('see http://h/#abc_-1.SeCrEt99 now')).toBe('see http://h/#abc_-1.<key> now');
    expect(redactKeys('no link here #1 POST')).toBe('no link here #1 POST');
  });
});
