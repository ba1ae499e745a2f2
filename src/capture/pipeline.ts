import type { FastifyReply, FastifyRequest } from 'fastify';
import { pause, sendConfigured } from '../answers/configured.js';
import { RECEIVER_HEADERS } from '../answers/receiver-headers.js';
import { relayLocal } from '../answers/relay-local.js';
import { answerOf, type Answer } from '../answers/rule-answers.js';
import type { WaitingSenders } from '../answers/waiting-senders.js';
import type { Config } from '../config.js';
import type { Metrics } from '../metrics.js';
import { addressKey } from '../request/address-key.js';
import { closedSignal } from '../request/closed-signal.js';
import { DEFAULT_CHOICE } from '../shared/answer-rules.js';
import type { EndpointKind, Store } from '../store/store.js';
import type { Admission } from './admission.js';
import { createBodyReader } from './body.js';
import { checkEndpoint } from './endpoint-check.js';
import type { ReadingBudget } from './read-body.js';
import { createRecordBuilder } from './record.js';
import { createRequestStorer } from './store-request.js';

/** What a taken request leaves for its answer: the body is gone by then. */
interface Taken {
  seq: number;
  /** The answer chosen, its placeholders filled in. */
  answer: Answer;
  /** Whether the local app answers in place of the default (a responder holds the endpoint). */
  responder: boolean;
  receivedAtMs: number;
}

/**
 * A capture, stage by stage, each in its own file of this folder, in this order:
 *   target.ts          which endpoint a receiver URL names (the route)
 *   admission.ts       its rate limits, and the start of its one deadline on the store (the route)
 *   endpoint-check.ts  the endpoint, before a byte of the body is read
 *   body.ts            the body, read as a stream within its limits and the reading budget
 *   record.ts          the record, built for the configuration in force when it is stored
 *   store-request.ts   stored (and announced by the store), counted
 *   then the answer (src/answers/): chosen while the body is still here, then the local app's,
 *   when a responder holds the endpoint and answers in time, else the configured one after its
 *   delay. Every answer from a receiver URL carries RECEIVER_HEADERS: a configured or relayed
 *   answer has them in its header lines, and an error gets them on its way to the error handler.
 */
export function createCapture(deps: {
  config: Pick<Config, 'requestLimits' | 'endpoints'>;
  store: Store;
  metrics: Metrics;
  readingBudget: ReadingBudget;
  admission: Admission;
  waitingSenders: WaitingSenders;
  /** Aborted when the app closes, so answers waiting out a configured delay go at once. */
  closing: AbortSignal;
  /** Whether per-capture debug lines are written (building them costs on the hot path). */
  debug: boolean;
}) {
  const { config, store, metrics, readingBudget, admission, waitingSenders, closing, debug } = deps;
  const readBody = createBodyReader({ config, readingBudget, debug });
  const buildRecord = createRecordBuilder(config);
  const storeRequest = createRequestStorer({ config, store, metrics, debug });

  /** Every stage that needs the body, so that the body can go as soon as they end; undefined when the sender went away mid-body. */
  const take = async (
    request: FastifyRequest,
    reply: FastifyReply,
    kind: EndpointKind,
    endpointId: string,
  ): Promise<Taken | undefined> => {
    const receivedAtMs = Date.now();
    const giveUpAtMs = admission.giveUpAt(request, receivedAtMs);
    await checkEndpoint({ store, admission }, reply, kind, endpointId, giveUpAtMs);
    const body = await readBody(request, reply, kind, endpointId);
    if (body === undefined) return undefined;
    try {
      const prepared = await buildRecord(request, body, kind, endpointId, receivedAtMs);
      const appended = await storeRequest(request, reply, body, prepared.recordFor, {
        kind,
        endpointId,
        receivedAtMs,
        giveUpAtMs,
      });
      // Placeholders are filled in now, while the body is here: the answer is all a wait keeps.
      const choice = prepared.choices()[appended.choice] ?? DEFAULT_CHOICE;
      const answer = answerOf(appended.response, choice, prepared.inputOf, appended.seq);
      // A rule that matches answers before the local app does (a provider's URL check keeps
      // working while `hookwatch forward --respond` runs); the local app answers in place of the
      // default answer only.
      return { seq: appended.seq, answer, responder: appended.responder && choice.rule === -1, receivedAtMs };
    } finally {
      readingBudget.give(body.bytes.length);
    }
  };

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
