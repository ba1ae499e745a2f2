import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions, onRequestHookHandler } from 'fastify';
import { toRecordJson } from '../capture/to-record-json.js';
import type { MultipartPart } from '../shared/schemas/captured-request.js';
import { isMultipartFormData, parseMultipart } from '../capture/multipart.js';
import { readBody, type ReadingBudget } from '../capture/read-body.js';
import { maxBodyBytesFor } from '../endpoints/endpoint-records.js';
import { maxRecordBytes } from '../capture/record-bounds.js';
import { createUtcTimeFormatter } from '../capture/utc-time.js';
import type { Config } from '../config.js';
import { errors } from '../errors.js';
import { RECEIVER_PREFIXES } from '../shared/protocol.js';
import { deadline } from '../shared/deadline.js';
import type { Metrics } from '../metrics.js';
import type { ResponseConfig } from '../shared/schemas/response-config.js';
import type { Draft, EndpointKind, Store } from '../store/store.js';
import { DEFAULT_CHOICE, ONLY_DEFAULT, type AnswerChoice, type RuleInput } from '../shared/answer-rules.js';
import type { RecordedAnswer } from '../shared/schemas/captured-request.js';
import type { WaitingSenders } from './waiting-senders.js';
import { answerOf, choicesFor, recordedAnswers, requestRuleInput, type Answer } from './rule-answers.js';
import { addressKey } from './address-key.js';
import { createLimits } from './rate-limit.js';
import { RECEIVER_HEADERS, RESPONSE_SOURCE_HEADER } from './answers.js';
import { RECEIVER_METHODS } from './methods.js';
import { closedSignal, isClosed } from './closed-signal.js';

export interface ReceiverRouteOptions {
  config: Config;
  store: Store;
  metrics: Metrics;
  readingBudget: ReadingBudget;
  /** Aborted when the app closes, so answers waiting out a configured delay go at once. */
  closing: AbortSignal;
  /** Senders waiting for their local app's answer. */
  waitingSenders: WaitingSenders;
}

/**
 * Captures a request to a receiver URL the router could not take (a malformed `%` escape in the
 * sub-path): still a request to the endpoint, so it is limited and captured like any other.
 */
export type CaptureUnrouted = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

/** The record's answer for a body past the read limit: Hookwatch's own 413. */
const TOO_LARGE_ANSWERS: readonly string[] = [JSON.stringify({ status: 413, delayMs: 0, by: 'error' } satisfies RecordedAnswer)];

/** Seconds a sender refused for capacity should wait. */
const CAPACITY_RETRY_AFTER_SECONDS = 1;

/**
 * `ANY /api/webhook-tester/<id>[/any/sub/path][?query]` (live) and the same under
 * `/api/webhook-endpoint/` (kept): checks the limits and the endpoint before reading anything,
 * then reads the body as a stream, captures and stores the request (the store announces it to
 * watchers), and answers with the endpoint's response configuration.
 */
export function addReceiverRoutes(app: FastifyInstance, options: ReceiverRouteOptions): CaptureUnrouted {
  const { config, store, metrics, readingBudget, closing, waitingSenders } = options;
  // Only a store over the network can stall; in memory and on SQLite a step costs no timer.
  const mayStall = config.redisUrl !== undefined || config.redisSentinels !== undefined || config.redisClusterNodes !== undefined;
  const beforeDeadline = <T>(step: Promise<T>, giveUpAtMs: number): Promise<T> => (mayStall ? raceDeadline(step, giveUpAtMs) : step);
  // Kept endpoints keep less of each body (KEPT_MAX_BODY_BYTES), and redact secrets.
  const perKind = Object.fromEntries(
    (['live', 'kept'] as const).map((kind) => {
      const maxBodyBytes = maxBodyBytesFor(config, kind);
      return [kind, { limits: { maxBodyBytes, readLimitBytes: config.readLimitBytes }, maxRecord: maxRecordBytes({ maxBodyBytes, maxHeaderBytes: config.maxHeaderBytes }) }];
    }),
  ) as Record<EndpointKind, { limits: { maxBodyBytes: number; readLimitBytes: number }; maxRecord: number }>;
  const redactAlso = new Set(config.redactHeaders);
  const captureOptions = { maxJsonDepth: config.maxJsonDepth, formatTime: createUtcTimeFormatter() };
  // Skip building the per-capture log object when nobody would see it (the hot path).
  const debug = ['debug', 'trace'].includes(app.log.level);

  const windowMs = config.rateLimitWindowMs;
  const limits = [
    config.rateLimitPerAddress > 0 && { max: config.rateLimitPerAddress, windowMs, key: (request: FastifyRequest) => `receiver-address:${addressKey(request.ip)}` },
    config.rateLimitPerEndpoint > 0 && { max: config.rateLimitPerEndpoint, windowMs, key: (request: FastifyRequest) => `receiver-endpoint:${endpointIdOf(request)}` },
  ].filter((limit) => limit !== false);
  const limited = createLimits(app, limits);
  const receiverHeaders = (reply: FastifyReply) => reply.headers(RECEIVER_HEADERS);

  /** When each request arrived (its rate limits were asked): the start of its capture's one deadline. */
  const arrivals = new WeakMap<object, number>();
  /** The per-address limit, then the per-endpoint one (rate-limit.ts: a refused request counts once). */
  const checkRateLimits = (request: FastifyRequest, reply: FastifyReply) => {
    if (!mayStall) return limited(request, reply, receiverHeaders);
    const arrivedAtMs = Date.now();
    arrivals.set(request.raw, arrivedAtMs);
    return beforeDeadline(limited(request, reply, receiverHeaders), arrivedAtMs + config.redisCommandTimeoutMs);
  };

  /**
   * Every answer from a receiver URL carries RECEIVER_HEADERS: a configured answer has them in its
   * prepared header lines, and an error (thrown here or by the rate limits) gets them on its way
   * to the error handler. (Not an onRequest hook: that ran on every request, and set five headers
   * through Fastify that a configured answer then wrote again.)
   */
  const capture = async (request: FastifyRequest, reply: FastifyReply, kind: EndpointKind, endpointId: string) => {
    try {
      return await captureOrThrow(request, reply, kind, endpointId);
    } catch (error) {
      if (!reply.sent) reply.headers(RECEIVER_HEADERS);
      throw error;
    }
  };

  const captureOrThrow = async (request: FastifyRequest, reply: FastifyReply, kind: EndpointKind, endpointId: string) => {
    const taken = await take(request, reply, kind, endpointId);
    if (taken === undefined) return;
    // From here on the body is gone (take returned): a sender waiting out a delay or its local
    // app's answer holds its answer and its connection, never its request's bytes.
    const { seq, answer, responder, receivedAtMs } = taken;
    if (responder) {
      const local = await waitingSenders.wait(endpointId, seq, addressKey(request.ip), [closing, closedSignal(reply)]);
      if (local) return relayLocal(request, reply, local, endpointId, seq, receivedAtMs);
    }
    if (answer.delayMs > 0) await pause(answer.delayMs, closing, closedSignal(reply));
    return sendConfigured(request, reply, answer);
  };

  /**
   * Checks the endpoint, reads the body, stores the request and works out its answer: every
   * step that needs the body, so that the body can go as soon as this returns. Undefined when
   * the sender went away mid-body. The store calls of one capture share one deadline
   * (REDIS_COMMAND_TIMEOUT_MS from its arrival): the rate limits and the endpoint check give up
   * at it, and the append is refused by the store once it is near, so a stalled store costs a
   * sender about that long, not that long per call.
   */
  const take = async (request: FastifyRequest, reply: FastifyReply, kind: EndpointKind, endpointId: string) => {
    const receivedAtMs = Date.now();
    const giveUpAtMs = (arrivals.get(request.raw) ?? receivedAtMs) + config.redisCommandTimeoutMs;
    // Decide before reading: an unknown id costs a lookup, never a body.
    if ((await beforeDeadline(store.findEndpointKind(endpointId), giveUpAtMs)) !== kind) {
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
    /** The choices of the draft last built: the store takes one of them. */
    let choices: readonly AnswerChoice[] = ONLY_DEFAULT;
    let appended;
    try {
      const contentType = headerValue(request.raw.rawHeaders, 'content-type');
      let parts: MultipartPart[] | null = null;
      if (isMultipartFormData(contentType)) parts = await parseMultipart(body.bytes, contentType, body.truncated);
      // The draft follows the configuration in force when it is stored; the store adds the
      // answer it picks among the choices. An object literal here, not a spread of a prepared
      // one: a spread changes the object's shape and slows every later property read
      // (docs/performance.md).
      const recordFor = (response: ResponseConfig, redact: boolean): Draft => {
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
      throw errors.BODY_TOO_LARGE(config.readLimitBytes);
    }
    // Placeholders are filled in now, while the body is here: the answer is all a wait keeps.
    const choice = choices[appended.choice] ?? DEFAULT_CHOICE;
    const answer = answerOf(response, choice, inputOf, seq);
    // A rule that matches answers before the local app does (a provider's URL check keeps
    // working while `hookwatch forward --respond` runs); the local app answers in place of the
    // default answer only.
    return { seq, answer, responder: appended.responder && choice.rule === -1, receivedAtMs };
  };

  /**
   * Writes the local app's answer (endpoints/relayed-answer.ts) marked `forwarded`, then records on the
   * stored request that the sender got it (announced as `answered`).
   */
  const relayLocal = (request: FastifyRequest, reply: FastifyReply, local: NonNullable<Awaited<ReturnType<WaitingSenders['wait']>>>, endpointId: string, seq: number, receivedAtMs: number) => {
    reply.hijack();
    const raw = reply.raw;
    const lines = [...Object.entries({ ...RECEIVER_HEADERS, [RESPONSE_SOURCE_HEADER]: 'forwarded' }).flat(), ...local.headers.flat()];
    const noBody = local.status === 204 || local.status === 304 || request.method === 'HEAD';
    if (!noBody) lines.push('content-length', String(local.bytes.length));
    // A sender that hung up meanwhile has no 'close' to come: its answer's bytes are let go now.
    if (isClosed(reply)) local.release();
    else raw.once('close', local.release);
    raw.writeHead(local.status, lines);
    raw.end(noBody ? undefined : local.bytes);
    const recorded: RecordedAnswer = { status: local.status, delayMs: Date.now() - receivedAtMs, by: 'forwarder' };
    if (local.droppedHeaders.length > 0) recorded.droppedHeaders = local.droppedHeaders;
    store.setAnswer(endpointId, seq, JSON.stringify(recorded)).catch((error: unknown) => request.log.warn({ err: error, endpointId, seq }, 'recording the relayed answer failed'));
    return undefined;
  };

  // Fastify gives every request a child logger bound to its reqId. That binding only ties
  // together the per-request lines, which this route writes at debug and trace; above those a
  // child would be built for every capture and never used (docs/performance.md), so the route logs
  // through the app's logger instead.
  const childLoggerFactory: RouteOptions['childLoggerFactory'] = (logger, bindings, childOptions) =>
    debug ? logger.child(bindings, childOptions) : logger;

  for (const kind of ['live', 'kept'] as const) {
    const handler = (request: FastifyRequest, reply: FastifyReply) => capture(request, reply, kind, endpointIdOf(request));
    for (const url of [`${RECEIVER_PREFIXES[kind]}:id`, `${RECEIVER_PREFIXES[kind]}:id/*`]) {
      app.route({ method: RECEIVER_METHODS, url, onRequest: limits.length > 0 ? (checkRateLimits as onRequestHookHandler) : [], childLoggerFactory, handler });
    }
  }

  return async (request, reply) => {
    const target = receiverTarget(request.raw.url ?? '');
    if (!target) {
      reply.headers(RECEIVER_HEADERS);
      throw errors.BAD_REQUEST();
    }
    await checkRateLimits(request, reply);
    return capture(request, reply, target.kind, target.endpointId);
  };
}

/**
 * The step's result, or STORE_UNAVAILABLE once `giveUpAtMs` passes first (the step goes on, and
 * what it finally says is dropped: a late capture is refused by the store itself, see appendRequest).
 */
async function raceDeadline<T>(step: Promise<T>, giveUpAtMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(errors.STORE_UNAVAILABLE()), Math.max(0, giveUpAtMs - Date.now()));
  });
  try {
    return await Promise.race([step, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits `ms`, or less when a signal aborts first. */
function pause(ms: number, ...signals: AbortSignal[]): Promise<void> {
  const wait = deadline(ms, ...signals);
  if (wait.signal.aborted) return Promise.resolve();
  return new Promise((resolve) => wait.signal.addEventListener('abort', () => resolve(), { once: true }));
}

function endpointIdOf(request: FastifyRequest): string {
  return (request.params as { id?: string } | null)?.id ?? receiverTarget(request.raw.url ?? '')?.endpointId ?? '';
}

/** Which receiver and endpoint id a raw request target names, read without decoding it. */
export function receiverTarget(url: string): { kind: EndpointKind; endpointId: string } | undefined {
  // Origin-form (`/api/…`) or absolute-form (`http://host/api/…`).
  const pathStart = url.charCodeAt(0) === 0x2f /* / */ ? 0 : url.indexOf('/', url.indexOf('//') + 2);
  if (pathStart === -1) return undefined;
  for (const kind of ['live', 'kept'] as const) {
    const prefix = RECEIVER_PREFIXES[kind];
    if (!url.startsWith(prefix, pathStart)) continue;
    const rest = url.slice(pathStart + prefix.length);
    const end = rest.search(/[/?]/);
    const endpointId = end === -1 ? rest : rest.slice(0, end);
    if (endpointId !== '') return { kind, endpointId };
  }
  return undefined;
}

function headerValue(rawHeaders: string[], lowerName: string): string | null {
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === lowerName.length && name.toLowerCase() === lowerName) return rawHeaders[i + 1] as string;
  }
  return null;
}

function sendConfigured(request: FastifyRequest, reply: FastifyReply, response: Answer) {
  const preflightMethod = request.method === 'OPTIONS' ? request.headers['access-control-request-method'] : undefined;
  if (preflightMethod !== undefined) {
    // A CORS preflight is captured like any request, but answered so the browser lets the real
    // request through whatever status is configured.
    const requestedHeaders = request.headers['access-control-request-headers'];
    reply.headers(RECEIVER_HEADERS).header(RESPONSE_SOURCE_HEADER, 'configured');
    reply.headers({
      'access-control-allow-methods': preflightMethod,
      'access-control-max-age': '600',
      ...(requestedHeaders === undefined ? {} : { 'access-control-allow-headers': requestedHeaders }),
    });
    return reply.code(204).send();
  }
  const answer = preparedAnswers.get(response) ?? prepareAnswer(response);
  // Written on the raw response, the header lines prepared once per configuration: through
  // Fastify each answer set, lowercased and re-read every header and parsed its content type.
  // No hook of this route runs after the handler (onSend, onResponse), so nothing is skipped.
  reply.hijack();
  const raw = reply.raw;
  if (answer.body === undefined) {
    // As Fastify answers with no payload: Content-Length 0, except for 204 and HEAD.
    raw.writeHead(answer.status, answer.status !== 204 && request.method !== 'HEAD' ? answer.emptyHeaders : answer.headers);
    raw.end();
  } else {
    raw.writeHead(answer.status, answer.headers);
    raw.end(answer.body);
  }
  return undefined;
}

/** A configured answer ready to write: its status, header lines (`[name, value, …]`) and body. */
interface PreparedAnswer {
  status: number;
  headers: string[];
  /** With `content-length: 0`, for an answer without a body. */
  emptyHeaders: string[];
  body: Buffer | undefined;
}

/** Keyed by the configuration object, which a store keeps until the configuration changes. */
const preparedAnswers = new WeakMap<Answer, PreparedAnswer>();

/**
 * The answer for `sendConfigured`'s configuration: RECEIVER_HEADERS with the source set to
 * 'configured', the configured headers as given (in order, with their case, a repeated name once
 * per pair; none of them can be one of ours, see response-config.ts), and for a body its content
 * type and length.
 */
function prepareAnswer(response: Answer): PreparedAnswer {
  const lines = [...Object.entries({ ...RECEIVER_HEADERS, [RESPONSE_SOURCE_HEADER]: 'configured' }).flat(), ...response.headers.flat()];
  let body: Buffer | undefined;
  if (response.status !== 204 && response.body !== '') {
    const charset = response.contentType.startsWith('text/') || response.contentType === 'application/json' ? '; charset=utf-8' : '';
    body = Buffer.from(response.body);
    lines.push('content-type', `${response.contentType}${charset}`, 'content-length', String(body.length));
  }
  const answer = { status: response.status, headers: lines, emptyHeaders: [...lines, 'content-length', '0'], body };
  preparedAnswers.set(response, answer);
  return answer;
}
