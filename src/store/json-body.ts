import { isUtf8 } from 'node:buffer';

/**
 * A stored body as the JSON record of protocol v1 and the HTTP API holds it (`body` and
 * `bodyEncoding`): UTF-8 text when its bytes are UTF-8 and escaping them adds no more than base64
 * would, else base64. The store keeps the bytes raw (shared/request-frame.ts); this is worked out
 * only for a client that reads JSON.
 */
export interface JsonBody {
  encoding: 'utf8' | 'base64';
  /** The body as a JSON string literal, as JSON.stringify writes it. */
  quoted: string;
}

export function jsonBodyOf(bytes: Buffer): JsonBody {
  if (isUtf8(bytes)) {
    const quoted = quoteIfCheap(bytes);
    if (quoted !== undefined) return { encoding: 'utf8', quoted };
  }
  return { encoding: 'base64', quoted: `"${bytes.toString('base64')}"` };
}

/** Escaping bytes every body may spend beyond a third, so short texts with a few controls stay text. */
export const ESCAPE_SLACK_BYTES = 64;

/**
 * Bodies up to this size are escaped (JSON.stringify) and judged by how much they grew; larger
 * ones are judged first by escapingIsCheap, so a hostile megabyte of control bytes is never
 * written out six times over only to be sent as base64.
 */
const ESCAPE_FIRST_MAX_BYTES = 64 * 1024;

/** The text as a JSON string literal when that is no more than a third (plus slack) larger than its bytes. */
function quoteIfCheap(bytes: Buffer): string | undefined {
  if (bytes.length > ESCAPE_FIRST_MAX_BYTES && !escapingIsCheap(bytes)) return undefined;
  const text = bytes.toString('utf8');
  const quoted = JSON.stringify(text);
  // Every escape is ASCII and valid UTF-8 decodes to no lone surrogate (JSON.stringify's only
  // other escape), so the growth in UTF-16 units is the growth in bytes.
  return quoted.length - 2 - text.length <= escapeAllowance(bytes.length) ? quoted : undefined;
}

const escapeAllowance = (length: number) => Math.ceil(length / 3) + ESCAPE_SLACK_BYTES;

/**
 * The most bytes `length` body bytes take as a JSON string, its quotes aside: base64's 4 per 3,
 * or text grown by at most a third plus the slack.
 */
export const quotedBodyBound = (length: number): number => Math.ceil(length / 3) * 4 + ESCAPE_SLACK_BYTES;

/**
 * True when the bytes, written as a JSON string, grow by no more than a third (as base64 would)
 * plus a little slack.
 * Control bytes cost up to six each (`\u0001`), quotes and backslashes two; everything else,
 * UTF-8 sequences included, is copied as is.
 */
export function escapingIsCheap(bytes: Uint8Array): boolean {
  const allowance = escapeAllowance(bytes.length);
  let extra = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i] as number;
    if (byte >= 0x20 && byte !== 0x22 && byte !== 0x5c) continue;
    // \b \t \n \f \r, quote and backslash take two bytes; other controls six.
    extra += byte === 0x22 || byte === 0x5c || (byte >= 8 && byte <= 13 && byte !== 11) ? 1 : 5;
    if (extra > allowance) return false;
  }
  return true;
}
