import { isUtf8 } from 'node:buffer';

/** A query string or form body: repeated names become lists, in the order received. */
export type ParamMap = Record<string, string | string[]>;

/**
 * One captured request, exactly as it is stored and sent to watchers (docs/protocol.md).
 * Headers are `[name, value]` pairs in arrival order, original case, duplicates kept.
 */
export interface CapturedRequest {
  /** Per-endpoint sequence number, from 1, never reused while the endpoint lives. */
  seq: number;
  method: string;
  /** Raw request target as received: path under the receiver URL plus query string. */
  url: string;
  /** The part of the path after `/api/webhook-tester/<id>`, "" when none. */
  subPath: string;
  query: ParamMap;
  headers: Array<[string, string]>;
  contentType: string | null;
  /** Stored body: UTF-8 text, or base64 when the bytes are not valid UTF-8. */
  body: string;
  bodyEncoding: 'utf8' | 'base64';
  /** True when the stored body is complete and parses as JSON, whatever the content type. */
  isJson: boolean;
  /** Fields of an `application/x-www-form-urlencoded` body, else null. */
  form: ParamMap | null;
  /** Bytes the sender sent (or, past the read limit, read before stopping). */
  size: number;
  /** Bytes kept in `body` (before base64). */
  storedSize: number;
  truncated: boolean;
  remoteAddress: string;
  /** Capture time, ISO 8601 UTC with milliseconds. */
  receivedAt: string;
}

/** A captured request before the store numbers it. */
export type RequestDraft = Omit<CapturedRequest, 'seq'>;

export interface RawCapture {
  method: string;
  url: string;
  subPath: string;
  rawHeaders: string[];
  /** The kept bytes (at most the stored cap). */
  body: Buffer;
  size: number;
  truncated: boolean;
  remoteAddress: string;
  receivedAtMs: number;
}

export interface CaptureOptions {
  /** Deepest nesting for which a body is flagged `isJson` (the page renders it as a tree). */
  maxJsonDepth: number;
  /** Epoch ms -> ISO 8601 UTC with milliseconds (see utc-time.ts). */
  formatTime: (ms: number) => string;
}

/** Turns what the receiver read into the record we store and send (the store adds `seq`). Pure. */
export function toRequestDraft(raw: RawCapture, options: CaptureOptions): RequestDraft {
  const headers: Array<[string, string]> = [];
  let contentType: string | null = null;
  for (let i = 0; i + 1 < raw.rawHeaders.length; i += 2) {
    const name = raw.rawHeaders[i] as string;
    const value = raw.rawHeaders[i + 1] as string;
    headers.push([name, value]);
    if (contentType === null && name.length === 12 && name.toLowerCase() === 'content-type') contentType = value;
  }

  const { text, encoding } = encodeBody(raw.body, raw.truncated);
  const queryStart = raw.url.indexOf('?');
  const mediaType = contentType?.split(';', 1)[0]?.trim().toLowerCase() ?? '';

  return {
    method: raw.method,
    url: raw.url,
    subPath: raw.subPath,
    query: queryStart === -1 ? {} : parseParams(raw.url.slice(queryStart + 1)),
    headers,
    contentType,
    body: text,
    bodyEncoding: encoding,
    isJson: encoding === 'utf8' && !raw.truncated && isJsonWithin(text, options.maxJsonDepth),
    form: encoding === 'utf8' && mediaType === 'application/x-www-form-urlencoded' ? parseParams(text) : null,
    size: raw.size,
    storedSize: raw.body.length,
    truncated: raw.truncated,
    remoteAddress: raw.remoteAddress,
    receivedAt: options.formatTime(raw.receivedAtMs),
  };
}

/** `a=1&a=2&b` -> `{ a: ['1', '2'], b: '' }`. A null-prototype map, so `__proto__` is just a name. */
export function parseParams(search: string): ParamMap {
  const params: ParamMap = Object.create(null) as ParamMap;
  for (const [name, value] of new URLSearchParams(search)) {
    const existing = params[name];
    if (existing === undefined) params[name] = value;
    else if (typeof existing === 'string') params[name] = [existing, value];
    else existing.push(value);
  }
  return params;
}

function encodeBody(bytes: Buffer, truncated: boolean): { text: string; encoding: 'utf8' | 'base64' } {
  // A cut at the stored cap may split a multi-byte character; judge UTF-8 validity on the
  // complete characters so a truncated text body still shows as text.
  const checked = truncated ? bytes.subarray(0, completeUtf8Length(bytes)) : bytes;
  if (isUtf8(checked)) return { text: checked.toString('utf8'), encoding: 'utf8' };
  return { text: bytes.toString('base64'), encoding: 'base64' };
}

/** Length of `bytes` without a trailing incomplete UTF-8 sequence (at most 3 bytes dropped). */
function completeUtf8Length(bytes: Buffer): number {
  const end = bytes.length;
  for (let back = 1; back <= Math.min(3, end); back++) {
    const byte = bytes[end - back] as number;
    if ((byte & 0xc0) !== 0x80) {
      // Lead byte found: how long should its sequence be?
      const need = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
      return need > back ? end - back : end;
    }
  }
  return end;
}

function isJsonWithin(text: string, maxDepth: number): boolean {
  // Cheap first-character gate so plain text and form bodies skip JSON.parse entirely.
  const first = text.trimStart().charCodeAt(0);
  const plausible =
    first === 0x7b /* { */ || first === 0x5b /* [ */ || first === 0x22 /* " */ || first === 0x2d /* - */ ||
    (first >= 0x30 && first <= 0x39) || first === 0x74 /* t */ || first === 0x66 /* f */ || first === 0x6e; /* n */
  if (!plausible || nestingDepth(text) > maxDepth) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Deepest bracket nesting outside strings; one pass, no allocation. Only meaningful for JSON.
 * String contents are skipped with indexOf (native), so a body that is mostly strings costs
 * little, which is most webhook bodies.
 */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x22 /* " */) {
      let end = text.indexOf('"', i + 1);
      while (end !== -1 && isEscaped(text, end)) end = text.indexOf('"', end + 1);
      if (end === -1) break; // unterminated string: nothing after it counts
      i = end;
    } else if (code === 0x7b || code === 0x5b) {
      if (++depth > deepest) deepest = depth;
    } else if (code === 0x7d || code === 0x5d) depth--;
  }
  return deepest;
}

/** True when an odd run of backslashes precedes `at`. */
function isEscaped(text: string, at: number): boolean {
  let backslashes = 0;
  for (let j = at - 1; text.charCodeAt(j) === 0x5c; j--) backslashes++;
  return backslashes % 2 === 1;
}
