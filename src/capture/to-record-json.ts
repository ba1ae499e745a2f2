import { isUtf8 } from 'node:buffer';
import { FORM_PARSE_MAX_BYTES } from './record-bounds.js';
import type { MultipartPart, RecordedAnswer, RequestDraft } from '../shared/schemas/captured-request.js';
import { redactHeaders, redactTarget } from '../shared/redact.js';
import { parseParams, subPathOf } from '../shared/request-target.js';

export interface RawCapture {
  method: string;
  /** The raw request target: origin-form (`/api/…?q`) or absolute-form (`http://host/api/…`). */
  url: string;
  /** Path prefix up to and including the endpoint id; what follows it is `subPath`. */
  endpointPath: string;
  rawHeaders: string[];
  /** The kept bytes (at most the stored cap). */
  body: Buffer;
  size: number;
  truncated: boolean;
  remoteAddress: string;
  receivedAtMs: number;
  /** The answer, when known as the record is built; the receiver leaves it out and the store adds the one it chose (store.ts). */
  answer?: RecordedAnswer;
  /** Parsed multipart parts, when the body is multipart (parsed beforehand: it is async). */
  parts?: MultipartPart[] | null;
  /**
   * Kept endpoints: redact secret header values, these names (lower case) included, secret query
   * values and the user-info of an absolute-form target (redact.ts).
   */
  redact?: ReadonlySet<string>;
}

export interface CaptureOptions {
  /** Deepest nesting for which a body is flagged `isJson` (the page renders it as a tree). */
  maxJsonDepth: number;
  /** Epoch ms -> ISO 8601 UTC with milliseconds (see utc-time.ts). */
  formatTime: (ms: number) => string;
}

/** Turns what the receiver read into the record we store and send (the store adds `seq`). Pure. */
export function toRequestDraft(raw: RawCapture, options: CaptureOptions): RequestDraft {
  return draftOf(raw, options).draft;
}

/**
 * The record's JSON straight from what the receiver read, at most `maxBytes` of UTF-8: the same
 * text as `toDraftJson(toRequestDraft(raw, options), maxBytes)`, made with one escaping pass
 * over the body instead of three (the cheap-escaping check, then JSON.stringify of the record,
 * which escaped the body again). The capture's hot path.
 */
export function toRecordJson(raw: RawCapture, options: CaptureOptions, maxBytes: number): string {
  const { draft, quotedBody } = draftOf(raw, options);
  const json = recordJson(draft, quotedBody, false);
  if (json.length * 3 <= maxBytes || Buffer.byteLength(json) <= maxBytes) return json;
  return recordJson(draft, quotedBody, true);
}

/**
 * Writes the draft as JSON.stringify would (same keys, same order), with the body's JSON string
 * given. `lean` leaves out the derived views, as toDraftJson does past the bound.
 */
function recordJson(draft: RequestDraft, quotedBody: string, lean: boolean): string {
  const { answer } = draft;
  return (
    `{"method":${JSON.stringify(draft.method)},"url":${JSON.stringify(draft.url)},"subPath":${JSON.stringify(draft.subPath)},` +
    `"query":${lean ? '{}' : JSON.stringify(draft.query)},"headers":${JSON.stringify(draft.headers)},"contentType":${JSON.stringify(draft.contentType)},` +
    `"body":${quotedBody},"bodyEncoding":"${draft.bodyEncoding}","isJson":${draft.isJson},"form":${lean ? 'null' : JSON.stringify(draft.form)},` +
    `"parts":${lean ? 'null' : JSON.stringify(draft.parts)},"omitted":${lean ? '["query","form","parts"]' : JSON.stringify(draft.omitted)},` +
    `"size":${draft.size},"storedSize":${draft.storedSize},"truncated":${draft.truncated},"remoteAddress":${JSON.stringify(draft.remoteAddress)},` +
    `"receivedAt":${JSON.stringify(draft.receivedAt)}` +
    `${draft.redacted === undefined ? '' : `,"redacted":${JSON.stringify(draft.redacted)}`}` +
    `${draft.redactedQuery === undefined ? '' : `,"redactedQuery":${JSON.stringify(draft.redactedQuery)}`}` +
    `${answer === undefined ? '' : `,"answer":${JSON.stringify(answer)}`}}`
  );
}

function draftOf(raw: RawCapture, options: CaptureOptions): { draft: RequestDraft; quotedBody: string } {
  const headers: Array<[string, string]> = [];
  let contentType: string | null = null;
  for (let i = 0; i + 1 < raw.rawHeaders.length; i += 2) {
    const name = raw.rawHeaders[i] as string;
    const value = raw.rawHeaders[i + 1] as string;
    headers.push([name, value]);
    if (contentType === null && name.length === 12 && name.toLowerCase() === 'content-type') contentType = value;
  }

  const stored = encodeBody(raw.body, raw.truncated);
  // Kept endpoints: the target's secrets go before anything is derived from it.
  const target = raw.redact ? redactTarget(raw.url) : undefined;
  const url = target?.url ?? raw.url;
  const queryStart = url.indexOf('?');
  const mediaType = contentType?.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  const isForm = stored.text !== undefined && mediaType === 'application/x-www-form-urlencoded';
  const formTooLarge = isForm && stored.storedSize > FORM_PARSE_MAX_BYTES;

  const draft: RequestDraft = {
    method: raw.method,
    url,
    subPath: subPathOf(url, raw.endpointPath),
    query: queryStart === -1 ? {} : parseParams(url.slice(queryStart + 1)),
    headers,
    contentType,
    body: stored.body,
    bodyEncoding: stored.encoding,
    isJson: stored.text !== undefined && !raw.truncated && isJsonWithin(stored.text, options.maxJsonDepth),
    form: isForm && !formTooLarge ? parseParams(stored.text ?? '') : null,
    parts: raw.parts ?? null,
    omitted: formTooLarge ? ['form'] : [],
    size: raw.size,
    storedSize: stored.storedSize,
    truncated: raw.truncated,
    remoteAddress: raw.remoteAddress,
    receivedAt: options.formatTime(raw.receivedAtMs),
  } as RequestDraft;
  if (raw.redact) draft.redacted = redactHeaders(headers, raw.redact);
  if (target) draft.redactedQuery = target.queryNames;
  // Last: see RecordedAnswer.
  if (raw.answer) draft.answer = raw.answer;
  return { draft, quotedBody: stored.quoted };
}

interface StoredBody {
  body: string;
  encoding: 'utf8' | 'base64';
  /** The body as text, when its bytes are valid UTF-8 (whichever encoding it is stored in). */
  text: string | undefined;
  storedSize: number;
  /** `body` as a JSON string literal, as JSON.stringify writes it. */
  quoted: string;
}

function encodeBody(bytes: Buffer, truncated: boolean): StoredBody {
  // A cut at the stored cap may split a multi-byte character; judge UTF-8 validity on the
  // complete characters so a truncated text body still shows as text, and store only those.
  const complete = truncated ? bytes.subarray(0, completeUtf8Length(bytes)) : bytes;
  if (isUtf8(complete)) {
    const text = complete.toString('utf8');
    const quoted = quoteIfCheap(text, complete);
    if (quoted !== undefined) return { body: text, encoding: 'utf8', text, storedSize: complete.length, quoted };
    const base64 = bytes.toString('base64');
    return { body: base64, encoding: 'base64', text, storedSize: bytes.length, quoted: `"${base64}"` };
  }
  const base64 = bytes.toString('base64');
  return { body: base64, encoding: 'base64', text: undefined, storedSize: bytes.length, quoted: `"${base64}"` };
}

/** Escaping bytes every body may spend beyond a third, so short texts with a few controls stay text. */
export const ESCAPE_SLACK_BYTES = 64;

/**
 * Bodies up to this size are escaped (JSON.stringify, which the record needs anyway) and judged
 * by how much they grew; larger ones are judged first by escapingIsCheap, so a hostile megabyte of
 * control bytes is never written out six times over only to be stored as base64.
 */
const ESCAPE_FIRST_MAX_BYTES = 64 * 1024;

/** The text as a JSON string literal when that is no more than a third (plus slack) larger than its bytes. */
function quoteIfCheap(text: string, bytes: Uint8Array): string | undefined {
  if (bytes.length > ESCAPE_FIRST_MAX_BYTES && !escapingIsCheap(bytes)) return undefined;
  const quoted = JSON.stringify(text);
  // Every escape is ASCII and valid UTF-8 decodes to no lone surrogate (JSON.stringify's only
  // other escape), so the growth in UTF-16 units is the growth in bytes.
  return quoted.length - 2 - text.length <= escapeAllowance(bytes.length) ? quoted : undefined;
}

const escapeAllowance = (length: number) => Math.ceil(length / 3) + ESCAPE_SLACK_BYTES;

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
    first === 0x7b /* { */ ||
    first === 0x5b /* [ */ ||
    first === 0x22 /* " */ ||
    first === 0x2d /* - */ ||
    (first >= 0x30 && first <= 0x39) ||
    first === 0x74 /* t */ ||
    first === 0x66 /* f */ ||
    first === 0x6e; /* n */
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

/**
 * The draft's JSON, at most `maxBytes` of UTF-8: when the derived views (parsed query, form
 * fields, multipart parts) would pass the bound, they are left out and listed in `omitted`, so
 * no request makes a record larger than `maxRecordBytes` (record-bounds.ts).
 */
export function toDraftJson(draft: RequestDraft, maxBytes: number): string {
  const json = JSON.stringify(draft);
  // A UTF-16 unit is at most 3 bytes of UTF-8: only a long string needs counting.
  if (json.length * 3 <= maxBytes || Buffer.byteLength(json) <= maxBytes) return json;
  const lean: RequestDraft = { ...draft, query: {}, form: null, parts: null, omitted: ['query', 'form', 'parts'] };
  return JSON.stringify(lean);
}
