import { isUtf8 } from 'node:buffer';
import { FORM_PARSE_MAX_BYTES } from './record-bounds.js';
import type { MultipartPart, RecordedAnswer, RequestDraft } from '../shared/schemas/captured-request.js';
import type { RecordHeader } from '../shared/request-frame.js';
import { redactHeaders, redactTarget } from '../shared/redact.js';
import { parseParams, subPathOf } from '../shared/request-target.js';
import { jsonBodyOf, quotedBodyBound } from '../store/json-body.js';
import { encodeRecord, type RecordBytes } from '../store/stored-request.js';
import { isJsonBody } from './json-syntax.js';

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

/**
 * The record as the capture encodes it, once (shared/request-frame.ts): a u32 header length, the
 * header's JSON, then the body's bytes raw. Its size as v1 JSON (body escaped or base64) is kept
 * within `maxBytes`: past it the derived views are left out and listed in `omitted`, so no
 * request makes a record larger than `maxRecordBytes` (record-bounds.ts). The capture's hot path.
 */
export function toRecordBytes(raw: RawCapture, options: CaptureOptions, maxBytes: number): RecordBytes {
  const { header, body } = headerOf(raw, options);
  let json = headerJson(header, false);
  // A UTF-16 unit is at most 3 bytes of UTF-8; the body as v1 JSON, with its field names, 64 more.
  const bodyAsJson = quotedBodyBound(body.length) + 64;
  if (json.length * 3 + bodyAsJson > maxBytes && Buffer.byteLength(json) + bodyAsJson > maxBytes) {
    json = headerJson(header, true);
  }
  return encodeRecord(json, body);
}

/** The record as the v1 JSON record holds it, without `seq` (tests and the redaction check). Pure. */
export function toRequestDraft(raw: RawCapture & { answer?: RecordedAnswer }, options: CaptureOptions): RequestDraft {
  const { header, body } = headerOf(raw, options);
  const { encoding, quoted } = jsonBodyOf(body);
  const draft = { ...header, body: JSON.parse(quoted) as string, bodyEncoding: encoding } as RequestDraft;
  if (raw.answer) draft.answer = raw.answer;
  return draft;
}

/**
 * The header's JSON; `lean` leaves out the derived views. One JSON.stringify of the whole header:
 * about twice as fast as writing it field by field into a template, whose many pieces V8 must
 * join again before the string can be measured and written.
 */
function headerJson(header: RecordHeader, lean: boolean): string {
  if (!lean) return JSON.stringify(header);
  const leanHeader: RecordHeader = {
    ...header,
    query: {},
    form: null,
    parts: null,
    omitted: ['query', 'form', 'parts'],
  };
  return JSON.stringify(leanHeader);
}

function headerOf(raw: RawCapture, options: CaptureOptions): { header: RecordHeader; body: Buffer } {
  const headers: Array<[string, string]> = [];
  let contentType: string | null = null;
  for (let i = 0; i + 1 < raw.rawHeaders.length; i += 2) {
    const name = raw.rawHeaders[i] as string;
    const value = raw.rawHeaders[i + 1] as string;
    headers.push([name, value]);
    if (contentType === null && name.length === 12 && name.toLowerCase() === 'content-type') contentType = value;
  }

  const body = storedBody(raw.body, raw.truncated);
  const utf8 = isUtf8(body);
  // Kept endpoints: the target's secrets go before anything is derived from it.
  const target = raw.redact ? redactTarget(raw.url) : undefined;
  const url = target?.url ?? raw.url;
  const queryStart = url.indexOf('?');
  const mediaType = contentType?.split(';', 1)[0]?.trim().toLowerCase() ?? '';
  const isForm = utf8 && mediaType === 'application/x-www-form-urlencoded';
  const formTooLarge = isForm && body.length > FORM_PARSE_MAX_BYTES;

  const header: RecordHeader = {
    method: raw.method,
    url,
    subPath: subPathOf(url, raw.endpointPath),
    query: queryStart === -1 ? {} : parseParams(url.slice(queryStart + 1)),
    headers,
    contentType,
    isJson: utf8 && !raw.truncated && isJsonBody(body, options.maxJsonDepth),
    form: isForm && !formTooLarge ? parseParams(body.toString('utf8')) : null,
    parts: raw.parts ?? null,
    omitted: formTooLarge ? ['form'] : [],
    size: raw.size,
    storedSize: body.length,
    truncated: raw.truncated,
    remoteAddress: raw.remoteAddress,
    receivedAt: options.formatTime(raw.receivedAtMs),
  };
  if (raw.redact) header.redacted = redactHeaders(headers, raw.redact);
  if (target) header.redactedQuery = target.queryNames;
  return { header, body };
}

/**
 * The bytes to store. A cut at the stored cap may split a multi-byte character: when the
 * complete characters before it are UTF-8, only they are stored, so a truncated text body still
 * reads as text.
 */
function storedBody(bytes: Buffer, truncated: boolean): Buffer {
  if (!truncated) return bytes;
  const complete = bytes.subarray(0, completeUtf8Length(bytes));
  return complete.length < bytes.length && isUtf8(complete) ? complete : bytes;
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
