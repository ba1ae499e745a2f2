import { describe, expect, it } from 'vitest';
import { diffPairs, diffRequests, MAX_CHANGES } from '../../src/shared/diff-requests.js';
import { parseJsonLossless } from '../../src/shared/lossless-json.js';
import { capturedRequest } from '../helpers/captured.js';

describe('diffRequests', () => {
  it('finds exactly one changed JSON field and one changed header between two GitHub deliveries', () => {
    const headers: Array<[string, string]> = [
      ['Content-Type', 'application/json'],
      ['X-GitHub-Event', 'push'],
      ['X-GitHub-Delivery', 'aaa'],
    ];
    const a = capturedRequest({
      headers,
      body: '{"ref":"refs/heads/main","after":"1111","repository":{"id":1,"name":"x"}}',
    });
    const b = capturedRequest({
      headers: [headers[0]!, headers[1]!, ['X-GitHub-Delivery', 'bbb']],
      body: '{"repository":{"name":"x","id":1},"ref":"refs/heads/main","after":"2222"}',
    });
    const diff = diffRequests(a, b);
    expect(diff.headers.filter((line) => line.kind !== 'same')).toEqual([
      { kind: 'changed', name: 'X-GitHub-Delivery', before: 'aaa', after: 'bbb' },
    ]);
    // Moved keys are no change; one changed value is one line.
    expect(diff.body).toEqual({
      kind: 'json',
      capped: false,
      changes: [{ kind: 'changed', path: '$.after', before: '"1111"', after: '"2222"' }],
    });
    expect(diff.same).toBe(false);
  });

  it('marks headers sent in another order as moved: the order is part of what was sent', () => {
    const before = capturedRequest({
      headers: [
        ['A', '1'],
        ['B', '2'],
        ['C', '3'],
      ],
    });
    const after = capturedRequest({
      headers: [
        ['B', '2'],
        ['A', '1'],
        ['C', '3'],
      ],
    });
    const diff = diffRequests(before, after);
    expect(diff.same).toBe(false);
    // One of A and B moved (either reading is as short); C kept its place.
    expect(diff.headers.map((line) => line.name)).toEqual(['B', 'A', 'C']);
    expect(diff.headers.filter((line) => line.kind === 'moved')).toHaveLength(1);
    expect(diff.headers[2]?.kind).toBe('same');
    expect(
      diffPairs(
        [
          ['x', '1'],
          ['y', '2'],
        ],
        [
          ['x', '1'],
          ['y', '2'],
        ],
      ).every((line) => line.kind === 'same'),
    ).toBe(true);
  });

  it('says two identical requests are the same', () => {
    expect(diffRequests(capturedRequest(), capturedRequest({ seq: 2 })).same).toBe(true);
  });

  it('compares arrays by index and reports added and removed keys with quoted paths', () => {
    const a = capturedRequest({ body: '{"list":[1,2,3],"gone":true,"odd key":1}' });
    const b = capturedRequest({ body: '{"list":[1,5],"new":{"x":null},"odd key":2}' });
    const diff = diffRequests(a, b);
    expect(diff.body.kind === 'json' && diff.body.changes).toEqual([
      { kind: 'changed', path: '$.list[1]', before: '2', after: '5' },
      { kind: 'removed', path: '$.list[2]', before: '3' },
      { kind: 'added', path: '$.new', after: '{"x":null}' },
      { kind: 'changed', path: '$["odd key"]', before: '1', after: '2' },
      { kind: 'removed', path: '$.gone', before: 'true' },
    ]);
  });

  it('tells two 64-bit integers apart that round to the same double', () => {
    const diff = diffRequests(
      capturedRequest({ body: '{"id":18446744073709551615}' }),
      capturedRequest({ body: '{"id":18446744073709551614}' }),
    );
    expect(diff.body.kind === 'json' && diff.body.changes).toEqual([
      { kind: 'changed', path: '$.id', before: '18446744073709551615', after: '18446744073709551614' },
    ]);
    expect(diffRequests(capturedRequest({ body: '{"n":1.0}' }), capturedRequest({ body: '{"n":1}' })).body.kind).toBe(
      'json',
    );
  });

  it('diffs text bodies by line and binary bodies by first differing byte', () => {
    const text = diffRequests(
      capturedRequest({ isJson: false, body: 'a\nb\nc' }),
      capturedRequest({ isJson: false, body: 'a\nB\nc' }),
    );
    expect(text.body).toEqual({
      kind: 'text',
      capped: false,
      lines: [
        { kind: 'same', text: 'a' },
        { kind: 'removed', text: 'b' },
        { kind: 'added', text: 'B' },
        { kind: 'same', text: 'c' },
      ],
    });
    const bytes = diffRequests(
      capturedRequest({ isJson: false, bodyEncoding: 'base64', body: Buffer.from([0xff, 1, 2]).toString('base64') }),
      capturedRequest({ isJson: false, bodyEncoding: 'base64', body: Buffer.from([0xff, 1, 3, 4]).toString('base64') }),
    );
    expect(bytes.body).toEqual({ kind: 'bytes', beforeBytes: 3, afterBytes: 4, firstDifference: 2 });
  });

  it('diffs two url-encoded forms field by field, decoded', () => {
    const form = (body: string, fields: Record<string, string | string[]>) =>
      capturedRequest({ isJson: false, contentType: 'application/x-www-form-urlencoded', body, form: fields });
    const diff = diffRequests(
      form('a=1&b=x%40y', { a: '1', b: 'x@y' }),
      form('a=2&b=x%40y&c=3', { a: '2', b: 'x@y', c: '3' }),
    );
    expect(diff.body).toEqual({
      kind: 'form',
      fields: [
        { kind: 'changed', name: 'a', before: '1', after: '2' },
        { kind: 'same', name: 'b', before: 'x@y', after: 'x@y' },
        { kind: 'added', name: 'c', after: '3' },
      ],
    });
  });

  it('keeps header order and duplicates, marking added, removed and changed occurrences', () => {
    const lines = diffPairs(
      [
        ['A', '1'],
        ['Set', 'x'],
        ['Set', 'y'],
        ['Old', 'o'],
      ],
      [
        ['a', '1'],
        ['Set', 'x'],
        ['Set', 'z'],
        ['Set', 'w'],
        ['New', 'n'],
      ],
    );
    expect(lines).toEqual([
      { kind: 'same', name: 'a', before: '1', after: '1' },
      { kind: 'same', name: 'Set', before: 'x', after: 'x' },
      { kind: 'changed', name: 'Set', before: 'y', after: 'z' },
      { kind: 'added', name: 'Set', after: 'w' },
      { kind: 'added', name: 'New', after: 'n' },
      { kind: 'removed', name: 'Old', before: 'o' },
    ]);
  });

  it('caps the changes listed for bodies that differ everywhere, and bounds a huge line diff', () => {
    const many = (value: number) => JSON.stringify(Array.from({ length: 5000 }, () => value));
    const diff = diffRequests(capturedRequest({ body: many(1) }), capturedRequest({ body: many(2) }));
    expect(diff.body.kind === 'json' && diff.body.changes.length).toBe(MAX_CHANGES);
    expect(diff.body.kind === 'json' && diff.body.capped).toBe(true);
    const lines = (prefix: string) => Array.from({ length: 3000 }, (_, i) => `${prefix}${i}`).join('\n');
    const started = performance.now();
    const text = diffRequests(
      capturedRequest({ isJson: false, body: lines('a') }),
      capturedRequest({ isJson: false, body: lines('b') }),
    );
    expect(text.body.kind === 'text' && text.body.capped).toBe(true);
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it('diffs a body nested past the parser depth as text, without overflowing the stack', () => {
    const deep = (leaf: string) => `${'['.repeat(100_000)}${leaf}${']'.repeat(100_000)}`;
    const diff = diffRequests(capturedRequest({ body: deep('1') }), capturedRequest({ body: deep('2') }));
    expect(diff.body.kind).toBe('text');
  });
});

describe('parseJsonLossless', () => {
  it('keeps number text, key order, duplicates and __proto__', () => {
    expect(parseJsonLossless('{"__proto__":1,"a":2,"a":12345678901234567890}')).toEqual({
      kind: 'object',
      entries: [
        ['__proto__', { kind: 'number', text: '1', value: 1 }],
        ['a', { kind: 'number', text: '2', value: 2 }],
        ['a', { kind: 'number', text: '12345678901234567890', value: Number('12345678901234567890') }],
      ],
    });
  });

  it.each(['', '{', '{"a":}', '[1,]', '"\\x"', '01', '{"a":1} x', 'nul', '"unterminated'])(
    'refuses %j with a position',
    (text) => {
      expect(() => parseJsonLossless(text)).toThrow(/at character \d+/);
    },
  );

  it('reads strings with escaped quotes and backslashes', () => {
    expect(parseJsonLossless('["a\\"b\\\\", "\\u00e9"]')).toEqual({
      kind: 'array',
      items: [
        { kind: 'string', value: 'a"b\\' },
        { kind: 'string', value: 'é' },
      ],
    });
  });
});
