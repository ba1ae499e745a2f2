import { describe, expect, it } from 'vitest';
import { toHar } from '../../client/src/log/export.js';
import { ago, formatBytes, searchText, utc } from '../../client/src/format.js';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { capturedRequest } from '../helpers/captured.js';

const request = capturedRequest({
  seq: 3,
  url: '/api/webhook-tester/abc/hooks?x=1',
  subPath: '/hooks',
  query: { x: '1' },
  body: '{"a":1}',
  receivedAt: '2026-11-22T16:20:01.123Z',
});

describe('the page: formatting', () => {
  it('says how long ago, briefly', () => {
    expect([0, 999, 5_000, 59_999, 60_000, 3_599_999, 3_600_000, 86_400_000 * 2].map(ago)).toEqual([
      'now',
      'now',
      '5 s ago',
      '59 s ago',
      '1 min ago',
      '59 min ago',
      '1 h ago',
      '2 d ago',
    ]);
    expect(ago(-5_000)).toBe('now');
  });

  it('writes UTC with milliseconds, and sizes in binary units', () => {
    expect(utc(request.receivedAt)).toBe('2026-11-22 16:20:01.123 UTC');
    expect([512, 1536, 501_001, 3 * 1024 * 1024].map(formatBytes)).toEqual(['512 B', '1.5 KB', '489 KB', '3.0 MB']);
  });
});

describe('the page: what the filter searches', () => {
  it('takes decoded query and form values', () => {
    const text = searchText({
      ...request,
      url: '/x?who=grace%40example.com',
      query: { who: 'grace@example.com' },
      form: { email: 'ada@example.com', tag: ['a', 'b'] },
      body: 'email=ada%40example.com&tag=a&tag=b',
    });
    expect(text).toContain('grace@example.com');
    expect(text).toContain('email=ada@example.com');
    expect(text).toContain('tag=b');
  });
});

describe('the page: HAR export', () => {
  type Entry = { time: number; response: { status: number }; timings: { wait: number } };
  const entries = (requests: CapturedRequest[]) =>
    (JSON.parse(toHar(requests, 'https://h.example/api/webhook-tester/abc')) as { log: { entries: Entry[] } }).log
      .entries;

  it('follows HAR 1.2: text bodies as text, binary ones as base64 marked with _encoding, the status with its reason phrase', () => {
    const [text, controls, binary] = entries([
      request,
      { ...request, body: Buffer.from('a\u0001b').toString('base64'), bodyEncoding: 'base64' },
      {
        ...request,
        body: Buffer.from([0xff, 0x00]).toString('base64'),
        bodyEncoding: 'base64',
        answer: { status: 429, delayMs: 0, by: 'default' },
      },
    ]) as unknown as Array<{
      request: { postData: Record<string, string> };
      response: { status: number; statusText: string; content: { size: number } };
    }>;
    expect(text?.request.postData).toEqual({ mimeType: 'application/json', text: '{"a":1}' });
    expect(controls?.request.postData).toEqual({ mimeType: 'application/json', text: 'a\u0001b' });
    expect(binary?.request.postData).toMatchObject({ text: '/wA=', _encoding: 'base64' });
    expect(binary?.request.postData).not.toHaveProperty('encoding');
    expect(binary?.response).toMatchObject({ status: 429, statusText: 'Too Many Requests', content: { size: -1 } });
  });

  it('carries the status the sender got, and how long the answer took', () => {
    const [entry] = entries([{ ...request, answer: { status: 201, delayMs: 250, by: 'default' } }]);
    expect(entry?.response.status).toBe(201);
    expect(entry?.time).toBe(250);
    expect(entry?.timings.wait).toBe(250);
  });
});
