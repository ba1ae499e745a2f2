import { isUtf8 } from 'node:buffer';
import type { ForwardedMessage } from '../shared/protocol.js';

/** What the page is shown of an answer: the limits the server checks a `forwarded` message against. */
export const REPORT_LIMITS = {
  bodyBytes: 4096,
  headerPairs: 64,
  headerNameChars: 256,
  headerValueChars: 2048,
  targetChars: 512,
  errorChars: 500,
} as const;

/** The result of one forward, as the target answered it (or why it did not). */
export type ForwardResult =
  | { ok: true; status: number; ms: number; headers: Array<[string, string]>; body: Buffer; bodyTruncated: boolean }
  | { ok: false; error: string; ms: number };

/**
 * The `forwarded` message for one request. Every field is cut to the server's limits: a message
 * it refuses counts toward the run of bad messages that gets the socket closed. `type` comes
 * first, because the server charges less for a frame that starts with it.
 */
export function buildForwardedMessage(seq: number, target: string, result: ForwardResult): ForwardedMessage {
  const durationMs = Math.min(24 * 60 * 60 * 1000, Math.max(0, Math.round(result.ms * 10) / 10));
  const base = { type: 'forwarded' as const, seq, target: cut(target, REPORT_LIMITS.targetChars) };
  if (!result.ok) {
    return {
      ...base,
      error: cut(result.error, REPORT_LIMITS.errorChars),
      durationMs,
      headers: [],
      body: '',
      bodyEncoding: 'utf8',
      bodyTruncated: false,
    };
  }
  const headers = result.headers
    .slice(0, REPORT_LIMITS.headerPairs)
    .map(([name, value]): [string, string] => [
      cut(name, REPORT_LIMITS.headerNameChars),
      cut(value, REPORT_LIMITS.headerValueChars),
    ]);
  const { body, bodyEncoding } = encodeBody(result.body, result.bodyTruncated);
  // A status node accepts but the protocol does not (100-599) is reported as what it is.
  const answer =
    result.status >= 100 && result.status <= 599
      ? { status: result.status }
      : { error: `the target answered with status ${result.status}` };
  return {
    ...base,
    ...answer,
    durationMs,
    headers,
    body,
    bodyEncoding,
    bodyTruncated: result.bodyTruncated || result.body.length > REPORT_LIMITS.bodyBytes,
  };
}

/**
 * The first 4 KiB as text when they are UTF-8, else base64. A cut can split a character: the
 * split bytes are left off, so a text answer still reads as text.
 */
export function encodeBody(bytes: Buffer, truncated: boolean): { body: string; bodyEncoding: 'utf8' | 'base64' } {
  let kept = bytes.subarray(0, REPORT_LIMITS.bodyBytes);
  if (truncated || bytes.length > REPORT_LIMITS.bodyBytes) kept = dropSplitCharacter(kept);
  return isUtf8(kept)
    ? { body: kept.toString('utf8'), bodyEncoding: 'utf8' }
    : { body: bytes.subarray(0, REPORT_LIMITS.bodyBytes).toString('base64'), bodyEncoding: 'base64' };
}

/** Leaves off a UTF-8 sequence the cut left incomplete (at most 3 bytes). */
function dropSplitCharacter(bytes: Buffer): Buffer {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back] as number;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: look further back for the lead
    if (byte < 0x80) return bytes; // ASCII: nothing split
    const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : 2;
    return needed > back ? bytes.subarray(0, bytes.length - back) : bytes;
  }
  return bytes;
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
