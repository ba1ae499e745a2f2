import type { FastifyReply, FastifyRequest } from 'fastify';
import { pause, sendConfigured } from '../answers/configured.js';
import { RECEIVER_HEADERS } from '../answers/receiver-headers.js';
import { relayLocal } from '../answers/relay-local.js';
import type { WaitingSenders } from '../answers/waiting-senders.js';
import { addressKey } from '../request/address-key.js';
import { closedSignal } from '../request/closed-signal.js';
import type { EndpointKind, Store } from '../store/store.js';
import type { createTake } from './take.js';

/**
 * A capture, stage by stage (each in its own file of this folder, in this order):
 *   target.ts     which endpoint a receiver URL names
 *   admission.ts  its rate limits, and the start of its one deadline on the store
 *   take.ts       the endpoint checked, the body read, the record built and stored, the answer chosen
 *   then the answer (src/answers/): the local app's, when a responder holds the endpoint and
 *   answers in time, else the configured one after its delay.
 * Every answer from a receiver URL carries RECEIVER_HEADERS: a configured or relayed answer has
 * them in its header lines, and an error gets them on its way to the error handler.
 */
export function createCapture(deps: {
  store: Store;
  take: ReturnType<typeof createTake>;
  waitingSenders: WaitingSenders;
  /** Aborted when the app closes, so answers waiting out a configured delay go at once. */
  closing: AbortSignal;
}) {
  const { store, take, waitingSenders, closing } = deps;
  const captureOrThrow = async (
    request: FastifyRequest,
    reply: FastifyReply,
    kind: EndpointKind,
    endpointId: string,
  ) => {
    const taken = await take(request, reply, kind, endpointId);
    if (taken === undefined) return;
    // From here on the body is gone (take returned): a sender waiting out a delay or its local
    // app's answer holds its answer and its connection, never its request's bytes.
    const { seq, answer, responder, receivedAtMs } = taken;
    if (responder) {
      const local = await waitingSenders.wait(endpointId, seq, addressKey(request.ip), [closing, closedSignal(reply)]);
      if (local) return relayLocal(store, request, reply, local, { endpointId, seq, receivedAtMs });
    }
    if (answer.delayMs > 0) await pause(answer.delayMs, closing, closedSignal(reply));
    return sendConfigured(request, reply, answer);
  };
  return async (request: FastifyRequest, reply: FastifyReply, kind: EndpointKind, endpointId: string) => {
    try {
      return await captureOrThrow(request, reply, kind, endpointId);
    } catch (error) {
      if (!reply.sent) reply.headers(RECEIVER_HEADERS);
      throw error;
    }
  };
}
