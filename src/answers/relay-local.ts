import type { FastifyReply, FastifyRequest } from 'fastify';
import { isClosed } from '../request/closed-signal.js';
import type { RecordedAnswer } from '../shared/schemas/captured-request.js';
import type { Store } from '../store/store.js';
import { RECEIVER_HEADERS, RESPONSE_SOURCE_HEADER } from './receiver-headers.js';
import type { WaitingSenders } from './waiting-senders.js';

/**
 * Writes the local app's answer (endpoints/relayed-answer.ts) to its sender, marked `forwarded`,
 * then records on the stored request that the sender got it (announced as `answered`).
 */
export function relayLocal(
  store: Store,
  request: FastifyRequest,
  reply: FastifyReply,
  local: NonNullable<Awaited<ReturnType<WaitingSenders['wait']>>>,
  stored: { endpointId: string; seq: number; receivedAtMs: number },
): undefined {
  const { endpointId, seq, receivedAtMs } = stored;
  reply.hijack();
  const raw = reply.raw;
  const lines = [
    ...Object.entries({ ...RECEIVER_HEADERS, [RESPONSE_SOURCE_HEADER]: 'forwarded' }).flat(),
    ...local.headers.flat(),
  ];
  const noBody = local.status === 204 || local.status === 304 || request.method === 'HEAD';
  if (!noBody) lines.push('content-length', String(local.bytes.length));
  // A sender that hung up meanwhile has no 'close' to come: its answer's bytes are let go now.
  if (isClosed(reply)) local.release();
  else raw.once('close', local.release);
  raw.writeHead(local.status, lines);
  raw.end(noBody ? undefined : local.bytes);
  const recorded: RecordedAnswer = { status: local.status, delayMs: Date.now() - receivedAtMs, by: 'forwarder' };
  if (local.droppedHeaders.length > 0) recorded.droppedHeaders = local.droppedHeaders;
  store
    .setAnswer(endpointId, seq, JSON.stringify(recorded))
    .catch((error: unknown) =>
      request.log.warn({ err: error, endpointId, seq }, 'recording the relayed answer failed'),
    );
  return undefined;
}
