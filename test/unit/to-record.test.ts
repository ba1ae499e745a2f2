import { describe, expect, it } from 'vitest';
import { createUtcTimeFormatter } from '../../src/capture/utc-time.js';
import { toRecordBytes, toRequestDraft as capture, type RawCapture } from '../../src/capture/to-record.js';
import { escapingIsCheap } from '../../src/store/json-body.js';
import { isJsonBytes } from '../../src/capture/json-syntax.js';
import { recordBuffer, recordJsonOf, recordLength } from '../../src/store/stored-request.js';
import { requestFrame } from '../../src/socket/frame.js';
import { decodeRequestFrame, splitRecord } from '../../src/shared/request-frame.js';
import { bodyBytesOf } from '../../src/shared/body-text.js';
import { parseParams, subPathOf } from '../../src/shared/request-target.js';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
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
};
const ANSWER = '{"status":200,"delayMs":0,"by":"default"}';
/** The v1 JSON record of what toRecordBytes encodes within `maxBytes`, numbered 1. */
const v1Record = (raw: RawCapture, maxBytes: number, options = { maxJsonDepth: 64, formatTime }) =>
  recordJsonOf({ seq: 1, answer: ANSWER, record: toRecordBytes(raw, options, maxBytes) });

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
    expect(toCapturedRequest({ ...base, body: cut, truncated: true, size: 5 })).toMatchObject({
      body: 'ab',
      bodyEncoding: 'utf8',
    });
    expect(toCapturedRequest({ ...base, body: cut, truncated: false, size: 4 }).bodyEncoding).toBe('base64');
  });

  it('parses repeated names into lists in a null-prototype map', () => {
    const params = parseParams('a=1&constructor=2&a=3&a=4');
    expect(params.a).toEqual(['1', '3', '4']);
    expect(params.constructor).toBe('2');
    expect(Object.getPrototypeOf(params)).toBeNull();
  });
});

describe('isJsonBytes', () => {
  /** What JSON.parse says, with containers nested at most `maxDepth` deep. */
  const reference = (bytes: Buffer, maxDepth: number): boolean => {
    let value: unknown;
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch {
      return false;
    }
    const depth = (v: unknown): number =>
      v !== null && typeof v === 'object'
        ? 1 + Math.max(0, ...Object.values(v as Record<string, unknown>).map(depth))
        : 0;
    return depth(value) <= maxDepth;
  };
  const seeds = [
    '{"a":[1,{"b":2}]}',
    ' [ 1 , -0.5e+3 , true , false , null , "x\\u00e9\\n\\"q\\"" ] ',
    '"s"',
    '123',
    '-0',
    '0.0e-0',
    '{}',
    '[]',
    '[[[[]]]]',
    '{"k":"\\"[[[", "j":[]}',
    '{"é":"ü","emoji":"\ud83d\ude00"}',
    '{"a" : 1 , "b" : { "c" : [ ] } }',
  ];
  const alphabet = '{}[]",:-+.eE0123456789 \n\tabcfnrstu\\/';

  it.each([
    ['', false],
    [' ', false],
    ['01', false],
    ['1.', false],
    ['.5', false],
    ['+1', false],
    ['1e', false],
    ['[1,]', false],
    ['{"a":1,}', false],
    ['{"a"}', false],
    ['{a:1}', false],
    ['"\\x"', false],
    ['"\\u12G4"', false],
    ['"tab\there"', false],
    ['[1] 2', false],
    ['tru', false],
    ['nulls', false],
    ['\ufeff{}', false],
    ['"\\ud800"', true],
  ])('judges %j as JSON.parse does: %s', (text, expected) => {
    expect(isJsonBytes(Buffer.from(text), 64)).toBe(expected);
    expect(reference(Buffer.from(text), 64)).toBe(expected);
  });

  it('agrees with JSON.parse on the seeds and 20,000 mutations of them, depth limits included', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    for (const text of seeds) {
      for (let round = 0; round < 20_000 / seeds.length; round++) {
        const chars = [...text];
        for (let edits = 1 + random(3); edits > 0; edits--) {
          const at = random(chars.length + 1);
          const char = alphabet[random(alphabet.length)] as string;
          const op = random(3);
          if (op === 0) chars.splice(at, 1);
          else if (op === 1) chars.splice(at, 0, char);
          else chars[at] = char;
        }
        const bytes = Buffer.from(chars.join(''));
        const depth = random(5);
        expect(isJsonBytes(bytes, depth), `${chars.join('')} (depth ${depth})`).toBe(reference(bytes, depth));
      }
    }
  });

  it('stops flagging JSON past the depth limit, and judges a deep or long body without recursion', () => {
    const deep = '['.repeat(65) + ']'.repeat(65);
    expect(
      capture({ ...base, body: Buffer.from(deep), size: deep.length }, { maxJsonDepth: 64, formatTime }).isJson,
    ).toBe(false);
    expect(
      capture({ ...base, body: Buffer.from(deep), size: deep.length }, { maxJsonDepth: 65, formatTime }).isJson,
    ).toBe(true);
    // Past 64 KiB the capture judges by isJsonBytes, below it by JSON.parse: the same answers.
    for (const size of [1000, 100_000]) {
      const array = Buffer.from(`[${'"a\\"b",'.repeat(size / 8)}1]`);
      const nested = Buffer.from(`${'['.repeat(65)}${'1,'.repeat(size / 2)}1${']'.repeat(65)}`);
      const judged = (body: Buffer) => toCapturedRequest({ ...base, body, size: body.length }).isJson;
      expect([judged(array), judged(nested), judged(array.subarray(1))], String(size)).toEqual([true, false, false]);
    }
    expect(isJsonBytes(Buffer.from('['.repeat(1_000_000)), 2_000_000)).toBe(false);
    expect(isJsonBytes(Buffer.from(`[${'1,'.repeat(500_000)}1]`), 64)).toBe(true);
  });
});

describe('bounded encodings', () => {
  const MIB = 1024 * 1024;
  const recordBytes = (raw: RawCapture) =>
    Buffer.byteLength(v1Record(raw, maxRecordBytes({ maxBodyBytes: MIB, maxHeaderBytes: 16 * 1024 })));

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
    const small = toCapturedRequest({
      ...base,
      rawHeaders: ['Content-Type', 'application/x-www-form-urlencoded'],
      body: Buffer.from('a=1&a=2'),
    });
    expect(small.form).toEqual({ a: ['1', '2'] });
    const big = Buffer.from(`a=${'x'.repeat(FORM_PARSE_MAX_BYTES)}`);
    const large = toCapturedRequest({
      ...base,
      rawHeaders: ['Content-Type', 'application/x-www-form-urlencoded'],
      body: big,
      size: big.length,
    });
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
    const full = v1Record(base, 1_000_000);
    const lean = JSON.parse(v1Record(base, full.length - 1)) as { omitted: string[]; query: unknown };
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

  it('reads it after a percent-encoded prefix or id, which the router decoded to find the endpoint', () => {
    expect(subPathOf('/api/webhook-tester/%61bc/x/%79?q=1', '/api/webhook-tester/abc')).toBe('/x/%79');
    expect(subPathOf('/api/%77ebhook-tester/abc/x', '/api/webhook-tester/abc')).toBe('/x');
    expect(subPathOf('/api/webhook-tester/%61bc', '/api/webhook-tester/abc')).toBe('');
    expect(subPathOf('http://h/api/webhook-tester/%61bc/x?q', '/api/webhook-tester/abc')).toBe('/x');
  });
});

describe('toRecordBytes', () => {
  const KIB = 1024;
  const options = { maxJsonDepth: 64, formatTime };
  const text = (value: string): Pick<RawCapture, 'body' | 'size'> => ({
    body: Buffer.from(value),
    size: Buffer.byteLength(value),
  });
  const cases: Array<[string, RawCapture]> = [
    ['the base request', base],
    ['an empty body', { ...base, ...text('') }],
    [
      'a query with repeats, escapes and __proto__',
      { ...base, url: '/api/webhook-tester/abc?a=1&a=%22x%22&__proto__=p&b&c=%E2%82%AC' },
    ],
    ['an absolute-form target', { ...base, url: 'http://h.example/api/webhook-tester/abc/s?x="y"' }],
    [
      'headers with quotes, backslashes, tabs and Latin-1',
      {
        ...base,
        rawHeaders: ['X-Q', 'a "b" \\c\td', 'X-L', 'caf\u00e9 \u00ff', 'content-type', 'text/plain; charset="utf-8"'],
      },
    ],
    ['no content type', { ...base, rawHeaders: ['Host', 'x'] }],
    [
      'a JSON body with escapes and Unicode',
      { ...base, ...text('{"a":"line\\nbreak \\"q\\" \u2028 \ud83d\ude00 é","b":[1,2,{"c":null}]}') },
    ],
    ['a text body with control characters', { ...base, ...text('a\tb\nc\u0001d\u001f"e\\') }],
    ['control bytes (base64)', { ...base, body: Buffer.alloc(1000, 0x01), size: 1000 }],
    ['quotes (base64)', { ...base, body: Buffer.alloc(300, 0x22), size: 300 }],
    ['not UTF-8', { ...base, body: Buffer.from([0xff, 0xfe, 0x41, 0x80]), size: 4 }],
    ['a cut through a character', { ...base, body: Buffer.from('ab€').subarray(0, 4), size: 5, truncated: true }],
    ['a truncated JSON body', { ...base, ...text('{"a":1'), size: 100, truncated: true }],
    [
      'a form',
      { ...base, rawHeaders: ['Content-Type', 'application/x-www-form-urlencoded'], ...text('a=1&a=2&b=%22&c') },
    ],
    [
      'a form past the parse bound',
      {
        ...base,
        rawHeaders: ['Content-Type', 'application/x-www-form-urlencoded'],
        ...text(`a=${'x'.repeat(FORM_PARSE_MAX_BYTES)}`),
      },
    ],
    [
      'multipart parts',
      {
        ...base,
        rawHeaders: ['Content-Type', 'multipart/form-data; boundary=b'],
        parts: [
          {
            name: 'f"1',
            filename: 'a\\b.txt',
            contentType: 'text/plain',
            size: 3,
            offset: 10,
            text: null,
            truncated: false,
          },
          { name: 'g', filename: null, contentType: null, size: 1, offset: null, text: 'x', truncated: true },
        ],
      },
    ],
    ['a large cheap body (judged before escaping)', { ...base, ...text(`{"k":"${'v"'.repeat(40 * KIB)}"}`) }],
    ['a large body of quotes (base64)', { ...base, body: Buffer.alloc(100 * KIB, 0x22), size: 100 * KIB }],
    [
      'a body just under the escape-first bound that escaping makes too large',
      { ...base, body: Buffer.alloc(64 * KIB, 0x0a), size: 64 * KIB },
    ],
    [
      "a kept endpoint's request, its secrets redacted",
      {
        ...base,
        rawHeaders: ['Authorization', 'Bearer s3cret', 'X-Internal', 'a', 'X-Plain', 'b'],
        redact: new Set(['x-internal']),
      },
    ],
    [
      "a kept endpoint's absolute-form target, its user-info and secret query values redacted",
      {
        ...base,
        url: 'http://u:p@h.example/api/webhook-tester/abc/s?token=t&a=1&api_key=k',
        redact: new Set<string>(),
      },
    ],
  ];

  it.each(cases)(
    'encodes %s once: v1 JSON and the v2 frame both give the draft, the body byte for byte',
    (_name, raw) => {
      const draft = capture(raw, options);
      const record = toRecordBytes(raw, options, 1_000_000_000);
      const v1 = JSON.parse(recordJsonOf({ seq: 7, answer: ANSWER, record })) as CapturedRequest;
      expect(v1).toEqual({ seq: 7, ...draft, answer: JSON.parse(ANSWER) as unknown });
      const frame = requestFrame(7, ANSWER, record);
      const payload = Buffer.concat(frame.chunks).subarray(frame.length - (recordLength(record) + 13 + ANSWER.length));
      const { request: v2 } = decodeRequestFrame(payload);
      const { body: _v1Body, bodyEncoding: _v1Encoding, ...v1Fields } = v1;
      const { body: _v2Body, bodyEncoding: _v2Encoding, ...v2Fields } = v2;
      expect(v2Fields).toEqual(v1Fields);
      expect(Buffer.from(bodyBytesOf(v2)).equals(Buffer.from(bodyBytesOf(v1)))).toBe(true);
      expect(Buffer.from(splitRecord(recordBuffer(record)).body).equals(Buffer.from(bodyBytesOf(draft)))).toBe(true);
    },
  );

  it('redacts before the record is written: names and order stay, values are [redacted], the names listed', () => {
    const record = toRecordBytes(
      { ...base, rawHeaders: ['Authorization', 'Bearer s3cret', 'X-Plain', 'b'], redact: new Set() },
      options,
      1_000_000,
    );
    expect(recordBuffer(record).includes('s3cret')).toBe(false);
    const { header } = splitRecord(recordBuffer(record));
    expect(header.headers).toEqual([
      ['Authorization', '[redacted]'],
      ['X-Plain', 'b'],
    ]);
    expect(header.redacted).toEqual(['Authorization']);
  });

  it('leaves out the derived views past the bound, and only then', () => {
    for (const [name, raw] of cases) {
      const full = v1Record(raw, 1_000_000_000, options);
      expect((JSON.parse(full) as CapturedRequest).omitted, name).not.toContain('query');
      const lean = JSON.parse(v1Record(raw, Buffer.byteLength(full) - 1, options)) as CapturedRequest;
      expect(lean.omitted, name).toEqual(['query', 'form', 'parts']);
      expect(
        Buffer.from(bodyBytesOf(lean)).equals(Buffer.from(bodyBytesOf(JSON.parse(full) as CapturedRequest))),
        name,
      ).toBe(true);
    }
  });
});
