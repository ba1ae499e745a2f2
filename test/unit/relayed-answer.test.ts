import { describe, expect, it } from 'vitest';
import { toRelayed } from '../../src/endpoints/relayed-answer.js';

const answer = (headers: Array<[string, string]>) =>
  toRelayed({ type: 'local-answer', seq: 1, status: 200, headers, body: '<p>hi</p>', bodyEncoding: 'utf8' });

describe('a local app answer on its way to the sender', () => {
  it.each([
    'NEL',
    'Report-To',
    'Reporting-Endpoints',
    'WWW-Authenticate',
    'Service-Worker-Allowed',
    'Content-Disposition',
    'Set-Cookie',
  ])('drops %s, which would act on the whole origin, and lists it', (name) => {
    const relayed = answer([
      [name, 'x'],
      ['X-Kept', 'yes'],
    ]);
    expect(relayed.ok && relayed.value.headers).toEqual([['X-Kept', 'yes']]);
    expect(relayed.ok && relayed.value.droppedHeaders).toEqual([name.toLowerCase()]);
  });

  it.each([
    'text/html',
    'TEXT/HTML; charset=utf-8',
    'application/xhtml+xml',
    'image/svg+xml',
    'multipart/x-mixed-replace; boundary=x',
  ])('relays a page type (%s) as text/plain, never as a page', (type) => {
    const relayed = answer([['Content-Type', type]]);
    expect(relayed.ok && relayed.value.headers).toEqual([['Content-Type', 'text/plain; charset=utf-8']]);
    expect(relayed.ok && relayed.value.droppedHeaders).toEqual(['content-type']);
  });

  it('keeps a JSON or plain content type as the app sent it', () => {
    const relayed = answer([
      ['Content-Type', 'application/json'],
      ['Content-Encoding', 'gzip'],
    ]);
    expect(relayed.ok && relayed.value.headers).toEqual([
      ['Content-Type', 'application/json'],
      ['Content-Encoding', 'gzip'],
    ]);
  });
});
