import { z } from 'zod';
import { MAX_AFTER_SEQ, type ClientMessage } from '../shared/protocol.js';

/** Longer than any token (16-512 characters); a wrong one is refused by the same check as an unknown one. */
const ACCESS_TOKEN = z.string().max(1024);

/** RFC 9110 tokens: what a method and a header name may be. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** A header value node:http will send: no line breaks or NUL, which would split the message. */
const HEADER_VALUE = /^[^\r\n\0]*$/;
/** A path and query as sent on a request line: from `/`, no spaces or control characters. */
const REQUEST_PATH = /^\/[\x21-\x7e]*$/;
/** A tab's replay id; a forwarder answers under the server's relay id (`<watcher>.<tab's id>`). */
const REPLAY_ID = /^[A-Za-z0-9_-]{1,64}$/;
const RELAY_ID = /^[A-Za-z0-9_-]{1,64}\.[A-Za-z0-9_-]{1,64}$/;

/** The fields of an answer as a forwarder reports it (`forwarded`, `replay-result`), with the page's limits. */
const reportedAnswer = {
  seq: z.number().int().min(1),
  target: z.string().max(512),
  status: z.number().int().min(100).max(599).optional(),
  error: z.string().max(500).optional(),
  durationMs: z.number().min(0).max(24 * 60 * 60 * 1000),
  headers: z.array(z.tuple([z.string().max(256), z.string().max(2048)])).max(64),
  body: z.string().max(8192),
  bodyEncoding: z.enum(['utf8', 'base64']),
  bodyTruncated: z.boolean(),
};

const clientMessageSchema = z.discriminatedUnion('type', [
  // The choices themselves are validated by the endpoint service, as for POST /api/endpoints.
  z.strictObject({
    type: z.literal('create'),
    kind: z.enum(['live', 'kept']).optional(),
    ttlMs: z.number().optional(),
    name: z.string().max(200).optional(),
    redact: z.boolean().optional(),
    token: ACCESS_TOKEN.optional(),
  }),
  z.strictObject({
    type: z.literal('join'),
    endpointId: z.string().min(1).max(64),
    // Left out only by a signed-in creator (endpoint-service.ts, authorize).
    key: z.string().min(1).max(128).optional(),
    token: ACCESS_TOKEN.optional(),
    // Far past any real count, below where numbers stop being exact (a resume past the last seq moves the numbering there).
    afterSeq: z.number().int().min(0).max(MAX_AFTER_SEQ).optional(),
  }),
  // The response itself is validated by parseResponseConfig, for a message naming each field.
  z.strictObject({ type: z.literal('set-response'), response: z.unknown() }),
  z.strictObject({ type: z.literal('clear') }),
  z.strictObject({ type: z.literal('forwarded'), ...reportedAnswer }),
  z.strictObject({ type: z.literal('claim-responder') }),
  z.strictObject({
    type: z.literal('local-answer'),
    seq: z.number().int().min(1),
    status: z.number().int().min(100).max(599),
    headers: z.array(z.tuple([z.string().max(256), z.string().max(8192)])).max(100),
    // A 1 MiB body in base64, with room to say it is too large rather than fail to parse.
    body: z.string().max(1_500_000),
    bodyEncoding: z.enum(['utf8', 'base64']),
  }),
  z.strictObject({ type: z.literal('announce-forwarder'), target: z.string().max(512) }),
  z.strictObject({
    type: z.literal('replay'),
    id: z.string().regex(REPLAY_ID, 'id must be 1-64 of A-Z a-z 0-9 _ -'),
    seq: z.number().int().min(1),
    edited: z
      .strictObject({
        method: z.string().max(32).regex(TOKEN, 'method must be an HTTP method token'),
        path: z.string().max(8192).regex(REQUEST_PATH, 'path must start with / and hold no spaces or control characters'),
        headers: z
          .array(z.tuple([z.string().max(256).regex(TOKEN, 'a header name must be an HTTP token'), z.string().max(8192).regex(HEADER_VALUE, 'a header value must not hold a line break or NUL')]))
          .max(100),
        // The body cap is the endpoint's (checked by the session); this only bounds the parse.
        body: z.string().max(1_450_000),
        bodyEncoding: z.enum(['utf8', 'base64']),
      })
      .optional(),
  }),
  z.strictObject({ type: z.literal('replay-started'), id: z.string().regex(RELAY_ID), seq: z.number().int().min(1), target: z.string().max(512) }),
  z.strictObject({ type: z.literal('replay-result'), id: z.string().regex(RELAY_ID), ...reportedAnswer }),
]);

export type ParsedClientMessage =
  | { ok: true; message: ClientMessage | { type: 'set-response'; response: unknown } }
  | { ok: false; type: string | undefined; problem: string };

/** Parses one text frame from a browser. Never throws. */
export function parseClientMessage(text: string): ParsedClientMessage {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, type: undefined, problem: 'not JSON' };
  }
  const parsed = clientMessageSchema.safeParse(data);
  if (parsed.success) return { ok: true, message: parsed.data };
  const type = typeof data === 'object' && data !== null && typeof (data as { type?: unknown }).type === 'string' ? (data as { type: string }).type : undefined;
  const problem = parsed.error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
  return { ok: false, type, problem };
}
