import { describe, expect, it } from 'vitest';
import { formErrors, ruleFormErrors } from '../../client/src/answer/answer-errors.js';
import { parseExact, type ExactValue } from '../../client/src/detail/exact-json.js';
import { headerColonError, headerLinesWithoutColon } from '../../client/src/answer/field-lines.js';
import { curlCopyNote, searchText } from '../../client/src/format.js';
import { fieldsFromRule } from '../../client/src/answer/rule-fields.js';
import { capturedRequest } from '../helpers/captured.js';

/** The parsed value back as plain data: numbers as `#<text>`, objects as arrays of members. */
function plain(value: ExactValue): unknown {
  switch (value.kind) {
    case 'number':
      return `#${value.text}`;
    case 'string':
    case 'boolean':
      return value.value;
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: value.size }, (_, index) => plain(value.child(index)[1]));
    case 'object':
      return {
        members: Array.from({ length: value.size }, (_, index) => [
          value.child(index)[0],
          plain(value.child(index)[1]),
        ]),
      };
  }
}

describe('the page: JSON numbers exactly as sent', () => {
  it('keeps 64-bit ids, trailing zeros, exponents and minus zero', () => {
    const parsed = parseExact('{"id":1234567890123456789,"price":19.90,"k":1e3,"z":-0,"n":[0.1e-2,-12,3.000]}');
    expect(plain(parsed)).toEqual({
      members: [
        ['id', '#1234567890123456789'],
        ['price', '#19.90'],
        ['k', '#1e3'],
        ['z', '#-0'],
        ['n', ['#0.1e-2', '#-12', '#3.000']],
      ],
    });
  });

  it('leaves strings that look like numbers or markers as strings, escapes and all', () => {
    expect(plain(parseExact('["12", "n1", "s", "", "a\\"b 1.0 \\\\", "\\u0041", true, false, null]'))).toEqual([
      '12',
      'n1',
      's',
      '',
      'a"b 1.0 \\',
      'A',
      true,
      false,
      null,
    ]);
    expect(plain(parseExact('12.50'))).toBe('#12.50');
    expect(plain(parseExact(' "x" '))).toBe('x');
  });

  it('keeps keys such as __proto__ as keys; a repeated key holds its last value, as JSON.parse', () => {
    const parsed = parseExact('{"__proto__":{"polluted":1},"a":1,"a":2}');
    expect(plain(parsed)).toEqual({
      members: [
        ['__proto__', { members: [['polluted', '#1']] }],
        ['a', '#2'],
      ],
    });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('throws on what JSON.parse refuses', () => {
    for (const bad of ['{', '01', '1.', '[1,]', '{"a" 1}', 'nul', '"\\x"', ''])
      expect(() => parseExact(bad), bad).toThrow(SyntaxError);
  });

  it('parses a deep and a large body without running out of stack', () => {
    const depth = 50_000;
    for (const leaf of ['1', '1.0']) {
      let deep = parseExact(`${'['.repeat(depth)}${leaf}${']'.repeat(depth)}`);
      let levels = 0;
      while (deep.kind === 'array') {
        deep = deep.child(0)[1];
        levels++;
      }
      expect(levels).toBe(depth);
      expect(plain(deep)).toBe(`#${leaf}`);
    }
    const many = parseExact(`[${Array.from({ length: 200_000 }, (_, i) => `${i}.0`).join(',')}]`);
    expect(many.kind === 'array' && many.size).toBe(200_000);
    expect(many.kind === 'array' && plain(many.child(199_999)[1])).toBe('#199999.0');
    const long = 'x'.repeat(1024 * 1024);
    expect(plain(parseExact(JSON.stringify({ long })))).toEqual({ members: [['long', long]] });
  });

  it('reads a body whose numbers cannot change with JSON.parse alone, and reads it the same', () => {
    const body = '{"a":[0,12,-3,1.5,100],"s":"e1 base64 0.10 in a string"}';
    expect(plain(parseExact(body))).toEqual({
      members: [
        ['a', ['#0', '#12', '#-3', '#1.5', '#100']],
        ['s', 'e1 base64 0.10 in a string'],
      ],
    });
    const zeros = JSON.stringify(Array.from({ length: 500 }, () => new Array<number>(500).fill(0)));
    const started = performance.now();
    const parsed = parseExact(zeros);
    expect(performance.now() - started).toBeLessThan(150);
    expect(parsed.kind === 'array' && parsed.size).toBe(500);
  });
});

describe('the page: a header line without a colon is marked', () => {
  it('names the lines with no colon that the server would take as a name with an empty value', () => {
    // `Also bad` is no header name: the server refuses it in its own words.
    expect(headerLinesWithoutColon('Retry-After: 5\nNoColonHere\n\nX-A:\n  \nAlso bad\n Trimmed ')).toEqual([2, 7]);
    expect(headerColonError('A: b\nX-Empty:')).toBeUndefined();
    expect(headerColonError('NoColonHere')).toMatch(/^Line 1 has no colon: write one Name: value per line/);
  });

  it('marks the default answer’s headers and a rule’s answer headers before asking the server', () => {
    expect(formErrors('200', '0', 'NoColonHere')).toEqual([
      { field: 'headers', message: expect.stringMatching(/^Line 1 has no colon/) },
    ]);
    expect(formErrors('200', '0', 'A: b')).toEqual([]);
    const fields = { ...fieldsFromRule({ answer: { status: 503 } }), answerHeaders: 'Retry-After: 5\nNoColonHere' };
    expect(ruleFormErrors(fields)).toEqual([
      { field: 'answerHeaders', message: expect.stringMatching(/^Line 2 has no colon/) },
    ]);
  });

  it('copes with a huge field', () => {
    expect(headerLinesWithoutColon('x\n'.repeat(100_000))).toHaveLength(100_000);
  });
});

describe('the page: the filter finds multipart fields beside a binary file', () => {
  it('searches the text of each field, and file names', () => {
    const request = capturedRequest({
      body: Buffer.from([0xff, 0xfe, 0x00, 0x01]).toString('base64'),
      bodyEncoding: 'base64',
      isJson: false,
      contentType: 'multipart/form-data; boundary=x',
      parts: [
        {
          name: 'comment',
          filename: null,
          contentType: null,
          size: 14,
          truncated: false,
          offset: 10,
          text: 'Invoice-Ref 42',
        },
        {
          name: 'upload',
          filename: 'photo.png',
          contentType: 'image/png',
          size: 4,
          truncated: false,
          offset: 40,
          text: null,
        },
      ],
    });
    const text = searchText(request);
    expect(text).toContain('invoice-ref 42');
    expect(text).toContain('photo.png');
  });
});

describe('the page: copying a cut body’s cURL says so', () => {
  it('says how much of the body the command sends', () => {
    expect(curlCopyNote({ truncated: true, size: 2 * 1024 * 1024, storedSize: 1024 * 1024 })).toBe(
      'the body was cut: it sends the first 1.0 MB of 2.0 MB the sender sent',
    );
    expect(curlCopyNote({ truncated: false, size: 10, storedSize: 10 })).toBeUndefined();
  });
});
