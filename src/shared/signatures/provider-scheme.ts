import { decodeBase64, decodeHex, encodeUtf8 } from './bytes.js';
import { findHeaderValues } from './header-values.js';
import { HMAC_SHA256_BYTES } from './hmac-sha256.js';
import { parseUnixSeconds } from './timestamp.js';
import type { Provider, SignedRequest } from './types.js';

export interface SignedTimestamp {
  /** How messages name it: the header as the request spelled it, or the part of one. */
  header: string;
  seconds: number;
}

/** What a provider's headers say once read: enough to recompute and compare. */
export interface SignatureParts {
  signatureHeader: string;
  /** Every signature the request carried that we compare against, written as the provider writes it. */
  received: string[];
  /** The decodable, 32-byte ones among them. */
  macs: Uint8Array[];
  timestamp?: SignedTimestamp;
  /**
   * Text the provider puts before the body in what it signs. Built from the header text as sent (not
   * a re-printed number), because the sender signed those exact characters.
   */
  signedPrefix: string;
}

export interface HeaderProblem {
  ok: false;
  reason: 'missing-header' | 'malformed-header';
  message: string;
  received?: string[];
  signatureHeader?: string;
}

export type HeaderReading = { ok: true; parts: SignatureParts } | HeaderProblem;

export type KeyReading = { ok: true; key: Uint8Array } | { ok: false; message: string };

/** One provider's recipe: where its signature lives, what it signs, and how its secret becomes a key. */
export interface ProviderScheme {
  provider: Provider;
  /** The provider's name as people write it, for messages. */
  label: string;
  readHeaders(headers: SignedRequest['headers']): HeaderReading;
  /** Called with a non-blank secret; refuses only secrets that cannot be this provider's. */
  readKey(secret: string): KeyReading;
  formatSignature(mac: Uint8Array): string;
}

export type SingleHeader =
  | { kind: 'missing' }
  | { kind: 'conflicting'; name: string; values: string[] }
  | { kind: 'empty'; name: string }
  | { kind: 'present'; name: string; value: string };

/**
 * Reads a header that must have one value. Repeats that agree are harmless (some proxies duplicate
 * headers); repeats that disagree leave no way to know which one was signed.
 */
export function readSingleHeader(headers: SignedRequest['headers'], name: string): SingleHeader {
  const found = findHeaderValues(headers, name);
  const first = found[0];
  if (first === undefined) return { kind: 'missing' };
  const distinct = [...new Set(found.map((header) => header.value))];
  if (distinct.length > 1) return { kind: 'conflicting', name: first.name, values: distinct };
  if (first.value === '') return { kind: 'empty', name: first.name };
  return { kind: 'present', name: first.name, value: first.value };
}

/** A signature header that is there but cannot be used, with what it carried. */
export function malformedHeader(message: string, received: string[], signatureHeader: string): HeaderProblem {
  return { ok: false, reason: 'malformed-header', message, received, signatureHeader };
}

/** The MACs `decode` can read among the received signatures; the unreadable ones are left out. */
export function decodeMacs(received: string[], decode: (signature: string) => Uint8Array | undefined): Uint8Array[] {
  return received.map(decode).filter((mac): mac is Uint8Array => mac !== undefined);
}

/**
 * A provider whose key is the secret's UTF-8 bytes: refuses a secret that matches `otherCredential`
 * (a token people paste by mistake) with `message`.
 */
export function utf8KeyUnless(otherCredential: RegExp, message: string): (secret: string) => KeyReading {
  return (secret) => (otherCredential.test(secret) ? { ok: false, message } : { ok: true, key: encodeUtf8(secret) });
}

export function decodeHexMac(text: string): Uint8Array | undefined {
  const bytes = decodeHex(text);
  return bytes?.length === HMAC_SHA256_BYTES ? bytes : undefined;
}

export function decodeBase64Mac(text: string): Uint8Array | undefined {
  const bytes = decodeBase64(text);
  return bytes?.length === HMAC_SHA256_BYTES ? bytes : undefined;
}

/** Puts a single-value header's problem into the verdict's words. */
export function explainHeaderProblem(
  header: Exclude<SingleHeader, { kind: 'present' }>,
  displayName: string,
  missingMessage: string,
): HeaderProblem {
  switch (header.kind) {
    case 'missing':
      return { ok: false, reason: 'missing-header', message: missingMessage };
    case 'conflicting':
      return {
        ok: false,
        reason: 'malformed-header',
        message: `${header.name} arrived ${header.values.length} times with different values (${header.values.map(quoteValue).join(', ')}), so there is no telling which one was signed.`,
      };
    case 'empty':
      return { ok: false, reason: 'malformed-header', message: `${displayName} is present but empty.` };
  }
}

/** Reads a Unix-seconds header; a reading (problem) or the timestamp with its raw text. */
export function readTimestampHeader(
  headers: SignedRequest['headers'],
  name: string,
  missingMessage: string,
): { ok: true; text: string; timestamp: SignedTimestamp } | { ok: false; problem: HeaderProblem } {
  const header = readSingleHeader(headers, name);
  if (header.kind !== 'present') {
    return { ok: false, problem: explainHeaderProblem(header, name, missingMessage) };
  }
  const seconds = parseUnixSeconds(header.value);
  if (seconds === undefined) {
    return {
      ok: false,
      problem: {
        ok: false,
        reason: 'malformed-header',
        message: `${header.name} should be whole Unix seconds (digits only), but it is ${quoteValue(header.value)}.`,
      },
    };
  }
  return { ok: true, text: header.value, timestamp: { header: header.name, seconds } };
}

/** Quotes a header value for a message, cut short so a long one cannot swamp the sentence. */
export function quoteValue(value: string): string {
  return value.length > 40 ? `"${value.slice(0, 40)}…"` : `"${value}"`;
}
