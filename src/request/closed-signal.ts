import type { FastifyReply } from 'fastify';

/** Whether the client's connection is gone already: its 'close' has been and will not come again. */
export function isClosed(reply: FastifyReply): boolean {
  return reply.raw.destroyed || reply.raw.closed || reply.raw.socket?.destroyed !== false;
}

/** Aborted when the client's connection closes (at once when it already has), to end a wait on its behalf. */
export function closedSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  if (isClosed(reply)) controller.abort();
  else reply.raw.once('close', () => controller.abort());
  return controller.signal;
}
