import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/command.js';
import { parseHeaderOptions, setHeaders } from '../../src/cli/extra-headers.js';
import { formatHttpMessage, HttpMessageError, parseHttpMessage } from '../../src/cli/http-message.js';

describe('the HTTP message replay --edit opens', () => {
  const request = {
    method: 'POST',
    target: '/github/push?x=1',
    headers: [
      ['Content-Type', 'application/json'],
      ['X-A', '1'],
      ['x-a', '2'],
    ] as Array<[string, string]>,
    body: Buffer.from('{"a":1}\n\nafter a blank line'),
  };

  it('reads back what it wrote: order, case, duplicates, and a body holding blank lines', () => {
    expect(parseHttpMessage(formatHttpMessage(request))).toEqual(request);
  });

  it('takes CRLF line ends and a request line without a version', () => {
    expect(parseHttpMessage(Buffer.from('PUT /x HTTP/1.1\r\nA: b\r\n\r\nbody'))).toEqual({
      method: 'PUT',
      target: '/x',
      headers: [['A', 'b']],
      body: Buffer.from('body'),
    });
    expect(parseHttpMessage(Buffer.from('GET /\n\n')).method).toBe('GET');
  });

  it('keeps binary body bytes as they are', () => {
    const body = Buffer.from([0, 255, 13, 10, 13, 10, 128]);
    expect(parseHttpMessage(formatHttpMessage({ ...request, body })).body).toEqual(body);
  });

  it.each([
    ['no blank line', 'POST / HTTP/1.1\nA: b', /no blank line after the headers/],
    ['an empty file', '', /no blank line/],
    ['a bad request line', 'POST\n\n', /line 1 should be/],
    ['a method with a space', 'PO ST / HTTP/1.1\n\n', /line 1 should be/],
    ['a bad method', 'P@ST / HTTP/1.1\n\n', /the method is not a valid HTTP method/],
    ['an absolute URL', 'POST http://evil/ HTTP/1.1\n\n', /the path should start with \//],
    ['a bad version', 'POST / HTTP/2\n\n', /the version should be HTTP\/1\.1/],
    ['a header without a colon', 'POST / HTTP/1.1\nnocolon\n\n', /line 2 should be "Name: value"/],
    ['a header name with a space', 'POST / HTTP/1.1\nBad Name: x\n\n', /line 2: the header name is not valid/],
    [
      'a control character in a value',
      'POST / HTTP/1.1\nA: b\u0001c\n\n',
      /line 2: the value of A has a control character/,
    ],
    ['too many headers', `POST / HTTP/1.1\n${'A: b\n'.repeat(201)}\n`, /more than 200 headers/],
  ])('refuses %s, naming the line', (_what, text, message) => {
    expect(() => parseHttpMessage(Buffer.from(text))).toThrow(HttpMessageError);
    expect(() => parseHttpMessage(Buffer.from(text))).toThrow(message);
  });
});

describe('--header options', () => {
  it('splits at the first =, and sets in place or adds', () => {
    const parsed = parseHeaderOptions(['X-A=1=2', 'content-type=text/plain']);
    expect(parsed).toEqual([
      ['X-A', '1=2'],
      ['content-type', 'text/plain'],
    ]);
    expect(
      setHeaders(
        [
          ['Content-Type', 'application/json'],
          ['X-B', '1'],
          ['CONTENT-TYPE', 'x'],
        ],
        parsed,
      ),
    ).toEqual([
      ['content-type', 'text/plain'],
      ['X-B', '1'],
      ['X-A', '1=2'],
    ]);
  });

  it.each([['=v'], ['noequals'], ['Bad Name=v'], ['X-A=line\nbreak']])('refuses %j', (text) => {
    expect(() => parseHeaderOptions([text])).toThrow(UsageError);
  });
});
