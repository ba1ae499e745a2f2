import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Access } from '../access/access.js';
import { z } from 'zod';
import { MAX_AFTER_SEQ } from '../shared/protocol.js';
import { MAX_WAIT_MS } from '../shared/schemas/endpoints-api.js';
import { readBody, type ReadingBudget } from '../capture/read-body.js';
import type { Config } from '../config.js';
import { toEndpointInfo, type EndpointInfoSettings } from '../endpoints/endpoint-records.js';
import type { EndpointService, LogSince, Outcome } from '../endpoints/endpoint-service.js';
import { errors } from '../errors.js';
import { deadline } from '../shared/deadline.js';
import { closedSignal } from '../request/closed-signal.js';
import type { EndpointRecord, Store } from '../store/store.js';
import { recordJsonOf } from '../store/stored-request.js';
import { quotedBodyBound } from '../store/json-body.js';
import { addressKey } from '../request/address-key.js';
import type { Waits } from '../endpoints/waits.js';
import type { CreateLimit } from '../request/rate-limit.js';
import type { UnsentReplies } from './unsent-replies.js';

export interface EndpointsRouteOptions {
  config: EndpointInfoSettings & Pick<Config, 'clientLimits' | 'processLimits'>;
  store: Store;
  service: EndpointService;
  /** Wakes long polls when a request is captured on any instance. */
  waits: Waits;
  readingBudget: ReadingBudget;
  unsentReplies: UnsentReplies;
  /** KEPT_CREATES_PER_ADDRESS (per user for a signed-in one), shared with the live socket's `create` of a kept endpoint. */
  countCreate: CreateLimit;
  /** Who may call (ACCESS_MODE): every route here needs a signed-in user, but in open mode. */
  access: Access;
  /** `https://host` senders use, for a request (PUBLIC_URL, or the request's own origin). */
  publicBaseFor: (request: FastifyRequest) => string;
}

/** The largest API body: a response configuration (64 KiB of body, escaped) with its headers. */
const MAX_API_BODY_BYTES = 512 * 1024;
/**
 * Bytes of records in one page of `GET …/requests`: a client behind asks again (`more`) rather
 * than getting every stored byte in one answer (up to MAX_STORED_BYTES_PER_ENDPOINT).
 */
const PAGE_BYTES = 4 * 1024 * 1024;
/** A polling client holds a live endpoint like a watcher does, as a holder of its own per endpoint (a holder's lease covers every endpoint it holds on Redis). */
const pollingHolder = (endpointId: string) => `polling:${endpointId}`;

/** A query parameter of decimal digits only: Number() would also take `0x2`, `1e1` and an empty string. */
function decimalParam(maxDigits: number, max: number) {
  return z
    .string()
    .regex(new RegExp(`^\\d{1,${maxDigits}}$`))
    .transform(Number)
    .pipe(z.number().max(max));
}

const waitMsSchema = decimalParam(6, MAX_WAIT_MS);

const afterSeqSchema = decimalParam(16, MAX_AFTER_SEQ);
const seqSchema = decimalParam(16, MAX_AFTER_SEQ).pipe(z.number().min(1));

/**
 * The endpoints API beside the socket (docs/protocol.md), for kept endpoints and for clients
 * without a socket (the page polls it every 3 s when its socket cannot connect):
 *   POST   /api/endpoints                       {"kind":"kept"} -> 201 the endpoint with its key
 *   GET    /api/endpoints/<id>/requests?afterSeq=N
 *   PUT    /api/endpoints/<id>/response
 *   DELETE /api/endpoints/<id>/requests
 *   DELETE /api/endpoints/<id>
 *   GET    /api/endpoints                       the caller's own (a signed-in user's)
 * Every call but POST needs `Authorization: Bearer <key>`; a wrong or missing key answers
 * exactly as an unknown id does (404). The key is never taken from a query string. With
 * ACCESS_MODE token or proxy every call also needs a signed-in user (401 before anything else
 * is looked at, the body not read), and an endpoint's creator needs no key for it.
 */
export async function endpointsRoute(app: FastifyInstance, options: EndpointsRouteOptions): Promise<void> {
  const { config, store, service, waits, readingBudget, unsentReplies, access } = options;
  /** The signed-in user of each call, found once by the hook below. */
  const users = new WeakMap<FastifyRequest, string>();
  const userOf = (request: FastifyRequest) => users.get(request);
  app.addHook('onRequest', async (request) => {
    const user = access.userOf(request.raw);
    if (user !== undefined) users.set(request, user);
  });

  /** Reads a small JSON body itself: the app parses no bodies (every method is raw for the receiver). */
  async function jsonBody(request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
    const body = await readBody(
      request.raw,
      { maxBodyBytes: MAX_API_BODY_BYTES, readLimitBytes: MAX_API_BODY_BYTES },
      readingBudget,
    );
    readingBudget.give(body.bytes.length);
    // Reading stopped with the rest of the body unread: the connection cannot carry another request.
    if (body.atCapacity || body.overLimit) reply.header('connection', 'close');
    if (body.atCapacity) throw errors.AT_CAPACITY('too many request bodies are being read');
    if (body.overLimit) throw errors.INVALID_REQUEST(`the body is larger than ${MAX_API_BODY_BYTES} bytes`);
    if (body.bytes.length === 0) return undefined;
    try {
      return JSON.parse(body.bytes.toString('utf8')) as unknown;
    } catch {
      throw errors.INVALID_REQUEST('the body is not JSON');
    }
  }

  /** The endpoint named by the path, when the request holds its key; otherwise ENDPOINT_NOT_FOUND. */
  async function owned(request: FastifyRequest): Promise<EndpointRecord> {
    const { id } = request.params as { id: string };
    const match = /^Bearer ([A-Za-z0-9]{1,128})$/.exec(request.headers.authorization ?? '');
    const user = userOf(request);
    if (!match && user === undefined) throw errors.ENDPOINT_NOT_FOUND();
    return valueOf(await service.authorize(id, match?.[1], user));
  }

  /** Counts a reply until its reader takes it; refused past either cap (unsent-replies.ts). */
  function holdUnsent(request: FastifyRequest, reply: FastifyReply, bytes: number): void {
    const held = unsentReplies.hold(reply.raw, addressKey(request.ip), bytes);
    if (held === 'address') {
      reply.header('retry-after', '1');
      throw errors.RATE_LIMITED(
        `(answers this address has not read yet pass ${config.clientLimits.maxApiAnswerBytesPerAddress} bytes)`,
        '1 s',
      );
    }
    if (held === 'total')
      throw errors.AT_CAPACITY(
        `answers not read yet use all of MAX_API_ANSWER_BYTES (${config.processLimits.maxApiAnswerBytes} bytes)`,
      );
  }

  app.post('/api/endpoints', async (request: FastifyRequest, reply: FastifyReply) => {
    const user = userOf(request);
    const limited = await options.countCreate({ address: addressKey(request.ip), user });
    if (limited) {
      reply.header('retry-after', String(limited.retryAfterSeconds));
      throw limited.error;
    }
    const created = valueOf(await service.create(await jsonBody(request, reply), user, addressKey(request.ip)));
    reply.header('cache-control', 'no-store');
    return reply.code(201).send(toEndpointInfo(created.endpoint, created.key, options.publicBaseFor(request), config));
  });

  app.get('/api/endpoints/:id/requests', async (request: FastifyRequest, reply: FastifyReply) => {
    const endpoint = await owned(request);
    const query = request.query as { afterSeq?: string; waitMs?: string };
    const afterSeq = afterSeqSchema.safeParse(query.afterSeq ?? '0');
    if (!afterSeq.success) throw errors.INVALID_REQUEST('afterSeq must be a whole number of at least 0');
    const waitMs = waitMsSchema.safeParse(query.waitMs ?? '0');
    if (!waitMs.success) throw errors.INVALID_REQUEST(`waitMs must be a whole number from 0 to ${MAX_WAIT_MS}`);
    // Polling is watching: it keeps a live endpoint alive as a socket would.
    if (endpoint.kind === 'live')
      await store.holdEndpoints(
        [endpoint.id],
        pollingHolder(endpoint.id),
        Date.now() + config.endpoints.leaseMs,
        config.endpoints.graceMs,
      );
    let since = valueOf(await service.readSince(endpoint.id, afterSeq.data));
    // A client ahead of the endpoint (afterSeq past its last seq) is answered at once, to resume from the real one.
    if (since.log.requests.length === 0 && waitMs.data > 0 && afterSeq.data <= since.log.lastSeq) {
      // A long poll: answered as soon as a request after afterSeq is stored on any instance, or
      // with nothing after waitMs. The sender's hang-up ends the wait too.
      const stop = deadline(waitMs.data, closedSignal(reply));
      const stored = async () => (await store.readLog(endpoint.id, afterSeq.data))?.requests.length !== 0;
      const outcome = await waits.forRequest(endpoint.id, stop.signal, stored).finally(stop.clear);
      if (outcome === 'failed') throw errors.STORE_UNAVAILABLE();
      since = valueOf(await service.readSince(endpoint.id, afterSeq.data));
    }
    const answer = toPollAnswer(since, endpoint.expiresAt);
    holdUnsent(request, reply, answer.length);
    reply.header('cache-control', 'no-store');
    return reply.type('application/json; charset=utf-8').send(answer);
  });

  app.post('/api/endpoints/:id/extend', async (request: FastifyRequest, reply: FastifyReply) => {
    const endpoint = await owned(request);
    const extended = valueOf(await service.extend(endpoint, await jsonBody(request, reply)));
    return { expiresAt: extended.expiresAt };
  });

  app.put('/api/endpoints/:id/response', async (request: FastifyRequest, reply: FastifyReply) => {
    const endpoint = await owned(request);
    return { response: valueOf(await service.setResponse(endpoint.id, await jsonBody(request, reply))) };
  });

  app.delete('/api/endpoints/:id/requests', async (request: FastifyRequest) => {
    const endpoint = await owned(request);
    return { clearedSeq: valueOf(await service.clear(endpoint.id)) };
  });

  app.delete('/api/endpoints/:id/requests/:seq', async (request: FastifyRequest, reply: FastifyReply) => {
    const endpoint = await owned(request);
    const seq = seqSchema.safeParse((request.params as { seq: string }).seq);
    if (!seq.success) throw errors.INVALID_REQUEST(`seq must be a whole number from 1 to ${MAX_AFTER_SEQ}`);
    valueOf(await service.deleteRequest(endpoint.id, seq.data));
    return reply.code(204).send();
  });

  app.delete('/api/endpoints/:id', async (request: FastifyRequest, reply: FastifyReply) => {
    const endpoint = await owned(request);
    valueOf(await service.remove(endpoint.id, userOf(request)));
    return reply.code(204).send();
  });

  app.get('/api/endpoints', async (request: FastifyRequest, reply: FastifyReply) => {
    const user = userOf(request);
    if (user === undefined)
      throw errors.INVALID_REQUEST(
        'this instance has no users (ACCESS_MODE=open): the page keeps its own list of endpoints',
      );
    const base = options.publicBaseFor(request);
    // No keys: they are never stored. The creator opens each without one (see `owned`).
    const endpoints = (await service.listOwn(user)).map((endpoint) => {
      const { key: _key, ...listed } = toEndpointInfo(endpoint, '', base, config);
      return listed;
    });
    reply.header('cache-control', 'no-store');
    return { user, endpoints };
  });
}

/** The value of an endpoint action, or its error thrown for the error handler to answer. */
function valueOf<T>(outcome: Outcome<T>): T {
  if (!outcome.ok) throw outcome.error;
  return outcome.value;
}

/**
 * One page of a poll: the records as stored, joined without being parsed again, up to
 * PAGE_BYTES (at least one, so a client always moves on); `more` says to ask again at once.
 */
function toPollAnswer({ log, gap }: LogSince, expiresAt: string | undefined): Buffer {
  const records: Buffer[] = [];
  let bytes = 0;
  for (const stored of log.requests) {
    // Judged before the JSON is built (at most 4/3 of the body plus the header), so no record is
    // escaped or encoded only to be left for the next page.
    const bound = stored.record.head.length + quotedBodyBound(stored.record.body.length) + 256;
    if (records.length > 0 && bytes + bound > PAGE_BYTES) break;
    const record = Buffer.from(recordJsonOf(stored));
    records.push(record);
    bytes += record.length + 1;
  }
  const more = records.length < log.requests.length;
  // The latest forward result of each request in the page, as the `forwarded` messages the socket sends.
  const forwarded = log.requests
    .slice(0, records.length)
    .flatMap((stored) => (stored.forwarded === undefined ? [] : [stored.forwarded]));
  const head = `{"lastSeq":${log.lastSeq},"clearedSeq":${log.clearedSeq},"gap":${gap},"more":${more},"expiresAt":${JSON.stringify(expiresAt ?? null)},"forwarded":[${forwarded.join(',')}],"requests":[`;
  const parts: Buffer[] = [Buffer.from(head)];
  records.forEach((record, index) => {
    if (index > 0) parts.push(COMMA);
    parts.push(record);
  });
  parts.push(CLOSE);
  return Buffer.concat(parts);
}

const COMMA = Buffer.from(',');
const CLOSE = Buffer.from(']}');
