import { describe, expect, it } from 'vitest';
import { backoffDelay, formatSeconds, sleep } from '../../src/cli/backoff.js';
import { parseInteger, UsageError } from '../../src/cli/command.js';
import {
  displayPath,
  formatForwardLine,
  formatSize,
  formatTailLine,
  formatVerbose,
  toPrintable,
} from '../../src/cli/format.js';
import { capturedRequest } from '../helpers/captured.js';

const request = capturedRequest({
  seq: 12,
  url: '/api/webhook-tester/abc/github/push?x=1',
  subPath: '/github/push',
  query: { x: '1' },
  headers: [['X-Evil', 'a\u001b[2Jb']],
  contentType: null,
  body: 'line1\r\nline2\u202e',
  isJson: false,
  size: 2048,
  storedSize: 14,
});

describe('cli formatting', () => {
  it('formats the forward line', () => {
    expect(formatForwardLine(request, { delivered: true, status: 200, ms: 12.4 })).toBe(
      '#12 POST /github/push?x=1 → 200 in 12 ms',
    );
    expect(formatForwardLine(request, { delivered: false, reason: 'ECONNREFUSED' })).toBe(
      '#12 POST /github/push?x=1 → not delivered (ECONNREFUSED)',
    );
    expect(
      formatForwardLine(
        { ...request, truncated: true, size: 5000, storedSize: 1024 },
        { delivered: true, status: 201, ms: 3 },
      ),
    ).toBe(
      '#12 POST /github/push?x=1 → 201 in 3 ms (warning: body truncated by the server, only 1024 of 5000 bytes kept)',
    );
  });

  it('shows / for no sub-path and keeps the raw query', () => {
    expect(displayPath({ url: '/api/webhook-tester/abc', subPath: '' })).toBe('/');
    expect(displayPath({ url: '/api/webhook-tester/abc?a=%20', subPath: '' })).toBe('/?a=%20');
  });

  it('formats the tail line with local time and size', () => {
    expect(formatTailLine(request)).toMatch(/^#12 \d\d:\d\d:\d\d\.000 POST \/github\/push\?x=1 2 KiB$/);
    expect([formatSize(0), formatSize(1023), formatSize(1536), formatSize(3 * 1024 * 1024)]).toEqual([
      '0 B',
      '1023 B',
      '1.5 KiB',
      '3 MiB',
    ]);
  });

  it('escapes control characters and bidi overrides so captured data cannot drive the terminal', () => {
    expect(toPrintable('a\u001b[31mb\u0000\u009b\u202e')).toBe('a\\x1b[31mb\\x00\\x9b\\u202e');
    expect(toPrintable('a\nb\tc', true)).toBe('a\nb\tc');
    expect(toPrintable('a\nb')).toBe('a\\x0ab');
    const verbose = formatVerbose(request);
    expect(verbose).toContain('    X-Evil: a\\x1b[2Jb');
    expect(verbose).toContain('    line1\n    line2\\u202e');
    expect(formatVerbose({ ...request, bodyEncoding: 'base64', body: '//4=', storedSize: 2 })).toContain(
      '(binary body, 2 B; --json has it as base64)',
    );
    // Valid UTF-8 stored as base64 (escaping would have cost more) is still shown as text.
    expect(formatVerbose({ ...request, bodyEncoding: 'base64', body: 'AAE=', storedSize: 2 })).toContain(
      '    \\x00\\x01',
    );
    expect(formatVerbose({ ...request, body: '', storedSize: 0 })).toContain('(no body)');
  });
});

describe('cli backoff and numbers', () => {
  it('doubles from 0.5 s up to 10 s', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((attempt) => backoffDelay(attempt))).toEqual([
      500, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
    expect(formatSeconds(500)).toBe('0.5 s');
    expect(formatSeconds(10_000)).toBe('10 s');
  });

  it('sleep resolves false at once when aborted', async () => {
    const controller = new AbortController();
    const slept = sleep(60_000, controller.signal);
    controller.abort();
    expect(await slept).toBe(false);
    expect(await sleep(1)).toBe(true);
  });

  it('parseInteger takes whole numbers in range only', () => {
    expect(parseInteger('5', '--retries', 0, 10)).toBe(5);
    for (const bad of ['-1', '11', '1.5', 'x', '', '1e3'])
      expect(() => parseInteger(bad, '--retries', 0, 10)).toThrow(UsageError);
  });
});
