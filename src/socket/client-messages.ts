import type { z } from 'zod';
import { clientFrameSchema } from '../shared/schemas/live-messages.js';

/** A client's message, its `set-response` configuration not checked yet (parseResponseConfig does). */
export type ParsedClientMessage =
  { ok: true; message: z.output<typeof clientFrameSchema> } | { ok: false; type: string | undefined; problem: string };

/** Parses one text frame from a browser. Never throws. */
export function parseClientMessage(text: string): ParsedClientMessage {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { ok: false, type: undefined, problem: 'not JSON' };
  }
  const parsed = clientFrameSchema.safeParse(data);
  if (parsed.success) return { ok: true, message: parsed.data };
  const type =
    typeof data === 'object' && data !== null && typeof (data as { type?: unknown }).type === 'string'
      ? (data as { type: string }).type
      : undefined;
  const problem = parsed.error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message))
    .join('; ');
  return { ok: false, type, problem };
}
