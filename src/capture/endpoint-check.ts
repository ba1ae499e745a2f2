import type { FastifyReply } from 'fastify';
import { errors } from '../errors.js';
import type { EndpointKind, Store } from '../store/store.js';
import type { Admission } from './admission.js';

/**
 * Decides before reading: an unknown id, or one of the other kind, costs a lookup, never a body
 * (404, and the connection closes rather than drain what the sender still sends).
 */
export async function checkEndpoint(
  deps: { store: Store; admission: Admission },
  reply: FastifyReply,
  kind: EndpointKind,
  endpointId: string,
  giveUpAtMs: number,
): Promise<void> {
  if ((await deps.admission.beforeDeadline(deps.store.findEndpointKind(endpointId), giveUpAtMs)) === kind) return;
  reply.header('connection', 'close');
  throw errors.ENDPOINT_NOT_FOUND();
}
