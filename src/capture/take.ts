import type { FastifyReply, FastifyRequest } from 'fastify';
import { answerOf, choicesFor, recordedAnswers, requestRuleInput, type Answer } from '../answers/rule-answers.js';
import type { Config } from '../config.js';
import { maxBodyBytesFor } from '../endpoints/endpoint-records.js';
import { errors } from '../errors.js';
import type { Metrics } from '../metrics.js';
import { DEFAULT_CHOICE, ONLY_DEFAULT, type AnswerChoice, type RuleInput } from '../shared/answer-rules.js';
import type { MultipartPart, RecordedAnswer } from '../shared/schemas/captured-request.js';
import { RECEIVER_PREFIXES } from '../shared/protocol.js';
import type { ResponseConfig } from '../shared/schemas/response-config.js';
import type { NewEntry, EndpointKind, Store } from '../store/store.js';
import type { Admission } from './admission.js';
import { isMultipartFormData, parseMultipart } from './multipart.js';
import { readBody, type ReadingBudget } from './read-body.js';
import { maxRecordBytes } from './record-bounds.js';
import { toRecordJson } from './to-record-json.js';
import { createUtcTimeFormatter } from './utc-time.js';

/** The record's answer for a body past the read limit: Hookwatch's own 413. */
const TOO_LARGE_ANSWERS: readonly string[] = [
  JSON.stringify({ status: 413, delayMs: 0, by: 'error' } satisfies RecordedAnswer),
];

/** Seconds a sender refused for capacity should wait. */
const CAPACITY_RETRY_AFTER_SECONDS = 1;

/** What a taken request leaves for its answer: the body is gone by then. */
export interface Taken {
  seq: number;
  /** The answer chosen, its placeholders filled in. */
  answer: Answer;
  /** Whether the local app answers in place of the default (a responder holds the endpoint). */
  responder: boolean;
  receivedAtMs: number;
}

interface TakeDeps {
  config: Pick<Config, 'requestLimits' | 'endpoints'>;
  store: Store;
  metrics: Metrics;
  readingBudget: ReadingBudget;
  admission: Admission;
  /** Whether per-capture debug lines are written (building them costs on the hot path). */
  debug: boolean;
}

/**
 * The capture's middle stages, every one that needs the body, so that the body can go as soon as
 * they end: check the endpoint (before reading anything), read the body as a stream, build the
 * record (for the configuration in force when it is stored) and store it, then work out the
 * answer. Undefined when the sender went away mid-body.
 */
export function createTake({ config, store, metrics, readingBudget, admission, debug }: TakeDeps) {
  // Kept endpoints keep less of each body (KEPT_MAX_BODY_BYTES), and redact secrets.
  const perKind = Object.fromEntries(
    (['live', 'kept'] as const).map((kind) => {
      const maxBodyBytes = maxBodyBytesFor(config.requestLimits, kind);
      return [
        kind,
        {
          limits: { maxBodyBytes, readLimitBytes: config.requestLimits.readLimitBytes },
          maxRecord: maxRecordBytes({ maxBodyBytes, maxHeaderBytes: config.requestLimits.maxHeaderBytes }),
        },
      ];
    }),
  ) as Record<EndpointKind, { limits: { maxBodyBytes: number; readLimitBytes: number }; maxRecord: number }>;
  const redactAlso = new Set(config.endpoints.redactHeaders);
  const captureOptions = { maxJsonDepth: config.requestLimits.maxJsonDepth, formatTime: createUtcTimeFormatter() };

  return async (
    request: FastifyRequest,
    reply: FastifyReply,
    kind: EndpointKind,
    endpointId: string,
  ): Promise<Taken | undefined> => {
    const receivedAtMs = Date.now();
    const giveUpAtMs = admission.giveUpAt(request, receivedAtMs);
    // Decide before reading: an unknown id costs a lookup, never a body.
    if ((await admission.beforeDeadline(store.findEndpointKind(endpointId), giveUpAtMs)) !== kind) {
      reply.header('connection', 'close');
      throw errors.ENDPOINT_NOT_FOUND();
    }

    let body;
    try {
      body = await readBody(request.raw, perKind[kind].limits, readingBudget);
    } catch (error) {
      // The sender went away mid-body: there is no one to answer and nothing complete to show.
      if (debug) request.log.debug({ endpointId, reason: (error as Error).message }, 'request aborted');
      reply.hijack();
      request.raw.socket.destroy();
      return undefined;
    }
    if (body.atCapacity) {
      reply.header('connection', 'close').header('retry-after', String(CAPACITY_RETRY_AFTER_SECONDS));
      throw errors.AT_CAPACITY('too many request bodies are being read');
    }

    const endpointPath = RECEIVER_PREFIXES[kind] + endpointId;
    let input: RuleInput | undefined;
    const inputOf = () => (input ??= requestRuleInput(request, endpointPath, body));
    /** The choices of the entry last built: the store takes one of them. */
    let choices: readonly AnswerChoice[] = ONLY_DEFAULT;
    let appended;
    try {
      const contentType = headerValue(request.raw.rawHeaders, 'content-type');
      let parts: MultipartPart[] | null = null;
      if (isMultipartFormData(contentType)) parts = await parseMultipart(body.bytes, contentType, body.truncated);
      // The entry follows the configuration in force when it is stored; the store adds the
      // answer it picks among the choices. An object literal here, not a spread of a prepared
      // one: a spread changes the object's shape and slows every later property read
      // (docs/performance.md).
      const recordFor = (response: ResponseConfig, redact: boolean): NewEntry => {
        choices = body.overLimit ? ONLY_DEFAULT : choicesFor(response, inputOf);
        const json = toRecordJson(
          {
            method: request.method,
            url: request.raw.url ?? '',
            endpointPath,
            rawHeaders: request.raw.rawHeaders,
            body: body.bytes,
            size: body.size,
            truncated: body.truncated,
            remoteAddress: request.ip,
            receivedAtMs,
            parts,
            // Secrets go before storage (kept endpoints, unless their creator chose otherwise), so
            // nothing redacted is stored, logged or sent.
            ...(redact ? { redact: redactAlso } : {}),
          },
          captureOptions,
          perKind[kind].maxRecord,
        );
        return { json, choices, answers: body.overLimit ? TOO_LARGE_ANSWERS : recordedAnswers(response, choices) };
      };
      // Not raced here: once the store has run the capture, its answer stands (a 503 after it
      // stored the request would make the sender's retry a second copy). The store bounds its
      // own wait and refuses to store past what is left of the deadline (store.ts, appendRequest).
      appended = await store.appendRequest(endpointId, kind, recordFor, receivedAtMs, giveUpAtMs);
    } finally {
      readingBudget.give(body.bytes.length);
    }
    if (appended === undefined) throw errors.ENDPOINT_NOT_FOUND();
    const { seq, response } = appended;

    metrics.capturedRequests.inc();
    metrics.capturedBytes.inc(body.size);
    if (body.truncated) metrics.truncations.inc();
    if (debug) request.log.debug({ endpointId, seq, method: request.method, size: body.size }, 'request captured');

    if (body.overLimit) {
      // The rest of the body was never read: close the connection rather than drain it.
      reply.header('connection', 'close');
      throw errors.BODY_TOO_LARGE(config.requestLimits.readLimitBytes);
    }
    // Placeholders are filled in now, while the body is here: the answer is all a wait keeps.
    const choice = choices[appended.choice] ?? DEFAULT_CHOICE;
    const answer = answerOf(response, choice, inputOf, seq);
    // A rule that matches answers before the local app does (a provider's URL check keeps
    // working while `hookwatch forward --respond` runs); the local app answers in place of the
    // default answer only.
    return { seq, answer, responder: appended.responder && choice.rule === -1, receivedAtMs };
  };
}

function headerValue(rawHeaders: string[], lowerName: string): string | null {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === lowerName.length && name.toLowerCase() === lowerName) return rawHeaders[i + 1] as string;
  }
  return null;
}
