import { describe, expect, it } from 'vitest';
import { createUtcTimeFormatter } from '../../src/capture/utc-time.js';
import { escapingIsCheap, nestingDepth, parseParams, subPathOf, toDraftJson, toRequestDraft as capture, type RawCapture } from '../../src/capture/captured-request.js';
import { FORM_PARSE_MAX_BYTES, maxRecordBytes } from '../../src/capture/record-bounds.js';

const formatTime = createUtcTimeFormatter();
const toCapturedRequest = (raw: RawCapture) => capture(raw, { maxJsonDepth: 64, formatTime });

const base: RawCapture = {
  method: 'POST',
  url: '/api/webhook-tester/abc/x?a=1',
  endpointPath: '/api/webhook-tester/abc',
  rawHeaders: ['Content-Type', 'application/json', 'X-A', '1', 'x-a', '2'],
  body: Buffer.from('{"a":1}'),
  size: 7,
  truncated: false,
  remoteAddress: '127.0.0.1',
  receivedAtMs: Date.UTC(2026, 0, 2, 3, 4, 5, 678),
  answer: { status: 200, delayMs: 0 },
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

describe('bounded encodings', () => {
  const MIB = 1024 * 1024;
  const recordBytes = (raw: RawCapture) => Buffer.byteLength(toDraftJson(toCapturedRequest(raw), maxRecordBytes({ maxBodyBytes: MIB, maxHeaderBytes: 16 * 1024 })));

  it('stores text as text when escaping adds little, and as base64 when it would add more than a third', () => {
    expect(toCapturedRequest({ ...base, body: Buffer.from('{"a":"b","c":[1,2,3]}') }).bodyEncoding).toBe('utf8');
    const control = Buffer.alloc(1000, 0x01);
    const stored = toCapturedRequest({ ...base, body: control, size: 1000 });
    expect(stored.bodyEncoding).toBe('base64');
    expect(Buffer.from(stored.body, 'base64').equals(control)).toBe(true);
    expect(escapingIsCheap(Buffer.from('a"b'))).toBe(true);
    expect(escapingIsCheap(Buffer.from('"'.repeat(300)))).toBe(false);
  });

  it('keeps every hostile 1 MiB body within 4/3 of its size plus the bounded extras', () => {
    const cases: Array<[string, Buffer, string]> = [
      ['ascii', Buffer.alloc(MIB, 0x61), 'text/plain'],
      ['control bytes', Buffer.alloc(MIB, 0x01), 'text/plain'],
      ['quotes', Buffer.alloc(MIB, 0x22), 'text/plain'],
      ['control bytes as a form', Buffer.alloc(MIB, 0x01), 'application/x-www-form-urlencoded'],
      ['a&a& form', Buffer.from('a&'.repeat(MIB / 2)), 'application/x-www-form-urlencoded'],
      ['binary', Buffer.from(Array.from({ length: MIB }, (_, i) => (i * 7919) % 256)), 'application/octet-stream'],
    ];
    for (const [name, body, type] of cases) {
      const bytes = recordBytes({ ...base, rawHeaders: ['Content-Type', type], body, size: body.length });
      expect(bytes, name).toBeLessThanOrEqual((4 / 3) * MIB + 8 * 1024);
    }
  });

  it('parses a form body only up to the bound, and says so past it', () => {
    const small = toCapturedRequest({ ...base, rawHeaders: ['Content-Type', 'application/x-www-form-urlencoded'], body: Buffer.from('a=1&a=2') });
    expect(small.form).toEqual({ a: ['1', '2'] });
    const big = Buffer.from(`a=${'x'.repeat(FORM_PARSE_MAX_BYTES)}`);
    const large = toCapturedRequest({ ...base, rawHeaders: ['Content-Type', 'application/x-www-form-urlencoded'], body: big, size: big.length });
    expect(large.form).toBeNull();
    expect(large.omitted).toEqual(['form']);
  });

  it('reports as storedSize exactly the bytes held in body when a cut splits a character', () => {
    const text = Buffer.from('aé'); // 0x61 0xc3 0xa9
    const cut = text.subarray(0, 2);
    const request = toCapturedRequest({ ...base, body: cut, size: 3, truncated: true });
    expect(request.bodyEncoding).toBe('utf8');
    expect(request.body).toBe('a');
    expect(request.storedSize).toBe(Buffer.byteLength(request.body));
  });

  it('drops the derived views when a record would pass the bound', () => {
    const draft = toCapturedRequest(base);
    const full = toDraftJson(draft, 1_000_000);
    const lean = JSON.parse(toDraftJson(draft, full.length - 1)) as { omitted: string[]; query: unknown };
    expect(lean.omitted).toEqual(['query', 'form', 'parts']);
    expect(lean.query).toEqual({});
  });
});

describe('subPathOf', () => {
  it('reads the sub-path of an origin-form and an absolute-form target', () => {
    expect(subPathOf('/api/webhook-tester/abc/x/y?q=1', '/api/webhook-tester/abc')).toBe('/x/y');
    expect(subPathOf('/api/webhook-tester/abc?q=1', '/api/webhook-tester/abc')).toBe('');
    expect(subPathOf('http://other.example/api/webhook-tester/abc/x?q', '/api/webhook-tester/abc')).toBe('/x');
    expect(subPathOf('http://other.example', '/api/webhook-tester/abc')).toBe('');
  });
});
