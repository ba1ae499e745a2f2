import { z } from 'zod';
import { MAX_AFTER_SEQ, type ClientMessage } from '../shared/protocol.js';

/** Longer than any token (16-512 characters); a wrong one is refused by the same check as an unknown one. */
const ACCESS_TOKEN = z.string().max(1024);

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
  z.strictObject({
    type: z.literal('forwarded'),
    seq: z.number().int().min(1),
    target: z.string().max(512),
    status: z.number().int().min(100).max(599).optional(),
    error: z.string().max(500).optional(),
    durationMs: z.number().min(0).max(24 * 60 * 60 * 1000),
    headers: z.array(z.tuple([z.string().max(256), z.string().max(2048)])).max(64),
    body: z.string().max(8192),
    bodyEncoding: z.enum(['utf8', 'base64']),
    bodyTruncated: z.boolean(),
  }),
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
