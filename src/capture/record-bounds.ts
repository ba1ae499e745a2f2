/**
 * Bounds on what one captured request can cost once stored, so the stored-bytes budget and the
 * socket buffer cap can be checked against the largest record at start-up (config.ts), and so
 * no sender can make one record much larger than its body.
 */

/** Form bodies larger than this are kept as bytes but not parsed into fields (CPU and size). */
export const FORM_PARSE_MAX_BYTES = 64 * 1024;

/** Multipart: parts listed at most, and the text of field parts kept at most (all fields together). */
export const MULTIPART_MAX_PARTS = 100;
export const MULTIPART_MAX_FIELD_TEXT_BYTES = 64 * 1024;

/** JSON escaping can turn one byte into six (`\u0001`). */
const WORST_ESCAPE = 6;
/** Room for the record's fixed fields, names and punctuation. */
const FIXED_BYTES = 4 * 1024;

/**
 * The largest record (the `request` message's JSON, in UTF-8 bytes) a request can produce.
 * The body is at most 4/3 of its bytes (text is chosen only when escaping adds no more than
 * base64 would); headers, URL, sub-path and parsed query all come from the request head, each
 * at most a few times its size; forms and multipart fields are parsed only up to a bound.
 * `toRecordBytes` enforces this bound (on the record as v1 JSON), dropping the derived views when a record would pass it.
 */
export function maxRecordBytes(limits: { maxBodyBytes: number; maxHeaderBytes: number }): number {
  // Text is kept when escaping adds at most a third plus 64 bytes; base64 is 4 per 3.
  const body = Math.ceil(limits.maxBodyBytes / 3) * 4 + 64;
  const head = 12 * limits.maxHeaderBytes;
  const derived = WORST_ESCAPE * (FORM_PARSE_MAX_BYTES + MULTIPART_MAX_FIELD_TEXT_BYTES) + MULTIPART_MAX_PARTS * 1024;
  return body + head + derived + FIXED_BYTES;
}
