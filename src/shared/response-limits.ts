/**
 * The response configuration's default and limits, without its schema: the page imports these
 * (response-config.ts builds a zod schema when it loads, which the page's bundle cannot afford).
 */

/**
 * Content types a configured answer may carry. None of them is rendered as a document by a
 * browser, and every receiver answer also carries `Content-Security-Policy: sandbox`.
 */
export const RESPONSE_CONTENT_TYPES = [
  'application/json',
  'text/plain',
  'application/xml',
  'application/x-www-form-urlencoded',
] as const;

export const MAX_RESPONSE_BODY_BYTES = 64 * 1024;
/** Twice the body cap: room for a body of quotes or backslashes, not for one of control characters. */
export const MAX_RESPONSE_BODY_ESCAPED_BYTES = 2 * MAX_RESPONSE_BODY_BYTES;
export const MAX_RESPONSE_HEADERS = 10;
/** The whole configuration, its rules included, as JSON: it travels in one API body or socket message (512 KiB). */
export const MAX_RESPONSE_CONFIG_JSON_BYTES = 384 * 1024;
export const MAX_RESPONSE_DELAY_MS = 30_000;

/**
 * Headers a configured answer (or a local app's, relayed) may not set: the ones that would set
 * cookies, redirect, change CORS or CSP, frame the message differently, pose as Hookwatch's own
 * answers, or act on the whole origin rather than this one answer (reporting endpoints, auth
 * prompts, service-worker scope, downloads, client hints, alternative services). Names ending in
 * `*` are prefixes.
 */
export const DENIED_RESPONSE_HEADERS = [
  'set-cookie',
  'set-cookie2',
  'location',
  'refresh',
  'content-security-policy*',
  'x-content-type-options',
  'x-frame-options',
  'access-control-*',
  'cross-origin-*',
  'content-length',
  'content-type',
  'content-encoding',
  'transfer-encoding',
  'connection',
  'keep-alive',
  'upgrade',
  'trailer',
  'te',
  'proxy-*',
  'strict-transport-security',
  'clear-site-data',
  'link',
  'nel',
  'report-to',
  'reporting-endpoints',
  'www-authenticate',
  'service-worker-allowed',
  'service-worker',
  'content-disposition',
  'alt-svc',
  'accept-ch',
  'critical-ch',
  'origin-agent-cluster',
  'permissions-policy',
  'feature-policy',
  'document-policy',
  'require-document-policy',
  'expect-ct',
  'public-key-pins*',
  'speculation-rules',
  'sourcemap',
  'x-sourcemap',
  'x-hookwatch-*',
  ':*',
] as const;

/** The answer of a new endpoint: 200 with a small JSON body. */
export const DEFAULT_RESPONSE = Object.freeze({
  status: 200,
  body: '{"ok":true}',
  contentType: 'application/json' as const,
  headers: [] as Array<[string, string]>,
  delayMs: 0,
});
