import { z } from 'zod';
import {
  DENIED_RESPONSE_HEADERS,
  MAX_RESPONSE_BODY_BYTES,
  MAX_RESPONSE_BODY_ESCAPED_BYTES,
  MAX_RESPONSE_DELAY_MS,
  MAX_RESPONSE_HEADERS,
  RESPONSE_CONTENT_TYPES,
} from './response-limits.js';

export * from './response-limits.js';

/** RFC 9110 token characters: a header name. */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]{1,64}$/;
/** Visible ASCII, spaces and tabs: no CR/LF, nothing a client could read as a new header. */
const HEADER_VALUE = /^[\t\x20-\x7e]{0,1024}$/;

export function isDeniedHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return DENIED_RESPONSE_HEADERS.some((denied) => (denied.endsWith('*') ? lower.startsWith(denied.slice(0, -1)) : lower === denied));
}

const status = z
  .number({ error: 'status must be a number' })
  .int('status must be an integer')
  .refine((value) => (value >= 200 && value <= 299) || (value >= 400 && value <= 599), 'status must be in 200-299 or 400-599');

const header = z
  .tuple([z.string(), z.string()], { error: 'each header is a [name, value] pair of strings' })
  .superRefine(([name, value], ctx) => {
    if (!HEADER_NAME.test(name)) ctx.addIssue({ code: 'custom', message: `header name ${JSON.stringify(name.slice(0, 64))} is not a valid HTTP token of at most 64 characters` });
    else if (isDeniedHeader(name)) ctx.addIssue({ code: 'custom', message: `header ${name} may not be configured` });
    if (!HEADER_VALUE.test(value)) ctx.addIssue({ code: 'custom', message: `header ${name} value must be at most 1024 visible ASCII characters` });
  });

export const responseConfigSchema = z.strictObject({
  status,
  body: z
    .string()
    .refine((value) => utf8Length(value) <= MAX_RESPONSE_BODY_BYTES, `body must be at most ${MAX_RESPONSE_BODY_BYTES} bytes of UTF-8`)
    // Stored and sent on as JSON, where a control character takes six bytes: bounded there too.
    .refine((value) => JSON.stringify(value).length - 2 <= MAX_RESPONSE_BODY_ESCAPED_BYTES, `body must be at most ${MAX_RESPONSE_BODY_ESCAPED_BYTES} bytes once JSON-escaped (a control character counts 6)`)
    .default(''),
  contentType: z.enum(RESPONSE_CONTENT_TYPES, { error: `contentType must be one of ${RESPONSE_CONTENT_TYPES.join(', ')}` }).default('application/json'),
  headers: z.array(header).max(MAX_RESPONSE_HEADERS, `at most ${MAX_RESPONSE_HEADERS} headers`).default([]),
  delayMs: z.number().int('delayMs must be an integer').min(0, 'delayMs must be at least 0').max(MAX_RESPONSE_DELAY_MS, `delayMs must be at most ${MAX_RESPONSE_DELAY_MS}`).default(0),
});

/** What a receiver URL answers senders with. */
export type ResponseConfig = z.output<typeof responseConfigSchema>;


/** Validates untrusted input; the error message names each bad field. */
export function parseResponseConfig(input: unknown): { ok: true; value: ResponseConfig } | { ok: false; message: string } {
  const parsed = responseConfigSchema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  const message = parsed.error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
  return { ok: false, message };
}

/** UTF-8 length without Node's Buffer: the page validates with this module too. */
const encoder = new TextEncoder();
function utf8Length(text: string): number {
  // Cheap bound first: a UTF-16 unit is at most 3 bytes.
  return text.length * 3 <= MAX_RESPONSE_BODY_BYTES ? text.length : encoder.encode(text).length;
}
