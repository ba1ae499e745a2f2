import { z } from 'zod';

export const RESPONSE_STATUSES = [200, 201, 204, 400, 500] as const;

/**
 * Content types a configured answer may carry. None of them is rendered as a document by a
 * browser, and every receiver answer also carries `Content-Security-Policy: sandbox`.
 */
export const RESPONSE_CONTENT_TYPES = ['application/json', 'text/plain', 'application/xml', 'application/x-www-form-urlencoded'] as const;

export const MAX_RESPONSE_BODY_CHARS = 64 * 1024;

export const responseConfigSchema = z.strictObject({
  status: z.union(RESPONSE_STATUSES.map((status) => z.literal(status)), {
    error: `status must be one of ${RESPONSE_STATUSES.join(', ')}`,
  }),
  body: z.string().max(MAX_RESPONSE_BODY_CHARS, `body must be at most ${MAX_RESPONSE_BODY_CHARS} characters`).default(''),
  contentType: z.enum(RESPONSE_CONTENT_TYPES, { error: `contentType must be one of ${RESPONSE_CONTENT_TYPES.join(', ')}` }).default('application/json'),
});

/** What a receiver URL answers senders with. */
export type ResponseConfig = z.output<typeof responseConfigSchema>;

export const DEFAULT_RESPONSE: ResponseConfig = Object.freeze({
  status: 200,
  body: '{"ok":true}',
  contentType: 'application/json',
});

/** Validates untrusted input; the error message names each bad field. */
export function parseResponseConfig(input: unknown): { ok: true; value: ResponseConfig } | { ok: false; message: string } {
  const parsed = responseConfigSchema.safeParse(input);
  if (parsed.success) return { ok: true, value: parsed.data };
  const message = parsed.error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
  return { ok: false, message };
}
