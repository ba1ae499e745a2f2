import { describe, expect, it } from 'vitest';
import { hasDotSegment, parseTarget, PathRefusal, prepareForward, targetPath } from '../../src/cli/forward-request.js';
import { capturedRequest } from '../helpers/captured.js';

const base = capturedRequest({
  url: '/api/webhook-tester/abc/github/push?a=1&a=2&b=%20x',
  subPath: '/github/push',
  query: { a: ['1', '2'], b: ' x' },
  headers: [
    ['X-First', '1'],
    ['Host', 'hooks.example.com'],
    ['X-Dup', 'a'],
    ['x-dup', 'b'],
    ['Content-Type', 'application/json'],
    ['Content-Length', '9'],
  ],
});
const target = parseTarget('http://localhost:3000/hook');
/** What every forward ends with: the captured sender's address (the helper's is loopback). */
const sender = ['X-Forwarded-For', '127.0.0.1'];

describe('parseTarget', () => {
  it('splits the URL for node:http and keeps the Host value', () => {
    expect(target).toEqual({
      protocol: 'http:',
      hostname: 'localhost',
      port: 3000,
      host: 'localhost:3000',
      basePath: '/hook',
      baseQuery: '',
    });
    expect(parseTarget('https://[::1]/x?token=1')).toEqual({
      protocol: 'https:',
      hostname: '::1',
      port: 443,
      host: '[::1]',
      basePath: '/x',
      baseQuery: 'token=1',
    });
  });

  it.each(['localhost:3000', 'ftp://host/', 'http://host/#frag', 'http://user:pw@host/'])('refuses %s', (text) => {
    expect(() => parseTarget(text)).toThrow(/--to/);
  });
});

describe('targetPath', () => {
  it.each([
    ['/hook', '/github', '/x', '/hook/github'],
    ['/hook/', '/github', '/x', '/hook/github'],
    ['/', '/github', '/x', '/github'],
    ['/', '', '/x', '/'],
    ['/hook', '', '/x', '/hook'],
    ['/hook/', '', '/x', '/hook/'],
    ['/hook', '', '/x?', '/hook?'],
    ['/hook', '/a', '/x/a?q=%zz&q', '/hook/a?q=%zz&q'],
  ])('base %s + sub-path %s (url %s) -> %s', (basePath, subPath, url, expected) => {
    expect(targetPath({ url, subPath }, { basePath, baseQuery: '' })).toBe(expected);
  });

  it("puts --to's own query first", () => {
    expect(targetPath({ url: '/x?a=1', subPath: '' }, { basePath: '/h', baseQuery: 'token=t' })).toBe('/h?token=t&a=1');
    expect(targetPath({ url: '/x', subPath: '' }, { basePath: '/h', baseQuery: 'token=t' })).toBe('/h?token=t');
  });

  it("refuses a sub-path that would leave --to's path", () => {
    const refused = () =>
      targetPath({ url: '/x/../admin/users?a=1', subPath: '/../admin/users' }, { basePath: '/hook', baseQuery: '' });
    expect(refused).toThrow(PathRefusal);
    expect(refused).toThrow("the path /../admin/users has a dot-segment and would leave --to's path");
  });
});

describe('hasDotSegment', () => {
  it.each([
    '/..',
    '/../admin/users',
    '/.',
    '/./x',
    '/a/../../admin',
    '/%2e%2e/admin/users',
    '/%2E%2E/admin/users',
    '/.%2e/admin',
    '/%2e./admin',
    '/%2e/admin',
    '/..\\admin',
    '/a\\..\\admin',
    '/..%2fadmin',
    '/%2e%2e%2Fadmin',
    '/a%2f..%2fadmin',
    '/a%5c..%5Cadmin',
    '/..;/admin',
    '/%2e%2e;x=1/admin',
    '/%252e%252e/admin',
    '/..%252fadmin',
  ])('refuses %s', (subPath) => {
    expect(hasDotSegment(subPath)).toBe(true);
  });

  it.each([
    '',
    '/',
    '/github/push',
    '/a.b/c..d',
    '/.well-known/x',
    '/...',
    '/..a',
    '/a..',
    '/%2e%2e%2e',
    '//x',
    '/a;b/c',
    '/%2e%2ex',
  ])('lets %s through', (subPath) => {
    expect(hasDotSegment(subPath)).toBe(false);
  });
});

describe('prepareForward', () => {
  it('keeps every pair in order and case, rewrites Host in place, and sends the same bytes', () => {
    const prepared = prepareForward(base, target);
    expect(prepared.method).toBe('POST');
    expect(prepared.path).toBe('/hook/github/push?a=1&a=2&b=%20x');
    expect(prepared.headers).toEqual([
      'X-First',
      '1',
      'Host',
      'localhost:3000',
      'X-Dup',
      'a',
      'x-dup',
      'b',
      'Content-Type',
      'application/json',
      'Content-Length',
      '9',
      ...sender,
    ]);
    expect(prepared.body.toString()).toBe('{"a":"b"}');
  });

  it('drops hop-by-hop headers and any named in Connection, but never Host or Content-Length', () => {
    const prepared = prepareForward(
      {
        ...base,
        headers: [
          ['Host', 'h'],
          ['Connection', 'keep-alive, X-Secret-Hop'],
          ['connection', 'host, content-length'],
          ['Keep-Alive', 'timeout=5'],
          ['Proxy-Connection', 'keep-alive'],
          ['TE', 'trailers'],
          ['Trailer', 'X-T'],
          ['Transfer-Encoding', 'chunked'],
          ['Upgrade', 'h2c'],
          ['x-secret-hop', 'gone'],
          ['X-Stay', 'here'],
        ],
      },
      target,
    );
    expect(prepared.headers).toEqual(['Host', 'localhost:3000', 'X-Stay', 'here', 'Content-Length', '9', ...sender]);
  });

  it('makes Content-Length exact: in place when present (once), appended when missing', () => {
    const truncated = prepareForward(
      {
        ...base,
        body: 'abc',
        size: 5000,
        storedSize: 3,
        truncated: true,
        headers: [
          ['Content-Length', '5000'],
          ['content-length', '5000'],
          ['X', 'y'],
        ],
      },
      target,
    );
    expect(truncated.headers).toEqual(['Host', 'localhost:3000', 'Content-Length', '3', 'X', 'y', ...sender]);
    const chunked = prepareForward(
      {
        ...base,
        body: 'hello',
        headers: [
          ['Host', 'h'],
          ['Transfer-Encoding', 'chunked'],
        ],
      },
      target,
    );
    expect(chunked.headers).toEqual(['Host', 'localhost:3000', 'Content-Length', '5', ...sender]);
  });

  it('adds Content-Length: 0 only where node:http would otherwise chunk an empty body', () => {
    const empty = { ...base, body: '', size: 0, storedSize: 0, headers: [['Host', 'h']] as Array<[string, string]> };
    expect(prepareForward({ ...empty, method: 'POST' }, target).headers).toEqual([
      'Host',
      'localhost:3000',
      'Content-Length',
      '0',
      ...sender,
    ]);
    expect(prepareForward({ ...empty, method: 'PATCH' }, target).headers).toContain('Content-Length');
    for (const method of ['GET', 'HEAD', 'DELETE', 'OPTIONS'])
      expect(prepareForward({ ...empty, method }, target).headers).toEqual(['Host', 'localhost:3000', ...sender]);
    // A body on a GET is framed like any other.
    expect(prepareForward({ ...empty, method: 'GET', body: 'q' }, target).headers).toEqual([
      'Host',
      'localhost:3000',
      'Content-Length',
      '1',
      ...sender,
    ]);
  });

  it('refuses a sub-path with a dot-segment instead of preparing it', () => {
    expect(() =>
      prepareForward(
        { ...base, url: '/api/webhook-tester/abc/%2e%2e/admin/users', subPath: '/%2e%2e/admin/users' },
        target,
      ),
    ).toThrow(PathRefusal);
  });

  it("drops the sender's forwarding headers and sets one X-Forwarded-For: the captured sender address", () => {
    const prepared = prepareForward(
      {
        ...base,
        remoteAddress: '203.0.113.7',
        headers: [
          ['Host', 'h'],
          ['X-Forwarded-For', '127.0.0.1'],
          ['x-forwarded-for', '10.0.0.1'],
          ['X-Forwarded-Host', 'localhost'],
          ['X-Forwarded-Proto', 'https'],
          ['X-Forwarded-Port', '443'],
          ['X-Forwarded-Prefix', '/admin'],
          ['X-Real-IP', '127.0.0.1'],
          ['Forwarded', 'for=127.0.0.1;proto=https'],
          ['X-Client-IP', '127.0.0.1'],
          ['True-Client-IP', '127.0.0.1'],
          ['CF-Connecting-IP', '127.0.0.1'],
          ['Fastly-Client-IP', '127.0.0.1'],
          ['X-Cluster-Client-IP', '127.0.0.1'],
          ['Client-IP', '127.0.0.1'],
          ['X-Original-URL', '/admin/users'],
          ['X-Rewrite-URL', '/admin/users'],
          ['X-Stay', 'here'],
        ],
      },
      target,
    );
    expect(prepared.headers).toEqual([
      'Host',
      'localhost:3000',
      'X-Stay',
      'here',
      'Content-Length',
      '9',
      'X-Forwarded-For',
      '203.0.113.7',
    ]);
    expect(prepareForward({ ...base, remoteAddress: '2001:db8::1', headers: [] }, target).headers).toEqual([
      'Host',
      'localhost:3000',
      'Content-Length',
      '9',
      'X-Forwarded-For',
      '2001:db8::1',
    ]);
  });

  it('sets no X-Forwarded-For when the captured address is not an IP address', () => {
    for (const remoteAddress of ['', 'unknown', '127.0.0.1\r\nX-Admin: 1']) {
      const prepared = prepareForward({ ...base, remoteAddress, headers: [['X-Forwarded-For', '127.0.0.1']] }, target);
      expect(prepared.headers).toEqual(['Host', 'localhost:3000', 'Content-Length', '9']);
    }
  });

  it('decodes a base64 body to its bytes', () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const prepared = prepareForward(
      { ...base, body: bytes.toString('base64'), bodyEncoding: 'base64', headers: [] },
      target,
    );
    expect(prepared.body.equals(bytes)).toBe(true);
    expect(prepared.headers).toEqual(['Host', 'localhost:3000', 'Content-Length', '256', ...sender]);
  });
});
