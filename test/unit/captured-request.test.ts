import { describe, expect, it } from 'vitest';
import { createUtcTimeFormatter } from '../../src/capture/utc-time.js';
import { nestingDepth, parseParams, toRequestDraft as capture, type RawCapture } from '../../src/capture/captured-request.js';

const formatTime = createUtcTimeFormatter();
const toCapturedRequest = (raw: RawCapture) => capture(raw, { maxJsonDepth: 64, formatTime });

const base: RawCapture = {
  method: 'POST',
  url: '/api/webhook-tester/abc/x?a=1',
  subPath: '/x',
  rawHeaders: ['Content-Type', 'application/json', 'X-A', '1', 'x-a', '2'],
  body: Buffer.from('{"a":1}'),
  size: 7,
  truncated: false,
  remoteAddress: '127.0.0.1',
  receivedAtMs: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
};

describe('toRequestDraft', () => {
  it('turns raw headers into ordered pairs and finds the content type', () => {
    const request = toCapturedRequest(base);
    expect(request.headers).toEqual([
      ['Content-Type', 'application/json'],
      ['X-A', '1'],
      ['x-a', '2'],
    ]);
    expect(request.contentType).toBe('application/json');
    expect(request.receivedAt).toBe('2026-01-02T03:04:05.678Z');
    expect(request.isJson).toBe(true);
  });

  it.each([
    ['123', true],
    ['"s"', true],
    ['null', true],
    ['  [1, 2]  ', true],
    ['nope', false],
    ['', false],
    ['{"a":', false],
  ])('judges %j as JSON: %s', (text, expected) => {
    expect(toCapturedRequest({ ...base, body: Buffer.from(text), size: text.length }).isJson).toBe(expected);
  });

  it('never flags a truncated body as JSON', () => {
    expect(toCapturedRequest({ ...base, truncated: true, size: 100 }).isJson).toBe(false);
  });

  it('drops a split trailing character only when judging a truncated body', () => {
    const cut = Buffer.from('ab€', 'utf8').subarray(0, 4); // 'ab' + 2 of the 3 bytes of '€'
    expect(toCapturedRequest({ ...base, body: cut, truncated: true, size: 5 })).toMatchObject({ body: 'ab', bodyEncoding: 'utf8' });
    expect(toCapturedRequest({ ...base, body: cut, truncated: false, size: 4 }).bodyEncoding).toBe('base64');
  });

  it('parses repeated names into lists in a null-prototype map', () => {
    const params = parseParams('a=1&constructor=2&a=3&a=4');
    expect(params.a).toEqual(['1', '3', '4']);
    expect(params.constructor).toBe('2');
    expect(Object.getPrototypeOf(params)).toBeNull();
  });
});

describe('nestingDepth', () => {
  it('counts brackets outside strings only', () => {
    expect(nestingDepth('{"a":[1,{"b":2}]}')).toBe(3);
    expect(nestingDepth('{"a":"[[[[\\"[["}')).toBe(1);
    expect(nestingDepth('1')).toBe(0);
    // Escaped quotes and backslash runs inside strings.
    expect(nestingDepth('["a\\\\", [["\\\\\\"]"]]]')).toBe(3);
    expect(nestingDepth('{"k":"\\"[[[", "j":[]}')).toBe(2);
    expect(nestingDepth('["unterminated [[[')).toBe(1);
  });

  it('stops flagging JSON past the depth limit', () => {
    const deep = '['.repeat(65) + ']'.repeat(65);
    expect(capture({ ...base, body: Buffer.from(deep), size: deep.length }, { maxJsonDepth: 64, formatTime }).isJson).toBe(false);
    expect(capture({ ...base, body: Buffer.from(deep), size: deep.length }, { maxJsonDepth: 65, formatTime }).isJson).toBe(true);
  });
});
