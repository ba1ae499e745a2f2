import { z } from 'zod';
import type { ClientMessage } from './protocol.js';

const clientMessageSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('create') }),
  z.strictObject({
    type: z.literal('join'),
    endpointId: z.string().min(1).max(64),
    key: z.string().min(1).max(128),
    afterSeq: z.number().int().min(0).optional(),
  }),
  // The response itself is validated by parseResponseConfig, for a message naming each field.
  z.strictObject({ type: z.literal('set-response'), response: z.unknown() }),
  z.strictObject({ type: z.literal('clear') }),
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
