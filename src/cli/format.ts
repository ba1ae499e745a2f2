import { isUtf8 } from 'node:buffer';
import type { CapturedRequest } from '../shared/schemas/captured-request.js';

/**
 * Captured data is written by strangers: escape control characters (an ANSI sequence could
 * rewrite the terminal) and bidi overrides (which reorder what the reader sees). Newlines and
 * tabs survive only where the caller asks, for bodies shown on their own lines.
 */
export function toPrintable(text: string, keepLineBreaks = false): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (char) => {
    if (keepLineBreaks && (char === '\n' || char === '\t')) return char;
    const code = char.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16)}`;
  });
}

/** What the sender asked for under the receiver URL: `/github/push?x=1` (`/` when nothing). */
export function displayPath(request: Pick<CapturedRequest, 'url' | 'subPath'>): string {
  const queryStart = request.url.indexOf('?');
  const query = queryStart === -1 ? '' : request.url.slice(queryStart);
  return toPrintable(`${request.subPath === '' ? '/' : request.subPath}${query}`);
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Number((bytes / 1024).toFixed(1))} KiB`;
  return `${Number((bytes / 1024 / 1024).toFixed(1))} MiB`;
}

/** `2026-11-22T16:20:01.123Z` -> `16:20:01.123` in the local time zone: a terminal reader's clock. */
export function formatClock(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return toPrintable(iso);
  const pad = (value: number, width = 2) => String(value).padStart(width, '0');
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
}

/** Says how much of the body was kept, for the line of a truncated request. */
export function truncationNote(request: Pick<CapturedRequest, 'truncated' | 'size' | 'storedSize'>): string {
  return request.truncated
    ? ` (warning: body truncated by the server, only ${request.storedSize} of ${request.size} bytes kept)`
    : '';
}

export type ForwardOutcome = { delivered: true; status: number; ms: number } | { delivered: false; reason: string };

/** `#12 POST /github/push?x=1 → 200 in 12 ms` */
export function formatForwardLine(request: CapturedRequest, outcome: ForwardOutcome): string {
  const result = outcome.delivered
    ? `${outcome.status} in ${Math.round(outcome.ms)} ms`
    : `not delivered (${outcome.reason})`;
  return `#${request.seq} ${toPrintable(request.method)} ${displayPath(request)} → ${result}${truncationNote(request)}`;
}

/** `#3 16:20:01.123 POST /github/push?a=1 16 B` */
export function formatTailLine(request: CapturedRequest): string {
  return `#${request.seq} ${formatClock(request.receivedAt)} ${toPrintable(request.method)} ${displayPath(request)} ${formatSize(request.size)}${truncationNote(request)}`;
}

/** The tail line plus headers and body, indented, for `tail -v`. */
export function formatVerbose(request: CapturedRequest): string {
  const lines = [formatTailLine(request)];
  for (const [name, value] of request.headers) lines.push(`    ${toPrintable(name)}: ${toPrintable(value)}`);
  const text = bodyText(request);
  if (request.storedSize === 0) lines.push('    (no body)');
  else if (text === undefined)
    lines.push(`    (binary body, ${formatSize(request.storedSize)}; --json has it as base64)`);
  else {
    lines.push('');
    for (const line of toPrintable(text.replaceAll('\r\n', '\n'), true).split('\n')) lines.push(`    ${line}`);
  }
  lines.push('');
  return lines.join('\n');
}

/**
 * The body as text when its bytes are UTF-8. The server stores valid UTF-8 as base64 too when
 * JSON escaping would cost more than base64 (many control characters), so decode and check.
 */
function bodyText(request: CapturedRequest): string | undefined {
  if (request.bodyEncoding === 'utf8') return request.body;
  const bytes = Buffer.from(request.body, 'base64');
  return isUtf8(bytes) ? bytes.toString('utf8') : undefined;
}
