/**
 * The captured-request record: what the receiver stores and every watcher, the page and the CLI
 * read (docs/protocol.md). Encoded by capture/to-record.ts (header JSON and raw body), never parsed back with these
 * schemas: they give its types and its OpenAPI description.
 */
import { z } from 'zod';
import { bodyEncoding, count, dateTime } from './fields.js';

export const paramMapSchema = z
  .record(z.string(), z.union([z.string(), z.array(z.string())]))
  .describe('A query string or form body: a repeated name becomes a list, in the order received.');
export type ParamMap = z.infer<typeof paramMapSchema>;

/** One part of a multipart body. A file's bytes are `body` bytes [offset, offset + size). */
export const multipartPartSchema = z
  .strictObject({
    name: z.string().describe('The field name.'),
    filename: z.string().nullable().describe("A file part's file name, else null."),
    contentType: z.string().nullable().describe("The part's Content-Type, or null."),
    size: count("Bytes of the part's content that were stored."),
    offset: z
      .int()
      .min(0)
      .nullable()
      .describe('Where the content starts in the decoded stored body; null when it could not be located.'),
    text: z.string().nullable().describe("A field part's text (64 KiB for all fields together), else null."),
    truncated: z.boolean().describe('The stored body (or a parser limit) cut this part short.'),
  })
  .describe('One part of a `multipart/form-data` body.');
export type MultipartPart = z.infer<typeof multipartPartSchema>;

/**
 * The answer a request's sender got: its status, the delay before it, and who chose it: the
 * endpoint's default answer, one of its rules (`rule` its index, `name` when it has one), the
 * local app through `hookwatch forward --respond` (set once the sender has it, announced as
 * `answered`), or Hookwatch's own error (413 past the read limit).
 */
export const recordedAnswerSchema = z
  .strictObject({
    status: z
      .int()
      .min(100)
      .max(599)
      .describe("The status sent: the default answer's, a rule's, the local app's, or 413 past the read limit."),
    delayMs: count("The delay before the answer (for the local app's: how long the sender waited for it)."),
    by: z
      .enum(['default', 'rule', 'forwarder', 'error'])
      .describe(
        "The default answer, a rule, the local app through `hookwatch forward --respond`, or Hookwatch's own 413.",
      ),
    rule: count("`by: rule`: the rule's index.").optional(),
    name: z.string().describe("`by: rule`: the rule's name, when it has one.").optional(),
    droppedHeaders: z
      .array(z.string())
      .describe("`by: forwarder`: the local app's headers not passed on (hop-by-hop or denied), lower case.")
      .optional(),
  })
  .describe('What the sender got, and who chose it.');
export type RecordedAnswer = z.infer<typeof recordedAnswerSchema>;

/**
 * One captured request, exactly as it is stored and sent to watchers. Its fields are in the
 * order the capture writes them: `answer` last, so the store can add it to a record built
 * before the answer was chosen.
 */
export const capturedRequestSchema = z
  .strictObject({
    seq: z.int().min(1).describe('Per-endpoint sequence number from 1, strictly increasing, never reused.'),
    method: z.string().describe('As received: every method Node parses except CONNECT.'),
    url: z
      .string()
      .describe(
        'The raw request target: path and query exactly as sent (kept endpoints: secrets written %5Bredacted%5D).',
      ),
    subPath: z.string().describe('The path after the receiver URL, "" when none.'),
    query: paramMapSchema,
    headers: z
      .array(z.tuple([z.string(), z.string()]))
      .describe(
        '[name, value] pairs in arrival order, original case, duplicates kept (each byte one Latin-1 character).',
      ),
    contentType: z.string().nullable().describe('The first Content-Type header, or null.'),
    body: z
      .string()
      .describe(
        'The stored bytes: UTF-8 text when valid UTF-8 and JSON escaping adds no more than base64 would (a third), else base64.',
      ),
    bodyEncoding,
    isJson: z.boolean().describe('The complete body parses as JSON, whatever the content type.'),
    form: paramMapSchema
      .nullable()
      .describe('Fields of an `application/x-www-form-urlencoded` body of at most 64 KiB, else null.'),
    parts: z.array(multipartPartSchema).nullable().describe('The parts of a `multipart/form-data` body, else null.'),
    omitted: z.array(z.enum(['form', 'parts', 'query'])).describe('Derived views left out to keep the record bounded.'),
    size: count('Bytes the sender sent (past the read limit: bytes read before stopping).'),
    storedSize: count('Bytes held in `body` once decoded.'),
    truncated: z.boolean().describe('`size > storedSize`.'),
    remoteAddress: z
      .string()
      .describe('The sender address (from X-Forwarded-For only when TRUST_PROXY trusts the proxy).'),
    receivedAt: dateTime('Capture time, UTC with milliseconds.'),
    redacted: z
      .array(z.string())
      .describe('Kept endpoints: the headers whose values were replaced by `[redacted]` before storage.')
      .optional(),
    redactedQuery: z
      .array(z.string())
      .describe('Kept endpoints: the query parameters whose values were replaced by `[redacted]` before storage.')
      .optional(),
    answer: recordedAnswerSchema,
  })
  .describe('One captured request, exactly as stored and sent to watchers (docs/protocol.md, `request`).');
export type CapturedRequest = z.infer<typeof capturedRequestSchema>;

/** A captured request before the store numbers it. */
export type RequestDraft = Omit<CapturedRequest, 'seq'>;
