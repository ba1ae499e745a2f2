import { describe, expect, it } from 'vitest';
import { parseDuration, parseWaitFilters, requestMatches } from '../../src/cli/wait.js';
import { UsageError } from '../../src/cli/command.js';
import type { CapturedRequest } from '../../src/shared/schemas/captured-request.js';
import { compileGlob, globMatches, globProblem } from '../../src/shared/glob.js';

describe('globMatches', () => {
  it.each([
    // `/` alone is the bare receiver URL, with or without its trailing slash.
    ['/', '', true],
    ['/', '/', true],
    ['/', '/a', false],
    // Literal paths match exactly, case and all.
    ['/github/push', '/github/push', true],
    ['/github/push', '/github/Push', false],
    ['/github/push', '/github/push/', false],
    ['/github/push', '/github/pushed', false],
    // `*` stays within one segment, and may match nothing.
    ['/github/*', '/github/push', true],
    ['/github/*', '/github/', true],
    ['/github/*', '/github/push/x', false],
    ['/github/*', '/github', false],
    ['/*', '', false],
    ['/*', '/a', true],
    ['/*/push', '/github/push', true],
    ['/*/push', '/a/b/push', false],
    ['/git*', '/github', true],
    ['/*.json', '/data.json', true],
    ['/*.json', '/dataxjson', false],
    // `**` as a whole segment: zero or more segments.
    ['/github/**', '/github', true],
    ['/github/**', '/github/', true],
    ['/github/**', '/github/push', true],
    ['/github/**', '/github/a/b/c', true],
    ['/github/**', '/githubx', false],
    ['/github/**', '/gitlab/push', false],
    ['/**', '', true],
    ['/**', '/', true],
    ['/**', '/any/thing/at/all', true],
    ['/**/push', '/push', true],
    ['/**/push', '/a/b/push', true],
    ['/**/push', '/a/bpush', false],
    ['/a/**/b', '/a/b', true],
    ['/a/**/b', '/a/x/y/b', true],
    ['/a/**/b', '/ab', false],
    ['/a/**/b', '/a/x/y/c', false],
    // `**` inside a segment runs across segments.
    ['/a**', '/abc/d/e', true],
    ['/a**z', '/a/b/z', true],
    // A glob without its leading slash gets one.
    ['github/*', '/github/push', true],
    ['', '', true],
    // Regex characters are literal.
    ['/a.b', '/axb', false],
    ['/a.b', '/a.b', true],
    ['/(x)+', '/(x)+', true],
    ['/a[1]', '/a[1]', true],
    ['/a?b', '/axb', false],
    ['/a$', '/a$', true],
    // Percent-encoding is compared as sent.
    ['/a%20b', '/a%20b', true],
    ['/a b', '/a%20b', false],
  ])('%j against %j: %s', (glob, subPath, expected) => {
    expect(globMatches(glob, subPath)).toBe(expected);
  });

  it('compileGlob gives the same answers for many paths', () => {
    const test = compileGlob('/hooks/*/events/**');
    expect(['/hooks/a/events', '/hooks/a/events/1/2', '/hooks/b/events/x'].map(test)).toEqual([true, true, true]);
    expect(['/hooks/events', '/hooks/a/b/events', '/hooks/a/eventsx'].map(test)).toEqual([false, false, false]);
  });
});

function record(overrides: Partial<CapturedRequest> = {}): CapturedRequest {
  return {
    seq: 1,
    method: 'POST',
    url: '/github/push',
    subPath: '/github/push',
    query: {},
    headers: [
      ['Content-Type', 'application/json'],
      ['X-GitHub-Event', 'push'],
      ['X-Tag', 'one'],
      ['x-tag', 'two'],
    ],
    contentType: 'application/json',
    body: '{"action":"opened","count":3,"ok":true,"none":null,"price":1.50,"items":[{"id":"a1"},{"id":42}],"nested":{"deep":{"k":"v"}},"a.b":1}',
    bodyEncoding: 'utf8',
    isJson: true,
    form: null,
    parts: null,
    omitted: [],
    size: 10,
    storedSize: 10,
    truncated: false,
    remoteAddress: '127.0.0.1',
    receivedAt: '2026-01-01T00:00:00.000Z',
    answer: { status: 200, delayMs: 0, by: 'default' },
    ...overrides,
  };
}

describe('requestMatches (src/cli/wait.ts)', () => {
  const matches = (options: Parameters<typeof parseWaitFilters>[0], overrides: Partial<CapturedRequest> = {}) =>
    requestMatches(record(overrides), parseWaitFilters(options));

  it('passes everything without filters', () => {
    expect(matches({})).toBe(true);
    expect(matches({}, { method: 'GET', body: '', isJson: false, headers: [] })).toBe(true);
  });

  it('--method: any case', () => {
    expect(matches({ method: 'post' })).toBe(true);
    expect(matches({ method: 'POST' }, { method: 'post' })).toBe(true);
    expect(matches({ method: 'PUT' })).toBe(false);
  });

  it('--path: the glob on the sub-path, / for the bare URL', () => {
    expect(matches({ path: '/github/*' })).toBe(true);
    expect(matches({ path: '/stripe/**' })).toBe(false);
    expect(matches({ path: '/' }, { subPath: '' })).toBe(true);
    expect(matches({ path: '/' })).toBe(false);
  });

  it('--header: name in any case, value exact, * for present, any of duplicates, all must hold', () => {
    expect(matches({ header: ['x-github-event=push'] })).toBe(true);
    expect(matches({ header: ['X-GITHUB-EVENT=Push'] })).toBe(false);
    expect(matches({ header: ['X-GitHub-Event=*'] })).toBe(true);
    expect(matches({ header: ['X-Missing=*'] })).toBe(false);
    expect(matches({ header: ['X-Tag=two'] })).toBe(true);
    expect(matches({ header: ['X-Tag=two', 'X-GitHub-Event=push'] })).toBe(true);
    expect(matches({ header: ['X-Tag=two', 'X-GitHub-Event=ping'] })).toBe(false);
    // Only the first '=' splits: the value may hold more.
    expect(matches({ header: ['Authorization=Bearer a=b'] }, { headers: [['authorization', 'Bearer a=b']] })).toBe(
      true,
    );
    expect(matches({ header: ['X-Empty='] }, { headers: [['X-Empty', '']] })).toBe(true);
  });

  it('--json: dotted paths into objects and arrays, compared as text, * for present', () => {
    expect(matches({ json: ['action=opened'] })).toBe(true);
    expect(matches({ json: ['action=closed'] })).toBe(false);
    expect(matches({ json: ['count=3'] })).toBe(true);
    expect(matches({ json: ['count=03'] })).toBe(false);
    expect(matches({ json: ['ok=true'] })).toBe(true);
    expect(matches({ json: ['none=null'] })).toBe(true);
    expect(matches({ json: ['none=*'] })).toBe(true);
    expect(matches({ json: ['price=1.5'] })).toBe(true);
    expect(matches({ json: ['items.0.id=a1'] })).toBe(true);
    expect(matches({ json: ['items.1.id=42'] })).toBe(true);
    expect(matches({ json: ['items.2.id=*'] })).toBe(false);
    expect(matches({ json: ['items.x=*'] })).toBe(false);
    expect(matches({ json: ['nested.deep.k=v'] })).toBe(true);
    expect(matches({ json: ['nested.deep={"k":"v"}'] })).toBe(true);
    expect(matches({ json: ['nested.deep.k.more=*'] })).toBe(false);
    expect(matches({ json: ['missing=*'] })).toBe(false);
    // Inherited properties are not the body's.
    expect(matches({ json: ['constructor=*'] })).toBe(false);
    expect(matches({ json: ['action=opened', 'count=3'] })).toBe(true);
    expect(matches({ json: ['action=opened', 'count=4'] })).toBe(false);
  });

  it('--json: a body that is not JSON never matches; a base64-stored JSON body is read', () => {
    expect(matches({ json: ['a=*'] }, { body: 'a=1', isJson: false })).toBe(false);
    const body = '{"a":"\\u0001\\u0002","n":1}';
    expect(
      matches({ json: ['n=1'] }, { body: Buffer.from(body).toString('base64'), bodyEncoding: 'base64', isJson: true }),
    ).toBe(true);
    // A top-level array.
    expect(matches({ json: ['1=b'] }, { body: '["a","b"]', isJson: true })).toBe(true);
  });

  it('all filters together', () => {
    expect(matches({ method: 'post', path: '/github/**', header: ['x-github-event=push'], json: ['count=3'] })).toBe(
      true,
    );
    expect(matches({ method: 'post', path: '/github/**', header: ['x-github-event=push'], json: ['count=4'] })).toBe(
      false,
    );
  });
});

describe('parseWaitFilters and parseDuration', () => {
  it.each([
    [{ header: ['noequals'] }, /--header "noequals" has no '=': it takes NAME=VALUE/],
    [{ header: ['=v'] }, /--header has nothing before '='/],
    [{ header: ['bad name=v'] }, /--header: "bad…" is not a header name/],
    // A value that may be a secret is not quoted.
    [
      { header: ['Authorization: Bearer s3cret'] },
      /^--header "Authorization…" has no '=': it takes NAME=VALUE .* \(not NAME: VALUE\)$/,
    ],
    [{ header: ['Authorization: Bearer s3cret=x'] }, /^--header: "Authorization…" is not a header name$/],
    [{ json: ['count'] }, /--json "count" has no '='/],
    [{ json: ['a..b=1'] }, /--json: "a\.\.b" is not a dotted path/],
    [{ method: 'PO ST' }, /--method takes an HTTP method/],
    [{ path: '' }, /--path takes a glob/],
  ])('%j is a usage error', (options, message) => {
    expect(() => parseWaitFilters(options)).toThrow(UsageError);
    expect(() => parseWaitFilters(options)).toThrow(message);
  });

  it.each([
    ['500ms', 500],
    ['30s', 30_000],
    ['2m', 120_000],
    ['45', 45_000],
    ['1.5', 1500],
    ['0.5s', 500],
    [' 10s ', 10_000],
    ['24h', 86_400_000],
    ['1h', 3_600_000],
    ['25h', undefined],
    ['0', undefined],
    ['0ms', undefined],
    ['-1s', undefined],
    ['10 s', undefined],
    ['1441m', undefined],
    ['1d', undefined],
    ['', undefined],
  ])('--timeout %j -> %s', (text, expected) => {
    if (expected === undefined) expect(() => parseDuration(text)).toThrow(/--timeout takes a duration/);
    else expect(parseDuration(text)).toBe(expected);
  });
});

describe('glob matching time', () => {
  // Finding 2 of the hardening issue: a backtracking regular expression took 7.9 s for 10 stars
  // and a 40-character path, over 30 s for 25. These must finish long inside the test timeout.
  it('a glob of 25 stars against a path that almost matches answers at once, and correctly', () => {
    const glob = `/${'a*'.repeat(25)}b`;
    expect(globMatches(glob, `/${'a'.repeat(40)}`)).toBe(false);
    expect(globMatches(glob, `/${'a'.repeat(40)}b`)).toBe(true);
  });

  it('refuses a glob of more wildcards than a match can afford', () => {
    expect(globProblem(`/${'a*'.repeat(16)}`)).toBeUndefined();
    expect(globProblem(`/${'a*'.repeat(17)}`)).toMatch(/more than 16 wildcards/);
  });

  it('the most wildcards we take against a 64 KiB path', () => {
    const glob = `/${'a*'.repeat(16)}`;
    const path = `/${'a'.repeat(64 * 1024)}`;
    expect(globMatches(glob, `${path}/`)).toBe(false);
    expect(globMatches(glob.replace(/\*$/, '**'), `${path}/x`)).toBe(true);
    expect(globMatches(`/**${'/a*'.repeat(15)}/b`, `${'/a'.repeat(30000)}/c`)).toBe(false);
  });
});
