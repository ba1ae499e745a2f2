import type { CapturedRequest, ParamMap } from '../../src/shared/schemas/captured-request.js';

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** `2026-11-22T16:20:01.123Z` -> `2026-11-22 16:20:01.123 UTC`. */
export function utc(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)} UTC`;
}

const clock = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
const preciseClock = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  fractionalSecondDigits: 3,
});
const calendar = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric' });

/** The reader's local time of day, in their locale's style: `17:20:01` or `5:20:01 PM`. */
export function localTime(iso: string): string {
  return clock.format(new Date(iso));
}

/** Local date, time with milliseconds, and the offset from UTC: `22 Nov 2026,`, `17:20:01.123`, `(UTC+1)`: pieces not to break inside. */
export function localDateTimeParts(iso: string): [string, string, string] {
  const date = new Date(iso);
  const offset = -date.getTimezoneOffset();
  const hours = Math.trunc(Math.abs(offset) / 60);
  const minutes = Math.abs(offset) % 60;
  const zone =
    offset === 0
      ? 'UTC'
      : `UTC${offset > 0 ? '+' : '−'}${hours}${minutes ? `:${String(minutes).padStart(2, '0')}` : ''}`;
  return [`${calendar.format(date)},`, preciseClock.format(date), `(${zone})`];
}

/** A delay as the answer form says it: `250 ms`, `2 s`. */
export function formatDelay(ms: number): string {
  return ms >= 1000 ? `${ms / 1000} s` : `${ms} ms`;
}

/** How long ago, short: `now`, `5 s ago`, `3 min ago`, `2 h ago`, `4 d ago`. */
export function ago(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  if (seconds < 1) return 'now';
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86_400)} d ago`;
}

/** The request's path as the sender wrote it, after the receiver id (`/` when none) plus query. */
export function shortPath(request: CapturedRequest): string {
  const queryStart = request.url.indexOf('?');
  return (request.subPath || '/') + (queryStart === -1 ? '' : request.url.slice(queryStart));
}

export function bodyBytes(request: CapturedRequest): Uint8Array {
  if (request.bodyEncoding === 'utf8') return new TextEncoder().encode(request.body);
  const binary = atob(request.body);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Classic hex dump: offset, 16 bytes in hex, printable ASCII. At most `limit` bytes. */
export function hexDump(bytes: Uint8Array, limit = 4096): string {
  const lines: string[] = [];
  const end = Math.min(bytes.length, limit);
  for (let offset = 0; offset < end; offset += 16) {
    const row = bytes.subarray(offset, Math.min(offset + 16, end));
    const hex = Array.from(row, (b) => b.toString(16).padStart(2, '0')).join(' ');
    const ascii = Array.from(row, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${offset.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${ascii}`);
  }
  if (bytes.length > end) lines.push(`… ${bytes.length - end} more bytes (download to see all)`);
  return lines.join('\n');
}

/** `name=value` lines, decoded, repeated names once per value. */
function paramLines(params: ParamMap | null): string {
  if (!params) return '';
  return Object.entries(params)
    .flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((item) => `${name}=${item}`))
    .join('\n');
}

/** A multipart body's parts: `name=text` for fields, the file name for files. */
function partLines(parts: CapturedRequest['parts']): string {
  return (parts ?? [])
    .map((part) => (part.filename === null ? `${part.name}=${part.text ?? ''}` : `${part.name} ${part.filename}`))
    .join('\n');
}

/**
 * Lower-cased text a filter matches against: method, path, headers and body, the decoded
 * query and form values (`ada@example.com` finds a form that sent `ada%40example.com`), and
 * multipart fields' text: a multipart body with a binary file in it is stored as base64, and
 * its text fields are found through its parts.
 */
export function searchText(request: CapturedRequest): string {
  const headers = request.headers.map(([name, value]) => `${name}: ${value}`).join('\n');
  const body = request.bodyEncoding === 'utf8' ? request.body : '';
  return `${request.method}\n${request.url}\n${headers}\n${body}\n${paramLines(request.query)}\n${paramLines(request.form)}\n${partLines(request.parts)}`.toLowerCase();
}

/** What copying a cut body's cURL command adds to "copied": `the body was cut: it sends the first 1.0 MB of 2.0 MB the sender sent`. */
export function curlCopyNote(request: Pick<CapturedRequest, 'truncated' | 'size' | 'storedSize'>): string | undefined {
  if (!request.truncated) return undefined;
  return `the body was cut: it sends the first ${formatBytes(request.storedSize)} of ${formatBytes(request.size)} the sender sent`;
}
