import { describe, expect, it } from 'vitest';
import { fittedForwarded } from '../../src/endpoints/endpoint-service.js';
import type { ForwardedMessage } from '../../src/shared/protocol.js';
import { MAX_FORWARDED_BYTES } from '../../src/store/store.js';

const report = (overrides: Partial<ForwardedMessage> = {}): ForwardedMessage => ({
  type: 'forwarded',
  seq: 1,
  target: 'http://localhost:3000/hook',
  status: 200,
  durationMs: 3,
  headers: [['Content-Type', 'text/plain']],
  body: 'ok',
  bodyEncoding: 'utf8',
  bodyTruncated: false,
  ...overrides,
});

describe('a forward result as kept', () => {
  it('is kept as sent when it fits', () => {
    expect(JSON.parse(fittedForwarded(report()))).toEqual(report());
  });

  it('the largest report the socket takes, all control characters (over 0.8 MB escaped), is cut to fit, as valid JSON', () => {
    const control = '\u0001';
    const huge = report({
      headers: Array.from({ length: 64 }, (_, i) => [`X-${i}`, control.repeat(2048)] as [string, string]),
      body: control.repeat(8192),
    });
    expect(JSON.stringify(huge).length).toBeGreaterThan(800_000);
    const shown = fittedForwarded(huge);
    expect(Buffer.byteLength(shown)).toBeLessThanOrEqual(MAX_FORWARDED_BYTES);
    const parsed = JSON.parse(shown) as ForwardedMessage;
    expect(parsed.bodyTruncated).toBe(true);
    expect(parsed.headers.length).toBeGreaterThan(0);
    expect(huge.headers.slice(0, parsed.headers.length)).toEqual(parsed.headers);
    expect(control.repeat(8192).startsWith(parsed.body)).toBe(true);
  });

  it('cuts a base64 body on a whole group of four', () => {
    const shown = JSON.parse(
      fittedForwarded(report({ body: 'QUJD'.repeat(8000), bodyEncoding: 'base64', headers: [] })),
    ) as ForwardedMessage;
    expect(shown.body.length % 4).toBe(0);
    expect(shown.body.length).toBeGreaterThan(0);
  });
});
