import { describe, expect, it } from 'vitest';
import { buildForwardedMessage, encodeBody } from '../../src/cli/forward-report.js';

const answer = (
  body: Buffer,
  extra: { headers?: Array<[string, string]>; bodyTruncated?: boolean; status?: number } = {},
) => ({
  ok: true as const,
  status: extra.status ?? 200,
  ms: 12.345,
  headers: extra.headers ?? [['Content-Type', 'text/plain']],
  body,
  bodyTruncated: extra.bodyTruncated ?? false,
});

describe('buildForwardedMessage', () => {
  it('puts type first, then the result as the protocol shapes it', () => {
    const message = buildForwardedMessage(
      7,
      'http://localhost:3000/hook/x?a=1',
      answer(Buffer.from('{"received":true}')),
    );
    expect(JSON.stringify(message).startsWith('{"type":"forwarded",')).toBe(true);
    expect(message).toEqual({
      type: 'forwarded',
      seq: 7,
      target: 'http://localhost:3000/hook/x?a=1',
      status: 200,
      durationMs: 12.3,
      headers: [['Content-Type', 'text/plain']],
      body: '{"received":true}',
      bodyEncoding: 'utf8',
      bodyTruncated: false,
    });
  });

  it('reports a failure with its error and no status', () => {
    const message = buildForwardedMessage(3, 'http://localhost:1/', {
      ok: false,
      error: 'connect ECONNREFUSED 127.0.0.1:1, 2 attempts',
      ms: 1.5,
    });
    expect(JSON.stringify(message).startsWith('{"type":"forwarded",')).toBe(true);
    expect(message).toEqual({
      type: 'forwarded',
      seq: 3,
      target: 'http://localhost:1/',
      error: 'connect ECONNREFUSED 127.0.0.1:1, 2 attempts',
      durationMs: 1.5,
      headers: [],
      body: '',
      bodyEncoding: 'utf8',
      bodyTruncated: false,
    });
  });

  it('cuts every field to the limits the server checks', () => {
    const headers = Array.from({ length: 80 }, (_, i): [string, string] => [
      `X-${'n'.repeat(300)}-${i}`,
      'v'.repeat(3000),
    ]);
    const message = buildForwardedMessage(
      1,
      `http://localhost/${'p'.repeat(600)}`,
      answer(Buffer.alloc(5000, 'a'), { headers }),
    );
    expect(message.target.length).toBe(512);
    expect(message.headers.length).toBe(64);
    expect(message.headers.every(([name, value]) => name.length <= 256 && value.length <= 2048)).toBe(true);
    expect(message.body).toBe('a'.repeat(4096));
    expect(message.bodyTruncated).toBe(true);
    expect(buildForwardedMessage(1, 't', { ok: false, error: 'e'.repeat(900), ms: 0 }).error?.length).toBe(500);
  });

  it('reports a status outside 100-599 as an error, since the protocol has no room for it', () => {
    const message = buildForwardedMessage(1, 't', answer(Buffer.alloc(0), { status: 999 }));
    expect(message.status).toBeUndefined();
    expect(message.error).toBe('the target answered with status 999');
  });
});

describe('encodeBody', () => {
  it('keeps UTF-8 as text, and a character split by the 4 KiB cut is left off rather than turning it into base64', () => {
    expect(encodeBody(Buffer.from('héllo'), false)).toEqual({ body: 'héllo', bodyEncoding: 'utf8' });
    const text = Buffer.from(`${'a'.repeat(4095)}é and more`);
    expect(encodeBody(text, false)).toEqual({ body: 'a'.repeat(4095), bodyEncoding: 'utf8' });
    const emoji = Buffer.from(`${'a'.repeat(4094)}😀`);
    expect(encodeBody(emoji, true)).toEqual({ body: 'a'.repeat(4094), bodyEncoding: 'utf8' });
  });

  it('sends bytes that are not UTF-8 as base64', () => {
    expect(encodeBody(Buffer.from([0xff, 0x00, 0xfe]), false)).toEqual({
      body: Buffer.from([0xff, 0x00, 0xfe]).toString('base64'),
      bodyEncoding: 'base64',
    });
  });
});
