import type { CapturedRequest } from '../../src/capture/captured-request.js';

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(bytes < 10 * 1024 ? 1 : 0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** `2026-11-22T16:20:01.123Z` -> `16:20:01.123` (the list), full form in the detail. */
export function timeOfDay(iso: string): string {
  return iso.slice(11, 23);
}

export function utc(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 23)} UTC`;
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

/** Lower-cased text a filter matches against: method, path, headers and body. */
export function searchText(request: CapturedRequest): string {
  const headers = request.headers.map(([name, value]) => `${name}: ${value}`).join('\n');
  const body = request.bodyEncoding === 'utf8' ? request.body : '';
  return `${request.method}\n${request.url}\n${headers}\n${body}`.toLowerCase();
}
